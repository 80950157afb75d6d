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
