//! # ftuner-transforms
//!
//! General-purpose transformations with upstream MLIR's names and behaviour:
//! [`canonicalize`] (the greedy pattern-rewrite driver with the dialects' folders and
//! canonicalization patterns), [`cse`], [`symbol_dce`]. [`register_passes`] adds them to a
//! [`ftuner_pass::PassRegistry`].

pub mod bufferize;
pub mod canonicalize;
pub mod cse;
pub mod effects;
pub mod greedy;
pub mod linalg_to_loops;
pub mod symbol_dce;
pub mod to_llvm;

pub use bufferize::BufferizePass;
pub use canonicalize::CanonicalizerPass;
pub use cse::CsePass;
pub use linalg_to_loops::ConvertLinalgToLoopsPass;
pub use symbol_dce::SymbolDcePass;
pub use to_llvm::ConvertToLlvmPass;

/// Register this crate's passes.
pub fn register_passes(reg: &mut ftuner_pass::PassRegistry) {
    reg.register(|| Box::new(BufferizePass::default()));
    reg.register(|| Box::new(CanonicalizerPass::new()));
    reg.register(|| Box::new(CsePass::default()));
    reg.register(|| Box::new(ConvertLinalgToLoopsPass::default()));
    reg.register(|| Box::new(SymbolDcePass::default()));
    reg.register(|| Box::new(ConvertToLlvmPass::default()));
}
