//! `ftuner-translate FILE --emit=llvm|asm|obj|ptx [--target=T] [-o OUT] [--no-lower] [--parallel]`
//!
//! Takes a module at any level and, unless `--no-lower`, lowers it first with the default
//! pipeline: modules on tensors are patched with uKernels for the target (the host, or a
//! CPU the hardware model describes: znver4/5 as zen4, Skylake-SP and later as
//! skylake-avx512),
//! lowered and bufferized; then `convert-linalg-to-loops`, `canonicalize`, `cse` and
//! `convert-to-llvm` (serial code unless `--parallel`, which runs
//! `convert-parallel-loops-to-runtime` before it). The `llvm` dialect is then translated to LLVM IR, verified,
//! optimized (`-O`, default 3) for the target and emitted. Targets: `host` (default; the
//! detected CPU and features), an x86-64 CPU by LLVM's name (`znver4`,
//! `skylake-avx512`, ...), a hardware model's name (`zen4`, `a100`, ...), or
//! `cuda:sm_70` ... `cuda:sm_90` (PTX; `--kernel NAME` marks
//! kernel entry points, which get the PTX kernel calling convention; `gpu.func` kernels of a
//! `gpu.module` are kernels by themselves, and a module with one `gpu.module` emits its
//! body).

use clap::Parser as _;
use ftuner_codegen::{Compiler, Emit, Target};
use std::io::Write;

#[derive(clap::Parser, Debug)]
#[command(
    name = "ftuner-translate",
    about = "Translate MLIR to LLVM IR, assembly, objects or PTX"
)]
struct Cli {
    /// Input file ('-' for stdin).
    file: String,
    /// What to write.
    /// `shared`: a shared library with a C interface and a generated header
    /// (`<stem>.h` beside it; ftuner_runtime::aot), for programs without ftuner.
    #[arg(long, value_parser = ["llvm", "asm", "obj", "ptx", "shared"], default_value = "llvm")]
    emit: String,
    /// With --emit=shared: the function to export (default: the only public one).
    #[arg(long)]
    entry: Option<String>,
    /// With --emit=shared: the prefix of the exported C symbols (default: from -o).
    #[arg(long)]
    name: Option<String>,
    /// host, an x86-64 CPU name, or cuda:sm_XX.
    #[arg(long, default_value = "host")]
    target: String,
    /// Output file ('-' for stdout; objects need a file).
    #[arg(short = 'o', default_value = "-")]
    output: String,
    /// Translate as it is: the module must already be in the llvm dialect.
    #[arg(long)]
    no_lower: bool,
    /// Passes to run first (replaces the default lowering of tensor modules).
    #[arg(long = "pass-pipeline")]
    pass_pipeline: Option<String>,
    /// LLVM optimization level (0-3).
    #[arg(short = 'O', default_value_t = 3)]
    opt: u8,
    /// Functions to emit as PTX kernels.
    #[arg(long = "kernel")]
    kernels: Vec<String>,
    /// Keep loops marked `ftuner.parallel` parallel: the output then calls
    /// `ftuner_rt_parallel_for(body, ctx, n)` (and `ftuner_rt_parallel_for_nested`, same
    /// signature, for a loop holding parallel loops), which the program linking it provides
    /// (ftuner's runtime, or any thread pool). Without it the code is serial and
    /// self-contained.
    #[arg(long)]
    parallel: bool,
}

fn fail(m: impl std::fmt::Display) -> i32 {
    eprintln!("ftuner-translate: error: {m}");
    1
}

/// Run a textual pipeline; diagnostics are printed, the error is the exit code.
fn run_pipeline(
    ctx: &ftuner_ir::Context,
    m: &mut ftuner_ir::ParsedModule,
    p: &str,
    file: &str,
    src: &str,
) -> Result<(), i32> {
    let reg = ftuner_opt::default_registry();
    let mut pm = ftuner_pass::PassManager::from_pipeline(&reg, p)
        .map_err(|e| fail(format!("--pass-pipeline: {e}")))?;
    pm.run(ctx, &mut m.ir, m.top).map_err(|e| {
        let mut sm = ftuner_ir::SourceMap::default();
        sm.add(file, src.into());
        for d in &e.diagnostics {
            eprint!("{}", ftuner_ir::diag::render(d, &sm));
        }
        fail(e.message)
    })
}

fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let src = if cli.file == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
            return fail(format!("cannot read stdin: {e}"));
        }
        s
    } else {
        match std::fs::read_to_string(&cli.file) {
            Ok(s) => s,
            Err(e) => return fail(format!("cannot read {}: {e}", cli.file)),
        }
    };
    let target = match Target::parse(&cli.target) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    if cli.emit == "ptx" && !target.is_gpu() {
        return fail("--emit=ptx needs a cuda:sm_XX target");
    }
    if target.is_gpu() && matches!(cli.emit.as_str(), "asm" | "obj" | "shared") {
        return fail("a cuda target emits ptx or llvm");
    }
    if cli.emit == "shared" && (cli.output == "-" || cli.no_lower) {
        return fail("--emit=shared needs -o FILE.so and a module ftuner lowers (not --no-lower)");
    }
    let ctx = ftuner_transforms::context();
    // Modules in frontend dialects (TOSA) are read, and lowered to linalg, by upstream MLIR.
    let upstream = ftuner_opt::UpstreamImport(ftuner_mlir::import_for_opt);
    let mut m = match ftuner_opt::parse_for_execution(&ctx, &src, &cli.file, Some(&upstream)) {
        Ok(m) => m,
        Err(ds) => {
            let mut sm = ftuner_ir::SourceMap::default();
            sm.add(&cli.file, src.as_str().into());
            for d in ds {
                eprint!("{}", ftuner_ir::diag::render(&d, &sm));
            }
            return 1;
        }
    };
    if !cli.no_lower {
        let first = match &cli.pass_pipeline {
            Some(p) => Some(p.clone()),
            None if ftuner_transforms::has_tensor_functions(&m.ir, m.top) => {
                // The hardware model's name for the CPU (targets/*.toml), when it has one.
                let hw = match target.cpu.as_str() {
                    _ if cli.target == "host" => "host",
                    // GPU patches are lowered on buffers, to kernels and launches.
                    sm if target.is_gpu() => {
                        return match run_pipeline(
                            &ctx,
                            &mut m,
                            &format!("builtin.module(ftuner-gpu-pipeline{{target=cuda:{sm}}})"),
                            &cli.file,
                            &src,
                        ) {
                            Ok(()) => finish(&ctx, m, &cli, &target, &src),
                            Err(code) => code,
                        };
                    }
                    "znver3" => "zen3",
                    "znver4" => "zen4",
                    "znver5" => "zen5",
                    "skylake-avx512" | "cascadelake" | "icelake-server" | "sapphirerapids" => {
                        "skylake-avx512"
                    }
                    _ => "",
                };
                Some(if hw.is_empty() {
                    "builtin.module(canonicalize,cse)".into()
                } else {
                    format!("builtin.module(ftuner-cpu-pipeline{{target={hw}}})")
                })
            }
            None => None,
        };
        if let Some(p) = first {
            if let Err(code) = run_pipeline(&ctx, &mut m, &p, &cli.file, &src) {
                return code;
            }
        }
    }
    finish(&ctx, m, &cli, &target, &src)
}

/// From the module after the first pipeline: to the llvm dialect (unless `--no-lower`),
/// then LLVM IR, assembly, an object or PTX.
fn finish(
    ctx: &ftuner_ir::Context,
    mut m: ftuner_ir::ParsedModule,
    cli: &Cli,
    target: &Target,
    src: &str,
) -> i32 {
    // For a GPU, the code is the (one) gpu.module: the host code that launches its kernels
    // is not part of the PTX.
    if target.is_gpu() {
        let body =
            m.ir.regions_of(m.top)
                .first()
                .and_then(|r| m.ir.region_entry(*r));
        if let Some(body) = body {
            let ops = m.ir.block_ops_vec(body);
            let gms = ops
                .iter()
                .filter(|o| m.ir.name(**o) == "gpu.module")
                .count();
            if gms == 1 {
                for o in ops {
                    if m.ir.name(o) != "gpu.module" {
                        m.ir.erase_op(o);
                    }
                }
            }
        }
    }
    if cli.emit == "shared" {
        return shared(ctx, m, cli, target);
    }
    if !cli.no_lower {
        // To the llvm dialect, from whatever level the module is at.
        if let Some(p) = ftuner_transforms::to_llvm_pipeline(
            &m.ir,
            m.top,
            cli.parallel,
            true,
            target.vector_bytes(),
        ) {
            if let Err(code) = run_pipeline(ctx, &mut m, &p, &cli.file, src) {
                return code;
            }
        }
    }
    let mut top = m.top;
    if target.is_gpu() {
        let mut gms = vec![];
        m.ir.walk_pre(m.top, &mut |o| {
            if m.ir.name(o) == "gpu.module" {
                gms.push(o);
            }
        });
        match gms.as_slice() {
            [] => {}
            [g] => top = *g,
            _ => return fail("more than one gpu.module: translate them one at a time"),
        }
    }
    let compiler = Compiler::new();
    let module = match compiler.module(&m.ir, top, target, cli.opt, &cli.kernels) {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    let what = match cli.emit.as_str() {
        "llvm" => Emit::LlvmIr,
        "obj" => Emit::Obj,
        _ => Emit::Asm,
    };
    let bytes = match compiler.emit(&module, target, what) {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    if cli.output == "-" {
        if what == Emit::Obj {
            return fail("an object file needs -o FILE");
        }
        let _ = std::io::stdout().write_all(&bytes);
        0
    } else {
        match std::fs::write(&cli.output, bytes) {
            Ok(()) => 0,
            Err(e) => fail(format!("cannot write {}: {e}", cli.output)),
        }
    }
}

/// `--emit=shared`: the library and its header.
fn shared(
    ctx: &ftuner_ir::Context,
    mut m: ftuner_ir::ParsedModule,
    cli: &Cli,
    target: &Target,
) -> i32 {
    let out = std::path::Path::new(&cli.output);
    let entry = match &cli.entry {
        Some(e) => e.clone(),
        None => {
            let mut public = vec![];
            m.ir.walk_pre(m.top, &mut |o| {
                if m.ir.name(o) == "func.func"
                    && m.ir.attr(o, "sym_visibility").is_none()
                    && m.ir
                        .regions_of(o)
                        .first()
                        .is_some_and(|r| m.ir.region_entry(*r).is_some())
                {
                    public.extend(m.ir.symbol_name(o).map(str::to_string));
                }
            });
            match public.as_slice() {
                [one] => one.clone(),
                [] => return fail("the module has no public function to export"),
                _ => {
                    return fail(format!(
                        "several public functions ({}): name one with --entry",
                        public.join(", ")
                    ))
                }
            }
        }
    };
    let opts = ftuner_runtime::aot::SharedOptions {
        name: cli
            .name
            .clone()
            .unwrap_or_else(|| ftuner_runtime::aot::c_name(out)),
        entry,
        ..Default::default()
    };
    let header = ftuner_runtime::aot::header_path(out);
    match ftuner_runtime::aot::build_shared(ctx, &mut m.ir, m.top, target, &opts, out, &header) {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

fn main() {
    // The contained upstream import (below) runs in a child process of this binary.
    ftuner_opt::serve_import_child(ftuner_mlir::import_for_opt);
    std::process::exit(run());
}
