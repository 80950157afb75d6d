//! Type and attribute constraints named in `ir-specs` (ODS names), checked by the
//! spec-driven verifier.

use crate::attrs::{AttrKind, Attribute};
use crate::types::{Type, TypeKind};

/// Every type constraint name the specs may use.
pub const TYPE_CONSTRAINTS: &[&str] = &[
    "AnyType",
    "AnyTensor",
    "AnyRankedTensor",
    "AnyMemRef",
    "AnyRankedMemRef",
    "AnyVector",
    "AnyShaped",
    "AnyTensorOrMemRef",
    "AnyInteger",
    "AnySignlessInteger",
    "AnySignlessIntegerOrIndex",
    "Index",
    "I1",
    "I32",
    "I64",
    "AnyFloat",
    "F32",
    "F64",
    "AnyComplex",
    "SignlessIntegerLike",
    "SignlessIntegerOrIndexLike",
    "SignlessIntegerOrIndexLikeOfAnyRank",
    "FloatLike",
    "BoolLike",
    "IntegerOrFloatLike",
    "IndexLike",
    "AnyTensorOrScalar",
    "AnyScalar",
    "LLVMType",
    "AnyFunction",
    "AnyNonShaped",
    "MemRefOrTensorOfIndex",
];

fn like(t: Type, f: fn(Type) -> bool) -> bool {
    if f(t) {
        return true;
    }
    match t.kind() {
        TypeKind::Vector { elem, .. }
        | TypeKind::RankedTensor { elem, .. }
        | TypeKind::UnrankedTensor { elem } => f(*elem),
        _ => false,
    }
}

/// Whether `t` satisfies constraint `c`; `None` for an unknown constraint name.
pub fn type_satisfies(c: &str, t: Type) -> Option<bool> {
    Some(match c {
        "AnyType" | "LLVMType" => true,
        "AnyTensor" => t.is_tensor(),
        "AnyRankedTensor" => matches!(t.kind(), TypeKind::RankedTensor { .. }),
        "AnyMemRef" => t.is_memref(),
        "AnyRankedMemRef" => matches!(t.kind(), TypeKind::MemRef { .. }),
        "AnyVector" => t.is_vector(),
        "AnyShaped" => t.is_shaped(),
        "AnyTensorOrMemRef" => t.is_tensor() || t.is_memref(),
        "AnyInteger" => t.is_integer(),
        "AnySignlessInteger" => t.is_signless_integer(),
        "AnySignlessIntegerOrIndex" => t.is_int_or_index(),
        "Index" => t.is_index(),
        "I1" => t == Type::i1(),
        "I32" => t == Type::i32(),
        "I64" => t == Type::i64(),
        "AnyFloat" => t.is_float(),
        "F32" => t == Type::f32(),
        "F64" => t == Type::f64(),
        "AnyComplex" => matches!(t.kind(), TypeKind::Complex(_)),
        "SignlessIntegerLike" => like(t, |x| x.is_signless_integer()),
        "SignlessIntegerOrIndexLike" | "SignlessIntegerOrIndexLikeOfAnyRank" => {
            like(t, |x| x.is_int_or_index())
        }
        "IndexLike" => like(t, |x| x.is_index()),
        "FloatLike" => like(t, |x| x.is_float()),
        "BoolLike" => like(t, |x| x == Type::i1()),
        "IntegerOrFloatLike" => like(t, |x| x.is_int_or_index() || x.is_float()),
        "AnyTensorOrScalar" => t.is_tensor() || !t.is_shaped(),
        "AnyScalar" | "AnyNonShaped" => !t.is_shaped(),
        "AnyFunction" => matches!(t.kind(), TypeKind::Function { .. }),
        "MemRefOrTensorOfIndex" => (t.is_memref() || t.is_tensor()) && t.element_type().is_index(),
        _ => return None,
    })
}

/// Every attribute constraint name the specs may use.
pub const ATTR_CONSTRAINTS: &[&str] = &[
    "AnyAttr",
    "TypedAttr",
    "UnitAttr",
    "BoolAttr",
    "I32Attr",
    "I64Attr",
    "IndexAttr",
    "IntegerAttr",
    "F32Attr",
    "F64Attr",
    "FloatAttr",
    "StrAttr",
    "SymbolNameAttr",
    "FlatSymbolRefAttr",
    "SymbolRefAttr",
    "TypeAttr",
    "FunctionTypeAttr",
    "ArrayAttr",
    "DictionaryAttr",
    "DictArrayAttr",
    "AffineMapAttr",
    "AffineMapArrayAttr",
    "DenseI64ArrayAttr",
    "DenseI32ArrayAttr",
    "DenseBoolArrayAttr",
    "I64ArrayAttr",
    "ElementsAttr",
    "IteratorTypeArrayAttr",
    "DialectAttr",
    "LocationAttr",
    "IntegerSetAttr",
    "TypedAttrOrElements",
];

pub fn attr_satisfies(c: &str, a: Attribute) -> Option<bool> {
    let k = a.kind();
    Some(match c {
        "AnyAttr" => true,
        "TypedAttr" | "TypedAttrOrElements" => {
            a.typed_type().is_some() || matches!(k, AttrKind::Dialect { .. })
        }
        "UnitAttr" => matches!(k, AttrKind::Unit),
        "BoolAttr" => matches!(k, AttrKind::Bool(_)),
        "I32Attr" => matches!(k, AttrKind::Integer { ty, .. } if *ty == Type::i32()),
        "I64Attr" => matches!(k, AttrKind::Integer { ty, .. } if *ty == Type::i64()),
        "IndexAttr" => matches!(k, AttrKind::Integer { ty, .. } if ty.is_index()),
        "IntegerAttr" => matches!(k, AttrKind::Integer { .. } | AttrKind::Bool(_)),
        "F32Attr" => matches!(k, AttrKind::Float { ty, .. } if *ty == Type::f32()),
        "F64Attr" => matches!(k, AttrKind::Float { ty, .. } if *ty == Type::f64()),
        "FloatAttr" => matches!(k, AttrKind::Float { .. }),
        "StrAttr" | "SymbolNameAttr" => matches!(k, AttrKind::String { .. }),
        "FlatSymbolRefAttr" => matches!(k, AttrKind::SymbolRef { nested, .. } if nested.is_empty()),
        "SymbolRefAttr" => matches!(k, AttrKind::SymbolRef { .. }),
        "TypeAttr" => matches!(k, AttrKind::Type(_)),
        "FunctionTypeAttr" => {
            matches!(k, AttrKind::Type(t) if matches!(t.kind(), TypeKind::Function { .. }))
        }
        "ArrayAttr" => matches!(k, AttrKind::Array(_)),
        "DictionaryAttr" => matches!(k, AttrKind::Dictionary(_)),
        "DictArrayAttr" => {
            matches!(k, AttrKind::Array(v) if v.iter().all(|x| x.as_dict().is_some()))
        }
        "AffineMapAttr" => matches!(k, AttrKind::AffineMap(_)),
        "IntegerSetAttr" => matches!(k, AttrKind::IntegerSet(_)),
        "AffineMapArrayAttr" => {
            matches!(k, AttrKind::Array(v) if v.iter().all(|x| x.as_affine_map().is_some()))
        }
        "DenseI64ArrayAttr" => {
            matches!(k, AttrKind::DenseArray { elem, .. } if *elem == Type::i64())
        }
        "DenseI32ArrayAttr" => {
            matches!(k, AttrKind::DenseArray { elem, .. } if *elem == Type::i32())
        }
        "DenseBoolArrayAttr" => {
            matches!(k, AttrKind::DenseArray { elem, .. } if *elem == Type::i1())
        }
        "I64ArrayAttr" => {
            matches!(k, AttrKind::Array(v) if v.iter().all(|x| matches!(x.kind(), AttrKind::Integer { ty, .. } if *ty == Type::i64())))
        }
        "ElementsAttr" => matches!(
            k,
            AttrKind::DenseElements { .. }
                | AttrKind::DenseStrings { .. }
                | AttrKind::DenseResource { .. }
                | AttrKind::Sparse(_)
        ),
        "IteratorTypeArrayAttr" => matches!(k, AttrKind::Array(_)),
        "DialectAttr" => matches!(k, AttrKind::Dialect { .. }),
        "LocationAttr" => a.is_location(),
        _ => return None,
    })
}
