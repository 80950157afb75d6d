//! `patch-ukernels{target=<GPU>}`, `bufferize`, `lower-ukernels-to-gpu`: contractions become
//! thread-block kernels in a `gpu.module` and `gpu.launch_func`s over the patch plan. The
//! reference interpreter runs every launch (each block, each thread, one after another;
//! the kernels have no barriers), so the launch logic — full-tile grids, residue tiles
//! from the plan tables, the kernel switch, thread tiles, batch delinearization — is
//! checked here against the original op, exactly (integer-valued data), at random shapes
//! including 0, 1 and every main-tile boundary ± 1.
//!
//! `FTUNER_GPU_LOWERED_CASES=400 cargo test --release -p ftuner-interp --test gpu_lowered`
//! runs more cases than the default.

#[path = "support/random_contractions.rs"]
mod support;
use support::{
    call, check_bmms, check_convs, check_dense_layers, check_matmuls, lower, tensor, Lowered,
    BMM_NT, CONV, MATMUL, MATMUL_BIAS_RELU,
};

fn compile(src: &str, target: &str) -> Lowered {
    let c = lower(
        src,
        &format!(
            "builtin.module(patch-ukernels{{target={target}}},bufferize,lower-ukernels-to-gpu,canonicalize,cse)"
        ),
    );
    let names = c.lowered_ops();
    assert!(names.contains(&"gpu.launch_func"), "{target}: no launch");
    assert!(names.contains(&"gpu.func"), "{target}: no kernel");
    assert!(!names.contains(&"ukernel.patch"), "{target}: patch left");
    c
}

fn cases() -> u32 {
    std::env::var("FTUNER_GPU_LOWERED_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(160)
}

#[test]
fn gpu_lowered_matmul_matches_at_random_shapes() {
    for target in ["a100", "h100"] {
        check_matmuls(&compile(MATMUL, target), target, cases(), 3);
    }
}

#[test]
fn gpu_lowered_batch_matmul_nt_matches_at_random_shapes() {
    check_bmms(&compile(BMM_NT, "a100"), "a100", cases() / 2);
}

/// The corners of the plan: a full 256 x 128 tile with every residue kind around it.
#[test]
fn gpu_lowered_matmul_tile_boundaries() {
    let c = compile(MATMUL, "a100");
    for (m, n) in [
        (256, 128),
        (257, 129),
        (255, 127),
        (513, 1),
        (1, 257),
        (0, 128),
        (256, 0),
    ] {
        let a = tensor(vec![m, 2], m as u64);
        let b = tensor(vec![2, n], n as u64 + 7);
        let want = call(&c, &c.original, "mm", &[a.clone(), b.clone()]);
        let got = call(&c, &c.lowered, "mm", &[a, b]);
        assert_eq!(got, want, "m={m} n={n}");
    }
}

/// Convolutions as implicit GEMM on the GPU: each thread's rows are flattened output
/// positions delinearized over (n, oh, ow); the (c, kh, kw) reduction is three nested
/// loops; A is read through its window expressions (dilation 2 on H, stride 2 on W).
#[test]
fn gpu_lowered_conv_matches_at_random_shapes() {
    check_convs(&compile(CONV, "a100"), "a100", cases() / 4);
}

/// The fused bias-add and ReLU run in each thread on its finished elements, before the
/// store.
#[test]
fn gpu_lowered_dense_layer_with_epilogue_matches() {
    check_dense_layers(&compile(MATMUL_BIAS_RELU, "h100"), "h100", cases() / 2, 3);
}

/// With a `Launcher`, the interpreter is the host program and hands every launch over:
/// M = 300, N = 130 on a100 (main tile 256 x 128) is one full-tile grid, the N residue
/// (2 = 2) beside it, then per M residue tile (44 = 32 + 8 + 4) its full and residue
/// columns — 8 launches, each naming its kernel, grid, block and arguments.
#[test]
fn launches_go_to_the_launcher() {
    struct Record(Vec<(String, [i64; 3], [i64; 3], usize)>);
    impl ftuner_interp::Launcher for Record {
        fn launch(
            &mut self,
            (_, k): (&str, &str),
            grid: [i64; 3],
            block: [i64; 3],
            args: &[ftuner_interp::RtVal],
            types: &[ftuner_ir::Type],
        ) -> Result<(), String> {
            assert_eq!(args.len(), types.len());
            self.0.push((k.to_string(), grid, block, args.len()));
            Ok(())
        }
    }
    let c = compile(MATMUL, "a100");
    let args = vec![
        ftuner_interp::RtVal::Tensor(std::rc::Rc::new(tensor(vec![300, 4], 1))),
        ftuner_interp::RtVal::Tensor(std::rc::Rc::new(tensor(vec![4, 130], 2))),
    ];
    let mut rec = Record(vec![]);
    ftuner_interp::run_with_launcher(&c.ctx, &c.lowered.ir, c.lowered.top, "mm", args, &mut rec)
        .unwrap();
    let names: Vec<&str> = rec.0.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "mm_p0_256x128",
            "mm_p0_256x2",
            "mm_p0_32x128",
            "mm_p0_32x2",
            "mm_p0_8x128",
            "mm_p0_8x2",
            "mm_p0_4x128",
            "mm_p0_4x2"
        ]
    );
    assert_eq!(rec.0[0].1, [1, 1, 1]);
    // A, B, C and the two offsets.
    assert!(rec.0.iter().all(|l| l.3 == 5 && l.2[0] >= 1 && l.2[1] == 1));
}
