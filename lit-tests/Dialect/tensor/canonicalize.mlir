// RUN: ftuner-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @dim_of_static
func.func @dim_of_static(%t: tensor<4x?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %t, %c0 : tensor<4x?xf32>
  // CHECK: %[[C:.*]] = arith.constant 4 : index
  // CHECK: return %[[C]]
  return %d : index
}

// -----

// CHECK-LABEL: func.func @dim_of_empty
func.func @dim_of_empty(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %d = tensor.dim %e, %c0 : tensor<?x8xf32>
  // CHECK: return %arg0 : index
  return %d : index
}

// -----

// CHECK-LABEL: func.func @cast_chain
func.func @cast_chain(%t: tensor<4xf32>) -> tensor<4xf32> {
  %a = tensor.cast %t : tensor<4xf32> to tensor<?xf32>
  %b = tensor.cast %a : tensor<?xf32> to tensor<4xf32>
  // CHECK: return %arg0 : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @empty_static
func.func @empty_static() -> tensor<?xf32> {
  %c8 = arith.constant 8 : index
  // CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32>
  // CHECK: tensor.cast %[[E]] : tensor<8xf32> to tensor<?xf32>
  %e = tensor.empty(%c8) : tensor<?xf32>
  return %e : tensor<?xf32>
}
