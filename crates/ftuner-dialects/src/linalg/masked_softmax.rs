//! Canonicalization of the row test of torch-mlir's masked ("safe") softmax.
//!
//! PyTorch's softmax over a row that is entirely `-inf` (every key masked) gives zeros,
//! not NaNs; torch-mlir decomposes it as
//!
//! ```mlir
//! %m    = max over the row of %x                     (linalg.generic, maximumf, init -inf)
//! %is   = %x == -inf, per element                    (an i1 tensor the size of the scores)
//! %all  = and over the row of %is                    (init true)
//! %p    = select(%all, 0, exp(%x - %m) / sum)
//! ```
//!
//! A row is all `-inf` exactly when its maximum is `-inf` (`maximumf` propagates NaN, and
//! a NaN is not `-inf` either way; an empty row gives `true` both ways), so the and-
//! reduction, one more pass over the scores, is a comparison of the maximum the softmax
//! computes anyway:
//!
//! ```mlir
//! %all = linalg.generic {iterator_types = [the row dims' parallel loops]}
//!          ins(%m) outs(%init) { %b = arith.cmpf oeq, %in, -inf  linalg.yield %b }
//! ```
//!
//! Matched: the and-reduction (body `andi` of its input and output, output initialised
//! by a fill of `true`) of an all-parallel generic whose body compares its one input,
//! maybe extended with `extf`, `oeq` to `-inf`; and a `maximumf` reduction of that same
//! input over the same loops (identity input maps, the same iterator types, its output
//! map the and-reduction's without its constant results, a fill of `-inf` as its init).

use super::body;
use crate::arith_canonicalize::{float_of, is_int};
use crate::ops;
use ftuner_ir::Context;
use ftuner_ir::{AffineExpr, AffineMap, Attribute, Ir, OpBuilder, OpId, Type, Value};

/// The ops of `op`'s body but the terminator, and the terminator's operands.
fn body_ops(ir: &Ir, op: OpId) -> Option<(Vec<OpId>, Vec<Value>, Vec<Value>)> {
    let blk = ir.region_entry(*ir.regions_of(op).first()?)?;
    let y = ir.terminator(blk)?;
    let mut ops = ir.block_ops_vec(blk);
    ops.pop();
    Some((ops, ir.operands(y).to_vec(), ir.block_args(blk).to_vec()))
}

/// The scalar a `linalg.fill` writes into `v`.
fn filled(ir: &Ir, v: Value) -> Option<Value> {
    let f = ir.defining_op(v)?;
    (ir.name(f) == ops::linalg::FillOp::NAME).then(|| ir.operand(f, 0))
}

fn is_neg_inf(ctx: &Context, ir: &Ir, v: Value) -> bool {
    float_of(ctx, ir, v) == Some(f64::NEG_INFINITY)
}

/// `%x == -inf` per element: an all-parallel generic with one input and identity maps.
fn is_neg_inf_test(ctx: &Context, ir: &Ir, op: OpId) -> Option<Value> {
    let (ins, outs) = super::ins_outs(ir, op);
    let maps = body::indexing_maps(ir, op)?;
    if ir.name(op) != ops::linalg::GenericOp::NAME
        || ins.len() != 1
        || outs.len() != 1
        || !body::all_parallel(ir, op)
        || !maps.iter().all(|m| m.is_identity())
    {
        return None;
    }
    let (ops_, ys, args) = body_ops(ir, op)?;
    let cmp = ir.defining_op(*ys.first()?)?;
    if ir.name(cmp) != ops::arith::CmpfOp::NAME
        || ir.attr(cmp, "predicate").and_then(|a| a.as_i64()) != Some(1)
        || !is_neg_inf(ctx, ir, ir.operand(cmp, 1))
    {
        return None;
    }
    let mut x = ir.operand(cmp, 0);
    if let Some(e) = ir
        .defining_op(x)
        .filter(|e| ir.name(*e) == ops::arith::ExtfOp::NAME)
    {
        x = ir.operand(e, 0);
    }
    // Nothing else in the body (dead ops aside, which the driver removes first).
    (x == args[0] && ops_.len() <= 3).then_some(ins[0])
}

/// The and-reduction of a `-inf` test, replaced by a test of the row maximum.
pub(super) fn all_neg_inf_rows(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (ins, outs) = super::ins_outs(ir, op);
    let Some(maps) = body::indexing_maps(ir, op) else {
        return false;
    };
    let Some(par) = body::parallel_iterators(ir, op) else {
        return false;
    };
    if ins.len() != 1
        || outs.len() != 1
        || maps.len() != 2
        || ir.results(op).len() != 1
        || par.len() != maps[0].num_dims as usize
        || par.iter().all(|p| *p)
    {
        return false;
    }
    if !maps[0].is_identity() || filled(ir, outs[0]).is_none_or(|t| !is_int(ctx, ir, t, 1)) {
        return false;
    }
    // The body: andi of the input and the output.
    if !combines(ir, op, ops::arith::AndiOp::NAME) {
        return false;
    }
    let Some(test) = ir.defining_op(ins[0]) else {
        return false;
    };
    let Some(x) = is_neg_inf_test(ctx, ir, test) else {
        return false;
    };
    // The output map names each parallel dim once, in any order, beside constant 0s
    // (kept unit dims; the init, whose shape they index, is reused).
    let kept: Vec<u32> = maps[1].result_dims();
    if maps[1]
        .results
        .iter()
        .any(|e| !matches!(e, AffineExpr::Dim(_) | AffineExpr::Const(0)))
        || kept.iter().any(|d| !par[*d as usize])
        || (1..kept.len()).any(|k| kept[..k].contains(&kept[k]))
        || (0..par.len() as u32).any(|d| par[d as usize] && !kept.contains(&d))
    {
        return false;
    }
    // The maximum of the same rows.
    let Some(max) = ir
        .uses(x)
        .iter()
        .map(|u| u.op)
        .find(|m| is_row_max(ctx, ir, *m, x, &par, &kept))
    else {
        return false;
    };
    let m = ir.result(max, 0);
    if !before(ir, max, op) {
        return false;
    }
    // The new op runs over the parallel loops only, renumbered in order.
    let renum: Vec<AffineExpr> = (0..par.len())
        .map(|d| {
            let k = par[..d].iter().filter(|p| **p).count();
            AffineExpr::Dim(k as u32)
        })
        .collect();
    let n = kept.len() as u32;
    let in_map = AffineMap::new(
        n,
        0,
        kept.iter().map(|d| renum[*d as usize].clone()).collect(),
    );
    let out_map = AffineMap::new(
        n,
        0,
        maps[1]
            .results
            .iter()
            .map(|e| e.replace(&renum, &[]))
            .collect(),
    );
    let m_ty = ir.value_type(m).element_type();
    let res_ty = ir.value_type(ir.result(op, 0));
    let loc = ir.loc(op);
    let new = {
        let mut b = OpBuilder::before(ir, op);
        b.insert(
            ftuner_ir::OpSpec::new(ftuner_ir::intern_name(ops::linalg::GenericOp::NAME), loc)
                .operands([m, outs[0]])
                .results([res_ty])
                .regions(1),
        )
    };
    let par_attr = super::iterator_attr("parallel");
    let props = [
        (
            "indexing_maps",
            Attribute::array(vec![
                Attribute::affine_map(in_map),
                Attribute::affine_map(out_map),
            ]),
        ),
        (
            "iterator_types",
            Attribute::array(vec![par_attr; n as usize]),
        ),
        ("operandSegmentSizes", Attribute::dense_i32_array(&[1, 1])),
    ];
    for (k, a) in props {
        ir.set_prop(new, k, Some(a));
    }
    let region = ir.regions_of(new)[0];
    let blk = ir.append_block(region, &[m_ty, Type::i1()]);
    let arg = ir.block_args(blk)[0];
    let mut b = OpBuilder::at_end(ir, blk, loc);
    let inf = b.value(
        ops::arith::ConstantOp::NAME,
        vec![],
        m_ty,
        &[("value", Attribute::float(f64::NEG_INFINITY, m_ty))],
    );
    let t = b.value(
        ops::arith::CmpfOp::NAME,
        vec![arg, inf],
        Type::i1(),
        &[("predicate", Attribute::i64(1))],
    );
    b.create(ops::linalg::YieldOp::NAME, vec![t], vec![], &[]);
    ir.replace_op(op, &[ir.result(new, 0)]);
    true
}

/// Whether `a` comes before `b` in the same block.
fn before(ir: &Ir, a: OpId, b: OpId) -> bool {
    let Some(blk) = ir
        .parent_block(a)
        .filter(|k| ir.parent_block(b) == Some(*k))
    else {
        return false;
    };
    for o in ir.block_ops(blk) {
        if o == b {
            return false;
        }
        if o == a {
            return true;
        }
    }
    false
}

/// Whether `m` is a `maximumf` reduction of `x` (identity input map) over the loops `par`
/// leaves out, its output map the parallel dims `kept` in order, its init a fill of
/// `-inf`.
fn is_row_max(ctx: &Context, ir: &Ir, m: OpId, x: Value, par: &[bool], kept: &[u32]) -> bool {
    if ir.name(m) != ops::linalg::GenericOp::NAME || ir.results(m).len() != 1 {
        return false;
    }
    let (ins, outs) = super::ins_outs(ir, m);
    let (Some(maps), Some(mpar)) = (body::indexing_maps(ir, m), body::parallel_iterators(ir, m))
    else {
        return false;
    };
    if ins != [x]
        || outs.len() != 1
        || maps.len() != 2
        || mpar != par
        || !maps[0].is_identity()
        || maps[1].results != kept.iter().map(|d| AffineExpr::Dim(*d)).collect::<Vec<_>>()
        || filled(ir, outs[0]).is_none_or(|m| !is_neg_inf(ctx, ir, m))
    {
        return false;
    }
    combines(ir, m, ops::arith::MaximumfOp::NAME)
}

/// Whether `op`'s body is one `name` of its input and its output (in either order),
/// yielded.
fn combines(ir: &Ir, op: OpId, name: &str) -> bool {
    let Some((ops_, ys, args)) = body_ops(ir, op) else {
        return false;
    };
    let Some(c) = ys.first().and_then(|y| ir.defining_op(*y)) else {
        return false;
    };
    let mut pair = ir.operands(c).to_vec();
    pair.sort();
    let mut want = args.get(..2).map(|a| a.to_vec()).unwrap_or_default();
    want.sort();
    ir.name(c) == name && pair == want && ops_.len() == 1
}
