// Two gathers that differ only in where they come from (as a model's layers do) are one
// outlined function: the bounds check convert-linalg-to-loops gives a load the body
// indexes itself carries the location as its op's location, not in its message, so the
// nests stay structurally identical. convert-to-llvm names the location in the failure
// message (of the first of the identical nests, the one kept).
// RUN: ftuner-opt %s --convert-linalg-to-loops --outline-loop-nests --mlir-pass-statistics 2>&1 | FileCheck %s
// RUN: ftuner-opt %s --convert-linalg-to-loops --outline-loop-nests --convert-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @two_gathers(
// CHECK: call @two_gathers_nest0(
// CHECK: call @two_gathers_nest0(
// CHECK: func.func private @two_gathers_nest0(
// CHECK: cf.assert %{{.*}}, "index out of bounds in a structured op body"
// CHECK-NOT: func.func private
// CHECK: 1 num-outlined - Loop nests outlined
// CHECK-NEXT: 1 num-deduplicated
// LLVM: "{{.*}}outline-loop-nests-checked.mlir:[[@LINE+3]]:{{[0-9]+}}: index out of bounds in a structured op body\00"
#id = affine_map<(d0) -> (d0)>
func.func @two_gathers(%idx: memref<?xindex>, %table: memref<8xf32>, %o1: memref<?xf32>, %o2: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%idx : memref<?xindex>) outs(%o1 : memref<?xf32>) {
  ^bb0(%i: index, %out: f32):
    %v = memref.load %table[%i] : memref<8xf32>
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%idx : memref<?xindex>) outs(%o2 : memref<?xf32>) {
  ^bb0(%i: index, %out: f32):
    %v = memref.load %table[%i] : memref<8xf32>
    linalg.yield %v : f32
  }
  return
}
