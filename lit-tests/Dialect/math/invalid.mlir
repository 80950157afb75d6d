// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @exp_int(%x: i32) {
  // expected-error@+1 {{'math.exp' op operand #0 must be floating-point-like, but got 'i32'}}
  %0 = math.exp %x : i32
  return
}

// -----

func.func @fpowi_float_exp(%x: f32) {
  // expected-error@+1 {{'math.fpowi' op operand #1 must be signless-integer-like, but got 'f32'}}
  %0 = math.fpowi %x, %x : f32, f32
  return
}
