//! Helpers shared by the hand-written hooks: constant values, folding arithmetic,
//! shapes, and error formatting.

use ftuner_ir::dialect::FoldResult;
use ftuner_ir::float::{bits_to_f64, f64_to_bits};
use ftuner_ir::{
    intern_name, AttrKind, Attribute, Ir, OpId, OpSpec, Scalar, Type, TypeKind, Value, DYNAMIC,
};

/// A scalar or splat constant value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    Int(i128),
    Float(f64),
}

/// The scalar (or splat) value of a constant attribute and its (shaped) type.
pub fn const_value(a: Attribute) -> Option<(Const, Type)> {
    match a.kind() {
        AttrKind::Integer { value, ty } => Some((Const::Int(*value), *ty)),
        AttrKind::Bool(b) => Some((Const::Int(*b as i128), Type::i1())),
        AttrKind::Float { bits, ty } => {
            Some((Const::Float(bits_to_f64(*bits, ty.float_kind()?)), *ty))
        }
        AttrKind::DenseElements {
            ty,
            splat: true,
            elements,
        } => {
            let e = ty.element_type();
            match elements.first()? {
                Scalar::Int(v) => Some((Const::Int(*v), *ty)),
                Scalar::Float(b) => Some((Const::Float(bits_to_f64(*b, e.float_kind()?)), *ty)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A constant attribute of type `ty` (scalar, or splat for shaped types).
pub fn make_const(c: Const, ty: Type) -> Option<Attribute> {
    let elem = ty.element_type();
    let scalar = match c {
        Const::Int(v) => {
            if !(elem.is_int_or_index() || elem.is_integer()) {
                return None;
            }
            Scalar::Int(ftuner_ir::attrs::truncate_to_width(v, elem))
        }
        Const::Float(f) => {
            elem.float_kind()?;
            Scalar::Float(f64_to_bits(f, elem))
        }
    };
    if ty.is_shaped() {
        if !ty.has_static_shape() {
            return None;
        }
        return Some(Attribute::dense(ty, vec![scalar]));
    }
    Some(match scalar {
        Scalar::Int(v) => Attribute::int(v, ty),
        Scalar::Float(b) => Attribute::get(AttrKind::Float { bits: b, ty }),
        _ => return None,
    })
}

pub fn fold_float_binary(
    ir: &Ir,
    op: OpId,
    consts: &[Option<Attribute>],
    f: fn(f64, f64) -> f64,
) -> Option<Vec<FoldResult>> {
    let (a, ty) = const_value(consts.first().copied()??)?;
    let (b, _) = const_value(consts.get(1).copied()??)?;
    let (Const::Float(x), Const::Float(y)) = (a, b) else {
        return None;
    };
    let rt = ir.value_type(ir.result(op, 0));
    let _ = ty;
    Some(vec![FoldResult::Attr(make_const(
        Const::Float(f(x, y)),
        rt,
    )?)])
}

pub fn fold_float_unary(
    ir: &Ir,
    op: OpId,
    consts: &[Option<Attribute>],
    f: fn(f64) -> f64,
) -> Option<Vec<FoldResult>> {
    let (a, _) = const_value(consts.first().copied()??)?;
    let Const::Float(x) = a else { return None };
    let rt = ir.value_type(ir.result(op, 0));
    Some(vec![FoldResult::Attr(make_const(Const::Float(f(x)), rt)?)])
}

/// Fold an op by its [`ftuner_ir::ScalarEval`] when every operand is a constant of its
/// kind (scalar or splat).
pub fn fold_scalar_eval(
    ir: &Ir,
    op: OpId,
    consts: &[Option<Attribute>],
    eval: ftuner_ir::ScalarEval,
) -> Option<Vec<FoldResult>> {
    let rt = ir.value_type(ir.result(op, 0));
    if consts.iter().any(|c| c.is_some_and(is_dense_non_splat)) {
        return fold_scalar_eval_elementwise(rt, consts, eval);
    }
    let value = if eval.is_int() {
        let args = consts
            .iter()
            .map(|c| match const_value((*c)?)? {
                (Const::Int(x), _) => Some(x),
                _ => None,
            })
            .collect::<Option<Vec<i128>>>()?;
        Const::Int(eval.apply_int(&args, int_width(rt))?)
    } else {
        let args = consts
            .iter()
            .map(|c| match const_value((*c)?)? {
                (Const::Float(x), _) => Some(x),
                _ => None,
            })
            .collect::<Option<Vec<f64>>>()?;
        let r = eval.apply(&args)?;
        // Outside the function's domain (log2(-1), sqrt(-1)) upstream leaves the op: a NaN
        // from operands that are not NaN is not folded.
        if r.is_nan() && !args.iter().any(|x| x.is_nan()) {
            return None;
        }
        Const::Float(r)
    };
    Some(vec![FoldResult::Attr(make_const(value, rt)?)])
}

fn is_dense_non_splat(a: Attribute) -> bool {
    matches!(a.kind(), AttrKind::DenseElements { splat: false, .. })
}

/// [`fold_scalar_eval`] over dense constants of a static shape, element by element (a
/// splat operand gives its one value to every element); nothing is folded when one
/// element would not fold.
fn fold_scalar_eval_elementwise(
    rt: Type,
    consts: &[Option<Attribute>],
    eval: ftuner_ir::ScalarEval,
) -> Option<Vec<FoldResult>> {
    let n = usize::try_from(rt.num_elements()?).ok()?;
    let columns = consts
        .iter()
        .map(|c| match (*c)?.kind() {
            AttrKind::DenseElements {
                ty,
                splat,
                elements,
            } => {
                let e = ty.element_type();
                let one = |s: &Scalar| match s {
                    Scalar::Int(v) => Some(Const::Int(*v)),
                    Scalar::Float(b) => Some(Const::Float(bits_to_f64(*b, e.float_kind()?))),
                    _ => None,
                };
                match (*splat, elements.len()) {
                    (true, _) => Some(vec![one(elements.first()?)?; n]),
                    (false, k) if k == n => elements.iter().map(one).collect(),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect::<Option<Vec<Vec<Const>>>>()?;
    let elem = rt.element_type();
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let value = if eval.is_int() {
            let args = columns
                .iter()
                .map(|c| match c[k] {
                    Const::Int(x) => Some(x),
                    Const::Float(_) => None,
                })
                .collect::<Option<Vec<i128>>>()?;
            let v = eval.apply_int(&args, int_width(rt))?;
            Scalar::Int(ftuner_ir::attrs::truncate_to_width(v, elem))
        } else {
            let args = columns
                .iter()
                .map(|c| match c[k] {
                    Const::Float(x) => Some(x),
                    Const::Int(_) => None,
                })
                .collect::<Option<Vec<f64>>>()?;
            let r = eval.apply(&args)?;
            if r.is_nan() && !args.iter().any(|x| x.is_nan()) {
                return None;
            }
            elem.float_kind()?;
            Scalar::Float(f64_to_bits(r, elem))
        };
        out.push(value);
    }
    Some(vec![FoldResult::Attr(Attribute::dense(rt, out))])
}

/// The flags of a `fastmath` attribute of `dialect` (`#arith.fastmath<nnan, ninf>`,
/// `#llvm.fastmath<fast>`), `none` left out; empty for any other attribute.
pub fn fastmath_flags(a: Attribute, dialect: &str) -> Vec<&'static str> {
    let AttrKind::Dialect { dialect: d, body } = a.kind() else {
        return vec![];
    };
    let flags = body
        .trim_start_matches('.')
        .strip_prefix("fastmath<")
        .and_then(|b| b.strip_suffix('>'))
        .filter(|_| d == dialect)
        .unwrap_or("");
    flags
        .split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty() && *f != "none")
        .collect()
}

/// Integer width of an integer-like type (index: 64).
pub fn int_width(t: Type) -> u32 {
    let e = t.element_type();
    if e.is_index() {
        64
    } else {
        e.int_width().unwrap_or(64)
    }
}

pub fn fold_int_binary(
    ir: &Ir,
    op: OpId,
    consts: &[Option<Attribute>],
    f: fn(i128, i128, u32) -> Option<i128>,
) -> Option<Vec<FoldResult>> {
    let (a, _) = const_value(consts.first().copied()??)?;
    let (b, _) = const_value(consts.get(1).copied()??)?;
    let (Const::Int(x), Const::Int(y)) = (a, b) else {
        return None;
    };
    let rt = ir.value_type(ir.result(op, 0));
    let v = f(x, y, int_width(rt))?;
    Some(vec![FoldResult::Attr(make_const(Const::Int(v), rt)?)])
}

/// Sign-extend the low `w` bits.
pub fn sext(v: i128, w: u32) -> i128 {
    if w >= 128 {
        return v;
    }
    if w == 0 {
        return 0;
    }
    // Shifts, not `(1i128 << w) - 1`, which overflows at w = 127.
    (v << (128 - w)) >> (128 - w)
}
/// Zero-extend the low `w` bits.
pub fn zext(v: i128, w: u32) -> i128 {
    if w >= 128 {
        return v;
    }
    v & ((1u128 << w) - 1) as i128
}

pub fn shape_str(s: &[i64]) -> String {
    s.iter()
        .map(|d| {
            if *d == DYNAMIC {
                "?".to_string()
            } else {
                d.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("x")
}

/// The element type of shaped types, or the type itself.
pub fn elem(t: Type) -> Type {
    t.element_type()
}

/// Same kind of container (scalar, vector of shape, tensor of shape) with `e` elements.
pub fn with_elem(t: Type, e: Type) -> Type {
    match t.kind() {
        TypeKind::Vector {
            shape, scalable, ..
        } => Type::get(TypeKind::Vector {
            shape: shape.clone(),
            scalable: scalable.clone(),
            elem: e,
        }),
        TypeKind::RankedTensor {
            shape, encoding, ..
        } => Type::get(TypeKind::RankedTensor {
            shape: shape.clone(),
            elem: e,
            encoding: *encoding,
        }),
        TypeKind::UnrankedTensor { .. } => Type::get(TypeKind::UnrankedTensor { elem: e }),
        _ => e,
    }
}

/// Result types of an op.
pub fn result_types(ir: &Ir, op: OpId) -> Vec<Type> {
    value_types(ir, ir.results(op))
}

/// The types of `vs`.
pub fn value_types(ir: &Ir, vs: &[ftuner_ir::Value]) -> Vec<Type> {
    vs.iter().map(|v| ir.value_type(*v)).collect()
}

/// A new op like `op` (same name, discardable attributes and properties) with
/// `operands` and `types`, before `op`, taking `op`'s regions' blocks.
pub fn rebuild_op(ir: &mut Ir, op: OpId, operands: Vec<Value>, types: Vec<Type>) -> OpId {
    let n = ir.regions_of(op).len();
    let spec = OpSpec::new(intern_name(ir.name(op)), ir.loc(op))
        .operands(operands)
        .results(types)
        .regions(n);
    let new = ir.create_op(spec);
    let (props, attrs) = (ir.op(op).props, ir.op(op).attrs);
    ir.op_mut(new).props = props;
    ir.op_mut(new).attrs = attrs;
    ir.insert_before(op, new);
    for r in 0..n {
        let (from, to) = (ir.regions_of(op)[r], ir.regions_of(new)[r]);
        ir.take_body(to, from);
    }
    new
}
