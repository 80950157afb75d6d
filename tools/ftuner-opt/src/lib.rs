//! `ftuner-opt`: mlir-opt for ftuner. [`opt_main`] is the whole driver, so that another
//! crate can build its own `*-opt` tool with extra passes through one call (as MLIR's
//! `MlirOptMain`).

mod cli;
pub mod contained;
mod diagnostics;
mod driver;
pub use ftuner_transforms::pipelines;

pub use driver::opt_main;
use ftuner_ir::{parse_module, Context, Diagnostic};
use ftuner_pass::PassRegistry;

/// Reads a module ftuner's own parser does not take (upstream ops we do not model) through
/// upstream MLIR: returns our module, the ops kept as generic operations (with counts) and,
/// when the last argument asks for it, the frontend dialects (TOSA) upstream's conversions
/// lowered to linalg first. The `ftuner-opt`, `ftuner-run` and `ftuner-translate` binaries
/// hand `ftuner_mlir`'s to their readers ([`UpstreamImport`]), run in a child process
/// ([`contained`]).
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
    let mut c = ftuner_transforms::context();
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

/// The upstream-MLIR import path, as a driver hook: a binary that links `ftuner_mlir`
/// (which this crate does not) adds `UpstreamImport(ftuner_mlir::import_for_opt)` to its
/// pass registry ([`PassRegistry::add_extension`]) and hands it to the readers
/// ([`parse_and_verify_with`], [`parse_for_execution`], [`opt_main`]); without it, only
/// ftuner's parser reads. Imports run in a child process (this same binary started with
/// [`contained::CHILD_FLAG`]), so such a binary also calls [`serve_import_child`] first
/// thing in `main`.
#[derive(Clone, Copy)]
pub struct UpstreamImport(pub Importer);

/// When this process is the child of a contained upstream import: serve the one import
/// with `f` and exit. Otherwise return (call it first thing in `main`).
pub fn serve_import_child(f: Importer) {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(contained::CHILD_FLAG) {
        std::process::exit(contained::child_main(f, &args[2..]));
    }
}

/// The registry of a tool that also reads upstream MLIR: [`default_registry`] with the
/// [`UpstreamImport`] hook.
pub fn registry_with_upstream(f: Importer) -> PassRegistry {
    let mut r = default_registry();
    r.add_extension(UpstreamImport(f));
    r
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

/// [`parse_and_verify_with`], then guarded for running: the input's own memory accesses
/// get run-time bounds checks and its in-bounds promises are dropped
/// (`ftuner_transforms::runtime_checks::guard_input`). What ftuner-run, ftuner-translate
/// and the Python package read untrusted IR with.
pub fn parse_for_execution(
    ctx: &Context,
    src: &str,
    file: &str,
    upstream: Option<&UpstreamImport>,
) -> Result<ftuner_ir::ParsedModule, Vec<Diagnostic>> {
    let mut m = parse_and_verify_with(ctx, src, file, upstream)?;
    ftuner_transforms::runtime_checks::guard_input(&mut m.ir, m.top);
    Ok(m)
}

/// Parse and verify `src` with all dialects (ftuner's parser only); convenience for tests
/// and embedders.
pub fn parse_and_verify(
    ctx: &Context,
    src: &str,
    file: &str,
) -> Result<ftuner_ir::ParsedModule, Vec<Diagnostic>> {
    parse_and_verify_with(ctx, src, file, None)
}

/// Parse and verify `src`; with `upstream`, ops ftuner does not parse are read through
/// upstream MLIR (contained), frontends (TOSA) lowered to linalg there.
pub fn parse_and_verify_with(
    ctx: &Context,
    src: &str,
    file: &str,
    upstream: Option<&UpstreamImport>,
) -> Result<ftuner_ir::ParsedModule, Vec<Diagnostic>> {
    let mut m = match (parse_module(ctx, src, file), upstream) {
        (Ok(m), _) => m,
        (Err(d), None) => return Err(vec![d]),
        // Ops we do not parse: through upstream MLIR, frontends (TOSA) lowered to linalg;
        // what is still not ours is an error naming it.
        (Err(d), Some(_)) if !upstream_may_read(src, file) => return Err(vec![d]),
        (Err(d), Some(_)) => {
            // (IR is context-free: names and types are interned process-wide.)
            match contained::import(&ftuner_transforms::context(), src, file, true) {
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
