//! `ftuner-opt`'s driver, [`opt_main`]: the command line read, the pipeline built, the
//! input split into chunks, each parsed (through upstream MLIR where ours cannot), run
//! through the pipeline and printed or checked against its `expected-*` annotations, then
//! timing, statistics and the output written.

use crate::cli::{pipeline_from_flags, split_pass_flags, Cli};
use crate::{contained, diagnostics, upstream_may_read, UpstreamImport};
use clap::Parser as ClapParser;
use ftuner_hw::HardwareModel;
use ftuner_ir::{parse_module, print_module, Context, Diagnostic, PrintOptions, SourceMap};
use ftuner_pass::{format_timing, PassManager, PassRegistry};
use std::borrow::Cow;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Instant;

fn err_line(msg: &str) -> i32 {
    eprintln!("ftuner-opt: error: {msg}");
    1
}

/// Chunks of the input at `// -----` lines: (text, first line number - 1).
fn split_chunks(src: &str, split: bool) -> Vec<(Cow<'_, str>, u32)> {
    if !split {
        return vec![(Cow::Borrowed(src), 0)];
    }
    let mut chunks = vec![];
    let mut cur = String::new();
    let mut start = 0u32;
    for (i, line) in src.split_inclusive('\n').enumerate() {
        let t = line.trim_start();
        if t.starts_with("//") && t[2..].trim_start().starts_with("-----") {
            chunks.push((Cow::Owned(std::mem::take(&mut cur)), start));
            start = i as u32 + 1;
            continue;
        }
        cur.push_str(line);
    }
    chunks.push((Cow::Owned(cur), start));
    chunks
}

/// The driver. `args[0]` is the program name. Returns the exit code.
pub fn opt_main(args: Vec<String>, reg: PassRegistry) -> i32 {
    let (rest, pass_flags) = split_pass_flags(args, &reg);
    let cli = match parse_cli(&rest, &reg) {
        Ok(c) => c,
        Err(code) => return code,
    };
    init_tracing(&cli.debug_only);
    let mut ctx = ftuner_transforms::context();
    ctx.allow_unregistered = cli.allow_unregistered;
    if cli.print_hw_model {
        return print_hw_model(&cli);
    }
    let model = match load_target(&cli) {
        Ok(m) => m,
        Err(code) => return code,
    };
    if cli.show_dialects {
        println!("Available Dialects: {}", ctx.registry.dialects().join(", "));
        return 0;
    }
    let pipeline = match build_pipeline(&cli, &reg, &pass_flags) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let t_start = Instant::now();
    let (src, file) = match read_input(&cli.input) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let mut sources = SourceMap::default();
    let src: Arc<str> = Arc::from(src);
    sources.add(&file, src.clone());
    let opts = PrintOptions {
        generic: cli.generic,
        debuginfo: cli.debuginfo,
    };
    let mut run = Run {
        cli: &cli,
        reg: &reg,
        ctx,
        pipeline,
        model,
        file,
        sources,
        opts,
        outputs: vec![],
        failed: false,
        parse_time: 0.0,
        output_time: 0.0,
        timing_rows: vec![],
        stats: String::new(),
        streamed: false,
    };
    for (chunk, offset) in split_chunks(&src, cli.split_input_file) {
        if let Err(code) = run.chunk(&chunk, offset) {
            return code;
        }
    }
    run.finish(t_start)
}

/// The flags other than pass flags; `--help` lists the passes too. `Err` is the exit code.
fn parse_cli(rest: &[String], reg: &PassRegistry) -> Result<Cli, i32> {
    match Cli::try_parse_from(rest) {
        Ok(c) => Ok(c),
        Err(e) => {
            if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp) {
                println!("{e}");
                println!("{}", reg.help());
                return Err(0);
            }
            let msg = e.to_string();
            let first = msg
                .lines()
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            Err(err_line(first))
        }
    }
}

/// `--print-hw-model`: the model of `--target` (default host); returns the exit code.
fn print_hw_model(cli: &Cli) -> i32 {
    match HardwareModel::load(cli.target.as_deref().unwrap_or("host")) {
        Ok(m) => {
            print!("{}", m.report());
            0
        }
        Err(e) => err_line(&e),
    }
}

/// `--target`'s model, registered under its name. `Err` is the exit code.
fn load_target(cli: &Cli) -> Result<Option<HardwareModel>, i32> {
    match &cli.target {
        Some(t) => match HardwareModel::load(t) {
            Ok(m) => {
                // The module's ftuner.target names it: a file only the user chose.
                ftuner_hw::register_target(t, m.clone());
                Ok(Some(m))
            }
            Err(e) => Err(err_line(&e)),
        },
        None => Ok(None),
    }
}

/// The pipeline text of `--pass-pipeline` or the pass flags, validated (and printed with
/// `--dump-pass-pipeline`). `Err` is the exit code.
fn build_pipeline(
    cli: &Cli,
    reg: &PassRegistry,
    pass_flags: &[(String, Option<String>)],
) -> Result<String, i32> {
    let pipeline = match (&cli.pass_pipeline, pass_flags.is_empty()) {
        (Some(_), false) => {
            return Err(err_line(
                "'--pass-pipeline' cannot be combined with individual pass flags",
            ))
        }
        (Some(p), true) => p.clone(),
        (None, _) => match pipeline_from_flags(reg, pass_flags) {
            Ok(p) => p,
            Err(e) => return Err(err_line(&e)),
        },
    };
    // Validate the pipeline once up front.
    if let Err(e) = PassManager::from_pipeline(reg, &pipeline) {
        return Err(err_line(&format!("invalid pass pipeline: {e}")));
    }
    if cli.dump_pass_pipeline {
        if let Ok(pm) = PassManager::from_pipeline(reg, &pipeline) {
            eprint!("{}", pm.dump());
        }
    }
    Ok(pipeline)
}

/// The input's text and its name in diagnostics. `Err` is the exit code.
fn read_input(input: &str) -> Result<(String, String), i32> {
    if input == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut s) {
            return Err(err_line(&format!("could not read standard input: {e}")));
        }
        Ok((s, "<stdin>".to_string()))
    } else {
        match std::fs::read(input) {
            Ok(b) => match String::from_utf8(b) {
                Ok(s) => Ok((s, input.to_string())),
                Err(_) => Err(err_line(&format!("'{input}' is not valid UTF-8"))),
            },
            Err(e) => Err(err_line(&format!(
                "could not open input file '{input}': {e}"
            ))),
        }
    }
}

/// The state of one run of the driver across the input's chunks.
struct Run<'a> {
    cli: &'a Cli,
    reg: &'a PassRegistry,
    ctx: Context,
    pipeline: String,
    /// `--target`'s model.
    model: Option<HardwareModel>,
    /// The input's name in diagnostics.
    file: String,
    sources: SourceMap,
    opts: PrintOptions,
    /// The printed modules of `--split-input-file`'s chunks.
    outputs: Vec<String>,
    failed: bool,
    parse_time: f64,
    output_time: f64,
    /// The passes' timing rows, summed over the chunks.
    timing_rows: Vec<(usize, String, f64)>,
    stats: String,
    /// Whether the output went out already (one module streamed, or `--print-ukernels`).
    streamed: bool,
}

impl Run<'_> {
    /// One chunk of the input: parse, verify, run the pipeline, print or check the
    /// diagnostics. `Err` is an exit code to stop with at once.
    fn chunk(&mut self, chunk: &str, offset: u32) -> Result<(), i32> {
        // Chunks keep their line numbers: pad with the newlines before them.
        let padded: Cow<str> = if offset == 0 {
            Cow::Borrowed(chunk)
        } else {
            Cow::Owned(format!("{}{}", "\n".repeat(offset as usize), chunk))
        };
        let mut diags: Vec<Diagnostic> = vec![];
        let mut out_text = None;
        let t0 = Instant::now();
        // A previous chunk's import allowed unregistered ops: this one starts as asked.
        self.ctx.allow_unregistered = self.cli.allow_unregistered;
        let parsed = self.parse_chunk(&padded);
        self.parse_time += t0.elapsed().as_secs_f64();
        match parsed {
            Err(d) => diags.push(d),
            Ok(mut m) => self.process_module(&mut m, &mut diags, &mut out_text)?,
        }
        self.report_diagnostics(chunk, offset, &diags);
        if let Some(t) = out_text {
            self.outputs.push(t);
        }
        Ok(())
    }

    /// Parse with ftuner's parser; ops we do not model: read through upstream MLIR, keep
    /// them generic, say which.
    fn parse_chunk(&mut self, padded: &str) -> Result<ftuner_ir::ParsedModule, Diagnostic> {
        let cli = self.cli;
        let file = &self.file;
        let mut parsed = parse_module(&self.ctx, padded, file);
        let upstream = self.reg.extensions().get::<UpstreamImport>().is_some()
            && parsed.is_err()
            && !cli.verify_diagnostics
            && upstream_may_read(padded, file);
        if upstream {
            match contained::import(&self.ctx, padded, file, cli.lower_frontends) {
                Ok((m, unmodeled, lowered)) => {
                    // Its generic operations verify as unregistered ones.
                    self.ctx.allow_unregistered = true;
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
        parsed
    }

    /// A parsed chunk: the target attribute set, verified, and through the pipeline.
    fn process_module(
        &mut self,
        m: &mut ftuner_ir::ParsedModule,
        diags: &mut Vec<Diagnostic>,
        out_text: &mut Option<String>,
    ) -> Result<(), i32> {
        ftuner_dialects::after_parse(&mut m.ir, m.top);
        if let Some(t) = &self.cli.target {
            m.ir.set_attr(
                m.top,
                ftuner_hw::TARGET_ATTR,
                Some(ftuner_ir::Attribute::string(t.clone())),
            );
        }
        let errs = ftuner_ir::verify::verify(&self.ctx, &m.ir, m.top);
        if !errs.is_empty() {
            diags.extend(errs);
            Ok(())
        } else {
            self.run_pipeline(m, diags, out_text)
        }
    }

    /// The pass manager of the pipeline with the instrumentation the flags ask for.
    fn pass_manager(&self) -> Result<PassManager, i32> {
        let cli = self.cli;
        let mut pm = match PassManager::from_pipeline(self.reg, &self.pipeline) {
            Ok(p) => p,
            Err(e) => return Err(err_line(&e)),
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
            print: self.opts,
            timing: cli.timing,
            statistics: cli.statistics,
            reproducer: cli.reproducer.as_ref().map(std::path::PathBuf::from),
        };
        Ok(pm)
    }

    /// Run the pipeline on a verified module, then emit what it gave; the timing rows
    /// and statistics are kept for the end.
    fn run_pipeline(
        &mut self,
        m: &mut ftuner_ir::ParsedModule,
        diags: &mut Vec<Diagnostic>,
        out_text: &mut Option<String>,
    ) -> Result<(), i32> {
        let mut pm = self.pass_manager()?;
        pm.collect_diagnostics = self.cli.verify_diagnostics;
        let r = pm.run(&self.ctx, &mut m.ir, m.top);
        // Warnings and remarks of passes that succeeded, checked like the errors.
        diags.append(&mut pm.collected);
        match r {
            Ok(()) => self.emit(m, out_text)?,
            Err(e) => {
                diags.extend(e.diagnostics);
                if !self.cli.verify_diagnostics {
                    eprintln!("ftuner-opt: error: {}", e.message);
                    self.failed = true;
                }
            }
        }
        for r in pm.timing().rows {
            match self
                .timing_rows
                .iter_mut()
                .find(|x| x.0 == r.0 && x.1 == r.1)
            {
                Some(x) => x.2 += r.2,
                None => self.timing_rows.push(r),
            }
        }
        if self.cli.statistics {
            self.stats = pm.statistics_report();
        }
        Ok(())
    }

    /// After the pipeline: `--dump-patch-plan`, then `--print-ukernels` or the module
    /// (streamed to the output, or kept for `--split-input-file`).
    fn emit(
        &mut self,
        m: &ftuner_ir::ParsedModule,
        out_text: &mut Option<String>,
    ) -> Result<(), i32> {
        let cli = self.cli;
        if let Some(spec) = &cli.dump_patch_plan {
            if !dump_plan(&m.ir, m.top, spec) {
                return Err(1);
            }
        }
        if cli.print_ukernels {
            let hw = match &self.model {
                Some(h) => h.clone(),
                None => ftuner_hw::detect_host(),
            };
            match ftuner_ukernel::describe_module(&self.ctx, &m.ir, m.top, &hw) {
                Ok(r) => print!("{r}"),
                Err(e) => return Err(err_line(&e)),
            }
            self.streamed = true;
            return Ok(());
        }
        let t1 = Instant::now();
        if cli.split_input_file {
            *out_text = Some(print_module(&m.ir, &self.ctx, m.top, self.opts));
        } else {
            // One module: stream it to the output, never as one string.
            let (ctx, opts) = (&self.ctx, self.opts);
            if let Err(e) = write_output(&cli.output, |w| {
                ftuner_ir::printer::print_module_to(&m.ir, ctx, m.top, opts, w)?;
                w.write_all(b"\n")
            }) {
                return Err(err_line(&format!(
                    "could not write output '{}': {e}",
                    cli.output
                )));
            }
            self.streamed = true;
        }
        self.output_time += t1.elapsed().as_secs_f64();
        Ok(())
    }

    /// `--verify-diagnostics`: the chunk's diagnostics against its annotations; else
    /// every diagnostic rendered (and the run failed).
    fn report_diagnostics(&mut self, chunk: &str, offset: u32, diags: &[Diagnostic]) {
        let file = &self.file;
        if self.cli.verify_diagnostics {
            match diagnostics::parse_expectations(chunk, offset) {
                Err(e) => {
                    eprintln!("{file}: error: {e}");
                    self.failed = true;
                }
                Ok(mut exp) => {
                    let errs = diagnostics::check(file, diags, &mut exp);
                    for e in &errs {
                        eprintln!("{e}");
                    }
                    self.failed |= !errs.is_empty();
                }
            }
        } else if !diags.is_empty() {
            for d in diags {
                eprint!("{}", ftuner_ir::diag::render(d, &self.sources));
            }
            self.failed = true;
        }
    }

    /// After the last chunk: `--mlir-timing`, `--mlir-pass-statistics`, then the output
    /// not streamed yet. Returns the exit code.
    fn finish(self, t_start: Instant) -> i32 {
        let cli = self.cli;
        if cli.timing {
            let total = t_start.elapsed().as_secs_f64();
            let mut rows = vec![(0usize, "Parser".to_string(), self.parse_time)];
            rows.extend(self.timing_rows);
            rows.push((0, "Output".to_string(), self.output_time));
            let used: f64 = rows.iter().filter(|r| r.0 == 0).map(|r| r.2).sum();
            rows.push((0, "Rest".to_string(), (total - used).max(0.0)));
            eprint!("{}", format_timing(&rows, total));
        }
        if cli.statistics && !self.stats.is_empty() {
            eprint!("{}", self.stats);
        }
        let failed = self.failed;
        if failed && !cli.verify_diagnostics {
            // Print what succeeded (as mlir-opt does not) only when nothing failed.
            return 1;
        }
        if self.streamed {
            return if failed { 1 } else { 0 };
        }
        let text = if cli.split_input_file {
            self.outputs.join("// -----\n")
        } else {
            self.outputs.concat()
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
