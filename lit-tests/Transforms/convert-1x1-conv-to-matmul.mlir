// convert-1x1-conv-to-matmul: an NCHW conv with a 1x1 filter and unit strides, static
// past the batch, is an scf.for over the images of a matmul (filter F x C) x (image
// C x HW), on collapse_shape views; a filled init is filled per image. Strided, 3x3,
// dynamic-image and small-image convs are left alone (the last unless min-positions
// allows it). mlir-opt-22 accepts the result; ftuner-run computes what the conv does.
// RUN: ftuner-opt %s --split-input-file --convert-1x1-conv-to-matmul | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul{min-positions=1})' | FileCheck %s --check-prefix=SMALL
// RUN: ftuner-opt %s --split-input-file --convert-1x1-conv-to-matmul --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// RUN: ftuner-run %s --entry=filled --shape 0=3x8x16x12 --check --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul,ftuner-cpu-pipeline{target=host})' | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @filled(
// CHECK: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<16x8x1x1xf32> into tensor<16x8xf32>
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<?x8x16x12xf32> into tensor<?x8x192xf32>
// CHECK: %[[O:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<?x16x16x12xf32> into tensor<?x16x192xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[O]])
// CHECK: %[[XI:.*]] = tensor.extract_slice %[[X]][%[[I]], 0, 0] [1, 8, 192] [1, 1, 1] : tensor<?x8x192xf32> to tensor<8x192xf32>
// CHECK: %[[OI:.*]] = tensor.extract_slice %[[ACC]][%[[I]], 0, 0] [1, 16, 192] [1, 1, 1]
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OI]] : tensor<16x192xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[W]], %[[XI]] : tensor<16x8xf32>, tensor<8x192xf32>) outs(%[[F]] : tensor<16x192xf32>)
// CHECK: tensor.insert_slice %[[M]] into %[[ACC]][%[[I]], 0, 0] [1, 16, 192] [1, 1, 1]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [%{{.*}}, 16, 16, 12] : tensor<?x16x192xf32> into tensor<?x16x16x12xf32>
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// EXEC: check: ok
func.func @filled(%x: tensor<?x8x16x12xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<?x16x16x12xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x16x12xf32>
  %z = arith.constant 0.5 : f32
  %e = tensor.empty(%n) : tensor<?x16x16x12xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x16x16x12xf32>) -> tensor<?x16x16x12xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x8x16x12xf32>, tensor<16x8x1x1xf32>) outs(%i : tensor<?x16x16x12xf32>) -> tensor<?x16x16x12xf32>
  return %r : tensor<?x16x16x12xf32>
}

// -----

// An init that is not a fill is accumulated onto, one image's slice at a time.
// CHECK-LABEL: func.func @accumulates(
// CHECK: scf.for
// CHECK-NOT: linalg.fill
// CHECK: linalg.matmul
func.func @accumulates(%x: tensor<?x8x16x16xf32>, %w: tensor<4x8x1x1xf32>, %o: tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32> {
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<?x8x16x16xf32>, tensor<4x8x1x1xf32>) outs(%o : tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
  return %r : tensor<?x4x16x16xf32>
}

// -----

// Left alone: a stride of 2, a 3x3 filter, a dynamic image, and (by default) an image
// of fewer than 128 positions.
// CHECK-LABEL: func.func @left(
// CHECK-NOT: linalg.matmul
// CHECK-COUNT-4: linalg.conv_2d_nchw_fchw
// SMALL-LABEL: func.func @left(
// SMALL-COUNT-3: linalg.conv_2d_nchw_fchw
// SMALL: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x49xf32>)
func.func @left(%x: tensor<?x8x16x16xf32>, %w: tensor<4x8x1x1xf32>, %o: tensor<?x4x8x8xf32>,
                %w3: tensor<4x8x3x3xf32>, %o3: tensor<?x4x14x14xf32>,
                %xd: tensor<?x8x?x?xf32>, %od: tensor<?x4x?x?xf32>,
                %xs: tensor<?x8x7x7xf32>, %os: tensor<?x4x7x7xf32>)
    -> (tensor<?x4x8x8xf32>, tensor<?x4x14x14xf32>, tensor<?x4x?x?xf32>, tensor<?x4x7x7xf32>) {
  %a = linalg.conv_2d_nchw_fchw {strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<?x8x16x16xf32>, tensor<4x8x1x1xf32>) outs(%o : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %b = linalg.conv_2d_nchw_fchw ins(%x, %w3 : tensor<?x8x16x16xf32>, tensor<4x8x3x3xf32>) outs(%o3 : tensor<?x4x14x14xf32>) -> tensor<?x4x14x14xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%xd, %w : tensor<?x8x?x?xf32>, tensor<4x8x1x1xf32>) outs(%od : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %d = linalg.conv_2d_nchw_fchw ins(%xs, %w : tensor<?x8x7x7xf32>, tensor<4x8x1x1xf32>) outs(%os : tensor<?x4x7x7xf32>) -> tensor<?x4x7x7xf32>
  return %a, %b, %c, %d : tensor<?x4x8x8xf32>, tensor<?x4x14x14xf32>, tensor<?x4x?x?xf32>, tensor<?x4x7x7xf32>
}
