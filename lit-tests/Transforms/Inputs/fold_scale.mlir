// Convolutions followed by inference BatchNorm as torch.export'ed CNNs leave them after
// linalg-fuse-elementwise-ops (fold-scale-into-conv.mlir).
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#sc = affine_map<(d0, d1, d2, d3) -> ()>

// BatchNorm and ReLU after a 3x3 conv.
func.func @conv_bn(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32> {ftuner.weight}, %m: tensor<4xf32> {ftuner.weight}, %r: tensor<4xf32> {ftuner.weight}, %g: tensor<4xf32> {ftuner.weight}, %b: tensor<4xf32> {ftuner.weight}) -> tensor<?x4x6x6xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x6x6xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %m3 = tensor.expand_shape %m [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %r3 = tensor.expand_shape %r [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %g3 = tensor.expand_shape %g [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %b3 = tensor.expand_shape %b [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #ch, #ch, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %m3, %r3, %g3, %b3 : tensor<?x4x6x6xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x6x6xf32>) {
  ^bb0(%in: f32, %im: f32, %ir: f32, %ig: f32, %ib: f32, %out: f32):
    %0 = arith.subf %in, %im : f32
    %1 = arith.mulf %0, %ir : f32
    %2 = arith.mulf %1, %ig : f32
    %3 = arith.addf %2, %ib : f32
    %4 = arith.cmpf ugt, %3, %z : f32
    %5 = arith.select %4, %3, %z : f32
    linalg.yield %5 : f32
  } -> tensor<?x4x6x6xf32>
  return %y : tensor<?x4x6x6xf32>
}

// BatchNorm and ReLU6 after a stride-2 depthwise conv (the clamp's bounds as 0-d tensors,
// as torch-mlir writes them).
func.func @dw_bn6(%x: tensor<?x4x9x9xf32>, %w: tensor<4x3x3xf32> {ftuner.weight}, %m: tensor<4xf32> {ftuner.weight}, %r: tensor<4xf32> {ftuner.weight}, %g: tensor<4xf32> {ftuner.weight}, %b: tensor<4xf32> {ftuner.weight}) -> tensor<?x4x4x4xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %lo = arith.constant dense<0.0> : tensor<f32>
  %hi = arith.constant dense<6.0> : tensor<f32>
  %n = tensor.dim %x, %c0 : tensor<?x4x9x9xf32>
  %e = tensor.empty(%n) : tensor<?x4x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<?x4x9x9xf32>, tensor<4x3x3xf32>) outs(%f : tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32>
  %m3 = tensor.expand_shape %m [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %r3 = tensor.expand_shape %r [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %g3 = tensor.expand_shape %g [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %b3 = tensor.expand_shape %b [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %y = linalg.generic {indexing_maps = [#sc, #id, #ch, #ch, #ch, #ch, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi, %c, %m3, %r3, %g3, %b3, %lo : tensor<f32>, tensor<?x4x4x4xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<f32>) outs(%e : tensor<?x4x4x4xf32>) {
  ^bb0(%ih: f32, %in: f32, %im: f32, %ir: f32, %ig: f32, %ib: f32, %il: f32, %out: f32):
    %0 = arith.subf %in, %im : f32
    %1 = arith.mulf %0, %ir : f32
    %2 = arith.mulf %1, %ig : f32
    %3 = arith.addf %2, %ib : f32
    %4 = arith.cmpf ogt, %3, %il : f32
    %5 = arith.select %4, %3, %il : f32
    %6 = arith.cmpf olt, %ih, %5 : f32
    %7 = arith.select %6, %ih, %5 : f32
    linalg.yield %7 : f32
  } -> tensor<?x4x4x4xf32>
  return %y : tensor<?x4x4x4xf32>
}

// Every step the chain knows (a division, a negation, a subtraction from a channel value,
// a constant scale) before a residual add: the chain stops at the residual.
func.func @steps(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x1x1xf32> {ftuner.weight}, %d: tensor<4xf32> {ftuner.weight}, %s: tensor<4xf32> {ftuner.weight}, %res: tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x3x8x8xf32>, tensor<4x3x1x1xf32>) outs(%f : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %d3 = tensor.expand_shape %d [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %s3 = tensor.expand_shape %s [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #ch, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %d3, %s3, %res : tensor<?x4x8x8xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<?x4x8x8xf32>) outs(%e : tensor<?x4x8x8xf32>) {
  ^bb0(%in: f32, %id: f32, %is: f32, %ir: f32, %out: f32):
    %0 = arith.divf %in, %id : f32
    %1 = arith.negf %0 : f32
    %2 = arith.subf %is, %1 : f32
    %3 = arith.mulf %half, %2 : f32
    %4 = arith.addf %3, %ir : f32
    %5 = arith.mulf %4, %is : f32
    linalg.yield %5 : f32
  } -> tensor<?x4x8x8xf32>
  return %y : tensor<?x4x8x8xf32>
}
