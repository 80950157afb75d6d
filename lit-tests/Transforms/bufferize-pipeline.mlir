// The dense layer patched, lowered and bufferized: the register tiles read and write the
// output buffer in place (no copies), and upstream MLIR accepts the result. Five buffers:
// the transposed weights, the output, B's panels packed at run time (the branch taken when
// M reaches one mc block), and A's block copied contiguous (pack-a) in each branch.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(canonicalize,cse,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse,bufferize)" --mlir-pass-statistics -o %t 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: FileCheck %s < %t
// RUN: %mlir-opt %t > /dev/null
// REQUIRES: mlir-opt
// STATS: Bufferize
// STATS: (S) 5 num-allocs
// STATS: (S) 0 num-copies
// CHECK-LABEL: func.func @dense_dynamic(%arg0: memref<?x768xf32>, %arg1: memref<2304x768xf32>, %arg2: memref<2304xf32>) -> memref<?x2304xf32>
// CHECK-NOT: tensor.
// CHECK-NOT: memref.copy
// CHECK: "vector.transfer_read"(%{{.*}}) <{{.*}}> : (memref<6x64xf32, strided<[2304, 1], offset: ?>>, index, index, f32) -> vector<64xf32>
// CHECK: vector.fma
// CHECK: "vector.transfer_write"(%{{.*}}) <{{.*}}> : (vector<64xf32>, memref<6x64xf32, strided<[2304, 1], offset: ?>>, index, index) -> ()
// CHECK: return %{{.*}} : memref<?x2304xf32>
