//! `ftuner-opt`'s command line: the flags ([`Cli`]), and the pass flags (`--cse`,
//! `--canonicalize=...`) taken out of `argv` and nested into a pipeline.

use clap::{ArgAction, Parser as ClapParser};
use ftuner_pass::PassRegistry;

#[derive(ClapParser, Debug)]
#[command(
    name = "ftuner-opt",
    about = "ftuner modular optimizer driver (mlir-opt compatible)",
    disable_version_flag = true
)]
pub(crate) struct Cli {
    /// Input file ('-' for stdin)
    #[arg(default_value = "-")]
    pub(crate) input: String,
    /// Output file
    #[arg(short = 'o', default_value = "-")]
    pub(crate) output: String,
    /// Split the input at '// -----' and process each chunk independently
    #[arg(long = "split-input-file")]
    pub(crate) split_input_file: bool,
    /// Check diagnostics against // expected-* annotations
    #[arg(long = "verify-diagnostics")]
    pub(crate) verify_diagnostics: bool,
    /// Run the verifier after each transformation pass
    #[arg(long = "verify-each", default_value_t = true, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    pub(crate) verify_each: bool,
    /// Print the generic op form
    #[arg(long = "mlir-print-op-generic")]
    pub(crate) generic: bool,
    /// Print debug info (locations)
    #[arg(long = "mlir-print-debuginfo")]
    pub(crate) debuginfo: bool,
    /// Allow operations of unregistered dialects
    #[arg(long = "allow-unregistered-dialect")]
    pub(crate) allow_unregistered: bool,
    /// Lower frontend dialects (TOSA) to linalg on tensors with upstream MLIR's own
    /// conversions when the module is read through upstream MLIR
    #[arg(long = "lower-frontends")]
    pub(crate) lower_frontends: bool,
    /// A textual pass pipeline, e.g. builtin.module(func.func(cse))
    #[arg(long = "pass-pipeline")]
    pub(crate) pass_pipeline: Option<String>,
    /// Print the pipeline that will run
    #[arg(long = "dump-pass-pipeline")]
    pub(crate) dump_pass_pipeline: bool,
    /// Disable multi-threading (passes run sequentially in any case)
    #[arg(long = "mlir-disable-threading")]
    pub(crate) disable_threading: bool,
    #[arg(long = "mlir-print-ir-before", value_delimiter = ',')]
    pub(crate) print_ir_before: Vec<String>,
    #[arg(long = "mlir-print-ir-after", value_delimiter = ',')]
    pub(crate) print_ir_after: Vec<String>,
    #[arg(long = "mlir-print-ir-before-all")]
    pub(crate) print_ir_before_all: bool,
    #[arg(long = "mlir-print-ir-after-all")]
    pub(crate) print_ir_after_all: bool,
    #[arg(long = "mlir-print-ir-after-change")]
    pub(crate) print_ir_after_change: bool,
    #[arg(long = "mlir-print-ir-after-failure")]
    pub(crate) print_ir_after_failure: bool,
    #[arg(long = "mlir-print-ir-module-scope")]
    pub(crate) print_ir_module_scope: bool,
    /// Report execution time of each pass
    #[arg(long = "mlir-timing")]
    pub(crate) timing: bool,
    /// Report pass statistics
    #[arg(long = "mlir-pass-statistics")]
    pub(crate) statistics: bool,
    /// Write a reproducer (the IR before the failing pass) to this file on failure
    #[arg(long = "mlir-pass-pipeline-crash-reproducer")]
    pub(crate) reproducer: Option<String>,
    /// Enable debug logging of these components (comma-separated), like LLVM's -debug-only
    #[arg(long = "debug-only", value_delimiter = ',')]
    pub(crate) debug_only: Vec<String>,
    /// List the registered dialects
    #[arg(long = "show-dialects")]
    pub(crate) show_dialects: bool,
    /// Target hardware: host, a built-in name (zen4, a100, ...), cuda:sm_XX, or a .toml file
    #[arg(long = "target")]
    pub(crate) target: Option<String>,
    /// Print the hardware model of --target (default host) and its derived figures
    #[arg(long = "print-hw-model")]
    pub(crate) print_hw_model: bool,
    /// Print the uKernel family of every contraction in the input for --target
    #[arg(long = "print-ukernels")]
    pub(crate) print_ukernels: bool,
    /// After the pipeline, draw how the first ukernel.patch covers a run-time shape:
    /// `M=100,N=2304:plan.svg`
    #[arg(long = "dump-patch-plan")]
    pub(crate) dump_patch_plan: Option<String>,
}

/// Split `argv` into pass flags (`--cse`, `--canonicalize=max-iterations=3`) in order
/// and the rest.
pub(crate) fn split_pass_flags(
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
pub(crate) fn pipeline_from_flags(
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
