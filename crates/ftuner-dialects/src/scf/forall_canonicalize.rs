//! `scf.forall` canonicalization, each pattern named after the upstream one it follows
//! (`mlir/lib/Dialect/SCF/IR/SCF.cpp`). `tensor.dim` of a forall result is folded in
//! `tensor::fold_dim`.

use super::canonicalize::{block, const_int, rebuild, trip_count};
use super::forall::Forall;
use crate::arith_canonicalize::cst_attr;
use crate::cf::constant_of;
use crate::tensor::cast_folds::loosening_cast_of;
use crate::tensor::slices::{cast_before, Ofr};
use ftuner_ir::dialect::CanonFn;
use ftuner_ir::Context;
use ftuner_ir::{intern_name, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value, DYNAMIC};

/// The ops of the `scf.forall.in_parallel` that ends `b`.
fn combining_ops(ir: &Ir, b: BlockId) -> Vec<OpId> {
    ir.terminator(b)
        .filter(|t| ir.name(*t) == "scf.forall.in_parallel")
        .and_then(|t| ir.regions_of(t).first().copied())
        .and_then(|r| ir.region_entry(r))
        .map(|tb| ir.block_ops(tb).collect())
        .unwrap_or_default()
}

fn static_of(ctx: &Context, ir: &Ir, x: Ofr) -> Option<i128> {
    match x {
        Ofr::S(s) => Some(s.into()),
        Ofr::V(v) => const_int(ctx, ir, v),
    }
}

/// Constant bounds become static entries (upstream's `ForallOpControlOperandsFolder`).
fn forall_control_operands(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(mut f) = Forall::read(ir, op) else {
        return false;
    };
    let mut changed = false;
    for (k, l) in f.bounds.iter_mut().enumerate() {
        for x in l.iter_mut() {
            if let Ofr::V(v) = *x {
                if let Some(c) = constant_of(ctx, ir, v).and_then(|a| a.as_i64()) {
                    // -2^63 is the static lists' mark for a dynamic entry.
                    if c != DYNAMIC && (k != 2 || c > 0) {
                        *x = Ofr::S(c);
                        changed = true;
                    }
                }
            }
        }
    }
    if changed {
        f.write(ir, op);
    }
    changed
}

/// The value of a bound entry, as an SSA value (an `arith.constant` before `at` if static).
fn value_of(ir: &mut Ir, at: OpId, x: Ofr) -> Value {
    match x {
        Ofr::V(v) => v,
        Ofr::S(s) => cst_attr(ir, at, Attribute::index(s), Type::index()),
    }
}

/// A dimension of no iterations makes the loop its outputs; dimensions of one iteration
/// are dropped (the variable is the lower bound; a loop mapped to processing units keeps
/// the dimension); with none left, the body runs in place, each parallel insert an `insert_slice`
/// (upstream's `ForallOpSingleOrZeroIterationDimsFolder` and `ForallOp::promote`).
fn forall_trivial_dims(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (Some(f), Some(b)) = (Forall::read(ir, op), block(ir, op, 0)) else {
        return false;
    };
    let mapped = ir
        .attr(op, "mapping")
        .and_then(|m| m.as_array())
        .is_some_and(|m| !m.is_empty());
    let rank = f.rank();
    let trips: Vec<Option<i128>> = (0..rank)
        .map(|d| {
            let [lb, ub, st] = [0, 1, 2].map(|k| f.bounds[k][d]);
            trip_count(lb == ub, [lb, ub, st].map(|x| static_of(ctx, ir, x)))
        })
        .collect();
    if trips.contains(&Some(0)) {
        ir.replace_op(op, &f.outputs);
        return true;
    }
    let args = ir.block_args(b).to_vec();
    if mapped {
        // A mapped loop keeps its dimensions; a variable of one iteration is its lower
        // bound (upstream's `ForallOpReplaceConstantInductionVar`).
        let mut changed = false;
        let single: Vec<usize> = (0..rank)
            .filter(|d| trips[*d] == Some(1) && ir.has_uses(args[*d]))
            .collect();
        for d in single {
            let v = value_of(ir, op, f.bounds[0][d]);
            ir.replace_all_uses(args[d], v);
            changed = true;
        }
        return changed;
    }
    let keep: Vec<usize> = (0..rank).filter(|d| trips[*d] != Some(1)).collect();
    if keep.len() == rank && rank > 0 {
        return false;
    }
    if keep.is_empty() {
        return promote(ir, op, b, &f);
    }
    for d in (0..rank).rev().filter(|d| !keep.contains(d)) {
        if ir.has_uses(args[d]) {
            let v = value_of(ir, op, f.bounds[0][d]);
            ir.replace_all_uses(args[d], v);
        }
        ir.erase_block_arg(b, d);
    }
    let mut g = f.clone();
    for l in g.bounds.iter_mut() {
        *l = keep.iter().map(|d| l[*d]).collect();
    }
    g.write(ir, op);
    true
}

/// Run the body of a loop without dimensions once, before it.
fn promote(ir: &mut Ir, op: OpId, b: BlockId, f: &Forall) -> bool {
    let rank = f.rank();
    let mut vals: Vec<Value> = (0..rank)
        .map(|d| value_of(ir, op, f.bounds[0][d]))
        .collect();
    vals.extend(&f.outputs);
    let inserts = combining_ops(ir, b);
    let Some(term) = ir.inline_block_before(b, op, &vals) else {
        return false;
    };
    let mut current = f.outputs.clone();
    for pis in inserts {
        let dest = ir.operand(pis, 1);
        // After inlining, the insert's dest is an output (the block argument was replaced).
        let Some(k) = f.outputs.iter().position(|o| *o == dest) else {
            return false;
        };
        let mut operands = ir.operands(pis).to_vec();
        operands[1] = current[k];
        let ins = ir.create_op(
            OpSpec::new(intern_name("tensor.insert_slice"), ir.loc(pis))
                .operands(operands)
                .results([ir.value_type(current[k])]),
        );
        ir.op_mut(ins).props = ir.op(pis).props;
        ir.insert_before(op, ins);
        current[k] = ir.result(ins, 0);
    }
    ir.erase_op(term);
    ir.replace_op(op, &current);
    true
}

/// A result no one reads: its parallel inserts go, other reads of its block argument read
/// the output, and the output leaves the loop; a result whose block argument is never used
/// is its output (upstream's `ForallOpIterArgsFolder`).
fn forall_unused_results(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (Some(f), Some(b)) = (Forall::read(ir, op), block(ir, op, 0)) else {
        return false;
    };
    let rank = f.rank();
    let args = ir.block_args(b).to_vec();
    let results = ir.results(op).to_vec();
    let drop: Vec<usize> = (0..f.outputs.len())
        .filter(|&i| !ir.has_uses(results[i]) || !ir.has_uses(args[rank + i]))
        .collect();
    if drop.is_empty() {
        return false;
    }
    let inserts = combining_ops(ir, b);
    for &i in &drop {
        let a = args[rank + i];
        for &pis in &inserts {
            if ir.is_alive(pis) && ir.operand(pis, 1) == a {
                ir.erase_op(pis);
            }
        }
        ir.replace_all_uses(a, f.outputs[i]);
        ir.replace_all_uses(results[i], f.outputs[i]);
    }
    for &i in drop.iter().rev() {
        ir.erase_block_arg(b, rank + i);
    }
    let keep: Vec<usize> = (0..f.outputs.len()).filter(|i| !drop.contains(i)).collect();
    let types: Vec<Type> = keep.iter().map(|i| ir.value_type(results[*i])).collect();
    let operands = ir.operands(op).to_vec();
    let new = rebuild(ir, op, operands, types);
    let mut g = f.clone();
    g.outputs = keep.iter().map(|i| f.outputs[*i]).collect();
    g.write(ir, new);
    let new_results = ir.results(new).to_vec();
    for (k, i) in keep.iter().enumerate() {
        ir.replace_all_uses(results[*i], new_results[k]);
    }
    ir.erase_op(op);
    true
}

/// An output that is a `tensor.cast` forgetting static sizes is replaced by the cast's
/// source: the block argument and result take its type, with casts back for the body's
/// other readers and the loop's users (upstream's `FoldTensorCastOfOutputIntoForallOp`).
fn forall_cast_outputs(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (Some(mut f), Some(b)) = (Forall::read(ir, op), block(ir, op, 0)) else {
        return false;
    };
    let rank = f.rank();
    let args = ir.block_args(b).to_vec();
    let results = ir.results(op).to_vec();
    let inserts = combining_ops(ir, b);
    let mut changed = false;
    for i in 0..f.outputs.len() {
        let Some(src) = loosening_cast_of(ir, f.outputs[i]) else {
            continue;
        };
        let (old, new) = (ir.value_type(f.outputs[i]), ir.value_type(src));
        let a = args[rank + i];
        // Readers other than the parallel inserts keep the old type through a cast.
        let Some(first) = ir.block_ops(b).next() else {
            return false;
        };
        let readers: Vec<_> = ir
            .uses(a)
            .iter()
            .filter(|u| !(inserts.contains(&u.op) && u.operand == 1))
            .copied()
            .collect();
        ir.set_value_type(a, new);
        if !readers.is_empty() {
            let c = cast_before(ir, first, a, old);
            for u in readers {
                ir.set_operand(u.op, u.operand as usize, c);
            }
        }
        let users: Vec<_> = ir.uses(results[i]).to_vec();
        ir.set_value_type(results[i], new);
        if !users.is_empty() {
            let c = ir.create_op(
                OpSpec::new(intern_name("tensor.cast"), ir.loc(op))
                    .operands([results[i]])
                    .results([old]),
            );
            ir.insert_after(op, c);
            let c = ir.result(c, 0);
            for u in users {
                ir.set_operand(u.op, u.operand as usize, c);
            }
        }
        f.outputs[i] = src;
        changed = true;
    }
    if changed {
        f.write(ir, op);
    }
    changed
}

pub const CANONICALIZE_FORALL: &[CanonFn] = &[
    forall_control_operands,
    forall_trivial_dims,
    forall_unused_results,
    forall_cast_outputs,
];
