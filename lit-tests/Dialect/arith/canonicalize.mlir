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

// -----

// Constants go to the right of commutative ops; addi/subi/muli reassociate scalar
// constants (AddIAddConstant, SubIRHSSubConstantLHS, MulIMulIConstant) and keep only the
// overflow flags both ops carry.
// CHECK-LABEL: func.func @reassociate
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : i8
// CHECK-DAG: %[[C10:.*]] = arith.constant 10 : i8
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[A:.*]] = arith.addi %arg0, %[[C3]] overflow<nsw> : i8
// CHECK-DAG: %[[S:.*]] = arith.subi %[[C10]], %arg0 : i8
// CHECK-DAG: %[[M:.*]] = arith.muli %arg1, %[[C6]] : index
// CHECK: return %[[A]], %[[S]], %[[M]]
func.func @reassociate(%x: i8, %i: index) -> (i8, i8, index) {
  %c1 = arith.constant 1 : i8
  %c2 = arith.constant 2 : i8
  %c12 = arith.constant 12 : i8
  %a0 = arith.addi %c1, %x overflow<nsw, nuw> : i8
  %a = arith.addi %a0, %c2 overflow<nsw> : i8
  %s0 = arith.subi %c12, %x : i8
  %s = arith.subi %s0, %c2 : i8
  %k2 = arith.constant 2 : index
  %k3 = arith.constant 3 : index
  %m0 = arith.muli %i, %k2 : index
  %m = arith.muli %k3, %m0 : index
  return %a, %s, %m : i8, i8, index
}

// -----

// Reassociation matches scalar constants only (as upstream's APIntAttr); a wrapped
// i1 sum is still exact.
// CHECK-LABEL: func.func @reassociate_splat_not
// CHECK: arith.addi %arg0, %{{.*}} : vector<4xi32>
// CHECK: arith.addi %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK-LABEL: func.func @reassociate_i1
// CHECK-NEXT: return %arg0 : i1
func.func @reassociate_splat_not(%v: vector<4xi32>) -> vector<4xi32> {
  %s1 = arith.constant dense<1> : vector<4xi32>
  %s2 = arith.constant dense<2> : vector<4xi32>
  %a = arith.addi %v, %s1 : vector<4xi32>
  %b = arith.addi %a, %s2 : vector<4xi32>
  return %b : vector<4xi32>
}
func.func @reassociate_i1(%x: i1) -> i1 {
  %t = arith.constant true
  %a = arith.addi %x, %t : i1
  %b = arith.addi %a, %t : i1
  return %b : i1
}

// -----

// CHECK-LABEL: func.func @add_sub_cancel
// CHECK-NEXT: %[[N:.*]] = arith.subi %arg0, %arg1 : i32
// CHECK-NEXT: return %arg0, %arg1, %[[N]]
func.func @add_sub_cancel(%a: i32, %b: i32) -> (i32, i32, i32) {
  %d = arith.subi %a, %b : i32
  %0 = arith.addi %d, %b : i32
  %s = arith.addi %a, %b : i32
  %1 = arith.subi %s, %a : i32
  %m1 = arith.constant -1 : i32
  %nb = arith.muli %b, %m1 : i32
  %2 = arith.addi %a, %nb : i32
  return %0, %1, %2 : i32, i32, i32
}

// -----

// ext/trunc/index_cast chains; trunci of a wider ext source stays a trunci.
// CHECK-LABEL: func.func @cast_chains
// CHECK-DAG: %[[E:.*]] = arith.extui %arg0 : i8 to i64
// CHECK-DAG: %[[T:.*]] = arith.extsi %arg0 : i8 to i16
// CHECK-DAG: %[[W:.*]] = arith.trunci %arg1 : i64 to i16
// CHECK-DAG: %[[I:.*]] = arith.index_cast %arg0 : i8 to index
// CHECK: return %[[E]], %[[T]], %[[W]], %[[I]], %arg1
func.func @cast_chains(%x: i8, %y: i64) -> (i64, i16, i16, index, i64) {
  %0 = arith.extui %x : i8 to i32
  %1 = arith.extsi %0 : i32 to i64
  %2 = arith.extsi %x : i8 to i32
  %3 = arith.trunci %2 : i32 to i16
  %4 = arith.extsi %y : i64 to i128
  %5 = arith.trunci %4 : i128 to i16
  %6 = arith.index_cast %2 : i32 to index
  %7 = arith.index_cast %y : i64 to index
  %8 = arith.index_cast %7 : index to i64
  return %1, %3, %5, %6, %8 : i64, i16, i16, index, i64
}

// -----

// The two casts of an index_cast chain differ, or the middle type is narrower: no fold
// (negative cases).
// CHECK-LABEL: func.func @index_cast_mixed
// CHECK: arith.index_castui
// CHECK: arith.index_cast
// CHECK-LABEL: func.func @index_cast_narrow
// CHECK: %[[T:.*]] = arith.index_cast %arg0 : index to i32
// CHECK: %[[R:.*]] = arith.index_cast %[[T]] : i32 to index
// CHECK: return %[[R]]
func.func @index_cast_mixed(%x: i32) -> i32 {
  %0 = arith.index_castui %x : i32 to index
  %1 = arith.index_cast %0 : index to i32
  return %1 : i32
}
func.func @index_cast_narrow(%x: index) -> index {
  %0 = arith.index_cast %x : index to i32
  %1 = arith.index_cast %0 : i32 to index
  return %1 : index
}

// -----

// CHECK-LABEL: func.func @cmpi_patterns
// CHECK-DAG: %[[E:.*]] = arith.cmpi eq, %arg0, %arg1 : i8
// CHECK-DAG: %[[N:.*]] = arith.cmpi sge, %arg0, %arg1 : i8
// CHECK-DAG: %[[S:.*]] = arith.cmpi sgt, %arg0, %{{.*}} : i8
// CHECK: return %[[E]], %[[N]], %[[S]], %arg2
func.func @cmpi_patterns(%a: i8, %b: i8, %p: i1) -> (i1, i1, i1, i1) {
  %ea = arith.extsi %a : i8 to i32
  %eb = arith.extsi %b : i8 to i32
  %0 = arith.cmpi eq, %ea, %eb : i32
  %lt = arith.cmpi slt, %a, %b : i8
  %t = arith.constant true
  %1 = arith.xori %lt, %t : i1
  %c5 = arith.constant 5 : i8
  %2 = arith.cmpi slt, %c5, %a : i8
  %f = arith.constant false
  %3 = arith.cmpi ne, %p, %f : i1
  return %0, %1, %2, %3 : i1, i1, i1, i1
}

// -----

// Only eq/ne see through extensions (negative case: slt of extui differs).
// CHECK-LABEL: func.func @cmpi_ext_slt
// CHECK: arith.extui
// CHECK: arith.cmpi slt
func.func @cmpi_ext_slt(%a: i8, %b: i8) -> i1 {
  %ea = arith.extui %a : i8 to i32
  %eb = arith.extui %b : i8 to i32
  %0 = arith.cmpi slt, %ea, %eb : i32
  return %0 : i1
}

// -----

// CHECK-LABEL: func.func @logic
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[X:.*]] = arith.xori %arg2, %arg3 : i8
// CHECK-DAG: %[[E:.*]] = arith.extui %[[X]] : i8 to i32
// CHECK-DAG: %[[A:.*]] = arith.andi %arg0, %arg1 : i32
// CHECK: return %[[Z]], %arg0, %[[A]], %[[E]]
func.func @logic(%a: i32, %b: i32, %x: i8, %y: i8, %i: index) -> (index, i32, i32, i32) {
  %m = arith.constant -1 : index
  %n = arith.xori %i, %m : index
  %0 = arith.andi %n, %i : index
  %c = arith.xori %a, %b : i32
  %1 = arith.xori %c, %b : i32
  %d = arith.andi %a, %b : i32
  %2 = arith.andi %b, %d : i32
  %ex = arith.extui %x : i8 to i32
  %ey = arith.extui %y : i8 to i32
  %3 = arith.xori %ex, %ey : i32
  return %0, %1, %2, %3 : index, i32, i32, i32
}

// -----

// Mixed extensions do not combine (negative case).
// CHECK-LABEL: func.func @logic_mixed_ext
// CHECK: arith.ori %{{.*}}, %{{.*}} : i32
func.func @logic_mixed_ext(%x: i8, %y: i8) -> i32 {
  %ex = arith.extui %x : i8 to i32
  %ey = arith.extsi %y : i8 to i32
  %0 = arith.ori %ex, %ey : i32
  return %0 : i32
}

// -----

// CHECK-LABEL: func.func @select_patterns
// CHECK-DAG: %[[T:.*]] = arith.constant true
// CHECK-DAG: %[[E:.*]] = arith.extui %arg0 : i1 to i32
// CHECK-DAG: %[[N:.*]] = arith.xori %arg0, %[[T]] : i1
// CHECK-DAG: %[[IN:.*]] = arith.select %arg1, %arg2, %arg3 : i32
// CHECK-DAG: %[[S:.*]] = arith.select %arg0, %[[IN]], %arg3 : i32
// CHECK: return %[[E]], %[[N]], %arg3, %[[S]], %arg2
func.func @select_patterns(%c: i1, %d: i1, %a: i32, %b: i32) -> (i32, i1, i32, i32, i32) {
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %0 = arith.select %c, %one, %zero : i32
  %f = arith.constant false
  %t = arith.constant true
  %1 = arith.select %c, %f, %t : i1
  %eq = arith.cmpi eq, %a, %b : i32
  %2 = arith.select %eq, %a, %b : i32
  %in = arith.select %d, %a, %b : i32
  %3 = arith.select %c, %in, %b : i32
  %in2 = arith.select %c, %a, %b : i32
  %4 = arith.select %c, %in2, %a : i32
  %5 = arith.select %c, %a, %4 : i32
  return %0, %1, %2, %3, %5 : i32, i1, i32, i32, i32
}

// -----

// A vector select of 1/0 is not an extui (negative case); index is not an integer type.
// CHECK-LABEL: func.func @select_no_ext
// CHECK: arith.select %arg0, %{{.*}}, %{{.*}} : vector<2xi1>, vector<2xi32>
// CHECK: arith.select %arg1, %{{.*}}, %{{.*}} : index
func.func @select_no_ext(%c: vector<2xi1>, %p: i1) -> (vector<2xi32>, index) {
  %one = arith.constant dense<1> : vector<2xi32>
  %zero = arith.constant dense<0> : vector<2xi32>
  %0 = arith.select %c, %one, %zero : vector<2xi1>, vector<2xi32>
  %i1 = arith.constant 1 : index
  %i0 = arith.constant 0 : index
  %1 = arith.select %p, %i1, %i0 : index
  return %0, %1 : vector<2xi32>, index
}

// -----

// CHECK-LABEL: func.func @extended
// CHECK-DAG: %[[C:.*]] = arith.constant dense<[1, 6, 2, 14]> : vector<4xi32>
// CHECK-DAG: %[[O:.*]] = arith.constant dense<[false, false, true, false]> : vector<4xi1>
// CHECK-DAG: %[[A:.*]] = arith.addi %arg0, %arg1 : i32
// CHECK-DAG: %[[LOW:.*]], %[[HIGH:.*]] = arith.mului_extended %arg0, %arg1 : i32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK-DAG: %[[NEG:.*]] = arith.cmpi slt, %arg2, %[[ZERO]] : i8
// CHECK-DAG: %[[H:.*]] = arith.extsi %[[NEG]] : i1 to i8
// CHECK-DAG: %[[L:.*]] = arith.constant -47 : i8
// CHECK-DAG: %[[HI:.*]] = arith.constant -99 : i8
// CHECK: return %[[C]], %[[O]], %[[A]], %[[LOW]], %[[HIGH]], %arg2, %[[H]], %[[L]], %[[HI]]
func.func @extended(%a: i32, %b: i32, %x: i8) -> (vector<4xi32>, vector<4xi1>, i32, i32, i32, i8, i8, i8, i8) {
  %v1 = arith.constant dense<[1, 3, 3, 7]> : vector<4xi32>
  %v2 = arith.constant dense<[0, 3, 4294967295, 7]> : vector<4xi32>
  %sum, %overflow = arith.addui_extended %v1, %v2 : vector<4xi32>, vector<4xi1>
  %s2, %o2 = arith.addui_extended %a, %b : i32, i1
  %low, %high = arith.mului_extended %a, %b : i32
  %one = arith.constant 1 : i8
  %l1, %h1 = arith.mulsi_extended %one, %x : i8
  %c201 = arith.constant 201 : i8
  %l2, %h2 = arith.mului_extended %c201, %c201 : i8
  return %sum, %overflow, %s2, %low, %high, %l1, %h1, %l2, %h2 : vector<4xi32>, vector<4xi1>, i32, i32, i32, i8, i8, i8, i8
}

// -----

// CHECK-LABEL: func.func @dense_and_float
// CHECK-DAG: %[[I:.*]] = arith.constant dense<[1, -1, 0]> : vector<3xi64>
// CHECK-DAG: %[[B:.*]] = arith.constant 1065353216 : i32
// CHECK-DAG: %[[M:.*]] = arith.mulf %arg0, %arg1 : f32
// CHECK: return %[[I]], %[[B]], %arg0, %[[M]]
func.func @dense_and_float(%x: f32, %y: f32) -> (vector<3xi64>, i32, f32, f32) {
  %v = arith.constant dense<[1, 255, 0]> : vector<3xi8>
  %0 = arith.extsi %v : vector<3xi8> to vector<3xi64>
  %f = arith.constant 1.0 : f32
  %1 = arith.bitcast %f : f32 to i32
  %n = arith.negf %x : f32
  %2 = arith.negf %n : f32
  %nx = arith.negf %x : f32
  %ny = arith.negf %y : f32
  %3 = arith.mulf %nx, %ny : f32
  return %0, %1, %2, %3 : vector<3xi64>, i32, f32, f32
}
