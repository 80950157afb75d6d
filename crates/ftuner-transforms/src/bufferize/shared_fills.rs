//! Before the analysis: a `linalg.fill` that several writers start from is filled once per
//! writer.
//!
//! CSE merges equal fills: MobileNetV2's depthwise convs of one shape (after
//! `peel-padded-windows{planes=false}`, each writes its interior into an `extract_slice` of a zero-filled
//! tensor and inserts it back) all start from one `linalg.fill`. Only the last writer can
//! then write in place; every other one copied the slice out of the filled buffer, computed
//! into the copy, filled a fresh buffer and copied its result back into it — two copies of
//! a whole activation per layer. A fill is cheaper than a copy (it writes, reads nothing),
//! so each writer gets its own fill, cloned just before it, and writes in place.
//!
//! A writer is a use of the fill's result as a destination (a linalg `outs`,
//! `insert_slice`'s destination, ...), or MLIR's matching pair: an `extract_slice` of the
//! result written in place and inserted back at the same offsets (one writer: both take the
//! clone). Reads keep the original, unless they all come before the last writer, which
//! then keeps it (without reads, the first writer does). Only uses in the fill's own block are considered, so a
//! fill outside a loop is never moved into it (where it would run every iteration).

use super::analysis::{dests, matching_insert, only_overwrites};
use ftuner_dialects::ops;
use ftuner_ir::{Context, Ir, OpId};
use rustc_hash::FxHashMap;

/// Give every writer but one of each shared `linalg.fill` under `func` its own fill.
/// Returns how many fills were cloned.
pub(super) fn split_shared_fills(ctx: &Context, ir: &mut Ir, func: OpId) -> u64 {
    let fills: Vec<OpId> = ir
        .collect_pre(func)
        .into_iter()
        .filter(|o| {
            ir.name(*o) == ops::linalg::FillOp::NAME
                && ir.results(*o).len() == 1
                && ir.value_type(ir.result(*o, 0)).is_tensor()
        })
        .collect();
    for f in &fills {
        split_shared_slices(ir, *f);
    }
    let order: FxHashMap<OpId, usize> = ir
        .collect_pre(func)
        .into_iter()
        .enumerate()
        .map(|(i, o)| (o, i))
        .collect();
    let mut cloned = 0;
    for f in fills {
        let (writers, last_read) = writer_groups(ctx, ir, f, &order);
        let first_op = |g: &[(OpId, usize)]| {
            g.iter()
                .map(|(o, _)| *o)
                .min_by_key(|o| order.get(o).copied().unwrap_or(usize::MAX))
        };
        // The writer that keeps the original fill: the first when nothing reads it, the
        // last when every read comes before it; else none (the reads keep it).
        let keeper = match last_read {
            None => Some(0),
            Some(p) => writers
                .last()
                .and_then(|g| first_op(g))
                .filter(|o| order.get(o).is_some_and(|w| p < *w))
                .map(|_| writers.len() - 1),
        };
        for (i, group) in writers.iter().enumerate() {
            if Some(i) == keeper {
                continue;
            }
            let Some(first) = first_op(group) else {
                continue;
            };
            let clone = ir.clone_op(f, &mut FxHashMap::default());
            ir.insert_before(first, clone);
            let v = ir.result(clone, 0);
            for (user, idx) in group {
                ir.set_operand(*user, *idx, v);
            }
            cloned += 1;
        }
    }
    cloned
}

/// CSE also merges equal `extract_slice`s of the fill: one slice is then the destination
/// of several writers. Each use of such a slice in its block but the first gets its own
/// slice, just before it, so that each writer pairs with its own `insert_slice`.
fn split_shared_slices(ir: &mut Ir, f: OpId) {
    let r = ir.result(f, 0);
    let slices: Vec<OpId> = ir
        .uses(r)
        .iter()
        .filter(|u| u.operand == 0 && ir.name(u.op) == ops::tensor::ExtractSliceOp::NAME)
        .map(|u| u.op)
        .collect();
    for e in slices {
        let block = ir.parent_block(e);
        let v = ir.result(e, 0);
        let uses: Vec<(OpId, usize)> = ir
            .uses(v)
            .iter()
            .map(|u| (u.op, u.operand as usize))
            .filter(|(o, _)| ir.parent_block(*o) == block)
            .collect();
        for (user, idx) in uses.into_iter().skip(1) {
            let c = ir.clone_op(e, &mut FxHashMap::default());
            ir.insert_before(user, c);
            let cv = ir.result(c, 0);
            ir.set_operand(user, idx, cv);
        }
    }
}

/// The uses `(op, operand)` of `f`'s result that write into it, one group per writer in
/// program order, and the position of the last use that reads it (`usize::MAX` for a use
/// in another block; a slice that is not a writer's reads where its own users are).
fn writer_groups(
    ctx: &Context,
    ir: &Ir,
    f: OpId,
    order: &FxHashMap<OpId, usize>,
) -> (Vec<Vec<(OpId, usize)>>, Option<usize>) {
    let r = ir.result(f, 0);
    let block = ir.parent_block(f);
    let pos = |o: OpId| order.get(&o).copied().unwrap_or(usize::MAX);
    let mut uses: Vec<(OpId, usize)> = ir
        .uses(r)
        .iter()
        .map(|u| (u.op, u.operand as usize))
        .collect();
    uses.sort_by_key(|(o, i)| (pos(*o), *i));
    let mut taken = vec![false; uses.len()];
    let mut groups = vec![];
    let mut last_read: Option<usize> = None;
    let mut read_at = |p: usize| last_read = Some(last_read.map_or(p, |q| q.max(p)));
    for i in 0..uses.len() {
        if taken[i] {
            continue;
        }
        let (u, idx) = uses[i];
        taken[i] = true;
        if ir.parent_block(u) != block {
            read_at(usize::MAX);
            continue;
        }
        if ir.name(u) == ops::tensor::ExtractSliceOp::NAME && idx == 0 {
            let slice = ir.result(u, 0);
            let pair = (i + 1..uses.len()).find(|&j| {
                let (v, vidx) = uses[j];
                !taken[j]
                    && vidx == 1
                    && ir.parent_block(v) == block
                    && matching_insert(ctx, ir, v, r, &[slice])
            });
            match pair {
                Some(j) => {
                    taken[j] = true;
                    groups.push(vec![(u, idx), uses[j]]);
                }
                None => {
                    let users = ir.uses(slice).iter().map(|s| {
                        if ir.parent_block(s.op) == block {
                            pos(s.op)
                        } else {
                            usize::MAX
                        }
                    });
                    read_at(users.max().unwrap_or(pos(u)).max(pos(u)));
                }
            }
        } else if only_overwrites(ctx, ir, u, idx as u32) {
            // Needs no contents: an out-of-place write allocates without copying.
        } else if dests(ctx, ir, u).iter().any(|(k, _)| *k == idx) {
            groups.push(vec![(u, idx)]);
        } else {
            read_at(pos(u));
        }
    }
    (groups, last_read)
}
