//! # ftuner-derive
//!
//! OLLIE's derivation-based optimisation of tensor-algebra expressions in our pipeline:
//! contractions are read as `ta` expressions ([`convert`]), rewritten by equivalence-
//! preserving derivation rules ([`rules`]) in an `egg` e-graph ([`egraph`]) under node,
//! iteration and time limits, the cheapest form is extracted with the hardware model's
//! costs ([`derive`]), and written back as matched operators (matmul / batch_matmul) and
//! eOperators (`ta.expr`, lowered to loops by `convert-ta-to-linalg`) ([`emit`]).
//! Every emitted derivation is checked numerically first ([`check`]).

pub mod check;
pub mod convert;
pub mod derive;
pub mod egraph;
pub mod emit;
pub mod lower;
pub mod pass;
pub mod rules;

/// Register this crate's passes.
pub fn register_passes(reg: &mut ftuner_pass::PassRegistry) {
    reg.register(|| Box::new(pass::OllieDerivePass::default()));
    reg.register(|| Box::new(pass::ConvertLinalgToTaPass::default()));
    reg.register(|| Box::new(pass::ConvertTaToLinalgPass::default()));
}
