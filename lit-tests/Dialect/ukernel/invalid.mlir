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

// -----

func.func @epi_reduction_dim(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x16xf32>, %bias: tensor<16xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'ukernel.patch' op epilogue map #0 uses reduction dim d2}}
  %0 = ukernel.patch "matmul" target("zen4") tiles [4x16, 2x16, 1x16] cache(kc = 64, mc = 128, nc = 256) m_plan(4 | 0:- 1:1 2:2 3:2+1) n_plan(16 static 16 | 0:-) maps [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] iterators ["parallel", "parallel", "reduction"] ins(%a, %b : tensor<?x8xf32>, tensor<8x16xf32>) outs(%c : tensor<?x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    ukernel.yield %z : f32
  } epilogue(ins(%bias : tensor<16xf32>) maps [affine_map<(d0, d1, d2) -> (d2)>]) {
  ^bb0(%acc: f32, %v: f32):
    %s = arith.addf %acc, %v : f32
    ukernel.yield %s : f32
  } -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @epi_map_count(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x16xf32>, %bias: tensor<16xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'ukernel.patch' op expects one epilogue map per epilogue operand (1), found 0}}
  %0 = ukernel.patch "matmul" target("zen4") tiles [4x16, 2x16, 1x16] cache(kc = 64, mc = 128, nc = 256) m_plan(4 | 0:- 1:1 2:2 3:2+1) n_plan(16 static 16 | 0:-) maps [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] iterators ["parallel", "parallel", "reduction"] ins(%a, %b : tensor<?x8xf32>, tensor<8x16xf32>) outs(%c : tensor<?x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    ukernel.yield %z : f32
  } epilogue(ins(%bias : tensor<16xf32>) maps []) {
  ^bb0(%acc: f32, %v: f32):
    ukernel.yield %acc : f32
  } -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @epi_args(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x16xf32>, %bias: tensor<16xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'ukernel.patch' op the epilogue takes 1 arguments, expected 2 (the output element, then one per operand)}}
  %0 = ukernel.patch "matmul" target("zen4") tiles [4x16, 2x16, 1x16] cache(kc = 64, mc = 128, nc = 256) m_plan(4 | 0:- 1:1 2:2 3:2+1) n_plan(16 static 16 | 0:-) maps [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] iterators ["parallel", "parallel", "reduction"] ins(%a, %b : tensor<?x8xf32>, tensor<8x16xf32>) outs(%c : tensor<?x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    ukernel.yield %z : f32
  } epilogue(ins(%bias : tensor<16xf32>) maps [affine_map<(d0, d1, d2) -> (d1)>]) {
  ^bb0(%acc: f32):
    ukernel.yield %acc : f32
  } -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @epi_rank(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x16xf32>, %bias: tensor<16xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'ukernel.patch' op epilogue map #0 has 2 results for an operand of rank 1}}
  %0 = ukernel.patch "matmul" target("zen4") tiles [4x16, 2x16, 1x16] cache(kc = 64, mc = 128, nc = 256) m_plan(4 | 0:- 1:1 2:2 3:2+1) n_plan(16 static 16 | 0:-) maps [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] iterators ["parallel", "parallel", "reduction"] ins(%a, %b : tensor<?x8xf32>, tensor<8x16xf32>) outs(%c : tensor<?x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    ukernel.yield %z : f32
  } epilogue(ins(%bias : tensor<16xf32>) maps [affine_map<(d0, d1, d2) -> (d0, d1)>]) {
  ^bb0(%acc: f32, %v: f32):
    ukernel.yield %acc : f32
  } -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
