// A batched contraction whose output starts as a zero fill: each batch's slice is filled
// just before its GEMM (in cache) instead of the whole output first, and where the inner
// GEMM's register tiles start from zero no fill is left at all: the batch loop carries the
// fill's destination. Attention's scores (192 x T x T, W2) were filled whole, written out
// to memory, and read back once per batch.
// RUN: ftuner-opt %s --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s
// CHECK-LABEL: func.func @scores
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<192x?x?xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c192 step %c1 iter_args(%{{.*}} = %[[E]])
// CHECK-NOT: linalg.fill
// CHECK: vector.fma {{.*}} : vector<64xf32>
// CHECK-LABEL: func.func @fill_also_returned
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: scf.for
// CHECK-NOT: linalg.fill
// CHECK: return %[[F]], %{{.*}} :
// Tiles past the register-body limit (vector-bodies=64 < 6x64) read C: each batch's slice
// is filled.
// RUN: ftuner-opt %s --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels{vector-bodies=64},canonicalize,cse)" | FileCheck %s --check-prefix=SLICE
// SLICE-LABEL: func.func @scores
// SLICE-NOT: linalg.fill
// SLICE: scf.for %{{.*}} = %c0 to %c192
// SLICE: %[[C:[a-z_0-9]+]] = tensor.extract_slice %arg3
// SLICE: linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : tensor<?x?xf32>)

// Against the module as read: T and S apart, residues of the 6x64 tile, empty sides.
// RUN: ftuner-run %s --entry scores --shape 0=192x13x64 --shape 1=192x13x64 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %s --entry scores --shape 0=192x9x64 --shape 1=192x70x64 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %s --entry scores --shape 0=192x0x64 --shape 1=192x5x64 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %s --entry scores --shape 0=192x7x64 --shape 1=192x7x64 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels{vector-bodies=64},canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %s --entry fill_also_returned --shape 0=3x11x40 --shape 1=3x40x70 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// OK: check: ok

func.func @scores(%q: tensor<192x?x64xf32>, %k: tensor<192x?x64xf32>) -> tensor<192x?x?xf32> {
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %t = tensor.dim %q, %c1 : tensor<192x?x64xf32>
  %s = tensor.dim %k, %c1 : tensor<192x?x64xf32>
  %e = tensor.empty(%t, %s) : tensor<192x?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<192x?x?xf32>) -> tensor<192x?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<192x?x64xf32>, tensor<192x?x64xf32>) outs(%f : tensor<192x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %a = arith.addf %o, %p : f32
    linalg.yield %a : f32
  } -> tensor<192x?x?xf32>
  return %r : tensor<192x?x?xf32>
}

func.func @fill_also_returned(%a: tensor<3x?x40xf32>, %b: tensor<3x40x?xf32>) -> (tensor<3x?x?xf32>, tensor<3x?x?xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c1 : tensor<3x?x40xf32>
  %n = tensor.dim %b, %c2 : tensor<3x40x?xf32>
  %e = tensor.empty(%m, %n) : tensor<3x?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x?x?xf32>) -> tensor<3x?x?xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x?x40xf32>, tensor<3x40x?xf32>) outs(%f : tensor<3x?x?xf32>) -> tensor<3x?x?xf32>
  return %f, %r : tensor<3x?x?xf32>, tensor<3x?x?xf32>
}
