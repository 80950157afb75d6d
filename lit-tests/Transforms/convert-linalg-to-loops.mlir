// convert-linalg-to-loops: structured ops on buffers become scf.for nests around their
// body, one loop per iteration dimension, outermost first.
// RUN: ftuner-opt %s --convert-linalg-to-loops --split-input-file | FileCheck %s
// RUN: ftuner-opt %s --convert-linalg-to-loops --split-input-file --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// REQUIRES: mlir-opt

// CHECK-LABEL: func.func @matmul
// CHECK: %[[M:.*]] = memref.dim %arg0, %c0{{.*}} : memref<?x8xf32>
// CHECK: scf.for %[[I:.*]] = %[[Z:.*]] to %[[M]] step %[[ONE:.*]] {
// CHECK: scf.for %[[J:.*]] = %[[Z]] to %c16{{.*}} step %[[ONE]] {
// CHECK: scf.for %[[K:.*]] = %[[Z]] to %c8{{.*}} step %[[ONE]] {
// CHECK: %[[A:.*]] = memref.load %arg0[%[[I]], %[[K]]] : memref<?x8xf32>
// CHECK: %[[B:.*]] = memref.load %arg1[%[[K]], %[[J]]] : memref<8x16xf32>
// CHECK: %[[C:.*]] = memref.load %arg2[%[[I]], %[[J]]] : memref<?x16xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: %[[S:.*]] = arith.addf %[[C]], %[[P]] : f32
// CHECK: memref.store %[[S]], %arg2[%[[I]], %[[J]]] : memref<?x16xf32>
func.func @matmul(%a: memref<?x8xf32>, %b: memref<8x16xf32>, %c: memref<?x16xf32>) {
  linalg.matmul ins(%a, %b : memref<?x8xf32>, memref<8x16xf32>) outs(%c : memref<?x16xf32>)
  return
}

// -----

// A window (d0 + d1) becomes index arithmetic; an output the body does not read is not
// loaded; a scalar input is used as it is.
// CHECK-LABEL: func.func @window
// CHECK: scf.for %[[I:.*]] =
// CHECK: scf.for %[[R:.*]] =
// CHECK: %[[X:.*]] = arith.addi %[[I]], %[[R]] : index
// CHECK: memref.load %arg0[%[[X]]] : memref<10xf32>
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

// A transpose walks 16 x 16 blocks (outer loops step 16, inner loops up to the block's
// clipped extent), so reads and writes both stay in cache.
// CHECK-LABEL: func.func @transpose
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[I0:.*]] = %{{.*}} to %{{.*}} step %[[C16]] {
// CHECK: scf.for %[[J0:.*]] = %{{.*}} to %{{.*}} step %[[C16]] {
// CHECK: %[[RI:.*]] = arith.subi %{{.*}}, %[[I0]] : index
// CHECK: %[[EI:.*]] = arith.minsi %[[C16]], %[[RI]] : index
// CHECK: scf.for %[[I1:.*]] = %{{.*}} to %[[EI]] step
// CHECK: %[[I:.*]] = arith.addi %[[I0]], %[[I1]] : index
// CHECK: arith.minsi %[[C16]]
// CHECK: scf.for %[[J1:.*]] =
// CHECK: %[[J:.*]] = arith.addi %[[J0]], %[[J1]] : index
// CHECK: %[[V:.*]] = memref.load %arg0[%[[J]], %[[I]]] : memref<?x40xf32>
// CHECK: memref.store %[[V]], %arg1[%[[I]], %[[J]]] : memref<40x?xf32>
func.func @transpose(%a: memref<?x40xf32>, %b: memref<40x?xf32>) {
  linalg.transpose ins(%a : memref<?x40xf32>) outs(%b : memref<40x?xf32>) permutation = [1, 0]
  return
}
