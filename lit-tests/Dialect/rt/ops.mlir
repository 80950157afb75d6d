// rt.parallel_for round-trips, with and without arguments, nested or not, and in the
// generic form.
// RUN: ftuner-opt %s | FileCheck %s
// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | ftuner-opt | FileCheck %s

// CHECK-LABEL: func.func @caller
// CHECK: rt.parallel_for @body(%{{.*}}) args(%{{.*}}, %{{.*}} : memref<?xf32>, f32) {nested}
// CHECK: rt.parallel_for @empty(%{{.*}}){{$}}
func.func @caller(%n: index, %m: memref<?xf32>, %s: f32) {
  rt.parallel_for @body(%n) args(%m, %s : memref<?xf32>, f32) {nested}
  rt.parallel_for @empty(%n)
  return
}
func.func private @body(%lo: index, %hi: index, %m: memref<?xf32>, %s: f32) {
  return
}
func.func private @empty(%lo: index, %hi: index) {
  return
}
