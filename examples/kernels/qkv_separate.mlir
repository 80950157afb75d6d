// BERT's Q, K and V projections as three matmuls sharing their input (docs/ollie.md,
// "Expression merging"): the unmerged form. qkv_merged.mlir is the merged one.
func.func @qkv(%x: tensor<?x768xf32>, %w1: tensor<768x768xf32>, %w2: tensor<768x768xf32>, %w3: tensor<768x768xf32>) -> (tensor<?x768xf32>, tensor<?x768xf32>, tensor<?x768xf32>) {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?x768xf32>
  %e = tensor.empty(%d) : tensor<?x768xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?x768xf32>) -> tensor<?x768xf32>
  %1 = linalg.matmul ins(%x, %w1 : tensor<?x768xf32>, tensor<768x768xf32>) outs(%f : tensor<?x768xf32>) -> tensor<?x768xf32>
  %2 = linalg.matmul ins(%x, %w2 : tensor<?x768xf32>, tensor<768x768xf32>) outs(%f : tensor<?x768xf32>) -> tensor<?x768xf32>
  %3 = linalg.matmul ins(%x, %w3 : tensor<?x768xf32>, tensor<768x768xf32>) outs(%f : tensor<?x768xf32>) -> tensor<?x768xf32>
  return %1, %2, %3 : tensor<?x768xf32>, tensor<?x768xf32>, tensor<?x768xf32>
}
