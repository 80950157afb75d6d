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

// The dim of an insert_slice is its destination's: the zero-inserted image of a derived
// transposed conv (DCGAN) was kept alive, filled and copied every call, by a dim read of it.
// The destination's dims come from %n, the source's from %a: reading the source's fails.
// CHECK-LABEL: func.func @dim_of_insert_slice
func.func @dim_of_insert_slice(%a: tensor<?x4x8x8xf32>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %d = tensor.dim %a, %c0 : tensor<?x4x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x19x19xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?x4x19x19xf32>) -> tensor<?x4x19x19xf32>
  %i = tensor.insert_slice %a into %f[0, 0, 2, 2] [%d, 4, 8, 8] [1, 1, 2, 2] : tensor<?x4x8x8xf32> into tensor<?x4x19x19xf32>
  %r = tensor.dim %i, %c0 : tensor<?x4x19x19xf32>
  // CHECK-NEXT: return %arg1 : index
  return %r : index
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

// -----

// rank, splat, from_elements and extract of constants fold (upstream's folders).
// CHECK-LABEL: func.func @fold_constants
// CHECK-DAG: %[[R:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[S:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[F:.*]] = arith.constant dense<[1, 2, 1]> : tensor<3xindex>
// CHECK-DAG: %[[E:.*]] = arith.constant 36 : i32
// CHECK: return %[[R]], %[[S]], %[[F]], %[[E]], %arg0
func.func @fold_constants(%x: index) -> (index, tensor<4xf32>, tensor<3xindex>, i32, index) {
  %cst = arith.constant dense<[[[1, -2, 1, 36]], [[0, 2, -1, 64]]]> : tensor<2x1x4xi32>
  %0 = tensor.rank %cst : tensor<2x1x4xi32>
  %one = arith.constant 1.0 : f32
  %1 = tensor.splat %one : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %2 = tensor.from_elements %c1, %c2, %c1 : tensor<3xindex>
  %3 = tensor.extract %cst[%c0, %c0, %c3] : tensor<2x1x4xi32>
  %t = tensor.from_elements %c1, %x : tensor<2xindex>
  %4 = tensor.extract %t[%c1] : tensor<2xindex>
  return %0, %1, %2, %3, %4 : index, tensor<4xf32>, tensor<3xindex>, i32, index
}

// -----

// Out-of-bounds or non-constant indices do not fold (negative case).
// CHECK-LABEL: func.func @extract_no_fold
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<2xi32>
// CHECK: tensor.extract %{{.*}}[%arg0] : tensor<2xi32>
func.func @extract_no_fold(%i: index) -> (i32, i32) {
  %cst = arith.constant dense<[1, 2]> : tensor<2xi32>
  %c2 = arith.constant 2 : index
  %0 = tensor.extract %cst[%c2] : tensor<2xi32>
  %1 = tensor.extract %cst[%i] : tensor<2xi32>
  return %0, %1 : i32, i32
}

// -----

// A slice of the whole tensor is the tensor; a partial one stays (negative case).
// CHECK-LABEL: func.func @identity_slices
// CHECK: %[[P:.*]] = tensor.extract_slice %arg0[0, 0] [4, 5] [1, 1]
// CHECK: return %arg0, %arg0, %[[P]]
func.func @identity_slices(%a: tensor<4x6xi8>, %b: tensor<4x6xi8>) -> (tensor<4x6xi8>, tensor<4x6xi8>, tensor<4x5xi8>) {
  %0 = tensor.extract_slice %a[0, 0] [4, 6] [1, 1] : tensor<4x6xi8> to tensor<4x6xi8>
  %1 = tensor.insert_slice %a into %b[0, 0] [4, 6] [1, 1] : tensor<4x6xi8> into tensor<4x6xi8>
  %2 = tensor.extract_slice %a[0, 0] [4, 5] [1, 1] : tensor<4x6xi8> to tensor<4x5xi8>
  return %0, %1, %2 : tensor<4x6xi8>, tensor<4x6xi8>, tensor<4x5xi8>
}

// -----

// A cast chain drops its middle cast when that loses no run-time check
// (ChainedTensorCast); ?x? -> 4x? -> ?x8 keeps both (negative case: the middle cast
// checks the 4).
// CHECK-LABEL: func.func @cast_chain
// CHECK-NEXT: %[[C:.*]] = tensor.cast %arg0 : tensor<*xi32> to tensor<4x8xi32>
// CHECK-NEXT: return %[[C]]
// CHECK-LABEL: func.func @cast_chain_keep
// CHECK-NEXT: tensor.cast %arg0 : tensor<?x?xi32> to tensor<4x?xi32>
// CHECK-NEXT: tensor.cast %{{.*}} : tensor<4x?xi32> to tensor<?x8xi32>
func.func @cast_chain(%a: tensor<*xi32>) -> tensor<4x8xi32> {
  %0 = tensor.cast %a : tensor<*xi32> to tensor<4x?xi32>
  %1 = tensor.cast %0 : tensor<4x?xi32> to tensor<4x8xi32>
  return %1 : tensor<4x8xi32>
}
func.func @cast_chain_keep(%a: tensor<?x?xi32>) -> tensor<?x8xi32> {
  %0 = tensor.cast %a : tensor<?x?xi32> to tensor<4x?xi32>
  %1 = tensor.cast %0 : tensor<4x?xi32> to tensor<?x8xi32>
  return %1 : tensor<?x8xi32>
}
