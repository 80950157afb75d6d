//! Contractions and shape generators shared by the random-shape tests of the lowering
//! (ftuner-interp) and of compiled code (ftuner-runtime, through `#[path]`).

#![allow(dead_code)]

use ftuner_interp::Tensor;
use ftuner_ir::Type;
use proptest::prelude::*;

pub const MATMUL: &str = include_str!("../../../../examples/kernels/matmul_dynamic.mlir");

pub const BMM_NT: &str = r#"
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
"#;

pub const CONV: &str = r#"
func.func @conv(%x: tensor<?x?x?x?xf32>, %w: tensor<?x?x3x3xf32>, %o: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<[2, 1]> : vector<2xi64>, strides = dense<[1, 2]> : vector<2xi64>} ins(%x, %w : tensor<?x?x?x?xf32>, tensor<?x?x3x3xf32>) outs(%o : tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}
"#;

/// Integer-valued data: every f32 sum is exact, whatever the order.
pub fn tensor(shape: Vec<usize>, seed: u64) -> Tensor {
    let mut s = seed | 1;
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            // Small integers: every sum is exact in f32, whatever the order.
            ((s >> 40) % 7) as f64 - 3.0
        })
        .collect();
    Tensor::new(shape, Type::f32(), data)
}

/// Extents: 0, 1, primes, and every boundary ± 1 of the main tiles (14/32 CPU,
/// 256/128 GPU), up to 300.
pub fn extent() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0usize),
        Just(1usize),
        prop::sample::select(vec![
            2usize, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 97, 131, 257, 293
        ]),
        prop::sample::select(vec![14usize, 28, 32, 64, 128, 256])
            .prop_flat_map(|b| (b - 1)..=(b + 1)),
        1usize..=300,
    ]
}
