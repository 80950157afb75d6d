// RUN: ftuner-opt %s --allow-unregistered-dialect | ftuner-opt --allow-unregistered-dialect | FileCheck %s
// CHECK: "test.types"() : () -> (tensor<?x768xf32>, tensor<*xbf16>, memref<?x4xf32, strided<[4, 1], offset: ?>, 3>, vector<4x[8]xf16>, complex<f64>, tuple<i1, index>, !llvm.ptr, (i32) -> (), none, ui8, si16, tensor<f32>)
"test.types"() : () -> (tensor<?x768xf32>, tensor<*xbf16>, memref<?x4xf32, strided<[4, 1], offset: ?>, 3>, vector<4x[8]xf16>, complex<f64>, tuple<i1, index>, !llvm.ptr, (i32) -> (), none, ui8, si16, tensor<f32>)
