//! On an NVIDIA GPU: the PTX `lower-ukernels-to-gpu` emits for the device's target, loaded through
//! the CUDA driver API and run, with the reference interpreter as the host program (its
//! `gpu.launch_func`s go to the device, the kernels' results come back into its buffers),
//! compared with the original contraction on the interpreter — exactly (integer-valued
//! data, every f32 sum exact). Where there is no driver or no device (CI), every test
//! here prints why and passes without running anything.

use ftuner_interp::{run_with_launcher, RtVal, Tensor};
use ftuner_runtime::cuda::{ptx_for, Cuda, CudaLauncher};
use std::rc::Rc;

use crate::support::{call, lower, tensor, BMM_NT, MATMUL};

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

fn check(src: &str, func: &str, shapes: &[Vec<Vec<usize>>]) {
    let Some(cuda) = device() else { return };
    let sm = ptx_sm(&cuda);
    // The hardware model of the device's class (a100 for sm_80, h100 for sm_90, ...).
    let target = format!("cuda:{sm}");
    let target = if ftuner_hw::HardwareModel::load(&target).is_ok() {
        target
    } else {
        "a100".into()
    };
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
        let vals: Vec<RtVal> = args
            .iter()
            .map(|t| RtVal::Tensor(Rc::new(t.clone())))
            .collect();
        let got = run_with_launcher(
            &c.ctx,
            &c.lowered.ir,
            c.lowered.top,
            func,
            vals,
            &mut launcher,
        )
        .unwrap();
        assert_eq!(got[0].tensor().unwrap(), &want, "{func} {shape:?}");
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
