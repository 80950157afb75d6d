// bufferize: a linalg.fill that several writers start from (CSE merges equal fills, and
// equal slices of them) is filled again for each writer, which then writes in place —
// instead of copying the slice out, computing into the copy, and copying it back into a
// second fill.
// RUN: ftuner-opt %s --bufferize --split-input-file | FileCheck %s
// RUN: ftuner-opt %s --bufferize --split-input-file --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// The functions as one module: two fills cloned (one in each of the first two).
// RUN: ftuner-opt %s --bufferize --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// REQUIRES: mlir-opt
// Against the interpreter:
// RUN: ftuner-run %s --entry=two_writers --shape 0=3x8 --shape 1=3x8 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=writer_then_reader --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=reader_then_writer --check | FileCheck %s --check-prefix=RUNOK
// RUNOK: check: ok
// STATS: 2 num-copies
// STATS: 2 num-refills

// Two writers of one fill (and of one slice of it): each its own fill, each slice written
// in place, no copy.
// CHECK-LABEL: func.func @two_writers
// CHECK: %[[A:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x10xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<?x10xf32>)
// CHECK: %[[S1:.*]] = memref.subview %[[A]][0, 1] [%{{.*}}, 8] [1, 1]
// CHECK: linalg.add ins(%arg0, %arg0 : {{.*}}) outs(%[[S1]] :
// CHECK: %[[B:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x10xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<?x10xf32>)
// CHECK: %[[S2:.*]] = memref.subview %[[B]][0, 1] [%{{.*}}, 8] [1, 1]
// CHECK: linalg.mul ins(%arg1, %arg1 : {{.*}}) outs(%[[S2]] :
// CHECK-NOT: memref.copy
// CHECK: return %[[A]], %[[B]]
func.func @two_writers(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> (tensor<?x10xf32>, tensor<?x10xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x10xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x10xf32>) -> tensor<?x10xf32>
  %s = tensor.extract_slice %f[0, 1] [%n, 8] [1, 1] : tensor<?x10xf32> to tensor<?x8xf32>
  %a = linalg.add ins(%x, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%s : tensor<?x8xf32>) -> tensor<?x8xf32>
  %ra = tensor.insert_slice %a into %f[0, 1] [%n, 8] [1, 1] : tensor<?x8xf32> into tensor<?x10xf32>
  %m = linalg.mul ins(%y, %y : tensor<?x8xf32>, tensor<?x8xf32>) outs(%s : tensor<?x8xf32>) -> tensor<?x8xf32>
  %rm = tensor.insert_slice %m into %f[0, 1] [%n, 8] [1, 1] : tensor<?x8xf32> into tensor<?x10xf32>
  return %ra, %rm : tensor<?x10xf32>, tensor<?x10xf32>
}

// -----

// A writer that accumulates into the fill (a matmul's outs) and a later reader of the
// fill: the writer gets its own fill; the reader reads the original.
// CHECK-LABEL: func.func @writer_then_reader
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<4x4xf32>)
// CHECK: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<4x4xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[B]] : memref<4x4xf32>)
// CHECK: linalg.add ins(%[[B]], %[[A]] : {{.*}})
// CHECK-NOT: memref.copy
func.func @writer_then_reader(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %z = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %r = linalg.add ins(%m, %f : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// A fill outside a loop whose body writes into it is not moved into the loop (it would be
// filled once per iteration): the loop's write is left to the analysis (a copy here, as
// the fill is read after the loop).
// CHECK-LABEL: func.func @not_into_loops
// CHECK: linalg.fill
// CHECK: scf.for
// CHECK-NOT: linalg.fill
// CHECK: memref.copy
// CHECK: return
func.func @not_into_loops(%x: tensor<8xf32>, %n: index) -> (tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<8xf32>) {
    %e2 = tensor.empty() : tensor<8xf32>
    %a = linalg.add ins(%acc, %f : tensor<8xf32>, tensor<8xf32>) outs(%f : tensor<8xf32>) -> tensor<8xf32>
    scf.yield %a : tensor<8xf32>
  }
  return %r, %f : tensor<8xf32>, tensor<8xf32>
}

// -----

// Every read before the (last) writer: the writer keeps the original fill, nothing is
// cloned or copied.
// CHECK-LABEL: func.func @reader_then_writer
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<4x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK: linalg.add ins(%arg0, %[[A]] : {{.*}})
// CHECK: linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[A]] : memref<4x4xf32>)
// CHECK-NOT: memref.copy
func.func @reader_then_writer(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %z = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %r = linalg.add ins(%a, %f : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r, %m : tensor<4x4xf32>, tensor<4x4xf32>
}
