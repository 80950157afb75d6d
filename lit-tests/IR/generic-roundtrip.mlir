// The generic form we print for a real torch-mlir export is the one mlir-opt prints.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --mlir-print-op-generic | FileCheck %s
// CHECK: #map = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-NEXT: #map1 = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-NEXT: #map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-NEXT: #map3 = affine_map<(d0, d1) -> (d1)>
// CHECK-NEXT: #map4 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-NEXT: "builtin.module"() ({
// CHECK-NEXT:   "func.func"() <{function_type = (tensor<?x768xf32>, tensor<2304x768xf32>, tensor<2304xf32>) -> tensor<?x2304xf32>, sym_name = "dense_dynamic"}> ({
// CHECK-NEXT:   ^bb0(%arg0: tensor<?x768xf32>, %arg1: tensor<2304x768xf32>, %arg2: tensor<2304xf32>):
// CHECK-NEXT:     %0 = "arith.constant"() <{value = true}> : () -> i1
// CHECK:          %7 = "linalg.transpose"(%arg1, %6) <{permutation = array<i64: 1, 0>}> ({
// CHECK-NEXT:     ^bb0(%arg13: f32, %arg14: f32):

// REQUIRES: mlir-opt
// Upstream prints the same generic module for our output as for the original.
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --mlir-print-op-generic | %mlir-opt --mlir-print-op-generic > %t.ours
// RUN: %mlir-opt %examples/bert_layer_dynamic.mlir --mlir-print-op-generic > %t.theirs
// RUN: diff %t.ours %t.theirs
