//! `arith.addui_extended`, `arith.mulsi_extended`, `arith.mului_extended`: result types,
//! folders and canonicalization (upstream's folders and AddUIExtendedToAddI,
//! MulSIExtendedToMulI, MulSIExtendedRHSOne, MulUIExtendedToMulI).

use super::*;
use ftuner_ir::dialect::TypeEnv;
use ftuner_ir::Context;

pub fn infer_mulsi_extended(env: &mut TypeEnv) -> Result<(), String> {
    if let Some(t) = env.get1("lhs") {
        env.set("low", vec![t]);
        env.set("high", vec![t]);
    }
    Ok(())
}
pub fn infer_mului_extended(env: &mut TypeEnv) -> Result<(), String> {
    infer_mulsi_extended(env)
}

pub fn asm_names_addui_extended(ir: &Ir, op: OpId, f: &mut dyn FnMut(Value, String)) {
    f(ir.result(op, 0), "sum".into());
    f(ir.result(op, 1), "overflow".into());
}
pub fn asm_names_mulsi_extended(ir: &Ir, op: OpId, f: &mut dyn FnMut(Value, String)) {
    f(ir.result(op, 0), "low".into());
    f(ir.result(op, 1), "high".into());
}
pub fn asm_names_mului_extended(ir: &Ir, op: OpId, f: &mut dyn FnMut(Value, String)) {
    asm_names_mulsi_extended(ir, op, f)
}

fn int_arg(c: &[Option<Attribute>], i: usize) -> Option<i128> {
    match const_value(c.get(i).copied()??)? {
        (Const::Int(v), _) => Some(v),
        _ => None,
    }
}

fn attr(c: Const, ty: Type) -> Option<FoldResult> {
    make_const(c, ty).map(FoldResult::Attr)
}

/// `addui_extended(x, 0) -> x, false`; constants fold to the wrapped sum and whether the
/// unsigned addition overflowed.
pub fn fold_addui_extended(
    ir: &mut Ir,
    op: OpId,
    c: &[Option<Attribute>],
) -> Option<Vec<FoldResult>> {
    let (st, ot) = (result_type(ir, op), ir.value_type(ir.result(op, 1)));
    let w = width(st);
    let (a, b) = (int_arg(c, 0), int_arg(c, 1));
    if a.is_none() && b.is_some_and(|b| zext(b, w) == 0) {
        return Some(vec![
            FoldResult::Value(ir.operand(op, 0)),
            attr(Const::Int(0), ot)?,
        ]);
    }
    let (a, b) = (a?, b?);
    if w > 64 {
        return None;
    }
    let sum = zext(a, w) + zext(b, w);
    let carry = sum >> w != 0;
    Some(vec![
        attr(Const::Int(sext(sum, w)), st)?,
        attr(Const::Int(carry as i128), ot)?,
    ])
}

/// `mul*_extended(x, 0) -> 0, 0`; `mului_extended(x, 1) -> x, 0`; constants fold to the
/// low and high halves of the full product.
fn fold_mul_extended(
    ir: &mut Ir,
    op: OpId,
    c: &[Option<Attribute>],
    signed: bool,
) -> Option<Vec<FoldResult>> {
    let ty = result_type(ir, op);
    let w = width(ty);
    let (a, b) = (int_arg(c, 0), int_arg(c, 1));
    if a.is_none() && b.is_some_and(|b| zext(b, w) == 0) {
        return Some(vec![attr(Const::Int(0), ty)?, attr(Const::Int(0), ty)?]);
    }
    if a.is_none() && !signed && b.is_some_and(|b| zext(b, w) == 1) {
        return Some(vec![
            FoldResult::Value(ir.operand(op, 0)),
            attr(Const::Int(0), ty)?,
        ]);
    }
    let (a, b) = (a?, b?);
    if w > 64 {
        return None;
    }
    let (low, high) = if signed {
        let p = sext(a, w) * sext(b, w);
        (p, p >> w)
    } else {
        let p = (zext(a, w) as u128) * (zext(b, w) as u128);
        ((p & ((1u128 << w) - 1)) as i128, (p >> w) as i128)
    };
    Some(vec![
        attr(Const::Int(sext(low, w)), ty)?,
        attr(Const::Int(sext(high, w)), ty)?,
    ])
}
pub fn fold_mulsi_extended(
    ir: &mut Ir,
    op: OpId,
    c: &[Option<Attribute>],
) -> Option<Vec<FoldResult>> {
    fold_mul_extended(ir, op, c, true)
}
pub fn fold_mului_extended(
    ir: &mut Ir,
    op: OpId,
    c: &[Option<Attribute>],
) -> Option<Vec<FoldResult>> {
    fold_mul_extended(ir, op, c, false)
}

/// The second result unused: the plain op on the first (AddUIExtendedToAddI,
/// MulSIExtendedToMulI, MulUIExtendedToMulI), without overflow flags.
fn extended_to_plain(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    if ir.has_uses(ir.result(op, 1)) {
        return false;
    }
    let plain = if ir.name(op) == "arith.addui_extended" {
        "arith.addi"
    } else {
        "arith.muli"
    };
    let (a, b) = (ir.operand(op, 0), ir.operand(op, 1));
    let ty = result_type(ir, op);
    let v = build(ir, op, plain, &[a, b], ty, &[]);
    let high = ir.result(op, 1);
    ir.replace_op(op, &[v, high]);
    true
}

/// `mulsi_extended(x, 1) -> x, extsi(cmpi(slt, x, 0))` (MulSIExtendedRHSOne), for
/// elements wider than `i1` (where 1 is not -1) and not `index` (`arith.extsi` does not
/// make an index: upstream's pattern leaves IR that does not verify there).
fn mulsi_extended_one(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (x, one) = (ir.operand(op, 0), ir.operand(op, 1));
    let ty = result_type(ir, op);
    if width(ty) < 2 || crate::util::elem(ty).is_index() || !is_int(ctx, ir, one, 1) {
        return false;
    }
    let Some(z) = cst(ir, op, Const::Int(0), ty) else {
        return false;
    };
    let bt = crate::util::with_elem(ty, Type::i1());
    let slt = Attribute::int(2, Type::i64());
    let neg = build(ir, op, "arith.cmpi", &[x, z], bt, &[("predicate", slt)]);
    let high = build(ir, op, "arith.extsi", &[neg], ty, &[]);
    ir.replace_op(op, &[x, high]);
    true
}

pub const CANONICALIZE_ADDUI_EXTENDED: &[CanonFn] = &[COMMUTE, extended_to_plain, DENSE];
pub const CANONICALIZE_MULSI_EXTENDED: &[CanonFn] =
    &[COMMUTE, extended_to_plain, mulsi_extended_one, DENSE];
pub const CANONICALIZE_MULUI_EXTENDED: &[CanonFn] = &[COMMUTE, extended_to_plain, DENSE];
