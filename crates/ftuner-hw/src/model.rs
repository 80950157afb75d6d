//! The model: plain data read from target files or detected, plus derived figures.

use serde::Deserialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuIsa {
    Sse,
    Avx2,
    Avx512,
    Neon,
    Sve,
    Generic,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheLevel {
    pub size: u64,
    pub ways: u32,
    pub line: u32,
    /// Cores sharing this cache (1 = private).
    #[serde(default = "one")]
    pub shared_by: u32,
}

fn one() -> u32 {
    1
}

impl CacheLevel {
    pub fn sets(&self) -> u64 {
        self.size / (self.ways.max(1) as u64 * self.line.max(1) as u64)
    }
    /// The most of `count` lines, `stride` bytes apart (the first at a line's start), that
    /// fall into one set. A stride of `s` whole lines visits `sets / gcd(s, sets)` sets in
    /// turn; any other stride is counted line by line (up to 2^16 of them).
    pub fn most_lines_in_a_set(&self, stride: u64, count: u64) -> u64 {
        let (line, sets) = (self.line.max(1) as u64, self.sets().max(1));
        if count == 0 {
            return 0;
        }
        if stride.is_multiple_of(line) {
            let (mut a, mut b) = ((stride / line) % sets, sets);
            while b != 0 {
                (a, b) = (b, a % b);
            }
            // gcd(0, sets) = sets: every line in one set.
            return count.div_ceil(sets / a);
        }
        let mut per = std::collections::HashMap::new();
        for c in 0..count.min(1 << 16) {
            *per.entry((c * stride / line) % sets).or_insert(0u64) += 1;
        }
        per.into_values().max().unwrap_or(0)
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuModel {
    pub isa: CpuIsa,
    /// Architectural vector width.
    pub vector_bits: u32,
    pub vector_registers: u32,
    /// Width of each FMA unit (Zen 4 runs 512-bit ops on 256-bit units).
    pub datapath_bits: u32,
    pub fma_units: u32,
    /// Cycles from an FMA's inputs to its result.
    pub fma_latency: u32,
    /// Vector loads per cycle at `datapath_bits` width.
    pub load_ports: u32,
    pub cores: u32,
    pub freq_ghz: f64,
    pub dram_bw_gbs: f64,
    #[serde(default)]
    pub has_f16: bool,
    #[serde(default)]
    pub has_bf16: bool,
    pub l1d: CacheLevel,
    pub l2: CacheLevel,
    pub l3: Option<CacheLevel>,
}

impl CpuModel {
    /// Lanes of a full vector for an element of `bytes` bytes.
    pub fn lanes(&self, bytes: u32) -> u32 {
        self.vector_bits / (8 * bytes)
    }
    /// Full-width vector FMAs issued per cycle.
    pub fn vector_fmas_per_cycle(&self) -> f64 {
        self.fma_units as f64 * self.datapath_bits as f64 / self.vector_bits as f64
    }
    /// Full-width vector loads per cycle.
    pub fn vector_loads_per_cycle(&self) -> f64 {
        self.load_ports as f64 * self.datapath_bits.min(self.vector_bits) as f64
            / self.vector_bits as f64
    }
    /// f32 FLOPs per cycle per core: 2 per FMA lane.
    pub fn flops_per_cycle(&self, bytes: u32) -> f64 {
        2.0 * self.fma_units as f64 * (self.datapath_bits / (8 * bytes)) as f64
    }
    pub fn peak_gflops_core(&self, bytes: u32) -> f64 {
        self.flops_per_cycle(bytes) * self.freq_ghz
    }
    pub fn peak_gflops_chip(&self, bytes: u32) -> f64 {
        self.peak_gflops_core(bytes) * self.cores as f64
    }
    /// FLOPs per DRAM byte needed to be compute-bound (the machine balance).
    pub fn machine_balance(&self, bytes: u32) -> f64 {
        self.peak_gflops_chip(bytes) / self.dram_bw_gbs
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuModel {
    pub compute_capability: String,
    pub sm_count: u32,
    pub warp_size: u32,
    pub max_threads_per_sm: u32,
    pub max_threads_per_block: u32,
    pub max_blocks_per_sm: u32,
    pub regs_per_thread: u32,
    pub regs_per_block: u32,
    pub regs_per_sm: u32,
    /// Register budgets tiles are built for (FTuner's launch bounds where it gives them).
    pub reg_budget_per_block: u32,
    pub reg_budget_per_thread: u32,
    pub smem_per_block: u64,
    pub smem_per_sm: u64,
    pub l2_bytes: u64,
    pub dram_bw_gbs: f64,
    pub smem_bw_gbs: f64,
    pub clock_ghz: f64,
    pub peak_fp32_gflops: f64,
    pub transaction_bytes: Vec<u32>,
    pub smem_banks: u32,
    pub smem_bank_bytes: u32,
    #[serde(default)]
    pub tensor_gflops: std::collections::BTreeMap<String, f64>,
    #[serde(default)]
    pub mma_shapes: std::collections::BTreeMap<String, String>,
}

impl GpuModel {
    /// (m, n, k) of the MMA instruction for input type `dtype` (`f16`, `bf16`, `tf32`).
    pub fn mma_shape(&self, dtype: &str) -> Option<(u32, u32, u32)> {
        let s = self.mma_shapes.get(dtype)?;
        let s = s.strip_prefix('m')?;
        let (m, rest) = s.split_once('n')?;
        let (n, k) = rest.split_once('k')?;
        Some((m.parse().ok()?, n.parse().ok()?, k.parse().ok()?))
    }
    /// The smallest memory transaction (sector) in bytes.
    pub fn sector_bytes(&self) -> u32 {
        self.transaction_bytes.first().copied().unwrap_or(32)
    }
    pub fn machine_balance(&self) -> f64 {
        self.peak_fp32_gflops / self.dram_bw_gbs
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Cpu,
    Gpu,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareModel {
    pub name: String,
    pub kind: Kind,
    #[serde(default)]
    pub description: String,
    pub cpu: Option<CpuModel>,
    pub gpu: Option<GpuModel>,
    /// Notes from detection (e.g. values assumed because they could not be read).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl HardwareModel {
    pub fn cpu(&self) -> Option<&CpuModel> {
        self.cpu.as_ref()
    }
    pub fn gpu(&self) -> Option<&GpuModel> {
        self.gpu.as_ref()
    }

    /// Parse a target description; errors name the file and the field.
    pub fn from_toml(text: &str, origin: &str) -> Result<HardwareModel, String> {
        let m: HardwareModel = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| {
                let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                format!(" (line {line})")
            });
            format!(
                "{origin}: invalid target description: {}{}",
                e.message(),
                at.unwrap_or_default()
            )
        })?;
        match (&m.kind, &m.cpu, &m.gpu) {
            (Kind::Cpu, Some(c), None) => {
                if c.vector_bits == 0
                    || c.vector_registers == 0
                    || c.fma_units == 0
                    || c.datapath_bits == 0
                    || c.load_ports == 0
                {
                    return Err(format!("{origin}: cpu widths, registers, FMA units and load ports must be positive"));
                }
            }
            (Kind::Gpu, None, Some(g)) => {
                if g.sm_count == 0
                    || g.warp_size == 0
                    || g.max_threads_per_block == 0
                    || g.peak_fp32_gflops <= 0.0
                    || g.dram_bw_gbs <= 0.0
                {
                    return Err(format!(
                        "{origin}: gpu counts, peak and bandwidth must be positive"
                    ));
                }
            }
            _ => {
                return Err(format!(
                    "{origin}: a '{:?}' target needs exactly its [{}] table",
                    m.kind,
                    if m.kind == Kind::Cpu { "cpu" } else { "gpu" }
                ))
            }
        }
        Ok(m)
    }

    /// `host`, a built-in name (also `cuda:sm_80`-style aliases), or a path to a TOML file.
    pub fn load(target: &str) -> Result<HardwareModel, String> {
        if target == "host" {
            return Ok(crate::host::detect_host());
        }
        let key = match target {
            "cuda:sm_70" => "v100",
            "cuda:sm_80" => "a100",
            "cuda:sm_86" => "rtx3090",
            "cuda:sm_89" => "rtx4090",
            "cuda:sm_90" => "h100",
            "cuda:sm_37" => "k80",
            t => t,
        };
        if let Some((_, text)) = crate::BUILTIN_TARGETS.iter().find(|(n, _)| *n == key) {
            return HardwareModel::from_toml(text, &format!("<built-in target {key}>"));
        }
        if target.ends_with(".toml") || std::path::Path::new(target).exists() {
            let text = read_target_file(target)?;
            return HardwareModel::from_toml(&text, target);
        }
        let names: Vec<&str> = crate::BUILTIN_TARGETS.iter().map(|(n, _)| *n).collect();
        Err(format!(
            "unknown target '{target}' (expected host, {}, cuda:sm_XX, or a .toml file)",
            names.join(", ")
        ))
    }

    /// A target named by the IR itself (a module's `ftuner.target`, an op's `target`):
    /// `host`, a built-in name, or a model a tool loaded from a file the user named and
    /// [`register_target`]ed under that name. Never a file: untrusted input does not
    /// choose what the compiler reads (`/dev/zero`, a FIFO, a secret quoted in an error).
    pub fn load_named(target: &str) -> Result<HardwareModel, String> {
        if let Some(m) = registered()
            .lock()
            .ok()
            .and_then(|r| r.get(target).cloned())
        {
            return Ok(m);
        }
        let builtin = target == "host"
            || target.starts_with("cuda:")
            || crate::BUILTIN_TARGETS.iter().any(|(n, _)| *n == target);
        if builtin {
            return HardwareModel::load(target);
        }
        let names: Vec<&str> = crate::BUILTIN_TARGETS.iter().map(|(n, _)| *n).collect();
        Err(format!(
            "unknown target '{target}' named in the IR (expected host, {}, or cuda:sm_XX; a target file is given as a tool or pass option, not by the IR)",
            names.join(", ")
        ))
    }
}

/// The largest target file read (a description is a few kilobytes).
const MAX_TARGET_FILE: u64 = 1 << 20;

/// A target description file: a regular file (not a device or a FIFO) of at most 1 MiB.
fn read_target_file(path: &str) -> Result<String, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read target file '{path}': {e}"))?;
    if !meta.is_file() {
        return Err(format!("target file '{path}' is not a regular file"));
    }
    if meta.len() > MAX_TARGET_FILE {
        return Err(format!(
            "target file '{path}' is {} bytes, more than a target description ({MAX_TARGET_FILE})",
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read target file '{path}': {e}"))
}

fn registered() -> &'static std::sync::Mutex<std::collections::HashMap<String, HardwareModel>> {
    static R: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, HardwareModel>>,
    > = std::sync::OnceLock::new();
    R.get_or_init(Default::default)
}

/// Make `name` (e.g. the path of a target file given on a command line) resolve to `model`
/// where the IR names it ([`HardwareModel::load_named`]). Process-wide.
pub fn register_target(name: &str, model: HardwareModel) {
    if let Ok(mut r) = registered().lock() {
        r.insert(name.to_string(), model);
    }
}

#[cfg(test)]
mod tests {
    use super::CacheLevel;

    /// 48 KiB, 12-way, 64-byte lines: 64 sets.
    const L1: CacheLevel = CacheLevel {
        size: 49152,
        ways: 12,
        line: 64,
        shared_by: 1,
    };

    #[test]
    fn lines_per_set() {
        // 784 lines apart (a 112x112 f32 plane): sets 0, 16, 32, 48 in turn.
        assert_eq!(L1.most_lines_in_a_set(50176, 64), 16);
        assert_eq!(L1.most_lines_in_a_set(50176, 32), 8);
        // 196 lines (56x56): 16 sets.
        assert_eq!(L1.most_lines_in_a_set(12544, 64), 4);
        // A multiple of the 64 sets (64x64 f32): every line in one set.
        assert_eq!(L1.most_lines_in_a_set(16384, 20), 20);
        // One line apart: one line a set until the sets wrap.
        assert_eq!(L1.most_lines_in_a_set(64, 64), 1);
        assert_eq!(L1.most_lines_in_a_set(64, 65), 2);
        // Not a whole number of lines (64.5): the lines drift through the sets.
        assert_eq!(L1.most_lines_in_a_set(4128, 64), 2);
        assert_eq!(L1.most_lines_in_a_set(4128, 0), 0);
    }
}
