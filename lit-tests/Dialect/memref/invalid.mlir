// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @alloc_dims() {
  // expected-error@+1 {{'memref.alloc' op dimension operand count does not equal memref dynamic dimension count}}
  %0 = memref.alloc() : memref<?xf32>
  return
}

// -----

func.func @load_rank(%m: memref<4x4xf32>, %i: index) {
  // expected-error@+1 {{'memref.load' op incorrect number of indices for load, expected 2, but got 1}}
  %0 = memref.load %m[%i] : memref<4x4xf32>
  return
}

// -----

func.func @subview_oob(%m: memref<8x16xf32>) {
  // expected-error@+1 {{'memref.subview' op slice of dim 1 (offset 8, size 9, stride 1) leaves the dim of size 16}}
  %0 = memref.subview %m[0, 8] [4, 9] [1, 1] : memref<8x16xf32> to memref<4x9xf32, strided<[16, 1], offset: 8>>
  return
}
