// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @if_no_else(%c: i1, %x: f32) {
  // expected-error@+1 {{'scf.if' op must have an else block if defining values}}
  %0 = scf.if %c -> (f32) {
    scf.yield %x : f32
  }
  return
}

// -----

func.func @for_yield(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'scf.for' op expected 1 yield operands, got 0}}
  %0 = scf.for %i = %c0 to %n step %n iter_args(%a = %x) -> (f32) {
    scf.yield
  }
  return
}
