// A dialect's conversion patterns serve its ops that have none of their own, unregistered
// ones included: `vector.splat` (an upstream op ftuner does not register) converts through
// the vector dialect's patterns (ConvertToLLVMPatternInterface is a dialect interface), as
// a broadcast; an op of a dialect with no patterns is a located error.
// RUN: ftuner-opt --allow-unregistered-dialect --convert-to-llvm %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-NOT: vector.splat
// CHECK: sym_name = "splat"
// CHECK: "llvm.insertelement"
// CHECK: "llvm.shufflevector"
// CHECK-SAME: mask = array<i32: 0, 0, 0, 0>
// CHECK-NOT: vector.splat
func.func @splat(%x: f32) -> vector<4xf32> {
  %v = "vector.splat"(%x) : (f32) -> vector<4xf32>
  return %v : vector<4xf32>
}

// -----

func.func @unknown(%x: f32) -> f32 {
  // expected-error @+1 {{'mydialect.op' op cannot be converted to the llvm dialect}}
  %v = "mydialect.op"(%x) : (f32) -> f32
  return %v : f32
}
