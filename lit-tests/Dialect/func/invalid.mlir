// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @wrong_count(%arg0: f32) -> (f32, f32) {
  // expected-error@+1 {{'func.return' op has 1 operands, but enclosing function (@wrong_count) returns 2}}
  return %arg0 : f32
}

// -----

func.func @wrong_type(%arg0: f32) -> i32 {
  // expected-error@+1 {{'func.return' op type of return operand 0 ('f32') doesn't match function result type ('i32') in function @wrong_type}}
  return %arg0 : f32
}

// -----

// expected-error@+1 {{'func.func' op symbol declaration cannot have public visibility}}
func.func @public_decl()

// -----

func.func @no_terminator() {
  // expected-error@+1 {{block with no terminator}}
  %0 = arith.constant 0 : i32
}
