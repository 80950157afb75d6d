// RUN: ftuner-opt %s --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @fold
func.func @fold() -> (f32, f32) {
  %c = arith.constant 4.0 : f32
  %0 = math.sqrt %c : f32
  %1 = math.rsqrt %c : f32
  // CHECK-DAG: arith.constant 2.000000e+00 : f32
  // CHECK-DAG: arith.constant 5.000000e-01 : f32
  return %0, %1 : f32, f32
}
