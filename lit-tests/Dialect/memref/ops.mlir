// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | ftuner-opt | FileCheck %s

// CHECK: #[[MAP:.*]] = affine_map<(d0, d1)[s0] -> (d0 * 16 + d1 + s0)>
// CHECK-LABEL: func.func @buffers
func.func @buffers(%n: index, %v: f32, %m: memref<4x16xf32, affine_map<(d0, d1)[s0] -> (d0 * 16 + d1 + s0)>>) {
  %c0 = arith.constant 0 : index
  // CHECK: %alloc = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x768xf32>
  %a = memref.alloc(%n) {alignment = 64 : i64} : memref<?x768xf32>
  // CHECK: memref.store %{{.*}}, %alloc[%{{.*}}, %{{.*}}] : memref<?x768xf32>
  memref.store %v, %a[%c0, %c0] : memref<?x768xf32>
  // CHECK: memref.load %alloc[%{{.*}}, %{{.*}}] : memref<?x768xf32>
  %x = memref.load %a[%c0, %c0] : memref<?x768xf32>
  // CHECK: %subview = memref.subview %alloc[0, 0] [4, 8] [1, 1] : memref<?x768xf32> to memref<4x8xf32, strided<[768, 1]>>
  %s = memref.subview %a[0, 0] [4, 8] [1, 1] : memref<?x768xf32> to memref<4x8xf32, strided<[768, 1]>>
  // CHECK: memref.dealloc %alloc : memref<?x768xf32>
  memref.dealloc %a : memref<?x768xf32>
  return
}
