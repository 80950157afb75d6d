// patch-ukernels for a CPU target patches only what lower-ukernels lowers (it runs on
// tensors, before bufferize, and tiles one M and one N dim): a matmul on buffers and a
// contraction of three M and three N dims (both from upstream's tests) and a convolution
// of f16 operands into f32 (IREE's tests: its body casts, the windowed tiles multiply-add
// one type) are left to the loops with a remark. Before, they were patched, left unlowered, and convert-to-llvm
// failed on the patch.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen5})' 2>&1 | FileCheck %s --implicit-check-not=ukernel.patch
// CHECK: remark: not patched: it is on buffers
// CHECK: remark: not patched: lower-ukernels tiles contractions of one M and one N loop dim
// CHECK: remark: not patched: lower-ukernels tiles contractions of one M and one N loop dim
// RUN: ftuner-translate %s --target=znver5 -o /dev/null
// RUN: ftuner-run %s --entry=many_dims --check | FileCheck %s --check-prefix=RAN
// RAN: check: ok

func.func @on_buffers(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

func.func @many_dims(%a: tensor<1x1x2x3xf32>, %b: tensor<4x1x1x3xf32>) -> tensor<1x1x2x4x1x1xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x2x4x1x1xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<1x1x2x4x1x1xf32>) -> tensor<1x1x2x4x1x1xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<1x1x2x3xf32>, tensor<4x1x1x3xf32>) outs(%c : tensor<1x1x2x4x1x1xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<1x1x2x4x1x1xf32>
  return %r : tensor<1x1x2x4x1x1xf32>
}

func.func @mixed(%x: tensor<1x6x6x8xf16>, %w: tensor<3x3x8x4xf16>, %o: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x6x6x8xf16>, tensor<3x3x8x4xf16>) outs(%o : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}
