// scf.parallel / scf.reduce in upstream's custom syntax (read back by ftuner-opt and
// mlir-opt-22), and their canonicalization (crates/ftuner-dialects/src/scf/parallel.rs).
// RUN: ftuner-opt %s --split-input-file | ftuner-opt --split-input-file | FileCheck %s --check-prefix=RT
// RUN: ftuner-opt %s --split-input-file --mlir-print-op-generic | ftuner-opt --split-input-file | FileCheck %s --check-prefix=RT
// RUN: ftuner-opt %s --split-input-file | %mlir-opt --split-input-file | FileCheck %s --check-prefix=RT
// RUN: ftuner-opt %s --split-input-file --canonicalize --cse | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --canonicalize --cse | %mlir-opt --split-input-file -o /dev/null
// REQUIRES: mlir-opt

// RT-LABEL: func.func @sum
// RT: %[[R:.*]]:2 = scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) init (%{{.*}}, %{{.*}}) -> (f32, f32) {
// RT: scf.reduce(%{{.*}}, %{{.*}} : f32, f32) {
// RT-NEXT: ^bb0(%[[L:.*]]: f32, %[[R2:.*]]: f32):
// RT-NEXT: %[[S:.*]] = arith.addf %[[L]], %[[R2]] : f32
// RT-NEXT: scf.reduce.return %[[S]] : f32
// RT-NEXT: }, {
// RT: arith.maximumf
// RT: } {tag}
// CHECK-LABEL: func.func @sum
// CHECK: scf.parallel
func.func @sum(%a: memref<?x?xf32>, %n: index, %m: index) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r:2 = scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) init (%zero, %zero) -> (f32, f32) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    scf.reduce(%v, %v : f32, f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }, {
    ^bb0(%l: f32, %r: f32):
      %s = arith.maximumf %l, %r : f32
      scf.reduce.return %s : f32
    }
  } {tag}
  return %r#0, %r#1 : f32, f32
}

// -----

// One-iteration dimensions go, their variable becomes the lower bound.
// RT-LABEL: func.func @one_iteration_dims
// RT: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) =
// RT-NEXT: memref.store
// RT-NEXT: scf.reduce
// CHECK-LABEL: func.func @one_iteration_dims
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[C0]], %[[I]], %[[C7]]]
func.func @one_iteration_dims(%A: memref<?x?x?xi32>, %v: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c10 = arith.constant 10 : index
  scf.parallel (%i0, %i1, %i2) = (%c0, %c3, %c7) to (%c1, %c6, %c10) step (%c1, %c2, %c3) {
    memref.store %v, %A[%i0, %i1, %i2] : memref<?x?x?xi32>
    scf.reduce
  }
  return
}

// -----

// All dimensions of one iteration: the body runs in place, each reduction combines the
// initial value with the one value.
// CHECK-LABEL: func.func @one_iteration_reduce
// CHECK-NOT: scf.parallel
// CHECK: %[[A:.*]] = arith.addi %arg0, %c1
// CHECK: %[[M:.*]] = arith.muli %arg1, %c3
// CHECK: return %[[A]], %[[M]]
func.func @one_iteration_reduce(%A: index, %B: index) -> (index, index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %0:2 = scf.parallel (%i0, %i1) = (%c1, %c3) to (%c2, %c6) step (%c1, %c3) init(%A, %B) -> (index, index) {
    scf.reduce(%i0, %i1 : index, index) {
    ^bb0(%lhs: index, %rhs: index):
      %1 = arith.addi %lhs, %rhs : index
      scf.reduce.return %1 : index
    }, {
    ^bb0(%lhs: index, %rhs: index):
      %2 = arith.muli %lhs, %rhs : index
      scf.reduce.return %2 : index
    }
  }
  return %0#0, %0#1 : index, index
}

// -----

// A dimension with no iterations: the loop is its initial values.
// CHECK-LABEL: func.func @empty
// CHECK-NEXT: return %arg2
func.func @empty(%lb: index, %s: index, %init: f32) -> f32 {
  %0 = scf.parallel (%i, %j) = (%lb, %lb) to (%s, %lb) step (%s, %s) init(%init) -> f32 {
    %1 = arith.constant 1.0 : f32
    scf.reduce(%1 : f32) {
    ^bb0(%lhs: f32, %rhs: f32):
      %2 = arith.addf %lhs, %rhs : f32
      scf.reduce.return %2 : f32
    }
  }
  return %0 : f32
}

// -----

// Nested loops without reductions merge; an inner bound that uses an outer variable
// keeps the nest.
// CHECK-LABEL: func.func @nested
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%arg1, %arg2) step (%c1, %c1) {
// CHECK-NEXT: memref.store %{{.*}}, %arg0[%[[I]], %[[J]]]
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK: scf.parallel (%[[K:.*]]) =
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%c0) to (%[[K]])
func.func @nested(%a: memref<?x?xf32>, %n: index, %m: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%m) step (%c1) {
      memref.store %v, %a[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%k) = (%c0) to (%n) step (%c1) {
    scf.parallel (%l) = (%c0) to (%k) step (%c1) {
      memref.store %v, %a[%k, %l] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// CHECK-LABEL: func.func @huge_bounds
// CHECK: scf.parallel
func.func @huge_bounds(%a: memref<?xf32>, %v: f32) {
  %lb = arith.constant -2 : index
  %ub = arith.constant 9223372036854775807 : index
  scf.parallel (%i) = (%lb) to (%ub) step (%ub) {
    memref.store %v, %a[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Found by the canonicalize fuzz target: the outer loop runs once, inlining it makes the
// inner step the constant 0, which the verifier refuses; that loop is undefined and goes
// (upstream's canonicalization leaves nothing of it either).
// CHECK-LABEL: func.func @step_becomes_zero
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @step_becomes_zero(%a: memref<?x?xf32>, %n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  scf.parallel (%i) = (%c0) to (%c3) step (%c3) {
    scf.parallel (%j) = (%n) to (%c3) step (%i) {
      memref.store %v, %a[%n, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}
