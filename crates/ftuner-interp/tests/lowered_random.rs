//! `patch-ukernels` + `lower-ukernels` on fully dynamic contractions, at random shapes
//! (0, 1, primes, every tile boundary ± 1): the lowered loops compute exactly what the
//! original op computes on the reference interpreter.
//!
//! `FTUNER_LOWERED_CASES=10000 cargo test --release -p ftuner-interp --test lowered_random`
//! runs more cases than the default.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

#[path = "support/random_contractions.rs"]
mod support;
use support::{
    call, check_bmms, check_convs, check_dense_layers, check_matmuls, lower, tensor, Lowered,
    BMM_NT, CONV, MATMUL, MATMUL_BIAS_RELU,
};

fn compile(src: &str, target: &str) -> Lowered {
    // zen4 also packs B into panels (pack-b), the other targets read B in place.
    let opts = if target == "zen4" {
        "{pack-b=true}"
    } else {
        ""
    };
    let c = lower(
        src,
        &format!(
            "builtin.module(patch-ukernels{{target={target}}},lower-ukernels{opts},canonicalize,cse)"
        ),
    );
    // The contraction really was patched and lowered.
    let names = c.lowered_ops();
    assert!(names.contains(&"scf.index_switch"), "{target}: not lowered");
    assert!(!names
        .iter()
        .any(|n| *n == "ukernel.patch" || *n == "linalg.matmul"));
    // CPU register tiles get vector bodies (batched ones inside loops over the batch).
    if !matches!(target, "a100" | "h100") {
        assert!(names.contains(&"vector.fma"), "{target}: no vector body");
    }
    c
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
        check_matmuls(&compile(MATMUL, target), target, cases(), 4);
    }
}

#[test]
fn lowered_batch_matmul_nt_matches_at_random_shapes() {
    for target in ["skylake-avx512", "h100"] {
        check_bmms(&compile(BMM_NT, target), target, cases() / 2);
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
        check_convs(&compile(CONV, target), target, cases() / 8);
    }
}

/// A dense layer whose bias-add and ReLU are the patch's epilogue: applied to each tile
/// in the last k block (zen4: kc = 144, so K = 145..300 runs several blocks).
#[test]
fn lowered_dense_layer_with_epilogue_matches() {
    let patched = lower(
        MATMUL_BIAS_RELU,
        "builtin.module(patch-ukernels{target=zen4})",
    );
    let names = patched.lowered_ops();
    assert_eq!(
        names.iter().filter(|n| **n == "linalg.generic").count(),
        0,
        "the bias broadcast, add and ReLU are absorbed"
    );
    for target in ["zen4", "a100"] {
        let c = compile(MATMUL_BIAS_RELU, target);
        check_dense_layers(&c, target, cases() / 20, 300);
    }
}

/// Padded plans (`max-padding`): the residue's last tile reaches past the extent; the
/// operands are padded with zeros for it and the result cut back.
#[test]
fn lowered_padded_plans_match() {
    for (target, pad) in [("zen4", "1"), ("skylake-avx512", "0.5")] {
        let c = lower(
            MATMUL,
            &format!(
                "builtin.module(patch-ukernels{{target={target} max-ukernels=2 max-padding={pad}}},lower-ukernels,canonicalize,cse)"
            ),
        );
        let names = c.lowered_ops();
        assert!(names.contains(&"tensor.pad"), "{target}: no padded plan");
        assert!(!names.contains(&"ukernel.patch"), "{target}: not lowered");
        check_matmuls(&c, target, cases() / 4, 4);
    }
    let c = lower(
        MATMUL_BIAS_RELU,
        "builtin.module(patch-ukernels{target=zen4 max-ukernels=2 max-padding=1},lower-ukernels,canonicalize,cse)",
    );
    check_dense_layers(&c, "zen4 padded", cases() / 20, 300);
}

/// Long M runs in blocks of the patch's mc (zen4: 2046 rows, 341 main tiles): every block
/// boundary ± 1, the last block holding the residue.
#[test]
fn lowered_matmul_mc_blocks_match() {
    let c = compile(MATMUL, "zen4");
    let text = ftuner_ir::print_module(
        &c.lowered.ir,
        &c.ctx,
        c.lowered.top,
        ftuner_ir::PrintOptions::default(),
    );
    assert!(text.contains("step %c2046"), "no mc loop");
    for (m, n, k) in [
        (2045, 33, 3),
        (2046, 5, 2),
        (2047, 31, 4),
        (4093, 3, 5),
        (4200, 40, 1),
        // A's block copied contiguous (M >= mc/2, N >= 8 tiles of 64), K with a remainder
        // past its 16-lane copies; then a first block packed and a 2-row one not; then two
        // packed blocks.
        (1024, 512, 20),
        (2048, 512, 2),
        (4092, 512, 2),
    ] {
        let a = tensor(vec![m, k], m as u64);
        let b = tensor(vec![k, n], n as u64 + 3);
        let want = call(&c, &c.original, "mm", &[a.clone(), b.clone()]);
        let got = call(&c, &c.lowered, "mm", &[a, b]);
        assert_eq!(got, want, "m={m} n={n} k={k}");
    }
}
