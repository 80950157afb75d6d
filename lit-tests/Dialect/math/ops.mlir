// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s

// CHECK-LABEL: func.func @math
func.func @math(%x: f32, %n: i32, %t: tensor<4xf32>) -> f32 {
  // CHECK: math.rsqrt %{{.*}} : f32
  %0 = math.rsqrt %x : f32
  // CHECK: math.erf %{{.*}} fastmath<afn> : f32
  %1 = math.erf %0 fastmath<afn> : f32
  // CHECK: math.fpowi %{{.*}}, %{{.*}} : f32, i32
  %2 = math.fpowi %1, %n : f32, i32
  // CHECK: math.tanh %{{.*}} : tensor<4xf32>
  %3 = math.tanh %t : tensor<4xf32>
  // CHECK: math.powf %{{.*}}, %{{.*}} : f32
  %4 = math.powf %2, %x : f32
  return %4 : f32
}
