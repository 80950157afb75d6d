// convert-1x1-conv-to-matmul: an NCHW conv with a 1x1 filter, static past the batch, is
// an scf.for over the images of a matmul (filter F x C) x (image C x HW), on
// collapse_shape views; a filled init is filled per image; a strided conv first copies the
// positions it reads into a contiguous image, and a conv of at most im2col-max-k k steps
// (C x KH x KW: a stem's 3 channels, 3x3) copies its windows into an im2col matrix. Other
// 3x3, dynamic-image and small-image convs are left alone (the last unless min-positions
// allows it). The conv's one elementwise consumer moves into the loop when its operands
// are read per channel or per element, and patch-ukernels makes it the matmul's epilogue.
// mlir-opt-22 accepts the result; ftuner-run computes what the conv does.
// RUN: ftuner-opt %s --split-input-file --convert-1x1-conv-to-matmul | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul{min-positions=1})' | FileCheck %s --check-prefix=SMALL
// RUN: ftuner-opt %s --split-input-file --convert-1x1-conv-to-matmul --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul,patch-ukernels{target=host})' | FileCheck %s --check-prefix=PATCH
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul{fuse-consumers=false})' | FileCheck %s --check-prefix=NOFUSE
// RUN: ftuner-run %s --entry=bn_relu_residual --shape 0=3x8x16x12 --shape 4=3x16x16x12 --check --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul,ftuner-cpu-pipeline{target=host})' | FileCheck %s --check-prefix=EXEC-BN
// RUN: ftuner-run %s --entry=strided --shape 0=3x8x31x32 --check --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul,ftuner-cpu-pipeline{target=host})' | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=strided --shape 0=2x8x31x32 --check --threads 2 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=crop --shape 0=2x8x13x14 --shape 2=2x4x12x12 --check --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul,ftuner-cpu-pipeline{target=host})' | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul{strided=false})' | FileCheck %s --check-prefix=NOSTRIDE
// RUN: ftuner-run %s --entry=stem --shape 0=2x3x35x23 --check --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul,ftuner-cpu-pipeline{target=host})' | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=stem --shape 0=3x3x35x23 --check --threads 2 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul{im2col-max-k=26})' | FileCheck %s --check-prefix=NOIM2COL
// RUN: ftuner-run %s --entry=filled --shape 0=3x8x16x12 --check --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul,ftuner-cpu-pipeline{target=host})' | FileCheck %s --check-prefix=EXEC
// Two threads: 3 images (the caller runs them, each image's tiles on the pool) and 4 (the
// pool splits the images), with the epilogue and the residual.
// RUN: ftuner-run %s --entry=bn_relu_residual --shape 0=3x8x16x12 --shape 4=3x16x16x12 --check --threads 2 | FileCheck %s --check-prefix=EXEC-BN
// RUN: ftuner-run %s --entry=bn_relu_residual --shape 0=4x8x16x12 --shape 4=4x16x16x12 --check --threads 2 | FileCheck %s --check-prefix=EXEC-BN

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
// A dynamic batch: the image loop is marked for the thread pool (convert-to-llvm's nested
// rule then splits the images or each image's tile loops, whichever divides evenly).
// CHECK: } {ftuner.parallel}
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [%{{.*}}, 16, 16, 12] : tensor<?x16x192xf32> into tensor<?x16x16x12xf32>
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// EXEC: check: ok (every result matches
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
// The loop runs over the input's images: an output with another batch size is a failed
// run-time check (found by the driver fuzzer: 0 input images and 17 output ones ran and
// returned the init; the conv's own check was gone with it).
// RUN: not ftuner-run %s --entry=accumulates --shape 0=0x8x16x16 --shape 2=17x4x16x16 --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul,ftuner-cpu-pipeline{target=host})' 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: run-time check failed: 'linalg.conv_2d_nchw_fchw' op at {{.*}}: the input and the output have different batch sizes
// RUN: ftuner-run %s --entry=accumulates --shape 0=3x8x16x16 --shape 2=3x4x16x16 --check --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul,ftuner-cpu-pipeline{target=host})' | FileCheck %s --check-prefix=EXEC
// CHECK-LABEL: func.func @accumulates(
// CHECK: cf.assert
// CHECK: scf.for
// CHECK-NOT: linalg.fill
// CHECK: linalg.matmul
func.func @accumulates(%x: tensor<?x8x16x16xf32>, %w: tensor<4x8x1x1xf32>, %o: tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32> {
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<?x8x16x16xf32>, tensor<4x8x1x1xf32>) outs(%o : tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
  return %r : tensor<?x4x16x16xf32>
}

// -----

// Left alone: a 3x3 filter of 72 k steps, a dynamic image, and (by default) images of fewer than 128
// output positions (the strided one's 8x8, the 7x7).
// CHECK-LABEL: func.func @left(
// CHECK-NOT: linalg.matmul
// CHECK-COUNT-4: linalg.conv_2d_nchw_fchw
// SMALL-LABEL: func.func @left(
// SMALL: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x64xf32>)
// SMALL-COUNT-2: linalg.conv_2d_nchw_fchw
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

// -----

// BatchNorm (per-channel operands, one of them viewed after the conv), a residual add and
// ReLU: the consumer moves into the loop, over the image's 16 x 192, and becomes the
// matmul's epilogue.
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1) -> (d0, 0, 0)>
// CHECK-LABEL: func.func @bn_relu_residual(
// CHECK: %[[R:.*]] = tensor.collapse_shape %arg4 {{\[}}[0], [1], [2, 3]] : tensor<?x16x16x12xf32> into tensor<?x16x192xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] =
// CHECK: %[[M:.*]] = linalg.matmul
// CHECK: %[[RI:.*]] = tensor.extract_slice %[[R]][%[[I]], 0, 0] [1, 16, 192] [1, 1, 1]
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[CH]], #[[CH]], #[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[M]], %{{.*}}, %{{.*}}, %[[RI]] : tensor<16x192xf32>, tensor<16x1x1xf32>, tensor<16x1x1xf32>, tensor<16x192xf32>) outs(%{{.*}} : tensor<16x192xf32>)
// CHECK: arith.maximumf
// CHECK: tensor.insert_slice %[[G]] into %[[ACC]][%[[I]], 0, 0]
// CHECK: %[[E:.*]] = tensor.expand_shape
// CHECK-NOT: linalg.generic
// CHECK: return %[[E]]
// PATCH-LABEL: func.func @bn_relu_residual(
// PATCH: ukernel.patch "matmul"
// PATCH: epilogue(ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<16x1x1xf32>, tensor<16x1x1xf32>, tensor<16x192xf32>)
// PATCH-NOT: linalg.generic
// PATCH: return
// NOFUSE-LABEL: func.func @bn_relu_residual(
// NOFUSE: scf.for
// NOFUSE: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// EXEC-BN: check: ok (every result matches
func.func @bn_relu_residual(%x: tensor<?x8x16x12xf32>, %w: tensor<16x8x1x1xf32>, %mean: tensor<16x1x1xf32>,
                            %scale: tensor<16xf32>, %res: tensor<?x16x16x12xf32>) -> tensor<?x16x16x12xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x16x12xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x16x16x12xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x16x16x12xf32>) -> tensor<?x16x16x12xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x8x16x12xf32>, tensor<16x8x1x1xf32>) outs(%i : tensor<?x16x16x12xf32>) -> tensor<?x16x16x12xf32>
  %s3 = tensor.expand_shape %scale [[0, 1, 2]] output_shape [16, 1, 1] : tensor<16xf32> into tensor<16x1x1xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r, %mean, %s3, %res : tensor<?x16x16x12xf32>, tensor<16x1x1xf32>, tensor<16x1x1xf32>, tensor<?x16x16x12xf32>) outs(%e : tensor<?x16x16x12xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32, %q: f32, %o: f32):
    %0 = arith.subf %a, %m : f32
    %1 = arith.mulf %0, %s : f32
    %2 = arith.addf %1, %q : f32
    %3 = arith.maximumf %2, %z : f32
    linalg.yield %3 : f32
  } -> tensor<?x16x16x12xf32>
  return %g : tensor<?x16x16x12xf32>
}

// -----

// Consumers that stay after the loop: one reading an operand per row (not per channel or
// element), one using linalg.index.
// CHECK-LABEL: func.func @consumers_left(
// CHECK: scf.for
// CHECK: linalg.matmul
// CHECK: scf.yield
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK: scf.for
// CHECK: linalg.matmul
// CHECK: scf.yield
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK: linalg.index
func.func @consumers_left(%x: tensor<?x8x16x12xf32>, %w: tensor<16x8x1x1xf32>, %o: tensor<?x16x16x12xf32>,
                          %rows: tensor<16xf32>) -> (tensor<?x16x16x12xf32>, tensor<?x16x16x12xf32>) {
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<?x8x16x12xf32>, tensor<16x8x1x1xf32>) outs(%o : tensor<?x16x16x12xf32>) -> tensor<?x16x16x12xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r, %rows : tensor<?x16x16x12xf32>, tensor<16xf32>) outs(%o : tensor<?x16x16x12xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<?x16x16x12xf32>
  %r2 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<?x8x16x12xf32>, tensor<16x8x1x1xf32>) outs(%o : tensor<?x16x16x12xf32>) -> tensor<?x16x16x12xf32>
  %g2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r2 : tensor<?x16x16x12xf32>) outs(%o : tensor<?x16x16x12xf32>) {
  ^bb0(%a: f32, %c: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %0 = arith.addf %a, %f : f32
    linalg.yield %0 : f32
  } -> tensor<?x16x16x12xf32>
  return %g, %g2 : tensor<?x16x16x12xf32>, tensor<?x16x16x12xf32>
}

// -----

// Stride 2 (rows) and 3 (columns) on a 31 x 32 image, with a BatchNorm-like consumer: in
// the loop, each image's 16 x 11 positions read are copied into a contiguous 8 x 176 (a
// sixth of it) for its matmul, consumer and all as at unit strides.
// CHECK: #[[SUB:.*]] = affine_map<(d0, d1, d2) -> (d0, d1 * 2, d2 * 3)>
// CHECK-LABEL: func.func @strided(
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK: %[[IMG:.*]] = tensor.extract_slice %arg0[%[[I]], 0, 0, 0] [1, 8, 31, 31] [1, 1, 1, 1] : tensor<?x8x31x32xf32> to tensor<8x31x31xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x16x11xf32>
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[SUB]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[IMG]] : tensor<8x31x31xf32>) outs(%[[E]] : tensor<8x16x11xf32>)
// CHECK: %[[XI:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1, 2]] : tensor<8x16x11xf32> into tensor<8x176xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %[[XI]] : tensor<16x8xf32>, tensor<8x176xf32>)
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// NOSTRIDE-LABEL: func.func @strided(
// NOSTRIDE-NOT: linalg.matmul
// NOSTRIDE: linalg.conv_2d_nchw_fchw
func.func @strided(%x: tensor<?x8x31x32xf32>, %w: tensor<16x8x1x1xf32>, %scale: tensor<16x1x1xf32>) -> tensor<?x16x16x11xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x31x32xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x16x16x11xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x16x16x11xf32>) -> tensor<?x16x16x11xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<[2, 3]> : vector<2xi64>} ins(%x, %w : tensor<?x8x31x32xf32>, tensor<16x8x1x1xf32>) outs(%i : tensor<?x16x16x11xf32>) -> tensor<?x16x16x11xf32>
  %e2 = tensor.empty(%n) : tensor<?x16x16x11xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %scale : tensor<?x16x16x11xf32>, tensor<16x1x1xf32>) outs(%e2 : tensor<?x16x16x11xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %p = arith.maximumf %m, %z : f32
    linalg.yield %p : f32
  } -> tensor<?x16x16x11xf32>
  return %s : tensor<?x16x16x11xf32>
}

// -----

// Unit strides on an image larger than the output (a conv reading its top-left 12 x 12 of
// 13 x 14, into an init it accumulates on): the positions read are copied per image too.
// CHECK-LABEL: func.func @crop(
// CHECK: tensor.extract_slice %arg0[%{{.*}}, 0, 0, 0] [1, 8, 12, 12] [1, 1, 1, 1] : tensor<?x8x13x14xf32> to tensor<8x12x12xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x12x12xf32>) outs(%{{.*}} : tensor<8x12x12xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x144xf32>)
func.func @crop(%x: tensor<?x8x13x14xf32>, %w: tensor<4x8x1x1xf32>, %o: tensor<?x4x12x12xf32>) -> tensor<?x4x12x12xf32> {
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<?x8x13x14xf32>, tensor<4x8x1x1xf32>) outs(%o : tensor<?x4x12x12xf32>) -> tensor<?x4x12x12xf32>
  return %r : tensor<?x4x12x12xf32>
}

// -----

// A static batch: the image loop stays serial (each image's tile loops take the pool; a
// marked static loop would take it whatever its count).  Its views keep the static batch (upstream's
// verifier, in the mlir-opt RUN above, rejects a static dim collapsed into a dynamic one).
// RUN: ftuner-run %s --entry=static_batch --check --threads 2 --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul,ftuner-cpu-pipeline{target=host})' | FileCheck %s --check-prefix=EXEC
// CHECK-LABEL: func.func @static_batch(
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<3x8x16x12xf32> into tensor<3x8x192xf32>
// CHECK: linalg.matmul
// CHECK-NOT: ftuner.parallel
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [3, 16, 16, 12] : tensor<3x16x192xf32> into tensor<3x16x16x12xf32>
// CHECK: return
func.func @static_batch(%x: tensor<3x8x16x12xf32>, %w: tensor<16x8x1x1xf32>, %o: tensor<3x16x16x12xf32>) -> tensor<3x16x16x12xf32> {
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<3x8x16x12xf32>, tensor<16x8x1x1xf32>) outs(%o : tensor<3x16x16x12xf32>) -> tensor<3x16x16x12xf32>
  return %r : tensor<3x16x16x12xf32>
}

// -----

// A stem (3 channels, 3x3: 27 k steps), stride 2 and dilation 2 along H: each image's
// windows x[c, 2i + 2u, j + v] are copied into a 27 x (OH*OW) im2col matrix (its k order
// the filter's C x KH x KW) for the matmul, BatchNorm and ReLU6 after it as before.
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3 * 2 + d1 * 2, d4 + d2)>
// CHECK-LABEL: func.func @stem(
// CHECK: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<8x3x3x3xf32> into tensor<8x27xf32>
// CHECK: scf.for
// CHECK: %[[IMG:.*]] = tensor.extract_slice %arg0[%{{.*}}, 0, 0, 0] [1, 3, 33, 23] [1, 1, 1, 1] : tensor<?x3x35x23xf32> to tensor<3x33x23xf32>
// CHECK: %[[WINS:.*]] = linalg.generic {indexing_maps = [#[[WIN]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[IMG]] : tensor<3x33x23xf32>) outs(%{{.*}} : tensor<3x3x3x15x21xf32>)
// CHECK: %[[COLS:.*]] = tensor.collapse_shape %[[WINS]] {{\[}}[0, 1, 2], [3, 4]] : tensor<3x3x3x15x21xf32> into tensor<27x315xf32>
// CHECK: linalg.matmul ins(%[[W]], %[[COLS]] : tensor<8x27xf32>, tensor<27x315xf32>)
// CHECK: linalg.generic
// CHECK: } {ftuner.parallel}
// NOIM2COL-LABEL: func.func @stem(
// NOIM2COL-NOT: linalg.matmul
// NOIM2COL: linalg.conv_2d_nchw_fchw
func.func @stem(%x: tensor<?x3x35x23xf32>, %w: tensor<8x3x3x3xf32>, %scale: tensor<8x1x1xf32>) -> tensor<?x8x15x21xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x35x23xf32>
  %z = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty(%n) : tensor<?x8x15x21xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8x15x21xf32>) -> tensor<?x8x15x21xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<[2, 1]> : vector<2xi64>, strides = dense<[2, 1]> : vector<2xi64>} ins(%x, %w : tensor<?x3x35x23xf32>, tensor<8x3x3x3xf32>) outs(%f : tensor<?x8x15x21xf32>) -> tensor<?x8x15x21xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %scale : tensor<?x8x15x21xf32>, tensor<8x1x1xf32>) outs(%e : tensor<?x8x15x21xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %lo = arith.maximumf %m, %z : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<?x8x15x21xf32>
  return %g : tensor<?x8x15x21xf32>
}
