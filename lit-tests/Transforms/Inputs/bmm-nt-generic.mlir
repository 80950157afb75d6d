// An NT batch-matmul with every dim dynamic (B read across its rows).

#q = affine_map<(b, m, n, k) -> (b, m, k)>
#k = affine_map<(b, m, n, k) -> (b, n, k)>
#o = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @bmm(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %bs = tensor.dim %a, %c0 : tensor<?x?x?xf32>
  %m = tensor.dim %a, %c1 : tensor<?x?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?x?xf32>
  %e = tensor.empty(%bs, %m, %n) : tensor<?x?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %r = linalg.generic {indexing_maps = [#q, #k, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<?x?x?xf32>, tensor<?x?x?xf32>) outs(%f : tensor<?x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}
