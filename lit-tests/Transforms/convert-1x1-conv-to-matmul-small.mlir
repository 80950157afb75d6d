// convert-1x1-conv-to-matmul on an image smaller than min-positions (7x7: 49 positions)
// whose filter is known at load time (a weight): per image, (HW x C) x (C x F), the image
// transposed before the matmul and the result after it, the filter transposed once
// (outside the loop; outline-weight-preparation takes it into the prepare function, and
// lower-ukernels packs its panels there too, before the image loop). A filter that is a
// run-time argument, or transpose-small=false, leaves the conv alone.
// RUN: ftuner-opt %s --split-input-file --convert-1x1-conv-to-matmul | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(convert-1x1-conv-to-matmul{transpose-small=false})' | FileCheck %s --check-prefix=OFF
// RUN: ftuner-opt %s --split-input-file --convert-1x1-conv-to-matmul --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=zen5})' | FileCheck %s --check-prefix=PREP
// RUN: ftuner-run %s --entry=small --shape 0=3x16x7x7 --check | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=small --shape 0=4x16x7x7 --check --threads 2 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=strided --shape 0=2x16x13x13 --check | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=accumulates --shape 0=2x16x7x7 --shape 2=2x128x7x7 --check | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(outline-weight-preparation,convert-1x1-conv-to-matmul)' | FileCheck %s --check-prefix=SPLIT
// RUN: ftuner-run %s --entry=scaled --shape 0=2x16x7x7 --check | FileCheck %s --check-prefix=EXEC
// EXEC: check: ok

// CHECK-LABEL: func.func @small(
// CHECK: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<128x16x1x1xf32> into tensor<128x16xf32>
// CHECK: %[[WT:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<128x16xf32>) outs(%{{.*}} : tensor<16x128xf32>)
// CHECK: scf.for
// CHECK: %[[XT:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<16x49xf32>) outs(%{{.*}} : tensor<49x16xf32>)
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<49x128xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[XT]], %[[WT]] : tensor<49x16xf32>, tensor<16x128xf32>) outs(%[[F]] : tensor<49x128xf32>)
// CHECK: %[[O:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<49x128xf32>) outs(%{{.*}} : tensor<128x49xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[O]], %arg2 : tensor<128x49xf32>, tensor<128xf32>)
// CHECK: } {ftuner.parallel}
// OFF-LABEL: func.func @small(
// OFF: linalg.conv_2d_nchw_fchw
// PREP-LABEL: func.func @small_prepare(
// PREP-SAME: -> (tensor<128xf32>, tensor<2x16x64xf32>)
// PREP-LABEL: func.func @small(
// PREP-SAME: %arg2: tensor<2x16x64xf32>
// PREP-NOT: = linalg.conv_2d_nchw_fchw
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @small(%x: tensor<?x16x7x7xf32>, %w: tensor<128x16x1x1xf32> {ftuner.weight}, %bias: tensor<128xf32> {ftuner.weight}) -> tensor<?x128x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x7x7xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x128x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x16x7x7xf32>, tensor<128x16x1x1xf32>) outs(%f : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  %r = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %bias : tensor<?x128x7x7xf32>, tensor<128xf32>) outs(%e : tensor<?x128x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<?x128x7x7xf32>
  return %r : tensor<?x128x7x7xf32>
}

// -----

// A run-time filter: transposing it would cost a pass over it per call.
// CHECK-LABEL: func.func @runtime_filter(
// CHECK: linalg.conv_2d_nchw_fchw
// PREP-LABEL: func.func @runtime_filter(
func.func @runtime_filter(%x: tensor<?x16x7x7xf32>, %w: tensor<128x16x1x1xf32>) -> tensor<?x128x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x7x7xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x128x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x16x7x7xf32>, tensor<128x16x1x1xf32>) outs(%f : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  return %c : tensor<?x128x7x7xf32>
}

// -----

// Strided (ResNet's downsampling shortcut): the positions it reads copied out, then
// transposed like the image above.
// CHECK-LABEL: func.func @strided(
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<16x7x7xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<16x49xf32>) outs(%{{.*}} : tensor<49x16xf32>)
// CHECK: linalg.matmul {{.*}} -> tensor<49x128xf32>
func.func @strided(%x: tensor<?x16x13x13xf32>, %w: tensor<128x16x1x1xf32> {ftuner.weight}) -> tensor<?x128x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x13x13xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x128x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<?x16x13x13xf32>, tensor<128x16x1x1xf32>) outs(%f : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  return %c : tensor<?x128x7x7xf32>
}

// -----

// An init that is not a fill (the conv accumulates into it): transposed in as well.
// CHECK-LABEL: func.func @accumulates(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<128x49xf32>) outs(%{{.*}} : tensor<49x128xf32>)
// CHECK: linalg.matmul {{.*}} -> tensor<49x128xf32>
func.func @accumulates(%x: tensor<?x16x7x7xf32>, %w: tensor<128x16x1x1xf32> {ftuner.weight}, %o: tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x16x7x7xf32>, tensor<128x16x1x1xf32>) outs(%o : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  return %c : tensor<?x128x7x7xf32>
}

// -----

// A filter computed from weights (a BatchNorm scale folded in) is a prepared value once
// outline-weight-preparation has split the function: known at load time too.
// SPLIT-LABEL: func.func @scaled_prepare(
// SPLIT-LABEL: func.func @scaled(
// SPLIT: linalg.matmul {{.*}} : tensor<49x16xf32>, tensor<16x128xf32>) outs({{.*}} : tensor<49x128xf32>)
#w4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#s4 = affine_map<(d0, d1, d2, d3) -> (d0)>
func.func @scaled(%x: tensor<?x16x7x7xf32>, %w: tensor<128x16x1x1xf32> {ftuner.weight}, %s: tensor<128xf32> {ftuner.weight}) -> tensor<?x128x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x7x7xf32>
  %z = arith.constant 0.0 : f32
  %we = tensor.empty() : tensor<128x16x1x1xf32>
  %ws = linalg.generic {indexing_maps = [#w4, #s4, #w4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %s : tensor<128x16x1x1xf32>, tensor<128xf32>) outs(%we : tensor<128x16x1x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<128x16x1x1xf32>
  %e = tensor.empty(%n) : tensor<?x128x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %ws : tensor<?x16x7x7xf32>, tensor<128x16x1x1xf32>) outs(%f : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  return %c : tensor<?x128x7x7xf32>
}
