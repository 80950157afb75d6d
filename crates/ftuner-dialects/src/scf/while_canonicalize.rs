//! `scf.while` canonicalization, each pattern named after the upstream one it follows
//! (`mlir/lib/Dialect/SCF/IR/SCF.cpp`). The `before` region takes the initial values and
//! ends in `scf.condition(%c) fwd...`; the forwarded values become the `after` region's
//! arguments while `%c` holds and the results when it does not; the `after` region yields
//! the next `before` arguments.

use super::canonicalize::rebuild;
use crate::arith_canonicalize::cst_attr;
use ftuner_ir::dialect::CanonFn;
use ftuner_ir::Context;
use ftuner_ir::{Attribute, BlockId, Ir, OpId, Type, Value};

/// The loop's parts: before block, `scf.condition`, after block, `scf.yield`.
struct Parts {
    before: BlockId,
    cond: OpId,
    after: BlockId,
    yld: OpId,
}

fn parts(ir: &Ir, op: OpId) -> Option<Parts> {
    let rs = ir.regions_of(op);
    let (before, after) = (
        ir.region_entry(*rs.first()?)?,
        ir.region_entry(*rs.get(1)?)?,
    );
    // Single blocks only: the patterns rewrite the entry blocks' terminators.
    if ir.region(rs[0]).blocks.len() != 1 || ir.region(rs[1]).blocks.len() != 1 {
        return None;
    }
    let cond = ir
        .terminator(before)
        .filter(|t| ir.name(*t) == "scf.condition")?;
    let yld = ir
        .terminator(after)
        .filter(|t| ir.name(*t) == "scf.yield")?;
    Some(Parts {
        before,
        cond,
        after,
        yld,
    })
}

/// The values `scf.condition` forwards (after its condition).
fn forwarded(ir: &Ir, cond: OpId) -> Vec<Value> {
    ir.operands(cond).get(1..).unwrap_or(&[]).to_vec()
}

/// A forwarded value defined outside the loop is the after argument and the result
/// (upstream's `RemoveLoopInvariantValueYielded`); a value forwarded twice is read from
/// its first position (`WhileRemoveDuplicatedResults`); the condition itself, forwarded,
/// is `true` in the after region (`WhileConditionTruth`). The positions left unread go
/// with [`while_unused_results`].
fn while_forwarded(ir: &mut Ir, op: OpId) -> bool {
    let Some(p) = parts(ir, op) else { return false };
    let fwd = forwarded(ir, p.cond);
    let c = ir.operand(p.cond, 0);
    let args = ir.block_args(p.after).to_vec();
    let results = ir.results(op).to_vec();
    if args.len() != fwd.len() || results.len() != fwd.len() {
        return false;
    }
    let mut changed = false;
    let mut truth = None;
    for j in 0..fwd.len() {
        let (a, r) = (args[j], results[j]);
        if !ir.has_uses(a) && !ir.has_uses(r) {
            continue;
        }
        if !ir.defined_inside(fwd[j], op) {
            ir.replace_all_uses(a, fwd[j]);
            ir.replace_all_uses(r, fwd[j]);
            changed = true;
        } else if let Some(k) = fwd[..j].iter().position(|v| *v == fwd[j]) {
            ir.replace_all_uses(a, args[k]);
            ir.replace_all_uses(r, results[k]);
            changed = true;
        } else if fwd[j] == c && ir.has_uses(a) {
            let t = *truth.get_or_insert_with(|| {
                let first = ir.block_ops(p.after).next().unwrap_or(p.yld);
                cst_attr(ir, first, Attribute::bool(true), Type::i1())
            });
            ir.replace_all_uses(a, t);
            changed = true;
        }
    }
    changed
}

/// A position whose result and after argument no one reads is no longer forwarded
/// (upstream's `WhileUnusedResult`).
fn while_unused_results(ir: &mut Ir, op: OpId) -> bool {
    let Some(p) = parts(ir, op) else { return false };
    let fwd = forwarded(ir, p.cond);
    let args = ir.block_args(p.after).to_vec();
    let results = ir.results(op).to_vec();
    if args.len() != fwd.len() || results.len() != fwd.len() {
        return false;
    }
    let keep: Vec<usize> = (0..fwd.len())
        .filter(|&j| ir.has_uses(args[j]) || ir.has_uses(results[j]))
        .collect();
    if keep.len() == fwd.len() {
        return false;
    }
    let mut cond_ops = vec![ir.operand(p.cond, 0)];
    cond_ops.extend(keep.iter().map(|j| fwd[*j]));
    ir.set_operands(p.cond, cond_ops);
    for j in (0..fwd.len()).rev().filter(|j| !keep.contains(j)) {
        ir.erase_block_arg(p.after, j);
    }
    let types: Vec<Type> = keep.iter().map(|j| ir.value_type(results[*j])).collect();
    let operands = ir.operands(op).to_vec();
    let new = rebuild(ir, op, operands, types);
    let new_results = ir.results(new).to_vec();
    for (k, j) in keep.iter().enumerate() {
        ir.replace_all_uses(results[*j], new_results[k]);
    }
    ir.erase_op(op);
    true
}

/// A before argument that every iteration gets back unchanged (the after region yields
/// its initial value, or the after argument it was forwarded to) is its initial value
/// (upstream's `RemoveLoopInvariantArgsFromBeforeBlock`); one no one reads is dropped with
/// its initial and yielded values (`WhileRemoveUnusedArgs`).
fn while_before_args(ir: &mut Ir, op: OpId) -> bool {
    let Some(p) = parts(ir, op) else { return false };
    let inits = ir.operands(op).to_vec();
    let bargs = ir.block_args(p.before).to_vec();
    let ys = ir.operands(p.yld).to_vec();
    let fwd = forwarded(ir, p.cond);
    let aargs = ir.block_args(p.after).to_vec();
    if bargs.len() != inits.len() || ys.len() != inits.len() || aargs.len() != fwd.len() {
        return false;
    }
    let mut changed = false;
    for i in 0..inits.len() {
        if !ir.has_uses(bargs[i]) {
            continue;
        }
        let invariant = ys[i] == inits[i]
            || aargs
                .iter()
                .position(|a| *a == ys[i])
                .is_some_and(|j| fwd[j] == bargs[i]);
        if invariant {
            ir.replace_all_uses(bargs[i], inits[i]);
            changed = true;
        }
    }
    let keep: Vec<usize> = (0..inits.len())
        .filter(|i| ir.has_uses(bargs[*i]))
        .collect();
    if keep.len() == inits.len() {
        return changed;
    }
    for i in (0..inits.len()).rev().filter(|i| !keep.contains(i)) {
        ir.erase_block_arg(p.before, i);
    }
    ir.set_operands(op, keep.iter().map(|i| inits[*i]).collect());
    ir.set_operands(p.yld, keep.iter().map(|i| ys[*i]).collect());
    true
}

/// The patterns above to a fixed point in one application (each makes work for the
/// others; the greedy driver's sweeps are bounded), the one that replaces the op last.
fn while_simplify(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let mut changed = false;
    for _ in 0..64 {
        let step = while_forwarded(ir, op) | while_before_args(ir, op);
        if !step {
            break;
        }
        changed = true;
    }
    while_unused_results(ir, op) || changed
}

pub const CANONICALIZE_WHILE: &[CanonFn] = &[while_simplify];
