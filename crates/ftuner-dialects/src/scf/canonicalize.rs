//! `scf` canonicalization: upstream's `scf.if` and `scf.for` patterns, each named after
//! the upstream pattern it follows (`mlir/lib/Dialect/SCF/IR/SCF.cpp`).

use crate::arith_canonicalize::{build, cst_attr};
use crate::cf::constant_of;
use crate::ops;
use ftuner_ir::dialect::CanonFn;
use ftuner_ir::Context;
use ftuner_ir::{AttrKind, Attribute, BlockId, Ir, OpId, Type, Value};

/// The integer value of a constant `v` (`true` is 1).
pub(super) fn const_int(ctx: &Context, ir: &Ir, v: Value) -> Option<i128> {
    match constant_of(ctx, ir, v)?.kind() {
        AttrKind::Integer { value, .. } => Some(*value),
        AttrKind::Bool(b) => Some(*b as i128),
        _ => None,
    }
}

/// The entry block of region `r` of `op`, if the region has one.
pub(super) fn block(ir: &Ir, op: OpId, r: usize) -> Option<BlockId> {
    ir.region_entry(*ir.regions_of(op).get(r)?)
}

/// The trip count of a loop dimension (upstream's `constantTripCount`): none when its
/// bounds are one value, else from constant bounds and a positive constant step (i128:
/// the i64 arithmetic overflows near the limits).
pub(super) fn trip_count(same_bounds: bool, [lb, ub, step]: [Option<i128>; 3]) -> Option<i128> {
    if same_bounds {
        return Some(0);
    }
    let (a, b, s) = (lb?, ub?, step?);
    (s > 0).then(|| if b <= a { 0 } else { (b - a + s - 1) / s })
}

/// The trip count of `scf.for` `op` from its constant bounds and step; none when one is
/// not constant, the step is not positive, or the loop compares unsigned.
pub fn for_trip_count(ctx: &Context, ir: &Ir, op: OpId) -> Option<i128> {
    if ir.attr(op, "unsignedCmp").is_some() {
        return None;
    }
    let o = ir.operands(op);
    trip_count(
        o[0] == o[1],
        [o[0], o[1], o[2]].map(|v| const_int(ctx, ir, v)),
    )
}

/// What the terminator of `b` yields.
fn yields(ir: &Ir, b: BlockId) -> Vec<Value> {
    ir.terminator(b)
        .map(|t| ir.operands(t).to_vec())
        .unwrap_or_default()
}

/// Whether `b` holds nothing but its terminator.
fn only_terminator(ir: &Ir, b: BlockId) -> bool {
    ir.block_ops(b).nth(1).is_none()
}

/// `x` when `v` is `arith.xori x, true` (either order) on `i1`.
fn negation_of(ctx: &Context, ir: &Ir, v: Value) -> Option<Value> {
    let d = ir
        .defining_op(v)
        .filter(|d| ir.name(*d) == ops::arith::XoriOp::NAME)?;
    if ir.value_type(v) != Type::i1() {
        return None;
    }
    let (a, b) = (ir.operand(d, 0), ir.operand(d, 1));
    match (const_int(ctx, ir, a), const_int(ctx, ir, b)) {
        (_, Some(c)) if c != 0 => Some(a),
        (Some(c), _) if c != 0 => Some(b),
        _ => None,
    }
}

/// Move block `b`'s ops (its arguments replaced by `args`) before `op`, replace `op`'s
/// results with what `b`'s terminator yields and erase both.
fn inline_and_replace(ir: &mut Ir, op: OpId, b: BlockId, args: &[Value]) -> bool {
    let Some(t) = ir.inline_block_before(b, op, args) else {
        return false;
    };
    let vals = ir.operands(t).to_vec();
    ir.erase_op(t);
    ir.replace_op(op, &vals);
    true
}

/// The index of the region of `outer` that holds `op` (at any depth).
fn region_within(ir: &Ir, outer: OpId, mut op: OpId) -> Option<usize> {
    loop {
        let p = ir.parent_op(op)?;
        if p == outer {
            let b = ir.op(op).parent?;
            let r = ir.block(b).parent?;
            return ir.regions_of(outer).iter().position(|x| *x == r);
        }
        op = p;
    }
}

pub(super) use crate::util::rebuild_op as rebuild;

/// Keep only the yielded values at `keep` in the terminator of `b`.
fn trim_yield(ir: &mut Ir, b: Option<BlockId>, keep: &[usize]) {
    if let Some(t) = b.and_then(|b| ir.terminator(b)) {
        let ys = ir.operands(t).to_vec();
        ir.set_operands(t, keep.iter().map(|i| ys[*i]).collect());
    }
}

// ----- scf.if --------------------------------------------------------------------------

/// A constant condition runs one region in place (upstream's `RemoveStaticCondition`).
fn if_static_condition(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(c) = const_int(ctx, ir, ir.operand(op, 0)) else {
        return false;
    };
    match block(ir, op, if c != 0 { 0 } else { 1 }) {
        Some(b) => inline_and_replace(ir, op, b, &[]),
        None if ir.results(op).is_empty() => {
            ir.erase_op(op);
            true
        }
        None => false,
    }
}

/// Results nobody uses are dropped with what their regions yield for them (upstream's
/// `RemoveUnusedResults`).
fn if_unused_results(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let res = ir.results(op).to_vec();
    let keep: Vec<usize> = (0..res.len()).filter(|i| ir.has_uses(res[*i])).collect();
    if keep.len() == res.len() {
        return false;
    }
    let types = keep.iter().map(|i| ir.value_type(res[*i])).collect();
    let new = rebuild(ir, op, vec![ir.operand(op, 0)], types);
    for r in 0..2 {
        trim_yield(ir, block(ir, new, r), &keep);
    }
    for (k, i) in keep.iter().enumerate() {
        let v = ir.result(new, k);
        ir.replace_all_uses(res[*i], v);
    }
    ir.erase_op(op);
    true
}

/// A result both regions yield from outside the `if` is that value (the same on both
/// sides) or an `arith.select` of the two (scalars only), and `true` / `false` yielded
/// the other way round is the condition or its negation (upstream's
/// `ConvertTrivialIfToSelect`, `ReplaceIfYieldWithConditionOrValue`).
fn if_to_select(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (Some(tb), Some(eb)) = (block(ir, op, 0), block(ir, op, 1)) else {
        return false;
    };
    let (ty, ey) = (yields(ir, tb), yields(ir, eb));
    let cond = ir.operand(op, 0);
    let mut changed = false;
    for i in 0..ir.results(op).len() {
        let r = ir.result(op, i);
        let (Some(&t), Some(&e)) = (ty.get(i), ey.get(i)) else {
            return changed;
        };
        if !ir.has_uses(r) || ir.defined_inside(t, op) || ir.defined_inside(e, op) {
            continue;
        }
        let rt = ir.value_type(r);
        let v = if t == e {
            t
        } else if rt.is_int_or_index() || rt.is_float() {
            build(ir, op, ops::arith::SelectOp::NAME, &[cond, t, e], rt, &[])
        } else {
            continue;
        };
        ir.replace_all_uses(r, v);
        changed = true;
    }
    changed
}

/// An `else` of nothing but its terminator, on an `if` without results, goes (upstream's
/// `RemoveEmptyElseBranch`).
fn if_empty_else(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    match block(ir, op, 1) {
        Some(eb) if ir.results(op).is_empty() && only_terminator(ir, eb) => {
            ir.erase_block(eb);
            true
        }
        _ => false,
    }
}

/// Swap the regions of `op` (an `if` with both).
fn swap_regions(ir: &mut Ir, op: OpId) {
    let (r0, r1) = (ir.regions_of(op)[0], ir.regions_of(op)[1]);
    let tmp = ir.new_region(None);
    ir.take_body(tmp, r0);
    ir.take_body(r0, r1);
    ir.take_body(r1, tmp);
}

/// `if not(c) {a} else {b}` is `if c {b} else {a}` (upstream's `IfConditionSwap`... in
/// `RemoveStaticCondition`'s neighbourhood: `SwapNegatedCondition`).
fn if_negated_condition(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    if block(ir, op, 1).is_none() {
        return false;
    }
    let Some(x) = negation_of(ctx, ir, ir.operand(op, 0)) else {
        return false;
    };
    ir.set_operand(op, 0, x);
    swap_regions(ir, op);
    true
}

/// Uses of the condition inside the regions are `true` in `then`, `false` in `else`
/// (upstream's `ConditionPropagation`).
fn if_condition_propagation(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let cond = ir.operand(op, 0);
    if const_int(ctx, ir, cond).is_some() {
        return false;
    }
    let inside: Vec<(OpId, usize, usize)> = ir
        .uses(cond)
        .iter()
        .filter(|u| u.op != op)
        .filter_map(|u| Some((u.op, u.operand as usize, region_within(ir, op, u.op)?)))
        .collect();
    if inside.is_empty() {
        return false;
    }
    let mut known = [None, None];
    for (user, i, r) in inside {
        let v = match known[r] {
            Some(v) => v,
            None => {
                let Some(first) = block(ir, op, r).and_then(|b| ir.block_ops(b).next()) else {
                    continue;
                };
                let v = cst_attr(ir, first, Attribute::bool(r == 0), Type::i1());
                known[r] = Some(v);
                v
            }
        };
        ir.set_operand(user, i, v);
    }
    true
}

/// `if a { if b { ... } }`, neither with results nor `else`, is `if (a and b) { ... }`
/// (upstream's `CombineNestedIfs`, the case without results).
fn if_nested(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    if !ir.results(op).is_empty() || block(ir, op, 1).is_some() {
        return false;
    }
    let Some(tb) = block(ir, op, 0) else {
        return false;
    };
    let body = ir.block_ops_vec(tb);
    let [inner, outer_yield] = body[..] else {
        return false;
    };
    if ir.name(inner) != ops::scf::IfOp::NAME
        || !ir.results(inner).is_empty()
        || block(ir, inner, 1).is_some()
    {
        return false;
    }
    let Some(ib) = block(ir, inner, 0) else {
        return false;
    };
    let (a, b) = (ir.operand(op, 0), ir.operand(inner, 0));
    let c = build(ir, op, ops::arith::AndiOp::NAME, &[a, b], Type::i1(), &[]);
    ir.set_operand(op, 0, c);
    ir.move_block_ops(ib, tb, Some(inner));
    ir.erase_op(inner);
    ir.erase_op(outer_yield);
    true
}

/// Two adjacent `if`s on the same condition (or its negation) are one, the second's
/// uses of the first's results replaced by what the first yields on that side
/// (upstream's `CombineIfs`).
fn if_combine_previous(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(prev) = ir
        .op(op)
        .prev
        .filter(|p| ir.name(*p) == ops::scf::IfOp::NAME)
    else {
        return false;
    };
    let (pc, nc) = (ir.operand(prev, 0), ir.operand(op, 0));
    let negated = if pc == nc {
        false
    } else if negation_of(ctx, ir, nc) == Some(pc) || negation_of(ctx, ir, pc) == Some(nc) {
        true
    } else {
        return false;
    };
    // The second's uses of the first's results, by the side they sit on.
    let np = ir.results(prev).len();
    for i in 0..np {
        let r = ir.result(prev, i);
        let inner: Vec<(OpId, usize, usize)> = ir
            .uses(r)
            .iter()
            .filter_map(|u| Some((u.op, u.operand as usize, region_within(ir, op, u.op)?)))
            .collect();
        for (user, k, side) in inner {
            let Some(pb) = block(ir, prev, side ^ negated as usize) else {
                return false;
            };
            let v = yields(ir, pb)[i];
            ir.set_operand(user, k, v);
        }
    }
    let mut types: Vec<Type> = ir.results(prev).iter().map(|r| ir.value_type(*r)).collect();
    types.extend(ir.results(op).iter().map(|r| ir.value_type(*r)));
    let new = rebuild(ir, prev, vec![pc], types);
    for side in 0..2 {
        let from = block(ir, op, side ^ negated as usize);
        let Some(from) = from else { continue };
        match block(ir, new, side) {
            Some(to) => {
                let (tt, ft) = (ir.terminator(to), ir.terminator(from));
                let (Some(tt), Some(ft)) = (tt, ft) else {
                    continue;
                };
                let mut ys = ir.operands(tt).to_vec();
                ys.extend(ir.operands(ft).iter().copied());
                ir.erase_op(ft);
                ir.move_block_ops(from, to, Some(tt));
                ir.set_operands(tt, ys);
            }
            None => {
                let r = ir.regions_of(op)[side ^ negated as usize];
                let to = ir.regions_of(new)[side];
                ir.take_body(to, r);
            }
        }
    }
    let old: Vec<Value> = ir
        .results(prev)
        .iter()
        .chain(ir.results(op))
        .copied()
        .collect();
    for (k, r) in old.into_iter().enumerate() {
        let v = ir.result(new, k);
        ir.replace_all_uses(r, v);
    }
    ir.erase_op(prev);
    ir.erase_op(op);
    true
}

pub const CANONICALIZE_IF: &[CanonFn] = &[
    if_static_condition,
    if_to_select,
    if_unused_results,
    if_empty_else,
    if_negated_condition,
    if_condition_propagation,
    if_nested,
    if_combine_previous,
];

// ----- scf.for -------------------------------------------------------------------------

/// Loops of no iteration are their inits, of one iteration their body, and a body that
/// only yields values from outside, run at least once, is those values (upstream's
/// `SimplifyTrivialLoops`).
fn for_trivial(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let o = ir.operands(op).to_vec();
    let (lb, ub, step, inits) = (o[0], o[1], o[2], &o[3..]);
    if lb == ub {
        ir.replace_op(op, inits);
        return true;
    }
    if ir.attr(op, "unsignedCmp").is_some() {
        return false;
    }
    let (Some(a), Some(b), Some(s)) = (
        const_int(ctx, ir, lb),
        const_int(ctx, ir, ub),
        const_int(ctx, ir, step),
    ) else {
        return false;
    };
    if a >= b {
        ir.replace_op(op, inits);
        return true;
    }
    let Some(body) = block(ir, op, 0) else {
        return false;
    };
    if s <= 0 {
        return false;
    }
    if b - a <= s && !holds_parallel_loop(ir, op) {
        let mut args = vec![lb];
        args.extend_from_slice(inits);
        return inline_and_replace(ir, op, body, &args);
    }
    let ys = yields(ir, body);
    if only_terminator(ir, body) && ys.iter().all(|y| !ir.defined_inside(*y, op)) {
        ir.replace_op(op, &ys);
        return true;
    }
    false
}

/// Whether a loop marked [`crate::scf::PARALLEL_ATTR`] is nested in `op`. Such a nest
/// keeps its single-iteration loops: inlining the channel loop of the dilated
/// convolution's lowered nest (0 to 64 step 64) around its parallel pixel loop made the
/// compiled kernel 6% slower (`ftuner-run ../shared/inputs/dilated_conv.mlir --threads 1
/// --bench 40`: 1.49 -> 1.58 ms median); the cause is not known yet.
fn holds_parallel_loop(ir: &Ir, op: OpId) -> bool {
    let mut found = false;
    ir.walk_pre(op, &mut |o| {
        found |= o != op && ir.discardable_attr(o, crate::scf::PARALLEL_ATTR).is_some();
    });
    found
}

/// An iteration argument that the body yields back unchanged, or that is yielded its
/// own init, is its init; one neither the body nor anyone after the loop reads is
/// dropped (upstream's `ForOpIterArgsFolder`).
fn for_iter_args(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(body) = block(ir, op, 0) else {
        return false;
    };
    let Some(term) = ir.terminator(body) else {
        return false;
    };
    let o = ir.operands(op).to_vec();
    let (args, res) = (ir.block_args(body)[1..].to_vec(), ir.results(op).to_vec());
    if ir.operands(term).len() != args.len() || res.len() != args.len() {
        return false;
    }
    let mut keep = vec![];
    for i in 0..args.len() {
        // The yields as they are now: replacing an argument by its init also replaces it
        // where another position yields it (`scf.yield %a3, ..., %a3`: the fuzzer's case,
        // where the stale list yielded an erased argument).
        let y = ir.operands(term)[i];
        let (a, init, r) = (args[i], o[3 + i], res[i]);
        if y == a || y == init {
            ir.replace_all_uses(a, init);
            ir.replace_all_uses(r, init);
            continue;
        }
        let read = ir
            .uses(a)
            .iter()
            .any(|u| !(u.op == term && u.operand as usize == i));
        if read || ir.has_uses(r) {
            keep.push(i);
        }
    }
    if keep.len() == args.len() {
        return false;
    }
    let ys = ir.operands(term).to_vec();
    ir.set_operands(term, keep.iter().map(|i| ys[*i]).collect());
    let mut operands = o[..3].to_vec();
    operands.extend(keep.iter().map(|i| o[3 + i]));
    let types = keep.iter().map(|i| ir.value_type(res[*i])).collect();
    let new = rebuild(ir, op, operands, types);
    for i in (0..args.len()).rev() {
        if !keep.contains(&i) {
            ir.erase_block_arg(body, 1 + i);
        }
    }
    for (k, i) in keep.iter().enumerate() {
        let v = ir.result(new, k);
        ir.replace_all_uses(res[*i], v);
    }
    ir.erase_op(op);
    true
}

pub const CANONICALIZE_FOR: &[CanonFn] = &[for_trivial, for_iter_args];
