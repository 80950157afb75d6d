//! ftuner's pipelines, registered by name like passes (MLIR's `PassPipelineRegistration`),
//! so every tool, test and the Python package run the same thing by name, and
//! `--dump-pass-pipeline` shows what a name expands to:
//!
//! The pipeline texts live here, below every crate whose passes they name, so that a tool
//! and a library (ftuner-tune's measurement, the Python package) build the same text; a
//! registry resolves the names when the text is parsed.
//!
//! * `ftuner-cpu-patch{target= tuning-db= derive=}`: up to the patched contractions (what
//!   `ftuner.explain` reads): OLLIE's derivations when `derive`, the weight preparation
//!   outlined (arguments marked `{ftuner.weight}`), elementwise chains fused, contractions
//!   patched with uKernels of the hardware model for `target`;
//! * `ftuner-cpu-pipeline{...}`: that, then the uKernels lowered to loops over static tiles
//!   and the preparation extended to what now derives from prepared values only (the
//!   weights packed into the panels the register tiles read; the module stays on tensors;
//!   the runtime bufferizes and lowers the rest);
//! * `ftuner-gpu-pipeline{target=}`: patched for a GPU model, bufferized, lowered to kernels
//!   and launches.

use ftuner_pass::{PassRegistry, PipelineInfo};

const CPU_OPTIONS: &[(&str, &str, &str)] = &[
    (
        "target",
        "host",
        "hardware model: host, zen3, zen4, zen5, skylake-avx512, ... (patch-ukernels' target)",
    ),
    (
        "tuning-db",
        "",
        "an ftuner-tune database whose schedules patch-ukernels applies",
    ),
    (
        "derive",
        "false",
        "run OLLIE's derivations first (ollie-derive, convert-ta-to-linalg)",
    ),
];

/// What `ftuner-cpu-patch` runs before `patch-ukernels`: OLLIE's derivations when `derive`
/// (for `target`'s hardware model), the weight preparation outlined, elementwise chains
/// fused, convolutions' per-channel scales (BatchNorm) folded into their filters (and
/// that preparation outlined too), 1x1 convolutions turned into matmuls and padded
/// windows peeled. The
/// contractions `patch-ukernels` then finds are what ftuner-tune extracts as kernels, so
/// their workload keys are the ones `patch-ukernels{tuning-db=...}` looks up.
pub fn cpu_prepatch(target: &str, derive: bool) -> String {
    let derive = if derive {
        format!(
            "canonicalize,cse,ollie-derive{{target=auto hw-target={target}}},convert-ta-to-linalg,"
        )
    } else {
        String::new()
    };
    format!(
        "{derive}outline-weight-preparation,canonicalize,cse,linalg-fuse-elementwise-ops,fold-scale-into-conv,outline-weight-preparation,convert-1x1-conv-to-matmul,outline-weight-preparation,peel-padded-windows"
    )
}

fn cpu_patch(v: &[String]) -> String {
    let (target, db, derive) = (&v[0], &v[1], v[2] == "true");
    let db = if db.is_empty() {
        String::new()
    } else {
        format!(" tuning-db={db}")
    };
    format!(
        "{},patch-ukernels{{target={target}{db}}}",
        cpu_prepatch(target, derive)
    )
}

/// What follows `ftuner-cpu-patch` in `ftuner-cpu-pipeline`.
pub const CPU_LOWER: &str =
    "lower-ukernels,reassociate-reductions,canonicalize,cse,outline-weight-preparation";

pub fn register(r: &mut PassRegistry) {
    r.register_pipeline(PipelineInfo {
        argument: "ftuner-cpu-patch",
        summary: "ftuner's CPU pipeline up to the patched contractions (weights prepared once, elementwise chains fused, contractions patched with uKernels)",
        options: CPU_OPTIONS,
        expand: cpu_patch,
    });
    r.register_pipeline(PipelineInfo {
        argument: "ftuner-cpu-pipeline",
        summary: "ftuner's CPU pipeline on tensors: ftuner-cpu-patch, then the uKernels lowered to loops over static tiles",
        options: CPU_OPTIONS,
        expand: |v| format!("{},{CPU_LOWER}", cpu_patch(v)),
    });
    r.register_pipeline(PipelineInfo {
        argument: "ftuner-gpu-pipeline",
        summary: "ftuner's GPU pipeline: contractions patched for a GPU model, bufferized, lowered to kernels and launches",
        options: &[(
            "target",
            "cuda:sm_80",
            "GPU: cuda:sm_XX or a GPU hardware model (a100, h100, ...)",
        )],
        expand: |v| {
            format!(
                "canonicalize,cse,patch-ukernels{{target={}}},bufferize,lower-ukernels-to-gpu,canonicalize,cse",
                v[0]
            )
        },
    });
}
