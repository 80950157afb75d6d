// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s

// CHECK-LABEL: func.func private @decl(i32, f32) -> i64
func.func private @decl(i32, f32) -> i64

// CHECK-LABEL: func.func @multi(%arg0: f32 {foo.bar}, %arg1: index) -> (f32, index)
func.func @multi(%arg0: f32 {foo.bar}, %arg1: index) -> (f32, index) {
  // CHECK: return %arg0, %arg1 : f32, index
  return %arg0, %arg1 : f32, index
}

// CHECK-LABEL: func.func @calls
func.func @calls(%a: f32, %b: index) -> f32 {
  // CHECK: %[[R:.*]]:2 = call @multi(%{{.*}}, %{{.*}}) : (f32, index) -> (f32, index)
  %0:2 = func.call @multi(%a, %b) : (f32, index) -> (f32, index)
  // CHECK: return %[[R]]#0 : f32
  return %0#0 : f32
}
