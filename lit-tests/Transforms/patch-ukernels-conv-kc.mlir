// A convolution's k blocks come from L2 where a GEMM's B micro-panel is kept in L1: on
// Zen 3 (6x16, kc = 168 for the matmul) the implicit-GEMM conv gets kc = 472, sqrt(2X)
// of L2 (crates/ftuner-ukernel/src/cpu.rs, conv_family). Where B streams from L2 (the
// AVX-512 cores' 6x64) a conv whose whole K x nr panel takes at most half of L2 runs K as
// one block (cpu.rs, conv_whole_k): K = 1152 (288 KiB of 1 MiB) gets kc = 1152 on Zen 4
// and Zen 5, mc shrinking to keep the model's mc x kc (the
// flat form's row blocks are sized from it); K = 4608 (1.1 MiB) keeps L2's kc; a matmul keeps
// it whatever K; a schedule's kc is the schedule's.
// RUN: ftuner-opt %s --patch-ukernels="target=zen3" | FileCheck %s --check-prefix=ZEN3
// RUN: ftuner-opt %s --patch-ukernels="target=zen4" | FileCheck %s --check-prefix=ZEN4
// RUN: ftuner-opt %s --patch-ukernels="target=zen5" | FileCheck %s --check-prefix=ZEN5
// RUN: ftuner-opt %s --patch-ukernels="target=zen5 schedule=mr=6,nr=64,kc=576" | FileCheck %s --check-prefix=SCHED
// The lowered conv against the interpreter with those blocks (K = 1152: three of 384 on
// Zen 3; one block of 1152 on Zen 5, no k-block loop).
// RUN: ftuner-run %s --entry conv --shape 0=1x128x16x16 --pass-pipeline="builtin.module(patch-ukernels{target=zen3},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %s --entry conv --shape 0=2x128x16x16 --pass-pipeline="builtin.module(patch-ukernels{target=zen5},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-opt %s --pass-pipeline="builtin.module(patch-ukernels{target=zen5},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=ONE
// ZEN3-LABEL: func.func @conv
// ZEN3: ukernel.patch "conv2d" target("zen3") tiles [6x16{{.*}}] cache(kc = 472,
// ZEN3-LABEL: func.func @mm
// ZEN3: ukernel.patch "matmul" target("zen3") tiles [6x16{{.*}}] cache(kc = 168,
// ZEN4-LABEL: func.func @conv
// ZEN4: ukernel.patch "conv2d" target("zen4") {{.*}} cache(kc = 1152, mc = 138,
// ZEN4-LABEL: func.func @mm
// ZEN4: ukernel.patch "matmul" target("zen4") {{.*}} cache(kc = 672,
// ZEN5-LABEL: func.func @conv
// ZEN5: ukernel.patch "conv2d" target("zen5") tiles [6x64{{.*}}] cache(kc = 1152, mc = 168,
// ZEN5-LABEL: func.func @mm
// ZEN5: ukernel.patch "matmul" target("zen5") {{.*}} cache(kc = 696,
// ZEN5-LABEL: func.func @conv512
// ZEN5: ukernel.patch "conv2d" target("zen5") tiles [6x64{{.*}}] cache(kc = 696,
// SCHED-LABEL: func.func @conv
// SCHED: ukernel.patch "conv2d" target("zen5") {{.*}} cache(kc = 576,
// ONE-LABEL: func.func @conv
// ONE-NOT: step %c576
// ONE: scf.for %{{.*}} = %c0 to %c1152 step %c2
// ONE-LABEL: func.func @mm
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

func.func @conv512(%x: tensor<?x512x9x9xf32>, %w: tensor<512x512x3x3xf32>) -> tensor<?x512x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x512x9x9xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x512x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x512x7x7xf32>) -> tensor<?x512x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x512x9x9xf32>, tensor<512x512x3x3xf32>) outs(%f : tensor<?x512x7x7xf32>) -> tensor<?x512x7x7xf32>
  return %c : tensor<?x512x7x7xf32>
}
