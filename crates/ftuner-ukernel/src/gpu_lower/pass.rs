//! The `lower-ukernels-to-gpu` pass: on buffers (after `bufferize`), every `ukernel.patch`
//! for a GPU target becomes kernels and launches; CPU patches are `lower-ukernels`' (on
//! tensors, before bufferize), and a patch on tensors is left alone with the reason.

use super::lower_gpu;
use crate::gpu::GpuFamily;
use ftuner_dialects::linalg::ins_outs;
use ftuner_ir::{Ir, OpId};
use ftuner_pass::{define_pass, PassContext, PassFailure};

define_pass! {
    /// `lower-ukernels-to-gpu`: GPU patches on buffers become kernels and launches.
    pub struct LowerUkernelsToGpuPass {
        argument: "lower-ukernels-to-gpu",
        name: "LowerUkernelsToGpu",
        summary: "Lower ukernel.patch ops on buffers for GPU targets to thread-block kernels in a gpu.module and gpu.launch_func ops over the plan",
        options: LowerUkernelsToGpuOptions {},
        statistics: {
            lowered: "num-lowered" => "Patches lowered to GPU kernels and launches",
            skipped: "num-skipped" => "Patches left as they are",
        },
    }
}

/// The GPU uKernel family of a patch on buffers (its `target` and element type).
fn gpu_family(ir: &Ir, p: OpId) -> Result<GpuFamily, String> {
    let target = ir
        .attr(p, "target")
        .and_then(|a| a.as_str())
        .ok_or("the patch has no target")?;
    let model = ftuner_hw::HardwareModel::load(target)?;
    let (_, outs) = ins_outs(ir, p);
    let elem = outs
        .first()
        .map(|v| ir.value_type(*v).element_type())
        .ok_or("the patch has no output")?;
    let dtype =
        crate::DType::from_type(elem).ok_or(format!("element type {elem} has no uKernels"))?;
    match crate::Family::build(&model, dtype)? {
        crate::Family::Gpu(g) => Ok(g),
        crate::Family::Cpu(_) => Err(format!(
            "'{target}' is a CPU target: CPU patches are lowered on tensors, by lower-ukernels before bufferize"
        )),
    }
}

/// Lower one patch, or say why not.
fn lower_one(ir: &mut Ir, p: OpId) -> Result<(), String> {
    let (ins, outs) = ins_outs(ir, p);
    if !ins
        .iter()
        .chain(&outs)
        .any(|v| ir.value_type(*v).is_memref())
    {
        return Err(
            "a patch on tensors: GPU kernels are built on buffers (run bufferize first)".into(),
        );
    }
    let fam = gpu_family(ir, p)?;
    lower_gpu(ir, p, &fam)
}

impl LowerUkernelsToGpuPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        _: &LowerUkernelsToGpuOptions,
    ) -> Result<(), PassFailure> {
        for p in crate::patches_in(cx.ir, op) {
            let r = lower_one(cx.ir, p);
            crate::count_outcome(cx, p, r, (&mut self.lowered, &mut self.skipped));
        }
        Ok(())
    }
}
