//! Side-effect queries (MLIR's `MemoryEffectOpInterface` as far as we model it).

use ftuner_ir::{traits, Context, Ir, OpId};

/// Whether `op` has no memory effects (recursively for ops with recursive effects).
pub fn is_pure(ctx: &Context, ir: &Ir, op: OpId) -> bool {
    let name = ir.name(op);
    let Some(def) = ctx.op_def(name) else {
        return false;
    };
    if def.has(traits::PURE) {
        return true;
    }
    // Structured ops on tensors have no effects; on memrefs they read and write.
    if name.starts_with("linalg.") && !name.ends_with("yield") && name != "linalg.index" {
        if ir
            .operands(op)
            .iter()
            .any(|v| ir.value_type(*v).is_memref())
        {
            return false;
        }
        return nested_pure(ctx, ir, op);
    }
    if def.has(traits::RECURSIVE_MEMORY_EFFECTS) {
        return nested_pure(ctx, ir, op);
    }
    // Vector transfers read and write memory only when their base is a memref (MLIR's
    // `TransferReadOp::getEffects`); on a tensor they are values.
    if matches!(name, "vector.transfer_read" | "vector.transfer_write") {
        let base = ir.operands(op).get(usize::from(name.ends_with("write")));
        return base.is_some_and(|v| ir.value_type(*v).is_tensor());
    }
    false
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
    if matches!(o.name, "memref.alloc" | "memref.alloca") {
        return true;
    }
    is_pure(ctx, ir, op)
}
