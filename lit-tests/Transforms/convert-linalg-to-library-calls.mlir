// RUN: ftuner-opt %s --split-input-file --convert-linalg-to-library-calls | FileCheck %s

// f32 matmul / batch_matmul on buffers become calls; the operands are cast to fully
// dynamic strided views (any layout passes without a copy), the callees declared once.
// CHECK-LABEL: module
// CHECK-DAG: func.func private @ftuner_lib_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>)
// CHECK-DAG: func.func private @ftuner_lib_batch_matmul_f32(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>,
// CHECK-LABEL: func.func @mm
// CHECK: %[[A:.*]] = memref.cast %arg0 : memref<?x768xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[B:.*]] = memref.cast %arg1 : memref<768x64xf32, strided<[1, 768]>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[C:.*]] = memref.cast %arg2
// CHECK: call @ftuner_lib_matmul_f32(%[[A]], %[[B]], %[[C]])
// CHECK: call @ftuner_lib_matmul_f32(
// CHECK-NOT: linalg.matmul
// CHECK-LABEL: func.func @bmm
// CHECK: call @ftuner_lib_batch_matmul_f32(
func.func @mm(%a: memref<?x768xf32>, %b: memref<768x64xf32, strided<[1, 768]>>, %c: memref<?x64xf32>) {
  linalg.matmul ins(%a, %b : memref<?x768xf32>, memref<768x64xf32, strided<[1, 768]>>) outs(%c : memref<?x64xf32>)
  linalg.matmul ins(%a, %b : memref<?x768xf32>, memref<768x64xf32, strided<[1, 768]>>) outs(%c : memref<?x64xf32>)
  return
}
func.func @bmm(%a: memref<12x?x64xf32>, %b: memref<12x64x?xf32>, %c: memref<12x?x?xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<12x?x64xf32>, memref<12x64x?xf32>) outs(%c : memref<12x?x?xf32>)
  return
}

// -----

// Left alone: tensors (bufferize first), other element types, transposed maps.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: linalg.matmul ins(%arg3, %arg3 : memref<4x4xf16>, memref<4x4xf16>)
// CHECK: linalg.matmul indexing_maps
// CHECK-NOT: call @
func.func @kept(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>, %h: memref<4x4xf16>, %m: memref<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  linalg.matmul ins(%h, %h : memref<4x4xf16>, memref<4x4xf16>) outs(%h : memref<4x4xf16>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%m, %m : memref<4x4xf32>, memref<4x4xf32>) outs(%m : memref<4x4xf32>)
  return %r : tensor<4x4xf32>
}
