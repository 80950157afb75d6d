//! `tensor.cast` folded into its consumers and producers, and the `tensor.generate` /
//! reshape patterns that make shapes static, each named after the upstream pattern it
//! follows (`mlir/lib/Dialect/Tensor/IR/TensorOps.cpp`). A rewrite that could leave an
//! op the verifier rejects checks the op and undoes itself.

use super::slices::{kept_dims, retype_with_cast, statics, try_write, Mixed, Ofr};
use super::{verify_extract_slice, verify_insert_slice, verify_pad};
use crate::cf::constant_of;
use ftuner_ir::Context;
use ftuner_ir::{AttrKind, Ir, OpId, Type, Value, DYNAMIC};

/// Whether `a` is as static as `b` or more: both ranked, of one rank, and `a` static
/// wherever `b` is (upstream's `preservesStaticInformation`).
fn more_static(a: Type, b: Type) -> bool {
    match (a.shape(), b.shape()) {
        (Some(x), Some(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| *q == DYNAMIC || p == q)
        }
        _ => false,
    }
}

/// `x` when `v` is a `tensor.cast` of `x` that only forgets static information
/// (upstream's `canFoldIntoConsumerOp`).
pub(crate) fn loosening_cast_of(ir: &Ir, v: Value) -> Option<Value> {
    let d = ir.defining_op(v).filter(|d| ir.name(*d) == "tensor.cast")?;
    let x = ir.operand(d, 0);
    more_static(ir.value_type(x), ir.value_type(v)).then_some(x)
}

/// `extract_slice(cast(x))` reads `x` (upstream's `ExtractSliceOpCastFolder`).
pub(super) fn slice_of_cast(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(x) = loosening_cast_of(ir, ir.operand(op, 0)) else {
        return false;
    };
    let Some(old) = Mixed::slice(ir, op) else {
        return false;
    };
    let mut new = old.clone();
    new.prefix[0] = x;
    try_write(ctx, ir, op, &new, &old, verify_extract_slice)
}

/// `insert_slice(cast(s) into d)` inserts `s`, its static dims becoming static sizes;
/// `insert_slice(s into cast(d))` inserts into `d`, with a cast of the result (upstream's
/// `InsertSliceOpCastFolder`).
pub(super) fn insert_of_cast(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(old) = Mixed::slice(ir, op) else {
        return false;
    };
    let mut new = old.clone();
    let src = loosening_cast_of(ir, old.prefix[0]);
    let dest = loosening_cast_of(ir, old.prefix[1]);
    if let Some(s) = src {
        new.prefix[0] = s;
        let shape = ir.value_type(s).shape().unwrap_or(&[]).to_vec();
        for (i, j) in kept_dims(&statics(&new.lists[1]), &shape).unwrap_or_default() {
            if shape[j] != DYNAMIC {
                new.lists[1][i] = Ofr::S(shape[j]);
            }
        }
    }
    if let Some(d) = dest {
        new.prefix[1] = d;
    }
    if src.is_none() && dest.is_none() {
        return false;
    }
    // The result type follows the destination: write with it, verify, undo if rejected.
    let r = ir.result(op, 0);
    let rt = ir.value_type(r);
    ir.set_value_type(r, ir.value_type(new.prefix[1]));
    if !try_write(ctx, ir, op, &new, &old, verify_insert_slice) {
        ir.set_value_type(r, rt);
        return false;
    }
    if dest.is_some() {
        let nt = ir.value_type(r);
        ir.set_value_type(r, rt);
        retype_with_cast(ir, op, nt);
    }
    true
}

/// `pad(cast(x))` pads `x` (upstream's `FoldSourceTensorCast`).
pub(super) fn pad_of_cast(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let src = ir.operand(op, 0);
    let Some(x) = loosening_cast_of(ir, src) else {
        return false;
    };
    ir.set_operand(op, 0, x);
    if verify_pad(ctx, ir, op).is_ok() {
        super::slices::sharpen_pad(ir, op);
        return true;
    }
    ir.set_operand(op, 0, src);
    false
}

/// A cast to a more static type of a slice, an empty tensor or a pad is that op made
/// more static (upstream's `TensorCastExtractSlice`, `FoldEmptyTensorWithCastOp`,
/// `FoldTargetTensorCast`): a copy of the producer with the cast's type replaces the cast.
pub(super) fn cast_into_producer(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let src = ir.operand(op, 0);
    let ct = ir.value_type(ir.result(op, 0));
    let Some(p) = ir.defining_op(src) else {
        return false;
    };
    if !more_static(ct, ir.value_type(src)) || ct == ir.value_type(src) {
        return false;
    }
    let name = ir.name(p);
    // A copy of a slice or a pad is work of its own: only a producer the cast alone
    // reads is copied.
    let only_use = ir.uses(src).len() == 1;
    if !(name == "tensor.empty"
        || (only_use && matches!(name, "tensor.extract_slice" | "tensor.pad")))
    {
        return false;
    }
    let mut map = Default::default();
    let c = ir.clone_op(p, &mut map);
    ir.insert_before(op, c);
    let cr = ir.result(c, 0);
    ir.set_value_type(cr, ct);
    let ok = match name {
        "tensor.extract_slice" => sharpen_slice_sizes(ctx, ir, c, ir.value_type(src), ct),
        "tensor.empty" => {
            let (old, new) = (ir.value_type(src).shape(), ct.shape());
            let (Some(old), Some(new)) = (old, new) else {
                return false;
            };
            let dyns = ir.operands(c).to_vec();
            let mut keep = vec![];
            let mut k = 0;
            for (o, n) in old.iter().zip(new) {
                if *o == DYNAMIC {
                    if *n == DYNAMIC {
                        keep.push(dyns[k]);
                    }
                    k += 1;
                }
            }
            ir.set_operands(c, keep);
            super::verify_empty(ctx, ir, c).is_ok()
        }
        _ => verify_pad(ctx, ir, c).is_ok(),
    };
    if !ok {
        ir.erase_op(c);
        return false;
    }
    ir.replace_op(op, &[cr]);
    true
}

/// The slice `c`, whose result was `old` and is now `new` (more static), given the static
/// sizes `new` implies; whether it verifies.
fn sharpen_slice_sizes(ctx: &Context, ir: &mut Ir, c: OpId, old: Type, new: Type) -> bool {
    let Some(mut m) = Mixed::slice(ir, c) else {
        return false;
    };
    let sizes = statics(&m.lists[1]);
    let (Some(os), Some(ns)) = (old.shape(), new.shape()) else {
        return false;
    };
    let Some(kept) = kept_dims(&sizes, os) else {
        return false;
    };
    for (i, j) in kept {
        if ns[j] != DYNAMIC {
            m.lists[1][i] = Ofr::S(ns[j]);
        }
    }
    m.write(ir, c);
    verify_extract_slice(ctx, ir, c).is_ok()
}

/// `extract(cast(x))` reads `x` (upstream's `ExtractFromTensorCast`); `extract` of a
/// `tensor.generate` is its body at the indices (upstream's `ExtractFromTensorGenerate`),
/// when the body has no effects.
pub(super) fn extract_through(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let t = ir.operand(op, 0);
    let Some(d) = ir.defining_op(t) else {
        return false;
    };
    if ir.name(d) == "tensor.cast" {
        let x = ir.operand(d, 0);
        if ir.value_type(x).shape().is_some() {
            ir.set_operand(op, 0, x);
            return true;
        }
        return false;
    }
    if ir.name(d) != "tensor.generate" {
        return false;
    }
    let Some(body) = ir.region_entry(ir.regions_of(d)[0]) else {
        return false;
    };
    let ops = ir.block_ops_vec(body);
    let Some((term, inner)) = ops.split_last() else {
        return false;
    };
    let pure = |o: &OpId| {
        ir.regions_of(*o).is_empty()
            && ctx
                .op_def(ir.name(*o))
                .is_some_and(|def| def.has(ftuner_ir::traits::PURE))
    };
    if !inner.iter().all(pure) {
        return false;
    }
    let idx = ir.operands(op)[1..].to_vec();
    let mut map: rustc_hash::FxHashMap<Value, Value> = ir
        .block_args(body)
        .iter()
        .copied()
        .zip(idx.iter().copied())
        .collect();
    if map.len() != idx.len() {
        return false;
    }
    for o in inner {
        let c = ir.clone_op(*o, &mut map);
        ir.insert_before(op, c);
    }
    let y = ir.operand(*term, 0);
    let v = *map.get(&y).unwrap_or(&y);
    ir.replace_op(op, &[v]);
    true
}

/// `insert` of a splat constant's own value into it is the constant (upstream's
/// `InsertOp::fold`).
pub(super) fn insert_same_splat(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (s, t) = (ir.operand(op, 0), ir.operand(op, 1));
    let Some(AttrKind::DenseElements {
        splat: true,
        elements,
        ..
    }) = constant_of(ctx, ir, t).map(|a| a.kind())
    else {
        return false;
    };
    let Some(e) = constant_of(ctx, ir, s).and_then(super::canonicalize::scalar_of) else {
        return false;
    };
    if elements.first() != Some(&e) {
        return false;
    }
    ir.replace_op(op, &[t]);
    true
}

/// `tensor.generate`'s constant extents become static dims, with a cast back (upstream's
/// `StaticTensorGenerate`).
pub(super) fn generate_static(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let rt = ir.value_type(ir.result(op, 0));
    let Some(shape) = rt.shape() else {
        return false;
    };
    let mut new_shape = shape.to_vec();
    let mut keep = vec![];
    let mut k = 0;
    let ops = ir.operands(op).to_vec();
    for d in new_shape.iter_mut() {
        if *d == DYNAMIC {
            let Some(v) = ops.get(k).copied() else {
                return false;
            };
            k += 1;
            match constant_of(ctx, ir, v).and_then(|a| a.as_i64()) {
                Some(c) if c >= 0 && c != DYNAMIC => *d = c,
                _ => keep.push(v),
            }
        }
    }
    if keep.len() == ops.len() {
        return false;
    }
    ir.set_operands(op, keep);
    retype_with_cast(ir, op, rt.with_shape(new_shape));
    true
}

/// The composed reassociation of collapsing by `inner` and then by `outer`.
fn compose(inner: &[Vec<i64>], outer: &[Vec<i64>]) -> Option<Vec<Vec<i64>>> {
    outer
        .iter()
        .map(|g| {
            let mut out = vec![];
            for j in g {
                out.extend(inner.get(usize::try_from(*j).ok()?)?.iter().copied());
            }
            Some(out)
        })
        .collect()
}

/// `collapse_shape(collapse_shape(x))` is one collapse of `x` (upstream's
/// `ComposeReassociativeReshapeOps`); `collapse_shape(cast(x))` collapses `x`, with a cast
/// of a more static result (upstream's `FoldCollapseOfCastOp`); a collapse of
/// `tensor.from_elements` to a static shape is `tensor.from_elements` of that shape
/// (upstream's `FoldReshapeWithFromElements`).
pub(super) fn collapse_of_producer(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let src = ir.operand(op, 0);
    let rt = ir.value_type(ir.result(op, 0));
    let Some(d) = ir.defining_op(src) else {
        return false;
    };
    let Ok(outer) = super::reassociation(ir, op) else {
        return false;
    };
    match ir.name(d) {
        "tensor.collapse_shape" => {
            let Ok(inner) = super::reassociation(ir, d) else {
                return false;
            };
            let Some(groups) = compose(&inner, &outer) else {
                return false;
            };
            let refs: Vec<&[i64]> = groups.iter().map(|g| g.as_slice()).collect();
            let x = ir.operand(d, 0);
            ir.set_operand(op, 0, x);
            ir.set_prop(op, "reassociation", Some(super::reassociation_attr(&refs)));
            true
        }
        "tensor.cast" => {
            let x = ir.operand(d, 0);
            let Some(xs) = ir.value_type(x).shape().map(|s| s.to_vec()) else {
                return false;
            };
            if !more_static(ir.value_type(x), ir.value_type(src)) {
                return false;
            }
            let Some(rs) = rt.shape() else { return false };
            let inferred: Vec<i64> = outer
                .iter()
                .map(|g| {
                    g.iter().try_fold(1i64, |acc, j| {
                        let v = *xs.get(usize::try_from(*j).ok()?)?;
                        (v != DYNAMIC).then(|| acc.checked_mul(v)).flatten()
                    })
                })
                .map(|p| p.unwrap_or(DYNAMIC))
                .collect();
            if inferred.len() != rs.len() {
                return false;
            }
            let sharp: Vec<i64> = rs
                .iter()
                .zip(&inferred)
                .map(|(r, i)| if *r == DYNAMIC { *i } else { *r })
                .collect();
            ir.set_operand(op, 0, x);
            if super::verify_collapse_shape(ctx, ir, op).is_err() {
                ir.set_operand(op, 0, src);
                return false;
            }
            if sharp != rs {
                retype_with_cast(ir, op, rt.with_shape(sharp));
            }
            true
        }
        "tensor.from_elements" if rt.has_static_shape() => {
            let elems = ir.operands(d).to_vec();
            let c = ir.create_op(
                ftuner_ir::OpSpec::new(ftuner_ir::intern_name("tensor.from_elements"), ir.loc(op))
                    .operands(elems)
                    .results([rt]),
            );
            ir.insert_before(op, c);
            let v = ir.result(c, 0);
            ir.replace_op(op, &[v]);
            true
        }
        _ => false,
    }
}

/// `tensor.dim` of a cast reads the cast's source, of an insert_slice its destination; of
/// a `tensor.generate`'s dynamic dim, its extent (upstream's `DimOp` folders).
pub(super) fn dim_through(ir: &mut Ir, op: OpId, idx: i64) -> Option<Value> {
    let src = ir.operand(op, 0);
    let d = ir.defining_op(src)?;
    match ir.name(d) {
        "tensor.cast" => {
            let x = ir.operand(d, 0);
            ir.set_operand(op, 0, x);
            None
        }
        // The result has the destination's type, dims included.
        "tensor.insert_slice" => {
            let x = ir.operand(d, 1);
            ir.set_operand(op, 0, x);
            None
        }
        "tensor.generate" => {
            let shape = ir.value_type(src).shape()?.to_vec();
            let i = usize::try_from(idx).ok()?;
            if *shape.get(i)? != DYNAMIC {
                return None;
            }
            let k = shape[..i].iter().filter(|x| **x == DYNAMIC).count();
            ir.operands(d).get(k).copied()
        }
        _ => None,
    }
}
