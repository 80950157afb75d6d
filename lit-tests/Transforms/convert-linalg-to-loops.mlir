// convert-linalg-to-loops: structured ops on buffers become scf.for nests around their
// body, one loop per iteration dimension, outermost first.
// RUN: ftuner-opt %s --convert-linalg-to-loops --split-input-file | FileCheck %s
// RUN: ftuner-opt %s --convert-linalg-to-loops --split-input-file --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// REQUIRES: mlir-opt
// The vectorized transposes (f32 4-d [0, 2, 3, 1], f64 2-d, i32 3-d [2, 0, 1]) against the
// interpreter: every edge, exact blocks, and empty extents.
// RUN: ftuner-run %S/Inputs/transposes.mlir --shape 0=1x37x12x64 --shape 1=19x9 --shape 2=33x5x17 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/transposes.mlir --shape 0=1x32x12x64 --shape 1=16x32 --shape 2=16x5x48 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/transposes.mlir --shape 0=1x0x12x64 --shape 1=0x3 --shape 2=0x5x0 --check | FileCheck %s --check-prefix=RUNOK
// RUNOK: check: ok
// Unrolled window reductions against the interpreter: depthwise convs (strides 1 and 2)
// and a max pool, bit for bit.
// RUN: ftuner-run %S/Inputs/windows.mlir --entry=dw1 --shape 0=3x5x9x11 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/windows.mlir --entry=dw2 --shape 0=2x5x13x17 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/windows.mlir --entry=maxpool --shape 0=2x3x11x9 --check | FileCheck %s --check-prefix=RUNOK

// The output's contiguous dim (j) is the innermost loop, the static reduction (k, 8
// points) unrolled inside it in order, the sum carried in registers: one load and one
// store of C per element, B read along j (what LLVM vectorizes).
// CHECK-LABEL: func.func @matmul
// CHECK: %[[M:.*]] = memref.dim %arg0, %c0{{.*}} : memref<?x8xf32>
// CHECK: scf.for %[[I:.*]] = %[[Z:.*]] to %[[M]] step %[[ONE:.*]] {
// CHECK: scf.for %[[J:.*]] = %[[Z]] to %c16{{.*}} step %[[ONE]] {
// CHECK-NOT: scf.for
// CHECK: %[[K0:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.load %arg0[%[[I]], %[[K0]]] : memref<?x8xf32>
// CHECK: %[[B:.*]] = memref.load %arg1[%[[K0]], %[[J]]] : memref<8x16xf32>
// CHECK: %[[C:.*]] = memref.load %arg2[%[[I]], %[[J]]] : memref<?x16xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: %[[S:.*]] = arith.addf %[[C]], %[[P]] : f32
// CHECK: %[[K1:.*]] = arith.constant 1 : index
// CHECK: %[[A1:.*]] = memref.load %arg0[%[[I]], %[[K1]]] : memref<?x8xf32>
// CHECK: %[[B1:.*]] = memref.load %arg1[%[[K1]], %[[J]]] : memref<8x16xf32>
// CHECK-NOT: memref.load %arg2
// CHECK: %[[P1:.*]] = arith.mulf %[[A1]], %[[B1]] : f32
// CHECK: %[[S1:.*]] = arith.addf %[[S]], %[[P1]] : f32
// CHECK-COUNT-6: arith.addf
// CHECK-NOT: arith.addf
// CHECK: memref.store %{{.*}}, %arg2[%[[I]], %[[J]]] : memref<?x16xf32>
// CHECK-NOT: memref.store
// CHECK: return
func.func @matmul(%a: memref<?x8xf32>, %b: memref<8x16xf32>, %c: memref<?x16xf32>) {
  linalg.matmul ins(%a, %b : memref<?x8xf32>, memref<8x16xf32>) outs(%c : memref<?x16xf32>)
  return
}

// A dynamic reduction stays a loop, outside j.
// CHECK-LABEL: func.func @matmul_dynamic_k
// CHECK: scf.for %[[I:.*]] =
// CHECK: scf.for %[[K:.*]] =
// CHECK: scf.for %[[J:.*]] =
// CHECK: memref.load %arg0[%[[I]], %[[K]]]
// CHECK: memref.load %arg1[%[[K]], %[[J]]]
func.func @matmul_dynamic_k(%a: memref<?x?xf32>, %b: memref<?x16xf32>, %c: memref<?x16xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x16xf32>) outs(%c : memref<?x16xf32>)
  return
}

// A depthwise conv: w innermost, the 3x3 taps unrolled in it; the image and channel
// loops go to the thread pool (the batch is often 1).
// CHECK-LABEL: func.func @depthwise
// CHECK-COUNT-4: scf.for
// CHECK-NOT: scf.for
// CHECK-COUNT-9: arith.mulf
// CHECK-NOT: arith.mulf
// CHECK: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: } {ftuner.parallel}
// CHECK-NEXT: } {ftuner.parallel}
// CHECK-NEXT: return
func.func @depthwise(%x: memref<?x8x10x12xf32>, %k: memref<8x3x3xf32>, %o: memref<?x8x8x10xf32>) {
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : memref<?x8x10x12xf32>, memref<8x3x3xf32>) outs(%o : memref<?x8x8x10xf32>)
  return
}

// A grouped conv (ResNeXt's): the image, group and filter loops go to the thread pool
// (the filter loop of 8 is enough to split; the batch is often 1).
// CHECK-LABEL: func.func @grouped
// CHECK-COUNT-8: scf.for
// CHECK-NOT: scf.for
// CHECK: } {ftuner.parallel}
// CHECK-NEXT: } {ftuner.parallel}
// CHECK-NEXT: } {ftuner.parallel}
// CHECK-NEXT: return
func.func @grouped(%x: memref<?x4x8x10x12xf32>, %k: memref<4x8x8x3x3xf32>, %o: memref<?x4x8x8x10xf32>) {
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : memref<?x4x8x10x12xf32>, memref<4x8x8x3x3xf32>) outs(%o : memref<?x4x8x8x10xf32>)
  return
}

// -----

// A window (d0 + d1) becomes index arithmetic (its 3 taps unrolled in the d0 loop); an
// output the body does not read is not loaded; a scalar input is used as it is.
// CHECK-LABEL: func.func @window
// CHECK: scf.for %[[I:.*]] =
// CHECK-NOT: scf.for
// CHECK: %[[X:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK: memref.load %arg0[%[[X]]] : memref<10xf32>
// CHECK-COUNT-2: arith.addi %[[I]]
// CHECK-LABEL: func.func @fill
// CHECK: scf.for %[[I:.*]] =
// CHECK-NOT: memref.load
// CHECK: memref.store %arg1, %arg0[%[[I]]] : memref<?xf32>
func.func @window(%a: memref<10xf32>, %k: memref<3xf32>, %o: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a, %k : memref<10xf32>, memref<3xf32>) outs(%o : memref<8xf32>) {
  ^bb0(%x: f32, %w: f32, %y: f32):
    %m = arith.mulf %x, %w : f32
    %s = arith.addf %y, %m : f32
    linalg.yield %s : f32
  }
  return
}
func.func @fill(%o: memref<?xf32>, %v: f32) {
  linalg.fill ins(%v : f32) outs(%o : memref<?xf32>)
  return
}

// -----

// A copy that moves the innermost dim (a transpose) goes by 16 x 16 blocks: 16
// contiguous rows of the source read as vectors, turned in registers by 4 rounds of 16
// vector.shuffle, written as 16 contiguous rows of the destination; then the source's
// edge (strided reads down its rows), the destination's edge (strided writes) and the
// corner, element by element.
// CHECK-LABEL: func.func @transpose
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[D0:.*]] = %{{.*}} to %{{.*}} step %[[C16]] {
// CHECK: scf.for %[[S0:.*]] = %{{.*}} to %{{.*}} step %[[C16]] {
// CHECK: "vector.transfer_read"(%arg0, %[[D0]], %[[S0]], %{{.*}}) {{.*}} : (memref<?x40xf32>, index, index, f32) -> vector<16xf32>
// CHECK-COUNT-15: "vector.transfer_read"(%arg0
// CHECK-COUNT-64: "vector.shuffle"
// CHECK: "vector.transfer_write"(%{{.*}}, %arg1, %[[S0]], %[[D0]]) {{.*}} : (vector<16xf32>, memref<40x?xf32>, index, index) -> ()
// CHECK-COUNT-15: "vector.transfer_write"(%{{.*}}, %arg1
// CHECK: scf.for
// CHECK: scf.for
// CHECK: permutation_map = #[[ROWS:map[0-9]*]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %arg0
// CHECK: memref.store
func.func @transpose(%a: memref<?x40xf32>, %b: memref<40x?xf32>) {
  linalg.transpose ins(%a : memref<?x40xf32>) outs(%b : memref<40x?xf32>) permutation = [1, 0]
  return
}

// -----

// A permutation that keeps the innermost dim, over rows shorter than 64 elements, walks
// 16 x ... x 16 blocks of scalar copies (outer loops step 16, inner loops up to the
// block's clipped extent).
// CHECK-LABEL: func.func @swap_outer
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[I0:.*]] = %{{.*}} to %{{.*}} step %[[C16]] {
// CHECK: scf.for %[[J0:.*]] = %{{.*}} to %{{.*}} step %[[C16]] {
// CHECK: %[[RI:.*]] = arith.subi %{{.*}}, %[[I0]] : index
// CHECK: %[[EI:.*]] = arith.minsi %[[C16]], %[[RI]] : index
// CHECK-NOT: vector.shuffle
// CHECK: memref.load %arg0
// CHECK: memref.store
func.func @swap_outer(%a: memref<?x5x8xf32>, %b: memref<5x?x8xf32>) {
  linalg.transpose ins(%a : memref<?x5x8xf32>) outs(%b : memref<5x?x8xf32>) permutation = [1, 0, 2]
  return
}

// -----

// Rows of 64 or more elements that every operand keeps in place (DCGAN's NCHW -> CNHW
// image of a derived transposed conv, 32 x 32 planes) are walked as a plain nest along
// them, and its outer loop runs on the thread pool.
// RUN: ftuner-run %S/Inputs/swap-planes.mlir --shape 0=3x64x32x32 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/swap-planes.mlir --shape 0=0x64x32x32 --check | FileCheck %s --check-prefix=RUNOK
// CHECK-LABEL: func.func @swap_planes
// CHECK-NOT: vector.shuffle
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %[[ONE:.*]] {
// CHECK-NEXT: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %[[ONE]] {
// CHECK-NEXT: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %[[ONE]] {
// CHECK-NEXT: scf.for %[[W:.*]] = %{{.*}} to %{{.*}} step %[[ONE]] {
// CHECK-NEXT: %[[V:.*]] = memref.load %arg0[%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT: memref.store %[[V]], %arg1[%[[C]], %[[N]], %[[H]], %[[W]]]
// CHECK: } {ftuner.parallel}
func.func @swap_planes(%a: memref<?x64x32x32xf32>, %b: memref<64x?x32x32xf32>) {
  linalg.transpose ins(%a : memref<?x64x32x32xf32>) outs(%b : memref<64x?x32x32xf32>) permutation = [1, 0, 2, 3]
  return
}

// -----

// A generic whose iterations write disjoint outputs runs on the thread pool: its outer
// parallel loops are marked ftuner.parallel (convert-to-llvm outlines the outermost),
// from the outside in until one has 8 or more iterations or a dynamic count; a
// reduction dim, a dim an output does not index plainly, or a generic of fewer than
// 16384 iterations is not marked; parallel=false marks nothing.
// RUN: ftuner-opt %s --convert-linalg-to-loops --split-input-file --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(convert-linalg-to-loops{parallel=false})' | FileCheck %s --check-prefix=SERIAL
// STATS: 3 num-parallel-loops
// SERIAL-NOT: ftuner.parallel
// CHECK-LABEL: func.func @pool
// The batch of one, then the dynamic rows, are marked; the columns are not.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: } {ftuner.parallel}
// CHECK-NEXT: } {ftuner.parallel}
// A row sum (the reduction innermost): its rows are marked.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: } {ftuner.parallel}
// A small one stays serial.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: }{{$}}
func.func @pool(%a: memref<1x?x64xf32>, %b: memref<1x?x64xf32>, %m: memref<4096x8xf32>, %r: memref<4096xf32>, %s: memref<4x4xf32>, %t: memref<4x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : memref<1x?x64xf32>) outs(%b : memref<1x?x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%m : memref<4096x8xf32>) outs(%r : memref<4096xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %o : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : memref<4x4xf32>) outs(%t : memref<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  }
  return
}
