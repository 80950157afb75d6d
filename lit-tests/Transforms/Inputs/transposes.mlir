func.func @t(%x: tensor<1x?x12x64xf32>, %y: tensor<?x?xf64>, %z: tensor<?x5x?xi32>) -> (tensor<1x12x64x?xf32>, tensor<?x?xf64>, tensor<?x?x5xi32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %t = tensor.dim %x, %c1 : tensor<1x?x12x64xf32>
  %e = tensor.empty(%t) : tensor<1x12x64x?xf32>
  %r = linalg.transpose ins(%x : tensor<1x?x12x64xf32>) outs(%e : tensor<1x12x64x?xf32>) permutation = [0, 2, 3, 1]
  %a = tensor.dim %y, %c0 : tensor<?x?xf64>
  %b = tensor.dim %y, %c1 : tensor<?x?xf64>
  %e2 = tensor.empty(%b, %a) : tensor<?x?xf64>
  %r2 = linalg.transpose ins(%y : tensor<?x?xf64>) outs(%e2 : tensor<?x?xf64>) permutation = [1, 0]
  %p = tensor.dim %z, %c0 : tensor<?x5x?xi32>
  %q = tensor.dim %z, %c2 : tensor<?x5x?xi32>
  %e3 = tensor.empty(%q, %p) : tensor<?x?x5xi32>
  %r3 = linalg.transpose ins(%z : tensor<?x5x?xi32>) outs(%e3 : tensor<?x?x5xi32>) permutation = [2, 0, 1]
  return %r, %r2, %r3 : tensor<1x12x64x?xf32>, tensor<?x?xf64>, tensor<?x?x5xi32>
}
