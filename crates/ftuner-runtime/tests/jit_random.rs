//! Compiled code against the reference interpreter at random shapes: fully dynamic
//! matmul, NT batch-matmul and strided/dilated conv2d, each JIT-compiled once for this
//! machine (patch-ukernels{target=host}, lower-ukernels, bufferize, LLVM O3), then run at
//! shapes drawn from 0, 1, primes, every main-tile boundary ± 1 and uniform sizes up to
//! 300. Integer-valued data make every f32 sum exact, so results must be equal bit for
//! bit. 2,000 cases per run; `FTUNER_JIT_CASES=10000 cargo test --release -p
//! ftuner-runtime --test integration jit_random::` runs 10,000.

use ftuner_interp::{run, RtVal, Tensor};
use ftuner_ir::parse_module;
use ftuner_runtime::Executable;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::rc::Rc;

use crate::support::{extent, tensor, BMM_NT, CONV, MATMUL};

struct Both {
    ctx: ftuner_ir::Context,
    original: ftuner_ir::ParsedModule,
    exe: Executable,
}

fn compile(src: &str) -> Both {
    let ctx = ftuner_transforms::context();
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
