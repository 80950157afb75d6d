// linalg.batch_matmul against a right operand broadcast along the batch is one matmul
// over batch x rows (the form torch-mlir emits for a dense layer when batch and sequence
// are both dynamic). The result is checked against the module as read on the JIT, at a
// batch of 3, a prime row count and a batch of 1.
// RUN: ftuner-opt %s --canonicalize --cse | FileCheck %s
// RUN: ftuner-opt %s --canonicalize --mlir-print-op-generic | %mlir-opt --verify-roundtrip -o /dev/null
// RUN: ftuner-run %s --entry generic_broadcast --shape 0=3x7x8 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry unit_batch --shape 0=1x13x8 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry named_broadcast --shape 0=1x13x8 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// REQUIRES: mlir-opt
// JIT: check: ok

// CHECK-LABEL: func.func @named_broadcast
// CHECK-NOT: linalg.broadcast
// CHECK-NOT: linalg.batch_matmul
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[A]], %arg1 : tensor<?x8xf32>, tensor<8x4xf32>) outs(%[[C]] : tensor<?x4xf32>)
// CHECK: tensor.expand_shape %[[M]] {{\[\[}}0, 1], [2]] output_shape [%{{.*}}, %{{.*}}, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
func.func @named_broadcast(%a: tensor<?x?x8xf32>, %w: tensor<8x4xf32>) -> tensor<?x?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %b = tensor.dim %a, %c0 : tensor<?x?x8xf32>
  %t = tensor.dim %a, %c1 : tensor<?x?x8xf32>
  %e = tensor.empty(%b) : tensor<?x8x4xf32>
  %wb = linalg.broadcast ins(%w : tensor<8x4xf32>) outs(%e : tensor<?x8x4xf32>) dimensions = [0]
  %o = tensor.empty(%b, %t) : tensor<?x?x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  %r = linalg.batch_matmul ins(%a, %wb : tensor<?x?x8xf32>, tensor<?x8x4xf32>) outs(%f : tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  return %r : tensor<?x?x4xf32>
}

// The broadcast as torch-mlir writes it: a linalg.generic reading (d1, d2).
// CHECK-LABEL: func.func @generic_broadcast
// CHECK-NOT: linalg.batch_matmul
// CHECK: linalg.matmul
func.func @generic_broadcast(%a: tensor<?x?x8xf32>, %w: tensor<8x4xf32>) -> tensor<?x?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %b = tensor.dim %a, %c0 : tensor<?x?x8xf32>
  %t = tensor.dim %a, %c1 : tensor<?x?x8xf32>
  %e = tensor.empty(%b) : tensor<?x8x4xf32>
  %wb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<8x4xf32>) outs(%e : tensor<?x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x8x4xf32>
  %o = tensor.empty(%b, %t) : tensor<?x?x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  %r = linalg.batch_matmul ins(%a, %wb : tensor<?x?x8xf32>, tensor<?x8x4xf32>) outs(%f : tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  return %r : tensor<?x?x4xf32>
}

// Broadcast along another dim, or a left broadcast: left alone.
// CHECK-LABEL: func.func @not_batch_broadcast
// CHECK: linalg.batch_matmul
func.func @not_batch_broadcast(%a: tensor<2x?x8xf32>, %w: tensor<2x4xf32>, %o: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
  %e = tensor.empty() : tensor<2x8x4xf32>
  %wb = linalg.broadcast ins(%w : tensor<2x4xf32>) outs(%e : tensor<2x8x4xf32>) dimensions = [1]
  %r = linalg.batch_matmul ins(%a, %wb : tensor<2x?x8xf32>, tensor<2x8x4xf32>) outs(%o : tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  return %r : tensor<2x?x4xf32>
}

// Both operands with a batch of one (TOSA's matmul): one matmul on B's only matrix.
// CHECK-LABEL: func.func @unit_batch
// CHECK-NOT: linalg.batch_matmul
// CHECK: %[[B:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2]] : tensor<1x8x4xf32> into tensor<8x4xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %[[B]] : tensor<?x8xf32>, tensor<8x4xf32>)
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, %{{.*}}, 4] : tensor<?x4xf32> into tensor<1x?x4xf32>
func.func @unit_batch(%a: tensor<1x?x8xf32>, %w: tensor<1x8x4xf32>) -> tensor<1x?x4xf32> {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %t = tensor.dim %a, %c1 : tensor<1x?x8xf32>
  %o = tensor.empty(%t) : tensor<1x?x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<1x?x4xf32>) -> tensor<1x?x4xf32>
  %r = linalg.batch_matmul ins(%a, %w : tensor<1x?x8xf32>, tensor<1x8x4xf32>) outs(%f : tensor<1x?x4xf32>) -> tensor<1x?x4xf32>
  return %r : tensor<1x?x4xf32>
}

// A dynamic batch on the left (one only at run time, or a mismatch the op must report):
// left alone.
// CHECK-LABEL: func.func @unit_batch_right_only
// CHECK: linalg.batch_matmul
func.func @unit_batch_right_only(%a: tensor<?x?x8xf32>, %w: tensor<1x8x4xf32>, %o: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  %r = linalg.batch_matmul ins(%a, %w : tensor<?x?x8xf32>, tensor<1x8x4xf32>) outs(%o : tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  return %r : tensor<?x?x4xf32>
}
