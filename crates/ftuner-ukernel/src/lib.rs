//! # ftuner-ukernel
//!
//! uKernels for contractions, built from the hardware model with no search and no trained
//! cost model:
//!
//! * [`cpu`]: the register tile `mr x nr` from the vector registers and the FMA latency x
//!   throughput, the cache tiles `kc/mc/nc` from L1/L2/L3 after BLIS's analytic model
//!   (Low, Igual, Smith, Quintana-Orti, "Analytical Modeling Is Enough for High-Performance
//!   BLIS", ACM TOMS 43(2), 2016), and the smaller uKernels that patch edges;
//! * [`gpu`]: block, warp and thread tiles from the register, shared-memory and occupancy
//!   limits, transaction alignment and banks (FTuner, Roller), each with an estimated
//!   throughput from the model's bandwidths and peak;
//! * [`contraction`]: which ops are contractions and their M, N, K, batch dims;
//! * [`AnnotateUkernelsPass`] (`annotate-ukernels`) and [`describe_module`]
//!   (`ftuner-opt --print-ukernels`).
//!
//! ```
//! let m = ftuner_hw::HardwareModel::load("skylake-avx512").unwrap();
//! let f = ftuner_ukernel::cpu::build(m.cpu().unwrap(), ftuner_ukernel::DType::F32).unwrap();
//! assert_eq!((f.main.mr, f.main.nr), (6, 64));
//! ```

use ftuner_dialects::ops;
pub mod contraction;
pub mod cpu;
pub mod epilogue;
pub mod gpu;
mod gpu_lower;
pub mod lower;
mod pass;
pub mod patch;
pub mod plan;
pub mod schedule;

pub use gpu_lower::{LowerUkernelsToGpuPass, KERNEL_MODULE};
pub use lower::LowerUkernelsPass;
pub use pass::{describe_module, AnnotateUkernelsPass};
pub use patch::PatchUkernelsPass;
pub use schedule::{KernelClass, Order, Schedule, ScheduleSource, WorkloadKey};

/// Register this crate's passes (`annotate-ukernels`, `patch-ukernels`, `lower-ukernels`).
pub fn register_passes(r: &mut ftuner_pass::PassRegistry) {
    r.register(|| Box::new(AnnotateUkernelsPass::default()));
    r.register(|| Box::new(PatchUkernelsPass::default()));
    r.register(|| Box::new(LowerUkernelsPass::default()));
    r.register(|| Box::new(LowerUkernelsToGpuPass::default()));
}

/// Element type of a contraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    F32,
    F16,
    BF16,
}

impl DType {
    pub fn bytes(self) -> u32 {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::BF16 => 2,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
        }
    }
    pub fn from_type(t: ftuner_ir::Type) -> Option<DType> {
        match t.float_kind()? {
            ftuner_ir::FloatKind::F32 => Some(DType::F32),
            ftuner_ir::FloatKind::F16 => Some(DType::F16),
            ftuner_ir::FloatKind::BF16 => Some(DType::BF16),
            _ => None,
        }
    }
}

/// The uKernel family for one target and element type.
#[derive(Clone, Debug)]
pub enum Family {
    Cpu(cpu::CpuFamily),
    Gpu(gpu::GpuFamily),
}

impl Family {
    pub fn build(model: &ftuner_hw::HardwareModel, dtype: DType) -> Result<Family, String> {
        if let Some(c) = model.cpu() {
            return cpu::build(c, dtype).map(Family::Cpu);
        }
        if let Some(g) = model.gpu() {
            return gpu::build(g, dtype).map(Family::Gpu);
        }
        Err(format!(
            "target '{}' has neither a CPU nor a GPU description",
            model.name
        ))
    }
    pub fn report(&self) -> String {
        match self {
            Family::Cpu(f) => f.report(),
            Family::Gpu(f) => f.report(),
        }
    }
}

/// The `ukernel.patch` ops under `op`, in walk order (what the lowering passes visit).
pub(crate) fn patches_in(ir: &ftuner_ir::Ir, op: ftuner_ir::OpId) -> Vec<ftuner_ir::OpId> {
    let mut patches = vec![];
    ir.walk_pre(op, &mut |o| {
        if ir.name(o) == ops::ukernel::PatchOp::NAME {
            patches.push(o);
        }
    });
    patches
}

/// A lowering pass's outcome for patch `p`: counted as lowered, or as skipped with a
/// remark saying why (a patch left alone is not an error).
pub(crate) fn count_outcome(
    cx: &mut ftuner_pass::PassContext<'_>,
    p: ftuner_ir::OpId,
    r: Result<(), String>,
    (lowered, skipped): (&mut u64, &mut u64),
) {
    match r {
        Ok(()) => *lowered += 1,
        Err(e) => {
            cx.emit(ftuner_ir::Diagnostic::remark(
                cx.ir.loc(p),
                format!("not lowered: {e}"),
            ));
            *skipped += 1;
        }
    }
}

/// The hardware model a pass option names (`host`, a built-in name, `cuda:sm_XX`, a .toml
/// file), or, when empty, the module's (the `hw-model` analysis). Errors are diagnostics.
pub fn target_model(
    cx: &mut ftuner_pass::PassContext<'_>,
    op: ftuner_ir::OpId,
    target: &str,
) -> Result<ftuner_hw::HardwareModel, ftuner_pass::PassFailure> {
    let model = if target.is_empty() {
        cx.analysis::<ftuner_hw::HwModelAnalysis>(op)
            .map(|a| a.model.clone())
    } else {
        // An option names it (a file only the user chose): the ops that record the target
        // name resolve it again later (HardwareModel::load_named).
        ftuner_hw::HardwareModel::load(target).inspect(|m| {
            ftuner_hw::register_target(target, m.clone());
        })
    };
    model.map_err(|e| {
        cx.emit(ftuner_ir::Diagnostic::error(cx.ir.loc(op), e));
        ftuner_pass::PassFailure
    })
}
