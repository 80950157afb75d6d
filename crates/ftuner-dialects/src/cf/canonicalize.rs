//! `cf` branch canonicalization: upstream's `cf.br` / `cf.cond_br` patterns
//! (`mlir/lib/Dialect/ControlFlow/IR/ControlFlowOps.cpp`). Unreachable blocks are erased by
//! the greedy driver's region simplification (`ftuner_transforms::greedy`).

use super::constant_of;
use ftuner_ir::Context;
use ftuner_ir::{intern_name, AttrKind, BlockId, Ir, OpId, OpSpec, Value};

/// How many branches in `b`'s region name `b` as a successor (each edge counts).
fn predecessors(ir: &Ir, b: BlockId) -> usize {
    let Some(r) = ir.block(b).parent else {
        return usize::MAX;
    };
    ir.region(r)
        .blocks
        .iter()
        .filter_map(|x| ir.terminator(*x))
        .map(|t| ir.op(t).successors.iter().filter(|s| **s == b).count())
        .sum()
}

/// Replace the terminator `op` by `cf.br ^dest(args)`.
fn branch_to(ir: &mut Ir, op: OpId, dest: BlockId, args: Vec<Value>) {
    let mut spec = OpSpec::new(intern_name("cf.br"), ir.loc(op)).operands(args);
    spec.successors = vec![dest];
    let br = ir.create_op(spec);
    ir.insert_before(op, br);
    ir.erase_op(op);
}

/// The operands `cond_br` passes to its successor `k` (0: true, 1: false).
fn dest_operands(ir: &Ir, op: OpId, k: usize) -> Option<Vec<Value>> {
    let segs = ir.attr(op, "operandSegmentSizes")?.as_dense_i64s()?;
    let (nt, nf) = (
        usize::try_from(*segs.get(1)?).ok()?,
        usize::try_from(*segs.get(2)?).ok()?,
    );
    let ops = ir.operands(op);
    let (from, n) = if k == 0 { (1, nt) } else { (1 + nt, nf) };
    ops.get(from..from + n).map(|s| s.to_vec())
}

/// A constant condition takes one branch; two identical successors with the same
/// operands are one (upstream's `SimplifyConstCondBranchPred`,
/// `SimplifyCondBranchIdenticalSuccessors`).
fn cond_br_simple(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let succ = ir.op(op).successors.clone();
    let [t, f] = succ[..] else {
        return false;
    };
    let (Some(ta), Some(fa)) = (dest_operands(ir, op, 0), dest_operands(ir, op, 1)) else {
        return false;
    };
    let c = match constant_of(ctx, ir, ir.operand(op, 0)).map(|a| a.kind()) {
        Some(AttrKind::Bool(b)) => Some(*b),
        Some(AttrKind::Integer { value, .. }) => Some(*value != 0),
        _ => None,
    };
    match c {
        Some(true) => branch_to(ir, op, t, ta),
        Some(false) => branch_to(ir, op, f, fa),
        None if t == f && ta == fa => branch_to(ir, op, t, ta),
        None => return false,
    }
    true
}

/// A `cf.br` to a block only it reaches merges that block into its own (upstream's
/// `SimplifyBrToBlockWithSinglePred`).
fn br_single_predecessor(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(&dest) = ir.op(op).successors.first() else {
        return false;
    };
    let Some(here) = ir.op(op).parent else {
        return false;
    };
    let entry = ir.block(dest).parent.and_then(|r| ir.region_entry(r));
    if dest == here || entry == Some(dest) || predecessors(ir, dest) != 1 {
        return false;
    }
    let args = ir.operands(op).to_vec();
    if args.len() != ir.block_args(dest).len() {
        return false;
    }
    ir.inline_block_before(dest, op, &args);
    ir.erase_op(op);
    ir.erase_block(dest);
    true
}

pub const CANONICALIZE_BR: &[ftuner_ir::dialect::CanonFn] = &[br_single_predecessor];
pub const CANONICALIZE_COND_BR: &[ftuner_ir::dialect::CanonFn] = &[cond_br_simple];
