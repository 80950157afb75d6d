// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

// expected-note@+1 {{see existing symbol definition here}}
func.func private @f()
// expected-error@+1 {{redefinition of symbol named 'f'}}
func.func private @f()

// -----

func.func @use_before_def() -> i32 {
  // expected-error@+1 {{use of undeclared SSA value name '%x'}}
  return %x : i32
}

// -----

// expected-error@+1 {{custom op 'nonexistent_op' is unknown}}
nonexistent_op

// -----

// expected-error@+1 {{Dialect `mydialect' not found for custom op 'mydialect.foo'}}
mydialect.foo

// -----

func.func @types_disagree(%arg0: i32) {
  // expected-error@+1 {{use of value '%arg0' expects different type than prior uses: 'i64' vs 'i32'}}
  %0 = "arith.addi"(%arg0, %arg0) : (i64, i64) -> i64
  return
}

// -----

func.func @bad_result_count() {
  // expected-error@+1 {{operation defines 1 results but was provided 2 to bind}}
  %0, %1 = arith.constant 1 : i32
  return
}
