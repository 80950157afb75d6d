// arith.cmpi of a value known non-negative (a size, its index_cast to i64, a zero
// extension, a select or maxsi of such values) against a constant at or below zero
// folds; torch-mlir guards every dynamic size with `index_cast(tensor.dim) < 0`.
// RUN: ftuner-opt %s --canonicalize --cse | FileCheck %s
// RUN: ftuner-run %s --entry sizes --shape 0=3x0 --check | FileCheck %s --check-prefix=JIT
// JIT: check: ok

// CHECK-LABEL: func.func @sizes
// CHECK-DAG: %[[T:.*]] = arith.constant true
// CHECK-DAG: %[[F:.*]] = arith.constant false
// CHECK: return %[[F]], %[[F]], %[[F]], %[[T]], %[[T]], %[[T]], %[[F]], %[[T]], %[[F]]
func.func @sizes(%x: tensor<?x?xf32>) -> (i1, i1, i1, i1, i1, i1, i1, i1, i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %m1 = arith.constant -1 : i64
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %n0 = arith.index_cast %d0 : index to i64
  %n1 = arith.index_castui %d1 : index to i64
  %true_or_false = arith.cmpi ult, %d0, %d1 : index
  %s = arith.select %true_or_false, %n0, %n1 : i64
  %mx = arith.maxsi %n0, %m1 : i64
  %a = arith.cmpi slt, %n0, %z : i64
  %b = arith.cmpi sle, %s, %m1 : i64
  %c = arith.cmpi eq, %mx, %m1 : i64
  %d = arith.cmpi sge, %n1, %z : i64
  %e = arith.cmpi sgt, %s, %m1 : i64
  %f = arith.cmpi ne, %n0, %m1 : i64
  %g = arith.cmpi slt, %d0, %c0 : index
  %h = arith.cmpi sge, %mx, %z : i64
  %w = arith.extui %true_or_false : i1 to i64
  %i = arith.cmpi slt, %w, %z : i64
  return %a, %b, %c, %d, %e, %f, %g, %h, %i : i1, i1, i1, i1, i1, i1, i1, i1, i1
}

// Not folded: a narrowing cast (a size past 2^31 is negative in i32), a bound above
// zero, `sle 0` (a size may be 0), an unsigned predicate, a value of unknown sign.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: arith.cmpi
func.func @kept(%x: tensor<?xf32>, %y: i64) -> (i1, i1, i1, i1, i1) {
  %c0 = arith.constant 0 : index
  %z32 = arith.constant 0 : i32
  %z = arith.constant 0 : i64
  %five = arith.constant 5 : i64
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %d : index to i32
  %n = arith.index_cast %d : index to i64
  %a = arith.cmpi slt, %n32, %z32 : i32
  %b = arith.cmpi slt, %n, %five : i64
  %c = arith.cmpi sle, %n, %z : i64
  %e = arith.cmpi ult, %n, %z : i64
  %f = arith.cmpi slt, %y, %z : i64
  return %a, %b, %c, %e, %f : i1, i1, i1, i1, i1
}

// Narrow types: a zero extension is non-negative in its wider type (65535 : i16 is -1),
// and i1's true is -1 (a maxsi with false is non-negative).
// CHECK-LABEL: func.func @narrow
// CHECK: %[[T:.*]] = arith.constant true
// CHECK: return %[[T]], %[[T]]
func.func @narrow(%a: i8, %b: i1) -> (i1, i1) {
  %m1 = arith.constant 65535 : i16
  %f = arith.constant false
  %t = arith.constant true
  %w = arith.extui %a : i8 to i16
  %x = arith.cmpi sgt, %w, %m1 : i16
  %mb = arith.maxsi %b, %f : i1
  %y = arith.cmpi ne, %mb, %t : i1
  return %x, %y : i1, i1
}
