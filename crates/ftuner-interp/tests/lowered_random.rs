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
    call, check_bmms, check_convs, check_dense_layers, check_matmuls, check_pointwise, lower,
    tensor, Lowered, BMM_NT, CONV, MATMUL, MATMUL_BIAS_RELU, MATMUL_K16_BN_RELU6,
};

/// The lowered module, printed.
fn lowered_text(c: &Lowered) -> String {
    ftuner_ir::print_module(
        &c.lowered.ir,
        &c.ctx,
        c.lowered.top,
        ftuner_ir::PrintOptions::default(),
    )
}

/// The constant steps of the lowered module's `scf.for` loops marked `ftuner.parallel`,
/// outermost first (a dynamic step is 0).
fn parallel_steps(c: &Lowered) -> Vec<i64> {
    let ir = &c.lowered.ir;
    let mut steps = vec![];
    ir.walk_pre(c.lowered.top, &mut |o| {
        if ir.name(o) == "scf.for" && ir.attr(o, "ftuner.parallel").is_some() {
            let step = ir
                .defining_op(ir.operands(o)[2])
                .and_then(|d| ir.attr(d, "value"))
                .and_then(|a| a.as_i64())
                .unwrap_or(0);
            steps.push(step);
        }
    });
    steps
}

fn compile(src: &str, target: &str) -> Lowered {
    compile_with(src, target, "")
}

/// [`compile`] with more `patch-ukernels` options (` schedule=...`).
fn compile_with(src: &str, target: &str, patch_opts: &str) -> Lowered {
    // zen4 also packs B into panels (pack-b), the other targets read B in place.
    let opts = if target == "zen4" {
        "{pack-b=true}"
    } else {
        ""
    };
    let c = lower(
        src,
        &format!(
            "builtin.module(patch-ukernels{{target={target}{patch_opts}}},lower-ukernels{opts},canonicalize,cse)"
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

/// kc forced small, so that the interpreter's K stay short.
const KC144: &str = " schedule=mr=6,nr=64,kc=144";

/// Reductions longer than the patch's kc run as several even k blocks (kc = 144: K = 145
/// as 80 + 65, K = 289 as 104 + 104 + 81); every block boundary ± 1.
#[test]
fn lowered_matmul_k_blocks_match() {
    let c = compile_with(MATMUL, "zen4", KC144);
    let mut runner = TestRunner::new(Config {
        cases: cases() / 4,
        ..Config::default()
    });
    let k = prop::sample::select(vec![
        0usize, 1, 8, 79, 80, 81, 103, 104, 105, 143, 144, 145, 208, 209, 287, 288, 289, 300,
    ]);
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
/// in the last k block (kc = 144, so K = 145..300 runs several blocks).
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
        let c = if target == "zen4" {
            compile_with(MATMUL_BIAS_RELU, target, KC144)
        } else {
            compile(MATMUL_BIAS_RELU, target)
        };
        check_dense_layers(&c, target, cases() / 20, 300);
    }
}

/// A one-k-block contraction's epilogue runs in registers (`lower/vector_epilogue.rs`):
/// per-row and per-element inputs, compare-and-select, on each tile row before its store,
/// and the result is the module's. (Dot-product tiles, for N <= 4 on skylake-avx512, keep
/// the general epilogue.)
#[test]
fn lowered_epilogue_in_registers_matches() {
    for target in ["zen4", "skylake-avx512"] {
        let c = compile(MATMUL_K16_BN_RELU6, target);
        let text = lowered_text(&c);
        assert!(
            text.contains("arith.cmpf ogt") && text.contains("vector<64xi1>"),
            "{target}: the epilogue is not on vectors"
        );
        check_pointwise(&c, target, cases() / 8);
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

/// Long M runs in blocks of the patch's mc (zen4: 240 rows, 40 main tiles): every block
/// boundary ± 1, the last block holding the residue.
#[test]
fn lowered_matmul_mc_blocks_match() {
    let c = compile(MATMUL, "zen4");
    let text = lowered_text(&c);
    assert!(text.contains("step %c240"), "no mc loop");
    for (m, n, k) in [
        (239, 33, 3),
        (240, 5, 2),
        (241, 31, 4),
        (479, 3, 5),
        (4200, 40, 1),
        // A's block copied contiguous (M >= mc/2, N >= 8 tiles of 64), K with a remainder
        // past its 16-lane copies; then a first block packed and a 2-row one not; then two
        // packed blocks.
        (128, 512, 20),
        (242, 512, 2),
        (480, 512, 2),
    ] {
        check_matmul(&c, m, n, k);
    }
}

/// The lowered `@mm` against the original at one shape (inputs seeded by the shape).
fn check_matmul(c: &Lowered, m: usize, n: usize, k: usize) {
    let a = tensor(vec![m, k], m as u64);
    let b = tensor(vec![k, n], n as u64 + 3);
    let want = call(c, &c.original, "mm", &[a.clone(), b.clone()]);
    let got = call(c, &c.lowered, "mm", &[a, b]);
    assert_eq!(got, want, "m={m} n={n} k={k}");
}

/// Convolutions whose image dims (past the batch) and filter are static take the flat-k
/// form (one k loop over a table of A offsets, B as panels when F is a multiple of the
/// main tile): NCHW with dilation 2 on H and stride 2 on W, F = 64 (panels) and F = 40
/// (B as `[K][F]`), and NHWC, at random batches and data, agree exactly with the op as
/// read.
#[test]
fn lowered_static_convs_take_the_flat_k_form() {
    let nchw = |f: usize| {
        format!(
            r#"func.func @conv(%x: tensor<?x3x11x13xf32>, %w: tensor<{f}x3x3x3xf32>, %o: tensor<?x{f}x7x6xf32>) -> tensor<?x{f}x7x6xf32> {{
  %r = linalg.conv_2d_nchw_fchw {{dilations = dense<[2, 1]> : vector<2xi64>, strides = dense<[1, 2]> : vector<2xi64>}} ins(%x, %w : tensor<?x3x11x13xf32>, tensor<{f}x3x3x3xf32>) outs(%o : tensor<?x{f}x7x6xf32>) -> tensor<?x{f}x7x6xf32>
  return %r : tensor<?x{f}x7x6xf32>
}}"#
        )
    };
    let nhwc = r#"func.func @conv(%x: tensor<?x9x10x5xf32>, %w: tensor<3x2x5x128xf32>, %o: tensor<?x7x5x128xf32>) -> tensor<?x7x5x128xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<[1, 2]> : vector<2xi64>} ins(%x, %w : tensor<?x9x10x5xf32>, tensor<3x2x5x128xf32>) outs(%o : tensor<?x7x5x128xf32>) -> tensor<?x7x5x128xf32>
  return %r : tensor<?x7x5x128xf32>
}"#;
    // (source, image dims past the batch, filter, output dims past the batch, panels)
    type Case = (String, [usize; 3], [usize; 4], [usize; 3], bool);
    let cases: [Case; 3] = [
        (nchw(64), [3, 11, 13], [64, 3, 3, 3], [64, 7, 6], true),
        (nchw(40), [3, 11, 13], [40, 3, 3, 3], [40, 7, 6], false),
        (
            nhwc.to_string(),
            [9, 10, 5],
            [3, 2, 5, 128],
            [7, 5, 128],
            true,
        ),
    ];
    for target in ["zen4", "skylake-avx512"] {
        for (src, xs, ws, os, panels) in &cases {
            let c = compile(src, target);
            let text = lowered_text(&c);
            assert!(
                text.contains("tensor.collapse_shape") && text.contains("xindex>"),
                "{target}: no flat-k form:\n{text}"
            );
            // Panels: the filter copied to [F / 64][K][64].
            let (f, k) = if src.contains("nchw") {
                (ws[0], ws[1] * ws[2] * ws[3])
            } else {
                (ws[3], ws[0] * ws[1] * ws[2])
            };
            let panel_ty = format!("tensor<{}x{k}x64xf32>", f / 64);
            assert_eq!(
                text.contains(&panel_ty),
                *panels,
                "{target}: {panel_ty} expected: {panels}\n{text}"
            );
            // At most two N panels: the row loops run in parallel (steps of the main
            // M tile), not the panel loops (steps of 64).
            let steps = parallel_steps(&c);
            assert!(
                !steps.is_empty() && !steps.contains(&64),
                "{target}: parallel loops' steps {steps:?}"
            );
            for n in [0usize, 1, 2, 3] {
                let seed = (n as u64 + 1) * 7919;
                let x = tensor([vec![n], xs.to_vec()].concat(), seed);
                let w = tensor(ws.to_vec(), seed.rotate_left(9));
                let o = tensor([vec![n], os.to_vec()].concat(), seed.rotate_left(21));
                let args = [x, w, o];
                let want = call(&c, &c.original, "conv", &args);
                let got = call(&c, &c.lowered, "conv", &args);
                assert_eq!(got, want, "{target} n={n}\n{src}");
            }
        }
    }
}

/// A flat-form conv whose image, read once per N panel, weighs more than its filter read
/// once per block of rows runs blocks of rows outside the panels, each block's A rows
/// packed `[mc][K]` (a 1x1 stride-2 conv, 16 -> 256 channels: four panels of 64): at
/// batches that fill several blocks and end in a partial one, it agrees exactly with the
/// op as read.
#[test]
fn lowered_conv_row_blocks_pack_a() {
    let src = r#"func.func @conv(%x: tensor<?x16x9x9xf32>, %w: tensor<256x16x1x1xf32>) -> tensor<?x256x5x5xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x9x9xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x256x5x5xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x256x5x5xf32>) -> tensor<?x256x5x5xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<?x16x9x9xf32>, tensor<256x16x1x1xf32>) outs(%i : tensor<?x256x5x5xf32>) -> tensor<?x256x5x5xf32>
  return %r : tensor<?x256x5x5xf32>
}"#;
    for target in ["zen4", "skylake-avx512"] {
        let c = compile(src, target);
        let text = lowered_text(&c);
        assert!(
            text.contains("tensor.empty() : tensor<96x16xf32>"),
            "{target}: no packed block of rows:\n{text}"
        );
        assert!(
            !text.contains("linalg.fill"),
            "{target}: the zero fill is read"
        );
        for n in [0usize, 1, 3, 4, 5, 8] {
            let seed = (n as u64 + 3) * 104_729;
            let x = tensor(vec![n, 16, 9, 9], seed);
            let w = tensor(vec![256, 16, 1, 1], seed.rotate_left(9));
            let args = [x, w];
            let want = call(&c, &c.original, "conv", &args);
            let got = call(&c, &c.lowered, "conv", &args);
            assert_eq!(got, want, "{target} n={n}");
        }
    }
}

/// The lowering's run-time choices with the default options (B read in place unless a
/// rule packs it): a skinny N (<= 4 on zen4) through B transposed and dot-product tiles,
/// N = 5 through broadcast tiles; a contiguous B packed into panels from M = mc = 240.
#[test]
fn lowered_matmul_run_time_rules_match() {
    let c = lower(
        MATMUL,
        "builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)",
    );
    let text = lowered_text(&c);
    assert!(text.contains("arith.cmpi sle"), "no skinny split");
    assert!(
        text.contains("arith.cmpi sge, %dim, %c240"),
        "no packing rule"
    );
    for (m, n, k) in [
        (37, 1, 100),
        (13, 2, 77),
        (40, 3, 50),
        (61, 4, 129),
        (20, 5, 33),
        (0, 2, 7),
        (5, 1, 0),
        (239, 70, 9),
        (240, 70, 9),
        (1000, 130, 17),
    ] {
        check_matmul(&c, m, n, k);
    }
}
