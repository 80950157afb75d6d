//! `arith`: verifiers, folders, constant syntax and `select`'s custom syntax.

pub use crate::arith_canonicalize::*;
use crate::arith_semantics::{float_binary, float_to_int, int_binary};
use crate::util::*;
use ftuner_ir::dialect::{FoldResult, TypeEnv};
use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{AttrKind, Attribute, Ir, OpId, OpPrinter, OpSpec, Type, TypeKind};

/// Constants of any dialect are materialized as `arith.constant`.
pub fn register_extra(reg: &mut ftuner_ir::Registry) {
    reg.materializers.insert("arith", materialize_constant);
}

pub fn materialize_constant(
    ir: &mut Ir,
    value: Attribute,
    ty: Type,
    loc: Attribute,
) -> Option<OpId> {
    let v = if value.typed_type() == Some(ty) {
        value
    } else {
        return None;
    };
    Some(
        ir.create_op(
            OpSpec::new(ftuner_ir::intern_name("arith.constant"), loc)
                .prop("value", v)
                .results([ty]),
        ),
    )
}

// ----- constant --------------------------------------------------------------------
pub fn infer_constant(env: &mut TypeEnv) -> Result<(), String> {
    let v = env.attr("value").ok_or("requires attribute 'value'")?;
    let t = v.typed_type().ok_or("value must be a typed attribute")?;
    env.set("result", vec![t]);
    Ok(())
}
pub fn verify_constant(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let v = ir.attr(op, "value").ok_or("requires attribute 'value'")?;
    let rt = ir.value_type(ir.result(op, 0));
    let vt = v.typed_type().ok_or("value must be a typed attribute")?;
    if vt != rt {
        return Err(format!(
            "failed to verify that all of {{value, result}} have same type ('{vt}' vs '{rt}')"
        ));
    }
    if !(rt.is_int_or_index()
        || rt.is_float()
        || rt.is_integer()
        || rt.is_shaped()
        || matches!(rt.kind(), TypeKind::Complex(_)))
    {
        return Err(format!("unsupported type for constant: {rt}"));
    }
    if rt.is_integer() && !rt.is_signless_integer() {
        return Err("integer return type must be signless".into());
    }
    Ok(())
}
pub fn fold_constant(ir: &mut Ir, op: OpId, _c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    ir.attr(op, "value").map(|v| vec![FoldResult::Attr(v)])
}
pub fn asm_names_constant(ir: &Ir, op: OpId, f: &mut dyn FnMut(ftuner_ir::Value, String)) {
    let r = ir.result(op, 0);
    let t = ir.value_type(r);
    let name = match ir.attr(op, "value").map(|a| a.kind()) {
        Some(AttrKind::Bool(b)) => {
            if *b {
                "true".to_string()
            } else {
                "false".to_string()
            }
        }
        Some(AttrKind::Integer { value, ty }) => {
            if ty.is_index() {
                format!("c{value}")
            } else {
                format!("c{value}_{ty}")
            }
        }
        _ => "cst".to_string(),
    };
    let _ = t;
    f(r, name);
}

// ----- select ----------------------------------------------------------------------
/// `arith.select %c, %a, %b : f32` or `: vector<4xi1>, vector<4xf32>`.
pub fn parse_select(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let c = p.parse_operand()?;
    p.expect(Tok::Comma, "','")?;
    let a = p.parse_operand()?;
    p.expect(Tok::Comma, "','")?;
    let b = p.parse_operand()?;
    let mut attrs = vec![];
    p.parse_optional_attr_dict(&mut attrs)?;
    for (k, v) in attrs {
        st.add_attr(&k, v);
    }
    p.expect(Tok::Colon, "':'")?;
    let t1 = p.parse_type()?;
    let (ct, rt) = if p.consume_if(Tok::Comma) {
        (t1, p.parse_type()?)
    } else {
        (Type::i1(), t1)
    };
    st.operands.push(p.resolve_operand(&c, ct)?);
    st.operands.push(p.resolve_operand(&a, rt)?);
    st.operands.push(p.resolve_operand(&b, rt)?);
    st.result_types.push(rt);
    Ok(())
}
pub fn print_select(pr: &mut OpPrinter<'_>, op: OpId) {
    let ops = pr.ir.operands(op).to_vec();
    pr.write(" ");
    pr.print_operands(&ops);
    pr.print_optional_attr_dict(op, &[]);
    pr.write(" : ");
    let ct = pr.ir.value_type(ops[0]);
    if ct.is_shaped() {
        pr.print_type(ct);
        pr.write(", ");
    }
    pr.print_type(pr.ir.value_type(pr.ir.result(op, 0)));
}
pub fn verify_select(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let o = ir.operands(op);
    let (ct, at, bt) = (
        ir.value_type(o[0]),
        ir.value_type(o[1]),
        ir.value_type(o[2]),
    );
    let rt = ir.value_type(ir.result(op, 0));
    if at != bt || at != rt {
        return Err(
            "failed to verify that all of {true_value, false_value, result} have same type".into(),
        );
    }
    if ct.is_shaped() && ct.shape() != rt.shape() {
        return Err("expected condition type to have the same shape as the result type".into());
    }
    Ok(())
}
pub fn fold_select(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    let o = ir.operands(op).to_vec();
    if o[1] == o[2] {
        return Some(vec![FoldResult::Value(o[1])]);
    }
    match c.first().copied().flatten().and_then(const_value) {
        Some((Const::Int(v), t)) if !t.is_shaped() => {
            Some(vec![FoldResult::Value(if v != 0 { o[1] } else { o[2] })])
        }
        _ => None,
    }
}

// ----- float binary ----------------------------------------------------------------
// What each op computes is `arith_semantics::float_binary`, shared with the interpreter.
fn float_op(name: &str, a: f64, b: f64) -> f64 {
    float_binary(name, a, b).expect("a float binary op of arith")
}
macro_rules! fold_fbin {
    ($($name:ident => $op:literal),* $(,)?) => {$(
        pub fn $name(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
            fold_float_binary(ir, op, c, |a, b| float_op($op, a, b))
        }
    )*};
}
fold_fbin! {
    fold_subf => "subf",
    fold_divf => "divf",
    fold_remf => "remf",
    fold_maximumf => "maximumf",
    fold_minimumf => "minimumf",
    fold_maxnumf => "maxnumf",
    fold_minnumf => "minnumf",
}
/// `addf(x, -0.0) -> x` and constant folding.
pub fn fold_addf(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    if let Some((Const::Float(v), _)) = c.get(1).copied().flatten().and_then(const_value) {
        if v == 0.0 && v.is_sign_negative() {
            return Some(vec![FoldResult::Value(ir.operand(op, 0))]);
        }
    }
    fold_float_binary(ir, op, c, |a, b| float_op("addf", a, b))
}
/// `mulf(x, 1.0) -> x` and constant folding.
pub fn fold_mulf(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    if let Some((Const::Float(v), _)) = c.get(1).copied().flatten().and_then(const_value) {
        if v == 1.0 {
            return Some(vec![FoldResult::Value(ir.operand(op, 0))]);
        }
    }
    fold_float_binary(ir, op, c, |a, b| float_op("mulf", a, b))
}
pub fn fold_negf(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_float_unary(ir, op, c, |a| -a)
}

// ----- integer binary ----------------------------------------------------------------
// What each op computes is `arith_semantics::int_binary`, shared with the interpreter.
macro_rules! fold_ibin {
    ($($name:ident => $op:literal),* $(,)?) => {$(
        pub fn $name(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
            fold_int_binary(ir, op, c, |a, b, w| int_binary($op, a, b, w))
        }
    )*};
}
fold_ibin! {
    fold_divsi => "divsi",
    fold_divui => "divui",
    fold_remsi => "remsi",
    fold_remui => "remui",
    fold_ceildivsi => "ceildivsi",
    fold_ceildivui => "ceildivui",
    fold_floordivsi => "floordivsi",
    fold_xori => "xori",
    fold_maxsi => "maxsi",
    fold_maxui => "maxui",
    fold_minsi => "minsi",
    fold_minui => "minui",
    fold_shli => "shli",
    fold_shrsi => "shrsi",
    fold_shrui => "shrui",
}
/// `andi`/`ori` with one side a constant of all zeros or all ones folds to a side
/// (as MLIR's folders do, whichever side the constant is on); `x op x` is `x`.
fn fold_logic(
    ir: &mut Ir,
    op: OpId,
    c: &[Option<Attribute>],
    and: bool,
) -> Option<Vec<FoldResult>> {
    let (a, b) = (ir.operand(op, 0), ir.operand(op, 1));
    if a == b {
        return Some(vec![FoldResult::Value(a)]);
    }
    let w = ir
        .value_type(ir.result(op, 0))
        .element_type()
        .int_width()
        .unwrap_or(64);
    let ones = |v: i128| zext(v, w) == zext(-1, w);
    for (k, other) in [(1, a), (0, b)] {
        match int_const(c, k) {
            // x & 1...1 = x, x | 0 = x
            Some(v) if (and && ones(v)) || (!and && zext(v, w) == 0) => {
                return Some(vec![FoldResult::Value(other)])
            }
            // x & 0 = 0, x | 1...1 = 1...1
            Some(_)
                if c.get(k).copied().flatten().is_some() && !ir.value_type(other).is_vector() =>
            {
                let v = int_const(c, k)?;
                if (and && zext(v, w) == 0) || (!and && ones(v)) {
                    return Some(vec![FoldResult::Value(ir.operand(op, k))]);
                }
            }
            _ => {}
        }
    }
    if and {
        fold_int_binary(ir, op, c, |x, y, w| int_binary("andi", x, y, w))
    } else {
        fold_int_binary(ir, op, c, |x, y, w| int_binary("ori", x, y, w))
    }
}
pub fn fold_andi(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_logic(ir, op, c, true)
}
pub fn fold_ori(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_logic(ir, op, c, false)
}
fn int_const(c: &[Option<Attribute>], i: usize) -> Option<i128> {
    match c.get(i).copied().flatten().and_then(const_value) {
        Some((Const::Int(v), _)) => Some(v),
        _ => None,
    }
}
pub fn fold_addi(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    if int_const(c, 1) == Some(0) {
        return Some(vec![FoldResult::Value(ir.operand(op, 0))]);
    }
    fold_int_binary(ir, op, c, |a, b, w| int_binary("addi", a, b, w))
}
pub fn fold_subi(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    if int_const(c, 1) == Some(0) {
        return Some(vec![FoldResult::Value(ir.operand(op, 0))]);
    }
    if ir.operand(op, 0) == ir.operand(op, 1) {
        let t = ir.value_type(ir.result(op, 0));
        return make_const(Const::Int(0), t).map(|a| vec![FoldResult::Attr(a)]);
    }
    fold_int_binary(ir, op, c, |a, b, w| int_binary("subi", a, b, w))
}
pub fn fold_muli(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    if int_const(c, 1) == Some(1) {
        return Some(vec![FoldResult::Value(ir.operand(op, 0))]);
    }
    if int_const(c, 1) == Some(0) {
        let t = ir.value_type(ir.result(op, 0));
        return make_const(Const::Int(0), t).map(|a| vec![FoldResult::Attr(a)]);
    }
    fold_int_binary(ir, op, c, |a, b, w| int_binary("muli", a, b, w))
}

// ----- comparisons -------------------------------------------------------------------
fn bool_like(t: Type) -> Type {
    with_elem(t, Type::i1())
}
pub fn infer_cmpi(env: &mut TypeEnv) -> Result<(), String> {
    if let Some(t) = env.get1("lhs") {
        env.set("result", vec![bool_like(t)]);
    }
    Ok(())
}
pub fn infer_cmpf(env: &mut TypeEnv) -> Result<(), String> {
    infer_cmpi(env)
}
pub fn fold_cmpi(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    let pred = ir.attr(op, "predicate")?.as_i64()?;
    let rt = ir.value_type(ir.result(op, 0));
    if ir.operand(op, 0) == ir.operand(op, 1) {
        // eq, sle, sge, ule, uge are true for equal operands.
        let v = matches!(pred, 0 | 3 | 5 | 7 | 9);
        return make_const(Const::Int(v as i128), rt).map(|a| vec![FoldResult::Attr(a)]);
    }
    let (a, b) = (int_const(c, 0)?, int_const(c, 1)?);
    let w = int_width(ir.value_type(ir.operand(op, 0)));
    let (sa, sb) = (sext(a, w), sext(b, w));
    // Unsigned in u128: at w = 128 a zero-extended i128 is still negative.
    let (ua, ub) = (zext(a, w) as u128, zext(b, w) as u128);
    let v = match pred {
        0 => sa == sb,
        1 => sa != sb,
        2 => sa < sb,
        3 => sa <= sb,
        4 => sa > sb,
        5 => sa >= sb,
        6 => ua < ub,
        7 => ua <= ub,
        8 => ua > ub,
        9 => ua >= ub,
        _ => return None,
    };
    make_const(Const::Int(v as i128), rt).map(|a| vec![FoldResult::Attr(a)])
}
pub fn fold_cmpf(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    let pred = ir.attr(op, "predicate")?.as_i64()?;
    let rt = ir.value_type(ir.result(op, 0));
    let f = |i: usize| match c.get(i).copied().flatten().and_then(const_value) {
        Some((Const::Float(v), _)) => Some(v),
        _ => None,
    };
    let (a, b) = (f(0)?, f(1)?);
    let uno = a.is_nan() || b.is_nan();
    let v = match pred {
        0 => false,
        1 => !uno && a == b,
        2 => !uno && a > b,
        3 => !uno && a >= b,
        4 => !uno && a < b,
        5 => !uno && a <= b,
        6 => !uno && a != b,
        7 => !uno,
        8 => uno || a == b,
        9 => uno || a > b,
        10 => uno || a >= b,
        11 => uno || a < b,
        12 => uno || a <= b,
        13 => uno || a != b,
        14 => uno,
        15 => true,
        _ => return None,
    };
    make_const(Const::Int(v as i128), rt).map(|a| vec![FoldResult::Attr(a)])
}

// ----- casts -------------------------------------------------------------------------
fn cast_shapes(ir: &Ir, op: OpId) -> (Type, Type) {
    (
        ir.value_type(ir.operand(op, 0)),
        ir.value_type(ir.result(op, 0)),
    )
}
fn same_container(a: Type, b: Type) -> bool {
    a.is_shaped() == b.is_shaped() && a.shape() == b.shape() && a.is_tensor() == b.is_tensor()
}
macro_rules! cast_verifier {
    ($name:ident, $check:expr, $msg:expr) => {
        pub fn $name(_: &ftuner_ir::Context, ir: &Ir, op: OpId) -> Result<(), String> {
            let (i, o) = cast_shapes(ir, op);
            if !same_container(i, o) {
                return Err(format!(
                    "operand type '{i}' and result type '{o}' are cast incompatible"
                ));
            }
            let (ie, oe) = (i.element_type(), o.element_type());
            let ok: fn(Type, Type) -> bool = $check;
            if !ok(ie, oe) {
                return Err(format!("result type '{o}' {} '{i}'", $msg));
            }
            Ok(())
        }
    };
}
cast_verifier!(
    verify_extf,
    |i, o| i.bit_width() < o.bit_width(),
    "must be wider than operand type"
);
cast_verifier!(
    verify_truncf,
    |i, o| i.bit_width() > o.bit_width(),
    "must be shorter than operand type"
);
cast_verifier!(
    verify_extsi,
    |i, o| i.bit_width() < o.bit_width(),
    "must be wider than operand type"
);
cast_verifier!(
    verify_extui,
    |i, o| i.bit_width() < o.bit_width(),
    "must be wider than operand type"
);
cast_verifier!(
    verify_trunci,
    |i, o| i.bit_width() > o.bit_width(),
    "must be shorter than operand type"
);
cast_verifier!(
    verify_sitofp,
    |i, o| i.is_integer() && o.is_float(),
    "is not a valid conversion from"
);
cast_verifier!(
    verify_uitofp,
    |i, o| i.is_integer() && o.is_float(),
    "is not a valid conversion from"
);
cast_verifier!(
    verify_fptosi,
    |i, o| i.is_float() && o.is_integer(),
    "is not a valid conversion from"
);
cast_verifier!(
    verify_fptoui,
    |i, o| i.is_float() && o.is_integer(),
    "is not a valid conversion from"
);
cast_verifier!(
    verify_index_cast,
    |i, o| i.is_index() != o.is_index(),
    "is not a valid index cast from"
);
cast_verifier!(
    verify_index_castui,
    |i, o| i.is_index() != o.is_index(),
    "is not a valid index cast from"
);
cast_verifier!(
    verify_bitcast,
    |i, o| i.bit_width() == o.bit_width(),
    "must have the same bit width as"
);

fn fold_cast_with(
    ir: &Ir,
    op: OpId,
    c: &[Option<Attribute>],
    f: impl Fn(Const, Type, Type) -> Option<Const>,
) -> Option<Vec<FoldResult>> {
    let (v, _) = const_value(c.first().copied()??)?;
    let (i, o) = cast_shapes(ir, op);
    let r = f(v, i.element_type(), o.element_type())?;
    Some(vec![FoldResult::Attr(make_const(r, o)?)])
}
pub fn fold_extf(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_cast_with(ir, op, c, |v, _, _| Some(v))
}
/// Folds only when the value is exactly representable in the narrower type (as
/// upstream), so no rounding-mode question arises.
pub fn fold_truncf(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    if ir.attr(op, "roundingmode").is_some() {
        return None;
    }
    fold_cast_with(ir, op, c, |v, _, o| match v {
        Const::Float(x) => {
            let back =
                ftuner_ir::float::bits_to_f64(ftuner_ir::float::f64_to_bits(x, o), o.float_kind()?);
            (back == x || (x.is_nan() && back.is_nan())).then_some(v)
        }
        Const::Int(_) => None,
    })
}
pub fn fold_extsi(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_cast_with(ir, op, c, |v, i, _| {
        if let Const::Int(x) = v {
            Some(Const::Int(sext(x, int_width(i))))
        } else {
            None
        }
    })
}
pub fn fold_extui(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_cast_with(ir, op, c, |v, i, _| {
        if let Const::Int(x) = v {
            Some(Const::Int(zext(x, int_width(i))))
        } else {
            None
        }
    })
}
pub fn fold_trunci(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_cast_with(ir, op, c, |v, _, o| {
        if let Const::Int(x) = v {
            Some(Const::Int(sext(x, int_width(o))))
        } else {
            None
        }
    })
}
/// An integer converted to float type `o`, rounded once (through f64, an i64 converted
/// to f32 could round twice).
fn int_to_float(v: i128, o: Type) -> Const {
    match o.float_kind() {
        Some(ftuner_ir::FloatKind::F32) => Const::Float(v as f32 as f64),
        _ => Const::Float(v as f64),
    }
}
pub fn fold_sitofp(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_cast_with(ir, op, c, |v, i, o| match v {
        Const::Int(x) => Some(int_to_float(sext(x, int_width(i)), o)),
        Const::Float(_) => None,
    })
}
pub fn fold_uitofp(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_cast_with(ir, op, c, |v, i, o| match v {
        Const::Int(x) => Some(int_to_float(zext(x, int_width(i)), o)),
        Const::Float(_) => None,
    })
}
/// Folds only where the result is defined: NaN, infinities and values out of the result
/// type's range are poison (`arith_semantics::float_to_int`).
pub fn fold_fptosi(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_cast_with(ir, op, c, |v, _, o| match v {
        Const::Float(x) => float_to_int(x, int_width(o), true).map(Const::Int),
        Const::Int(_) => None,
    })
}
pub fn fold_fptoui(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_cast_with(ir, op, c, |v, _, o| match v {
        Const::Float(x) => float_to_int(x, int_width(o), false).map(Const::Int),
        Const::Int(_) => None,
    })
}
pub fn fold_index_cast(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    fold_cast_with(ir, op, c, |v, i, _| {
        if let Const::Int(x) = v {
            Some(Const::Int(sext(x, int_width(i))))
        } else {
            None
        }
    })
}
pub fn fold_index_castui(
    ir: &mut Ir,
    op: OpId,
    c: &[Option<Attribute>],
) -> Option<Vec<FoldResult>> {
    fold_cast_with(ir, op, c, |v, i, _| {
        if let Const::Int(x) = v {
            Some(Const::Int(zext(x, int_width(i))))
        } else {
            None
        }
    })
}
/// The identity, or a constant's bits read as the result type.
pub fn fold_bitcast(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    let (i, o) = cast_shapes(ir, op);
    if i == o {
        return Some(vec![FoldResult::Value(ir.operand(op, 0))]);
    }
    fold_cast_with(ir, op, c, |v, i, o| {
        let bits = match v {
            Const::Int(x) => zext(x, int_width(i)) as u128,
            Const::Float(x) => {
                let w = i.float_kind()?.width();
                ftuner_ir::float::f64_to_bits(x, i) & ((1u128 << w) - 1)
            }
        };
        Some(match o.float_kind() {
            Some(k) => Const::Float(ftuner_ir::float::bits_to_f64(bits, k)),
            None => Const::Int(sext(bits as i128, int_width(o))),
        })
    })
}
