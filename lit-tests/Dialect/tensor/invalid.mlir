// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @empty_sizes(%d: index) {
  // expected-error@+1 {{'tensor.empty' op incorrect number of dynamic sizes, has 1, expected 2}}
  %0 = tensor.empty(%d) : tensor<?x?xf32>
  return
}

// -----

func.func @collapse_bad(%t: tensor<2x3xf32>) {
  // expected-error@+1 {{'tensor.collapse_shape' op expected dimension 0 of collapsed type to be static value of 6}}
  %0 = tensor.collapse_shape %t [[0, 1]] : tensor<2x3xf32> into tensor<7xf32>
  return
}

// -----

func.func @extract_rank(%t: tensor<4x4xf32>, %i: index) {
  // expected-error@+1 {{'tensor.extract' op incorrect number of indices for extract_element}}
  %0 = tensor.extract %t[%i] : tensor<4x4xf32>
  return
}

// -----

func.func @cast_bad(%t: tensor<4xf32>) {
  // expected-error@+1 {{'tensor.cast' op operand type 'tensor<4xf32>' and result type 'tensor<5xf32>' are cast incompatible}}
  %0 = tensor.cast %t : tensor<4xf32> to tensor<5xf32>
  return
}

// -----

func.func @pad_bad(%t: tensor<4xf32>, %v: f32) {
  // expected-error@+1 {{'tensor.pad' op specified type tensor<7xf32> does not match the inferred type tensor<6xf32>}}
  %0 = tensor.pad %t low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<7xf32>
  return
}

// -----

func.func @bad_dim(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'tensor.concat' op concatenation dim must be in the range [0, 2)}}
  %r = tensor.concat dim(2) %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

func.func @bad_size(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'tensor.concat' op result type tensor<2x8xf32> does not match the inferred size 7 along dim 1}}
  %r = tensor.concat dim(1) %a, %b : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

func.func @bad_other(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x7xf32> {
  // expected-error @+1 {{'tensor.concat' op static concatenation size mismatch along non-concatenated dimension 0}}
  %r = tensor.concat dim(1) %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x7xf32>
  return %r : tensor<2x7xf32>
}
