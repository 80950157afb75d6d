// Forms upstream MLIR accepts that our verifier once rejected (found by the round trip of
// the upstream corpus through ftuner-mlir): a vector fill value, linalg.reduce's equal
// variadic groups (no segment sizes), and a collapse of unit dims to rank 0.
// RUN: ftuner-opt %s | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | ftuner-opt | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic > %t.ours && %mlir-opt %s --mlir-print-op-generic > %t.up && diff %t.ours %t.up
// REQUIRES: mlir-opt

// CHECK-LABEL: func.func @fill_vector
// CHECK: linalg.fill ins(%{{.*}} : vector<2x4xf32>) outs(%{{.*}} : tensor<vector<2x4xf32>>)
func.func @fill_vector(%v: vector<2x4xf32>) -> tensor<vector<2x4xf32>> {
  %e = tensor.empty() : tensor<vector<2x4xf32>>
  %r = linalg.fill ins(%v : vector<2x4xf32>) outs(%e : tensor<vector<2x4xf32>>) -> tensor<vector<2x4xf32>>
  return %r : tensor<vector<2x4xf32>>
}

// CHECK-LABEL: func.func @reduce_two
// CHECK: "linalg.reduce"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{dimensions = array<i64: 1>}>
func.func @reduce_two(%a: tensor<4x8xf32>, %b: tensor<4x8xi32>, %x: tensor<4xf32>, %y: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %r:2 = "linalg.reduce"(%a, %b, %x, %y) <{dimensions = array<i64: 1>}> ({
  ^bb0(%p: f32, %q: i32, %s: f32, %t: i32):
    %0 = arith.addf %p, %s : f32
    %1 = arith.addi %q, %t : i32
    linalg.yield %0, %1 : f32, i32
  }) : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @collapse_to_scalar
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
func.func @collapse_to_scalar(%a: tensor<1xf32>) -> tensor<f32> {
  %0 = tensor.collapse_shape %a [] : tensor<1xf32> into tensor<f32>
  return %0 : tensor<f32>
}
