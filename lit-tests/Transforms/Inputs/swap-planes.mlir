func.func @p(%x: tensor<?x64x32x32xf32>) -> tensor<64x?x32x32xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64x32x32xf32>
  %e = tensor.empty(%n) : tensor<64x?x32x32xf32>
  %r = linalg.transpose ins(%x : tensor<?x64x32x32xf32>) outs(%e : tensor<64x?x32x32xf32>) permutation = [1, 0, 2, 3]
  return %r : tensor<64x?x32x32xf32>
}
