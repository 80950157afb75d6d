//! # ftuner-transforms
//!
//! General-purpose transformations with upstream MLIR's names and behaviour:
//! [`canonicalize`] (the greedy pattern-rewrite driver with the dialects' folders and
//! canonicalization patterns), [`cse`], [`symbol_dce`], [`fuse_elementwise`], [`outline_weights`]; and the steps from tensors to
//! the llvm dialect ([`bufferize`], [`linalg_to_loops`], [`prefetch`], [`to_llvm`]). [`register_passes`] adds them to a
//! [`ftuner_pass::PassRegistry`].

use ftuner_dialects::ops;
pub mod aliasing;
pub mod bufferize;
pub mod canonicalize;
pub mod conv_1x1;
pub mod cse;
pub mod effects;
pub mod fold_scale;
pub mod fuse_elementwise;
pub mod greedy;
pub mod library_calls;
pub mod linalg_to_loops;
pub mod lower_affine;
pub mod math_approx;
mod nchw_consumer;
pub mod outline_nests;
pub mod outline_weights;
pub mod parallel_loops;
pub mod peel_windows;
pub mod pipelines;
pub mod prefetch;
pub mod reassociate_reductions;
pub mod runtime_checks;
pub mod symbol_dce;
mod tensor_build;
pub mod test_perturb;
pub mod to_llvm;

pub use bufferize::BufferizePass;
pub use canonicalize::CanonicalizerPass;
pub use conv_1x1::Conv1x1ToMatmulPass;
pub use cse::CsePass;
pub use fuse_elementwise::FuseElementwisePass;
pub use linalg_to_loops::ConvertLinalgToLoopsPass;
pub use lower_affine::LowerAffinePass;
pub use math_approx::ApproximateMathPass;
pub use outline_nests::OutlineLoopNestsPass;
pub use outline_weights::OutlineWeightPreparationPass;
pub use peel_windows::PeelPaddedWindowsPass;
pub use prefetch::PrefetchTileUpdatesPass;
pub use symbol_dce::SymbolDcePass;
pub use to_llvm::ConvertToLlvmPass;

/// Attach this crate's op interfaces to the dialects' ops (MLIR's external models, which
/// a `DialectRegistry` extension attaches): the conversion patterns to LLVM
/// ([`to_llvm::ConvertToLlvm`]) and the bufferization models
/// ([`bufferize::Bufferizable`]). `bufferize` and `convert-to-llvm` find what they do to
/// an op only there, so a compiler embedding them attaches models to its own ops the same
/// way.
pub fn register_interfaces(reg: &mut ftuner_ir::Registry) {
    to_llvm::register_conversions(reg);
    bufferize::register_models(reg);
}

/// A Context with every dialect ([`ftuner_dialects::context`]) and this crate's interfaces
/// ([`register_interfaces`]): what a tool running our pipelines starts from.
pub fn context() -> ftuner_ir::Context {
    let mut ctx = ftuner_dialects::context();
    register_interfaces(&mut ctx.registry);
    ctx
}

/// Register this crate's passes.
pub fn register_passes(reg: &mut ftuner_pass::PassRegistry) {
    reg.register(|| Box::new(BufferizePass::default()));
    reg.register(|| Box::new(CanonicalizerPass::new()));
    reg.register(|| Box::new(Conv1x1ToMatmulPass::default()));
    reg.register(|| Box::new(CsePass::default()));
    reg.register(|| Box::new(test_perturb::PerturbFloatConstantsPass::default()));
    reg.register(|| Box::new(ConvertLinalgToLoopsPass::default()));
    reg.register(|| Box::new(FuseElementwisePass::default()));
    reg.register(|| Box::new(fold_scale::FoldScaleIntoConvPass::default()));
    reg.register(|| Box::new(LowerAffinePass::default()));
    reg.register(|| Box::new(ApproximateMathPass::default()));
    reg.register(|| Box::new(OutlineLoopNestsPass::default()));
    reg.register(|| Box::new(OutlineWeightPreparationPass::default()));
    reg.register(|| Box::new(PeelPaddedWindowsPass::default()));
    reg.register(|| Box::new(PrefetchTileUpdatesPass::default()));
    reg.register(|| Box::new(reassociate_reductions::ReassociateReductionsPass::default()));
    reg.register(|| Box::new(SymbolDcePass::default()));
    reg.register(|| Box::new(parallel_loops::ConvertParallelLoopsToRuntimePass::default()));
    reg.register(|| Box::new(ConvertToLlvmPass::default()));
    reg.register(|| Box::new(library_calls::LibraryCallsPass::default()));
}

/// The passes between `bufferize` and `convert-to-llvm`, with `$loops` the
/// `convert-linalg-to-loops` invocation (its options, e.g. the target's `vector-bytes`).
macro_rules! buffer_passes {
    ($loops:literal) => {
        concat!(
            "approximate-math,lower-affine,",
            $loops,
            ",prefetch-tile-updates,canonicalize,cse,canonicalize,outline-loop-nests"
        )
    };
}

/// From buffers to the llvm dialect: what follows `bufferize` on the way to machine code,
/// serial (no `convert-parallel-loops-to-runtime`: the GPU path's host code).
pub const BUFFERS_TO_LLVM: &str = concat!(
    "builtin.module(",
    buffer_passes!("convert-linalg-to-loops"),
    ",convert-to-llvm)"
);

/// Whether some `func.func` under `top` takes or returns tensors (so `bufferize` must run
/// before the conversion to LLVM).
pub fn has_tensor_functions(ir: &ftuner_ir::Ir, top: ftuner_ir::OpId) -> bool {
    let mut any = false;
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == ops::func::FuncOp::NAME {
            if let Some(t) = ir.attr(o, "function_type").and_then(|a| a.as_type()) {
                any |= t
                    .function_inputs()
                    .iter()
                    .chain(t.function_results())
                    .any(|x| x.is_tensor());
            }
        }
    });
    any
}

/// The pipeline that takes `top` (tensors or buffers) to the llvm dialect: `bufferize`
/// when some function still has tensors, then [`BUFFERS_TO_LLVM`]; with `parallel` false,
/// no `convert-parallel-loops-to-runtime` (serial code, no thread-pool calls); with
/// `abort_on_failure`, failed run-time checks abort instead of returning through the
/// runtime's `ftuner_rt_fail` (code with no ftuner runtime around it: a standalone object);
/// `vector_bytes`, the target's vector register width (`convert-linalg-to-loops`' option:
/// the blocks of its in-register transposes).
/// None when there is no function left to convert (the module is in the llvm dialect
/// already).
pub fn to_llvm_pipeline(
    ir: &ftuner_ir::Ir,
    top: ftuner_ir::OpId,
    parallel: bool,
    abort_on_failure: bool,
    vector_bytes: u32,
) -> Option<String> {
    let mut funcs = false;
    ir.walk_pre(top, &mut |o| {
        funcs |= matches!(ir.name(o), ops::func::FuncOp::NAME | ops::gpu::FuncOp::NAME)
    });
    if !funcs {
        return None;
    }
    let prefix = if has_tensor_functions(ir, top) {
        "bufferize,"
    } else {
        ""
    };
    let pool = if parallel {
        "convert-parallel-loops-to-runtime,"
    } else {
        ""
    };
    let convert = format!("{pool}convert-to-llvm{{abort-on-failure={abort_on_failure}}}");
    let buffers = format!(
        buffer_passes!("convert-linalg-to-loops{{vector-bytes={vb}}}"),
        vb = vector_bytes
    );
    Some(format!("builtin.module({prefix}{buffers},{convert})"))
}
