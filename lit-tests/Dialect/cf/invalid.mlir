// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @bad_args(%x: i32) {
  // expected-error@+1 {{'cf.br' op branch has 1 operands for successor, but target block has 0}}
  cf.br ^bb1(%x : i32)
^bb1:
  return
}

// -----

func.func @assert_needs_i1(%x: i32) {
  // expected-error@+1 {{use of value '%x' expects different type than prior uses: 'i1' vs 'i32'}}
  cf.assert %x, "oops"
  return
}

// -----

func.func @undefined_block() {
  // expected-error@+1 {{reference to an undefined block '^bb7'}}
  cf.br ^bb7
}
