// A convolution's elementwise consumer — BatchNorm and ReLU fused into one generic by
// linalg-fuse-elementwise-ops, a residual add — becomes its patch's epilogue on CPU
// targets when its body is lanewise arith on floats and its other operands are read
// through dims and constants: lower-ukernels applies it to each register tile's rows
// (lanes along the output channels; a per-channel operand read as a vector of channels,
// a residual gathered along them as the tile's stores scatter) before the store, instead
// of another pass over the activations (ResNet-50: the BatchNorm after each 3x3 conv).
// RUN: ftuner-opt %s --patch-ukernels=target=sapphirerapids --mlir-pass-statistics 2>&1 | FileCheck %s
// A GPU target's conv kernels take no epilogue: the consumers stay.
// RUN: ftuner-opt %s --patch-ukernels=target=a100 | FileCheck %s --check-prefix=GPU
// Lowered, each function computes what it computed before (flat-k form with static
// images, nested k loops with a dynamic one; batch 3, and an empty batch).
// RUN: ftuner-run %s --entry=bn_relu --shape 0=3x16x10x10 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=host})' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=bn_relu --shape 0=0x16x10x10 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=host})' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=residual --shape 0=3x16x11x11 --shape 3=3x48x5x5 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=host})' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=read_init --shape 0=2x16x10x10 --shape 2=2x80x8x8 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=host})' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=dynamic_image --shape 0=2x16x7x11 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=host})' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=not_lanewise --shape 0=2x16x10x10 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=host})' 2>&1 | FileCheck %s --check-prefix=EXEC
// EXEC: check: ok

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>

// CHECK: #[[CH:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, 0, 0)>

// CHECK-LABEL: func.func @bn_relu(
// CHECK: ukernel.patch "conv2d"
// CHECK: } epilogue(ins(%arg2, %arg3, %arg4 : tensor<80x1x1xf32>, tensor<80x1x1xf32>, tensor<80x1x1xf32>) maps [#[[CH]], #[[CH]], #[[CH]]]) {
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: ukernel.yield
// CHECK-NOT: linalg.generic
// CHECK: return
// GPU-LABEL: func.func @bn_relu(
// GPU: ukernel.patch "conv2d" target("a100")
// GPU-NOT: epilogue(
// GPU: linalg.generic
func.func @bn_relu(%x: tensor<?x16x10x10xf32>, %w: tensor<80x16x3x3xf32>, %mean: tensor<80x1x1xf32>, %scale: tensor<80x1x1xf32>, %beta: tensor<80x1x1xf32>) -> tensor<?x80x8x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x10x10xf32>
  %e = tensor.empty(%n) : tensor<?x80x8x8xf32>
  %z = arith.constant 0.0 : f32
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x80x8x8xf32>) -> tensor<?x80x8x8xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x16x10x10xf32>, tensor<80x16x3x3xf32>) outs(%i : tensor<?x80x8x8xf32>) -> tensor<?x80x8x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x80x8x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #ch, #ch, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %mean, %scale, %beta : tensor<?x80x8x8xf32>, tensor<80x1x1xf32>, tensor<80x1x1xf32>, tensor<80x1x1xf32>) outs(%e2 : tensor<?x80x8x8xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32, %b: f32, %o: f32):
    %0 = arith.subf %a, %m : f32
    %1 = arith.mulf %0, %s : f32
    %2 = arith.addf %1, %b : f32
    %3 = arith.maximumf %2, %z : f32
    linalg.yield %3 : f32
  } -> tensor<?x80x8x8xf32>
  return %g : tensor<?x80x8x8xf32>
}

// A residual read per element (along the channels: 25 elements apart) after a stride-2
// 3x3 conv; then ReLU as a second consumer.
// CHECK-LABEL: func.func @residual(
// CHECK: ukernel.patch "conv2d"
// CHECK: } epilogue(ins(%arg2, %arg3 : tensor<48x1x1xf32>, tensor<?x48x5x5xf32>)
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: ukernel.yield
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @residual(%x: tensor<?x16x11x11xf32>, %w: tensor<48x16x3x3xf32>, %bias: tensor<48x1x1xf32>, %res: tensor<?x48x5x5xf32>) -> tensor<?x48x5x5xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x11x11xf32>
  %e = tensor.empty(%n) : tensor<?x48x5x5xf32>
  %z = arith.constant 0.0 : f32
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x48x5x5xf32>) -> tensor<?x48x5x5xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<?x16x11x11xf32>, tensor<48x16x3x3xf32>) outs(%i : tensor<?x48x5x5xf32>) -> tensor<?x48x5x5xf32>
  %e2 = tensor.empty(%n) : tensor<?x48x5x5xf32>
  %g = linalg.generic {indexing_maps = [#id, #ch, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %bias, %res : tensor<?x48x5x5xf32>, tensor<48x1x1xf32>, tensor<?x48x5x5xf32>) outs(%e2 : tensor<?x48x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %q: f32, %o: f32):
    %0 = arith.addf %a, %b : f32
    %1 = arith.addf %0, %q : f32
    linalg.yield %1 : f32
  } -> tensor<?x48x5x5xf32>
  %e3 = tensor.empty(%n) : tensor<?x48x5x5xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%g : tensor<?x48x5x5xf32>) outs(%e3 : tensor<?x48x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.maximumf %a, %z : f32
    linalg.yield %0 : f32
  } -> tensor<?x48x5x5xf32>
  return %h : tensor<?x48x5x5xf32>
}

// An accumulator that is read (not a filled zero: the tiles start from it), and a
// per-channel operand read at a constant other than 0 (column 1 of a 48 x 2 table).
// CHECK-LABEL: func.func @read_init(
// CHECK: ukernel.patch "conv2d"
// CHECK: } epilogue(ins(%arg3 : tensor<80x2xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @read_init(%x: tensor<?x16x10x10xf32>, %w: tensor<80x16x3x3xf32>, %acc: tensor<?x80x8x8xf32>, %t: tensor<80x2xf32>) -> tensor<?x80x8x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x10x10xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x16x10x10xf32>, tensor<80x16x3x3xf32>) outs(%acc : tensor<?x80x8x8xf32>) -> tensor<?x80x8x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x80x8x8xf32>
  %g = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d1, 1)>, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %t : tensor<?x80x8x8xf32>, tensor<80x2xf32>) outs(%e2 : tensor<?x80x8x8xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %0 = arith.mulf %a, %s : f32
    linalg.yield %0 : f32
  } -> tensor<?x80x8x8xf32>
  return %g : tensor<?x80x8x8xf32>
}

// A dynamic image (the nested k loops, not the flat-k table) takes it too.
// CHECK-LABEL: func.func @dynamic_image(
// CHECK: ukernel.patch "conv2d"
// CHECK: } epilogue(ins(%arg2 : tensor<32x1x1xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @dynamic_image(%x: tensor<?x16x?x?xf32>, %w: tensor<32x16x3x3xf32>, %scale: tensor<32x1x1xf32>) -> tensor<?x32x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x16x?x?xf32>
  %wd = tensor.dim %x, %c3 : tensor<?x16x?x?xf32>
  %oh = arith.subi %h, %c2 : index
  %ow = arith.subi %wd, %c2 : index
  %e = tensor.empty(%n, %oh, %ow) : tensor<?x32x?x?xf32>
  %z = arith.constant 0.0 : f32
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x32x?x?xf32>) -> tensor<?x32x?x?xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x16x?x?xf32>, tensor<32x16x3x3xf32>) outs(%i : tensor<?x32x?x?xf32>) -> tensor<?x32x?x?xf32>
  %g = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %scale : tensor<?x32x?x?xf32>, tensor<32x1x1xf32>) outs(%e : tensor<?x32x?x?xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %0 = arith.mulf %a, %s : f32
    linalg.yield %0 : f32
  } -> tensor<?x32x?x?xf32>
  return %g : tensor<?x32x?x?xf32>
}

// Not lanewise (a math op: the approximations run on scalars): the consumer stays.
// CHECK-LABEL: func.func @not_lanewise(
// CHECK: ukernel.patch "conv2d"
// CHECK-NOT: epilogue(
// CHECK: linalg.generic
// CHECK: math.tanh
func.func @not_lanewise(%x: tensor<?x16x10x10xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<?x32x8x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x10x10xf32>
  %e = tensor.empty(%n) : tensor<?x32x8x8xf32>
  %z = arith.constant 0.0 : f32
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x32x8x8xf32>) -> tensor<?x32x8x8xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%i : tensor<?x32x8x8xf32>) -> tensor<?x32x8x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x32x8x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : tensor<?x32x8x8xf32>) outs(%e2 : tensor<?x32x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.tanh %a : f32
    linalg.yield %0 : f32
  } -> tensor<?x32x8x8xf32>
  return %g : tensor<?x32x8x8xf32>
}
// The absorbed consumers: BatchNorm + ReLU, the residual add and ReLU, the read-init
// scale, the dynamic image's scale.
// CHECK: (S) 5 num-epilogue-ops
