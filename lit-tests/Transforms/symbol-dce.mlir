// RUN: ftuner-opt %s --symbol-dce | FileCheck %s

// CHECK-NOT: func.func private @dead
// CHECK: func.func private @used
// CHECK: func.func @public
// CHECK-NOT: @dead_chain
func.func private @dead() {
  return
}
func.func private @dead_chain() {
  func.call @dead() : () -> ()
  return
}
func.func private @used() {
  return
}
func.func @public() {
  func.call @used() : () -> ()
  return
}
