// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @no_such_callee(%n: index) {
  // expected-error@+1 {{'rt.parallel_for' op 'missing' does not reference a function}}
  rt.parallel_for @missing(%n)
  return
}

// -----

func.func @wrong_arguments(%n: index, %x: f32) {
  // expected-error@+1 {{'rt.parallel_for' op callee 'body' must take (index, index, f32) and return nothing; it is (index, index, i32) -> ()}}
  rt.parallel_for @body(%n) args(%x : f32)
  return
}
func.func private @body(%lo: index, %hi: index, %x: i32) {
  return
}

// -----

func.func @with_results(%n: index) {
  // expected-error@+1 {{'rt.parallel_for' op callee 'body' must take (index, index) and return nothing; it is (index, index) -> i32}}
  rt.parallel_for @body(%n)
  return
}
func.func private @body(%lo: index, %hi: index) -> i32 {
  %c = arith.constant 0 : i32
  return %c : i32
}

// -----

func.func @count_not_index(%n: i64) {
  // expected-error@+1 {{'rt.parallel_for' op operand #0 must be index}}
  "rt.parallel_for"(%n) <{callee = @body}> : (i64) -> ()
  return
}
func.func private @body(%lo: index, %hi: index) {
  return
}

// -----

module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    func.func @body(%lo: index, %hi: index) {
      return
    }
    func.func @f(%n: index) {
      // expected-error@+1 {{'rt.parallel_for' op cannot run on the host's thread pool in a GPU module}}
      rt.parallel_for @body(%n)
      return
    }
  }) : () -> ()
}
