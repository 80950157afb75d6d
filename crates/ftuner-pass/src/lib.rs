//! # ftuner-pass
//!
//! MLIR's pass infrastructure, for ftuner's IR:
//!
//! * [`Pass`]: argument (`cse`), display name (`CSE`), summary, typed options parsed from
//!   `{key=value ...}`, the op it anchors on, statistics — declared once with
//!   [`define_pass!`], which generates the rest;
//! * [`PassRegistry`]: every pass by argument, with `--help` text;
//! * textual pipelines (`builtin.module(func.func(canonicalize,cse),symbol-dce)`) parsed
//!   into a nested [`PassManager`] and printed back ([`pipeline`]);
//! * [`AnalysisManager`]: analyses cached per op, invalidated unless a pass preserves them;
//! * instrumentation ([`Instrumentation`]): IR printing before/after passes, timing,
//!   statistics, crash reproducers.
//!
//! ```
//! use ftuner_pass::{PassRegistry, pipeline};
//! let reg = PassRegistry::default();
//! let p = pipeline::parse("builtin.module(func.func(a,b{x=1}),c)").unwrap();
//! assert_eq!(p.to_string(), "builtin.module(func.func(a,b{x=1}),c)");
//! assert!(reg.lookup("a").is_none());
//! ```

mod analysis;
pub mod define;
mod extensions;
mod manager;
pub mod options;
pub mod pipeline;
mod registry;

pub use analysis::{Analysis, AnalysisManager, PreservedAnalyses};
pub use extensions::Extensions;
pub use manager::{
    format_timing, Instrumentation, OpPassManager, PassManager, PassRunError, TimingReport,
};
pub use options::{OptionSpec, PassOptions};
pub use registry::{PassInfo, PassRegistry, PipelineInfo};

use ftuner_ir::{Context, Diagnostic, Ir, OpId};

#[doc(hidden)]
pub use ftuner_ir as __ir;

/// What a pass sees while it runs.
pub struct PassContext<'a> {
    pub ctx: &'a Context,
    pub ir: &'a mut Ir,
    pub analyses: &'a mut AnalysisManager,
    /// Diagnostics the pass emitted (errors make the pass fail).
    pub diagnostics: Vec<Diagnostic>,
    /// Set by the pass to what it keeps valid; defaults to nothing.
    pub preserved: PreservedAnalyses,
    /// The driver's hooks ([`Extensions`]).
    pub extensions: &'a Extensions,
}

impl PassContext<'_> {
    pub fn emit(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }
    /// The driver's hook of type `T`, if it gave one.
    pub fn extension<T: std::any::Any + Send + Sync>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }
    /// The analysis `A` of `op`, computed on first use and cached.
    pub fn analysis<A: Analysis>(&mut self, op: OpId) -> Result<&A, String> {
        self.analyses.get::<A>(self.ctx, self.ir, op)
    }
}

/// A pass failed; its diagnostics say why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassFailure;

/// A statistic a pass reports under `--mlir-pass-statistics`.
#[derive(Clone, Debug)]
pub struct Statistic {
    pub name: &'static str,
    pub description: &'static str,
    pub value: u64,
}

/// A transformation or analysis run over an operation.
pub trait Pass: Send {
    /// The command-line argument, e.g. `cse`.
    fn argument(&self) -> &'static str;
    /// The display name, e.g. `CSE` (used in IR dumps and timing).
    fn name(&self) -> &'static str;
    fn summary(&self) -> &'static str;
    fn description(&self) -> &'static str {
        ""
    }
    /// The op this pass runs on (`func.func`), or `None` for any op.
    fn anchor(&self) -> Option<&'static str> {
        None
    }
    /// Option declarations and current values.
    fn options(&mut self) -> Option<&mut PassOptions> {
        None
    }
    fn options_ref(&self) -> Option<&PassOptions> {
        None
    }
    /// Run on `op`. Errors are reported through `cx.emit` and signalled with
    /// `Err(PassFailure)`.
    fn run(&mut self, cx: &mut PassContext<'_>, op: OpId) -> Result<(), PassFailure>;
    fn statistics(&self) -> Vec<Statistic> {
        vec![]
    }
    /// A fresh instance with the same options (used when the pass runs on many ops).
    fn clone_pass(&self) -> Box<dyn Pass>;
}
