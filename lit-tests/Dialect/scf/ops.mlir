// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | ftuner-opt | FileCheck %s

// CHECK-LABEL: func.func @loops
func.func @loops(%n: index, %x: f32, %c: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[R:.*]] = scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (f32) {
    // CHECK: %[[S:.*]] = arith.addf %[[ACC]], %{{.*}} : f32
    %s = arith.addf %acc, %x : f32
    // CHECK: scf.yield %[[S]] : f32
    scf.yield %s : f32
  }
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
  // CHECK-NEXT: }
  scf.for %i = %c0 to %n step %c1 {
  }
  // CHECK: scf.if %{{.*}} -> (f32) {
  // CHECK: } else {
  %v = scf.if %c -> (f32) {
    scf.yield %r : f32
  } else {
    scf.yield %x : f32
  }
  return %v : f32
}
