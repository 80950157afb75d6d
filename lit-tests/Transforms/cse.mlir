// RUN: ftuner-opt %s --cse --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @simple
func.func @simple(%a: f32) -> (f32, f32) {
  // CHECK: %[[X:.*]] = arith.addf %arg0, %arg0 : f32
  // CHECK-NOT: arith.addf
  %0 = arith.addf %a, %a : f32
  %1 = arith.addf %a, %a : f32
  // CHECK: return %[[X]], %[[X]]
  return %0, %1 : f32, f32
}

// -----

// CHECK-LABEL: func.func @nested_sees_outer
func.func @nested_sees_outer(%a: f32, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[X:.*]] = arith.mulf
  %x = arith.mulf %a, %a : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (f32) {
    // CHECK-NOT: arith.mulf
    // CHECK: arith.addf %{{.*}}, %[[X]]
    %y = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %y : f32
    scf.yield %s : f32
  }
  return %r : f32
}

// -----

// Side effects are not merged.
// CHECK-LABEL: func.func @effects
func.func @effects(%m: memref<4xf32>, %i: index) -> (f32, f32) {
  // CHECK: memref.load
  // CHECK: memref.load
  %0 = memref.load %m[%i] : memref<4xf32>
  %1 = memref.load %m[%i] : memref<4xf32>
  return %0, %1 : f32, f32
}

// -----

// Structured ops with equal bodies and operands are merged.
// CHECK-LABEL: func.func @generic_dup
func.func @generic_dup(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-COUNT-1: linalg.generic
  // CHECK-NOT: linalg.generic
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  } -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
