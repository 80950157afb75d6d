// GEMV-like contractions (N <= lanes/4: DeepBench's M x {1, 2, 4} x K): broadcast tiles
// of width N would fill N/16 of each FMA, so B is transposed to [n][k] and the register
// tiles take the dot-product form — whole vectors of A's rows and B's columns along k,
// one horizontal sum per output, no k blocks. A dynamic N is split at run time; wider N
// keeps the broadcast tiles (vector<64xf32>).
// RUN: ftuner-opt %examples/kernels/matmul_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s
// CHECK: %[[N:.*]] = tensor.dim %arg1, %c1
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[SKINNY:.*]] = arith.cmpi sle, %[[N]], %[[C4]]
// CHECK: scf.if %[[SKINNY]]
// CHECK: linalg.generic {indexing_maps = [#map, #map1]{{.*}} ins(%arg1 : tensor<?x?xf32>)
// CHECK-NOT: vector<64xf32>
// CHECK: "vector.transfer_read"{{.*}} -> vector<16xf32>
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: vector.shuffle
// CHECK: } else {
// CHECK: vector.fma {{.*}} : vector<64xf32>

// Threads split M in the skinny patch: its N is one tile, so its N loop is not marked
// parallel (it would be the outermost parallel loop and run on one thread); the M strips
// are.
// RUN: ftuner-opt %examples/kernels/matmul_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=PAR
// PAR: arith.cmpi sle
// PAR: scf.for %{{.*}} step %c4 iter_args
// PAR: scf.for %{{.*}} step %c6 iter_args
// PAR: } {ftuner.parallel}
// PAR: scf.yield %{{.*}} : tensor<?x?xf32>
// PAR-NEXT: {{^        }$}}

// Every N around the bound, M residues of the 6-row tile, K residues of 16 lanes.
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=37x100 --shape 1=100x1 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=13x77 --shape 1=77x2 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=40x50 --shape 1=50x3 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=61x129 --shape 1=129x4 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=20x33 --shape 1=33x5 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=5x0 --shape 1=0x1 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=1100x40 --shape 1=40x2 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check --threads 2 | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=1100x40 --shape 1=40x4 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check --threads 2 | FileCheck %s --check-prefix=OK
// OK: check: ok

// A fused epilogue (bias, ReLU) after the dot tiles, and a batched GEMV.
// RUN: ftuner-opt %S/Inputs/skinny-more.mlir --pass-pipeline="builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=EPI
// EPI-LABEL: func.func @dense
// EPI: arith.cmpi sle
// EPI: vector.shuffle
// EPI: arith.maximumf
// EPI-LABEL: func.func @bmv
// EPI-NOT: vector.shuffle
// EPI: return
// RUN: ftuner-run %S/Inputs/skinny-more.mlir --entry dense --shape 0=37x96 --shape 1=96x1 --shape 2=1 --pass-pipeline="builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %S/Inputs/skinny-more.mlir --entry dense --shape 0=13x96 --shape 1=96x3 --shape 2=3 --pass-pipeline="builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %S/Inputs/skinny-more.mlir --entry dense --shape 0=40x96 --shape 1=96x5 --shape 2=5 --pass-pipeline="builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %S/Inputs/skinny-more.mlir --entry bmv --shape 0=3x29x70 --shape 1=3x70x2 --pass-pipeline="builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK

// A static N of 2 (a classifier head's weight): transposed with no run-time choice.
// RUN: ftuner-opt %s --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=STATIC
// STATIC-LABEL: func.func @head
// STATIC-NOT: scf.if
// STATIC: linalg.generic {{.*}} ins(%arg1 : tensor<768x2xf32>) outs(%{{.*}} : tensor<2x768xf32>)
// STATIC-NOT: vector<2xf32>, vector<2xf32>
// STATIC: vector.fma {{.*}} : vector<16xf32>
// STATIC: return
// RUN: ftuner-run %s --shape 0=9x768 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=OK
func.func @head(%x: tensor<?x768xf32>, %w: tensor<768x2xf32>) -> tensor<?x2xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x768xf32>
  %e = tensor.empty(%m) : tensor<?x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x768xf32>, tensor<768x2xf32>) outs(%f : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}
