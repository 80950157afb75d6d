//! `arith` canonicalization patterns (upstream's `ArithCanonicalization.td` and the
//! `getCanonicalizationPatterns` of `ArithOps.cpp`), the folders of the `*_extended` ops,
//! and a few of upstream's folders that ours lack, written as patterns (named after the
//! upstream folder in their doc comment).
//!
//! Every pattern holds for every integer width (`i1` and `index` included) and, where
//! the op is elementwise, for vectors and tensors; where upstream matches only scalar
//! `IntegerAttr` constants (`APIntAttr` in the `.td` file) we do too. Overflow flags of
//! reassociated ops are the intersection of the flags of the ops they replace
//! (upstream's `MergeOverflow`).

mod bits;
mod extended;
mod select;
mod sign;

pub use extended::*;
pub use select::*;

use crate::cf::constant_of;
use crate::util::{const_value, make_const, sext, zext, Const};
use ftuner_ir::dialect::{CanonFn, FoldResult};
use ftuner_ir::Context;
use ftuner_ir::{AttrKind, Attribute, Ir, OpId, OpSpec, Scalar, Type, Value};

// ----- helpers ---------------------------------------------------------------------

/// Width of an integer-like type's elements (`index`: 64).
pub(crate) fn width(t: Type) -> u32 {
    crate::util::int_width(t)
}

/// The integer value of a scalar or splat constant.
pub(crate) fn int_of(ctx: &Context, ir: &Ir, v: Value) -> Option<i128> {
    match const_value(constant_of(ctx, ir, v)?)? {
        (Const::Int(x), _) => Some(x),
        _ => None,
    }
}

/// The float value of a scalar or splat constant.
pub(crate) fn float_of(ctx: &Context, ir: &Ir, v: Value) -> Option<f64> {
    match const_value(constant_of(ctx, ir, v)?)? {
        (Const::Float(f), _) => Some(f),
        _ => None,
    }
}

/// The integer value of a scalar (not splat) constant: upstream's `APIntAttr` matchers.
pub(crate) fn scalar_int_of(ctx: &Context, ir: &Ir, v: Value) -> Option<i128> {
    match constant_of(ctx, ir, v)?.kind() {
        AttrKind::Integer { value, .. } => Some(*value),
        AttrKind::Bool(b) => Some(*b as i128),
        _ => None,
    }
}

/// Whether `v` is a scalar or splat integer constant equal to `k` modulo its width.
pub(crate) fn is_int(ctx: &Context, ir: &Ir, v: Value, k: i128) -> bool {
    let w = width(ir.value_type(v));
    int_of(ctx, ir, v).is_some_and(|x| zext(x, w) == zext(k, w))
}

pub(crate) fn is_const(ctx: &Context, ir: &Ir, v: Value) -> bool {
    constant_of(ctx, ir, v).is_some()
}

/// The op defining `v` if it is named `name`.
pub(crate) fn def(ir: &Ir, v: Value, name: &str) -> Option<OpId> {
    ir.defining_op(v).filter(|d| ir.name(*d) == name)
}

/// A new `arith.constant` of `ty` (splat for shaped types) before `at`.
pub(crate) fn cst(ir: &mut Ir, at: OpId, c: Const, ty: Type) -> Option<Value> {
    let a = make_const(c, ty)?;
    Some(cst_attr(ir, at, a, ty))
}

pub(crate) fn cst_attr(ir: &mut Ir, at: OpId, a: Attribute, ty: Type) -> Value {
    let loc = ir.loc(at);
    let c = ir.create_op(
        OpSpec::new(ftuner_ir::intern_name("arith.constant"), loc)
            .prop("value", a)
            .results([ty]),
    );
    ir.insert_before(at, c);
    ir.result(c, 0)
}

/// A new single-result op before `at`.
pub(crate) fn build(
    ir: &mut Ir,
    at: OpId,
    name: &str,
    operands: &[Value],
    ty: Type,
    props: &[(&str, Attribute)],
) -> Value {
    let loc = ir.loc(at);
    let mut spec = OpSpec::new(ftuner_ir::intern_name(name), loc)
        .operands(operands.iter().copied())
        .results([ty]);
    for (k, a) in props {
        spec = spec.prop(k, *a);
    }
    let o = ir.create_op(spec);
    ir.insert_before(at, o);
    ir.result(o, 0)
}

/// Replace `op`'s single result by `v`.
pub(crate) fn replace(ir: &mut Ir, op: OpId, v: Value) -> bool {
    ir.replace_op(op, &[v]);
    true
}

pub(crate) fn result_type(ir: &Ir, op: OpId) -> Type {
    ir.value_type(ir.result(op, 0))
}

/// `(nsw, nuw)` of an op's `overflowFlags`.
fn flags(ir: &Ir, op: OpId) -> (bool, bool) {
    match ir.attr(op, "overflowFlags").map(|a| a.kind()) {
        Some(AttrKind::Dialect { body, .. }) => (body.contains("nsw"), body.contains("nuw")),
        _ => (false, false),
    }
}

/// The `overflowFlags` property of a new op: the flags both `a` and `b` carry.
fn merged_flags(ir: &Ir, a: OpId, b: OpId) -> Vec<(&'static str, Attribute)> {
    let ((s1, u1), (s2, u2)) = (flags(ir, a), flags(ir, b));
    let body = match (s1 && s2, u1 && u2) {
        (false, false) => return vec![],
        (true, false) => "overflow<nsw>",
        (false, true) => "overflow<nuw>",
        (true, true) => "overflow<nsw, nuw>",
    };
    vec![("overflowFlags", Attribute::dialect("arith", body))]
}

// ----- operand order ---------------------------------------------------------------

/// A constant operand of a commutative op goes to the right (upstream's
/// `OpTrait::IsCommutative` folding, `foldCommutative`): constants after non-constants,
/// otherwise in their order.
fn constants_to_rhs(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let ops = ir.operands(op).to_vec();
    if ops.len() != 2 || !is_const(ctx, ir, ops[0]) || is_const(ctx, ir, ops[1]) {
        return false;
    }
    ir.set_operands(op, vec![ops[1], ops[0]]);
    true
}

// ----- constants of non-splat elements ---------------------------------------------

/// Constant folding of an elementwise op whose operands are all constants, some of them
/// non-splat `dense<[...]>`: the op's own folder runs on each element (as a splat), so
/// the semantics stay those of the folder. Upstream's folders do this through
/// `constFoldBinaryOp`/`constFoldCastOp` on `DenseElementsAttr`.
fn fold_dense_elements(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    const MAX_ELEMENTS: usize = 1 << 14;
    let Some(fold) = ctx.op_def(ir.name(op)).and_then(|d| d.fold) else {
        return false;
    };
    let ops = ir.operands(op).to_vec();
    let mut elems: Vec<(Type, &'static [Scalar], bool)> = vec![];
    for v in &ops {
        match constant_of(ctx, ir, *v).map(|a| a.kind()) {
            Some(AttrKind::DenseElements {
                ty,
                splat,
                elements,
            }) => elems.push((*ty, elements, *splat)),
            _ => return false,
        }
    }
    if elems.iter().all(|e| e.2) {
        return false;
    }
    let Some(n) = elems.iter().find(|e| !e.2).map(|e| e.1.len()) else {
        return false;
    };
    if n > MAX_ELEMENTS || elems.iter().any(|e| !e.2 && e.1.len() != n) {
        return false;
    }
    let rtys: Vec<Type> = ir.results(op).iter().map(|r| ir.value_type(*r)).collect();
    if rtys.iter().any(|t| !t.has_static_shape()) {
        return false;
    }
    let mut out: Vec<Vec<Scalar>> = vec![Vec::with_capacity(n); rtys.len()];
    for i in 0..n {
        let args: Vec<Option<Attribute>> = elems
            .iter()
            .map(|(ty, e, splat)| Some(Attribute::dense(*ty, vec![e[if *splat { 0 } else { i }]])))
            .collect();
        let Some(res) = fold(ir, op, &args) else {
            return false;
        };
        if res.len() != rtys.len() {
            return false;
        }
        for (k, r) in res.iter().enumerate() {
            match r {
                FoldResult::Attr(a) => match a.kind() {
                    AttrKind::DenseElements { ty, elements, .. } if *ty == rtys[k] => {
                        out[k].push(elements[0])
                    }
                    _ => return false,
                },
                FoldResult::Value(_) => return false,
            }
        }
    }
    let news: Vec<Value> = rtys
        .iter()
        .zip(out)
        .map(|(t, e)| cst_attr(ir, op, Attribute::dense(*t, e), *t))
        .collect();
    ir.replace_op(op, &news);
    true
}

// ----- addi / subi / muli ------------------------------------------------------------

/// `addi(subi(a, b), b) -> a` and `addi(b, subi(a, b)) -> a` (upstream's `AddIOp::fold`).
fn addi_of_subi(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    for (s, other) in [(l, r), (r, l)] {
        if let Some(d) = def(ir, s, "arith.subi") {
            if ir.operand(d, 1) == other {
                let a = ir.operand(d, 0);
                return replace(ir, op, a);
            }
        }
    }
    false
}

/// `addi(addi(x, c0), c1) -> addi(x, c0 + c1)` (AddIAddConstant),
/// `addi(subi(x, c0), c1) -> addi(x, c1 - c0)` (AddISubConstantRHS),
/// `addi(subi(c0, x), c1) -> subi(c0 + c1, x)` (AddISubConstantLHS).
fn addi_reassociate(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    let Some(c1) = scalar_int_of(ctx, ir, r) else {
        return false;
    };
    let Some(d) = ir.defining_op(l) else {
        return false;
    };
    let ty = result_type(ir, op);
    if ir.operands(d).len() != 2 {
        return false;
    }
    let (a, b) = (ir.operand(d, 0), ir.operand(d, 1));
    let props = merged_flags(ir, op, d);
    let (name, lhs, c, rhs_const) = match ir.name(d) {
        "arith.addi" => match scalar_int_of(ctx, ir, b) {
            Some(c0) => ("arith.addi", a, c0.wrapping_add(c1), true),
            None => return false,
        },
        "arith.subi" => match (scalar_int_of(ctx, ir, a), scalar_int_of(ctx, ir, b)) {
            (_, Some(c0)) => ("arith.addi", a, c1.wrapping_sub(c0), true),
            (Some(c0), None) => ("arith.subi", b, c0.wrapping_add(c1), false),
            _ => return false,
        },
        _ => return false,
    };
    let Some(k) = cst(ir, op, Const::Int(c), ty) else {
        return false;
    };
    let ops = if rhs_const { [lhs, k] } else { [k, lhs] };
    let v = build(ir, op, name, &ops, ty, &props);
    replace(ir, op, v)
}

/// `addi(x, muli(y, -1)) -> subi(x, y)` (AddIMulNegativeOneRhs) and
/// `addi(muli(x, -1), y) -> subi(y, x)` (AddIMulNegativeOneLhs); no overflow flags.
fn addi_mul_neg_one(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    for (m, other) in [(r, l), (l, r)] {
        if let Some(d) = def(ir, m, "arith.muli") {
            if is_int(ctx, ir, ir.operand(d, 1), -1) {
                let y = ir.operand(d, 0);
                let ty = result_type(ir, op);
                let v = build(ir, op, "arith.subi", &[other, y], ty, &[]);
                return replace(ir, op, v);
            }
        }
    }
    false
}

/// `subi(addi(a, b), b) -> a`, `subi(addi(a, b), a) -> b` (upstream's `SubIOp::fold`).
fn subi_of_addi(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    if let Some(d) = def(ir, l, "arith.addi") {
        let (a, b) = (ir.operand(d, 0), ir.operand(d, 1));
        if b == r {
            return replace(ir, op, a);
        }
        if a == r {
            return replace(ir, op, b);
        }
    }
    false
}

/// The `subi` reassociations of `ArithCanonicalization.td`:
/// `subi(addi(x, c0), c1) -> addi(x, c0 - c1)` (SubIRHSAddConstant),
/// `subi(c1, addi(x, c0)) -> subi(c1 - c0, x)` (SubILHSAddConstant),
/// `subi(subi(x, c0), c1) -> subi(x, c0 + c1)` (SubIRHSSubConstantRHS),
/// `subi(subi(c0, x), c1) -> subi(c0 - c1, x)` (SubIRHSSubConstantLHS),
/// `subi(c1, subi(x, c0)) -> subi(c0 + c1, x)` (SubILHSSubConstantRHS),
/// `subi(c1, subi(c0, x)) -> addi(x, c1 - c0)` (SubILHSSubConstantLHS).
fn subi_reassociate(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    let ty = result_type(ir, op);
    // (new op, non-constant operand, constant, constant on the right)
    let plan = if let Some(c1) = scalar_int_of(ctx, ir, r) {
        ir.defining_op(l).and_then(|d| {
            if !matches!(ir.name(d), "arith.addi" | "arith.subi") {
                return None;
            }
            let (a, b) = (ir.operand(d, 0), ir.operand(d, 1));
            let p = match (
                ir.name(d),
                scalar_int_of(ctx, ir, a),
                scalar_int_of(ctx, ir, b),
            ) {
                ("arith.addi", _, Some(c0)) => ("arith.addi", a, c0.wrapping_sub(c1), true),
                ("arith.subi", _, Some(c0)) => ("arith.subi", a, c0.wrapping_add(c1), true),
                ("arith.subi", Some(c0), None) => ("arith.subi", b, c0.wrapping_sub(c1), false),
                _ => return None,
            };
            Some((d, p))
        })
    } else if let Some(c1) = scalar_int_of(ctx, ir, l) {
        ir.defining_op(r).and_then(|d| {
            if !matches!(ir.name(d), "arith.addi" | "arith.subi") {
                return None;
            }
            let (a, b) = (ir.operand(d, 0), ir.operand(d, 1));
            let p = match (
                ir.name(d),
                scalar_int_of(ctx, ir, a),
                scalar_int_of(ctx, ir, b),
            ) {
                ("arith.addi", _, Some(c0)) => ("arith.subi", a, c1.wrapping_sub(c0), false),
                ("arith.subi", _, Some(c0)) => ("arith.subi", a, c0.wrapping_add(c1), false),
                ("arith.subi", Some(c0), None) => ("arith.addi", b, c1.wrapping_sub(c0), true),
                _ => return None,
            };
            Some((d, p))
        })
    } else {
        None
    };
    let Some((d, (name, x, c, rhs_const))) = plan else {
        return false;
    };
    // SubIRHSAddConstant creates its addi without flags; the others merge them.
    let rhs_add = ir.name(d) == "arith.addi" && rhs_const;
    let props = if rhs_add {
        vec![]
    } else {
        merged_flags(ir, op, d)
    };
    let Some(k) = cst(ir, op, Const::Int(c), ty) else {
        return false;
    };
    let ops = if rhs_const { [x, k] } else { [k, x] };
    let v = build(ir, op, name, &ops, ty, &props);
    replace(ir, op, v)
}

/// `subi(subi(a, b), a) -> subi(0, b)` (SubISubILHSRHSLHS).
fn subi_sub_lhs(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    let Some(d) = def(ir, l, "arith.subi") else {
        return false;
    };
    if ir.operand(d, 0) != r {
        return false;
    }
    let ty = result_type(ir, op);
    let b = ir.operand(d, 1);
    let Some(z) = cst(ir, op, Const::Int(0), ty) else {
        return false;
    };
    let props = merged_flags(ir, op, d);
    let v = build(ir, op, "arith.subi", &[z, b], ty, &props);
    replace(ir, op, v)
}

/// `muli(muli(x, c0), c1) -> muli(x, c0 * c1)` (MulIMulIConstant).
fn muli_reassociate(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    let Some(c1) = scalar_int_of(ctx, ir, r) else {
        return false;
    };
    let Some(d) = def(ir, l, "arith.muli") else {
        return false;
    };
    let Some(c0) = scalar_int_of(ctx, ir, ir.operand(d, 1)) else {
        return false;
    };
    let ty = result_type(ir, op);
    let x = ir.operand(d, 0);
    let props = merged_flags(ir, op, d);
    let Some(k) = cst(ir, op, Const::Int(c0.wrapping_mul(c1)), ty) else {
        return false;
    };
    let v = build(ir, op, "arith.muli", &[x, k], ty, &props);
    replace(ir, op, v)
}

/// Upstream folders: `divsi/divui/ceildivsi/ceildivui/floordivsi(x, 1) -> x`,
/// `remsi/remui(x, 1) -> 0`.
fn div_by_one(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    if !is_int(ctx, ir, ir.operand(op, 1), 1) {
        return false;
    }
    let ty = result_type(ir, op);
    // An i1 `true` is -1 to the signed ops: x / true may overflow (true / true), so only
    // the unsigned ops fold at width 1 (upstream folds them all).
    let signed = ir.name(op).ends_with("si");
    if signed && width(ty) == 1 {
        return false;
    }
    if ir.name(op).starts_with("arith.rem") {
        if ty.is_shaped() && !ty.has_static_shape() {
            return false;
        }
        let Some(z) = cst(ir, op, Const::Int(0), ty) else {
            return false;
        };
        return replace(ir, op, z);
    }
    let x = ir.operand(op, 0);
    replace(ir, op, x)
}

/// Upstream's min/max folders: `op(x, x) -> x`; `maxsi(x, MAX) -> MAX`,
/// `maxsi(x, MIN) -> x`, and the same for `maxui`, `minsi`, `minui` with their bounds.
fn minmax_bounds(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    if l == r {
        return replace(ir, op, l);
    }
    let Some(c) = int_of(ctx, ir, r) else {
        return false;
    };
    let w = width(ir.value_type(r));
    // The bounds of i0 and of integers wider than the i128 constants are not computed.
    if w == 0 || w > 128 {
        return false;
    }
    let (smin, umax) = (sext(1i128 << (w - 1), w), zext(-1, w));
    let (s, u) = (sext(c, w), zext(c, w));
    let (absorbing, identity) = match ir.name(op) {
        "arith.maxsi" => (s == -(smin + 1), s == smin),
        "arith.minsi" => (s == smin, s == -(smin + 1)),
        "arith.maxui" => (u == umax, u == 0),
        "arith.minui" => (u == 0, u == umax),
        _ => return false,
    };
    if absorbing {
        return replace(ir, op, r);
    }
    if identity {
        return replace(ir, op, l);
    }
    false
}

pub const CANONICALIZE_ADDI: &[CanonFn] = &[
    constants_to_rhs,
    addi_of_subi,
    addi_reassociate,
    addi_mul_neg_one,
    fold_dense_elements,
];
pub const CANONICALIZE_SUBI: &[CanonFn] = &[
    subi_of_addi,
    subi_reassociate,
    subi_sub_lhs,
    fold_dense_elements,
];
pub const CANONICALIZE_MULI: &[CanonFn] =
    &[constants_to_rhs, muli_reassociate, fold_dense_elements];
pub const CANONICALIZE_DIVSI: &[CanonFn] = &[div_by_one, fold_dense_elements];
pub const CANONICALIZE_DIVUI: &[CanonFn] = CANONICALIZE_DIVSI;
pub const CANONICALIZE_CEILDIVSI: &[CanonFn] = CANONICALIZE_DIVSI;
pub const CANONICALIZE_CEILDIVUI: &[CanonFn] = CANONICALIZE_DIVSI;
pub const CANONICALIZE_FLOORDIVSI: &[CanonFn] = CANONICALIZE_DIVSI;
pub const CANONICALIZE_REMSI: &[CanonFn] = CANONICALIZE_DIVSI;
pub const CANONICALIZE_REMUI: &[CanonFn] = CANONICALIZE_DIVSI;
pub const CANONICALIZE_MAXSI: &[CanonFn] = &[constants_to_rhs, minmax_bounds, fold_dense_elements];
pub const CANONICALIZE_MAXUI: &[CanonFn] = CANONICALIZE_MAXSI;
pub const CANONICALIZE_MINSI: &[CanonFn] = CANONICALIZE_MAXSI;
pub const CANONICALIZE_MINUI: &[CanonFn] = CANONICALIZE_MAXSI;
pub const CANONICALIZE_SHLI: &[CanonFn] = &[fold_dense_elements];
pub const CANONICALIZE_SHRSI: &[CanonFn] = &[fold_dense_elements];
pub const CANONICALIZE_SHRUI: &[CanonFn] = &[fold_dense_elements];
/// Commutative float ops: constants to the right, then their folders apply.
pub const CANONICALIZE_MAXIMUMF: &[CanonFn] = &[constants_to_rhs, fold_dense_elements];
pub const CANONICALIZE_MINIMUMF: &[CanonFn] = CANONICALIZE_MAXIMUMF;
pub const CANONICALIZE_MAXNUMF: &[CanonFn] = CANONICALIZE_MAXIMUMF;
pub const CANONICALIZE_MINNUMF: &[CanonFn] = CANONICALIZE_MAXIMUMF;

pub(crate) use bits::*;
pub(crate) const COMMUTE: CanonFn = constants_to_rhs;
pub(crate) const DENSE: CanonFn = fold_dense_elements;
