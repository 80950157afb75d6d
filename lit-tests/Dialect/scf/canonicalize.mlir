// scf.if / scf.for canonicalization (upstream's patterns; crates/ftuner-dialects/src/scf/canonicalize.rs).
// RUN: ftuner-opt %s --allow-unregistered-dialect --canonicalize --cse --split-input-file | FileCheck %s
// RUN: ftuner-opt %s --allow-unregistered-dialect --canonicalize --cse --split-input-file --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --split-input-file -o /dev/null
// REQUIRES: mlir-opt

// CHECK-LABEL: func.func @static_condition
// CHECK-NEXT: %[[V:.*]] = "test.then"() : () -> i32
// CHECK-NEXT: return %[[V]]
func.func @static_condition() -> i32 {
  %true = arith.constant true
  %0 = scf.if %true -> (i32) {
    %1 = "test.then"() : () -> i32
    scf.yield %1 : i32
  } else {
    %2 = "test.else"() : () -> i32
    scf.yield %2 : i32
  }
  return %0 : i32
}

// -----

// CHECK-LABEL: func.func @to_select
// CHECK: %[[S:.*]] = arith.select %arg0, %arg1, %arg2 : index
// CHECK-NOT: scf.if
// CHECK: return %[[S]], %arg2
func.func @to_select(%c: i1, %a: index, %b: index) -> (index, index) {
  %0, %1 = scf.if %c -> (index, index) {
    scf.yield %a, %b : index, index
  } else {
    scf.yield %b, %b : index, index
  }
  return %0, %1 : index, index
}

// -----

// Tensors are not turned into selects (bufferization has no arith.select on tensors).
// CHECK-LABEL: func.func @tensor_not_select
// CHECK: scf.if
func.func @tensor_not_select(%c: i1, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = scf.if %c -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %b : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @unused_results_and_empty_else
// CHECK: scf.if %arg0 {
// CHECK-NEXT: "test.effect"() : () -> ()
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @unused_results_and_empty_else(%c: i1, %a: index) {
  %0 = scf.if %c -> (index) {
    "test.effect"() : () -> ()
    scf.yield %a : index
  } else {
    scf.yield %a : index
  }
  return
}

// -----

// CHECK-LABEL: func.func @negated_condition_and_propagation
// CHECK: scf.if %arg0 -> (index) {
// CHECK-NEXT: "test.b"
// CHECK: } else {
// CHECK-NEXT: "test.a"
func.func @negated_condition_and_propagation(%c: i1) -> index {
  %true = arith.constant true
  %n = arith.xori %c, %true : i1
  %0 = scf.if %n -> (index) {
    %1 = scf.if %n -> (index) {
      %v = "test.a"() : () -> index
      scf.yield %v : index
    } else {
      %v = "test.never"() : () -> index
      scf.yield %v : index
    }
    scf.yield %1 : index
  } else {
    %v = "test.b"() : () -> index
    scf.yield %v : index
  }
  return %0 : index
}

// -----

// CHECK-LABEL: func.func @combine_and_nest
// CHECK: %[[R:.*]]:2 = scf.if %arg0 -> (i32, i32) {
// CHECK-NEXT: %[[X:.*]] = "test.first"() : () -> i32
// CHECK-NEXT: %[[Y:.*]] = "test.second"(%[[X]]) : (i32) -> i32
// CHECK-NEXT: scf.yield %[[X]], %[[Y]]
// CHECK: "test.sep"
// CHECK-NEXT: %[[A:.*]] = arith.andi %arg0, %arg1 : i1
// CHECK-NEXT: scf.if %[[A]] {
// CHECK-NEXT: "test.inner"
func.func @combine_and_nest(%c: i1, %d: i1) -> (i32, i32) {
  %0 = scf.if %c -> (i32) {
    %v = "test.first"() : () -> i32
    scf.yield %v : i32
  } else {
    %v = "test.first_else"() : () -> i32
    scf.yield %v : i32
  }
  %1 = scf.if %c -> (i32) {
    %v = "test.second"(%0) : (i32) -> i32
    scf.yield %v : i32
  } else {
    scf.yield %0 : i32
  }
  "test.sep"() : () -> ()
  scf.if %c {
    scf.if %d {
      "test.inner"() : () -> ()
    }
  }
  return %0, %1 : i32, i32
}

// -----

// CHECK-LABEL: func.func @trivial_loops
// CHECK-NEXT: %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT: %[[I:.*]] = "test.init"() : () -> i32
// CHECK-NEXT: %[[O:.*]] = "test.op"(%[[C5]], %[[I]]) : (index, i32) -> i32
// CHECK-NEXT: return %[[I]], %[[O]]
func.func @trivial_loops() -> (i32, i32) {
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c11 = arith.constant 11 : index
  %init = "test.init"() : () -> i32
  %zero = scf.for %i = %c11 to %c5 step %c6 iter_args(%a = %init) -> (i32) {
    %1 = "test.op"(%i, %a) : (index, i32) -> i32
    scf.yield %1 : i32
  }
  %one = scf.for %i = %c5 to %c11 step %c6 iter_args(%a = %init) -> (i32) {
    %1 = "test.op"(%i, %a) : (index, i32) -> i32
    scf.yield %1 : i32
  }
  return %zero, %one : i32, i32
}

// -----

// CHECK-LABEL: func.func @iter_args
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %arg3) -> (i32) {
// CHECK-NEXT: %[[N:.*]] = "test.step"(%[[A]])
// CHECK-NEXT: scf.yield %[[N]] : i32
// CHECK: return %arg3, %[[R]]
func.func @iter_args(%lb: index, %ub: index, %s: index, %x: i32) -> (i32, i32) {
  %r:3 = scf.for %i = %lb to %ub step %s iter_args(%a = %x, %b = %x, %dead = %x) -> (i32, i32, i32) {
    %n = "test.step"(%b) : (i32) -> i32
    scf.yield %a, %n, %dead : i32, i32, i32
  }
  return %r#0, %r#1 : i32, i32
}

// -----

// An argument yielded back unchanged that another position yields too: both become its
// init (found by the canonicalize fuzz target: the pattern yielded the erased argument).
// CHECK-LABEL: func.func @iter_arg_yielded_twice
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %arg3) -> (i32) {
// CHECK-NEXT: "test.use"(%[[A]])
// CHECK-NEXT: scf.yield %arg4 : i32
// CHECK: return %[[R]]
func.func @iter_arg_yielded_twice(%lb: index, %ub: index, %s: index, %x: i32, %y: i32) -> i32 {
  %r:2 = scf.for %i = %lb to %ub step %s iter_args(%a = %x, %b = %y) -> (i32, i32) {
    "test.use"(%a) : (i32) -> ()
    scf.yield %b, %b : i32, i32
  }
  return %r#0 : i32
}
