//! `arith.select` patterns.

use super::*;
use ftuner_ir::Context;

/// Upstream's `SelectOp::fold` beyond ours: a splat constant condition picks a side;
/// `select(c, true, false) -> c` on `i1`; `select(cmpi(eq, a, b), a, b) -> b` and
/// `select(cmpi(ne, a, b), a, b) -> a`; all-constant operands fold elementwise.
fn select_fold(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (c, a, b) = (ir.operand(op, 0), ir.operand(op, 1), ir.operand(op, 2));
    let ty = result_type(ir, op);
    if let Some(k) = int_of(ctx, ir, c) {
        let v = if k & 1 != 0 { a } else { b };
        return replace(ir, op, v);
    }
    if ty == Type::i1() && is_int(ctx, ir, a, 1) && is_int(ctx, ir, b, 0) {
        return replace(ir, op, c);
    }
    if let Some(d) = def(ir, c, "arith.cmpi") {
        let p = ir.attr(d, "predicate").and_then(|x| x.as_i64());
        if ir.operand(d, 0) == a && ir.operand(d, 1) == b {
            match p {
                Some(0) => return replace(ir, op, b),
                Some(1) => return replace(ir, op, a),
                _ => {}
            }
        }
    }
    let kinds = [c, a, b].map(|v| constant_of(ctx, ir, v).map(|x| x.kind()));
    if let [Some(AttrKind::DenseElements {
        elements: ce,
        splat: false,
        ..
    }), Some(AttrKind::DenseElements {
        elements: ae,
        splat: asp,
        ..
    }), Some(AttrKind::DenseElements {
        elements: be,
        splat: bsp,
        ..
    })] = kinds
    {
        if !ty.has_static_shape() {
            return false;
        }
        let pick = |e: &[Scalar], s: bool, i: usize| e[if s { 0 } else { i }];
        let out: Vec<Scalar> = (0..ce.len())
            .map(|i| match ce[i] {
                Scalar::Int(k) if k & 1 != 0 => pick(ae, *asp, i),
                _ => pick(be, *bsp, i),
            })
            .collect();
        let v = cst_attr(ir, op, Attribute::dense(ty, out), ty);
        return replace(ir, op, v);
    }
    false
}

/// `select(c, 1, 0) -> extui(c)` and `select(c, 0, 1) -> extui(xori(c, true))` for a
/// scalar integer result wider than `i1` (SelectToExtUI); `select(c, false, true) ->
/// xori(c, true)` on `i1` (SelectI1ToNot).
fn select_to_ext(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (c, a, b) = (ir.operand(op, 0), ir.operand(op, 1), ir.operand(op, 2));
    let ty = result_type(ir, op);
    // Not i0, where 1 is 0 (select(c, 0, 0) became an `extui` to i0, which does not verify).
    if !ty.is_integer() || ty.is_shaped() || ty.int_width() == Some(0) {
        return false;
    }
    let (one_zero, zero_one) = (
        is_int(ctx, ir, a, 1) && is_int(ctx, ir, b, 0),
        is_int(ctx, ir, a, 0) && is_int(ctx, ir, b, 1),
    );
    if ty == Type::i1() {
        if !zero_one {
            return false;
        }
        let Some(t) = cst(ir, op, Const::Int(1), Type::i1()) else {
            return false;
        };
        let v = build(ir, op, "arith.xori", &[c, t], Type::i1(), &[]);
        return replace(ir, op, v);
    }
    let cond = if one_zero {
        c
    } else if zero_one {
        let Some(t) = cst(ir, op, Const::Int(1), Type::i1()) else {
            return false;
        };
        build(ir, op, "arith.xori", &[c, t], Type::i1(), &[])
    } else {
        return false;
    };
    let v = build(ir, op, "arith.extui", &[cond], ty, &[]);
    replace(ir, op, v)
}

/// `select(c, select(c, a, b), d) -> select(c, a, d)` (RedundantSelectTrue),
/// `select(c, a, select(c, b, d)) -> select(c, a, d)` (RedundantSelectFalse),
/// `select(xori(c, true), a, b) -> select(c, b, a)` for `i1` conditions (SelectNotCond).
fn select_redundant(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (c, a, b) = (ir.operand(op, 0), ir.operand(op, 1), ir.operand(op, 2));
    if let Some(d) = def(ir, a, "arith.select") {
        if ir.operand(d, 0) == c {
            let x = ir.operand(d, 1);
            ir.set_operands(op, vec![c, x, b]);
            return true;
        }
    }
    if let Some(d) = def(ir, b, "arith.select") {
        if ir.operand(d, 0) == c {
            let x = ir.operand(d, 2);
            ir.set_operands(op, vec![c, a, x]);
            return true;
        }
    }
    if let Some(d) = def(ir, c, "arith.xori") {
        let n = ir.operand(d, 1);
        if ir.value_type(c) == Type::i1() && scalar_int_of(ctx, ir, n) == Some(1) {
            let p = ir.operand(d, 0);
            ir.set_operands(op, vec![p, b, a]);
            return true;
        }
    }
    false
}

pub const CANONICALIZE_SELECT: &[CanonFn] = &[select_fold, select_to_ext, select_redundant];
