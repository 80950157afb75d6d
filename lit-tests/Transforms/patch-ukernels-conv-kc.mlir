// A convolution's k blocks come from L2 where a GEMM's B micro-panel is kept in L1: on
// Zen 3 (6x16, kc = 168 for the matmul) the implicit-GEMM conv gets kc = 472, sqrt(2X)
// of L2 (crates/ftuner-ukernel/src/cpu.rs, conv_family); on Zen 4 both take L2's 672.
// RUN: ftuner-opt %s --patch-ukernels="target=zen3" | FileCheck %s --check-prefix=ZEN3
// RUN: ftuner-opt %s --patch-ukernels="target=zen4" | FileCheck %s --check-prefix=ZEN4
// The lowered conv against the interpreter with those blocks (K = 1152: three of 384).
// RUN: ftuner-run %s --entry conv --shape 0=1x128x16x16 --pass-pipeline="builtin.module(patch-ukernels{target=zen3},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// ZEN3-LABEL: func.func @conv
// ZEN3: ukernel.patch "conv2d" target("zen3") tiles [6x16{{.*}}] cache(kc = 472,
// ZEN3-LABEL: func.func @mm
// ZEN3: ukernel.patch "matmul" target("zen3") tiles [6x16{{.*}}] cache(kc = 168,
// ZEN4-LABEL: func.func @conv
// ZEN4: ukernel.patch "conv2d" target("zen4") {{.*}} cache(kc = 672,
// ZEN4-LABEL: func.func @mm
// ZEN4: ukernel.patch "matmul" target("zen4") {{.*}} cache(kc = 672,
// OK: check: ok
func.func @conv(%x: tensor<?x128x16x16xf32>, %w: tensor<128x128x3x3xf32>) -> tensor<?x128x14x14xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x128x16x16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x128x14x14xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128x14x14xf32>) -> tensor<?x128x14x14xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x128x16x16xf32>, tensor<128x128x3x3xf32>) outs(%f : tensor<?x128x14x14xf32>) -> tensor<?x128x14x14xf32>
  return %c : tensor<?x128x14x14xf32>
}

func.func @mm(%a: tensor<?x1152xf32>, %b: tensor<1152x128xf32>) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x1152xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128xf32>) -> tensor<?x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x1152xf32>, tensor<1152x128xf32>) outs(%f : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %r : tensor<?x128xf32>
}
