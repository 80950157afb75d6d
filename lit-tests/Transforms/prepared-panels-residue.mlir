// A prepared weight whose N is not a multiple of the register tile's width (a
// 1000-class classifier; here N = 200): its whole panels are still packed once, in the
// preparation, and the N residue's tiles read the prepared weight in place. (The panels
// used to get a dynamic type when nr did not divide N, so outline-weight-preparation
// left the packing in @fc: the whole weight copied on every call, 4x the time of a
// batch-1 classifier.)
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=skylake-avx512})' | FileCheck %s
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=skylake-avx512})' | ftuner-run --entry=fc --shape 0=3x64 --check --pass-pipeline='builtin.module()' - | FileCheck %s --check-prefix=EXEC

// CHECK: func.func @fc_prepare(%arg0: tensor<200x64xf32>) -> (tensor<64x200xf32>, tensor<[[P:[0-9]+]]x64x[[NR:[0-9]+]]xf32>)
// CHECK: tensor.empty() : tensor<[[P]]x64x[[NR]]xf32>
// CHECK: return
// CHECK: func.func @fc(%arg0: tensor<?x64xf32>, %arg1: tensor<64x200xf32>, %arg2: tensor<[[P]]x64x[[NR]]xf32>)
// CHECK-NOT: tensor.empty() : tensor<[[P]]x64x[[NR]]xf32>
// CHECK-NOT: func.func
// CHECK: return

// EXEC: check: ok
func.func @fc(%x: tensor<?x64xf32>, %w: tensor<200x64xf32> {ftuner.weight}) -> tensor<?x200xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty() : tensor<64x200xf32>
  %t = linalg.transpose ins(%w : tensor<200x64xf32>) outs(%e : tensor<64x200xf32>) permutation = [1, 0]
  %o = tensor.empty(%d) : tensor<?x200xf32>
  %z = linalg.fill ins(%cst : f32) outs(%o : tensor<?x200xf32>) -> tensor<?x200xf32>
  %r = linalg.matmul ins(%x, %t : tensor<?x64xf32>, tensor<64x200xf32>) outs(%z : tensor<?x200xf32>) -> tensor<?x200xf32>
  return %r : tensor<?x200xf32>
}
