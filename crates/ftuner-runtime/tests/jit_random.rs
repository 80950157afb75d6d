//! Compiled code against the reference interpreter at random shapes: fully dynamic
//! matmul, NT batch-matmul and strided/dilated conv2d, each JIT-compiled once for this
//! machine (patch-ukernels{target=host}, lower-ukernels, bufferize, LLVM O3), then run at
//! shapes drawn from 0, 1, primes, every main-tile boundary ± 1 and uniform sizes up to
//! 300. Integer-valued data make every f32 sum exact, so results must be equal bit for
//! bit. 2,000 cases per run; `FTUNER_JIT_CASES=10000 cargo test --release -p
//! ftuner-runtime --test jit_random` runs 10,000.

use ftuner_interp::{run, RtVal, Tensor};
use ftuner_ir::{parse_module, Type};
use ftuner_runtime::Executable;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::rc::Rc;

const MATMUL: &str = r#"
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
"#;

const BMM_NT: &str = r#"
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

const CONV: &str = r#"
func.func @conv(%x: tensor<?x?x?x?xf32>, %w: tensor<?x?x3x3xf32>, %o: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<[2, 1]> : vector<2xi64>, strides = dense<[1, 2]> : vector<2xi64>} ins(%x, %w : tensor<?x?x?x?xf32>, tensor<?x?x3x3xf32>) outs(%o : tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}
"#;

struct Both {
    ctx: ftuner_ir::Context,
    original: ftuner_ir::ParsedModule,
    exe: Executable,
}

fn compile(src: &str) -> Both {
    let ctx = ftuner_dialects::context();
    let original = parse_module(&ctx, src, "t.mlir").unwrap();
    let mut m = parse_module(&ctx, src, "t.mlir").unwrap();
    ftuner_dialects::after_parse(&mut m.ir, m.top);
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    reg.register(|| Box::new(ftuner_ukernel::PatchUkernelsPass::default()));
    reg.register(|| Box::new(ftuner_ukernel::LowerUkernelsPass::default()));
    let mut pm = ftuner_pass::PassManager::from_pipeline(
        &reg,
        "builtin.module(patch-ukernels{target=host},lower-ukernels,canonicalize,cse)",
    )
    .unwrap();
    pm.run(&ctx, &mut m.ir, m.top).unwrap();
    let exe = Executable::compile(&ctx, &mut m.ir, m.top).unwrap();
    Both { ctx, original, exe }
}

fn tensor(shape: Vec<usize>, seed: u64) -> Tensor {
    let mut s = seed | 1;
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) % 7) as f64 - 3.0
        })
        .collect();
    Tensor::new(shape, Type::f32(), data)
}

/// (compiled, interpreted) results of `f` on `args`.
fn both(c: &Both, f: &str, args: &[Tensor]) -> (Tensor, Tensor) {
    let args: Vec<RtVal> = args
        .iter()
        .map(|t| RtVal::Tensor(Rc::new(t.clone())))
        .collect();
    let got = c.exe.call(f, &args).unwrap();
    let want = run(&c.ctx, &c.original.ir, c.original.top, f, args).unwrap();
    (
        got[0].tensor().unwrap().clone(),
        want[0].tensor().unwrap().clone(),
    )
}

fn extent() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0usize),
        Just(1usize),
        prop::sample::select(vec![
            2usize, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 97, 131, 257, 293
        ]),
        prop::sample::select(vec![14usize, 16, 28, 32, 48, 64, 128, 256])
            .prop_flat_map(|b| (b - 1)..=(b + 1)),
        1usize..=300,
    ]
}

fn cases(share: u32) -> u32 {
    let total: u32 = std::env::var("FTUNER_JIT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    (total * share / 8).max(1)
}

#[test]
fn compiled_matmul_matches_at_random_shapes() {
    let c = compile(MATMUL);
    let mut runner = TestRunner::new(Config {
        cases: cases(4),
        ..Config::default()
    });
    runner
        .run(
            &(extent(), extent(), 0usize..=5, any::<u64>()),
            |(m, n, k, seed)| {
                let a = tensor(vec![m, k], seed);
                let b = tensor(vec![k, n], seed.rotate_left(17));
                let (got, want) = both(&c, "mm", &[a, b]);
                prop_assert_eq!(got, want, "m={} n={} k={}", m, n, k);
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn compiled_matmul_k_blocks_match() {
    let c = compile(MATMUL);
    let mut runner = TestRunner::new(Config {
        cases: cases(1),
        ..Config::default()
    });
    let k = prop::sample::select(vec![0usize, 1, 143, 144, 145, 287, 288, 289, 300]);
    runner
        .run(
            &(0usize..=30, 0usize..=40, k, any::<u64>()),
            |(m, n, k, seed)| {
                let a = tensor(vec![m, k], seed);
                let b = tensor(vec![k, n], seed.rotate_left(17));
                let (got, want) = both(&c, "mm", &[a, b]);
                prop_assert_eq!(got, want, "m={} n={} k={}", m, n, k);
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn compiled_batch_matmul_nt_matches_at_random_shapes() {
    let c = compile(BMM_NT);
    let mut runner = TestRunner::new(Config {
        cases: cases(2),
        ..Config::default()
    });
    runner
        .run(
            &(0usize..=3, extent(), extent(), 0usize..=3, any::<u64>()),
            |(bs, m, n, k, seed)| {
                let a = tensor(vec![bs, m, k], seed);
                let b = tensor(vec![bs, n, k], seed.rotate_left(29));
                let (got, want) = both(&c, "bmm", &[a, b]);
                prop_assert_eq!(got, want, "b={} m={} n={} k={}", bs, m, n, k);
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn compiled_conv_matches_at_random_shapes() {
    let c = compile(CONV);
    let mut runner = TestRunner::new(Config {
        cases: cases(1),
        ..Config::default()
    });
    let dims = (0usize..=2, 1usize..=3, 0usize..=5, 0usize..=6, 0usize..=40);
    runner
        .run(&(dims, any::<u64>()), |((n, ch, oh, ow, f), seed)| {
            let (h, w) = (oh + 4, 2 * ow + 2);
            let x = tensor(vec![n, ch, h, w], seed);
            let wt = tensor(vec![f, ch, 3, 3], seed.rotate_left(9));
            let o = tensor(vec![n, f, oh, ow], seed.rotate_left(21));
            let (got, want) = both(&c, "conv", &[x, wt, o]);
            prop_assert_eq!(got, want, "n={} c={} oh={} ow={} f={}", n, ch, oh, ow, f);
            Ok(())
        })
        .unwrap();
}
