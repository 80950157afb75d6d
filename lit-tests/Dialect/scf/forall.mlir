// scf.forall / scf.forall.in_parallel / tensor.parallel_insert_slice in upstream's custom
// syntax (read back by ftuner-opt and mlir-opt-22), and their canonicalization
// (crates/ftuner-dialects/src/scf/forall_canonicalize.rs).
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file | ftuner-opt --allow-unregistered-dialect --split-input-file | FileCheck %s --check-prefix=RT
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file --mlir-print-op-generic | ftuner-opt --allow-unregistered-dialect --split-input-file | FileCheck %s --check-prefix=RT
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file | %mlir-opt --allow-unregistered-dialect --split-input-file | FileCheck %s --check-prefix=RT
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file --canonicalize --cse | FileCheck %s
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file --canonicalize --cse | %mlir-opt --allow-unregistered-dialect --split-input-file -o /dev/null
// REQUIRES: mlir-opt

// RT-LABEL: func.func @rows
// RT: %[[R:.*]] = scf.forall (%[[I:.*]]) in (%{{.*}}) shared_outs(%[[O:.*]] = %{{.*}}) -> (tensor<?x8xf32>) {
// RT-NEXT: %[[V:.*]] = tensor.extract_slice
// RT-NEXT: scf.forall.in_parallel {
// RT-NEXT: tensor.parallel_insert_slice %[[V]] into %[[O]][%[[I]], 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<?x8xf32>
// RT-NEXT: }
// RT-NEXT: } {mapping = [#gpu.thread<x>]}
// CHECK-LABEL: func.func @rows
// CHECK: scf.forall (%{{.*}}) in (%{{.*}}) shared_outs
func.func @rows(%a: tensor<?x8xf32>, %t: tensor<?x8xf32>, %n: index) -> tensor<?x8xf32> {
  %r = scf.forall (%i) in (%n) shared_outs(%o = %t) -> (tensor<?x8xf32>) {
    %v = tensor.extract_slice %a[%i, 0] [1, 8] [1, 1] : tensor<?x8xf32> to tensor<1x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<?x8xf32>
    }
  } {mapping = [#gpu.thread<x>]}
  return %r : tensor<?x8xf32>
}

// -----

// Bounds as lists of values and constants; constants become static, and a loop whose
// lower bounds are 0 and steps 1 (static or constants, as upstream prints) prints as
// `in (...)`.
// RT-LABEL: func.func @bounds
// RT: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, 10) {
// RT-NEXT: "test.use"
// RT-NEXT: }
// RT-NEXT: scf.forall (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// RT-NEXT: }
// CHECK-LABEL: func.func @bounds
// CHECK-NOT: arith.constant
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]]) in (%arg0, 10) {
// CHECK-NEXT: "test.use"(%[[I]], %[[J]])
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @bounds(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%i, %j) = (%c0, 0) to (%n, 10) step (%c1, 1) {
    "test.use"(%i, %j) : (index, index) -> ()
  }
  scf.forall (%i) = (%n) to (%n) step (%n) {
  }
  return
}

// -----

// Every dimension of one iteration: the body runs in place, its parallel insert an
// insert_slice.
// CHECK-LABEL: func.func @one_iteration
// CHECK-NOT: scf.forall
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[R:.*]] = tensor.insert_slice %[[F]] into %{{.*}}[0, 0] [2, 3] [1, 1]
// CHECK: return %[[R]]
func.func @one_iteration(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %cst = arith.constant 0.0 : f32
  %r = scf.forall (%i, %j) = (%c0, %c0) to (%c1, %c1) step (%c8, %c8) shared_outs(%o = %t) -> (tensor<8x8xf32>) {
    %s = tensor.extract_slice %o[%i, %j] [2, 3] [1, 1] : tensor<8x8xf32> to tensor<2x3xf32>
    %f = linalg.fill ins(%cst : f32) outs(%s : tensor<2x3xf32>) -> tensor<2x3xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %f into %o[%i, %j] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<8x8xf32>
    }
  }
  return %r : tensor<8x8xf32>
}

// -----

// One of two dimensions has one iteration (it goes); a mapped loop keeps it, its variable
// the constant lower bound.
// CHECK-LABEL: func.func @one_of_two
// CHECK: scf.forall (%[[J:.*]]) = (0) to (16) step (8) shared_outs
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, %[[J]]] [8, 8] [1, 1]
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 16) step (8, 8) shared_outs
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, %{{.*}}] [8, 8] [1, 1]
// CHECK: {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
func.func @one_of_two(%t: tensor<8x8xf32>, %v: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %r = scf.forall (%i, %j) = (0, 0) to (1, 16) step (8, 8) shared_outs(%o = %t) -> (tensor<8x8xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[%i, %j] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<8x8xf32>
    }
  }
  %m = scf.forall (%i, %j) = (0, 0) to (1, 16) step (8, 8) shared_outs(%o = %t) -> (tensor<8x8xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[%i, %j] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<8x8xf32>
    }
  } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  return %r, %m : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A dimension of no iterations: the loop is its outputs.
// CHECK-LABEL: func.func @empty
// CHECK-NEXT: return %arg0
func.func @empty(%t: tensor<8x8xf32>, %v: tensor<8x8xf32>, %n: index) -> tensor<8x8xf32> {
  %r = scf.forall (%i, %j) = (0, %n) to (1, %n) step (8, 8) shared_outs(%o = %t) -> (tensor<8x8xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[%i, %j] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<8x8xf32>
    }
  }
  return %r : tensor<8x8xf32>
}

// -----

// The dim of a result is the dim of its output; an unused result goes with its inserts,
// and then the whole loop.
// CHECK-LABEL: func.func @dim_of_result
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[D:.*]] = tensor.dim %arg1, %[[C1]]
// CHECK-NEXT: return %[[D]]
func.func @dim_of_result(%a: tensor<1x5xf32>, %t: tensor<?x?xf32>, %n: index) -> index {
  %c1 = arith.constant 1 : index
  %r = scf.forall (%i) in (%n) shared_outs(%o = %t) -> (tensor<?x?xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %a into %o[%i, 0] [1, 5] [1, 1] : tensor<1x5xf32> into tensor<?x?xf32>
    }
  }
  %d = tensor.dim %r, %c1 : tensor<?x?xf32>
  return %d : index
}

// -----

// An output cast that forgets static sizes is folded into the loop; one that adds them
// is not.
// CHECK-LABEL: func.func @cast_output
// CHECK-NOT: tensor.cast
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = %arg1) -> (tensor<2xi32>)
// CHECK-LABEL: func.func @cast_output_kept
// CHECK: tensor.cast %arg1 : tensor<?xi32> to tensor<2xi32>
// CHECK: tensor.cast %{{.*}} : tensor<2xi32> to tensor<?xi32>
func.func @cast_output(%v: tensor<1xi32>, %out: tensor<2xi32>) -> tensor<2xi32> {
  %c = tensor.cast %out : tensor<2xi32> to tensor<?xi32>
  %r = scf.forall (%i) in (2) shared_outs(%o = %c) -> tensor<?xi32> {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[%i] [1] [1] : tensor<1xi32> into tensor<?xi32>
    }
  }
  %b = tensor.cast %r : tensor<?xi32> to tensor<2xi32>
  return %b : tensor<2xi32>
}
func.func @cast_output_kept(%v: tensor<1xi32>, %out: tensor<?xi32>) -> tensor<?xi32> {
  %c = tensor.cast %out : tensor<?xi32> to tensor<2xi32>
  %r = scf.forall (%i) in (2) shared_outs(%o = %c) -> tensor<2xi32> {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[%i] [1] [1] : tensor<1xi32> into tensor<2xi32>
    }
  }
  %b = tensor.cast %r : tensor<2xi32> to tensor<?xi32>
  return %b : tensor<?xi32>
}

// -----

// Trip counts near the i64 limits are exact: (-2) to (2^63 - 1) step (2^63 - 1) runs twice
// (a wrapping count said none and removed the loop; the canonicalize fuzz target's
// overflow check found it).
// CHECK-LABEL: func.func @huge_bounds
// CHECK: scf.forall (%{{.*}}) = (-2) to (9223372036854775807) step (9223372036854775807)
func.func @huge_bounds(%t: tensor<4xf32>, %v: tensor<1xf32>) -> tensor<4xf32> {
  %r = scf.forall (%i) = (-2) to (9223372036854775807) step (9223372036854775807) shared_outs(%o = %t) -> (tensor<4xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  }
  return %r : tensor<4xf32>
}

// -----

// A constant bound of -2^63 stays an operand: in a static list that value marks a dynamic
// entry (folding it misread the operands; the canonicalize fuzz target found it).
// CHECK-LABEL: func.func @min_bound
// CHECK: %[[M:.*]] = arith.constant -9223372036854775808 : index
// CHECK: scf.forall (%{{.*}}) = (%[[M]]) to (1) step (8)
func.func @min_bound(%t: tensor<4xf32>, %v: tensor<1xf32>) -> tensor<4xf32> {
  %m = arith.constant -9223372036854775808 : index
  %c1 = arith.constant 1 : index
  %r = scf.forall (%i) = (%m) to (%c1) step (8) shared_outs(%o = %t) -> (tensor<4xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[0] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  }
  return %r : tensor<4xf32>
}
