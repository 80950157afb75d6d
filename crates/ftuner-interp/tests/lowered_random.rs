//! `patch-ukernels` + `lower-ukernels` on fully dynamic contractions, at random shapes
//! (0, 1, primes, every tile boundary ± 1): the lowered loops compute exactly what the
//! original op computes on the reference interpreter.
//!
//! `FTUNER_LOWERED_CASES=10000 cargo test --release -p ftuner-interp --test lowered_random`
//! runs more cases than the default.

use ftuner_interp::{run, RtVal, Tensor};
use ftuner_ir::parse_module;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::rc::Rc;

#[path = "support/random_contractions.rs"]
mod support;
use support::{extent, tensor, BMM_NT, CONV, MATMUL};

struct Compiled {
    ctx: ftuner_ir::Context,
    original: ftuner_ir::ParsedModule,
    lowered: ftuner_ir::ParsedModule,
}

fn compile(src: &str, target: &str) -> Compiled {
    let ctx = ftuner_dialects::context();
    let original = parse_module(&ctx, src, "t.mlir").unwrap();
    let mut lowered = parse_module(&ctx, src, "t.mlir").unwrap();
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    reg.register(|| Box::new(ftuner_ukernel::PatchUkernelsPass::default()));
    reg.register(|| Box::new(ftuner_ukernel::LowerUkernelsPass::default()));
    // zen4 also packs B into panels (pack-b), the other targets read B in place.
    let opts = if target == "zen4" {
        "{pack-b=true}"
    } else {
        ""
    };
    let p = format!(
        "builtin.module(patch-ukernels{{target={target}}},lower-ukernels{opts},canonicalize,cse)"
    );
    let mut pm = ftuner_pass::PassManager::from_pipeline(&reg, &p).unwrap();
    pm.run(&ctx, &mut lowered.ir, lowered.top).unwrap();
    // The contraction really was patched and lowered.
    let mut names = vec![];
    lowered.ir.walk_pre(lowered.top, &mut |o| {
        names.push(lowered.ir.name(o).to_string())
    });
    assert!(
        names.iter().any(|n| n == "scf.index_switch"),
        "{target}: not lowered"
    );
    assert!(!names
        .iter()
        .any(|n| n == "ukernel.patch" || n == "linalg.matmul"));
    // CPU register tiles get vector bodies (batched ones inside loops over the batch).
    if !matches!(target, "a100" | "h100") {
        assert!(
            names.iter().any(|n| n == "vector.fma"),
            "{target}: no vector body"
        );
    }
    Compiled {
        ctx,
        original,
        lowered,
    }
}

fn call(c: &Compiled, m: &ftuner_ir::ParsedModule, f: &str, args: &[Tensor]) -> Tensor {
    let args = args
        .iter()
        .map(|t| RtVal::Tensor(Rc::new(t.clone())))
        .collect();
    let out = run(&c.ctx, &m.ir, m.top, f, args).unwrap();
    out[0].tensor().unwrap().clone()
}

fn cases() -> u32 {
    std::env::var("FTUNER_LOWERED_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

#[test]
fn lowered_matmul_matches_at_random_shapes() {
    for target in ["zen4", "a100"] {
        let c = compile(MATMUL, target);
        let mut runner = TestRunner::new(Config {
            cases: cases(),
            ..Config::default()
        });
        runner
            .run(
                &(extent(), extent(), 0usize..=4, any::<u64>()),
                |(m, n, k, seed)| {
                    let a = tensor(vec![m, k], seed);
                    let b = tensor(vec![k, n], seed.rotate_left(17));
                    let want = call(&c, &c.original, "mm", &[a.clone(), b.clone()]);
                    let got = call(&c, &c.lowered, "mm", &[a, b]);
                    prop_assert_eq!(got, want, "{} m={} n={} k={}", target, m, n, k);
                    Ok(())
                },
            )
            .unwrap();
    }
}

#[test]
fn lowered_batch_matmul_nt_matches_at_random_shapes() {
    for target in ["skylake-avx512", "h100"] {
        let c = compile(BMM_NT, target);
        let mut runner = TestRunner::new(Config {
            cases: cases() / 2,
            ..Config::default()
        });
        runner
            .run(
                &(0usize..=3, extent(), extent(), 0usize..=3, any::<u64>()),
                |(bs, m, n, k, seed)| {
                    let a = tensor(vec![bs, m, k], seed);
                    let b = tensor(vec![bs, n, k], seed.rotate_left(29));
                    let want = call(&c, &c.original, "bmm", &[a.clone(), b.clone()]);
                    let got = call(&c, &c.lowered, "bmm", &[a, b]);
                    prop_assert_eq!(got, want, "{} b={} m={} n={} k={}", target, bs, m, n, k);
                    Ok(())
                },
            )
            .unwrap();
    }
}

/// Reductions longer than the patch's kc run as several k blocks (zen4: kc = 144); every
/// block boundary ± 1.
#[test]
fn lowered_matmul_k_blocks_match() {
    let c = compile(MATMUL, "zen4");
    let mut runner = TestRunner::new(Config {
        cases: cases() / 4,
        ..Config::default()
    });
    let k = prop::sample::select(vec![0usize, 1, 143, 144, 145, 287, 288, 289, 300]);
    runner
        .run(
            &(0usize..=30, 0usize..=40, k, any::<u64>()),
            |(m, n, k, seed)| {
                let a = tensor(vec![m, k], seed);
                let b = tensor(vec![k, n], seed.rotate_left(17));
                let want = call(&c, &c.original, "mm", &[a.clone(), b.clone()]);
                let got = call(&c, &c.lowered, "mm", &[a, b]);
                prop_assert_eq!(got, want, "m={} n={} k={}", m, n, k);
                Ok(())
            },
        )
        .unwrap();
}

/// Convolutions (implicit GEMM: M = N*OH*OW flattened, N = F) lower to register tiles
/// whose rows are delinearized output positions, with strides and dilations in A's
/// index expressions; the output accumulates onto `%o`.
#[test]
fn lowered_conv_matches_at_random_shapes() {
    for target in ["zen4", "skylake-avx512"] {
        let c = compile(CONV, target);
        let mut runner = TestRunner::new(Config {
            cases: cases() / 8,
            ..Config::default()
        });
        let dims = (0usize..=2, 1usize..=3, 0usize..=5, 0usize..=6, 0usize..=40);
        runner
            .run(&(dims, any::<u64>()), |((n, ch, oh, ow, f), seed)| {
                // dilation 2 on H, stride 2 on W, 3x3 window.
                let (h, w) = (oh + 4, 2 * ow + 2);
                let x = tensor(vec![n, ch, h, w], seed);
                let wt = tensor(vec![f, ch, 3, 3], seed.rotate_left(9));
                let o = tensor(vec![n, f, oh, ow], seed.rotate_left(21));
                let args = [x, wt, o];
                let want = call(&c, &c.original, "conv", &args);
                let got = call(&c, &c.lowered, "conv", &args);
                prop_assert_eq!(
                    got,
                    want,
                    "{} n={} c={} oh={} ow={} f={}",
                    target,
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
}
