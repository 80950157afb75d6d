// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @dominance(%c: i1) {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  %x = arith.constant 1 : i32
  cf.br ^bb3
^bb2:
  cf.br ^bb3
^bb3:
  // expected-error@+1 {{'arith.addi' op operand #0 does not dominate this use}}
  %y = arith.addi %x, %x : i32
  return
}

// -----

func.func @isolated(%a: f32) {
  func.func @inner() -> f32 {
    // expected-error@+1 {{use of undeclared SSA value name '%a'}}
    "func.return"(%a) : (f32) -> ()
  }
  return
}

// -----

func.func @terminator_not_last() {
  // expected-error@+1 {{'func.return' op must be the last operation in the parent block}}
  "func.return"() : () -> ()
  %0 = arith.constant 0 : i32
  return
}
