// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | ftuner-opt | FileCheck %s

// CHECK-LABEL: func.func @tensor_ops
func.func @tensor_ops(%t: tensor<1x?x768xf32>, %i: index, %s: i64) -> tensor<?x768xf32> {
  %c1 = arith.constant 1 : index
  // CHECK: %dim = tensor.dim %{{.*}}, %{{.*}} : tensor<1x?x768xf32>
  %d = tensor.dim %t, %c1 : tensor<1x?x768xf32>
  // CHECK: %collapsed = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x?x768xf32> into tensor<?x768xf32>
  %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<1x?x768xf32> into tensor<?x768xf32>
  // CHECK: %expanded = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [1, %dim, 768] : tensor<?x768xf32> into tensor<1x?x768xf32>
  %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [1, %d, 768] : tensor<?x768xf32> into tensor<1x?x768xf32>
  // CHECK: tensor.empty(%dim) : tensor<?x768xf32>
  %0 = tensor.empty(%d) : tensor<?x768xf32>
  // CHECK: %extracted = tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x?x768xf32>
  %x = tensor.extract %e[%i, %i, %i] : tensor<1x?x768xf32>
  // CHECK: %from_elements = tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xi64>
  %f = tensor.from_elements %s, %s : tensor<2xi64>
  // CHECK: %reshape = tensor.reshape %{{.*}}(%from_elements) : (tensor<?x768xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %r = tensor.reshape %c(%f) : (tensor<?x768xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  // CHECK: %extracted_slice = tensor.extract_slice %{{.*}}[0, %{{.*}}] [4, 8] [1, 1] : tensor<?x768xf32> to tensor<4x8xf32>
  %sl = tensor.extract_slice %c[0, %i] [4, 8] [1, 1] : tensor<?x768xf32> to tensor<4x8xf32>
  // CHECK: %inserted_slice = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<?x768xf32>
  %ins = tensor.insert_slice %sl into %0[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<?x768xf32>
  // CHECK: %padded = tensor.pad %{{.*}} low[0, 1] high[0, 1] {
  // CHECK: tensor.yield %{{.*}} : f32
  // CHECK: } : tensor<4x8xf32> to tensor<4x10xf32>
  %p = tensor.pad %sl low[0, 1] high[0, 1] {
  ^bb0(%a: index, %b: index):
    tensor.yield %x : f32
  } : tensor<4x8xf32> to tensor<4x10xf32>
  // CHECK: %cast = tensor.cast %{{.*}} : tensor<4x10xf32> to tensor<?x?xf32>
  %cs = tensor.cast %p : tensor<4x10xf32> to tensor<?x?xf32>
  return %ins : tensor<?x768xf32>
}
