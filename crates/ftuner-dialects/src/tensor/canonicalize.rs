//! `tensor` canonicalization: upstream folders and patterns ours lacked, as patterns
//! (each names the upstream folder or pattern it follows).

use super::cast_folds::{
    cast_into_producer, collapse_of_producer, extract_through, generate_static, insert_of_cast,
    insert_same_splat, pad_of_cast, slice_of_cast,
};
use super::slices::{
    extract_after_insert, extract_of_splat, insert_over_same_slice, pad_constants, pad_nothing,
    slice_constants,
};
use crate::arith_canonicalize::{cst_attr, replace, result_type};
use crate::cf::constant_of;
use ftuner_ir::dialect::CanonFn;
use ftuner_ir::Context;
use ftuner_ir::{AttrKind, Attribute, Ir, OpId, Scalar, Type, Value, DYNAMIC};

/// A scalar constant attribute as a dense element.
pub(super) fn scalar_of(a: Attribute) -> Option<Scalar> {
    match a.kind() {
        AttrKind::Integer { value, .. } => Some(Scalar::Int(*value)),
        AttrKind::Bool(b) => Some(Scalar::Int(*b as i128)),
        AttrKind::Float { bits, .. } => Some(Scalar::Float(*bits)),
        _ => None,
    }
}

/// A dense element as a scalar constant attribute of type `e`.
fn attr_of(s: Scalar, e: Type) -> Option<Attribute> {
    match s {
        Scalar::Int(v) => Some(Attribute::int(v, e)),
        Scalar::Float(b) => Some(Attribute::get(AttrKind::Float { bits: b, ty: e })),
        _ => None,
    }
}

/// `tensor.rank` of a ranked tensor is a constant (upstream's `RankOp::fold`).
fn rank_of_ranked(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(shape) = ir.value_type(ir.operand(op, 0)).shape() else {
        return false;
    };
    let v = cst_attr(ir, op, Attribute::index(shape.len() as i64), Type::index());
    replace(ir, op, v)
}

/// `tensor.splat` of a constant into a static shape is a splat constant (upstream's
/// `SplatOp::fold`).
fn splat_of_constant(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let ty = result_type(ir, op);
    if !ty.has_static_shape() {
        return false;
    }
    let Some(s) = constant_of(ctx, ir, ir.operand(op, 0)).and_then(scalar_of) else {
        return false;
    };
    let v = cst_attr(ir, op, Attribute::dense(ty, vec![s]), ty);
    replace(ir, op, v)
}

/// `tensor.from_elements` of constants is a constant (upstream's
/// `FromElementsOp::fold`).
fn from_elements_of_constants(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let ty = result_type(ir, op);
    if !ty.has_static_shape() {
        return false;
    }
    let elems: Option<Vec<Scalar>> = ir
        .operands(op)
        .iter()
        .map(|v| constant_of(ctx, ir, *v).and_then(scalar_of))
        .collect();
    let Some(elems) = elems else {
        return false;
    };
    if elems.len() as i64 != ty.num_elements().unwrap_or(-1) {
        return false;
    }
    let v = cst_attr(ir, op, Attribute::dense(ty, elems), ty);
    replace(ir, op, v)
}

/// Row-major position of constant `indices` in `shape`, if in bounds.
fn linear_index(ctx: &Context, ir: &Ir, shape: &[i64], indices: &[Value]) -> Option<usize> {
    if indices.len() != shape.len() {
        return None;
    }
    let mut pos: i64 = 0;
    for (d, v) in shape.iter().zip(indices) {
        let i = constant_of(ctx, ir, *v)?.as_i64()?;
        if *d == DYNAMIC || i < 0 || i >= *d {
            return None;
        }
        pos = pos.checked_mul(*d)?.checked_add(i)?;
    }
    usize::try_from(pos).ok()
}

/// `tensor.extract` at constant indices of a dense constant is the element, of a
/// `tensor.from_elements` the operand (upstream's `ExtractOp::fold`).
fn extract_of_known(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let t = ir.operand(op, 0);
    let tt = ir.value_type(t);
    let Some(shape) = tt.shape() else {
        return false;
    };
    let idx = ir.operands(op)[1..].to_vec();
    let Some(pos) = linear_index(ctx, ir, shape, &idx) else {
        return false;
    };
    if let Some(d) = ir
        .defining_op(t)
        .filter(|d| ir.name(*d) == "tensor.from_elements")
    {
        if let Some(v) = ir.operands(d).get(pos).copied() {
            return replace(ir, op, v);
        }
        return false;
    }
    let Some(AttrKind::DenseElements {
        splat: false,
        elements,
        ..
    }) = constant_of(ctx, ir, t).map(|a| a.kind())
    else {
        return false;
    };
    let e = tt.element_type();
    let Some(a) = elements.get(pos).and_then(|s| attr_of(*s, e)) else {
        return false;
    };
    let v = cst_attr(ir, op, a, e);
    replace(ir, op, v)
}

/// Offsets all 0, strides all 1 and sizes the whole static `shape`, all static
/// (upstream's `foldIdentityOffsetSizeAndStrideOpInterface`).
fn identity_slice(ir: &Ir, op: OpId, shape: &[i64]) -> bool {
    let arr = |n: &str| match ir.attr(op, n).map(|a| a.kind()) {
        Some(AttrKind::DenseArray { values, .. }) => values
            .iter()
            .map(|s| match s {
                Scalar::Int(v) => Some(*v as i64),
                _ => None,
            })
            .collect::<Option<Vec<i64>>>(),
        _ => None,
    };
    let (Some(o), Some(s), Some(st)) = (
        arr("static_offsets"),
        arr("static_sizes"),
        arr("static_strides"),
    ) else {
        return false;
    };
    o.len() == shape.len()
        && o.iter().all(|x| *x == 0)
        && st.iter().all(|x| *x == 1)
        && s.as_slice() == shape
        && !shape.contains(&DYNAMIC)
}

/// A slice that is the whole tensor is its source: `tensor.extract_slice` and
/// `tensor.insert_slice` with source type equal to the result type (upstream's
/// `ExtractSliceOp::fold`, `InsertSliceOp::fold`).
fn identity_slice_op(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let src = ir.operand(op, 0);
    let st = ir.value_type(src);
    if st != result_type(ir, op) {
        return false;
    }
    let Some(shape) = st.shape() else {
        return false;
    };
    if !identity_slice(ir, op, shape) {
        return false;
    }
    replace(ir, op, src)
}

/// The most static shape two tensor shapes agree on (`None` inside: unranked); `None`
/// when they conflict (upstream's `joinShapes`).
fn join(a: Option<Vec<i64>>, b: Option<Vec<i64>>) -> Option<Option<Vec<i64>>> {
    let (Some(a), Some(b)) = (a.clone(), b.clone()) else {
        return Some(a.or(b));
    };
    if a.len() != b.len() {
        return None;
    }
    let mut out = vec![];
    for (x, y) in a.iter().zip(&b) {
        out.push(match (*x, *y) {
            (DYNAMIC, d) | (d, DYNAMIC) => d,
            (p, q) if p == q => p,
            _ => return None,
        });
    }
    Some(Some(out))
}

/// `cast(cast(x : A to B) : B to C) -> cast(x : A to C)` when dropping `B` loses no
/// run-time check: join(join(A, B), C) == join(A, C) (upstream's ChainedTensorCast).
fn chained_cast(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let src = ir.operand(op, 0);
    let Some(d) = ir.defining_op(src).filter(|d| ir.name(*d) == "tensor.cast") else {
        return false;
    };
    let x = ir.operand(d, 0);
    let (a, b, c) = (ir.value_type(x), ir.value_type(src), result_type(ir, op));
    if !(a.is_tensor() && b.is_tensor() && c.is_tensor()) {
        return false;
    }
    let sh = |t: Type| t.shape().map(|s| s.to_vec());
    let Some(first) = join(sh(a), sh(b)).and_then(|j| join(j, sh(c))) else {
        return false;
    };
    if join(sh(a), sh(c)) != Some(first) {
        return false;
    }
    if a == c {
        return replace(ir, op, x);
    }
    ir.set_operands(op, vec![x]);
    true
}

pub const CANONICALIZE_CAST: &[CanonFn] = &[chained_cast, cast_into_producer];
pub const CANONICALIZE_RANK: &[CanonFn] = &[rank_of_ranked];
pub const CANONICALIZE_SPLAT: &[CanonFn] = &[splat_of_constant];
pub const CANONICALIZE_FROM_ELEMENTS: &[CanonFn] = &[from_elements_of_constants];
pub const CANONICALIZE_EXTRACT: &[CanonFn] = &[extract_of_known, extract_through];
pub const CANONICALIZE_INSERT: &[CanonFn] = &[insert_same_splat];
pub const CANONICALIZE_EXTRACT_SLICE: &[CanonFn] = &[
    identity_slice_op,
    slice_constants,
    extract_after_insert,
    extract_of_splat,
    slice_of_cast,
];
pub const CANONICALIZE_PARALLEL_INSERT_SLICE: &[CanonFn] = &[slice_constants];
pub const CANONICALIZE_INSERT_SLICE: &[CanonFn] = &[
    identity_slice_op,
    slice_constants,
    insert_over_same_slice,
    insert_of_cast,
];
pub const CANONICALIZE_PAD: &[CanonFn] = &[pad_constants, pad_nothing, pad_of_cast];
pub const CANONICALIZE_GENERATE: &[CanonFn] = &[generate_static];
pub const CANONICALIZE_COLLAPSE_SHAPE: &[CanonFn] = &[collapse_of_producer];
