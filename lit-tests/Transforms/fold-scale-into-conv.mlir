// fold-scale-into-conv: a conv's inference BatchNorm (the per-channel affine start of its
// elementwise consumer) folded into its filter and one per-channel bias.
// RUN: ftuner-opt %S/Inputs/fold_scale.mlir --fold-scale-into-conv | FileCheck %s
// RUN: ftuner-opt %S/Inputs/fold_scale.mlir --pass-pipeline='builtin.module(fold-scale-into-conv,outline-weight-preparation)' | FileCheck %s --check-prefix=PREP
// RUN: ftuner-opt %s --split-input-file --fold-scale-into-conv | FileCheck %s --check-prefix=NOT
// RUN: ftuner-opt %S/Inputs/fold_scale.mlir --fold-scale-into-conv --mlir-print-op-generic | %mlir-opt > /dev/null
// Against the interpreter on the module as read: the pass alone, and the CPU pipeline
// (where it runs after linalg-fuse-elementwise-ops), batch 0 included.
// RUN: ftuner-run %S/Inputs/fold_scale.mlir --entry=conv_bn --shape 0=2x3x8x8 --pass-pipeline='builtin.module(fold-scale-into-conv,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/fold_scale.mlir --entry=dw_bn6 --shape 0=2x4x9x9 --pass-pipeline='builtin.module(fold-scale-into-conv,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/fold_scale.mlir --entry=steps --shape 0=2x3x8x8 --shape 4=2x4x8x8 --pass-pipeline='builtin.module(fold-scale-into-conv,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/fold_scale.mlir --entry=conv_bn --shape 0=3x3x8x8 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/fold_scale.mlir --entry=dw_bn6 --shape 0=3x4x9x9 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/fold_scale.mlir --entry=dw_bn6 --shape 0=0x4x9x9 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/fold_scale.mlir --entry=steps --shape 0=3x3x8x8 --shape 4=3x4x8x8 --check | FileCheck %s --check-prefix=RUNOK
// RUNOK: check: ok
// REQUIRES: mlir-opt

// alpha = r * g and beta = -m * r * g + b per channel; the filter's rows scaled by
// alpha; the consumer adds beta to the new conv and keeps its ReLU, reading nothing else.
// CHECK-LABEL: func.func @conv_bn
// CHECK: %[[AB:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK-NEXT: ^bb0(%[[M:[a-z0-9_]+]]: f32, %[[R:[a-z0-9_]+]]: f32, %[[G:[a-z0-9_]+]]: f32, %[[B:[a-z0-9_]+]]: f32,
// CHECK-NEXT: %[[NM:.*]] = arith.negf %[[M]]
// CHECK-NEXT: %[[NMR:.*]] = arith.mulf %[[NM]], %[[R]]
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[R]], %[[G]]
// CHECK-NEXT: %[[NMRG:.*]] = arith.mulf %[[NMR]], %[[G]]
// CHECK-NEXT: %[[BETA:.*]] = arith.addf %[[NMRG]], %[[B]]
// CHECK-NEXT: linalg.yield %[[A]], %[[BETA]]
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%arg1, %[[AB]]#0 : tensor<4x3x3x3xf32>, tensor<4xf32>)
// CHECK: arith.mulf
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %[[W]] :
// CHECK: linalg.generic {{.*}} ins(%[[C]], %[[AB]]#1 : tensor<?x4x6x6xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:[a-z0-9_]+]]: f32, %[[IB:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[IN]], %[[IB]]
// CHECK-NEXT: arith.cmpf ugt, %[[S]]
// CHECK-NEXT: arith.select
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: return

// The depthwise conv's channel rows scaled (a 3-d filter); the clamp's bounds stay.
// CHECK-LABEL: func.func @dw_bn6
// CHECK: linalg.generic {{.*}} ins(%arg1, %{{.*}}#0 : tensor<4x3x3xf32>, tensor<4xf32>)
// CHECK: %[[DW:.*]] = linalg.depthwise_conv_2d_nchw_chw
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[DW]], %{{.*}}, %{{.*}}#1 : tensor<f32>, tensor<?x4x4x4xf32>, tensor<f32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[HI:[a-z0-9_]+]]: f32, %[[IN:[a-z0-9_]+]]: f32, %[[LO:[a-z0-9_]+]]: f32, %[[IB:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[IN]], %[[IB]]
// CHECK-NEXT: arith.cmpf ogt, %[[S]], %[[LO]]

// divf, negf, a subtraction from a channel value and a constant scale fold; the chain
// stops at the residual add, and the multiply after it stays.
// CHECK-LABEL: func.func @steps
// CHECK: %[[AB:.*]]:2 = linalg.generic
// CHECK-NEXT: ^bb0(%[[D:[a-z0-9_]+]]: f32, %[[S:[a-z0-9_]+]]: f32,
// CHECK: arith.divf %{{.*}}, %[[D]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[AB]]#1 : tensor<?x4x8x8xf32>, tensor<4x1x1xf32>, tensor<?x4x8x8xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:[a-z0-9_]+]]: f32, %[[IS:[a-z0-9_]+]]: f32, %[[IR:[a-z0-9_]+]]: f32, %[[IB:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V:.*]] = arith.addf %[[IN]], %[[IB]]
// CHECK-NEXT: %[[W:.*]] = arith.addf %[[V]], %[[IR]]
// CHECK-NEXT: arith.mulf %[[W]], %[[IS]]

// What it builds derives from weights only: outline-weight-preparation takes all of it.
// PREP-LABEL: func.func @conv_bn_prepare
// PREP: linalg.generic
// PREP: linalg.generic
// PREP-LABEL: func.func @conv_bn(
// PREP-NOT: linalg.generic {{.*}}iterator_types = ["parallel"]}
// PREP: linalg.conv_2d_nchw_fchw
// PREP: linalg.generic
// PREP-NOT: arith.mulf
// PREP: return

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>

// An init that is not a fill of zero (a bias broadcast would be): not folded.
// NOT-LABEL: func.func @nonzero_init
// NOT: linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %arg1 :
// NOT: arith.mulf
func.func @nonzero_init(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x1x1xf32> {ftuner.weight}, %s: tensor<4xf32> {ftuner.weight}) -> tensor<?x4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x3x8x8xf32>, tensor<4x3x1x1xf32>) outs(%f : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s3 : tensor<?x4x8x8xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x8x8xf32>) {
  ^bb0(%in: f32, %is: f32, %out: f32):
    %0 = arith.mulf %in, %is : f32
    linalg.yield %0 : f32
  } -> tensor<?x4x8x8xf32>
  return %y : tensor<?x4x8x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>

// A scale known only at run time (not a weight): not folded (the filter would be scaled
// on every call).
// NOT-LABEL: func.func @runtime_scale
// NOT: linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %arg1 :
// NOT: arith.mulf
func.func @runtime_scale(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x1x1xf32> {ftuner.weight}, %s: tensor<4xf32>) -> tensor<?x4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x3x8x8xf32>, tensor<4x3x1x1xf32>) outs(%f : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s3 : tensor<?x4x8x8xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x8x8xf32>) {
  ^bb0(%in: f32, %is: f32, %out: f32):
    %0 = arith.mulf %in, %is : f32
    linalg.yield %0 : f32
  } -> tensor<?x4x8x8xf32>
  return %y : tensor<?x4x8x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>

// A shift alone scales nothing: left as it is.
// NOT-LABEL: func.func @shift_only
// NOT: linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %arg1 :
// NOT: arith.addf
func.func @shift_only(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x1x1xf32> {ftuner.weight}, %s: tensor<4xf32> {ftuner.weight}) -> tensor<?x4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x3x8x8xf32>, tensor<4x3x1x1xf32>) outs(%f : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s3 : tensor<?x4x8x8xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x8x8xf32>) {
  ^bb0(%in: f32, %is: f32, %out: f32):
    %0 = arith.addf %in, %is : f32
    linalg.yield %0 : f32
  } -> tensor<?x4x8x8xf32>
  return %y : tensor<?x4x8x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>

// The conv's value read twice in the body: no chain (c * s + c is not c * alpha + beta
// with one alpha the chain could see); a channel value divided by it: not affine.
// NOT-LABEL: func.func @read_twice
// NOT: linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %arg1 :
// NOT: arith.mulf %in, %in_0
// NOT-LABEL: func.func @divided_by
// NOT: linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %arg1 :
// NOT: arith.divf %in_0, %in
func.func @read_twice(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x1x1xf32> {ftuner.weight}, %s: tensor<4xf32> {ftuner.weight}) -> tensor<?x4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x3x8x8xf32>, tensor<4x3x1x1xf32>) outs(%f : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s3 : tensor<?x4x8x8xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x8x8xf32>) {
  ^bb0(%in: f32, %is: f32, %out: f32):
    %0 = arith.mulf %in, %is : f32
    %1 = arith.addf %0, %in : f32
    linalg.yield %1 : f32
  } -> tensor<?x4x8x8xf32>
  return %y : tensor<?x4x8x8xf32>
}
func.func @divided_by(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x1x1xf32> {ftuner.weight}, %s: tensor<4xf32> {ftuner.weight}) -> tensor<?x4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x3x8x8xf32>, tensor<4x3x1x1xf32>) outs(%f : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s3 : tensor<?x4x8x8xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x8x8xf32>) {
  ^bb0(%in: f32, %is: f32, %out: f32):
    %0 = arith.divf %is, %in : f32
    linalg.yield %0 : f32
  } -> tensor<?x4x8x8xf32>
  return %y : tensor<?x4x8x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>

// A chain cut short: the scaled value is read twice, so the chain ends there (the
// scale folds, the rest stays on the new conv's value).
// NOT-LABEL: func.func @cut_short
// NOT: %[[W:.*]] = linalg.generic {{.*}} ins(%arg1,
// NOT: %[[C:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %[[W]] :
// NOT: linalg.generic {{.*}} ins(%[[C]] : tensor<?x4x8x8xf32>)
// NOT-NEXT: ^bb0(%[[IN:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// NOT-NEXT: %[[SQ:.*]] = arith.mulf %[[IN]], %[[IN]]
// NOT-NEXT: linalg.yield %[[SQ]]
func.func @cut_short(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x1x1xf32> {ftuner.weight}, %s: tensor<4xf32> {ftuner.weight}) -> tensor<?x4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x3x8x8xf32>, tensor<4x3x1x1xf32>) outs(%f : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s3 : tensor<?x4x8x8xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x8x8xf32>) {
  ^bb0(%in: f32, %is: f32, %out: f32):
    %0 = arith.mulf %in, %is : f32
    %1 = arith.mulf %0, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<?x4x8x8xf32>
  return %y : tensor<?x4x8x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>

// f16 (the scaled filter would round in f16) and a conv inside a loop (its scaling would
// run on every iteration): not folded.
// NOT-LABEL: func.func @half
// NOT: linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %arg1 :
// NOT: arith.mulf
// NOT-LABEL: func.func @in_loop
// NOT: scf.for
// NOT: linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %arg1 :
// NOT: arith.mulf
func.func @half(%x: tensor<?x3x8x8xf16>, %w: tensor<4x3x1x1xf16> {ftuner.weight}, %s: tensor<4xf16> {ftuner.weight}) -> tensor<?x4x8x8xf16> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f16
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf16>
  %e = tensor.empty(%n) : tensor<?x4x8x8xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<?x4x8x8xf16>) -> tensor<?x4x8x8xf16>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x3x8x8xf16>, tensor<4x3x1x1xf16>) outs(%f : tensor<?x4x8x8xf16>) -> tensor<?x4x8x8xf16>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf16> into tensor<4x1x1xf16>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s3 : tensor<?x4x8x8xf16>, tensor<4x1x1xf16>) outs(%e : tensor<?x4x8x8xf16>) {
  ^bb0(%in: f16, %is: f16, %out: f16):
    %0 = arith.mulf %in, %is : f16
    linalg.yield %0 : f16
  } -> tensor<?x4x8x8xf16>
  return %y : tensor<?x4x8x8xf16>
}
func.func @in_loop(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x1x1xf32> {ftuner.weight}, %s: tensor<4xf32> {ftuner.weight}, %init: tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (tensor<?x4x8x8xf32>) {
    %e = tensor.empty(%n) : tensor<?x4x8x8xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
    %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x3x8x8xf32>, tensor<4x3x1x1xf32>) outs(%f : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
    %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s3 : tensor<?x4x8x8xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x8x8xf32>) {
    ^bb0(%in: f32, %is: f32, %out: f32):
      %0 = arith.mulf %in, %is : f32
      linalg.yield %0 : f32
    } -> tensor<?x4x8x8xf32>
    scf.yield %y : tensor<?x4x8x8xf32>
  }
  return %r : tensor<?x4x8x8xf32>
}
