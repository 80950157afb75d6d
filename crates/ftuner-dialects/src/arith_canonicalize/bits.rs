//! Bitwise ops, comparisons, casts and the float identities.

use super::*;
use ftuner_ir::Context;

/// `andi(x, xori(x, -1)) -> 0` on either side (upstream's `AndIOp::fold`), and
/// `andi(a, andi(a, b)) -> andi(a, b)` in all four operand orders (`foldAndIofAndI`).
fn andi_absorb(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    for (n, x) in [(r, l), (l, r)] {
        if let Some(d) = def(ir, n, "arith.xori") {
            if ir.operand(d, 0) == x && is_int(ctx, ir, ir.operand(d, 1), -1) {
                let ty = result_type(ir, op);
                if ty.is_shaped() && !ty.has_static_shape() {
                    return false;
                }
                let Some(z) = cst(ir, op, Const::Int(0), ty) else {
                    return false;
                };
                return replace(ir, op, z);
            }
        }
    }
    for (inner, x) in [(r, l), (l, r)] {
        if let Some(d) = def(ir, inner, "arith.andi") {
            if ir.operand(d, 0) == x || ir.operand(d, 1) == x {
                return replace(ir, op, inner);
            }
        }
    }
    false
}

/// `xori(x, x) -> 0`, `xori(x, 0) -> x`, `xori(xori(x, a), a) -> x` and its operand
/// orders (upstream's `XOrIOp::fold`).
fn xori_cancel(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    let ty = result_type(ir, op);
    if l == r {
        if ty.is_shaped() && !ty.has_static_shape() {
            return false;
        }
        let Some(z) = cst(ir, op, Const::Int(0), ty) else {
            return false;
        };
        return replace(ir, op, z);
    }
    if is_int(ctx, ir, r, 0) {
        return replace(ir, op, l);
    }
    for (inner, a) in [(l, r), (r, l)] {
        if let Some(d) = def(ir, inner, "arith.xori") {
            let (p, q) = (ir.operand(d, 0), ir.operand(d, 1));
            if q == a {
                return replace(ir, op, p);
            }
            if p == a {
                return replace(ir, op, q);
            }
        }
    }
    false
}

/// `xori(cmpi(pred, a, b), true) -> cmpi(!pred, a, b)` for scalar `i1` (XOrINotCmpI).
fn xori_not_cmpi(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    if scalar_int_of(ctx, ir, r) != Some(1) || ir.value_type(r) != Type::i1() {
        return false;
    }
    let Some(d) = def(ir, l, "arith.cmpi") else {
        return false;
    };
    let Some(p) = ir.attr(d, "predicate").and_then(|a| a.as_i64()) else {
        return false;
    };
    // eq<->ne, slt<->sge, sle<->sgt, ult<->uge, ule<->ugt
    const INV: [i64; 10] = [1, 0, 5, 4, 3, 2, 9, 8, 7, 6];
    let Some(np) = INV.get(p as usize) else {
        return false;
    };
    let (a, b) = (ir.operand(d, 0), ir.operand(d, 1));
    let ty = result_type(ir, op);
    let pa = Attribute::int(*np as i128, Type::i64());
    let v = build(ir, op, "arith.cmpi", &[a, b], ty, &[("predicate", pa)]);
    replace(ir, op, v)
}

/// `op(extui(x), extui(y)) -> extui(op(x, y))` and the same with `extsi`, when `x` and
/// `y` have the same type: AndOfExtUI/AndOfExtSI, OrIOfExtUI/OrIOfExtSI,
/// XOrIOfExtUI/XOrIOfExtSI.
fn logic_of_ext(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    for ext in ["arith.extui", "arith.extsi"] {
        let (Some(a), Some(b)) = (def(ir, l, ext), def(ir, r, ext)) else {
            continue;
        };
        let (x, y) = (ir.operand(a, 0), ir.operand(b, 0));
        let xt = ir.value_type(x);
        if xt != ir.value_type(y) {
            return false;
        }
        let name = ir.name(op);
        let inner = build(ir, op, name, &[x, y], xt, &[]);
        let ty = result_type(ir, op);
        let v = build(ir, op, ext, &[inner], ty, &[]);
        return replace(ir, op, v);
    }
    false
}

/// `cmpi` canonical forms: a constant goes to the right with the swapped predicate
/// (upstream's `CmpIOp::fold`); `cmpi(eq|ne, ext(a), ext(b)) -> cmpi(eq|ne, a, b)` for
/// the same extension and operand types (CmpIExtSI, CmpIExtUI); on `i1` elements
/// `cmpi(ne, x, false) -> x` and `cmpi(eq, x, true) -> x`, and
/// `cmpi(ne, ext(x : i1), 0) -> x` (upstream's folder).
fn cmpi_canonical(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    let Some(p) = ir.attr(op, "predicate").and_then(|a| a.as_i64()) else {
        return false;
    };
    if is_const(ctx, ir, l) && !is_const(ctx, ir, r) {
        // eq, ne stay; slt<->sgt, sle<->sge, ult<->ugt, ule<->uge
        const SWAP: [i64; 10] = [0, 1, 4, 5, 2, 3, 8, 9, 6, 7];
        let Some(np) = SWAP.get(p as usize) else {
            return false;
        };
        ir.set_operands(op, vec![r, l]);
        ir.set_prop(
            op,
            "predicate",
            Some(Attribute::int(*np as i128, Type::i64())),
        );
        return true;
    }
    let i1 = ir.value_type(l).element_type() == Type::i1();
    if (p == 1 && i1 && is_int(ctx, ir, r, 0)) || (p == 0 && i1 && is_int(ctx, ir, r, 1)) {
        return replace(ir, op, l);
    }
    for ext in ["arith.extui", "arith.extsi"] {
        if p == 1 && is_int(ctx, ir, r, 0) {
            if let Some(d) = def(ir, l, ext) {
                let x = ir.operand(d, 0);
                if ir.value_type(x).element_type() == Type::i1() {
                    return replace(ir, op, x);
                }
            }
        }
        if p > 1 {
            continue;
        }
        let (Some(a), Some(b)) = (def(ir, l, ext), def(ir, r, ext)) else {
            continue;
        };
        let (x, y) = (ir.operand(a, 0), ir.operand(b, 0));
        if ir.value_type(x) != ir.value_type(y) {
            continue;
        }
        ir.set_operands(op, vec![x, y]);
        return true;
    }
    false
}

/// `cmpf` with a NaN scalar constant operand: ordered predicates are false, unordered
/// true (upstream's `CmpFOp::fold`).
fn cmpf_nan(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let nan = |v: Value| match constant_of(ctx, ir, v).map(|a| a.kind()) {
        Some(AttrKind::Float { .. }) => matches!(
            constant_of(ctx, ir, v).and_then(const_value),
            Some((Const::Float(f), _)) if f.is_nan()
        ),
        _ => false,
    };
    if !nan(ir.operand(op, 0)) && !nan(ir.operand(op, 1)) {
        return false;
    }
    let Some(p) = ir.attr(op, "predicate").and_then(|a| a.as_i64()) else {
        return false;
    };
    let ty = result_type(ir, op);
    let Some(v) = cst(ir, op, Const::Int((p >= 8) as i128), ty) else {
        return false;
    };
    replace(ir, op, v)
}

// ----- casts -------------------------------------------------------------------------

/// `extsi(extui(x)) -> extui(x)` (ExtSIOfExtUI); `extsi(extsi(x)) -> extsi(x)`,
/// `extui(extui(x)) -> extui(x)` (upstream's folders).
fn ext_of_ext(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let src = ir.operand(op, 0);
    let Some(d) = ir.defining_op(src) else {
        return false;
    };
    let me = ir.name(op);
    let kind = match (me, ir.name(d)) {
        ("arith.extsi", "arith.extui") => "arith.extui",
        ("arith.extsi", "arith.extsi") | ("arith.extui", "arith.extui") => me,
        _ => return false,
    };
    let x = ir.operand(d, 0);
    let ty = result_type(ir, op);
    let v = build(ir, op, kind, &[x], ty, &[]);
    replace(ir, op, v)
}

/// `trunci(ext(x))`: `x` when the types match, `ext(x)` when `x` is narrower
/// (TruncIExtSIToExtSI, TruncIExtUIToExtUI), `trunci(x)` when wider; and
/// `trunci(trunci(x)) -> trunci(x)` (upstream's `TruncIOp::fold`).
fn trunci_of_cast(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let src = ir.operand(op, 0);
    let Some(d) = ir.defining_op(src) else {
        return false;
    };
    let dn = ir.name(d);
    if !matches!(dn, "arith.extui" | "arith.extsi" | "arith.trunci") {
        return false;
    }
    let x = ir.operand(d, 0);
    let ty = result_type(ir, op);
    let (xw, rw) = (width(ir.value_type(x)), width(ty));
    if ir.value_type(x) == ty {
        return replace(ir, op, x);
    }
    let kind = if xw > rw || dn == "arith.trunci" {
        "arith.trunci"
    } else {
        dn
    };
    let v = build(ir, op, kind, &[x], ty, &[]);
    replace(ir, op, v)
}

/// `index_cast(index_cast(x)) -> x` for equal types when the middle type is not
/// narrower (IndexCastOfIndexCast, IndexCastUIOfIndexCastUI); `index_cast(extsi(x)) -> index_cast(x)`
/// (IndexCastOfExtSI), `index_castui(extui(x)) -> index_castui(x)` (IndexCastUIOfExtUI).
fn index_cast_chain(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let me = ir.name(op);
    let ext = if me == "arith.index_cast" {
        "arith.extsi"
    } else {
        "arith.extui"
    };
    let src = ir.operand(op, 0);
    let ty = result_type(ir, op);
    if let Some(d) = def(ir, src, me) {
        let x = ir.operand(d, 0);
        // Only a round trip through a type at least as wide is the identity (upstream
        // also folds `index -> i32 -> index`, which loses the high bits).
        if ir.value_type(x) == ty && width(ir.value_type(src)) >= width(ty) {
            return replace(ir, op, x);
        }
    }
    if let Some(d) = def(ir, src, ext) {
        let x = ir.operand(d, 0);
        ir.set_operands(op, vec![x]);
        return true;
    }
    false
}

/// `bitcast(bitcast(x)) -> bitcast(x)` (BitcastOfBitcast; equal types then fold to
/// `x`), and bitcasts of scalar or dense constants (upstream's `BitcastOp::fold`).
fn bitcast_canonical(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let src = ir.operand(op, 0);
    let ty = result_type(ir, op);
    if let Some(d) = def(ir, src, "arith.bitcast") {
        let x = ir.operand(d, 0);
        if ir.value_type(x) == ty {
            return replace(ir, op, x);
        }
        ir.set_operands(op, vec![x]);
        return true;
    }
    let Some(a) = constant_of(ctx, ir, src) else {
        return false;
    };
    let et = ty.element_type();
    let conv = |s: &Scalar| -> Option<Scalar> {
        let bits = match s {
            Scalar::Int(v) => *v as u128,
            Scalar::Float(b) => *b,
            _ => return None,
        };
        let w = et.bit_width()?;
        let bits = if w >= 128 {
            bits
        } else {
            bits & ((1u128 << w) - 1)
        };
        if et.is_float() {
            Some(Scalar::Float(bits))
        } else {
            Some(Scalar::Int(ftuner_ir::attrs::truncate_to_width(
                bits as i128,
                et,
            )))
        }
    };
    let one = |s: Scalar| match conv(&s) {
        Some(Scalar::Int(v)) => Some(Attribute::int(v, ty)),
        Some(Scalar::Float(b)) => Some(Attribute::get(AttrKind::Float { bits: b, ty })),
        _ => None,
    };
    let attr = match a.kind() {
        AttrKind::Integer { value, .. } => one(Scalar::Int(*value)),
        AttrKind::Bool(b) => one(Scalar::Int(*b as i128)),
        AttrKind::Float { bits, .. } => one(Scalar::Float(*bits)),
        AttrKind::DenseElements { elements, .. } if ty.has_static_shape() => {
            let e: Option<Vec<Scalar>> = elements.iter().map(conv).collect();
            e.map(|e| Attribute::dense(ty, e))
        }
        _ => None,
    };
    let Some(attr) = attr else {
        return false;
    };
    let v = cst_attr(ir, op, attr, ty);
    replace(ir, op, v)
}

// ----- float identities --------------------------------------------------------------

/// `subf(x, +0.0) -> x`, `divf(x, 1.0) -> x` (upstream's folders).
fn float_identity(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let r = ir.operand(op, 1);
    let Some(c) = float_of(ctx, ir, r) else {
        return false;
    };
    let id = match ir.name(op) {
        "arith.subf" => c == 0.0 && c.is_sign_positive(),
        "arith.divf" => c == 1.0,
        _ => false,
    };
    if id {
        let x = ir.operand(op, 0);
        return replace(ir, op, x);
    }
    false
}

/// `negf(negf(x)) -> x` (upstream's `NegFOp::fold`).
fn negf_negf(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    if let Some(d) = def(ir, ir.operand(op, 0), "arith.negf") {
        let x = ir.operand(d, 0);
        return replace(ir, op, x);
    }
    false
}

/// `mulf(negf(x), negf(y)) -> mulf(x, y)` and the same for `divf` (MulFOfNegF,
/// DivFOfNegF); the fastmath flags stay those of the `mulf`/`divf`.
fn negf_pair(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    let (Some(a), Some(b)) = (def(ir, l, "arith.negf"), def(ir, r, "arith.negf")) else {
        return false;
    };
    let (x, y) = (ir.operand(a, 0), ir.operand(b, 0));
    ir.set_operands(op, vec![x, y]);
    true
}

pub const CANONICALIZE_ANDI: &[CanonFn] = &[COMMUTE, andi_absorb, logic_of_ext, DENSE];
pub const CANONICALIZE_ORI: &[CanonFn] = &[COMMUTE, logic_of_ext, DENSE];
pub const CANONICALIZE_XORI: &[CanonFn] =
    &[COMMUTE, xori_cancel, xori_not_cmpi, logic_of_ext, DENSE];
pub const CANONICALIZE_CMPI: &[CanonFn] = &[cmpi_canonical, super::sign::cmpi_non_negative, DENSE];
pub const CANONICALIZE_CMPF: &[CanonFn] = &[cmpf_nan, DENSE];
pub const CANONICALIZE_EXTSI: &[CanonFn] = &[ext_of_ext, DENSE];
pub const CANONICALIZE_EXTUI: &[CanonFn] = &[ext_of_ext, DENSE];
pub const CANONICALIZE_TRUNCI: &[CanonFn] = &[trunci_of_cast, DENSE];
pub const CANONICALIZE_INDEX_CAST: &[CanonFn] = &[index_cast_chain, DENSE];
pub const CANONICALIZE_INDEX_CASTUI: &[CanonFn] = &[index_cast_chain, DENSE];
pub const CANONICALIZE_BITCAST: &[CanonFn] = &[bitcast_canonical];
pub const CANONICALIZE_SITOFP: &[CanonFn] = &[DENSE];
pub const CANONICALIZE_UITOFP: &[CanonFn] = &[DENSE];
pub const CANONICALIZE_FPTOSI: &[CanonFn] = &[DENSE];
pub const CANONICALIZE_FPTOUI: &[CanonFn] = &[DENSE];
pub const CANONICALIZE_EXTF: &[CanonFn] = &[DENSE];
pub const CANONICALIZE_TRUNCF: &[CanonFn] = &[DENSE];
pub const CANONICALIZE_ADDF: &[CanonFn] = &[COMMUTE, DENSE];
pub const CANONICALIZE_SUBF: &[CanonFn] = &[float_identity, DENSE];
pub const CANONICALIZE_MULF: &[CanonFn] = &[COMMUTE, negf_pair, DENSE];
pub const CANONICALIZE_DIVF: &[CanonFn] = &[float_identity, negf_pair, DENSE];
pub const CANONICALIZE_REMF: &[CanonFn] = &[DENSE];
pub const CANONICALIZE_NEGF: &[CanonFn] = &[negf_negf, DENSE];
