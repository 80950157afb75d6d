//! # ftuner-codegen
//!
//! The `llvm` dialect (what `convert-to-llvm` produces) to machine code through LLVM 22 and
//! inkwell: [`emit::module_to_llvm_ir`] writes LLVM's textual IR op by op (block arguments
//! as phis); [`Compiler`] parses it with LLVM, verifies it, runs the new pass manager's
//! `default<O3>` pipeline for a [`Target`] (the host with its detected CPU and features,
//! a named x86-64 CPU, or NVPTX `sm_XX`), and emits assembly, an object file or PTX;
//! [`OrcJit`] compiles a module for the host on every core (split by [`split::partition`])
//! and links it in process.
//!
//! Only this crate (and what runs code through it) links LLVM.

pub mod emit;
mod literals;
pub mod memstats;
mod orc;
pub mod parallel;
pub mod split;
pub mod status;

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine,
    TargetTriple,
};
use inkwell::OptimizationLevel;
use std::sync::Once;

pub use emit::{module_to_llvm_ir, EmitError, FnAttrs};
pub use orc::OrcJit;

/// A code generation error (translation, LLVM's parser or verifier, the target).
#[derive(Debug, Clone)]
pub struct CodegenError(pub String);

impl std::fmt::Display for CodegenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CodegenError {}

fn e(m: impl std::fmt::Display) -> CodegenError {
    CodegenError(m.to_string())
}

/// What to generate code for.
#[derive(Clone, Debug)]
pub struct Target {
    pub triple: String,
    pub cpu: String,
    pub features: String,
}

impl Target {
    /// This machine: LLVM's host triple, CPU name and feature string (AVX2, AVX-512,
    /// FMA, ... as detected).
    pub fn host() -> Target {
        init();
        Target {
            triple: TargetMachine::get_default_triple()
                .as_str()
                .to_string_lossy()
                .into_owned(),
            cpu: TargetMachine::get_host_cpu_name().to_string(),
            features: TargetMachine::get_host_cpu_features().to_string(),
        }
        .tuned()
    }
    /// An x86-64 CPU by LLVM's name (`znver4`, `skylake-avx512`, `haswell`, ...).
    pub fn x86_cpu(cpu: &str) -> Target {
        Target {
            triple: "x86_64-unknown-linux-gnu".into(),
            cpu: cpu.into(),
            features: String::new(),
        }
        .tuned()
    }
    /// The CPU's features plus the tuning LLVM's own model of `cpu` gets wrong here, as
    /// measured ([`X86_TUNING`]).
    fn tuned(mut self) -> Target {
        for (cpu, extra) in X86_TUNING {
            if self.cpu == *cpu {
                if !self.features.is_empty() {
                    self.features.push(',');
                }
                self.features.push_str(extra);
            }
        }
        self
    }
    /// NVIDIA GPUs: `sm` is `sm_70` ... `sm_90`.
    pub fn nvptx(sm: &str) -> Target {
        Target {
            triple: "nvptx64-nvidia-cuda".into(),
            cpu: sm.into(),
            features: "+ptx80".into(),
        }
    }
    /// Parse `host`, `x86:<cpu>`, `<cpu>` (an x86-64 CPU LLVM knows), `nvptx:sm_XX` /
    /// `cuda:sm_XX`, or the name of a hardware model (`targets/*.toml`: `zen4`, `a100`,
    /// ...): the two vocabularies are one, and a name neither knows is an error here, not
    /// an abort inside LLVM.
    pub fn parse(s: &str) -> Result<Target, CodegenError> {
        if s == "host" {
            return Ok(Target::host());
        }
        if let Some((_, llvm)) = HW_MODEL_TARGETS.iter().find(|(hw, _)| *hw == s) {
            if let Some(why) = llvm.strip_prefix("error:") {
                return Err(e(format!(
                    "target '{s}' (a hardware model): {}",
                    why.trim()
                )));
            }
            return Ok(match llvm.strip_prefix("cuda:") {
                Some(sm) => Target::nvptx(sm),
                None => Target::x86_cpu(llvm),
            });
        }
        if let Some(sm) = s.strip_prefix("nvptx:").or_else(|| s.strip_prefix("cuda:")) {
            let ok = sm
                .strip_prefix("sm_")
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| (70..=90).contains(&n));
            if !ok {
                return Err(e(format!("unknown GPU '{sm}': expected sm_70 ... sm_90")));
            }
            return Ok(Target::nvptx(sm));
        }
        let cpu = s.strip_prefix("x86:").unwrap_or(s);
        if !X86_64_CPUS.contains(&cpu) {
            return Err(e(format!(
                "unknown target '{s}': expected host, an x86-64 CPU as LLVM names it (znver4, skylake-avx512, x86-64-v3, ...), cuda:sm_XX, or a hardware model ({})",
                HW_MODEL_TARGETS
                    .iter()
                    .filter(|(_, l)| !l.starts_with("error:"))
                    .map(|(h, _)| *h)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(Target::x86_cpu(cpu))
    }
    pub fn is_gpu(&self) -> bool {
        self.triple.starts_with("nvptx")
    }
    /// Width in bytes of the vector registers code for this target is built around (the
    /// blocks of in-register transposes): 64 with AVX-512, 32 with AVX, 16 for SSE-only
    /// x86-64 CPUs, from the feature string where it names AVX (the host's always does),
    /// else from the CPU's name ([`X86_AVX512_CPUS`], [`X86_SSE_CPUS`]). GPUs: 64.
    pub fn vector_bytes(&self) -> u32 {
        if self.is_gpu() {
            return 64;
        }
        let has = |f: &str| {
            self.features
                .split(',')
                .find(|t| t.get(1..) == Some(f))
                .map(|t| t.starts_with('+'))
        };
        match (has("avx512f"), has("avx")) {
            (Some(true), _) => 64,
            (_, Some(true)) => 32,
            (_, Some(false)) => 16,
            _ if X86_AVX512_CPUS.contains(&self.cpu.as_str()) => 64,
            _ if X86_SSE_CPUS.contains(&self.cpu.as_str()) => 16,
            _ => 32,
        }
    }
    fn machine(&self, reloc: RelocMode) -> Result<TargetMachine, CodegenError> {
        init();
        let triple = TargetTriple::create(&self.triple);
        let t = LlvmTarget::from_triple(&triple)
            .map_err(|m| e(format!("target {}: {m}", self.triple)))?;
        t.create_target_machine(
            &triple,
            &self.cpu,
            &self.features,
            OptimizationLevel::Aggressive,
            reloc,
            CodeModel::Default,
        )
        .ok_or_else(|| {
            e(format!(
                "LLVM has no target machine for {} / {}",
                self.triple, self.cpu
            ))
        })
    }
}

/// LLVM tuning features per x86-64 CPU where LLVM's cost model and the core disagree.
///
/// `znver4`: `+prefer-no-gather`. LLVM treats gathers as legal and cheap on every AVX-512
/// core and vectorizes strided loops with `vgatherdps`; Zen 4 runs gathers in microcode.
/// MobileNetV2's depthwise border columns (`out[n, c, h, 0] = sum in[n, c, h + r, s] *
/// k[c, r, s]`, the innermost loop over `h` at a stride of the row) became a loop of eleven
/// gathers per 12 outputs that took ~100 cycles per gather (perf annotate), 1 ms per call
/// for 330k multiply-adds; without gathers the loop is scalar and a fraction of that.
/// Whole models, one thread, both builds in one process, alternated (Zen 4, family 25
/// model 17; docs/codegen.md): MobileNetV2 batch 8 103.7 -> 95.3 ms, DCGAN batch 8 22.6
/// -> 21.0 ms, BERT and GPT-2 unchanged.
///
/// `znver5`: `+prefer-no-gather` too. Zen 5's gathers are faster than Zen 4's and most
/// loops do not notice, but the DCGAN generator's col2im phases (`convert-ta-to-linalg`'s
/// polyphase split, read across the batch dim) became gathers that ran 3-5x slower than
/// the scalar loop: 1.41 -> 0.29 and 1.32 -> 0.47 ms per call at batch 8 (the package's
/// nests under `perf`, `tools/bench/nest_profile.py dcgan 8`). Saved libraries, one
/// thread, alternated in one process (`tools/bench/ab_saved.py`, nine rounds, AMD EPYC
/// family 26 model 2): DCGAN batch 1 1.69 -> 1.42 ms, batch 8 11.08 -> 10.08 (and
/// 1.79 -> 1.59, 13.09 -> 11.22 in an earlier sitting); MobileNetV2, ResNet-50, BERT and
/// GPT-2 within 2% either way (scatters, left to LLVM, changed nothing measurable).
///
/// `emeraldrapids`: `-prefer-256-bit`. LLVM's model of the Intel AVX-512 server cores
/// prefers 256-bit vectors in the loops it vectorizes itself (Skylake-X lowered its clock
/// on 512-bit code); Emerald Rapids runs two 512-bit FMAs per cycle, and the loops ftuner
/// leaves to LLVM's vectorizer (depthwise convolutions, BatchNorm/ReLU consumers,
/// poolings, softmax and LayerNorm rows) do more per instruction at full width. Saved
/// libraries before/after, alternated in one process (`tools/bench/ab_saved.py`, one
/// thread, Xeon family 6 model 207): MobileNetV2 batch 1 9.39 -> 8.78 ms, batch 8 74.7 ->
/// 71.7 ms, ResNet-50 batch 1 71.9 -> 70.1 ms, BERT (lengths 9, 28, 75) unchanged
/// (35.8/35.8, 51.7/51.2, 127.9/126.9 ms). Sapphire Rapids has the same core but is not
/// measured, so not listed.
const X86_TUNING: &[(&str, &str)] = &[
    ("znver4", "+prefer-no-gather"),
    ("znver5", "+prefer-no-gather"),
    ("emeraldrapids", "-prefer-256-bit"),
];

/// The hardware models' names (`ftuner_hw::BUILTIN_TARGETS`) as LLVM targets: an x86-64
/// CPU, `cuda:sm_XX`, or `error: why` for one ftuner cannot generate code for.
pub const HW_MODEL_TARGETS: &[(&str, &str)] = &[
    ("zen3", "znver3"),
    ("zen4", "znver4"),
    ("zen5", "znver5"),
    ("skylake-avx512", "skylake-avx512"),
    ("sapphirerapids", "sapphirerapids"),
    (
        "neoverse-v2",
        "error: an AArch64 core; ftuner generates x86-64 and NVPTX code",
    ),
    (
        "k80",
        "error: sm_37; NVPTX code generation here starts at sm_70",
    ),
    ("v100", "cuda:sm_70"),
    ("a100", "cuda:sm_80"),
    ("h100", "cuda:sm_90"),
    ("h200", "cuda:sm_90"),
    ("rtx3090", "cuda:sm_86"),
    ("rtx4090", "cuda:sm_89"),
];

/// The CPUs of [`X86_64_CPUS`] with AVX-512 (LLVM 22's feature lists).
const X86_AVX512_CPUS: &[&str] = &[
    "cannonlake",
    "cascadelake",
    "cooperlake",
    "diamondrapids",
    "emeraldrapids",
    "graniterapids",
    "graniterapids-d",
    "icelake-client",
    "icelake-server",
    "knl",
    "knm",
    "novalake",
    "rocketlake",
    "sapphirerapids",
    "skx",
    "skylake-avx512",
    "tigerlake",
    "x86-64-v4",
    "znver4",
    "znver5",
];

/// The CPUs of [`X86_64_CPUS`] without AVX (16-byte SSE registers).
const X86_SSE_CPUS: &[&str] = &[
    "amdfam10",
    "athlon-fx",
    "athlon64",
    "athlon64-sse3",
    "atom",
    "barcelona",
    "bonnell",
    "btver1",
    "core2",
    "corei7",
    "generic",
    "goldmont",
    "goldmont-plus",
    "k8",
    "k8-sse3",
    "nehalem",
    "nocona",
    "opteron",
    "opteron-sse3",
    "penryn",
    "silvermont",
    "slm",
    "tremont",
    "westmere",
    "x86-64",
    "x86-64-v2",
];

/// The x86-64 CPUs LLVM 22 generates 64-bit code for (`llc -march=x86-64 -mcpu=help`,
/// those that compile a 64-bit function; aliases with `_` left out). A CPU LLVM does not
/// know, or a 32-bit one, would abort inside LLVM.
pub const X86_64_CPUS: &[&str] = &[
    "alderlake",
    "amdfam10",
    "arrowlake",
    "arrowlake-s",
    "athlon-fx",
    "athlon64",
    "athlon64-sse3",
    "atom",
    "barcelona",
    "bdver1",
    "bdver2",
    "bdver3",
    "bdver4",
    "bonnell",
    "broadwell",
    "btver1",
    "btver2",
    "cannonlake",
    "cascadelake",
    "clearwaterforest",
    "cooperlake",
    "core-avx-i",
    "core-avx2",
    "core2",
    "corei7",
    "corei7-avx",
    "diamondrapids",
    "emeraldrapids",
    "generic",
    "goldmont",
    "goldmont-plus",
    "gracemont",
    "grandridge",
    "graniterapids",
    "graniterapids-d",
    "haswell",
    "icelake-client",
    "icelake-server",
    "ivybridge",
    "k8",
    "k8-sse3",
    "knl",
    "knm",
    "lunarlake",
    "meteorlake",
    "nehalem",
    "nocona",
    "novalake",
    "opteron",
    "opteron-sse3",
    "pantherlake",
    "penryn",
    "raptorlake",
    "rocketlake",
    "sandybridge",
    "sapphirerapids",
    "sierraforest",
    "silvermont",
    "skx",
    "skylake",
    "skylake-avx512",
    "slm",
    "tigerlake",
    "tremont",
    "westmere",
    "wildcatlake",
    "x86-64",
    "x86-64-v2",
    "x86-64-v3",
    "x86-64-v4",
    "znver1",
    "znver2",
    "znver3",
    "znver4",
    "znver5",
];

fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let cfg = InitializationConfig::default();
        LlvmTarget::initialize_x86(&cfg);
        LlvmTarget::initialize_nvptx(&cfg);
    });
}

/// Parses, verifies and optimizes modules of one LLVM context.
pub struct Compiler {
    ctx: Context,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler::new()
    }
}

/// Output kinds of [`Compiler::emit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// Textual LLVM IR after optimization.
    LlvmIr,
    /// Assembly (PTX for NVPTX targets).
    Asm,
    /// An ELF object file.
    Obj,
}

/// Our `llvm`-dialect module as textual LLVM IR for `target` (its CPU and features as
/// function attributes; `kernels`: functions with the PTX kernel calling convention).
pub fn llvm_text(
    ir: &ftuner_ir::Ir,
    top: ftuner_ir::OpId,
    target: &Target,
    kernels: &[String],
) -> Result<String, CodegenError> {
    let attrs = FnAttrs {
        cpu: Some(target.cpu.clone()).filter(|c| !c.is_empty()),
        features: Some(target.features.clone()).filter(|f| !f.is_empty()),
        kernels: kernels.to_vec(),
        packed: !target.is_gpu(),
    };
    module_to_llvm_ir(ir, top, &attrs).map_err(|x| {
        let at =
            x.op.and_then(|o| ftuner_ir::diag::file_line_col(ir.loc(o)))
                .map(|(f, l, c)| format!("{f}:{l}:{c}: "))
                .unwrap_or_default();
        let name = x.op.map(|o| ir.name(o)).unwrap_or("module");
        e(format!("{at}error: '{name}' op {}", x.message))
    })
}

impl Compiler {
    pub fn new() -> Compiler {
        init();
        Compiler {
            ctx: Context::create(),
        }
    }

    /// Translate our `llvm`-dialect module for `target`, verify it, and optimize it
    /// (`opt_level` 0..=3; the new pass manager's `default<On>`).
    pub fn module(
        &self,
        ir: &ftuner_ir::Ir,
        top: ftuner_ir::OpId,
        target: &Target,
        opt_level: u8,
        kernels: &[String],
    ) -> Result<Module<'_>, CodegenError> {
        let text = llvm_text(ir, top, target, kernels)?;
        self.parse(&text, target, opt_level)
    }

    /// Parse textual LLVM IR, verify it and optimize it for `target`.
    pub fn parse(
        &self,
        text: &str,
        target: &Target,
        opt_level: u8,
    ) -> Result<Module<'_>, CodegenError> {
        let buf = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), "ftuner");
        let m = self
            .ctx
            .create_module_from_ir(buf)
            .map_err(|m| e(format!("LLVM rejected the translated module: {m}")))?;
        m.verify()
            .map_err(|m| e(format!("the translated module does not verify: {m}")))?;
        let tm = target.machine(RelocMode::PIC)?;
        m.set_triple(&TargetTriple::create(&target.triple));
        m.set_data_layout(&tm.get_target_data().get_data_layout());
        let level = opt_level.min(3);
        m.run_passes(
            &format!("default<O{level}>"),
            &tm,
            PassBuilderOptions::create(),
        )
        .map_err(|x| e(format!("optimization failed: {x}")))?;
        Ok(m)
    }

    /// Emit a module as LLVM IR, assembly/PTX or an object file.
    pub fn emit(
        &self,
        m: &Module<'_>,
        target: &Target,
        what: Emit,
    ) -> Result<Vec<u8>, CodegenError> {
        if what == Emit::LlvmIr {
            return Ok(m.print_to_string().to_bytes().to_vec());
        }
        let tm = target.machine(RelocMode::PIC)?;
        let ft = if what == Emit::Asm {
            FileType::Assembly
        } else {
            FileType::Object
        };
        let buf = tm
            .write_to_memory_buffer(m, ft)
            .map_err(|x| e(format!("code generation failed: {x}")))?;
        Ok(buf.as_slice().to_vec())
    }
}

/// `_ftuner_packed_NAME(void **args)`: argument pointers, then the result's.
pub type PackedFn = unsafe extern "C" fn(*mut *mut std::ffi::c_void);

extern "C" {
    /// `dlsym(RTLD_DEFAULT, name)` (glibc: `RTLD_DEFAULT` is the null handle).
    fn dlsym(handle: *mut std::ffi::c_void, name: *const std::ffi::c_char)
        -> *mut std::ffi::c_void;
}

/// The libm functions the registered ops lower to (their spec's `llvm = { libm = .. }`),
/// f64 and f32 forms, with their addresses in this process (libm is loaded: Rust's float
/// methods call it).
fn libm_symbols() -> Vec<(String, *mut std::ffi::c_void)> {
    let mut names: Vec<String> = ftuner_dialects::registry()
        .ops()
        .filter_map(|d| match d.llvm {
            Some(ftuner_ir::LlvmLowering::Libm(f)) => Some(f),
            _ => None,
        })
        .flat_map(|f| [f.to_string(), format!("{f}f")])
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|n| {
            let c = std::ffi::CString::new(n.as_str()).ok()?;
            // SAFETY: looking up a symbol by a NUL-terminated name.
            let p = unsafe { dlsym(std::ptr::null_mut(), c.as_ptr()) };
            (!p.is_null()).then_some((n, p))
        })
        .collect()
}

/// Make `name` resolve to `addr` in JIT-compiled code (a function an external declaration
/// names, e.g. a library call). Process-wide; a later call for the same name wins.
///
/// # Safety
/// `addr` must be a function with the signature the compiled code declares for `name`
/// (for memref arguments: MLIR's expanded descriptors), alive for the rest of the process.
pub unsafe fn add_symbol(name: &str, addr: *mut std::ffi::c_void) {
    if let Ok(mut p) = PROVIDED.lock() {
        p.insert(name.to_string(), addr as usize);
    }
}

/// The external functions JIT-compiled code may call: the runtime's, libm's (registered
/// below) and those [`add_symbol`] names.
static PROVIDED: std::sync::LazyLock<std::sync::Mutex<std::collections::BTreeMap<String, usize>>> =
    std::sync::LazyLock::new(Default::default);

/// The functions JIT-compiled code may call, with their addresses.
fn provided_symbols() -> Vec<(String, usize)> {
    PROVIDED
        .lock()
        .map(|p| p.iter().map(|(k, v)| (k.clone(), *v)).collect())
        .unwrap_or_default()
}

fn native_calls_allowed() -> bool {
    ALLOW_NATIVE.load(std::sync::atomic::Ordering::Relaxed)
}
static ALLOW_NATIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Let JIT-compiled modules call any function of the process (`func.func private @f`
/// resolved by the dynamic linker). Off by default: a module from untrusted input could
/// otherwise declare and call `system`. Process-wide.
pub fn allow_native_calls(on: bool) {
    ALLOW_NATIVE.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// The runtime's functions, the counted allocator, and libm functions generated code
/// calls, made known to the JIT by address (the binary may not export them for dynamic
/// lookup).
fn register_runtime_symbols() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let syms: [(&str, *mut std::ffi::c_void); 8] = [
            ("aligned_alloc", memstats::counted_aligned_alloc as *mut _),
            ("ftuner_rt_release", memstats::ftuner_rt_release as *mut _),
            ("ftuner_rt_released", memstats::ftuner_rt_released as *mut _),
            ("ftuner_rt_fail", status::ftuner_rt_fail as *mut _),
            ("ftuner_rt_failed", status::ftuner_rt_failed as *mut _),
            (
                "ftuner_rt_parallel_for",
                parallel::ftuner_rt_parallel_for as *mut _,
            ),
            (
                "ftuner_rt_parallel_for_nested",
                parallel::ftuner_rt_parallel_for_nested as *mut _,
            ),
            ("free", memstats::counted_free as *mut _),
        ];
        let libm = libm_symbols();
        let syms = syms
            .iter()
            .map(|(n, p)| (*n, *p))
            .chain(libm.iter().map(|(n, p)| (n.as_str(), *p)));
        for (n, p) in syms {
            if let Ok(mut known) = PROVIDED.lock() {
                known.insert(n.to_string(), p as usize);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `vector_bytes` agrees with LLVM: a `<16 x float>` add compiled for each x86-64 CPU
    /// LLVM knows uses zmm registers exactly where it says 64, ymm where 32, xmm where 16.
    #[test]
    fn vector_bytes_matches_llvm_registers() {
        let ir = "define void @f(ptr %p) {\n  %a = load <16 x float>, ptr %p\n  %b = fadd <16 x float> %a, %a\n  store <16 x float> %b, ptr %p\n  ret void\n}\n";
        let c = Compiler::new();
        let mut host = vec![Target::host()];
        host.extend(X86_64_CPUS.iter().map(|cpu| Target::x86_cpu(cpu)));
        let mut wrong = vec![];
        for t in host {
            let m = c.parse(ir, &t, 1).expect("parses");
            let asm = String::from_utf8(c.emit(&m, &t, Emit::Asm).expect("emits")).unwrap();
            let used = if asm.contains("%zmm") {
                64
            } else if asm.contains("%ymm") {
                32
            } else {
                16
            };
            if t.vector_bytes() != used {
                wrong.push(format!(
                    "{} ({}): {} not {used}",
                    t.cpu,
                    t.features,
                    t.vector_bytes()
                ));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }
}
