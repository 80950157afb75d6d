// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @bad_plan(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'ukernel.patch' op 'm_plan' residue 3 uses tile 3, which is not a tile size}}
  %0 = ukernel.patch "matmul" target("zen4") tiles [4x16, 1x16] cache(kc = 64, mc = 128, nc = 256) m_plan(4 | 0:- 1:1 2:1+1 3:3) n_plan(16 | 0:- 1:- 2:- 3:- 4:- 5:- 6:- 7:- 8:- 9:- 10:- 11:- 12:- 13:- 14:- 15:-) maps [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] iterators ["parallel", "parallel", "reduction"] ins(%a, %b : tensor<?x8xf32>, tensor<8x16xf32>) outs(%c : tensor<?x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    ukernel.yield %z : f32
  } -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @bad_tiles(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'ukernel.patch' op 'n_plan' main tile 32 is not a tile size}}
  %0 = ukernel.patch "matmul" target("zen4") tiles [1x16] cache(kc = 64, mc = 128, nc = 256) m_plan(1 |) n_plan(32 static 64 | 0:-) maps [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] iterators ["parallel", "parallel", "reduction"] ins(%a, %b : tensor<?x8xf32>, tensor<8x16xf32>) outs(%c : tensor<?x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    ukernel.yield %z : f32
  } -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
