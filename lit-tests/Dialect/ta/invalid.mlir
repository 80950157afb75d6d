// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @unbound(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'ta.expr' op index variable 'j' is not an iterator of its scope}}
  %0 = ta.expr L<i:0:4> { %a[j] } ins(%a : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @rank(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'ta.expr' op an access has 1 indices for a tensor of rank 2}}
  %0 = ta.expr L<i:0:4> { %a[i] } ins(%a : tensor<4x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @extent(%a: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{'ta.expr' op traversal iterator 'i' spans 4 but result dim 0 is 5}}
  %0 = ta.expr L<i:0:4> { %a[i] } ins(%a : tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @nonaffine(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{index expressions must be affine}}
  %0 = ta.expr L<i:0:4> { %a[i * i] } ins(%a : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unknown_input(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'%b' is not an input of the expression}}
  %0 = ta.expr L<i:0:4> { %a[i] * %b[i] } ins(%a : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unused(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'ta.expr' op input $1 is neither read by the expression nor bounds an iterator}}
  %0 = ta.expr L<i:0:4> { %a[i] } ins(%a, %b : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @twice(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'ta.expr' op iterator 'i' is declared twice}}
  %0 = ta.expr L<i:0:4> Sum<i:0:2> { %a[i] } ins(%a : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
