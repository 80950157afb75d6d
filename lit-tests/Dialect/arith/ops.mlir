// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | ftuner-opt | FileCheck %s

// CHECK-LABEL: func.func @arith
func.func @arith(%a: f32, %b: f32, %i: i64, %j: i64, %x: index) -> f32 {
  // CHECK: %c0 = arith.constant 0 : index
  %c0 = arith.constant 0 : index
  // CHECK: %c7_i64 = arith.constant 7 : i64
  %c7 = arith.constant 7 : i64
  // CHECK: %true = arith.constant true
  %t = arith.constant true
  // CHECK: %cst = arith.constant 1.250000e-01 : f32
  %f = arith.constant 0.125 : f32
  // CHECK: %cst_0 = arith.constant 0xFF800000 : f32
  %ninf = arith.constant 0xFF800000 : f32
  // CHECK: %cst_1 = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %d = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: arith.addf %{{.*}}, %{{.*}} : f32
  %0 = arith.addf %a, %b : f32
  // CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<fast> : f32
  %1 = arith.mulf %0, %b fastmath<fast> : f32
  // CHECK: arith.addi %{{.*}}, %{{.*}} overflow<nsw> : i64
  %2 = arith.addi %i, %j overflow<nsw> : i64
  // CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : i64
  %3 = arith.cmpi sge, %2, %c7 : i64
  // CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
  %4 = arith.cmpf ogt, %1, %f : f32
  // CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
  %5 = arith.select %4, %1, %ninf : f32
  // CHECK: arith.index_cast %{{.*}} : index to i64
  %6 = arith.index_cast %x : index to i64
  // CHECK: arith.extf %{{.*}} : f32 to f64
  %7 = arith.extf %5 : f32 to f64
  // CHECK: arith.truncf %{{.*}} : f64 to f32
  %8 = arith.truncf %7 : f64 to f32
  return %8 : f32
}

// The extended ops print one name per result, as upstream.
// CHECK-LABEL: func.func @extended
func.func @extended(%a: i32, %b: i32, %v: vector<4xi8>) -> (i32, i1, i32, i32, vector<4xi8>, vector<4xi8>) {
  // CHECK: %sum, %overflow = arith.addui_extended %arg0, %arg1 : i32, i1
  %s, %o = arith.addui_extended %a, %b : i32, i1
  // CHECK: %low, %high = arith.mulsi_extended %arg0, %arg1 : i32
  %l, %h = arith.mulsi_extended %a, %b : i32
  // CHECK: %low_0, %high_1 = arith.mului_extended %arg2, %arg2 : vector<4xi8>
  %vl, %vh = arith.mului_extended %v, %v : vector<4xi8>
  return %s, %o, %l, %h, %vl, %vh : i32, i1, i32, i32, vector<4xi8>, vector<4xi8>
}
