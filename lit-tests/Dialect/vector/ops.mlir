// RUN: ftuner-opt %s --allow-unregistered-dialect | ftuner-opt --allow-unregistered-dialect | FileCheck %s

// CHECK-LABEL: func.func @vectors
func.func @vectors(%m: memref<?x?xf32>, %i: index, %s: f32) {
  // CHECK: %[[V:.*]] = vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf32>, vector<16xf32>
  %v = vector.load %m[%i, %i] : memref<?x?xf32>, vector<16xf32>
  // CHECK: %[[B:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
  %b = vector.broadcast %s : f32 to vector<16xf32>
  // CHECK: %[[F:.*]] = vector.fma %[[V]], %[[B]], %[[V]] : vector<16xf32>
  %f = vector.fma %v, %b, %v : vector<16xf32>
  // CHECK: vector.store %[[F]], %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf32>, vector<16xf32>
  vector.store %f, %m[%i, %i] : memref<?x?xf32>, vector<16xf32>
  // CHECK: vector<[4]xf32>
  %sc = "test.scalable"() : () -> vector<[4]xf32>
  return
}
