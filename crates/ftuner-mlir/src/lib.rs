//! # ftuner-mlir
//!
//! The bridge between ftuner and upstream MLIR 22 (through `melior`), the only crate that
//! links MLIR:
//!
//! * [`import`]: any module upstream MLIR accepts (every upstream dialect registered) becomes
//!   ours. Upstream parses and verifies it; the walk over its operations finds those ftuner
//!   does not model, which stay generic operations when the ftuner context allows
//!   unregistered ops, and are otherwise a clear error naming them; the operations, with
//!   their locations, are then read into our IR from upstream's generic form (the one form
//!   both printers agree on byte for byte).
//! * [`export`]: our module becomes an upstream module, checked by MLIR's verifier.
//! * [`create_pass`]: an MLIR pass (melior's external pass) that runs an ftuner pipeline —
//!   `patch-ukernels` and friends — on an upstream module and hands the result back, so a
//!   melior-based compiler adds it to its own `PassManager`.
//!
//! ```
//! let up = ftuner_mlir::Upstream::new();
//! let mut ctx = ftuner_dialects::context();
//! let src = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }";
//! let ours = ftuner_mlir::import(&mut ctx, &up, src, "f.mlir").unwrap();
//! assert!(ours.unmodeled.is_empty());
//! let back = ftuner_mlir::export(&ctx, &ours.module.ir, ours.module.top, &up).unwrap();
//! assert_eq!(up.print(&back), up.print(&up.parse(src, "f.mlir").unwrap()));
//! ```

use melior::ir::block::BlockLike;
use melior::ir::operation::{OperationLike, OperationPrintingFlags};
use melior::ir::{Module, OperationRef, RegionLike};
use melior::pass::{ExternalPass, Pass, RunExternalPass};
use melior::{Context as MlirContext, ContextRef};
use std::cell::RefCell;
use std::rc::Rc;

/// An upstream MLIR context with every upstream dialect registered and loaded.
pub struct Upstream {
    ctx: MlirContext,
}

impl Default for Upstream {
    fn default() -> Self {
        Upstream::new()
    }
}

/// `loc("-":L:C)` (upstream's name for a parsed string) → `file:L:C`.
fn locate(loc: &str, file: &str) -> String {
    loc.trim_start_matches("loc(")
        .trim_end_matches(')')
        .replace("\"-\"", file)
}

impl Upstream {
    pub fn new() -> Upstream {
        let registry = melior::dialect::DialectRegistry::new();
        melior::utility::register_all_dialects(&registry);
        let ctx = MlirContext::new();
        ctx.append_dialect_registry(&registry);
        ctx.load_all_available_dialects();
        Upstream { ctx }
    }

    pub fn context(&self) -> &MlirContext {
        &self.ctx
    }

    /// Parse (and verify) with upstream MLIR; errors are upstream's diagnostics, located
    /// in `file`.
    pub fn parse(&self, src: &str, file: &str) -> Result<Module<'_>, String> {
        parse_in(&self.ctx, src, file)
    }

    /// Upstream's custom-form printing.
    pub fn print(&self, m: &Module<'_>) -> String {
        m.as_operation().to_string()
    }

    /// Upstream's generic form, with or without locations.
    pub fn print_generic(&self, m: &Module<'_>, locations: bool) -> String {
        generic_text(&m.as_operation(), locations)
    }
}

fn generic_text<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, locations: bool) -> String {
    let flags = OperationPrintingFlags::new()
        .print_generic_operation_form()
        .enable_debug_info(locations, false);
    op.to_string_with_flags(flags).unwrap_or_default()
}

/// Run `f` with upstream's diagnostics collected, located in `file`.
fn with_diagnostics<T>(ctx: &MlirContext, file: &str, f: impl FnOnce() -> T) -> (T, String) {
    let diags: Rc<RefCell<Vec<String>>> = Rc::default();
    let sink = diags.clone();
    let file_q = file.to_string();
    let id = ctx.attach_diagnostic_handler(move |d| {
        let sev = match d.severity() {
            melior::diagnostic::DiagnosticSeverity::Error => "error",
            melior::diagnostic::DiagnosticSeverity::Warning => "warning",
            melior::diagnostic::DiagnosticSeverity::Note => "note",
            melior::diagnostic::DiagnosticSeverity::Remark => "remark",
        };
        sink.borrow_mut().push(format!(
            "{}: {sev}: {d}",
            locate(&d.location().to_string(), &file_q)
        ));
        true
    });
    let out = f();
    ctx.detach_diagnostic_handler(id);
    let msgs = diags.borrow().join("\n");
    (out, msgs)
}

fn parse_in<'c>(ctx: &'c MlirContext, src: &str, file: &str) -> Result<Module<'c>, String> {
    let (m, msgs) = with_diagnostics(ctx, file, || Module::parse(ctx, src));
    match m {
        Some(m) if m.as_operation().verify() => Ok(m),
        Some(_) => Err(format!(
            "{file}: upstream MLIR's verifier rejects the module{}{msgs}",
            if msgs.is_empty() { "" } else { ":\n" }
        )),
        None => Err(if msgs.is_empty() {
            format!("{file}: upstream MLIR cannot parse the module")
        } else {
            msgs
        }),
    }
}

/// Upstream's TOSA → linalg-on-tensors conversion: `tosa-to-linalg-pipeline` without its
/// `tosa-validate` step, whose level checks reject every dynamic dim (TOSA 1.0 profiles
/// are static), followed by the TOSA → arith/tensor conversions for what remains
/// (constants, reshapes, slices, pads).
pub const TOSA_TO_LINALG: &str = "builtin.module(func.func(tosa-optional-decompositions),canonicalize,func.func(tosa-infer-shapes,tosa-make-broadcastable,tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),canonicalize,cse)";

/// Frontend dialects upstream MLIR 22 converts to linalg on tensors, each with its
/// pipeline. (StableHLO is not part of upstream MLIR: its conversion lives in the
/// StableHLO project, which the Python package reaches through torch-mlir's wheel.)
pub const FRONTENDS: &[(&str, &str)] = &[("tosa", TOSA_TO_LINALG)];

/// Lower the frontend dialects of `m` (see [`FRONTENDS`]) with upstream's own conversions;
/// returns the frontends lowered. A conversion that fails is an error with upstream's
/// located diagnostics.
pub fn lower_frontends(
    up: &Upstream,
    m: &mut Module<'_>,
    file: &str,
) -> Result<Vec<&'static str>, String> {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    let mut present = vec![];
    m.as_operation()
        .walk(melior::ir::operation::WalkOrder::PreOrder, |o| {
            let name = o.name().as_string_ref().as_str().unwrap_or("").to_string();
            for (d, _) in FRONTENDS {
                if name.strip_prefix(d).is_some_and(|r| r.starts_with('.')) && !present.contains(d)
                {
                    present.push(*d);
                }
            }
            melior::ir::operation::WalkResult::Advance
        });
    for (d, pipeline) in FRONTENDS.iter().filter(|(d, _)| present.contains(d)) {
        REGISTER.call_once(melior::utility::register_all_passes);
        let pm = melior::pass::PassManager::new(&up.ctx);
        melior::utility::parse_pass_pipeline(pm.as_operation_pass_manager(), pipeline)
            .map_err(|e| format!("{file}: the {d} conversion pipeline does not parse: {e}"))?;
        let (r, msgs) = with_diagnostics(&up.ctx, file, || pm.run(m));
        if r.is_err() || !m.as_operation().verify() {
            return Err(format!(
                "{file}: upstream MLIR's {d} → linalg conversion failed{}{msgs}",
                if msgs.is_empty() { "" } else { ":\n" }
            ));
        }
    }
    Ok(present)
}

/// A module read through upstream MLIR.
pub struct Imported {
    pub module: ftuner_ir::ParsedModule,
    /// Operations ftuner does not model, with how often each occurs (kept generic).
    pub unmodeled: Vec<(String, usize)>,
    /// Frontend dialects lowered to linalg by upstream's conversions ([`import_with`]).
    pub lowered: Vec<&'static str>,
}

/// The names of the operations under `op` that `ctx` does not model, with counts.
fn unmodeled_ops<'c: 'a, 'a>(
    ctx: &ftuner_ir::Context,
    op: &impl OperationLike<'c, 'a>,
) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = vec![];
    op.walk(melior::ir::operation::WalkOrder::PreOrder, |o| {
        let name = o.name().as_string_ref().as_str().unwrap_or("?").to_string();
        if ctx.op_def(ftuner_ir::intern_name(&name)).is_none() {
            match out.iter_mut().find(|x| x.0 == name) {
                Some(x) => x.1 += 1,
                None => out.push((name, 1)),
            }
        }
        melior::ir::operation::WalkResult::Advance
    });
    out
}

fn list(ops: &[(String, usize)]) -> String {
    ops.iter()
        .map(|(n, c)| format!("{n} ({c})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Read `src` with upstream MLIR and build our module from it. Operations ftuner does not
/// model are kept as generic operations when `ctx.allow_unregistered` is set; otherwise
/// they are an error naming them.
pub fn import(
    ctx: &mut ftuner_ir::Context,
    up: &Upstream,
    src: &str,
    file: &str,
) -> Result<Imported, String> {
    import_with(ctx, up, src, file, false)
}

/// [`import`], first lowering the frontend dialects upstream MLIR converts to linalg
/// ([`lower_frontends`]) when `lower` is set.
pub fn import_with(
    ctx: &mut ftuner_ir::Context,
    up: &Upstream,
    src: &str,
    file: &str,
    lower: bool,
) -> Result<Imported, String> {
    let mut m = up.parse(src, file)?;
    let lowered = if lower {
        lower_frontends(up, &mut m, file)?
    } else {
        vec![]
    };
    let op = m.as_operation();
    let unmodeled = unmodeled_ops(ctx, &op);
    if !unmodeled.is_empty() && !ctx.allow_unregistered {
        return Err(format!(
            "{file}: operations ftuner does not model: {} (allow unregistered operations to keep them as generic operations)",
            list(&unmodeled)
        ));
    }
    let text = generic_text(&op, true).replace("loc(\"-\":", &format!("loc({file:?}:"));
    let mut pm = ftuner_ir::parse_module(ctx, &text, file).map_err(|d| {
        format!("{file}: the generic form upstream printed does not parse here: {d}")
    })?;
    ftuner_dialects::after_parse(&mut pm.ir, pm.top);
    let errs = ftuner_ir::verify::verify(ctx, &pm.ir, pm.top);
    if let Some(d) = errs.first() {
        return Err(format!("{file}: imported module does not verify here: {d}"));
    }
    Ok(Imported {
        module: pm,
        unmodeled,
        lowered,
    })
}

/// Our module as an upstream module, verified by MLIR. (Exported into the context it was
/// imported from, a module's `dense_resource` blobs get fresh names — `name_1` — as MLIR
/// uniques resources per context; the module means the same.)
pub fn export<'u>(
    ctx: &ftuner_ir::Context,
    ir: &ftuner_ir::Ir,
    top: ftuner_ir::OpId,
    up: &'u Upstream,
) -> Result<Module<'u>, String> {
    export_in(ctx, ir, top, &up.ctx)
}

fn export_in<'c>(
    ctx: &ftuner_ir::Context,
    ir: &ftuner_ir::Ir,
    top: ftuner_ir::OpId,
    mctx: &'c MlirContext,
) -> Result<Module<'c>, String> {
    let text = ftuner_ir::print_module(
        ir,
        ctx,
        top,
        ftuner_ir::PrintOptions {
            generic: true,
            debuginfo: true,
        },
    );
    parse_in(mctx, &text, "<ftuner export>")
}

/// The pass [`create_pass`] makes: an ftuner pipeline run on an upstream module.
#[derive(Clone)]
pub struct FtunerPass {
    pipeline: String,
    registry: fn() -> ftuner_pass::PassRegistry,
    context: fn() -> ftuner_ir::Context,
}

#[repr(align(8))]
struct PassId;
static FTUNER_PASS_ID: PassId = PassId;

impl FtunerPass {
    fn run_on(&self, op: &OperationRef<'_, '_>) -> Result<(), String> {
        let mut ctx = (self.context)();
        // Ops we do not model may pass through untouched.
        ctx.allow_unregistered = true;
        let text = generic_text(op, true);
        let mut m = ftuner_ir::parse_module(&ctx, &text, "<mlir>")
            .map_err(|d| format!("ftuner: cannot read the module: {d}"))?;
        ftuner_dialects::after_parse(&mut m.ir, m.top);
        let mut pm = ftuner_pass::PassManager::from_pipeline(&(self.registry)(), &self.pipeline)
            .map_err(|e| format!("ftuner pipeline '{}': {e}", self.pipeline))?;
        pm.run(&ctx, &mut m.ir, m.top)
            .map_err(|e| format!("ftuner pipeline '{}' failed: {e}", self.pipeline))?;
        // Back into the caller's context, then into the caller's module in place.
        let mctx: ContextRef<'_> = op.context();
        // SAFETY: the context outlives the pass run that holds one of its operations.
        let mctx: &MlirContext = unsafe { mctx.to_ref() };
        let new = export_in(&ctx, &m.ir, m.top, mctx).map_err(|e| {
            format!(
                "ftuner pipeline '{}' produced IR upstream MLIR rejects: {e}",
                self.pipeline
            )
        })?;
        let old_body = op
            .region(0)
            .ok()
            .and_then(|r| r.first_block())
            .ok_or("the pass runs on builtin.module")?;
        let new_body = new.body();
        // SAFETY: the old body's operations are detached and destroyed last to first (users
        // before the values they use); the new module's operations are moved (ownership
        // passes to the old body's block) before `new` is dropped.
        unsafe {
            let mut old = vec![];
            let mut o = old_body.first_operation();
            while let Some(x) = o {
                old.push(x.to_raw());
                o = x.next_in_block();
            }
            for raw in old.into_iter().rev() {
                mlir_sys::mlirOperationRemoveFromParent(raw);
                mlir_sys::mlirOperationDestroy(raw);
            }
            let mut moved = vec![];
            let mut o = new_body.first_operation();
            while let Some(x) = o {
                moved.push(x.to_raw());
                o = x.next_in_block();
            }
            for raw in moved {
                mlir_sys::mlirOperationRemoveFromParent(raw);
                mlir_sys::mlirBlockAppendOwnedOperation(old_body.to_raw(), raw);
            }
        }
        Ok(())
    }
}

impl<'c> RunExternalPass<'c> for FtunerPass {
    fn initialize(&mut self, _context: ContextRef<'c>) {}

    fn run(&mut self, operation: OperationRef<'c, '_>, pass: ExternalPass<'_>) {
        if let Err(e) = self.run_on(&operation) {
            let msg = std::ffi::CString::new(e.replace('\0', " ")).unwrap_or_default();
            // SAFETY: a valid location of a live operation and a NUL-terminated message.
            unsafe { mlir_sys::mlirEmitError(operation.location().to_raw(), msg.as_ptr()) };
            pass.signal_failure();
        }
    }
}

/// An MLIR pass (on `builtin.module`) that runs the ftuner pipeline `pipeline` (textual,
/// e.g. `builtin.module(patch-ukernels{target=host},lower-ukernels,canonicalize,cse)`)
/// with the passes of `registry`, in the ftuner Context `context` makes (its dialects and
/// the op interfaces the passes look up, e.g. `ftuner_transforms::context`). The pipeline
/// must leave only operations upstream MLIR knows (or the caller's context must allow
/// unregistered dialects); otherwise the pass fails with an error at the module.
pub fn create_pass(
    pipeline: &str,
    registry: fn() -> ftuner_pass::PassRegistry,
    context: fn() -> ftuner_ir::Context,
) -> Pass {
    melior::pass::create_external(
        FtunerPass {
            pipeline: pipeline.to_string(),
            registry,
            context,
        },
        melior::ir::r#type::TypeId::create(&FTUNER_PASS_ID),
        "FtunerPipeline",
        "ftuner-pipeline",
        "Run an ftuner pass pipeline on the module",
        "builtin.module",
        &[],
    )
}

/// [`import_with`] in a fresh upstream context, shaped for `ftuner_opt::UpstreamImport`
/// and `ftuner_opt::serve_import_child`: the module, the operations kept generic and the
/// frontends lowered (when `lower` is set).
#[allow(clippy::type_complexity)]
pub fn import_for_opt(
    ctx: &mut ftuner_ir::Context,
    src: &str,
    file: &str,
    lower: bool,
) -> Result<
    (
        ftuner_ir::ParsedModule,
        Vec<(String, usize)>,
        Vec<&'static str>,
    ),
    String,
> {
    let up = Upstream::new();
    import_with(ctx, &up, src, file, lower).map(|i| (i.module, i.unmodeled, i.lowered))
}
