//! # ftuner-hw
//!
//! The hardware information model. Every hardware number ftuner uses comes from here:
//! CPUs (vector width and registers, FMA units, latency, load ports, caches, cores,
//! frequency, bandwidth) and GPUs (SMs, warps, thread/register/shared-memory limits,
//! bandwidths, peaks, MMA shapes, transactions, banks).
//!
//! Targets are data files (`targets/*.toml`, each number with its source), built in by
//! name (`zen4`, `skylake-avx512`, `sapphirerapids`, `neoverse-v2`, `k80`, `v100`, `a100`, `h100`, `h200`,
//! `rtx3090`, `rtx4090`), loadable from a path, or detected (`host`).
//!
//! ```
//! let m = ftuner_hw::HardwareModel::load("a100").unwrap();
//! let g = m.gpu().unwrap();
//! assert_eq!(g.sm_count, 108);
//! assert!(m.report().contains("peak FP32"));
//! ```

mod analysis;
mod host;
mod model;
mod report;

pub use analysis::{HwModelAnalysis, TARGET_ATTR};
pub use host::detect_host;
pub use model::{register_target, CacheLevel, CpuIsa, CpuModel, GpuModel, HardwareModel, Kind};

/// Built-in target descriptions: (name, TOML text).
pub const BUILTIN_TARGETS: &[(&str, &str)] = &[
    ("zen3", include_str!("../../../targets/zen3.toml")),
    ("zen4", include_str!("../../../targets/zen4.toml")),
    ("zen5", include_str!("../../../targets/zen5.toml")),
    (
        "skylake-avx512",
        include_str!("../../../targets/skylake-avx512.toml"),
    ),
    (
        "sapphirerapids",
        include_str!("../../../targets/sapphirerapids.toml"),
    ),
    (
        "neoverse-v2",
        include_str!("../../../targets/neoverse-v2.toml"),
    ),
    ("k80", include_str!("../../../targets/k80.toml")),
    ("v100", include_str!("../../../targets/v100.toml")),
    ("a100", include_str!("../../../targets/a100.toml")),
    ("h100", include_str!("../../../targets/h100.toml")),
    ("h200", include_str!("../../../targets/h200.toml")),
    ("rtx3090", include_str!("../../../targets/rtx3090.toml")),
    ("rtx4090", include_str!("../../../targets/rtx4090.toml")),
];
