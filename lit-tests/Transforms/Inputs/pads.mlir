// Pads for bufferize.mlir's --check runs: border-only fills (a padded dim at every
// position, low only, high only), and a whole fill (a padded dynamic dim).
func.func @border(%a: tensor<?x3x4x5xf32>) -> tensor<?x3x7x6xf32> {
  %z = arith.constant 0.5 : f32
  %p = tensor.pad %a low[0, 0, 1, 0] high[0, 0, 2, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x3x4x5xf32> to tensor<?x3x7x6xf32>
  return %p : tensor<?x3x7x6xf32>
}

func.func @corners(%a: tensor<3x4xf32>) -> tensor<6x7xf32> {
  %z = arith.constant -2.0 : f32
  %p = tensor.pad %a low[2, 1] high[1, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<3x4xf32> to tensor<6x7xf32>
  return %p : tensor<6x7xf32>
}

func.func @dynamic(%a: tensor<?x4xf32>) -> tensor<?x7xf32> {
  %z = arith.constant 0.5 : f32
  %p = tensor.pad %a low[1, 2] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<?x4xf32> to tensor<?x7xf32>
  return %p : tensor<?x7xf32>
}

// An unpadded dim whose source is dynamic and result static: a source of another size is a
// run-time error before anything is written.
func.func @unpadded_mismatch(%a: tensor<?x4xf32>) -> tensor<2x6xf32> {
  %z = arith.constant 0.5 : f32
  %p = tensor.pad %a low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<?x4xf32> to tensor<2x6xf32>
  return %p : tensor<2x6xf32>
}

// A padded dim whose result size is written `?`: the border takes the padded size.
func.func @dynamic_result(%a: tensor<4x4xf32>) -> tensor<?x?xf32> {
  %z = arith.constant 0.5 : f32
  %p = tensor.pad %a low[1, 0] high[2, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<4x4xf32> to tensor<?x?xf32>
  return %p : tensor<?x?xf32>
}

// NHWC: the padded dims (H, W) between unpadded ones; plane by plane over N, each plane
// with its channels.
func.func @nhwc(%a: tensor<?x4x5x3xf32>) -> tensor<?x6x8x3xf32> {
  %z = arith.constant -1.5 : f32
  %p = tensor.pad %a low[0, 1, 2, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x4x5x3xf32> to tensor<?x6x8x3xf32>
  return %p : tensor<?x6x8x3xf32>
}
