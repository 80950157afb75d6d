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

// Outside a function's domain upstream keeps the op (a NaN from non-NaN operands is not
// folded); a NaN operand folds through.
// CHECK-LABEL: func.func @domain
func.func @domain() -> (f32, f32, f32) {
  %m = arith.constant -1.0 : f32
  %n = arith.constant 0x7FC00000 : f32
  // CHECK: math.log2
  // CHECK: math.sqrt
  // CHECK-NOT: math.exp
  %0 = math.log2 %m : f32
  %1 = math.sqrt %m : f32
  %2 = math.exp %n : f32
  return %0, %1, %2 : f32, f32, f32
}

// Dense (non-splat) constants fold element by element; one element outside the
// function's domain leaves the op.
// CHECK-LABEL: func.func @fold_dense
// CHECK-DAG: arith.constant dense<[1.000000e+00, 4.000000e+00, 9.000000e+00, 1.600000e+01]> : vector<4xf32>
// CHECK-DAG: arith.constant dense<[0.000000e+00, 1.000000e+00, 1.58496249, 2.000000e+00]> : vector<4xf32>
// CHECK: math.log2 %{{.*}} : vector<2xf32>
func.func @fold_dense() -> (vector<4xf32>, vector<4xf32>, vector<2xf32>) {
  %v = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : vector<4xf32>
  %two = arith.constant dense<2.0> : vector<4xf32>
  %p = math.powf %v, %two : vector<4xf32>
  %l = math.log2 %v : vector<4xf32>
  %neg = arith.constant dense<[1.0, -1.0]> : vector<2xf32>
  %n = math.log2 %neg : vector<2xf32>
  return %p, %l, %n : vector<4xf32>, vector<4xf32>, vector<2xf32>
}
