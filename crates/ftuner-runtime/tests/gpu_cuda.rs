//! On an NVIDIA GPU: the PTX `lower-ukernels-to-gpu` emits for the device's target, loaded through
//! the CUDA driver API and run, with the reference interpreter as the host program (its
//! `gpu.launch_func`s go to the device, the kernels' results come back into its buffers),
//! compared with the original contraction on the interpreter — exactly (integer-valued
//! data, every f32 sum exact). Where there is no driver or no device (CI), every test
//! here prints why and passes without running anything.

use ftuner_interp::{run_with_launcher, RtVal, Tensor};
use ftuner_runtime::cuda::{ptx_for, Cuda, CudaLauncher};
use std::rc::Rc;

use crate::support::{call, lower, tensor, Lowered, BMM_NT, MATMUL};

fn gpu_pipeline(target: &str) -> String {
    format!("builtin.module(patch-ukernels{{target={target}}},bufferize,lower-ukernels-to-gpu,canonicalize,cse)")
}

fn device() -> Option<Cuda> {
    match Cuda::open() {
        Ok(Some(c)) => Some(c),
        Ok(None) => {
            eprintln!("skipped: no CUDA driver or no NVIDIA device here");
            None
        }
        Err(e) => panic!("the CUDA driver is present but failed: {e}"),
    }
}

/// The device's PTX target (LLVM 22 here emits PTX up to sm_90; newer devices JIT it).
fn ptx_sm(c: &Cuda) -> String {
    if c.capability.0 > 9 {
        "sm_90".into()
    } else {
        c.sm()
    }
}

/// The PTX target and the hardware model of the device's class (a100 for sm_80, h100 for
/// sm_90, ...).
fn ptx_target(cuda: &Cuda) -> (String, String) {
    let sm = ptx_sm(cuda);
    let target = format!("cuda:{sm}");
    match ftuner_hw::HardwareModel::load(&target) {
        Ok(_) => (sm, target),
        Err(_) => (sm, "a100".into()),
    }
}

/// The lowered `func` on `args`: the interpreter as host, the kernels on the device.
fn on_device(c: &Lowered, func: &str, args: &[Tensor], launcher: &mut CudaLauncher) -> Tensor {
    let vals = args
        .iter()
        .map(|t| RtVal::Tensor(Rc::new(t.clone())))
        .collect();
    let got = run_with_launcher(&c.ctx, &c.lowered.ir, c.lowered.top, func, vals, launcher);
    got.unwrap()[0].tensor().unwrap().clone()
}

fn check(src: &str, func: &str, shapes: &[Vec<Vec<usize>>]) {
    let Some(cuda) = device() else { return };
    let (sm, target) = ptx_target(&cuda);
    eprintln!("{}: {} (PTX {sm}, model {target})", func, cuda.name);
    let c = lower(src, &gpu_pipeline(&target));
    let ptx = ptx_for(&c.ctx, &c.lowered.ir, c.lowered.top, &sm).unwrap();
    let module = cuda.load(&ptx).unwrap();
    let mut launcher = CudaLauncher::new(module);
    for (i, shape) in shapes.iter().enumerate() {
        let args: Vec<Tensor> = shape
            .iter()
            .enumerate()
            .map(|(j, s)| tensor(s.clone(), (i * 7 + j) as u64 + 1))
            .collect();
        let want = call(&c, &c.original, func, &args);
        let got = on_device(&c, func, &args, &mut launcher);
        assert_eq!(got, want, "{func} {shape:?}");
    }
    assert!(launcher.launches > 0, "nothing ran on the device");
    eprintln!(
        "{func}: {} shapes, {} launches on the device",
        shapes.len(),
        launcher.launches
    );
}

#[test]
fn cuda_matmul_matches_the_interpreter() {
    let mut shapes = vec![];
    for (m, n, k) in [
        (1, 1, 1),
        (0, 5, 3),
        (7, 0, 3),
        (5, 9, 0),
        (255, 127, 33),
        (256, 128, 64),
        (257, 129, 65),
        (300, 293, 97),
        (513, 131, 16),
    ] {
        shapes.push(vec![vec![m, k], vec![k, n]]);
    }
    check(MATMUL, "mm", &shapes);
}

#[test]
fn cuda_batch_matmul_nt_matches_the_interpreter() {
    let mut shapes = vec![];
    for (b, m, n, k) in [
        (1, 1, 1, 1),
        (3, 257, 129, 64),
        (2, 100, 300, 17),
        (0, 4, 4, 4),
    ] {
        shapes.push(vec![vec![b, m, k], vec![b, n, k]]);
    }
    check(BMM_NT, "bmm", &shapes);
}

/// A whole BERT encoder layer as torch-mlir exports it (batch and sequence dynamic): its
/// contractions patched for the device and run as PTX kernels (144 launches), the rest
/// (LayerNorm, softmax, GELU, the reshapes) on the interpreter as the host program; against
/// the layer on the interpreter, within f32 rounding (the kernels sum K in their own order
/// with fused multiply-adds).
#[test]
fn cuda_bert_layer_matches_the_interpreter() {
    const SRC: &str = include_str!("../../../examples/bert_layer_dynamic.mlir");
    let cuda = device();
    // Without a device the layer is still compiled to PTX for H100s (what the device run
    // would load), so CI checks that much.
    let (sm, target) = cuda
        .as_ref()
        .map_or(("sm_90".into(), "h100".into()), ptx_target);
    let pipeline = format!(
        "builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{{target={target}}},bufferize,lower-ukernels-to-gpu,canonicalize,cse)"
    );
    let c = lower(SRC, &pipeline);
    let ptx = ptx_for(&c.ctx, &c.lowered.ir, c.lowered.top, &sm).unwrap();
    assert!(
        ptx.matches(".visible .entry").count() >= 20,
        "{}",
        &ptx[..400]
    );
    let Some(cuda) = cuda else { return };
    let mut launcher = CudaLauncher::new(cuda.load(&ptx).unwrap());
    let func = "bert_layer_dynamic";
    let shapes = ftuner_interp::param_shapes(&c.original.ir, c.original.top, func).unwrap();
    for (i, t) in [7usize, 33].into_iter().enumerate() {
        let mut args = vec![scaled(tensor(vec![1, t, 768], 11 + i as u64), 0.3)];
        for (j, s) in shapes[1..].iter().enumerate() {
            let shape = s.iter().map(|d| *d as usize).collect();
            args.push(scaled(tensor(shape, 100 + j as u64), 0.02));
        }
        let want = call(&c, &c.original, func, &args);
        let before = launcher.launches;
        let got = on_device(&c, func, &args, &mut launcher);
        assert_eq!(got.shape, want.shape);
        let scale = want.to_f64().iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let err = got
            .to_f64()
            .iter()
            .zip(&want.to_f64())
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        eprintln!(
            "bert layer T={t}: {} launches, max |diff| {err:.2e} (max |value| {scale:.2})",
            launcher.launches - before
        );
        assert!(
            err <= 1e-3 * scale,
            "T={t}: max |diff| {err} against {scale}"
        );
    }
}

fn scaled(mut t: Tensor, by: f64) -> Tensor {
    t.data
        .iter_mut()
        .for_each(|v| *v = ftuner_interp::Word::float(v.f() * by));
    t
}

/// Without a device: the PTX the device test would load is produced and holds one entry
/// per tile kernel with fused multiply-adds.
#[test]
fn ptx_for_emits_the_tile_kernels() {
    let c = lower(MATMUL, &gpu_pipeline("h100"));
    let ptx = ptx_for(&c.ctx, &c.lowered.ir, c.lowered.top, "sm_90").unwrap();
    assert!(ptx.contains(".target sm_90"));
    assert!(
        ptx.contains(".visible .entry mm_p0_256x128("),
        "{}",
        &ptx[..400]
    );
    assert!(ptx.contains("fma.rn.f32"));
    // The host module is left as it was.
    assert!(c.lowered_ops().contains(&"gpu.launch_func"));
}
