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

// -----

// Slices that leave their tensor are rejected (issue 25: they verified and the JIT wrote
// past the destination's allocation).
func.func @insert_slice_oob(%s: tensor<64x64xf32>, %t: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'tensor.insert_slice' op slice of dim 0 (offset 48, size 64, stride 1) leaves the dim of size 64}}
  %r = tensor.insert_slice %s into %t[48, 0] [64, 64] [1, 1] : tensor<64x64xf32> into tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

func.func @extract_slice_oob(%t: tensor<64x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'tensor.extract_slice' op slice of dim 0 (offset 49, size 16, stride 1) leaves the dim of size 64}}
  %r = tensor.extract_slice %t[49, 0] [16, 64] [1, 1] : tensor<64x64xf32> to tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @extract_slice_strided_oob(%t: tensor<64xf32>) -> tensor<22xf32> {
  // expected-error @+1 {{'tensor.extract_slice' op slice of dim 0 (offset 1, size 22, stride 3) leaves the dim of size 64}}
  %r = tensor.extract_slice %t[1] [22] [3] : tensor<64xf32> to tensor<22xf32>
  return %r : tensor<22xf32>
}

// -----

func.func @extract_slice_negative(%t: tensor<?xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tensor.extract_slice' op offset -1 of dim 0 is negative}}
  %r = tensor.extract_slice %t[-1] [4] [1] : tensor<?xf32> to tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @extract_slice_wrong_result(%t: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'tensor.extract_slice' op the result type tensor<32xf32> has 32 at dim 0 where the slice size is 16}}
  %r = tensor.extract_slice %t[0] [16] [1] : tensor<64xf32> to tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

func.func @insert_slice_wrong_source(%s: tensor<8xf32>, %t: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'tensor.insert_slice' op the source type tensor<8xf32> has 8 at dim 0 where the slice size is 16}}
  %r = tensor.insert_slice %s into %t[0] [16] [1] : tensor<8xf32> into tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

func.func @empty_slice_at_end(%t: tensor<64xf32>) -> tensor<0xf32> {
  // An empty slice may start at the end.
  %r = tensor.extract_slice %t[64] [0] [1] : tensor<64xf32> to tensor<0xf32>
  return %r : tensor<0xf32>
}

// -----

func.func @pad_negative(%t: tensor<4xf32>, %v: f32) {
  // expected-error @+1 {{'tensor.pad' op low padding -2 of dim 0 is negative}}
  %0 = tensor.pad %t low[-2] high[4] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<6xf32>
  return
}

// -----

func.func @pad_overflow(%t: tensor<4xf32>, %v: f32) {
  // expected-error @+1 {{'tensor.pad' op the padded size of dim 0 overflows}}
  %0 = tensor.pad %t low[9223372036854775800] high[9223372036854775800] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<?xf32>
  return
}

// -----

// A pad body without its index arguments verified (the interpreter then indexed past its
// slots and panicked; found by the driver fuzzer).
func.func @pad_body_without_args(%a: tensor<?x4xf32>) -> tensor<?x7xf32> {
  %z = arith.constant 0.5 : f32
  // expected-error@+1 {{'tensor.pad' op expected the block to have 2 arguments}}
  %p = tensor.pad %a low[1, 2] high[2, 1] {
    tensor.yield %z : f32
  } : tensor<?x4xf32> to tensor<?x7xf32>
  return %p : tensor<?x7xf32>
}

// -----

func.func @pad_body_arg_not_index(%a: tensor<?x4xf32>) -> tensor<?x7xf32> {
  %z = arith.constant 0.5 : f32
  // expected-error@+1 {{'tensor.pad' op expected block argument 2 to be an index}}
  %p = tensor.pad %a low[1, 2] high[2, 1] {
  ^bb0(%i: index, %j: i32):
    tensor.yield %z : f32
  } : tensor<?x4xf32> to tensor<?x7xf32>
  return %p : tensor<?x7xf32>
}

// -----

func.func @generate_body_rank(%n: index) -> tensor<?x3xf32> {
  %z = arith.constant 0.5 : f32
  // expected-error@+1 {{'tensor.generate' op must have one body argument per input dimension}}
  %t = tensor.generate %n {
  ^bb0(%i: index):
    tensor.yield %z : f32
  } : tensor<?x3xf32>
  return %t : tensor<?x3xf32>
}

// -----

func.func @generate_body_not_index(%n: index) -> tensor<?x3xf32> {
  %z = arith.constant 0.5 : f32
  // expected-error@+1 {{'tensor.generate' op all body arguments must be index}}
  %t = tensor.generate %n {
  ^bb0(%i: index, %j: f32):
    tensor.yield %z : f32
  } : tensor<?x3xf32>
  return %t : tensor<?x3xf32>
}

// -----

func.func @generate_extents(%n: index) -> tensor<?x?xf32> {
  %z = arith.constant 0.5 : f32
  // expected-error@+1 {{'tensor.generate' op must have as many index operands as dynamic extents in the result type}}
  %t = tensor.generate %n {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<?x?xf32>
  return %t : tensor<?x?xf32>
}

// -----

// Found by the canonicalize fuzz target: a pad that changed the element type verified,
// and the pattern folding a zero pad cast f32 to f16.
func.func @pad_element_type(%t: tensor<4xf32>, %v: f16) {
  // expected-error@+1 {{'tensor.pad' op expected the result element type f16 to be the source's, f32}}
  %0 = tensor.pad %t low[0] high[0] {
  ^bb0(%i: index):
    tensor.yield %v : f16
  } : tensor<4xf32> to tensor<4xf16>
  return
}

// -----

func.func @pad_yield_type(%t: tensor<4xf32>, %v: f16) {
  // expected-error@+1 {{'tensor.pad' op body must be terminated with a `yield` operation of the tensor element type f32}}
  %0 = tensor.pad %t low[0] high[1] {
  ^bb0(%i: index):
    tensor.yield %v : f16
  } : tensor<4xf32> to tensor<5xf32>
  return
}

// -----

func.func @generate_yield_type(%n: index, %v: i32) {
  // expected-error@+1 {{'tensor.generate' op body must be terminated with a `yield` operation of the tensor element type index}}
  %0 = tensor.generate %n {
  ^bb0(%i: index):
    tensor.yield %v : i32
  } : tensor<?xindex>
  return
}

// -----

func.func @slice_static_min(%t: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error@+1 {{-2^63 cannot be a static entry (it marks a dynamic one)}}
  %0 = tensor.extract_slice %t[-9223372036854775808] [1] [1] : tensor<4xf32> to tensor<1xf32>
  return %0 : tensor<1xf32>
}
