//! Side-effect queries (MLIR's `MemoryEffectOpInterface` as far as we model it).

use ftuner_dialects::ops;
use ftuner_ir::{traits, Context, Ir, OpId};

/// Whether `op` has no memory effects (ftuner-ir's query, which ollie-derive shares).
pub use ftuner_ir::is_pure;

/// MLIR's `isOpTriviallyDead`: unused results, not a terminator, no effects. Allocations
/// whose only effect is allocating their unused result are dead too.
pub fn is_trivially_dead(ctx: &Context, ir: &Ir, op: OpId) -> bool {
    let o = ir.op(op);
    if o.results.iter().any(|r| ir.has_uses(*r)) {
        return false;
    }
    if ctx.has_trait(o.name, traits::TERMINATOR) || ctx.has_trait(o.name, traits::SYMBOL) {
        return false;
    }
    if matches!(
        o.name,
        ops::memref::AllocOp::NAME | ops::memref::AllocaOp::NAME
    ) {
        return true;
    }
    is_pure(ctx, ir, op)
}
