// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// CHECK: ukernel.patch "matmul" target("zen4") tiles [4x16, 2x16, 1x16] cache(kc = 64, mc = 128, nc = 256) m_plan(4 | 0:- 1:1 2:2 3:2+1) n_plan(16 static 16 | 0:-)
func.func @p(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %0 = ukernel.patch "matmul" target("zen4") tiles [4x16, 2x16, 1x16] cache(kc = 64, mc = 128, nc = 256)
      m_plan(4 | 0:- 1:1 2:2 3:2+1) n_plan(16 static 16 | 0:-)
      maps [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      iterators ["parallel", "parallel", "reduction"]
      ins(%a, %b : tensor<?x8xf32>, tensor<8x16xf32>) outs(%c : tensor<?x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    ukernel.yield %s : f32
  } -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
