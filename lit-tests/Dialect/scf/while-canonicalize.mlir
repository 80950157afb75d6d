// scf.while canonicalization (crates/ftuner-dialects/src/scf/while_canonicalize.rs),
// each case also read back by mlir-opt-22.
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file --canonicalize --cse | FileCheck %s
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file --canonicalize --cse | %mlir-opt --allow-unregistered-dialect --split-input-file -o /dev/null
// REQUIRES: mlir-opt

// The condition, forwarded, is true in the body.
// CHECK-LABEL: func.func @condition_truth
// CHECK: } do {
// CHECK-NEXT: ^bb0(%{{.*}}: i1):
// CHECK-NEXT: %[[T:.*]] = arith.constant true
// CHECK-NEXT: "test.use"(%[[T]])
func.func @condition_truth() -> i1 {
  %0 = scf.while () : () -> i1 {
    %c = "test.condition"() : () -> i1
    scf.condition(%c) %c : i1
  } do {
  ^bb0(%a: i1):
    "test.use"(%a) : (i1) -> ()
    scf.yield
  }
  return %0 : i1
}

// -----

// A value forwarded twice is read once; one unread goes; an outside value forwarded is
// itself.
// CHECK-LABEL: func.func @forwarded
// CHECK: %[[W:.*]] = scf.while : () -> i32 {
// CHECK: scf.condition(%{{.*}}) %[[V:.*]] : i32
// CHECK: ^bb0(%[[A:.*]]: i32):
// CHECK-NEXT: "test.use"(%[[A]], %[[A]], %arg0) : (i32, i32, f32) -> ()
// CHECK: return %[[W]], %[[W]], %arg0
func.func @forwarded(%x: f32) -> (i32, i32, f32) {
  %0:4 = scf.while () : () -> (i32, i32, i64, f32) {
    %v = "test.val"() : () -> i32
    %w = "test.other"() : () -> i64
    %c = "test.condition"() : () -> i1
    scf.condition(%c) %v, %v, %w, %x : i32, i32, i64, f32
  } do {
  ^bb0(%a: i32, %b: i32, %d: i64, %e: f32):
    "test.use"(%a, %b, %e) : (i32, i32, f32) -> ()
    scf.yield
  }
  return %0#0, %0#1, %0#3 : i32, i32, f32
}

// -----

// A before argument the body hands back unchanged is its initial value; one no one reads
// goes with its initial and yielded values.
// CHECK-LABEL: func.func @before_args
// CHECK: scf.while (%[[I:.*]] = %arg0) : (i32) -> i32 {
// CHECK-NEXT: %[[C:.*]] = "test.condition"(%[[I]], %arg1) : (i32, f64) -> i1
// CHECK-NEXT: scf.condition(%[[C]]) %[[I]] : i32
// CHECK: ^bb0(%[[A:.*]]: i32):
// CHECK-NEXT: %[[N:.*]] = "test.next"(%[[A]]) : (i32) -> i32
// CHECK: scf.yield %[[N]] : i32
func.func @before_args(%x: i32, %y: f64, %z: i8) -> i32 {
  %0:2 = scf.while (%i = %x, %f = %y, %u = %z) : (i32, f64, i8) -> (i32, f64) {
    %c = "test.condition"(%i, %f) : (i32, f64) -> i1
    scf.condition(%c) %i, %f : i32, f64
  } do {
  ^bb0(%a: i32, %b: f64):
    %n = "test.next"(%a) : (i32) -> i32
    %k = "test.k"() : () -> i8
    scf.yield %n, %b, %k : i32, f64, i8
  }
  return %0#0 : i32
}
