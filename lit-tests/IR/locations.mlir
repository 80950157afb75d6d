// RUN: ftuner-opt %s --mlir-print-debuginfo | FileCheck %s
// CHECK: func.func @f(%arg0: f32 loc("x.py":1:2)) -> f32 {
// CHECK: arith.addf %arg0, %arg0 : f32 loc("layer"("model.py":10:4))
// CHECK: return %{{.*}} : f32 loc(fused["a.py":1:1, callsite("f" at "g.py":2:3)])
// CHECK: loc(unknown)
func.func @f(%arg0: f32 loc("x.py":1:2)) -> f32 {
  %0 = arith.addf %arg0, %arg0 : f32 loc("layer"("model.py":10:4))
  return %0 : f32 loc(fused["a.py":1:1, callsite("f" at "g.py":2:3)])
} loc(unknown)

// Without the flag, locations are kept but not printed.
// RUN: ftuner-opt %s | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT: loc(
