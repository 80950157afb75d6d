// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @matmul_k_mismatch(%a: tensor<4x8xf32>, %b: tensor<9x16xf32>, %c: tensor<4x16xf32>) {
  // expected-error@+1 {{'linalg.matmul' op inferred input/output operand #1 has shape's dimension #0 to be 8, but found 9}}
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<9x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @generic_rank(%a: tensor<4xf32>, %c: tensor<4x4xf32>) {
  // expected-error@+1 {{'linalg.generic' op expected operand rank (1) to match the result rank of indexing_map #0 (2)}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4xf32>) outs(%c : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x4xf32>
  return
}

// -----

func.func @generic_iterators(%a: tensor<4xf32>) {
  // expected-error@+1 {{'linalg.generic' op expected indexing_map #0 to have 1 dim(s) to match the number of loops}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4xf32>
  return
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) {
  // expected-error@+1 {{'linalg.transpose' op permutation is not valid}}
  %0 = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [0, 0]
  return
}

// -----

func.func @result_type(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  %cst = arith.constant 0.0 : f32
  // expected-error@+1 {{'linalg.fill' op expected type of operand #1 (tensor<4xf32>) to match type of corresponding result (tensor<5xf32>)}}
  %0 = "linalg.fill"(%cst, %b) <{operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }) : (f32, tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

// A convolution whose dilated window leaves its input (issue 25: it verified, and the JIT
// read out of bounds); upstream says the same.
func.func @conv_window_oob(%i: tensor<1x8x8x4xf32>, %k: tensor<3x3x4x8xf32>, %o: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  // expected-error@+1 {{'linalg.conv_2d_nhwc_hwcf' op inferred input/output operand #0 has shape's dimension #1 to be greater than or equal to 12, but found 8}}
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %k : tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) outs(%o : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}

// -----

// Strides or dilations of one element for a 2-D window (found by the driver fuzzer: they
// were read as ones); upstream's ODS constraint says the same.
func.func @conv_dilations_rank(%p: tensor<2x3x8x8xf32>, %k: tensor<3x3x3xf32>, %f: tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32> {
  // expected-error@+1 {{'linalg.depthwise_conv_2d_nchw_chw' op attribute 'dilations' failed to satisfy constraint: 64-bit signless int elements attribute of shape [2]}}
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<2x3x8x8xf32>, tensor<3x3x3xf32>) outs(%f : tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32>
  return %r : tensor<2x3x6x6xf32>
}

// -----

// An index below 0 on a static window: upstream's message. The verifier checked only the
// last point of the loop box, so the compiled code read x[-1] (found by the driver fuzzer).
func.func @window_below_zero(%x: tensor<8xf32>, %k: tensor<3xf32>, %o: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error@+1 {{unexpected result less than 0 at expression #0 in (d0, d1) -> (d0 + d1 - 1)}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1 - 1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %k : tensor<8xf32>, tensor<3xf32>) outs(%o : tensor<6xf32>) {
  ^bb0(%a: f32, %w: f32, %b: f32):
    %m = arith.mulf %a, %w : f32
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

// A negative dilation flips the window: its indices go below 0 here.
func.func @negative_dilation(%x: tensor<1x8x9x9xf32>, %k: tensor<4x8x3x3xf32>, %o: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error@+1 {{unexpected result less than 0 at expression #2 in (d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 - d5, d3 * 2 - d6)}}
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<-1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %k : tensor<1x8x9x9xf32>, tensor<4x8x3x3xf32>) outs(%o : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}
