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
