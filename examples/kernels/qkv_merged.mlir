// BERT's Q, K and V projections merged into one matmul against the three weights side by
// side, 768x2304 (docs/ollie.md, "Expression merging"); qkv_separate.mlir is the unmerged form.
func.func @qkv(%x: tensor<?x768xf32>, %w: tensor<768x2304xf32>) -> tensor<?x2304xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?x768xf32>
  %e = tensor.empty(%d) : tensor<?x2304xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  %1 = linalg.matmul ins(%x, %w : tensor<?x768xf32>, tensor<768x2304xf32>) outs(%f : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  return %1 : tensor<?x2304xf32>
}
