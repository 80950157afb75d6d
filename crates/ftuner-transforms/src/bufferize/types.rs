//! Memref types of bufferized tensors: the identity-layout memref of a ranked tensor, and
//! the strided-layout type of a `memref.subview`.

use super::R;
use ftuner_ir::{AttrKind, Attribute, Ir, OpId, Type, TypeKind, DYNAMIC};

/// The identity-layout memref of a ranked tensor type.
pub(super) fn memref_of(t: Type) -> Option<Type> {
    match t.kind() {
        TypeKind::RankedTensor { shape, elem, .. } => Some(Type::memref(shape.clone(), *elem)),
        _ => None,
    }
}

pub(super) fn with_layout(shape: Vec<i64>, elem: Type, layout: Option<Attribute>) -> Type {
    Type::get(TypeKind::MemRef {
        shape,
        elem,
        layout,
        memory_space: None,
    })
}

/// `(strides, offset)` of a memref type (`DYNAMIC` where unknown).
fn strides_of(t: Type) -> Option<(Vec<i64>, i64)> {
    t.strides_and_offset()
}

pub(super) fn is_identity(t: Type) -> bool {
    matches!(t.kind(), TypeKind::MemRef { layout: None, .. })
}

fn mul(a: i64, b: i64) -> i64 {
    if a == DYNAMIC || b == DYNAMIC {
        DYNAMIC
    } else {
        a.saturating_mul(b)
    }
}

/// The type of `memref.subview` of `src` with these static offsets/sizes/strides, reduced
/// to `want_rank` by dropping unit dims (left to right) when that is smaller.
pub(super) fn subview_type(
    src: Type,
    offs: &[i64],
    sizes: &[i64],
    steps: &[i64],
    want: &[i64],
) -> Option<Type> {
    let (st, off0) = strides_of(src)?;
    if st.len() != sizes.len() || offs.len() != sizes.len() || steps.len() != sizes.len() {
        return None;
    }
    let mut offset = off0;
    for (o, s) in offs.iter().zip(&st) {
        offset = if offset == DYNAMIC {
            DYNAMIC
        } else {
            match mul(*o, *s) {
                DYNAMIC => DYNAMIC,
                x => offset.saturating_add(x),
            }
        };
    }
    let mut dims: Vec<(i64, i64)> = sizes
        .iter()
        .zip(steps.iter().zip(&st))
        .map(|(sz, (k, s))| (*sz, mul(*k, *s)))
        .collect();
    if want.len() < dims.len() {
        let sz: Vec<i64> = dims.iter().map(|d| d.0).collect();
        let keep = ftuner_ir::rank_reduction_keep(&sz, want)?;
        dims = dims
            .into_iter()
            .zip(keep)
            .filter_map(|(d, k)| k.then_some(d))
            .collect();
    }
    if dims.len() != want.len() {
        return None;
    }
    let layout = Attribute::get(AttrKind::StridedLayout {
        offset,
        strides: dims.iter().map(|d| d.1).collect(),
    });
    Some(with_layout(
        dims.iter().map(|d| d.0).collect(),
        src.element_type(),
        Some(layout),
    ))
}

/// The identity-layout memref type of result `i` of `op`, a ranked tensor.
pub(super) fn result_memref(ir: &Ir, op: OpId, i: usize) -> R<Type> {
    memref_of(ir.value_type(ir.result(op, i)))
        .ok_or((op, "unranked tensors cannot be bufferized".into()))
}
