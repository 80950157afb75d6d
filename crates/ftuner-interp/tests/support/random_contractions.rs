//! Contractions and shape generators shared by the random-shape tests of the lowering
//! (ftuner-interp) and of compiled code (ftuner-runtime, through `#[path]`).

#![allow(dead_code)]

use ftuner_interp::{run, RtVal, Tensor};
use ftuner_ir::{parse_module, ParsedModule, Type};
use proptest::prelude::*;
use std::rc::Rc;

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

/// A dense layer: matmul, then a bias broadcast along N and added, then ReLU — the
/// elementwise tail `patch-ukernels` absorbs into the patch's epilogue.
pub const MATMUL_BIAS_RELU: &str = r#"
#mn = affine_map<(m, n) -> (m, n)>
#n = affine_map<(m, n) -> (n)>
func.func @dense(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  %bb = linalg.generic {indexing_maps = [#n, #mn], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [#mn, #mn, #mn], iterator_types = ["parallel", "parallel"]} ins(%mm, %bb : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %zz = arith.constant 0.0 : f32
    %t = arith.maximumf %x, %zz : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
"#;

/// A 1x1 convolution's shape of matmul (K = 16 static: one k block, so the epilogue runs
/// in registers, `lower/vector_epilogue.rs`) with MobileNetV2's epilogue: BatchNorm per
/// row (channel), a residual per element, ReLU6 as compare-and-select.
pub const MATMUL_K16_BN_RELU6: &str = r#"
#mn = affine_map<(m, n) -> (m, n)>
#m = affine_map<(m, n) -> (m)>
func.func @pointwise(%w: tensor<?x16xf32>, %x: tensor<16x?xf32>, %mean: tensor<?xf32>, %scale: tensor<?xf32>, %res: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %w, %c0 : tensor<?x16xf32>
  %n = tensor.dim %x, %c1 : tensor<16x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%w, %x : tensor<?x16xf32>, tensor<16x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#mn, #m, #m, #mn, #mn], iterator_types = ["parallel", "parallel"]} ins(%mm, %mean, %scale, %res : tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%y: f32, %mu: f32, %s: f32, %q: f32, %o: f32):
    %six = arith.constant 6.0 : f32
    %d = arith.subf %y, %mu : f32
    %t = arith.mulf %d, %s : f32
    %u = arith.addf %t, %q : f32
    %gt = arith.cmpf ogt, %u, %z : f32
    %lo = arith.select %gt, %u, %z : f32
    %lt = arith.cmpf olt, %lo, %six : f32
    %hi = arith.select %lt, %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
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
    Tensor::from_f64(shape, Type::f32(), data)
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

/// A module as read and after a pass pipeline.
pub struct Lowered {
    pub ctx: ftuner_ir::Context,
    pub original: ParsedModule,
    pub lowered: ParsedModule,
}

/// Parse `src` twice and run `pipeline` (ftuner's passes) on the second copy.
pub fn lower(src: &str, pipeline: &str) -> Lowered {
    let ctx = ftuner_transforms::context();
    let original = parse_module(&ctx, src, "t.mlir").unwrap();
    let mut lowered = parse_module(&ctx, src, "t.mlir").unwrap();
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    ftuner_ukernel::register_passes(&mut reg);
    let mut pm = ftuner_pass::PassManager::from_pipeline(&reg, pipeline).unwrap();
    pm.run(&ctx, &mut lowered.ir, lowered.top).unwrap();
    Lowered {
        ctx,
        original,
        lowered,
    }
}

impl Lowered {
    /// Names of all ops of the lowered module.
    pub fn lowered_ops(&self) -> Vec<&'static str> {
        let mut names = vec![];
        let ir = &self.lowered.ir;
        ir.walk_pre(self.lowered.top, &mut |o| names.push(ir.name(o)));
        names
    }
}

/// Function `f` of `m` on the reference interpreter; its first result.
pub fn call(c: &Lowered, m: &ParsedModule, f: &str, args: &[Tensor]) -> Tensor {
    let args = args
        .iter()
        .map(|t| RtVal::Tensor(Rc::new(t.clone())))
        .collect();
    let out = run(&c.ctx, &m.ir, m.top, f, args).unwrap();
    out[0].tensor().unwrap().clone()
}

fn runner(cases: u32) -> proptest::test_runner::TestRunner {
    proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases,
        ..proptest::test_runner::Config::default()
    })
}

/// `@mm` (MATMUL) as read and lowered agree exactly at random extents (K up to `kmax`).
pub fn check_matmuls(c: &Lowered, label: &str, cases: u32, kmax: usize) {
    runner(cases)
        .run(
            &(extent(), extent(), 0usize..=kmax, any::<u64>()),
            |(m, n, k, seed)| {
                let a = tensor(vec![m, k], seed);
                let b = tensor(vec![k, n], seed.rotate_left(17));
                let want = call(c, &c.original, "mm", &[a.clone(), b.clone()]);
                let got = call(c, &c.lowered, "mm", &[a, b]);
                prop_assert_eq!(got, want, "{} m={} n={} k={}", label, m, n, k);
                Ok(())
            },
        )
        .unwrap();
}

/// `@bmm` (BMM_NT) as read and lowered agree exactly at random extents.
pub fn check_bmms(c: &Lowered, label: &str, cases: u32) {
    runner(cases)
        .run(
            &(0usize..=3, extent(), extent(), 0usize..=3, any::<u64>()),
            |(bs, m, n, k, seed)| {
                let a = tensor(vec![bs, m, k], seed);
                let b = tensor(vec![bs, n, k], seed.rotate_left(29));
                let want = call(c, &c.original, "bmm", &[a.clone(), b.clone()]);
                let got = call(c, &c.lowered, "bmm", &[a, b]);
                prop_assert_eq!(got, want, "{} b={} m={} n={} k={}", label, bs, m, n, k);
                Ok(())
            },
        )
        .unwrap();
}

/// `@conv` (CONV: dilation 2 on H, stride 2 on W, 3x3 window, accumulating onto `%o`) as
/// read and lowered agree exactly at random extents.
pub fn check_convs(c: &Lowered, label: &str, cases: u32) {
    let dims = (0usize..=2, 1usize..=3, 0usize..=5, 0usize..=6, 0usize..=40);
    runner(cases)
        .run(&(dims, any::<u64>()), |((n, ch, oh, ow, f), seed)| {
            let (h, w) = (oh + 4, 2 * ow + 2);
            let x = tensor(vec![n, ch, h, w], seed);
            let wt = tensor(vec![f, ch, 3, 3], seed.rotate_left(9));
            let o = tensor(vec![n, f, oh, ow], seed.rotate_left(21));
            let args = [x, wt, o];
            let want = call(c, &c.original, "conv", &args);
            let got = call(c, &c.lowered, "conv", &args);
            prop_assert_eq!(
                got,
                want,
                "{} n={} c={} oh={} ow={} f={}",
                label,
                n,
                ch,
                oh,
                ow,
                f
            );
            Ok(())
        })
        .unwrap();
}

/// `@dense` (MATMUL_BIAS_RELU) as read and lowered agree exactly at random extents (K up
/// to `kmax`).
pub fn check_dense_layers(c: &Lowered, label: &str, cases: u32, kmax: usize) {
    runner(cases)
        .run(
            &(
                extent(),
                extent(),
                prop_oneof![Just(0usize), Just(1usize), 0usize..=kmax],
                any::<u64>(),
            ),
            |(m, n, k, seed)| {
                let a = tensor(vec![m, k], seed);
                let b = tensor(vec![k, n], seed.rotate_left(17));
                let bias = tensor(vec![n], seed.rotate_left(33));
                let args = [a, b, bias];
                let want = call(c, &c.original, "dense", &args);
                let got = call(c, &c.lowered, "dense", &args);
                prop_assert_eq!(got, want, "{} m={} n={} k={}", label, m, n, k);
                Ok(())
            },
        )
        .unwrap();
}

/// `@pointwise` (MATMUL_K16_BN_RELU6) as read and lowered agree exactly at random M, N.
pub fn check_pointwise(c: &Lowered, label: &str, cases: u32) {
    runner(cases)
        .run(&(extent(), extent(), any::<u64>()), |(m, n, seed)| {
            let args = [
                tensor(vec![m, 16], seed),
                tensor(vec![16, n], seed.rotate_left(11)),
                tensor(vec![m], seed.rotate_left(22)),
                tensor(vec![m], seed.rotate_left(33)),
                tensor(vec![m, n], seed.rotate_left(44)),
            ];
            let want = call(c, &c.original, "pointwise", &args);
            let got = call(c, &c.lowered, "pointwise", &args);
            prop_assert_eq!(got, want, "{} m={} n={}", label, m, n);
            Ok(())
        })
        .unwrap();
}
