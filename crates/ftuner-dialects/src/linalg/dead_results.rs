//! Canonicalization of `linalg.generic`: a result nothing reads, whose output the body
//! reads only to compute that result, goes with its output operand, block argument,
//! indexing map and yielded value.
//!
//! torch-mlir lowers `softmax` through `aten.max.dim`, a reduction with two results, the
//! maximum and its index:
//!
//! ```mlir
//! %m:2 = linalg.generic {... ["parallel", ..., "reduction"]} ins(%x) outs(%max, %idx) {
//! ^bb0(%in: f32, %out: f32, %out_i: i64):
//!   %i = linalg.index 3 : index
//!   %ii = arith.index_cast %i : index to i64
//!   %v = arith.maximumf %in, %out : f32
//!   %c = arith.cmpf ogt, %in, %out : f32
//!   %s = arith.select %c, %ii, %out_i : i64
//!   linalg.yield %v, %s : f32, i64
//! }
//! ```
//!
//! and uses only `%m#0`. The index keeps the loop scalar (a compare, a select and an index
//! per element: 11% of a BERT attention block at 384 tokens). Upstream's
//! `RemoveDeadOutputs`-style cleanup keeps it, because `%out_i` is read in the body; it is
//! read only on the way to the dead result, so dropping both is sound: what the other
//! results yield never depends on it.

use super::body;
use crate::ops;
use ftuner_ir::Context;
use ftuner_ir::{Attribute, Ir, OpId, Type, Value};
use rustc_hash::FxHashSet;

/// Scalar ops of the body whose removal changes nothing but their results: `arith`,
/// `math` and `linalg.index` (no effects, no regions).
fn pure_scalar(ir: &Ir, op: OpId) -> bool {
    let name = ir.name(op);
    let dialect = name.split('.').next().unwrap_or("");
    ir.regions_of(op).is_empty()
        && (matches!(dialect, "arith" | "math") || name == ops::linalg::IndexOp::NAME)
}

/// The body ops that depend on block argument `a` of body `blk`, when every one of them is
/// a pure scalar op and their values reach the terminator `y` only as its operand `i`.
fn slice_only_to(ir: &Ir, a: Value, y: OpId, i: usize) -> Option<FxHashSet<OpId>> {
    let mut slice = FxHashSet::default();
    let mut work = vec![a];
    while let Some(v) = work.pop() {
        for u in ir.uses(v) {
            if u.op == y {
                if u.operand as usize != i {
                    return None;
                }
                continue;
            }
            if ir.parent_block(u.op) != ir.parent_block(y) || !pure_scalar(ir, u.op) {
                return None;
            }
            if slice.insert(u.op) {
                work.extend(ir.results(u.op).iter().copied());
            }
        }
    }
    Some(slice)
}

/// Drop one dead result of a `linalg.generic` on tensors (see the module's doc).
pub(super) fn generic_dead_result(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (ins, outs) = super::ins_outs(ir, op);
    let nres = ir.results(op).len();
    // Tensor results, one per output; at least one result stays.
    if nres != outs.len() || nres < 2 {
        return false;
    }
    let Some(maps) = body::indexing_maps(ir, op) else {
        return false;
    };
    let Some(blk) = ir.regions_of(op).first().and_then(|r| ir.region_entry(*r)) else {
        return false;
    };
    let Some(y) = ir.terminator(blk) else {
        return false;
    };
    if maps.len() != ins.len() + nres
        || ir.block_args(blk).len() != ins.len() + nres
        || ir.operands(y).len() != nres
    {
        return false;
    }
    for i in 0..nres {
        if ir.has_uses(ir.result(op, i)) {
            continue;
        }
        let arg = ir.block_args(blk)[ins.len() + i];
        let Some(slice) = slice_only_to(ir, arg, y, i) else {
            continue;
        };
        // The other maps must still name every loop (a loop only the dropped output
        // indexes would lose its extent).
        let others = maps.iter().enumerate().filter(|(k, _)| *k != ins.len() + i);
        let n = maps[0].num_dims;
        if !(0..n).all(|d| {
            others
                .clone()
                .any(|(_, m)| m.results.iter().any(|e| e.uses_dim(d)))
        }) {
            continue;
        }
        // The yield loses operand i; the slice (all of it depends on the argument) goes,
        // users first; what computed the yielded value otherwise is left to dead-code
        // elimination.
        let mut ys = ir.operands(y).to_vec();
        ys.remove(i);
        ir.set_operands(y, ys);
        let mut order = ir.block_ops_vec(blk);
        order.retain(|o| slice.contains(o));
        for o in order.into_iter().rev() {
            ir.erase_op(o);
        }
        ir.erase_block_arg(blk, ins.len() + i);
        // The op without output i.
        let mut operands = ins.clone();
        operands.extend(
            outs.iter()
                .enumerate()
                .filter(|(k, _)| *k != i)
                .map(|(_, v)| *v),
        );
        let types: Vec<Type> = (0..nres)
            .filter(|k| *k != i)
            .map(|k| ir.value_type(ir.result(op, k)))
            .collect();
        let new = crate::util::rebuild_op(ir, op, operands, types);
        let mut new_maps = maps.clone();
        new_maps.remove(ins.len() + i);
        let maps_attr = Attribute::array(new_maps.into_iter().map(Attribute::affine_map).collect());
        ir.set_inherent(new, "indexing_maps", maps_attr);
        let segs = [ins.len() as i32, (nres - 1) as i32];
        ir.set_prop(
            new,
            "operandSegmentSizes",
            Some(Attribute::dense_i32_array(&segs)),
        );
        let mut k = 0;
        for r in 0..nres {
            if r == i {
                continue;
            }
            let (from, to) = (ir.result(op, r), ir.result(new, k));
            ir.replace_all_uses(from, to);
            k += 1;
        }
        ir.erase_op(op);
        return true;
    }
    false
}
