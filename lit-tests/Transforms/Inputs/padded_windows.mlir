// Window ops over pads for peel-padded-windows.mlir's --check runs.
func.func @dw_s1(%x: tensor<?x4x9x11xf32>, %k: tensor<4x3x3xf32>) -> tensor<?x4x9x11xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x9x11xf32>
  %pv = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x4x9x11xf32> to tensor<?x4x11x13xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x4x9x11xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x9x11xf32>) -> tensor<?x4x9x11xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x4x11x13xf32>, tensor<4x3x3xf32>) outs(%f : tensor<?x4x9x11xf32>) -> tensor<?x4x9x11xf32>
  return %r : tensor<?x4x9x11xf32>
}
func.func @dw_s2(%x: tensor<?x4x13x16xf32>, %k: tensor<4x3x3xf32>) -> tensor<?x4x7x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x13x16xf32>
  %pv = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x4x13x16xf32> to tensor<?x4x15x18xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x4x7x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x7x8xf32>) -> tensor<?x4x7x8xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %k : tensor<?x4x15x18xf32>, tensor<4x3x3xf32>) outs(%f : tensor<?x4x7x8xf32>) -> tensor<?x4x7x8xf32>
  return %r : tensor<?x4x7x8xf32>
}
func.func @dw_dil(%x: tensor<?x3x10x7xf32>, %k: tensor<3x3x3xf32>) -> tensor<?x3x10x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x10x7xf32>
  %pv = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x3x10x7xf32> to tensor<?x3x14x11xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x3x10x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x3x10x7xf32>) -> tensor<?x3x10x7xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x3x14x11xf32>, tensor<3x3x3xf32>) outs(%f : tensor<?x3x10x7xf32>) -> tensor<?x3x10x7xf32>
  return %r : tensor<?x3x10x7xf32>
}
func.func @dw_asym(%x: tensor<?x2x6x7xf32>, %k: tensor<2x3x2xf32>) -> tensor<?x2x6x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x6x7xf32>
  %pv = arith.constant 0.25 : f32
  %p = tensor.pad %x low[0, 0, 0, 2] high[0, 0, 2, 0] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x2x6x7xf32> to tensor<?x2x8x9xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x2x6x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x6x8xf32>) -> tensor<?x2x6x8xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x2x8x9xf32>, tensor<2x3x2xf32>) outs(%f : tensor<?x2x6x8xf32>) -> tensor<?x2x6x8xf32>
  return %r : tensor<?x2x6x8xf32>
}
func.func @dw_tiny(%x: tensor<?x2x2x2xf32>, %k: tensor<2x3x3xf32>) -> tensor<?x2x2x2xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x2x2xf32>
  %pv = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x2x2x2xf32> to tensor<?x2x4x4xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x2x2x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x2x4x4xf32>, tensor<2x3x3xf32>) outs(%f : tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
  return %r : tensor<?x2x2x2xf32>
}
func.func @maxpool(%x: tensor<?x3x11x9xf32>) -> tensor<?x3x6x5xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x11x9xf32>
  %pv = arith.constant -3.4e38 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x3x11x9xf32> to tensor<?x3x13x11xf32>
  %z = arith.constant -3.4e38 : f32
  %e = tensor.empty(%n) : tensor<?x3x6x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x3x6x5xf32>) -> tensor<?x3x6x5xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %w : tensor<?x3x13x11xf32>, tensor<3x3xf32>) outs(%f : tensor<?x3x6x5xf32>) -> tensor<?x3x6x5xf32>
  return %r : tensor<?x3x6x5xf32>
}
func.func @sumpool(%x: tensor<?x3x8x8xf32>) -> tensor<?x3x4x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %pv = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 0, 0] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x3x8x8xf32> to tensor<?x3x9x9xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x3x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x3x4x4xf32>) -> tensor<?x3x4x4xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %w : tensor<?x3x9x9xf32>, tensor<2x2xf32>) outs(%f : tensor<?x3x4x4xf32>) -> tensor<?x3x4x4xf32>
  return %r : tensor<?x3x4x4xf32>
}
func.func @dw_static(%x: tensor<2x3x6x6xf32>, %k: tensor<3x3x3xf32>) -> tensor<2x3x6x6xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<2x3x6x6xf32> to tensor<2x3x8x8xf32>
  %e = tensor.empty() : tensor<2x3x6x6xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<2x3x8x8xf32>, tensor<3x3x3xf32>) outs(%f : tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xf32>
  return %r : tensor<2x3x6x6xf32>
}
// A depthwise conv (17 channels: the channel loop's chunks of 1 and 2) followed by a
// BatchNorm-like per-channel scale and shift, a per-element residual and a ReLU6: the
// consumer moves into the plane loop.
func.func @dw_bn(%x: tensor<?x17x9x10xf32>, %k: tensor<17x3x3xf32>, %s: tensor<17x1x1xf32>, %t: tensor<17x1x1xf32>, %res: tensor<?x17x5x5xf32>) -> tensor<?x17x5x5xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x17x9x10xf32>
  %z = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x17x9x10xf32> to tensor<?x17x11x12xf32>
  %e = tensor.empty(%n) : tensor<?x17x5x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x17x5x5xf32>) -> tensor<?x17x5x5xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %k : tensor<?x17x11x12xf32>, tensor<17x3x3xf32>) outs(%f : tensor<?x17x5x5xf32>) -> tensor<?x17x5x5xf32>
  %e2 = tensor.empty(%n) : tensor<?x17x5x5xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %s, %t, %res : tensor<?x17x5x5xf32>, tensor<17x1x1xf32>, tensor<17x1x1xf32>, tensor<?x17x5x5xf32>) outs(%e2 : tensor<?x17x5x5xf32>) {
  ^bb0(%a: f32, %sc: f32, %sh: f32, %rr: f32, %o: f32):
    %m = arith.mulf %a, %sc : f32
    %b = arith.addf %m, %sh : f32
    %c = arith.addf %b, %rr : f32
    %lo = arith.maximumf %c, %z : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<?x17x5x5xf32>
  return %g : tensor<?x17x5x5xf32>
}
// An init that is read (accumulated into, not a fill): the pieces write the plane's
// slice of the loop's result, which starts as the init.
func.func @dw_acc(%x: tensor<?x3x8x8xf32>, %k: tensor<3x3x3xf32>, %o: tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x3x8x8xf32> to tensor<?x3x10x10xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x3x10x10xf32>, tensor<3x3x3xf32>) outs(%o : tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32>
  return %r : tensor<?x3x8x8xf32>
}
// The same with a consumer that reads a scalar: the init is sliced per plane, the scalar
// passed as it is.
func.func @dw_acc_scalar(%x: tensor<?x3x8x8xf32>, %k: tensor<3x3x3xf32>, %o: tensor<?x3x8x8xf32>, %s: f32) -> tensor<?x3x8x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x3x8x8xf32> to tensor<?x3x10x10xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x3x10x10xf32>, tensor<3x3x3xf32>) outs(%o : tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x3x8x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %s : tensor<?x3x8x8xf32>, f32) outs(%e : tensor<?x3x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?x3x8x8xf32>
  return %g : tensor<?x3x8x8xf32>
}
// Stride 1 with the consumer (a dilation in the rows, asymmetric padding): the flat form,
// the consumer reading the flat result by row pitch.
func.func @dw_bn1(%x: tensor<?x5x7x9xf32>, %k: tensor<5x3x2xf32>, %s: tensor<5x1x1xf32>, %t: tensor<5x1x1xf32>, %res: tensor<?x5x5x9xf32>) -> tensor<?x5x5x9xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x5x7x9xf32>
  %z = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 0] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x5x7x9xf32> to tensor<?x5x9x10xf32>
  %e = tensor.empty(%n) : tensor<?x5x5x9xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x5x5x9xf32>) -> tensor<?x5x5x9xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<[2, 1]> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x5x9x10xf32>, tensor<5x3x2xf32>) outs(%f : tensor<?x5x5x9xf32>) -> tensor<?x5x5x9xf32>
  %e2 = tensor.empty(%n) : tensor<?x5x5x9xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %s, %t, %res : tensor<?x5x5x9xf32>, tensor<5x1x1xf32>, tensor<5x1x1xf32>, tensor<?x5x5x9xf32>) outs(%e2 : tensor<?x5x5x9xf32>) {
  ^bb0(%a: f32, %sc: f32, %sh: f32, %rr: f32, %o: f32):
    %m = arith.mulf %a, %sc : f32
    %b = arith.addf %m, %sh : f32
    %c = arith.addf %b, %rr : f32
    %lo = arith.maximumf %c, %z : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<?x5x5x9xf32>
  return %g : tensor<?x5x5x9xf32>
}
// A stride-1 max pooling: the flat form with the pooling's body and its padding value.
func.func @maxpool_s1(%x: tensor<?x3x6x5xf32>) -> tensor<?x3x6x5xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x6x5xf32>
  %pv = arith.constant -3.4e38 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x3x6x5xf32> to tensor<?x3x8x7xf32>
  %e = tensor.empty(%n) : tensor<?x3x6x5xf32>
  %f = linalg.fill ins(%pv : f32) outs(%e : tensor<?x3x6x5xf32>) -> tensor<?x3x6x5xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<?x3x8x7xf32>, tensor<3x3xf32>) outs(%f : tensor<?x3x6x5xf32>) -> tensor<?x3x6x5xf32>
  return %r : tensor<?x3x6x5xf32>
}
// A dilation of 2^62 over a kernel row of 1 (valid: the rows' dilation multiplies a
// kernel extent of 0): the flat form's row step (dilation x padded width) does not fit
// in i64, so the op stays pieces.
func.func @dw_hugedil(%x: tensor<?x2x4x6xf32>, %k: tensor<2x1x3xf32>) -> tensor<?x2x4x6xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x4x6xf32>
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 0, 1] high[0, 0, 0, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x2x4x6xf32> to tensor<?x2x4x8xf32>
  %e = tensor.empty(%n) : tensor<?x2x4x6xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x4x6xf32>) -> tensor<?x2x4x6xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<[4611686018427387904, 1]> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x2x4x8xf32>, tensor<2x1x3xf32>) outs(%f : tensor<?x2x4x6xf32>) -> tensor<?x2x4x6xf32>
  return %r : tensor<?x2x4x6xf32>
}
// In vectors over phase planes (a filled init, a consumer read per channel): stride 2,
// its four phases; stride 1 with an odd output width (rows copied out in 8 + 4 + 2 + 1
// lanes); strides 2 x 3 with a dilation of 2 and asymmetric padding (phases of rows 0
// and 1, columns 0, 1 and 2, some read by no tap).
func.func @dw_bn_s2(%x: tensor<?x3x13x16xf32>, %k: tensor<3x3x3xf32>, %s: tensor<3x1x1xf32>, %t: tensor<3x1x1xf32>) -> tensor<?x3x7x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x13x16xf32>
  %z = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x3x13x16xf32> to tensor<?x3x15x18xf32>
  %e = tensor.empty(%n) : tensor<?x3x7x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x3x7x8xf32>) -> tensor<?x3x7x8xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %k : tensor<?x3x15x18xf32>, tensor<3x3x3xf32>) outs(%f : tensor<?x3x7x8xf32>) -> tensor<?x3x7x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x3x7x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %s, %t : tensor<?x3x7x8xf32>, tensor<3x1x1xf32>, tensor<3x1x1xf32>) outs(%e2 : tensor<?x3x7x8xf32>) {
  ^bb0(%a: f32, %sc: f32, %sh: f32, %o: f32):
    %m = arith.mulf %a, %sc : f32
    %b = arith.addf %m, %sh : f32
    %c = arith.cmpf ogt, %b, %z : f32
    %lo = arith.select %c, %b, %z : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<?x3x7x8xf32>
  return %g : tensor<?x3x7x8xf32>
}
func.func @dw_bn_odd(%x: tensor<?x2x6x15xf32>, %k: tensor<2x3x3xf32>, %s: tensor<2x1x1xf32>) -> tensor<?x2x6x15xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x6x15xf32>
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x2x6x15xf32> to tensor<?x2x8x17xf32>
  %one = arith.constant 1.0 : f32
  %e = tensor.empty(%n) : tensor<?x2x6x15xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<?x2x6x15xf32>) -> tensor<?x2x6x15xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x2x8x17xf32>, tensor<2x3x3xf32>) outs(%f : tensor<?x2x6x15xf32>) -> tensor<?x2x6x15xf32>
  %e2 = tensor.empty(%n) : tensor<?x2x6x15xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %s : tensor<?x2x6x15xf32>, tensor<2x1x1xf32>) outs(%e2 : tensor<?x2x6x15xf32>) {
  ^bb0(%a: f32, %sc: f32, %o: f32):
    %m = arith.mulf %a, %sc : f32
    %h = arith.constant 0.5 : f32
    %b = arith.subf %m, %h : f32
    linalg.yield %b : f32
  } -> tensor<?x2x6x15xf32>
  return %g : tensor<?x2x6x15xf32>
}
func.func @dw_s23(%x: tensor<?x2x11x14xf32>, %k: tensor<2x2x3xf32>) -> tensor<?x2x5x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x11x14xf32>
  %pv = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 0, 2] high[0, 0, 1, 0] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x2x11x14xf32> to tensor<?x2x12x16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x2x5x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x5x4xf32>) -> tensor<?x2x5x4xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : vector<2xi64>, strides = dense<[2, 3]> : vector<2xi64>} ins(%p, %k : tensor<?x2x12x16xf32>, tensor<2x2x3xf32>) outs(%f : tensor<?x2x5x4xf32>) -> tensor<?x2x5x4xf32>
  return %r : tensor<?x2x5x4xf32>
}
// Stride 2 over an odd width (7): phase 1 holds image columns 0, 2, 4, 6, whose 8 columns
// from the first or to the last leave the row; copied as two blocks of 2 lanes.
func.func @dw_s2_w7(%x: tensor<?x2x7x7xf32>, %k: tensor<2x3x3xf32>) -> tensor<?x2x4x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x7x7xf32>
  %pv = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x2x7x7xf32> to tensor<?x2x9x9xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x2x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x4x4xf32>) -> tensor<?x2x4x4xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %k : tensor<?x2x9x9xf32>, tensor<2x3x3xf32>) outs(%f : tensor<?x2x4x4xf32>) -> tensor<?x2x4x4xf32>
  return %r : tensor<?x2x4x4xf32>
}
// An f16 filter on an f32 image and output (the op casts in its body): not in vectors.
func.func @dw_f16(%x: tensor<?x2x8x8xf32>, %k: tensor<2x3x3xf16>) -> tensor<?x2x8x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x8x8xf32>
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x2x8x8xf32> to tensor<?x2x10x10xf32>
  %e = tensor.empty(%n) : tensor<?x2x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x8x8xf32>) -> tensor<?x2x8x8xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x2x10x10xf32>, tensor<2x3x3xf16>) outs(%f : tensor<?x2x8x8xf32>) -> tensor<?x2x8x8xf32>
  return %r : tensor<?x2x8x8xf32>
}
// Max poolings in two passes of vectors (separable): ResNet-50's 3x3 stride-2 window over
// a width of 37 (two 16-lane blocks in the loop, then 4 + 1 lanes), with a ReLU6 consumer
// and a padding value that is not the lowest (it joins the edge rows' maxima).
func.func @mp_relu(%x: tensor<?x2x9x37xf32>) -> tensor<?x2x5x19xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x9x37xf32>
  %pv = arith.constant -0.25 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x2x9x37xf32> to tensor<?x2x11x39xf32>
  %z = arith.constant 0xFF800000 : f32
  %e = tensor.empty(%n) : tensor<?x2x5x19xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x5x19xf32>) -> tensor<?x2x5x19xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %w : tensor<?x2x11x39xf32>, tensor<3x3xf32>) outs(%f : tensor<?x2x5x19xf32>) -> tensor<?x2x5x19xf32>
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e2 = tensor.empty(%n) : tensor<?x2x5x19xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : tensor<?x2x5x19xf32>) outs(%e2 : tensor<?x2x5x19xf32>) {
  ^bb0(%a: f32, %o: f32):
    %lo = arith.maximumf %a, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<?x2x5x19xf32>
  return %g : tensor<?x2x5x19xf32>
}
// Strides 3 x 1, dilations 2 x 3, a 2x4 window, asymmetric padding: an edge row at the
// top (the interior is rows 1-3 of 4), column reads at each tap's offset.
func.func @mp_dil(%x: tensor<?x3x10x20xf32>) -> tensor<?x3x4x17xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x10x20xf32>
  %pv = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 2, 3] high[0, 0, 1, 3] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x3x10x20xf32> to tensor<?x3x13x26xf32>
  %e = tensor.empty(%n) : tensor<?x3x4x17xf32>
  %f = linalg.fill ins(%pv : f32) outs(%e : tensor<?x3x4x17xf32>) -> tensor<?x3x4x17xf32>
  %w = tensor.empty() : tensor<2x4xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<[2, 3]> : vector<2xi64>, strides = dense<[3, 1]> : vector<2xi64>} ins(%p, %w : tensor<?x3x13x26xf32>, tensor<2x4xf32>) outs(%f : tensor<?x3x4x17xf32>) -> tensor<?x3x4x17xf32>
  return %r : tensor<?x3x4x17xf32>
}
// A padding value above most inputs (0.5; the fill is -inf) and no consumer: the padding
// joins the maxima of the first and last output rows and of the first and last columns
// only (an interior row taken for a padded one, or the padding for the fill, gives 0.5
// where the window's maximum is below it).
func.func @mp_pad(%x: tensor<?x2x9x20xf32>) -> tensor<?x2x5x10xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x9x20xf32>
  %pv = arith.constant 0.5 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x2x9x20xf32> to tensor<?x2x11x22xf32>
  %z = arith.constant 0xFF800000 : f32
  %e = tensor.empty(%n) : tensor<?x2x5x10xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x5x10xf32>) -> tensor<?x2x5x10xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %w : tensor<?x2x11x22xf32>, tensor<3x3xf32>) outs(%f : tensor<?x2x5x10xf32>) -> tensor<?x2x5x10xf32>
  return %r : tensor<?x2x5x10xf32>
}
