// RUN: ftuner-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @fold_int
func.func @fold_int() -> i64 {
  %a = arith.constant 6 : i64
  %b = arith.constant 7 : i64
  %c = arith.muli %a, %b : i64
  %d = arith.addi %c, %a : i64
  // CHECK: %[[C:.*]] = arith.constant 48 : i64
  // CHECK-NEXT: return %[[C]]
  return %d : i64
}

// -----

// CHECK-LABEL: func.func @fold_float
func.func @fold_float() -> f32 {
  %a = arith.constant 1.5 : f32
  %b = arith.constant 2.0 : f32
  %c = arith.mulf %a, %b : f32
  // CHECK: arith.constant 3.000000e+00 : f32
  return %c : f32
}

// -----

// CHECK-LABEL: func.func @identities
func.func @identities(%x: i32, %y: f32) -> (i32, f32) {
  %z = arith.constant 0 : i32
  %one = arith.constant 1.0 : f32
  %0 = arith.addi %x, %z : i32
  %1 = arith.mulf %y, %one : f32
  // CHECK: return %arg0, %arg1 : i32, f32
  return %0, %1 : i32, f32
}

// -----

// CHECK-LABEL: func.func @cmp_and_select
func.func @cmp_and_select(%a: f32, %b: f32) -> f32 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %p = arith.cmpi slt, %c1, %c2 : index
  %r = arith.select %p, %a, %b : f32
  // CHECK: return %arg0 : f32
  return %r : f32
}

// -----

// CHECK-LABEL: func.func @dead_code
func.func @dead_code(%a: f32) -> f32 {
  // CHECK-NOT: arith.addf
  %unused = arith.addf %a, %a : f32
  return %a : f32
}

// -----

// CHECK-LABEL: func.func @casts
func.func @casts() -> (i64, f32) {
  %c = arith.constant 42 : index
  %i = arith.index_cast %c : index to i64
  %s = arith.constant -3 : i32
  %f = arith.sitofp %s : i32 to f32
  // CHECK-DAG: arith.constant 42 : i64
  // CHECK-DAG: arith.constant -3.000000e+00 : f32
  return %i, %f : i64, f32
}
