// tensor slice / pad / cast canonicalization (upstream's patterns; crates/ftuner-dialects/src/tensor/{slices,cast_folds}.rs).
// The output is also read by mlir-opt-22, whose verifier requires types as static as the static sizes imply.
// RUN: ftuner-opt %s --canonicalize --cse --split-input-file | FileCheck %s
// RUN: ftuner-opt %s --canonicalize --cse --split-input-file --mlir-print-op-generic | %mlir-opt --split-input-file -o /dev/null
// REQUIRES: mlir-opt

// CHECK-LABEL: func.func @constant_operands
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %arg0[0, %arg1, 1] [4, 1, %arg2] [1, 1, 1] : tensor<?x?x?xf32> to tensor<4x1x?xf32>
// CHECK-NEXT: %[[I:.*]] = tensor.insert_slice %[[S]] into %arg3[0, %arg1, 1] [4, 1, %arg2] [1, 1, 1] : tensor<4x1x?xf32> into tensor<?x?x?xf32>
// CHECK-NEXT: return %[[I]]
func.func @constant_operands(%t: tensor<?x?x?xf32>, %i: index, %n: index, %d: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %0 = tensor.extract_slice %t[%c0, %i, %c1] [%c4, %c1, %n] [%c1, %c1, %c1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %1 = tensor.insert_slice %0 into %d[%c0, %i, %c1] [%c4, %c1, %n] [%c1, %c1, %c1] : tensor<?x?x?xf32> into tensor<?x?x?xf32>
  return %1 : tensor<?x?x?xf32>
}

// -----

// A constant offset that would leave a static dim stays an operand: folding it would make
// the slice one the verifier rejects (it is a run-time error).
// CHECK-LABEL: func.func @out_of_bounds_constant_stays
// CHECK: tensor.extract_slice %arg0[%c100] [2] [1] : tensor<8xf32> to tensor<2xf32>
func.func @out_of_bounds_constant_stays(%t: tensor<8xf32>) -> tensor<2xf32> {
  %c100 = arith.constant 100 : index
  %0 = tensor.extract_slice %t[%c100] [2] [1] : tensor<8xf32> to tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @through_casts
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %arg0[0, 1, 0, 0] [1, 1, 16, 32] [1, 1, 1, 1] : tensor<4x6x16x32xi8> to tensor<16x32xi8>
// CHECK-NEXT: %[[E:.*]] = tensor.extract %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<4x6x16x32xi8>
// CHECK-NEXT: %[[I:.*]] = tensor.insert_slice %arg1 into %arg0[0, 1, 0, 0] [1, 1, 16, 32] [1, 1, 1, 1] : tensor<16x32xi8> into tensor<4x6x16x32xi8>
// CHECK-NEXT: %c4 = arith.constant 4 : index
// CHECK-NEXT: return %[[S]], %[[E]], %[[I]], %c4
func.func @through_casts(%t: tensor<4x6x16x32xi8>, %a: tensor<16x32xi8>) -> (tensor<16x32xi8>, i8, tensor<4x6x16x32xi8>, index) {
  %c0 = arith.constant 0 : index
  %0 = tensor.cast %t : tensor<4x6x16x32xi8> to tensor<?x?x16x32xi8>
  %1 = tensor.extract_slice %0[0, 1, 0, 0] [1, 1, 16, 32] [1, 1, 1, 1] : tensor<?x?x16x32xi8> to tensor<16x32xi8>
  %2 = tensor.extract %0[%c0, %c0, %c0, %c0] : tensor<?x?x16x32xi8>
  %cast = tensor.cast %a : tensor<16x32xi8> to tensor<?x32xi8>
  %sz = tensor.dim %cast, %c0 : tensor<?x32xi8>
  %3 = tensor.insert_slice %cast into %t[0, 1, 0, 0] [1, 1, %sz, 32] [1, 1, 1, 1] : tensor<?x32xi8> into tensor<4x6x16x32xi8>
  %4 = tensor.dim %0, %c0 : tensor<?x?x16x32xi8>
  return %1, %2, %3, %4 : tensor<16x32xi8>, i8, tensor<4x6x16x32xi8>, index
}

// -----

// CHECK-LABEL: func.func @same_slice
// CHECK-NEXT: %[[I:.*]] = tensor.insert_slice %arg2 into %arg0
// CHECK-NEXT: return %arg1, %arg0, %[[I]]
func.func @same_slice(%t: tensor<?x?xf32>, %s: tensor<4x?xf32>, %s2: tensor<4x?xf32>, %i: index, %n: index) -> (tensor<4x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = tensor.insert_slice %s into %t[0, %i] [4, %n] [1, 1] : tensor<4x?xf32> into tensor<?x?xf32>
  %1 = tensor.extract_slice %0[0, %i] [4, %n] [1, 1] : tensor<?x?xf32> to tensor<4x?xf32>
  %e = tensor.extract_slice %t[0, %i] [4, %n] [1, 1] : tensor<?x?xf32> to tensor<4x?xf32>
  %2 = tensor.insert_slice %e into %t[0, %i] [4, %n] [1, 1] : tensor<4x?xf32> into tensor<?x?xf32>
  %3 = tensor.insert_slice %s into %t[0, %i] [4, %n] [1, 1] : tensor<4x?xf32> into tensor<?x?xf32>
  %4 = tensor.insert_slice %s2 into %3[0, %i] [4, %n] [1, 1] : tensor<4x?xf32> into tensor<?x?xf32>
  return %1, %2, %4 : tensor<4x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @pads
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[P:.*]] = tensor.pad %arg0 low[0, 0] high[0, 1]
// CHECK: } : tensor<4x?xf32> to tensor<4x4xf32>
// CHECK-NEXT: %[[Z:.*]] = tensor.cast %arg1 : tensor<?x?xf32> to tensor<2x3xf32>
// CHECK-NEXT: return %[[P]], %arg2, %[[Z]]
func.func @pads(%t: tensor<4x?xf32>, %u: tensor<?x?xf32>, %w: tensor<5x6xf32>, %a: index) -> (tensor<4x4xf32>, tensor<5x6xf32>, tensor<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %0 = tensor.cast %t : tensor<4x?xf32> to tensor<?x?xf32>
  %1 = tensor.pad %0 low[0, 0] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<?x?xf32> to tensor<4x4xf32>
  %2 = tensor.pad %w low[%a, 0] high[0, %a] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<5x6xf32> to tensor<5x6xf32>
  %3 = tensor.pad %u low[0, %c0] high[%c0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<?x?xf32> to tensor<2x3xf32>
  return %1, %2, %3 : tensor<4x4xf32>, tensor<5x6xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @generate_and_reshapes
// CHECK-NEXT: %[[D:.*]] = tensor.dim %arg1, %arg0 : tensor<*xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %arg2 {{\[}}[0, 1, 2], [3, 4]] : tensor<?x?x?x?x?xf32> into tensor<?x?xf32>
// CHECK-NEXT: %[[F:.*]] = tensor.from_elements %arg3 : tensor<i32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<1x12xf32>
// CHECK-NEXT: return %[[D]], %[[C]], %[[F]], %[[E]]
func.func @generate_and_reshapes(%idx: index, %t: tensor<*xf32>, %x: tensor<?x?x?x?x?xf32>, %s: i32, %n: index) -> (index, tensor<?x?xf32>, tensor<i32>, tensor<1x12xf32>) {
  %size = tensor.rank %t : tensor<*xf32>
  %0 = tensor.generate %size {
  ^bb0(%i: index):
    %1 = tensor.dim %t, %i : tensor<*xf32>
    tensor.yield %1 : index
  } : tensor<?xindex>
  %1 = tensor.extract %0[%idx] : tensor<?xindex>
  %2 = tensor.collapse_shape %x [[0, 1], [2], [3, 4]] : tensor<?x?x?x?x?xf32> into tensor<?x?x?xf32>
  %3 = tensor.collapse_shape %2 [[0, 1], [2]] : tensor<?x?x?xf32> into tensor<?x?xf32>
  %4 = tensor.from_elements %s : tensor<1xi32>
  %5 = tensor.collapse_shape %4 [] : tensor<1xi32> into tensor<i32>
  %6 = tensor.empty(%n) : tensor<?x12xf32>
  %7 = tensor.cast %6 : tensor<?x12xf32> to tensor<1x12xf32>
  return %1, %3, %5, %7 : index, tensor<?x?xf32>, tensor<i32>, tensor<1x12xf32>
}
