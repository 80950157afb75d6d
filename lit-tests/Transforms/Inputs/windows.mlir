// Window ops for convert-linalg-to-loops' --check runs (see convert-linalg-to-loops.mlir).
func.func @dw1(%x: tensor<?x5x9x11xf32>, %k: tensor<5x3x3xf32>) -> tensor<?x5x7x9xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x5x9x11xf32>
  %z = arith.constant 0.5 : f32
  %e = tensor.empty(%n) : tensor<?x5x7x9xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x5x7x9xf32>) -> tensor<?x5x7x9xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : tensor<?x5x9x11xf32>, tensor<5x3x3xf32>) outs(%f : tensor<?x5x7x9xf32>) -> tensor<?x5x7x9xf32>
  return %r : tensor<?x5x7x9xf32>
}
func.func @dw2(%x: tensor<?x5x13x17xf32>, %k: tensor<5x3x3xf32>) -> tensor<?x5x6x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x5x13x17xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x5x6x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x5x6x8xf32>) -> tensor<?x5x6x8xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %k : tensor<?x5x13x17xf32>, tensor<5x3x3xf32>) outs(%f : tensor<?x5x6x8xf32>) -> tensor<?x5x6x8xf32>
  return %r : tensor<?x5x6x8xf32>
}
func.func @maxpool(%x: tensor<?x3x11x9xf32>) -> tensor<?x3x5x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x11x9xf32>
  %z = arith.constant -3.4e38 : f32
  %e = tensor.empty(%n) : tensor<?x3x5x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x3x5x4xf32>) -> tensor<?x3x5x4xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<?x3x11x9xf32>, tensor<3x3xf32>) outs(%f : tensor<?x3x5x4xf32>) -> tensor<?x3x5x4xf32>
  return %r : tensor<?x3x5x4xf32>
}
