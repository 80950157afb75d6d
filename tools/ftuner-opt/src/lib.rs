//! `ftuner-opt`: mlir-opt for ftuner. [`opt_main`] is the whole driver, so that another
//! crate can build its own `*-opt` tool with extra passes through one call (as MLIR's
//! `MlirOptMain`).

pub mod contained;
mod diagnostics;
pub mod pipelines;

use clap::{ArgAction, Parser as ClapParser};
use ftuner_ir::{parse_module, print_module, Context, Diagnostic, PrintOptions, SourceMap};
use ftuner_pass::{format_timing, PassManager, PassRegistry};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Instant;

/// Reads a module ftuner's own parser does not take (upstream ops we do not model) through
/// upstream MLIR: returns our module, the ops kept as generic operations (with counts) and,
/// when the last argument asks for it, the frontend dialects (TOSA) upstream's conversions
/// lowered to linalg first. The `ftuner-opt`, `ftuner-run` and `ftuner-translate` binaries
/// install `ftuner_mlir`'s, run in a child process ([`contained`]).
pub type Importer = fn(
    &mut Context,
    &str,
    &str,
    bool,
) -> Result<
    (
        ftuner_ir::ParsedModule,
        Vec<(String, usize)>,
        Vec<&'static str>,
    ),
    String,
>;

static IMPORTER: std::sync::OnceLock<Importer> = std::sync::OnceLock::new();

/// Whether a file our parser rejects may go to upstream MLIR: only a file whose one fault
/// for our parser is operations we do not model. Upstream MLIR runs in-process and crashes
/// on some malformed input (a bad `permutation` array, 5,000-deep nesting, a NUL byte:
/// issue 25), so a NUL byte, nesting past our parser's limit, a syntax error, or ops of
/// ours that do not verify stay our diagnostics. With unknown operations allowed, the file
/// must parse and verify, or stop at the custom syntax of a dialect we do not know (which
/// only upstream reads). Not a full containment: upstream still parses what follows such an
/// op.
pub fn upstream_may_read(src: &str, file: &str) -> bool {
    if src.contains('\0') || nesting_depth(src) > ftuner_ir::parser::MAX_NESTING {
        return false;
    }
    let mut c = ftuner_dialects::context();
    c.allow_unregistered = true;
    match parse_module(&c, src, file) {
        Ok(mut m) => {
            ftuner_dialects::after_parse(&mut m.ir, m.top);
            ftuner_ir::verify::verify(&c, &m.ir, m.top).is_empty()
        }
        Err(d) => {
            (d.message.starts_with("Dialect `") && d.message.contains("not found for custom op"))
                || d.message.starts_with("unregistered operation '")
        }
    }
}

/// The deepest nesting of brackets outside string literals and comments.
fn nesting_depth(src: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let (mut in_str, mut esc, mut comment) = (false, false, false);
    let mut prev = '\0';
    for ch in src.chars() {
        if comment {
            comment = ch != '\n';
        } else if in_str {
            if esc {
                esc = false;
            } else if ch == '\\' {
                esc = true;
            } else if ch == '"' {
                in_str = false;
            }
        } else {
            match ch {
                '"' => in_str = true,
                '/' if prev == '/' => comment = true,
                '{' | '(' | '[' => {
                    depth += 1;
                    max = max.max(depth);
                }
                '}' | ')' | ']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        prev = ch;
    }
    max
}

/// Install the upstream-MLIR import path (once; later calls are ignored). Imports run in
/// a child process, this same binary started with [`contained::CHILD_FLAG`]: when this
/// process is that child, it serves the one import here and exits (so a binary calls
/// this first thing in `main`).
pub fn set_importer(f: Importer) {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(contained::CHILD_FLAG) {
        std::process::exit(contained::child_main(f, &args[2..]));
    }
    let _ = IMPORTER.set(f);
}

/// The registry with every ftuner pass.
pub fn default_registry() -> PassRegistry {
    let mut r = PassRegistry::default();
    // `patch-ukernels{tuning-db=FILE}` reads ftuner-tune's databases.
    ftuner_tune::register(&mut r);
    ftuner_transforms::register_passes(&mut r);
    ftuner_ukernel::register_passes(&mut r);
    ftuner_derive::register_passes(&mut r);
    pipelines::register(&mut r);
    r
}

#[derive(ClapParser, Debug)]
#[command(
    name = "ftuner-opt",
    about = "ftuner modular optimizer driver (mlir-opt compatible)",
    disable_version_flag = true
)]
struct Cli {
    /// Input file ('-' for stdin)
    #[arg(default_value = "-")]
    input: String,
    /// Output file
    #[arg(short = 'o', default_value = "-")]
    output: String,
    /// Split the input at '// -----' and process each chunk independently
    #[arg(long = "split-input-file")]
    split_input_file: bool,
    /// Check diagnostics against // expected-* annotations
    #[arg(long = "verify-diagnostics")]
    verify_diagnostics: bool,
    /// Run the verifier after each transformation pass
    #[arg(long = "verify-each", default_value_t = true, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    verify_each: bool,
    /// Print the generic op form
    #[arg(long = "mlir-print-op-generic")]
    generic: bool,
    /// Print debug info (locations)
    #[arg(long = "mlir-print-debuginfo")]
    debuginfo: bool,
    /// Allow operations of unregistered dialects
    #[arg(long = "allow-unregistered-dialect")]
    allow_unregistered: bool,
    /// Lower frontend dialects (TOSA) to linalg on tensors with upstream MLIR's own
    /// conversions when the module is read through upstream MLIR
    #[arg(long = "lower-frontends")]
    lower_frontends: bool,
    /// A textual pass pipeline, e.g. builtin.module(func.func(cse))
    #[arg(long = "pass-pipeline")]
    pass_pipeline: Option<String>,
    /// Print the pipeline that will run
    #[arg(long = "dump-pass-pipeline")]
    dump_pass_pipeline: bool,
    /// Disable multi-threading (passes run sequentially in any case)
    #[arg(long = "mlir-disable-threading")]
    disable_threading: bool,
    #[arg(long = "mlir-print-ir-before", value_delimiter = ',')]
    print_ir_before: Vec<String>,
    #[arg(long = "mlir-print-ir-after", value_delimiter = ',')]
    print_ir_after: Vec<String>,
    #[arg(long = "mlir-print-ir-before-all")]
    print_ir_before_all: bool,
    #[arg(long = "mlir-print-ir-after-all")]
    print_ir_after_all: bool,
    #[arg(long = "mlir-print-ir-after-change")]
    print_ir_after_change: bool,
    #[arg(long = "mlir-print-ir-after-failure")]
    print_ir_after_failure: bool,
    #[arg(long = "mlir-print-ir-module-scope")]
    print_ir_module_scope: bool,
    /// Report execution time of each pass
    #[arg(long = "mlir-timing")]
    timing: bool,
    /// Report pass statistics
    #[arg(long = "mlir-pass-statistics")]
    statistics: bool,
    /// Write a reproducer (the IR before the failing pass) to this file on failure
    #[arg(long = "mlir-pass-pipeline-crash-reproducer")]
    reproducer: Option<String>,
    /// Enable debug logging of these components (comma-separated), like LLVM's -debug-only
    #[arg(long = "debug-only", value_delimiter = ',')]
    debug_only: Vec<String>,
    /// List the registered dialects
    #[arg(long = "show-dialects")]
    show_dialects: bool,
    /// Target hardware: host, a built-in name (zen4, a100, ...), cuda:sm_XX, or a .toml file
    #[arg(long = "target")]
    target: Option<String>,
    /// Print the hardware model of --target (default host) and its derived figures
    #[arg(long = "print-hw-model")]
    print_hw_model: bool,
    /// Print the uKernel family of every contraction in the input for --target
    #[arg(long = "print-ukernels")]
    print_ukernels: bool,
    /// After the pipeline, draw how the first ukernel.patch covers a run-time shape:
    /// `M=100,N=2304:plan.svg`
    #[arg(long = "dump-patch-plan")]
    dump_patch_plan: Option<String>,
}

fn err_line(msg: &str) -> i32 {
    eprintln!("ftuner-opt: error: {msg}");
    1
}

/// Split `argv` into pass flags (`--cse`, `--canonicalize=max-iterations=3`) in order
/// and the rest.
fn split_pass_flags(
    args: Vec<String>,
    reg: &PassRegistry,
) -> (Vec<String>, Vec<(String, Option<String>)>) {
    let mut rest = vec![];
    let mut passes = vec![];
    for a in args {
        if let Some(body) = a
            .strip_prefix("--")
            .or_else(|| a.strip_prefix('-').filter(|s| !s.starts_with('-')))
        {
            let (name, opts) = match body.split_once('=') {
                Some((n, o)) => (n, Some(o.to_string())),
                None => (body, None),
            };
            if reg.lookup(name).is_some() {
                passes.push((name.to_string(), opts));
                continue;
            }
        }
        rest.push(a);
    }
    (rest, passes)
}

/// Build the top-level pipeline text from pass flags, nesting op-specific passes.
fn pipeline_from_flags(
    reg: &PassRegistry,
    flags: &[(String, Option<String>)],
) -> Result<String, String> {
    let mut parts: Vec<String> = vec![];
    let mut nested: Option<(String, Vec<String>)> = None;
    for (name, opts) in flags {
        let p = reg.create(name, opts.as_deref())?;
        let text = match opts {
            Some(o) => format!("{name}{{{o}}}"),
            None => name.clone(),
        };
        match p.anchor() {
            Some(a) if a != "builtin.module" => match &mut nested {
                Some((an, v)) if an == a => v.push(text),
                _ => {
                    if let Some((an, v)) = nested.take() {
                        parts.push(format!("{an}({})", v.join(",")));
                    }
                    nested = Some((a.to_string(), vec![text]));
                }
            },
            _ => {
                if let Some((an, v)) = nested.take() {
                    parts.push(format!("{an}({})", v.join(",")));
                }
                parts.push(text);
            }
        }
    }
    if let Some((an, v)) = nested.take() {
        parts.push(format!("{an}({})", v.join(",")));
    }
    Ok(format!("builtin.module({})", parts.join(",")))
}

/// Chunks of the input at `// -----` lines: (text, first line number - 1).
fn split_chunks(src: &str, split: bool) -> Vec<(std::borrow::Cow<'_, str>, u32)> {
    if !split {
        return vec![(std::borrow::Cow::Borrowed(src), 0)];
    }
    let mut chunks = vec![];
    let mut cur = String::new();
    let mut start = 0u32;
    for (i, line) in src.split_inclusive('\n').enumerate() {
        let t = line.trim_start();
        if t.starts_with("//") && t[2..].trim_start().starts_with("-----") {
            chunks.push((std::borrow::Cow::Owned(std::mem::take(&mut cur)), start));
            start = i as u32 + 1;
            continue;
        }
        cur.push_str(line);
    }
    chunks.push((std::borrow::Cow::Owned(cur), start));
    chunks
}

/// The driver. `args[0]` is the program name. Returns the exit code.
pub fn opt_main(args: Vec<String>, reg: PassRegistry) -> i32 {
    let (rest, pass_flags) = split_pass_flags(args, &reg);
    let cli = match Cli::try_parse_from(&rest) {
        Ok(c) => c,
        Err(e) => {
            if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp) {
                println!("{e}");
                println!("{}", reg.help());
                return 0;
            }
            let msg = e.to_string();
            let first = msg
                .lines()
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            return err_line(first);
        }
    };
    init_tracing(&cli.debug_only);
    let mut ctx = ftuner_dialects::context();
    ctx.allow_unregistered = cli.allow_unregistered;
    if cli.print_hw_model {
        return match ftuner_hw::HardwareModel::load(cli.target.as_deref().unwrap_or("host")) {
            Ok(m) => {
                print!("{}", m.report());
                0
            }
            Err(e) => err_line(&e),
        };
    }
    let model = match &cli.target {
        Some(t) => match ftuner_hw::HardwareModel::load(t) {
            Ok(m) => {
                // The module's ftuner.target names it: a file only the user chose.
                ftuner_hw::register_target(t, m.clone());
                Some(m)
            }
            Err(e) => return err_line(&e),
        },
        None => None,
    };
    if cli.show_dialects {
        println!("Available Dialects: {}", ctx.registry.dialects().join(", "));
        return 0;
    }
    let pipeline = match (&cli.pass_pipeline, pass_flags.is_empty()) {
        (Some(_), false) => {
            return err_line("'--pass-pipeline' cannot be combined with individual pass flags")
        }
        (Some(p), true) => p.clone(),
        (None, _) => match pipeline_from_flags(&reg, &pass_flags) {
            Ok(p) => p,
            Err(e) => return err_line(&e),
        },
    };
    // Validate the pipeline once up front.
    if let Err(e) = PassManager::from_pipeline(&reg, &pipeline) {
        return err_line(&format!("invalid pass pipeline: {e}"));
    }
    if cli.dump_pass_pipeline {
        if let Ok(pm) = PassManager::from_pipeline(&reg, &pipeline) {
            eprint!("{}", pm.dump());
        }
    }
    let t_start = Instant::now();
    let (src, file) = if cli.input == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut s) {
            return err_line(&format!("could not read standard input: {e}"));
        }
        (s, "<stdin>".to_string())
    } else {
        match std::fs::read(&cli.input) {
            Ok(b) => match String::from_utf8(b) {
                Ok(s) => (s, cli.input.clone()),
                Err(_) => return err_line(&format!("'{}' is not valid UTF-8", cli.input)),
            },
            Err(e) => return err_line(&format!("could not open input file '{}': {e}", cli.input)),
        }
    };
    let mut sources = SourceMap::default();
    let src: Arc<str> = Arc::from(src);
    sources.add(&file, src.clone());
    let opts = PrintOptions {
        generic: cli.generic,
        debuginfo: cli.debuginfo,
    };
    let mut outputs = vec![];
    let mut failed = false;
    let mut parse_time = 0.0;
    let mut output_time = 0.0;
    let mut timing_rows: Vec<(usize, String, f64)> = vec![];
    let mut stats = String::new();
    let mut streamed = false;
    for (chunk, offset) in split_chunks(&src, cli.split_input_file) {
        // Chunks keep their line numbers: pad with the newlines before them.
        let padded: std::borrow::Cow<str> = if offset == 0 {
            std::borrow::Cow::Borrowed(&*chunk)
        } else {
            std::borrow::Cow::Owned(format!("{}{}", "\n".repeat(offset as usize), chunk))
        };
        let mut diags: Vec<Diagnostic> = vec![];
        let mut out_text = None;
        let t0 = Instant::now();
        // A previous chunk's import allowed unregistered ops: this one starts as asked.
        ctx.allow_unregistered = cli.allow_unregistered;
        let mut parsed = parse_module(&ctx, &padded, &file);
        // Ops we do not model: read through upstream MLIR, keep them generic, say which.
        let upstream = IMPORTER.get().is_some()
            && parsed.is_err()
            && !cli.verify_diagnostics
            && upstream_may_read(&padded, &file);
        if upstream {
            match contained::import(&ctx, &padded, &file, cli.lower_frontends) {
                Ok((m, unmodeled, lowered)) => {
                    // Its generic operations verify as unregistered ones.
                    ctx.allow_unregistered = true;
                    if !lowered.is_empty() {
                        eprintln!(
                            "{file}: note: read through upstream MLIR; lowered to linalg by upstream's conversions: {}",
                            lowered.join(", ")
                        );
                    }
                    if !unmodeled.is_empty() {
                        let list: Vec<String> = unmodeled
                            .iter()
                            .map(|(n, c)| format!("{n} ({c})"))
                            .collect();
                        eprintln!(
                            "{file}: note: read through upstream MLIR; operations ftuner does not model, kept as generic operations: {}",
                            list.join(", ")
                        );
                    }
                    parsed = Ok(m);
                }
                Err(e) => {
                    // Upstream's word too, after ours.
                    if let Err(d) = &mut parsed {
                        *d = d.clone().with_note(
                            d.loc,
                            format!("upstream MLIR could not read it either: {e}"),
                        );
                    }
                }
            }
        }
        parse_time += t0.elapsed().as_secs_f64();
        match parsed {
            Err(d) => diags.push(d),
            Ok(mut m) => {
                ftuner_dialects::after_parse(&mut m.ir, m.top);
                if let Some(t) = &cli.target {
                    m.ir.set_attr(
                        m.top,
                        ftuner_hw::TARGET_ATTR,
                        Some(ftuner_ir::Attribute::string(t.clone())),
                    );
                }
                let errs = ftuner_ir::verify::verify(&ctx, &m.ir, m.top);
                if !errs.is_empty() {
                    diags.extend(errs);
                } else {
                    let mut pm = match PassManager::from_pipeline(&reg, &pipeline) {
                        Ok(p) => p,
                        Err(e) => return err_line(&e),
                    };
                    pm.verify_each = cli.verify_each;
                    pm.instrumentation = ftuner_pass::Instrumentation {
                        print_before_all: cli.print_ir_before_all,
                        print_after_all: cli.print_ir_after_all,
                        print_before: cli.print_ir_before.clone(),
                        print_after: cli.print_ir_after.clone(),
                        print_after_change: cli.print_ir_after_change,
                        print_after_failure: cli.print_ir_after_failure,
                        module_scope: cli.print_ir_module_scope,
                        print: opts,
                        timing: cli.timing,
                        statistics: cli.statistics,
                        reproducer: cli.reproducer.as_ref().map(std::path::PathBuf::from),
                    };
                    match pm.run(&ctx, &mut m.ir, m.top) {
                        Ok(())
                            if cli.dump_patch_plan.is_some()
                                && !dump_plan(
                                    &m.ir,
                                    m.top,
                                    cli.dump_patch_plan.as_deref().unwrap_or(""),
                                ) =>
                        {
                            return 1;
                        }
                        Ok(()) if cli.print_ukernels => {
                            let hw = match &model {
                                Some(h) => h.clone(),
                                None => ftuner_hw::detect_host(),
                            };
                            match ftuner_ukernel::describe_module(&ctx, &m.ir, m.top, &hw) {
                                Ok(r) => print!("{r}"),
                                Err(e) => return err_line(&e),
                            }
                            streamed = true;
                        }
                        Ok(()) => {
                            let t1 = Instant::now();
                            if cli.split_input_file {
                                out_text = Some(print_module(&m.ir, &ctx, m.top, opts));
                            } else {
                                // One module: stream it to the output, never as one string.
                                if let Err(e) = write_output(&cli.output, |w| {
                                    ftuner_ir::printer::print_module_to(
                                        &m.ir, &ctx, m.top, opts, w,
                                    )?;
                                    w.write_all(b"\n")
                                }) {
                                    return err_line(&format!(
                                        "could not write output '{}': {e}",
                                        cli.output
                                    ));
                                }
                                streamed = true;
                            }
                            output_time += t1.elapsed().as_secs_f64();
                        }
                        Err(e) => {
                            diags.extend(e.diagnostics);
                            if !cli.verify_diagnostics {
                                eprintln!("ftuner-opt: error: {}", e.message);
                                failed = true;
                            }
                        }
                    }
                    for r in pm.timing().rows {
                        match timing_rows.iter_mut().find(|x| x.0 == r.0 && x.1 == r.1) {
                            Some(x) => x.2 += r.2,
                            None => timing_rows.push(r),
                        }
                    }
                    if cli.statistics {
                        stats = pm.statistics_report();
                    }
                }
            }
        }
        if cli.verify_diagnostics {
            match diagnostics::parse_expectations(&chunk, offset) {
                Err(e) => {
                    eprintln!("{file}: error: {e}");
                    failed = true;
                }
                Ok(mut exp) => {
                    let errs = diagnostics::check(&file, &diags, &mut exp);
                    for e in &errs {
                        eprintln!("{e}");
                    }
                    failed |= !errs.is_empty();
                }
            }
        } else if !diags.is_empty() {
            for d in &diags {
                eprint!("{}", ftuner_ir::diag::render(d, &sources));
            }
            failed = true;
        }
        if let Some(t) = out_text {
            outputs.push(t);
        }
    }
    if cli.timing {
        let total = t_start.elapsed().as_secs_f64();
        let mut rows = vec![(0usize, "Parser".to_string(), parse_time)];
        rows.extend(timing_rows);
        rows.push((0, "Output".to_string(), output_time));
        let used: f64 = rows.iter().filter(|r| r.0 == 0).map(|r| r.2).sum();
        rows.push((0, "Rest".to_string(), (total - used).max(0.0)));
        eprint!("{}", format_timing(&rows, total));
    }
    if cli.statistics && !stats.is_empty() {
        eprint!("{stats}");
    }
    if failed && !cli.verify_diagnostics {
        // Print what succeeded (as mlir-opt does not) only when nothing failed.
        return 1;
    }
    if streamed {
        return if failed { 1 } else { 0 };
    }
    let text = if cli.split_input_file {
        outputs.join("// -----\n")
    } else {
        outputs.concat()
    };
    let text = if text.is_empty() {
        text
    } else {
        format!("{text}\n")
    };
    let res = if cli.output == "-" {
        std::io::stdout().lock().write_all(text.as_bytes())
    } else {
        std::fs::write(&cli.output, text)
    };
    if let Err(e) = res {
        return err_line(&format!("could not write output '{}': {e}", cli.output));
    }
    if failed {
        1
    } else {
        0
    }
}

/// `--dump-patch-plan=M=100,N=2304:plan.svg`; returns false (after an error line) on failure.
fn dump_plan(ir: &ftuner_ir::Ir, top: ftuner_ir::OpId, spec: &str) -> bool {
    let fail = |m: String| {
        eprintln!("ftuner-opt: error: --dump-patch-plan: {m}");
        false
    };
    let Some((dims, path)) = spec.split_once(':') else {
        return fail(format!("expected 'M=<m>,N=<n>:<file.svg>', got '{spec}'"));
    };
    let (mut m, mut n) = (None, None);
    for kv in dims.split(',') {
        match kv.split_once('=') {
            Some(("M", v)) => m = v.trim().parse::<u64>().ok(),
            Some(("N", v)) => n = v.trim().parse::<u64>().ok(),
            _ => return fail(format!("bad dimension '{kv}' (expected M=<m> or N=<n>)")),
        }
    }
    let (Some(m), Some(n)) = (m, n) else {
        return fail("both M and N must be given as integers".into());
    };
    // The picture draws one box per tile: a size beyond any tensor is a usage error.
    const MAX_DIM: u64 = 1 << 31;
    if m > MAX_DIM || n > MAX_DIM {
        return fail(format!("M and N must be at most {MAX_DIM}"));
    }
    let mut patch = None;
    ir.walk_pre(top, &mut |o| {
        if patch.is_none() && ir.name(o) == "ukernel.patch" {
            patch = Some(o);
        }
    });
    let Some(op) = patch else {
        return fail("no ukernel.patch in the module (run --patch-ukernels first)".into());
    };
    let plans = (
        ir.attr(op, "m_plan")
            .and_then(ftuner_ukernel::patch::plan_from_attr),
        ir.attr(op, "n_plan")
            .and_then(ftuner_ukernel::patch::plan_from_attr),
    );
    let (Some(mp), Some(np)) = plans else {
        return fail("malformed patch plans".into());
    };
    for (p, x, d) in [(&mp, m, "M"), (&np, n, "N")] {
        if let Some(s) = p.static_size {
            if s != x {
                return fail(format!("{d} is static ({s}) in this contraction, not {x}"));
            }
        }
    }
    if let Err(e) = std::fs::write(path, ftuner_ukernel::plan::plan_svg(m, n, &mp, &np)) {
        return fail(format!("cannot write '{path}': {e}"));
    }
    true
}

/// Open `-o` (or stdout), run `f` on a buffered writer, flush.
fn write_output(
    path: &str,
    f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if path == "-" {
        let mut w = std::io::BufWriter::new(std::io::stdout().lock());
        f(&mut w)?;
        w.flush()
    } else {
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        f(&mut w)?;
        w.flush()
    }
}

fn init_tracing(debug_only: &[String]) {
    use tracing_subscriber::EnvFilter;
    let mut filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    for d in debug_only {
        if let Ok(dir) = format!("{}=debug", d.replace('-', "_")).parse() {
            filter = filter.add_directive(dir);
        }
        if let Ok(dir) = format!("ftuner_pass[{{pass={d}}}]=debug").parse() {
            filter = filter.add_directive(dir);
        }
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// [`parse_and_verify`], then guarded for running: the input's own memory accesses get
/// run-time bounds checks and its in-bounds promises are dropped
/// (`ftuner_transforms::runtime_checks::guard_input`). What ftuner-run, ftuner-translate
/// and the Python package read untrusted IR with.
pub fn parse_for_execution(
    ctx: &Context,
    src: &str,
    file: &str,
) -> Result<ftuner_ir::ParsedModule, Vec<Diagnostic>> {
    let mut m = parse_and_verify(ctx, src, file)?;
    ftuner_transforms::runtime_checks::guard_input(&mut m.ir, m.top);
    Ok(m)
}

/// Parse and verify `src` with all dialects; convenience for tests and embedders.
pub fn parse_and_verify(
    ctx: &Context,
    src: &str,
    file: &str,
) -> Result<ftuner_ir::ParsedModule, Vec<Diagnostic>> {
    let mut m = match (parse_module(ctx, src, file), IMPORTER.get()) {
        (Ok(m), _) => m,
        (Err(d), None) => return Err(vec![d]),
        // Ops we do not parse: through upstream MLIR, frontends (TOSA) lowered to linalg;
        // what is still not ours is an error naming it.
        (Err(d), Some(_)) if !upstream_may_read(src, file) => return Err(vec![d]),
        (Err(d), Some(_)) => {
            // (IR is context-free: names and types are interned process-wide.)
            match contained::import(&ftuner_dialects::context(), src, file, true) {
                Ok((m, unmodeled, _)) if unmodeled.is_empty() => m,
                Ok((m, unmodeled, _)) => {
                    // Located at the first such op.
                    let mut first = None;
                    m.ir.walk_pre(m.top, &mut |o| {
                        if first.is_none() && unmodeled.iter().any(|(n, _)| n == m.ir.name(o)) {
                            first = Some(o);
                        }
                    });
                    let loc = first.map_or(ftuner_ir::Attribute::unknown_loc(), |o| m.ir.loc(o));
                    let list: Vec<String> = unmodeled
                        .iter()
                        .map(|(n, c)| format!("{n} ({c})"))
                        .collect();
                    return Err(vec![Diagnostic::error(
                        loc,
                        format!(
                            "operations ftuner does not model (and upstream MLIR does not lower to linalg): {}",
                            list.join(", ")
                        ),
                    )]);
                }
                Err(e) => {
                    let note = format!("upstream MLIR could not read it either: {e}");
                    return Err(vec![d.clone().with_note(d.loc, note)]);
                }
            }
        }
    };
    ftuner_dialects::after_parse(&mut m.ir, m.top);
    let errs = ftuner_ir::verify::verify(ctx, &m.ir, m.top);
    if errs.is_empty() {
        Ok(m)
    } else {
        Err(errs)
    }
}
