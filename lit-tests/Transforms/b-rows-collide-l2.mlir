// B's rows colliding in L2 (lower/l2.rs, rows_collide_in_l2). A contiguous B read
// in place at a stride of 3072 f32 (192 cache lines) visits 32 of a 2 MiB 16-way L2's 2048
// sets: 768 rows put 24 lines in each, over its ways, so B is packed from four row strips
// (M >= 4 * 6 = 24), decided at run time. At N = 2304 (144 lines: 128 sets, 6 lines each)
// the rows fit, and B is packed only from one mc block (M >= 432).
// RUN: ftuner-opt %s --pass-pipeline="builtin.module(patch-ukernels{target=sapphirerapids},lower-ukernels,canonicalize,cse)" | FileCheck %s
// In place, the k loops of a B larger than L2 are marked for prefetch-tile-updates to
// fetch the next column panel (ftuner.prefetch_next_panel): N = 2304 (7 MB); not N = 3072
// (its rows collide: a prefetched panel would be evicted before its use), not a B that
// fits in L2 (768 x 512, 1.5 MB), not a dynamic N (not known to be larger).
// CHECK-LABEL: func.func @n3072
// CHECK: arith.cmpi sge, %{{.*}}, %c24 : index
// CHECK-NOT: ftuner.prefetch_next_panel
// CHECK-LABEL: func.func @n2304
// CHECK-NOT: %c24 : index
// CHECK: arith.cmpi sge, %{{.*}}, %c432 : index
// CHECK: } else {
// CHECK: } {ftuner.prefetch_next_panel}
// CHECK-LABEL: func.func @n512
// CHECK-NOT: ftuner.prefetch_next_panel
// CHECK-LABEL: func.func @ndyn
// CHECK-NOT: ftuner.prefetch_next_panel
// CHECK: return
// The same 1.5 MB B read in a loop, a slice of a batched activation at each iteration
// (a matmul per image): not resident, it streams past half of L2, and is marked.
// CHECK-LABEL: func.func @n512_per_image
// CHECK: scf.for
// CHECK: } {ftuner.prefetch_next_panel}
// A loop-invariant B (a weight read at every step) stays resident: not marked.
// CHECK-LABEL: func.func @n512_weight_in_loop
// CHECK-NOT: ftuner.prefetch_next_panel
// CHECK: return
// Both paths compute the product: packed (M = 30) and in place (M = 7).
// RUN: ftuner-run %s --entry n3072 --shape 0=30x768 --pass-pipeline="builtin.module(patch-ukernels{target=sapphirerapids},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %s --entry n3072 --shape 0=7x768 --pass-pipeline="builtin.module(patch-ukernels{target=sapphirerapids},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %s --entry n512_per_image --shape 1=2x768x512 --shape 2=2x8x512 --pass-pipeline="builtin.module(patch-ukernels{target=sapphirerapids},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// OK: check: ok

func.func @n3072(%a: tensor<?x768xf32>, %b: tensor<768x3072xf32>) -> tensor<?x3072xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x768xf32>
  %e = tensor.empty(%m) : tensor<?x3072xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x3072xf32>) -> tensor<?x3072xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x768xf32>, tensor<768x3072xf32>) outs(%f : tensor<?x3072xf32>) -> tensor<?x3072xf32>
  return %r : tensor<?x3072xf32>
}

func.func @n2304(%a: tensor<?x768xf32>, %b: tensor<768x2304xf32>) -> tensor<?x2304xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x768xf32>
  %e = tensor.empty(%m) : tensor<?x2304xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x768xf32>, tensor<768x2304xf32>) outs(%f : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  return %r : tensor<?x2304xf32>
}

func.func @n512(%a: tensor<?x768xf32>, %b: tensor<768x512xf32>) -> tensor<?x512xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x768xf32>
  %e = tensor.empty(%m) : tensor<?x512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x768xf32>, tensor<768x512xf32>) outs(%f : tensor<?x512xf32>) -> tensor<?x512xf32>
  return %r : tensor<?x512xf32>
}

func.func @ndyn(%a: tensor<?x768xf32>, %b: tensor<768x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x768xf32>
  %n = tensor.dim %b, %c1 : tensor<768x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x768xf32>, tensor<768x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @n512_per_image(%a: tensor<8x768xf32>, %x: tensor<?x768x512xf32>, %o: tensor<?x8x512xf32>) -> tensor<?x8x512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x768x512xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %o) -> (tensor<?x8x512xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 768, 512] [1, 1, 1] : tensor<?x768x512xf32> to tensor<768x512xf32>
    %oi = tensor.extract_slice %acc[%i, 0, 0] [1, 8, 512] [1, 1, 1] : tensor<?x8x512xf32> to tensor<8x512xf32>
    %f = linalg.fill ins(%z : f32) outs(%oi : tensor<8x512xf32>) -> tensor<8x512xf32>
    %m = linalg.matmul ins(%a, %xi : tensor<8x768xf32>, tensor<768x512xf32>) outs(%f : tensor<8x512xf32>) -> tensor<8x512xf32>
    %u = tensor.insert_slice %m into %acc[%i, 0, 0] [1, 8, 512] [1, 1, 1] : tensor<8x512xf32> into tensor<?x8x512xf32>
    scf.yield %u : tensor<?x8x512xf32>
  }
  return %r : tensor<?x8x512xf32>
}

func.func @n512_weight_in_loop(%x: tensor<?x8x768xf32>, %w: tensor<768x512xf32>, %o: tensor<?x8x512xf32>) -> tensor<?x8x512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8x768xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %o) -> (tensor<?x8x512xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 8, 768] [1, 1, 1] : tensor<?x8x768xf32> to tensor<8x768xf32>
    %oi = tensor.extract_slice %acc[%i, 0, 0] [1, 8, 512] [1, 1, 1] : tensor<?x8x512xf32> to tensor<8x512xf32>
    %f = linalg.fill ins(%z : f32) outs(%oi : tensor<8x512xf32>) -> tensor<8x512xf32>
    %m = linalg.matmul ins(%xi, %w : tensor<8x768xf32>, tensor<768x512xf32>) outs(%f : tensor<8x512xf32>) -> tensor<8x512xf32>
    %u = tensor.insert_slice %m into %acc[%i, 0, 0] [1, 8, 512] [1, 1, 1] : tensor<8x512xf32> into tensor<?x8x512xf32>
    scf.yield %u : tensor<?x8x512xf32>
  }
  return %r : tensor<?x8x512xf32>
}
