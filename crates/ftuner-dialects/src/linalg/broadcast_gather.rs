//! Canonicalization of the gathers torch-mlir emits for a dynamic `aten.expand`.
//!
//! A broadcast whose sizes are only known at run time becomes a `linalg.generic` that
//! reads its source through `tensor.extract`, indexing a source dim of size 1 at 0:
//!
//! ```mlir
//! %e = tensor.empty(%b, %s) : tensor<?x12x?x64xf32>
//! %r = linalg.generic {indexing_maps = [identity], iterator_types = [4 x "parallel"]}
//!        outs(%e) {
//!   %i = linalg.index 0 : index
//!   ...
//!   %c = arith.cmpi eq, %b, %c1 : index        // the source's dim 0 is 1
//!   %i0 = arith.select %c, %c0, %i : index
//!   %x = tensor.extract %src[%i0, %j, %k0, %l] : tensor<?x12x?x64xf32>
//!   linalg.yield %x : f32
//! }
//! ```
//!
//! BERT and GPT-2 expand each attention block's queries, keys, values and probabilities
//! this way, to the shape they already have: four copies per block, each a gather with
//! a bounds check per element. Two patterns remove them:
//!
//! * `select(cmpi eq(D, 1), 0, linalg.index k)` is `linalg.index k` where loop `k` runs
//!   `D` times: with `D == 1` the index is 0 anyway;
//! * a generic without inputs that yields `tensor.extract %src[index 0, ..., index n-1]`
//!   (or 0 along a dim of size 1) into an output of `%src`'s type and dims (the same
//!   size values, or static) is `%src`.

use super::body;
use crate::ops;
use ftuner_ir::Context;
use ftuner_ir::{AffineExpr, Ir, OpId, Value};

/// A size as far as it is known: a constant, an SSA value, or dim `j` of a tensor whose
/// sizes are not known otherwise (an argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Size {
    Static(i64),
    Val(Value),
    Dim(Value, usize),
}

/// The size of dim `j` of tensor `v`: static, a dynamic size operand of the
/// `tensor.empty` behind `v` (through the inits of the linalg ops that produced it), or
/// dim `j` of the tensor that chain starts from.
fn size(ctx: &Context, ir: &Ir, v: Value, j: usize, depth: u32) -> Option<Size> {
    let shape = ir.value_type(v).shape()?.to_vec();
    let s = *shape.get(j)?;
    if s >= 0 {
        return Some(Size::Static(s));
    }
    let mut v = v;
    for _ in 0..16 {
        let Some(d) = ir.defining_op(v) else {
            break;
        };
        let name = ir.name(d);
        if name == ops::tensor::EmptyOp::NAME {
            let k = shape[..j].iter().filter(|s| **s < 0).count();
            return value_size(ctx, ir, *ir.operands(d).get(k)?, depth);
        }
        if !name.starts_with("linalg.") || ir.results(d).len() != 1 {
            break;
        }
        // A destination-style op's result has its init's shape (the registered op's
        // output operand; an unregistered op has none and ends the chase).
        let (_, outs) = super::ins_outs(ir, d);
        let [init] = outs[..] else {
            break;
        };
        if ir.value_type(init) != ir.value_type(v) {
            break;
        }
        v = init;
    }
    Some(Size::Dim(v, j))
}

/// An index value as a [`Size`]: a constant, `tensor.dim` of a tensor (that tensor's
/// size), or the value itself.
fn value_size(ctx: &Context, ir: &Ir, x: Value, depth: u32) -> Option<Size> {
    if let Some(c) = crate::arith_canonicalize::scalar_int_of(ctx, ir, x) {
        return i64::try_from(c).ok().map(Size::Static);
    }
    if let Some(d) = ir.defining_op(x) {
        if ir.name(d) == ops::tensor::DimOp::NAME && depth < 8 {
            let t = ir.operand(d, 0);
            if let Some(j) = crate::arith_canonicalize::scalar_int_of(ctx, ir, ir.operand(d, 1)) {
                return size(ctx, ir, t, usize::try_from(j).ok()?, depth + 1);
            }
        }
    }
    Some(Size::Val(x))
}

/// Whether loop `k` of `op` runs `extent` times: an operand indexes its dim `j` by `d_k`
/// alone, and that dim's size is `extent`.
fn loop_runs(ctx: &Context, ir: &Ir, op: OpId, k: u32, extent: Value) -> bool {
    let Some(maps) = body::indexing_maps(ir, op) else {
        return false;
    };
    let (ins, outs) = super::ins_outs(ir, op);
    let want = value_size(ctx, ir, extent, 0);
    want.is_some()
        && ins.iter().chain(&outs).zip(&maps).any(|(v, m)| {
            m.results
                .iter()
                .enumerate()
                .any(|(j, e)| *e == AffineExpr::Dim(k) && size(ctx, ir, *v, j, 0) == want)
        })
}

/// `select(cmpi eq(D, 1), 0, linalg.index k) -> linalg.index k` in the body of `op` where
/// loop `k` runs `D` times.
fn unit_extent_selects(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(blk) = ir.regions_of(op).first().and_then(|r| ir.region_entry(*r)) else {
        return false;
    };
    let mut changed = false;
    for s in ir.block_ops_vec(blk) {
        if ir.name(s) != ops::arith::SelectOp::NAME || ir.operands(s).len() != 3 {
            continue;
        }
        let (c, zero, idx) = (ir.operand(s, 0), ir.operand(s, 1), ir.operand(s, 2));
        let Some(ix) = ir.defining_op(idx) else {
            continue;
        };
        // This op's loop index (an enclosing generic's would be another loop).
        if ir.name(ix) != ops::linalg::IndexOp::NAME
            || ir.parent_block(ix) != Some(blk)
            || crate::arith_canonicalize::scalar_int_of(ctx, ir, zero) != Some(0)
        {
            continue;
        }
        let Some(k) = ir.attr(ix, "dim").and_then(|a| a.as_i64()) else {
            continue;
        };
        let Some(cmp) = ir.defining_op(c) else {
            continue;
        };
        if ir.name(cmp) != ops::arith::CmpiOp::NAME
            || ir.attr(cmp, "predicate").and_then(|a| a.as_i64()) != Some(0)
        {
            continue;
        }
        let (a, b) = (ir.operand(cmp, 0), ir.operand(cmp, 1));
        let extent = match (
            crate::arith_canonicalize::scalar_int_of(ctx, ir, a),
            crate::arith_canonicalize::scalar_int_of(ctx, ir, b),
        ) {
            (_, Some(1)) => a,
            (Some(1), _) => b,
            _ => continue,
        };
        if !loop_runs(ctx, ir, op, k as u32, extent) {
            continue;
        }
        ir.replace_all_uses(ir.result(s, 0), idx);
        ir.erase_op(s);
        changed = true;
    }
    changed
}

/// A generic without inputs (identity output map, every loop parallel) yielding
/// `tensor.extract %src[index 0, ..., index n-1]` (0 along a dim of `%src` known to be 1)
/// into an output of `%src`'s type whose sizes are provably `%src`'s: `%src`.
fn gather_copy(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (ins, outs) = super::ins_outs(ir, op);
    if !ins.is_empty() || outs.len() != 1 || ir.results(op).len() != 1 {
        return false;
    }
    let Some(maps) = body::indexing_maps(ir, op) else {
        return false;
    };
    if maps.len() != 1 || !maps[0].is_identity() || !body::all_parallel(ir, op) {
        return false;
    }
    let Some(blk) = ir.regions_of(op).first().and_then(|r| ir.region_entry(*r)) else {
        return false;
    };
    let Some(y) = ir.terminator(blk) else {
        return false;
    };
    let [yv] = ir.operands(y) else {
        return false;
    };
    let Some(x) = ir.defining_op(*yv) else {
        return false;
    };
    if ir.name(x) != ops::tensor::ExtractOp::NAME || ir.parent_block(x) != Some(blk) {
        return false;
    }
    // Nothing else happens in the body (index arithmetic left for dead-code elimination).
    let pure = |o: OpId| {
        let name = ir.name(o);
        o == y
            || o == x
            || (ir.regions_of(o).is_empty()
                && (name.starts_with("arith.") || name == ops::linalg::IndexOp::NAME))
    };
    if !ir.block_ops_vec(blk).into_iter().all(pure) {
        return false;
    }
    let src = ir.operand(x, 0);
    let res = ir.result(op, 0);
    if ir.value_type(src) != ir.value_type(res) || ir.value_block(src) == Some(blk) {
        return false;
    }
    let n = ir.value_type(res).shape().map_or(0, |s| s.len());
    let indices = &ir.operands(x)[1..];
    if indices.len() != n {
        return false;
    }
    for (j, v) in indices.iter().enumerate() {
        // Loop j's index, or 0 along a dim of size 1 (the only index it has).
        let unit = size(ctx, ir, src, j, 0) == Some(Size::Static(1));
        let is_index = ir.defining_op(*v).is_some_and(|d| {
            ir.name(d) == ops::linalg::IndexOp::NAME
                && ir.parent_block(d) == Some(blk)
                && ir.attr(d, "dim").and_then(|a| a.as_i64()) == Some(j as i64)
        });
        let zero = crate::arith_canonicalize::scalar_int_of(ctx, ir, *v) == Some(0);
        if !(is_index || unit && zero) {
            return false;
        }
        let same = size(ctx, ir, src, j, 0);
        if same.is_none() || same != size(ctx, ir, outs[0], j, 0) {
            return false;
        }
    }
    ir.replace_all_uses(res, src);
    ir.erase_op(op);
    true
}

/// Both patterns, in order, on one generic.
pub(super) fn generic_broadcast_gather(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    unit_extent_selects(ctx, ir, op) | gather_copy(ctx, ir, op)
}
