//! The nested pass manager, its construction from pipeline text, and instrumentation.

use crate::{pipeline, AnalysisManager, Pass, PassContext, PassRegistry, PreservedAnalyses};
use ftuner_ir::{print_module, Context, Diagnostic, Ir, OpId, PrintOptions};
use std::io::Write;
use std::time::Instant;

pub enum PmElement {
    Pass(Box<dyn Pass>),
    Nested(OpPassManager),
}

/// Passes anchored on one op name (or `any`).
pub struct OpPassManager {
    pub anchor: String,
    pub elements: Vec<PmElement>,
    /// Seconds spent in this pipeline (for timing), and per element.
    time: f64,
    element_times: Vec<f64>,
}

impl OpPassManager {
    pub fn new(anchor: &str) -> OpPassManager {
        OpPassManager {
            anchor: anchor.to_string(),
            elements: vec![],
            time: 0.0,
            element_times: vec![],
        }
    }
    pub fn add_pass(&mut self, p: Box<dyn Pass>) {
        self.elements.push(PmElement::Pass(p));
        self.element_times.push(0.0);
    }
    /// A nested pass manager for ops named `anchor` directly inside this one's op.
    pub fn nest(&mut self, anchor: &str) -> &mut OpPassManager {
        self.elements
            .push(PmElement::Nested(OpPassManager::new(anchor)));
        self.element_times.push(0.0);
        match self.elements.last_mut() {
            Some(PmElement::Nested(n)) => n,
            _ => unreachable!(),
        }
    }
    /// The pipeline text, with every pass's options spelled out (MLIR's
    /// `--dump-pass-pipeline` form).
    pub fn to_pipeline_string(&self) -> String {
        let inner: Vec<String> = self
            .elements
            .iter()
            .map(|e| match e {
                PmElement::Pass(p) => match p.options_ref() {
                    Some(o) => format!("{}{}", p.argument(), o.to_pipeline_string()),
                    None => p.argument().to_string(),
                },
                PmElement::Nested(n) => n.to_pipeline_string(),
            })
            .collect();
        format!("{}({})", self.anchor, inner.join(","))
    }
    fn num_passes(&self) -> usize {
        self.elements
            .iter()
            .map(|e| match e {
                PmElement::Pass(_) => 1,
                PmElement::Nested(n) => n.num_passes(),
            })
            .sum()
    }
}

/// What to print and measure around passes (mlir-opt's `--mlir-print-ir-*`, timing,
/// statistics and crash reproducer flags).
#[derive(Default, Clone)]
pub struct Instrumentation {
    pub print_before_all: bool,
    pub print_after_all: bool,
    pub print_before: Vec<String>,
    pub print_after: Vec<String>,
    pub print_after_change: bool,
    pub print_after_failure: bool,
    pub module_scope: bool,
    pub print: PrintOptions,
    pub timing: bool,
    pub statistics: bool,
    pub reproducer: Option<std::path::PathBuf>,
}

#[derive(Debug)]
pub struct PassRunError {
    pub diagnostics: Vec<Diagnostic>,
    pub message: String,
}

/// The message, then each diagnostic (`file:line:col: error: ...`), separated by `; `.
impl std::fmt::Display for PassRunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        for (i, d) in self.diagnostics.iter().enumerate() {
            write!(f, "{}{d}", if i == 0 { ": " } else { "; " })?;
        }
        Ok(())
    }
}

impl std::error::Error for PassRunError {}

pub struct PassManager {
    pub root: OpPassManager,
    pub instrumentation: Instrumentation,
    pub verify_each: bool,
    pub analyses: AnalysisManager,
    /// Hooks for the passes (the registry's, when built from one).
    pub extensions: crate::Extensions,
    /// Keep the warnings and remarks of passes that succeed in [`PassManager::collected`]
    /// instead of printing them to stderr (`--verify-diagnostics`, embedders).
    pub collect_diagnostics: bool,
    pub collected: Vec<Diagnostic>,
}

/// Timing rows: (indent, name, seconds).
pub struct TimingReport {
    pub rows: Vec<(usize, String, f64)>,
}

impl PassManager {
    pub fn new(anchor: &str) -> PassManager {
        PassManager {
            root: OpPassManager::new(anchor),
            instrumentation: Instrumentation::default(),
            verify_each: true,
            analyses: AnalysisManager::default(),
            extensions: crate::Extensions::default(),
            collect_diagnostics: false,
            collected: vec![],
        }
    }

    /// Build from pipeline text such as `builtin.module(func.func(cse))`.
    pub fn from_pipeline(reg: &PassRegistry, text: &str) -> Result<PassManager, String> {
        let p = pipeline::parse(text)?;
        if p.elements.len() != 1 {
            return Err(format!("expected a single op-anchored pipeline such as 'builtin.module(...)', got '{text}'"));
        }
        let pipeline::Element::Nested { anchor, elements } = &p.elements[0] else {
            return Err(format!(
                "the top-level pipeline must be anchored on an op, e.g. 'builtin.module({text})'"
            ));
        };
        let mut pm = PassManager::new(anchor);
        build(reg, &mut pm.root, elements)?;
        pm.extensions = reg.extensions().clone();
        Ok(pm)
    }

    pub fn to_pipeline_string(&self) -> String {
        self.root.to_pipeline_string()
    }

    /// mlir-opt's `--dump-pass-pipeline` text.
    pub fn dump(&self) -> String {
        format!(
            "Pass Manager with {} passes:\n{}\n",
            self.root.num_passes(),
            self.to_pipeline_string()
        )
    }

    /// Run on `top` (which must match the root anchor).
    pub fn run(&mut self, ctx: &Context, ir: &mut Ir, top: OpId) -> Result<(), PassRunError> {
        let name = ir.name(top);
        if self.root.anchor != "any" && self.root.anchor != name {
            return Err(PassRunError {
                diagnostics: vec![],
                message: format!(
                    "can't run '{}' pass manager on '{name}' op",
                    self.root.anchor
                ),
            });
        }
        let pipeline_text = self.to_pipeline_string();
        let mut st = RunState {
            ctx,
            top,
            instr: self.instrumentation.clone(),
            verify_each: self.verify_each,
            pipeline: pipeline_text,
            extensions: &self.extensions,
            collect: self.collect_diagnostics,
            collected: vec![],
        };
        let t = Instant::now();
        let r = run_opm(&mut st, &mut self.root, &mut self.analyses, ir, top);
        self.root.time += t.elapsed().as_secs_f64();
        self.collected.append(&mut st.collected);
        r
    }

    /// Timing rows of the pipeline (the driver adds Parser/Output/Total).
    pub fn timing(&self) -> TimingReport {
        let mut rows = vec![];
        fn rec(o: &OpPassManager, depth: usize, rows: &mut Vec<(usize, String, f64)>) {
            for (e, t) in o.elements.iter().zip(&o.element_times) {
                match e {
                    PmElement::Pass(p) => rows.push((depth, p.name().to_string(), *t)),
                    PmElement::Nested(n) => {
                        rows.push((depth, format!("'{}' Pipeline", n.anchor), *t));
                        rec(n, depth + 1, rows);
                    }
                }
            }
        }
        rec(&self.root, 0, &mut rows);
        for (n, t) in &self.analyses.computed {
            rows.push((1, format!("(A) {n}"), *t));
        }
        TimingReport { rows }
    }

    /// mlir-opt's `--mlir-pass-statistics` report.
    pub fn statistics_report(&self) -> String {
        let mut s = String::new();
        s.push_str(
            "===-------------------------------------------------------------------------===\n",
        );
        s.push_str("                         ... Pass statistics report ...\n");
        s.push_str(
            "===-------------------------------------------------------------------------===\n",
        );
        fn rec(o: &OpPassManager, depth: usize, s: &mut String) {
            for e in &o.elements {
                let pad = "  ".repeat(depth);
                match e {
                    PmElement::Pass(p) => {
                        s.push_str(&format!("{pad}{}\n", p.name()));
                        for st in p.statistics() {
                            s.push_str(&format!(
                                "{pad}  (S) {} {} - {}\n",
                                st.value, st.name, st.description
                            ));
                        }
                    }
                    PmElement::Nested(n) => {
                        s.push_str(&format!("{pad}'{}' Pipeline\n", n.anchor));
                        rec(n, depth + 1, s);
                    }
                }
            }
        }
        rec(&self.root, 0, &mut s);
        s
    }
}

fn build(
    reg: &PassRegistry,
    opm: &mut OpPassManager,
    els: &[pipeline::Element],
) -> Result<(), String> {
    for e in els {
        match e {
            pipeline::Element::Pass { name, options } => {
                if let Some(els) = reg.expand_pipeline(name, options.as_deref()) {
                    build(reg, opm, &els?)?;
                    continue;
                }
                let p = reg.create(name, options.as_deref())?;
                if let Some(a) = p.anchor() {
                    if opm.anchor != "any" && opm.anchor != a {
                        return Err(format!("can't add pass '{name}' restricted to '{a}' on a PassManager intended to run on '{}', did you intend to nest?", opm.anchor));
                    }
                }
                opm.add_pass(p);
            }
            pipeline::Element::Nested { anchor, elements } => {
                let n = opm.nest(anchor);
                build(reg, n, elements)?;
            }
        }
    }
    Ok(())
}

struct RunState<'a> {
    ctx: &'a Context,
    extensions: &'a crate::Extensions,
    top: OpId,
    instr: Instrumentation,
    verify_each: bool,
    pipeline: String,
    collect: bool,
    collected: Vec<Diagnostic>,
}

impl<'a> RunState<'a> {
    /// The same run without the IR dump after a failure (after a panic the IR may be
    /// half rewritten: not printed, not verified).
    fn without_dumps(&self) -> RunState<'a> {
        RunState {
            ctx: self.ctx,
            extensions: self.extensions,
            top: self.top,
            instr: Instrumentation {
                print_after_failure: false,
                ..self.instr.clone()
            },
            verify_each: self.verify_each,
            pipeline: self.pipeline.clone(),
            collect: false,
            collected: vec![],
        }
    }
}

fn print_for_dump(st: &RunState<'_>, ir: &Ir, op: OpId) -> String {
    let target = if st.instr.module_scope { st.top } else { op };
    print_module(ir, st.ctx, target, st.instr.print)
}

fn dump(header: String, body: &str) {
    let mut e = std::io::stderr().lock();
    let _ = write!(e, "{header}\n{body}\n");
}

fn run_opm(
    st: &mut RunState<'_>,
    opm: &mut OpPassManager,
    am: &mut AnalysisManager,
    ir: &mut Ir,
    op: OpId,
) -> Result<(), PassRunError> {
    for idx in 0..opm.elements.len() {
        let t0 = Instant::now();
        match &mut opm.elements[idx] {
            PmElement::Pass(p) => run_pass(st, p.as_mut(), am, ir, op)?,
            PmElement::Nested(n) => {
                let children: Vec<OpId> = ir
                    .regions_of(op)
                    .iter()
                    .flat_map(|r| ir.region(*r).blocks.clone())
                    .flat_map(|b| ir.block_ops_vec(b))
                    .filter(|c| n.anchor == "any" || ir.name(*c) == n.anchor)
                    .collect();
                for c in children {
                    if ir.is_alive(c) {
                        run_opm(st, n, am, ir, c)?;
                    }
                }
            }
        }
        opm.element_times[idx] += t0.elapsed().as_secs_f64();
    }
    Ok(())
}

fn run_pass(
    st: &mut RunState<'_>,
    p: &mut dyn Pass,
    am: &mut AnalysisManager,
    ir: &mut Ir,
    op: OpId,
) -> Result<(), PassRunError> {
    let arg = p.argument();
    let name = p.name();
    if st.instr.print_before_all || st.instr.print_before.iter().any(|a| a == arg) {
        dump(
            format!("// -----// IR Dump Before {name} ({arg}) //----- //"),
            &print_for_dump(st, ir, op),
        );
    }
    let before = if st.instr.print_after_change {
        Some(print_for_dump(st, ir, op))
    } else {
        None
    };
    let snapshot = if st.instr.reproducer.is_some() {
        Some(print_module(
            ir,
            st.ctx,
            st.top,
            PrintOptions {
                generic: true,
                debuginfo: true,
            },
        ))
    } else {
        None
    };
    tracing::debug!(target: "ftuner_pass", pass = arg, "running pass");
    let mut cx = PassContext {
        ctx: st.ctx,
        ir,
        analyses: am,
        diagnostics: vec![],
        preserved: PreservedAnalyses::None,
        extensions: st.extensions,
    };
    // A panic in a pass is a bug of ours: it becomes an error with the pass's name (and the
    // reproducer holds the module before the pass), not an abort of the driver or of a
    // program embedding the pass manager.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| p.run(&mut cx, op)));
    let result = match result {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            let mut diags = std::mem::take(&mut cx.diagnostics);
            diags.push(Diagnostic::error(
                cx.ir.loc(op),
                format!("internal error: pass '{arg}' panicked: {what}"),
            ));
            // The IR may be half rewritten: not printed, not verified.
            return fail(
                &st.without_dumps(),
                ir,
                op,
                name,
                arg,
                snapshot,
                diags,
                format!("pass '{arg}' panicked (a bug in ftuner)"),
            );
        }
    };
    let diags = std::mem::take(&mut cx.diagnostics);
    let preserved = cx.preserved.clone();
    let failed = result.is_err()
        || diags
            .iter()
            .any(|d| d.severity == ftuner_ir::Severity::Error);
    let mut failure_diags = diags.clone();
    if !failed && st.verify_each {
        let errs = ftuner_ir::verify::verify(st.ctx, ir, op);
        if !errs.is_empty() {
            failure_diags.extend(errs);
            return fail(
                st,
                ir,
                op,
                name,
                arg,
                snapshot,
                failure_diags,
                format!("verification failed after pass '{arg}'"),
            );
        }
    }
    if failed {
        return fail(
            st,
            ir,
            op,
            name,
            arg,
            snapshot,
            failure_diags,
            format!("pass '{arg}' failed"),
        );
    }
    if st.collect {
        st.collected.extend(diags);
    } else {
        // Warnings and remarks go out as they are.
        for d in &diags {
            eprint!("{d}");
        }
    }
    am.invalidate(&preserved);
    let after_text = if st.instr.print_after_all
        || st.instr.print_after.iter().any(|a| a == arg)
        || st.instr.print_after_change
    {
        Some(print_for_dump(st, ir, op))
    } else {
        None
    };
    if let Some(text) = after_text {
        let changed = before.as_ref().is_none_or(|b| *b != text);
        let requested = st.instr.print_after_all
            || st.instr.print_after.iter().any(|a| a == arg)
            || (st.instr.print_after_change && changed);
        if requested && (!st.instr.print_after_change || changed) {
            {
                dump(
                    format!("// -----// IR Dump After {name} ({arg}) //----- //"),
                    &text,
                );
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn fail(
    st: &RunState<'_>,
    ir: &Ir,
    op: OpId,
    name: &str,
    arg: &str,
    snapshot: Option<String>,
    diags: Vec<Diagnostic>,
    message: String,
) -> Result<(), PassRunError> {
    if st.instr.print_after_failure {
        dump(
            format!("// -----// IR Dump After {name} Failed ({arg}) //----- //"),
            &print_for_dump(st, ir, op),
        );
    }
    if let (Some(path), Some(text)) = (&st.instr.reproducer, snapshot) {
        let content = format!("// configuration: --pass-pipeline='{}'\n// note: the IR below is the input of the failing pass '{arg}'\n{text}", st.pipeline);
        if let Err(e) = std::fs::write(path, content) {
            return Err(PassRunError {
                diagnostics: diags,
                message: format!(
                    "{message}; could not write the reproducer to '{}': {e}",
                    path.display()
                ),
            });
        }
        return Err(PassRunError {
            diagnostics: diags,
            message: format!("{message}; reproducer written to '{}'", path.display()),
        });
    }
    Err(PassRunError {
        diagnostics: diags,
        message,
    })
}

/// mlir-opt's `--mlir-timing` report from rows (the driver's and the pipeline's).
pub fn format_timing(rows: &[(usize, String, f64)], total: f64) -> String {
    let mut s = String::new();
    s.push_str("===-------------------------------------------------------------------------===\n");
    s.push_str("                         ... Execution time report ...\n");
    s.push_str("===-------------------------------------------------------------------------===\n");
    s.push_str(&format!("  Total Execution Time: {total:.4} seconds\n\n"));
    s.push_str("  ----Wall Time----  ----Name----\n");
    let pct = |t: f64| if total > 0.0 { 100.0 * t / total } else { 0.0 };
    for (d, n, t) in rows {
        s.push_str(&format!(
            "  {t:>8.4} ({:>5.1}%)  {}{n}\n",
            pct(*t),
            "  ".repeat(*d)
        ));
    }
    s.push_str(&format!("  {total:>8.4} ({:>5.1}%)  Total\n", 100.0));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Pass, PassContext, PassFailure};

    struct Boom;
    impl Pass for Boom {
        fn argument(&self) -> &'static str {
            "boom"
        }
        fn name(&self) -> &'static str {
            "Boom"
        }
        fn summary(&self) -> &'static str {
            "panics"
        }
        fn run(&mut self, _cx: &mut PassContext<'_>, _op: OpId) -> Result<(), PassFailure> {
            panic!("kaboom");
        }
        fn clone_pass(&self) -> Box<dyn Pass> {
            Box::new(Boom)
        }
    }

    #[test]
    fn a_panicking_pass_is_an_error_with_a_reproducer() {
        let mut ctx = Context::new();
        ctx.allow_unregistered = true;
        let src = "\"builtin.module\"() ({\n}) : () -> ()\n";
        let mut m = ftuner_ir::parse_module(&ctx, src, "t.mlir").expect("parses");
        let mut pm = PassManager::new("builtin.module");
        pm.root.add_pass(Box::new(Boom));
        let path = std::env::temp_dir().join(format!("ftuner-boom-{}.mlir", std::process::id()));
        pm.instrumentation.reproducer = Some(path.clone());
        let e = pm
            .run(&ctx, &mut m.ir, m.top)
            .expect_err("a panic is an error");
        let text = e.to_string();
        assert!(text.contains("pass 'boom' panicked"), "{text}");
        assert!(
            text.contains("internal error: pass 'boom' panicked: kaboom"),
            "{text}"
        );
        let repro = std::fs::read_to_string(&path).expect("the reproducer is written");
        let _ = std::fs::remove_file(&path);
        assert!(repro.contains("builtin.module"), "{repro}");
    }
}
