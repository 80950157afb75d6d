//! Side-effect queries (MLIR's `MemoryEffectOpInterface` as far as we model it).

use ftuner_dialects::ops;
use ftuner_ir::{traits, Context, Ir, MemoryEffects, OpId};

/// Whether `op` has no memory effects (recursively for ops with recursive effects): its
/// traits, or the op's own `memory_effects` interface where they depend on its operands.
pub fn is_pure(ctx: &Context, ir: &Ir, op: OpId) -> bool {
    let Some(def) = ctx.op_def(ir.name(op)) else {
        return false;
    };
    if def.has(traits::PURE) {
        return true;
    }
    match def.memory_effects.map(|f| f(ir, op)) {
        Some(MemoryEffects::None) => true,
        Some(MemoryEffects::Nested) => nested_pure(ctx, ir, op),
        Some(MemoryEffects::ReadWrite) => false,
        None => def.has(traits::RECURSIVE_MEMORY_EFFECTS) && nested_pure(ctx, ir, op),
    }
}

fn nested_pure(ctx: &Context, ir: &Ir, op: OpId) -> bool {
    for r in ir.regions_of(op) {
        for b in &ir.region(*r).blocks {
            for o in ir.block_ops(*b) {
                let term = ctx.has_trait(ir.name(o), traits::TERMINATOR);
                if !(is_pure(ctx, ir, o) || (term && ctx.has_trait(ir.name(o), traits::PURE))) {
                    return false;
                }
            }
        }
    }
    true
}

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
