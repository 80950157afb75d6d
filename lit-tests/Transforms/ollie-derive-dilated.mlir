// Dilated conv → dense conv through reshapes (CSRNet's dilated 3x3 convs, as torch-mlir
// exports them: a zero tensor.pad, then conv_2d_nchw_fchw with dilation 2 into a bias).
// ollie-derive{target=dense-conv} fuses the padding and splits both output traversals by
// the dilation, h → (h floordiv 2, h mod 2) and w likewise: for each residue pair
// (p, q) the taps 2h' + p + 2r - 2 are dense in h' + r, so the image is gathered
// space-to-batch (G[n, p, q, c, t, u] = X[n, c, 2t + p - 2, 2u + q - 2], zero outside)
// into a batch of 4 and convolved with unit dilation by the filter as it is; a copy puts
// the 4 interleaved outputs back (the bias is added to it). target=auto keeps the dilated
// conv (our implicit-GEMM conv handles the dilation; the gather and copy only add).
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ollie-derive{target=dense-conv verify=true})' --mlir-pass-statistics 2>&1 | FileCheck %s
// CHECK-NOT: warning
// CHECK: ta.expr L<i0:0:1, i3:0:2, i5:0:2, k0:0:8, dct0:0:8, dct1:0:8> { %arg0[i0, k0, 2 * dct0 + i3 - 2, 2 * dct1 + i5 - 2] } ins(%arg0 : tensor<1x8x12x12xf32>) -> tensor<1x2x2x8x8x8xf32>
// CHECK: tensor.collapse_shape {{.*}} {{\[}}[0, 1, 2], [3], [4], [5]] : tensor<1x2x2x8x8x8xf32> into tensor<4x8x8x8xf32>
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins({{.*}} : tensor<4x8x8x8xf32>, tensor<4x8x3x3xf32>) outs({{.*}} : tensor<4x4x6x6xf32>)
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 2, 2, 4, 6, 6] : tensor<4x4x6x6xf32> into tensor<1x2x2x4x6x6xf32>
// CHECK: ta.expr L<i0:0:1, i1:0:4, i2:0:12, i3:0:12> { %{{.*}}[i0, i2 mod 2, i3 mod 2, i1, i2 floordiv 2, i3 floordiv 2] }
// CHECK-NOT: dilations = dense<2>
// CHECK: OllieDerive
// CHECK-DAG: 1 num-derived
// CHECK-DAG: 1 num-matched-convs
// CHECK-DAG: 0 num-rejected
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ollie-derive)' --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=AUTO
// AUTO: dilations = dense<2>
// AUTO: 1 num-kept
// The derived program computes what the layer computes (JIT against the interpreter):
// RUN: ftuner-run %s --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive{target=dense-conv},convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// JIT: check: ok
func.func @dilated_conv(%x: tensor<1x8x12x12xf32>, %k: tensor<4x8x3x3xf32>, %bias: tensor<4xf32>) -> tensor<1x4x12x12xf32> {
  %c = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%a: index, %b: index, %d: index, %e: index):
    tensor.yield %c : f32
  } : tensor<1x8x12x12xf32> to tensor<1x8x16x16xf32>
  %init = tensor.empty() : tensor<1x4x12x12xf32>
  %bb = linalg.broadcast ins(%bias : tensor<4xf32>) outs(%init : tensor<1x4x12x12xf32>) dimensions = [0, 2, 3]
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>) outs(%bb : tensor<1x4x12x12xf32>) -> tensor<1x4x12x12xf32>
  return %r : tensor<1x4x12x12xf32>
}
