// ollie-derive says at the op why it leaves a named contraction alone (issue 26): the
// cost model keeps it, or its body is not an expression the pass reads. Elementwise
// linalg.generics are not named contractions and stay silent.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ollie-derive{hw-target=zen4})' --verify-diagnostics -o /dev/null

// A 3x3 convolution the implicit-GEMM uKernels already do well.
func.func @conv(%x: tensor<1x64x58x58xf32>, %w: tensor<64x64x3x3xf32>, %o: tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
  // expected-remark-re @+1 {{ollie-derive: kept: the cheapest derived form {{.*}} is not 5% cheaper than the op as it is {{.*}}}}
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x64x58x58xf32>, tensor<64x64x3x3xf32>) outs(%o : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  return %r : tensor<1x64x56x56xf32>
}

// Integer arithmetic is not a tensor-algebra expression ollie-derive reads.
func.func @imatmul(%a: tensor<8x16xi32>, %b: tensor<16x4xi32>, %c: tensor<8x4xi32>) -> tensor<8x4xi32> {
  // expected-remark @+1 {{ollie-derive: not derived: not a two-input mul-add contraction}}
  %r = linalg.matmul ins(%a, %b : tensor<8x16xi32>, tensor<16x4xi32>) outs(%c : tensor<8x4xi32>) -> tensor<8x4xi32>
  return %r : tensor<8x4xi32>
}

#id = affine_map<(d0) -> (d0)>
func.func @relu(%a: tensor<16xf32>) -> tensor<16xf32> {
  %z = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<16xf32>) outs(%a : tensor<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %z : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// Depthwise convolutions (MobileNetV2's, as torch-mlir exports them) and poolings are not
// among the ops ollie-derive reads: it says so rather than leaving them in silence.
func.func @depthwise(%x: tensor<1x8x10x10xf32>, %w: tensor<8x3x3xf32>, %o: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  // expected-remark @+1 {{ollie-derive: not derived: 'linalg.depthwise_conv_2d_nchw_chw' is not among the ops it reads}}
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x8x10x10xf32>, tensor<8x3x3xf32>) outs(%o : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}

func.func @maxpool(%x: tensor<1x8x10x10xf32>, %o: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = tensor.empty() : tensor<3x3xf32>
  // expected-remark @+1 {{ollie-derive: not derived: 'linalg.pooling_nchw_max' is not among the ops it reads}}
  %r = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x8x10x10xf32>, tensor<3x3xf32>) outs(%o : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// Grouped convolutions (ResNeXt's and RegNet's, as torch-mlir exports them) neither.
func.func @grouped(%x: tensor<1x2x4x10x10xf32>, %w: tensor<2x4x4x3x3xf32>, %o: tensor<1x2x4x8x8xf32>) -> tensor<1x2x4x8x8xf32> {
  // expected-remark @+1 {{ollie-derive: not derived: 'linalg.conv_2d_ngchw_gfchw' is not among the ops it reads}}
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x4x10x10xf32>, tensor<2x4x4x3x3xf32>) outs(%o : tensor<1x2x4x8x8xf32>) -> tensor<1x2x4x8x8xf32>
  return %r : tensor<1x2x4x8x8xf32>
}
