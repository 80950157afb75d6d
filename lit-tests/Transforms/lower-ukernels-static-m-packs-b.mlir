// lower-ukernels: a contiguous B of run-time width read by a static M of at least the
// patch's mc rows (zen3: mc = 582) is packed into panels: in place, its rows lie N
// elements apart, a stride known only at run time, and each panel is read by every row
// strip (the DCGAN generator's transposed convs as GEMMs, 1024x128 x 128x(batch*256)).
// The packed panels then pass under each row strip (strips outside, C written row by row),
// unless an order is forced (a forced pack-b=true packs and orders the same). Fewer rows than mc read B in place.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen3},lower-ukernels,canonicalize,cse)' | FileCheck %s
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen3},lower-ukernels{loop-order=cols},canonicalize,cse)' | FileCheck %s --check-prefix=COLS
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen3},lower-ukernels{pack-b=false},canonicalize,cse)' | FileCheck %s --check-prefix=OFF
// Against the interpreter, with residue columns (N = 37, 2 x 16 + 5) and a skinny N:
// RUN: ftuner-run %s --entry=wide_static_m --shape 1=128x37 --pass-pipeline='builtin.module(patch-ukernels{target=zen3},lower-ukernels,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=wide_static_m --shape 1=128x3 --pass-pipeline='builtin.module(patch-ukernels{target=zen3},lower-ukernels,canonicalize,cse)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=wide_static_m --shape 1=128x70 --pass-pipeline='builtin.module(patch-ukernels{target=zen3},lower-ukernels,canonicalize,cse)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// K = 256 over zen3's kc = 168: k blocks under the strips outside.
// RUN: ftuner-run %s --entry=k_blocks --shape 1=256x37 --pass-pipeline='builtin.module(patch-ukernels{target=zen3},lower-ukernels,canonicalize,cse)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUNOK: check: ok

// CHECK-LABEL: func.func @wide_static_m
// CHECK: tensor.empty(%{{.*}}) : tensor<?x128x16xf32>
// CHECK-NOT: step %c16
// CHECK: scf.for %{{.*}} = %c0 to %c1020 step %c6
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c16
// COLS-LABEL: func.func @wide_static_m
// COLS: tensor.empty(%{{.*}}) : tensor<?x128x16xf32>
// COLS-NOT: step %c6
// COLS: scf.for %{{.*}} = %c0 to %{{.*}} step %c16
// COLS: scf.for %{{.*}} = %c0 to %c1020 step %c6
// CHECK-LABEL: func.func @short_static_m
// CHECK-NOT: x64x16xf32
// CHECK: return
// OFF-LABEL: func.func @wide_static_m
// OFF-NOT: x128x16xf32
// OFF: return
func.func @wide_static_m(%a: tensor<1024x128xf32>, %b: tensor<128x?xf32>) -> tensor<1024x?xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %b, %c1 : tensor<128x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<1024x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1024x?xf32>) -> tensor<1024x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1024x128xf32>, tensor<128x?xf32>) outs(%f : tensor<1024x?xf32>) -> tensor<1024x?xf32>
  return %r : tensor<1024x?xf32>
}
func.func @short_static_m(%a: tensor<48x64xf32>, %b: tensor<64x?xf32>) -> tensor<48x?xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %b, %c1 : tensor<64x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<48x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<48x?xf32>) -> tensor<48x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<48x64xf32>, tensor<64x?xf32>) outs(%f : tensor<48x?xf32>) -> tensor<48x?xf32>
  return %r : tensor<48x?xf32>
}

func.func @k_blocks(%a: tensor<600x256xf32>, %b: tensor<256x?xf32>) -> tensor<600x?xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %b, %c1 : tensor<256x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<600x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<600x?xf32>) -> tensor<600x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<600x256xf32>, tensor<256x?xf32>) outs(%f : tensor<600x?xf32>) -> tensor<600x?xf32>
  return %r : tensor<600x?xf32>
}
