// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK: #[[MAP:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @dense
func.func @dense(%x: tensor<?x768xf32>, %w: tensor<2304x768xf32>, %b: tensor<2304xf32>) -> tensor<?x2304xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?x768xf32>
  %0 = tensor.empty() : tensor<768x2304xf32>
  // CHECK: %transposed = linalg.transpose ins(%{{.*}} : tensor<2304x768xf32>) outs(%{{.*}} : tensor<768x2304xf32>) permutation = [1, 0]
  %t = linalg.transpose ins(%w : tensor<2304x768xf32>) outs(%0 : tensor<768x2304xf32>) permutation = [1, 0]
  %1 = tensor.empty(%d) : tensor<?x2304xf32>
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  // CHECK: linalg.matmul ins(%{{.*}}, %transposed : tensor<?x768xf32>, tensor<768x2304xf32>) outs(%{{.*}} : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  // GENERIC: "linalg.matmul"(%{{.*}}, %{{.*}}, %{{.*}}) <{indexing_maps = [#map{{[0-9]*}}, #map{{[0-9]*}}, #map{{[0-9]*}}], operandSegmentSizes = array<i32: 2, 1>}> ({
  // GENERIC-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
  // GENERIC-NEXT: "arith.mulf"
  // GENERIC-NEXT: "arith.addf"
  %3 = linalg.matmul ins(%x, %t : tensor<?x768xf32>, tensor<768x2304xf32>) outs(%2 : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[MAP]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<2304xf32>) outs(%{{.*}} : tensor<?x2304xf32>) {
  // CHECK-NEXT: ^bb0(%in: f32, %out: f32):
  // CHECK-NEXT: linalg.yield %in : f32
  // CHECK-NEXT: } -> tensor<?x2304xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<2304xf32>) outs(%1 : tensor<?x2304xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x2304xf32>
  return %3 : tensor<?x2304xf32>
}

// CHECK-LABEL: func.func @conv
func.func @conv(%i: tensor<1x64x60x60xf32>, %k: tensor<64x64x3x3xf32>, %o: tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
  // CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(
  // GENERIC: {linalg.memoized_indexing_maps = [#map{{[0-9]*}}, #map{{[0-9]*}}, #map{{[0-9]*}}]}
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%i, %k : tensor<1x64x60x60xf32>, tensor<64x64x3x3xf32>) outs(%o : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  return %0 : tensor<1x64x56x56xf32>
}

// CHECK-LABEL: func.func @bmm
func.func @bmm(%a: tensor<192x?x64xf32>, %b: tensor<192x64x?xf32>, %c: tensor<192x?x?xf32>) -> tensor<192x?x?xf32> {
  // CHECK: linalg.batch_matmul ins(
  %0 = linalg.batch_matmul ins(%a, %b : tensor<192x?x64xf32>, tensor<192x64x?xf32>) outs(%c : tensor<192x?x?xf32>) -> tensor<192x?x?xf32>
  return %0 : tensor<192x?x?xf32>
}
