//! Deallocation: every buffer the rewrite allocated that does not escape the function is
//! freed with `memref.dealloc` after its last use in the block that owns it, and a buffer
//! a loop body allocates and frees is hoisted out of the loop.

use super::BufferRewriter;
use ftuner_dialects::ops;
use ftuner_ir::{intern_name, Attribute, BlockId, Ir, OpId, OpSpec, Value};
use rustc_hash::FxHashSet;

impl BufferRewriter<'_> {
    /// Free what does not escape, at the end of the block that allocated it (after its
    /// last use there), then hoist what loops allocate and free out of them.
    pub(super) fn free_owned(&mut self, loc: Attribute) {
        let owned = std::mem::take(&mut self.owned);
        let mut freed = vec![];
        for (v, blk) in owned {
            if escapes(self.ir, v) {
                continue;
            }
            let d = self.ir.create_op(
                OpSpec::new(intern_name(ops::memref::DeallocOp::NAME), loc).operands(vec![v]),
            );
            freed.push((v, d));
            match last_use(self.ir, v, blk) {
                Some(u) if !is_terminator(self.ir.name(u)) => self.ir.insert_after(u, d),
                Some(u) => self.ir.insert_before(u, d),
                None => match self.ir.terminator(blk) {
                    Some(t) if is_terminator(self.ir.name(t)) => self.ir.insert_before(t, d),
                    _ => self.ir.append_op(blk, d),
                },
            }
        }
        for (v, d) in freed {
            hoist_out_of_loops(self.ir, v, d);
        }
    }
}

/// A buffer allocated and freed in the body of an `scf.for`, its sizes defined outside
/// the loop, holds nothing from one iteration to the next: it is allocated once before
/// the loop and freed after it (as upstream's buffer-loop-hoisting), out of every loop
/// nest level where that holds — through `scf.if`s between the loops too (a branch's
/// buffer then exists whichever branch runs; it is never read before it is written).
/// Never out of a loop marked `ftuner.parallel`: its iterations run at once.
fn hoist_out_of_loops(ir: &mut Ir, v: Value, dealloc: OpId) {
    let Some(a) = ir
        .defining_op(v)
        .filter(|a| ir.name(*a) == ops::memref::AllocOp::NAME)
    else {
        return;
    };
    if ir.op(a).parent != ir.op(dealloc).parent {
        return;
    }
    let mut target = None;
    let mut blk = ir.op(a).parent;
    while let Some(p) = blk.and_then(|b| ir.block_parent_op(b)) {
        // Iterations of a parallel loop run at once: each keeps its own buffer.
        if !matches!(ir.name(p), ops::scf::ForOp::NAME | ops::scf::IfOp::NAME)
            || ir.operands(a).iter().any(|x| ir.defined_inside(*x, p))
            || ir.attr(p, ftuner_dialects::scf::PARALLEL_ATTR).is_some()
        {
            break;
        }
        if ir.name(p) == ops::scf::ForOp::NAME {
            target = Some(p);
        }
        blk = ir.op(p).parent;
    }
    if let Some(lp) = target {
        ir.unlink(a);
        ir.insert_before(lp, a);
        ir.unlink(dealloc);
        ir.insert_after(lp, dealloc);
    }
}

/// The last op of `blk` that uses `v` or a view of it (uses in nested regions count as
/// their ancestor in `blk`), so the buffer can be freed right after it.
fn last_use(ir: &Ir, v: Value, blk: BlockId) -> Option<OpId> {
    let mut work = vec![v];
    let mut seen = FxHashSet::default();
    let mut users = FxHashSet::default();
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        for u in ir.uses(x) {
            // Lift to the ancestor that sits in `blk`.
            let mut o = u.op;
            while ir.op(o).parent != Some(blk) {
                match ir.parent_op(o) {
                    Some(p) => o = p,
                    None => break,
                }
            }
            users.insert(o);
            if is_view_op(ir.name(u.op)) && u.operand == 0 {
                work.extend(ir.results(u.op).iter().copied());
            }
        }
    }
    let mut last = None;
    for o in ir.block_ops(blk) {
        if users.contains(&o) {
            last = Some(o);
        }
    }
    last
}

fn is_view_op(name: &str) -> bool {
    matches!(
        name,
        ops::memref::SubviewOp::NAME
            | ops::memref::CastOp::NAME
            | ops::memref::CollapseShapeOp::NAME
            | ops::memref::ExpandShapeOp::NAME
            | ops::memref::ReshapeOp::NAME
    )
}

fn is_terminator(name: &str) -> bool {
    matches!(name, ops::func::ReturnOp::NAME | ops::scf::YieldOp::NAME)
}

/// Whether a buffer (or a view of it) is returned from the function.
fn escapes(ir: &Ir, v: Value) -> bool {
    let mut work = vec![v];
    let mut seen = FxHashSet::default();
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        for u in ir.uses(x) {
            match ir.name(u.op) {
                ops::func::ReturnOp::NAME | ops::scf::YieldOp::NAME => return true,
                n if is_view_op(n) && u.operand == 0 => {
                    work.extend(ir.results(u.op).iter().copied())
                }
                _ => {}
            }
        }
    }
    false
}
