//! The type conversion (MLIR's `LLVMTypeConverter`): `index` is `i64`, a ranked memref its
//! descriptor struct, vectors stay vectors; the text of `!llvm.` type bodies, element
//! sizes, and attributes retyped for LLVM.

use super::descriptor::desc_ty;
use ftuner_ir::{AttrKind, Attribute, FloatKind, Type, TypeKind};

pub(super) fn llvm_ty(body: &str) -> Type {
    Type::get(TypeKind::Dialect {
        dialect: "llvm".into(),
        body: body.into(),
    })
}

pub(super) fn ptr() -> Type {
    llvm_ty("ptr")
}

/// Text of a converted type inside an `!llvm.` type body.
pub(super) fn text(t: Type) -> String {
    match t.kind() {
        TypeKind::Dialect { dialect, body } if dialect == "llvm" => body.clone(),
        _ => t.to_string(),
    }
}

/// The LLVM-dialect type of a type.
pub(super) fn conv(t: Type) -> Option<Type> {
    Some(match t.kind() {
        TypeKind::Index => Type::i64(),
        TypeKind::Integer { .. } | TypeKind::Float(_) => t,
        TypeKind::Vector { shape, elem, .. } => Type::vector(shape.clone(), conv(*elem)?),
        TypeKind::MemRef { shape, .. } => desc_ty(shape.len()),
        TypeKind::Dialect { dialect, .. } if dialect == "llvm" => t,
        _ => return None,
    })
}

/// `struct<(T1, T2, ...)>`: the LLVM struct of converted types.
pub(super) fn struct_of(tys: &[Type]) -> Type {
    llvm_ty(&format!(
        "struct<({})>",
        tys.iter().map(|t| text(*t)).collect::<Vec<_>>().join(", ")
    ))
}

/// Size in bytes of a scalar element.
pub(super) fn elem_bytes(t: Type) -> Option<i64> {
    match t.kind() {
        TypeKind::Index => Some(8),
        TypeKind::Integer { width, .. } => Some(((*width as i64) + 7) / 8),
        TypeKind::Float(k) => Some(match k {
            FloatKind::F16 | FloatKind::BF16 => 2,
            FloatKind::F32 => 4,
            FloatKind::F64 => 8,
            FloatKind::F8E5M2 | FloatKind::F8E4M3FN => 1,
            _ => return None,
        }),
        _ => None,
    }
}

/// The nested `array<...>` type body of a global of `shape` and `elem`.
pub(super) fn array_type(shape: &[i64], elem: Type) -> String {
    let mut t = text(conv(elem).unwrap_or(elem));
    for d in shape.iter().rev() {
        t = format!("array<{d} x {t}>");
    }
    t
}

/// A dense attribute with `index` elements retyped to `i64` (LLVM has no index).
pub(super) fn retype_dense(a: Attribute) -> Attribute {
    match a.kind() {
        AttrKind::DenseElements {
            ty,
            splat,
            elements,
        } if ty.element_type().is_index() => {
            let shape = ty.shape().unwrap_or(&[]).to_vec();
            let nt = if ty.is_vector() {
                Type::vector(shape, Type::i64())
            } else {
                Type::tensor(shape, Type::i64())
            };
            Attribute::get(AttrKind::DenseElements {
                ty: nt,
                splat: *splat,
                elements: elements.clone(),
            })
        }
        AttrKind::Integer { value, ty } if ty.is_index() => Attribute::int(*value, Type::i64()),
        _ => a,
    }
}
