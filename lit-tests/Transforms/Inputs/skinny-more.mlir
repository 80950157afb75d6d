// Inputs of Transforms/skinny-n.mlir: a skinny dense layer with a fused epilogue (bias and
// ReLU), and a batched GEMV (the skinny rule is for contractions run once per call, so a
// batch's GEMM keeps the broadcast tiles; results must match either way).
func.func @dense(%x: tensor<?x96xf32>, %w: tensor<96x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x96xf32>
  %n = tensor.dim %w, %c1 : tensor<96x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x96xf32>, tensor<96x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%r, %bias : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.maximumf %s, %z : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %o : tensor<?x?xf32>
}

func.func @bmv(%x: tensor<?x?x?xf32>, %w: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %n = tensor.dim %w, %c2 : tensor<?x?x?xf32>
  %e = tensor.empty(%b, %m, %n) : tensor<?x?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %r = linalg.batch_matmul ins(%x, %w : tensor<?x?x?xf32>, tensor<?x?x?xf32>) outs(%f : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}
