// scf.while and scf.index_switch in upstream's custom syntax: printed as mlir-opt-22 prints
// them, read back by ftuner-opt and by mlir-opt-22.
// RUN: ftuner-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: ftuner-opt %s --allow-unregistered-dialect | ftuner-opt --allow-unregistered-dialect | FileCheck %s
// RUN: ftuner-opt %s --allow-unregistered-dialect --mlir-print-op-generic | ftuner-opt --allow-unregistered-dialect | FileCheck %s
// RUN: ftuner-opt %s --allow-unregistered-dialect | %mlir-opt --allow-unregistered-dialect | FileCheck %s
// REQUIRES: mlir-opt

// CHECK-LABEL: func.func @count
// CHECK: %[[R:.*]]:2 = scf.while (%[[A:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}}) : (i32, f32) -> (i32, f32) {
// CHECK-NEXT: %[[C:.*]] = arith.cmpi slt, %[[A]], %{{.*}} : i32
// CHECK-NEXT: scf.condition(%[[C]]) %[[A]], %[[B]] : i32, f32
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: f32):
// CHECK: scf.yield %{{.*}}, %[[Y]] : i32, f32
// CHECK-NEXT: } attributes {tag = 1 : i64}
func.func @count(%n: i32, %f: f32) -> (i32, f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%a = %c0, %b = %f) : (i32, f32) -> (i32, f32) {
    %c = arith.cmpi slt, %a, %n : i32
    scf.condition(%c) %a, %b : i32, f32
  } do {
  ^bb0(%x: i32, %y: f32):
    %z = arith.addi %x, %c1 : i32
    scf.yield %z, %y : i32, f32
  } attributes {tag = 1}
  return %r#0, %r#1 : i32, f32
}

// CHECK-LABEL: func.func @no_inits
// CHECK: scf.while : () -> () {
// CHECK: scf.condition(%{{.*}})
// CHECK-NEXT: } do {
// CHECK-NEXT: "test.body"() : () -> ()
// CHECK-NEXT: scf.yield
func.func @no_inits() {
  scf.while () : () -> () {
    %c = "test.cond"() : () -> i1
    scf.condition(%c)
  } do {
    "test.body"() : () -> ()
    scf.yield
  }
  return
}

// CHECK-LABEL: func.func @switch
// CHECK: %[[S:.*]]:2 = scf.index_switch %{{.*}} -> f32, i32
// CHECK-NEXT: case 2 {
// CHECK: scf.yield %{{.*}}, %{{.*}} : f32, i32
// CHECK-NEXT: }
// CHECK-NEXT: case 5 {
// CHECK: default {
// CHECK: scf.index_switch %{{.*}}
// CHECK-NEXT: default {
// CHECK-NEXT: "test.op"() : () -> ()
// CHECK-NEXT: }
func.func @switch(%i: index, %a: f32, %b: i32) -> (f32, i32) {
  %0:2 = scf.index_switch %i -> f32, i32
  case 2 {
    scf.yield %a, %b : f32, i32
  }
  case 5 {
    %c = "test.c"() : () -> i32
    scf.yield %a, %c : f32, i32
  }
  default {
    %d = "test.d"() : () -> f32
    scf.yield %d, %b : f32, i32
  }
  scf.index_switch %i
  default {
    "test.op"() : () -> ()
  }
  return %0#0, %0#1 : f32, i32
}
