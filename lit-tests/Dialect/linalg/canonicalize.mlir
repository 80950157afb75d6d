// RUN: ftuner-opt %s --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @identity_generic
func.func @identity_generic(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // CHECK-NOT: linalg.generic
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%b : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x4xf32>
  // CHECK: return %arg0
  return %0 : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @dead_matmul
func.func @dead_matmul(%a: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK-NOT: linalg.matmul
  %0 = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @identity_moves
func.func @identity_moves(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK-NOT: linalg.transpose
  // CHECK-NOT: linalg.broadcast
  %t = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : tensor<4x8xf32>) permutation = [0, 1]
  %c = linalg.broadcast ins(%a : tensor<4x8xf32>) outs(%b : tensor<4x8xf32>) dimensions = []
  // CHECK: return %arg0, %arg0
  return %t, %c : tensor<4x8xf32>, tensor<4x8xf32>
}
