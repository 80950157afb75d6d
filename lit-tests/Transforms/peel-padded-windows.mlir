// peel-padded-windows: a depthwise conv or pooling over a pad of its image becomes the
// same op on output slices — the interior over a slice of the image itself, the border
// strips over pads of the rows or columns they read.
// The pieces over the whole tensor (planes=false), then per plane (the default).
// RUN: ftuner-opt %s --peel-padded-windows=planes=false --split-input-file | FileCheck %s
// RUN: ftuner-opt %s --peel-padded-windows --split-input-file --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// RUN: ftuner-opt %S/Inputs/padded_windows.mlir --peel-padded-windows | FileCheck %s --check-prefix=PLANES
// RUN: ftuner-opt %S/Inputs/padded_windows.mlir --peel-padded-windows --mlir-print-op-generic | %mlir-opt > /dev/null
// REQUIRES: mlir-opt
// Against the interpreter on the ops as read: strides 1 and 2, a dilation, asymmetric
// padding with a non-zero value, an image too small for an interior (left alone), max and
// sum poolings, an empty batch.
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_s1 --shape 0=3x4x9x11 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_s1 --shape 0=0x4x9x11 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_s2 --shape 0=2x4x13x16 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_dil --shape 0=2x3x10x7 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_asym --shape 0=2x2x6x7 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_tiny --shape 0=2x2x2x2 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=maxpool --shape 0=2x3x11x9 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=sumpool --shape 0=1x3x8x8 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_static --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn --shape 0=3x17x9x10 --shape 4=3x17x5x5 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn --shape 0=3x17x9x10 --shape 4=3x17x5x5 --pass-pipeline='builtin.module(peel-padded-windows{fuse-consumers=false},canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn --shape 0=3x17x9x10 --shape 4=3x17x5x5 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_s2 --shape 0=2x4x13x16 --pass-pipeline='builtin.module(peel-padded-windows{planes=false},canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_acc --shape 0=2x3x8x8 --shape 2=2x3x8x8 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_acc_scalar --shape 0=2x3x8x8 --shape 2=2x3x8x8 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// The flat form (stride 1, a filled init): with a consumer, a dilation and asymmetric
// padding; a max pooling; and the same ops as pieces (flat=false).
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn1 --shape 0=3x5x7x9 --shape 4=3x5x5x9 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn1 --shape 0=3x5x7x9 --shape 4=3x5x5x9 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn1 --shape 0=2x5x7x9 --shape 4=2x5x5x9 --pass-pipeline='builtin.module(peel-padded-windows{flat=false},canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=maxpool_s1 --shape 0=2x3x6x5 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_s1 --shape 0=3x4x9x11 --pass-pipeline='builtin.module(peel-padded-windows{flat=false},canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_hugedil --shape 0=2x2x4x6 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-opt %S/Inputs/padded_windows.mlir '--peel-padded-windows=vector=false separable=false' | FileCheck %s --check-prefix=FLAT
// In vectors over phase planes (the default for a depthwise conv of f32 with a filled
// init): stride 2 with a consumer, an odd output width, strides 2 x 3 with a dilation and
// asymmetric padding; each alone and through the whole CPU pipeline on two threads.
// With rows=false every plane is one flat result whose rows are copied out; by default
// planes of 8 outputs a row or more are computed by rows, written in place (ROWS below).
// RUN: ftuner-opt %S/Inputs/padded_windows.mlir '--peel-padded-windows=rows=false' | FileCheck %s --check-prefix=VECTOR
// RUN: ftuner-opt %S/Inputs/padded_windows.mlir --peel-padded-windows | FileCheck %s --check-prefix=ROWS
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn_s2 --shape 0=3x3x13x16 --pass-pipeline='builtin.module(peel-padded-windows{rows=false},canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn_odd --shape 0=2x2x6x15 --pass-pipeline='builtin.module(peel-padded-windows{rows=false},canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_s1 --shape 0=3x4x9x11 --pass-pipeline='builtin.module(peel-padded-windows{rows=false},canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn_s2 --shape 0=3x3x13x16 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn_s2 --shape 0=3x3x13x16 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn_odd --shape 0=2x2x6x15 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn_odd --shape 0=3x2x6x15 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_s23 --shape 0=2x2x11x14 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_s2_w7 --shape 0=2x2x7x7 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_s2_w7 --shape 0=3x2x7x7 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_f16 --shape 0=2x2x8x8 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_s23 --shape 0=1x2x11x14 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// An init of another batch than the image's: the plane loop's run-time check.
// RUN: not ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_acc_scalar --shape 0=2x3x8x8 --shape 2=3x3x8x8 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=INIT
// INIT: run-time check failed: {{.*}}'linalg.depthwise_conv_2d_nchw_chw' op at {{.*}}padded_windows.mlir:161:8: the image and an operand of the plane loop have different batch sizes
// A residual of another batch than the image's: the same check.
// RUN: not ftuner-run %S/Inputs/padded_windows.mlir --entry=dw_bn --shape 0=3x17x9x10 --shape 4=2x17x5x5 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: run-time check failed: {{.*}}'linalg.depthwise_conv_2d_nchw_chw' op at {{.*}}padded_windows.mlir:127:8: the image and an operand of the plane loop have different batch sizes
// RUNOK: check: ok
// Twenty-two window ops over pads, twenty-one rewritten (dw_tiny's 2x2 image has no
// interior), six with their consumer; twelve of them in a flat form, ten of those (the
// depthwise convs of f32 image, filter and output with a filled init, and a consumer read
// per channel if any) in vectors (dw_f16's filter is f16); the five max poolings of f32
// in two passes (sumpool's sums would change order):
// RUN: ftuner-opt %S/Inputs/padded_windows.mlir --peel-padded-windows --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// STATS: 21 num-peeled
// STATS: 6 num-consumers
// STATS: 12 num-flat
// STATS: 10 num-vector
// STATS: 5 num-separable
// Without vectors, seven in the generic flat form (stride 1, a filled init, a row step
// that fits; maxpool_s1 stays separable):
// RUN: ftuner-opt %S/Inputs/padded_windows.mlir --peel-padded-windows=vector=false --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS-GENERIC
// STATS-GENERIC: 21 num-peeled
// STATS-GENERIC: 7 num-flat
// STATS-GENERIC: 0 num-vector
// STATS-GENERIC: 5 num-separable
// Max poolings in two passes (separable, the default for a max pooling of f32 with a
// filled init and a column stride of 1 or 2): a consumer, a padding value above the
// fill's, strides 3 x 1 with dilations and asymmetric padding; each against the
// interpreter alone and through the whole CPU pipeline on two threads.
// RUN: ftuner-opt %S/Inputs/padded_windows.mlir --peel-padded-windows | FileCheck %s --check-prefix=SEP
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=mp_relu --shape 0=3x2x9x37 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=mp_relu --shape 0=3x2x9x37 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=mp_dil --shape 0=2x3x10x20 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=mp_dil --shape 0=1x3x10x20 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=maxpool --shape 0=2x3x11x9 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=maxpool --shape 0=2x3x11x9 --pass-pipeline='builtin.module(peel-padded-windows{separable=false},canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/padded_windows.mlir --entry=mp_pad --shape 0=3x2x9x20 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK

// Per plane: chunks of channels on the thread pool (17 channels: 16 chunks), then each
// channel's images; each plane's init filled on its own, the pieces on static 1x1 planes,
// the consumer on the plane (its per-channel operands sliced at the channel, the
// residual at the plane), the plane inserted back.
// PLANES-LABEL: func.func @dw_bn
// PLANES: cf.assert {{.*}}the image and an operand of the plane loop have different batch sizes
// PLANES: cf.assert {{.*}}the image and an operand of the plane loop have different batch sizes
// PLANES: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %c16 step %{{.*}} iter_args(%[[A0:.*]] = %{{.*}}) -> (tensor<?x17x5x5xf32>)
// PLANES: arith.muli %[[K]], %c17
// PLANES: arith.divui {{.*}}, %c16
// PLANES: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A1:.*]] = %[[A0]])
// PLANES: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A2:.*]] = %[[A1]])
// PLANES: %[[X:.*]] = tensor.extract_slice %arg0[%[[I]], %[[C]], 0, 0] [1, 1, 9, 10] [1, 1, 1, 1] : tensor<?x17x9x10xf32> to tensor<1x1x9x10xf32>
// PLANES: %[[W:.*]] = tensor.extract_slice %arg1[%[[C]], 0, 0] [1, 3, 3] [1, 1, 1] : tensor<17x3x3xf32> to tensor<1x3x3xf32>
// PLANES: %[[O:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x5x5xf32>)
// PLANES: tensor.extract_slice %[[X]][0, 0, 1, 1] [1, 1, 7, 9]
// PLANES: tensor.extract_slice %[[O]][0, 0, 1, 1] [1, 1, 3, 4]
// PLANES: linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%{{.*}}, %[[W]] : tensor<1x1x7x9xf32>, tensor<1x3x3xf32>) outs(%{{.*}} : tensor<1x1x3x4xf32>)
// PLANES: tensor.extract_slice %arg2[%[[C]], 0, 0] [1, 1, 1] [1, 1, 1] : tensor<17x1x1xf32> to tensor<1x1x1xf32>
// PLANES: tensor.extract_slice %arg4[%[[I]], %[[C]], 0, 0] [1, 1, 5, 5] [1, 1, 1, 1] : tensor<?x17x5x5xf32> to tensor<1x1x5x5xf32>
// PLANES: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x5x5xf32>)
// PLANES: tensor.insert_slice %{{.*}} into %[[A2]][%[[I]], %[[C]], 0, 0] [1, 1, 5, 5] [1, 1, 1, 1]
// PLANES: } {ftuner.parallel}
// PLANES-NOT: linalg.generic
// PLANES: return %[[R]]

// A 3x3 depthwise conv, stride 1, padding 1 (MobileNetV2's): the interior (rows and
// columns 1..7 of 9 and 1..10 of 11) reads the image at [0, 0], unpadded; the top and
// bottom rows read two image rows padded to three, the left and right columns two image
// columns of the interior rows.
// CHECK-LABEL: func.func @dw
// CHECK: tensor.dim %arg0
// CHECK: %[[N:.*]] = tensor.dim %arg0
// CHECK: %[[XI:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [%[[N]], 4, 9, 11] [1, 1, 1, 1]
// CHECK-NOT: tensor.pad
// CHECK: %[[OI:.*]] = tensor.extract_slice %[[F:.*]][0, 0, 1, 1] [%[[N]], 4, 7, 9] [1, 1, 1, 1]
// CHECK: %[[RI:.*]] = linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%[[XI]], %arg1 : tensor<?x4x9x11xf32>, tensor<4x3x3xf32>) outs(%[[OI]] : tensor<?x4x7x9xf32>)
// CHECK: %[[O1:.*]] = tensor.insert_slice %[[RI]] into %[[F]][0, 0, 1, 1] [%[[N]], 4, 7, 9]
// CHECK: %[[XT:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [%[[N]], 4, 2, 11]
// CHECK: %[[PT:.*]] = tensor.pad %[[XT]] low[0, 0, 1, 1] high[0, 0, 0, 1]
// CHECK: } : tensor<?x4x2x11xf32> to tensor<?x4x3x13xf32>
// CHECK: linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%[[PT]], %arg1 {{.*}} -> tensor<?x4x1x11xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 0, 0, 0] [%[[N]], 4, 1, 11]
// CHECK: tensor.extract_slice %arg0[0, 0, 7, 0] [%[[N]], 4, 2, 11]
// CHECK: tensor.insert_slice {{.*}}[0, 0, 8, 0] [%[[N]], 4, 1, 11]
// CHECK: tensor.extract_slice %arg0[0, 0, 0, 0] [%[[N]], 4, 9, 2]
// CHECK: tensor.insert_slice {{.*}}[0, 0, 1, 0] [%[[N]], 4, 7, 1]
// CHECK: tensor.extract_slice %arg0[0, 0, 0, 9] [%[[N]], 4, 9, 2]
// CHECK: %[[R:.*]] = tensor.insert_slice {{.*}}[0, 0, 1, 10] [%[[N]], 4, 7, 1]
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
// CHECK: return %[[R]]
func.func @dw(%x: tensor<?x4x9x11xf32>, %k: tensor<4x3x3xf32>) -> tensor<?x4x9x11xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x9x11xf32>
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x4x9x11xf32> to tensor<?x4x11x13xf32>
  %e = tensor.empty(%n) : tensor<?x4x9x11xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x9x11xf32>) -> tensor<?x4x9x11xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x4x11x13xf32>, tensor<4x3x3xf32>) outs(%f : tensor<?x4x9x11xf32>) -> tensor<?x4x9x11xf32>
  return %r : tensor<?x4x9x11xf32>
}

// -----

// Padding of the channels, an image with a dynamic size, a padding value that depends on
// the position: left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK: tensor.pad
// CHECK: linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%padded
// CHECK: tensor.pad
// CHECK: linalg.pooling_nchw_max {{.*}} ins(%padded
// CHECK: tensor.pad
// CHECK: linalg.pooling_nchw_sum {{.*}} ins(%padded
func.func @left_alone(%x: tensor<1x4x9x11xf32>, %k: tensor<5x3x3xf32>, %y: tensor<1x4x?x11xf32>) -> (tensor<1x5x9x11xf32>, tensor<1x4x?x11xf32>) {
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x4x9x11xf32> to tensor<1x5x11x13xf32>
  %e = tensor.empty() : tensor<1x5x9x11xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<1x5x11x13xf32>, tensor<5x3x3xf32>) outs(%e : tensor<1x5x9x11xf32>) -> tensor<1x5x9x11xf32>
  %h = tensor.dim %y, %c2 : tensor<1x4x?x11xf32>
  %q = tensor.pad %y low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x4x?x11xf32> to tensor<1x4x?x13xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %e2 = tensor.empty(%h) : tensor<1x4x?x11xf32>
  %s = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%q, %w : tensor<1x4x?x13xf32>, tensor<3x3xf32>) outs(%e2 : tensor<1x4x?x11xf32>) -> tensor<1x4x?x11xf32>
  %t = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    %ii = arith.index_cast %k2 : index to i32
    %f = arith.sitofp %ii : i32 to f32
    tensor.yield %f : f32
  } : tensor<1x4x9x11xf32> to tensor<1x4x11x13xf32>
  %e3 = tensor.empty() : tensor<1x4x9x11xf32>
  %u = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%t, %w : tensor<1x4x11x13xf32>, tensor<3x3xf32>) outs(%e3 : tensor<1x4x9x11xf32>) -> tensor<1x4x9x11xf32>
  return %r, %s : tensor<1x5x9x11xf32>, tensor<1x4x?x11xf32>
}

// The flat form of dw_bn1 (5x9 output, padded width 10: 50 outputs rounded up to 64
// computed; the reach of the last, 64 + 2*2*10 + 1 = 105, needs 11 padded rows, two more
// than the op's pad): the plane padded once, one dimension, the window op as a generic
// over it, the consumer reading it at h * 10 + w.
// FLAT-DAG: #[[READ:.*]] = affine_map<(d0, d1, d2) -> (d0 + d1 * 20 + d2)>
// FLAT-DAG: #[[FILT:.*]] = affine_map<(d0, d1, d2) -> (0, d1, d2)>
// FLAT-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// FLAT-DAG: #[[PITCH:.*]] = affine_map<(d0, d1, d2, d3) -> (d2 * 10 + d3)>
// FLAT-LABEL: func.func @dw_bn1
// FLAT: %[[X:.*]] = tensor.extract_slice %arg0[%{{.*}}, %{{.*}}, 0, 0] [1, 1, 7, 9]
// FLAT: %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 3, 0]
// FLAT: } : tensor<1x1x7x9xf32> to tensor<1x1x11x10xf32>
// FLAT: %[[XF:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1, 2, 3]] : tensor<1x1x11x10xf32> into tensor<110xf32>
// FLAT: %[[I:.*]] = linalg.fill {{.*}} -> tensor<64xf32>
// FLAT: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[READ]], #[[FILT]], #[[OUT]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[XF]], %{{.*}} : tensor<110xf32>, tensor<1x3x2xf32>) outs(%[[I]] : tensor<64xf32>)
// FLAT: linalg.generic {indexing_maps = [#[[PITCH]], {{.*}}]{{.*}} ins(%[[Y]], {{.*}} outs(%{{.*}} : tensor<1x1x5x9xf32>)
// FLAT-LABEL: func.func @maxpool_s1
// FLAT: tensor.collapse_shape
// FLAT: linalg.generic
// FLAT: arith.maximumf
// FLAT-LABEL: func.func @dw_hugedil
// FLAT-NOT: tensor.collapse_shape
// FLAT: linalg.depthwise_conv_2d_nchw_chw
// Stride 2: four phase planes of 9 x 9 (pitch 9: 8 outputs and the column the last tap
// reaches), filled with the padding value and each a strided slice of the image; 64 flat
// positions (7 rows of 9, rounded up to 16), nine fused multiply-adds at the taps' offsets
// in the op's order (phase plane p at 81 p: tap (0, 1) in phase 1, (0, 2) one column
// into phase 0, ...), the consumer on vectors, the rows copied out in 8 lanes.
// VECTOR-LABEL: func.func @dw_bn_s2
// VECTOR: scf.for
// VECTOR: scf.for
// VECTOR: scf.for
// VECTOR: %[[B0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x9x9xf32>)
// Phase (0, 0): image rows 1, 3, ..., 11 and columns 1, 3, ..., 15 (the last 16 columns
// of each row, odd lanes), from row 1 column 1 of the phase plane.
// VECTOR: %[[B1:.*]] = scf.for %[[R:.*]] = %{{.*}} to %c6 step %{{.*}} iter_args(%[[A:.*]] = %[[B0]]) -> (tensor<4x9x9xf32>)
// VECTOR: %[[R2:.*]] = arith.muli %[[R]], %{{.*}}
// VECTOR: %[[ROW:.*]] = arith.addi %[[R2]], %{{.*}}
// VECTOR: %[[BR:.*]] = arith.addi %[[R]], %{{.*}}
// VECTOR: %[[C8:.*]] = arith.constant 8 : index
// VECTOR: %[[LO:.*]] = "vector.transfer_read"(%{{.*}}, %{{.*}}, %{{.*}}, %[[ROW]], %{{.*}}, %{{.*}}) {{.*}} -> vector<8xf32>
// VECTOR: %[[HI:.*]] = "vector.transfer_read"(%{{.*}}, %{{.*}}, %{{.*}}, %[[ROW]], %[[C8]], %{{.*}}) {{.*}} -> vector<8xf32>
// VECTOR: %[[P:.*]] = "vector.shuffle"(%[[LO]], %[[HI]]) <{mask = array<i64: 1, 3, 5, 7, 9, 11, 13, 15>}>
// VECTOR: "vector.transfer_write"(%[[P]], %[[A]], %{{.*}}, %[[BR]], %{{.*}})
// Phase (0, 1): rows 1, 3, ..., 11, columns 0, 2, ..., 14 (the first 16, even lanes).
// VECTOR: scf.for %{{.*}} = %{{.*}} to %c6{{.*}} step
// VECTOR: "vector.shuffle"({{.*}}) <{mask = array<i64: 0, 2, 4, 6, 8, 10, 12, 14>}>
// Phases (1, 0) and (1, 1): rows 0, 2, ..., 12.
// VECTOR: scf.for %{{.*}} = %{{.*}} to %c7{{.*}} step
// VECTOR: scf.for %{{.*}} = %{{.*}} to %c7{{.*}} step
// VECTOR: %[[XF:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<4x9x9xf32> into tensor<324xf32>
// VECTOR: %[[Y:.*]] = scf.for %[[J:.*]] = %{{.*}} to %c64 step %c16 iter_args(%{{.*}} = %{{.*}}) -> (tensor<64xf32>)
// One chain per filter row (the first from the fill's value, the others from a product),
// summed at the end.
// VECTOR: "vector.transfer_read"(%[[XF]], %[[J]], %{{.*}})
// VECTOR: %[[R0A:.*]] = vector.fma
// VECTOR: arith.constant 81 : index
// VECTOR: %[[R0B:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[R0A]]
// VECTOR: arith.constant 1 : index
// VECTOR: %[[R0:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[R0B]]
// VECTOR: arith.constant 162 : index
// VECTOR: %[[R1A:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// VECTOR: arith.constant 243 : index
// VECTOR: %[[R1B:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[R1A]]
// VECTOR: arith.constant 163 : index
// VECTOR: %[[R1:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[R1B]]
// VECTOR: arith.constant 9 : index
// VECTOR: %[[R2A:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// VECTOR: arith.constant 90 : index
// VECTOR: %[[R2B:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[R2A]]
// VECTOR: arith.constant 10 : index
// VECTOR: %[[R2:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[R2B]]
// VECTOR: %[[S:.*]] = arith.addf %[[R0]], %[[R1]] : vector<16xf32>
// VECTOR: arith.addf %[[S]], %[[R2]] : vector<16xf32>
// VECTOR: arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// VECTOR: arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// VECTOR: arith.cmpf ogt, %{{.*}}, %{{.*}} : vector<16xf32>
// VECTOR: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// VECTOR: arith.minimumf %{{.*}}, %{{.*}} : vector<16xf32>
// VECTOR: "vector.transfer_write"
// VECTOR: scf.for %[[H:.*]] = %{{.*}} to %c7{{.*}} step
// VECTOR: arith.muli %[[H]], %c9
// VECTOR: "vector.transfer_read"(%[[Y]], {{.*}} -> vector<8xf32>
// VECTOR: "vector.transfer_write"({{.*}} : (vector<8xf32>, tensor<1x1x7x8xf32>, index, index, index, index) -> tensor<1x1x7x8xf32>
// VECTOR: scf.yield
// 15 outputs a row: copied out in 8, 4, 2 and 1 lanes.
// VECTOR-LABEL: func.func @dw_bn_odd
// VECTOR: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x9x17xf32>)
// VECTOR: vector.fma
// VECTOR: -> vector<8xf32>
// VECTOR: -> vector<4xf32>
// VECTOR: -> vector<2xf32>
// VECTOR: -> vector<1xf32>
// By rows: each of the 6 rows one vector of 16 at flat position h * 17 (the pitch), its
// 15 outputs written in place as lanes 0-7, 8-11, 12-13 and 14, no flat result.
// ROWS-LABEL: func.func @dw_bn_odd
// ROWS: %[[XF:.*]] = tensor.collapse_shape %{{.*}} : tensor<1x9x17xf32> into tensor<153xf32>
// ROWS-NOT: tensor<112xf32>
// ROWS: scf.for %[[H:.*]] = %{{.*}} to %c6 step %{{.*}} iter_args(%[[O:.*]] = %{{.*}}) -> (tensor<1x1x6x15xf32>)
// ROWS: %[[J:.*]] = arith.muli %[[H]], %c17
// ROWS: "vector.transfer_read"(%[[XF]], %[[J]], %{{.*}}) {{.*}} -> vector<16xf32>
// ROWS-COUNT-6: vector.fma
// ROWS: %[[V:.*]] = arith.subf %{{.*}}, %{{.*}} : vector<16xf32>
// ROWS: %[[P0:.*]] = "vector.shuffle"(%[[V]], %[[V]]) <{mask = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>}> : (vector<16xf32>, vector<16xf32>) -> vector<8xf32>
// ROWS: %[[O1:.*]] = "vector.transfer_write"(%[[P0]], %[[O]], %{{.*}}, %{{.*}}, %[[H]], %{{.*}})
// ROWS: %[[P1:.*]] = "vector.shuffle"(%[[V]], %[[V]]) <{mask = array<i64: 8, 9, 10, 11>}>
// ROWS: %[[O2:.*]] = "vector.transfer_write"(%[[P1]], %[[O1]], %{{.*}}, %{{.*}}, %[[H]], %c8)
// ROWS: <{mask = array<i64: 12, 13>}>
// ROWS: "vector.transfer_write"({{.*}}, %[[H]], %c12)
// ROWS: <{mask = array<i64: 14>}>
// ROWS: %[[O4:.*]] = "vector.transfer_write"({{.*}}, %[[H]], %c14)
// ROWS: scf.yield %[[O4]] : tensor<1x1x6x15xf32>
// Strides 2 x 3, dilation 2: every tap in row phase 0, the column taps at 0, 2 and 4 in
// column phases 0, 2 and 1; three phase planes.
// VECTOR-LABEL: func.func @dw_s23
// VECTOR: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x7x6xf32>)
// VECTOR-COUNT-3: [1, 1, 2, 3] : tensor<1x1x11x14xf32>
// Stride 2 over a width of 7: phase (0, 0) holds image columns 1, 3, 5 (2 lanes from
// column 1, even; the last 2 ending at column 5, odd), phase (0, 1) columns 0, 2, 4, 6
// (their 8 columns from 0 or to 6 leave the row: 2 lanes from column 0, then 2 ending at
// column 6).
// VECTOR-LABEL: func.func @dw_s2_w7
// VECTOR: scf.for
// VECTOR: "vector.shuffle"({{.*}}) <{mask = array<i64: 0, 2>}>
// VECTOR: "vector.shuffle"({{.*}}) <{mask = array<i64: 1, 3>}>
// VECTOR: scf.yield
// VECTOR: scf.for
// VECTOR: "vector.shuffle"({{.*}}) <{mask = array<i64: 0, 2>}>
// VECTOR: "vector.shuffle"({{.*}}) <{mask = array<i64: 1, 3>}>
// VECTOR: scf.yield

// A 3x3 stride-2 max pooling over 9 x 37: output row 0 on its own (its first window row
// is padding: the padding value joins the maximum), rows 1-3 in a loop, row 4 on its own
// (rows 7 and 8 and padding). Per row, a buffer of 39 columns: the padding column at each end,
// the maximum over the three image rows in 16-lane blocks (a loop over 32 columns, then
// 4 + 1); then per 16 outputs, each tap two reads and their even lanes, the ReLU6 in
// registers, one write.
// SEP-LABEL: func.func @mp_relu
// SEP: %[[PAD:.*]] = arith.constant -2.500000e-01 : f32
// SEP: scf.for
// SEP: scf.for
// SEP: scf.for
// SEP: tensor.empty() : tensor<39xf32>
// SEP: vector.broadcast %[[PAD]] : f32 to vector<1xf32>
// SEP: scf.for %{{.*}} = %{{.*}} to %c32{{.*}} step %c16
// SEP: vector.broadcast %[[PAD]] : f32 to vector<16xf32>
// SEP: arith.maximumf {{.*}} : vector<16xf32>
// SEP: arith.maximumf {{.*}} : vector<16xf32>
// SEP-NOT: arith.maximumf
// SEP: scf.yield
// SEP: arith.maximumf {{.*}} : vector<4xf32>
// SEP: arith.maximumf {{.*}} : vector<1xf32>
// SEP: scf.for
// SEP: "vector.shuffle"({{.*}}) <{mask = array<i64: 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30>}>
// SEP: arith.maximumf {{.*}} : vector<16xf32>
// SEP: "vector.shuffle"
// SEP: "vector.shuffle"
// SEP: arith.maximumf {{.*}} : vector<16xf32>
// SEP: arith.minimumf {{.*}} : vector<16xf32>
// SEP: "vector.transfer_write"
// SEP: scf.yield
// SEP: scf.for %{{.*}} = %c1{{.*}} to %c4
// SEP: tensor.empty() : tensor<39xf32>
// SEP-LABEL: func.func @mp_dil
