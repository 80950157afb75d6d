//! Builtin types (MLIR's `BuiltinTypes.td`) and dialect types kept as opaque text.

use crate::attrs::Attribute;
use crate::intern::Interner;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

/// The marker MLIR uses for a dynamic dimension (`?`), `ShapedType::kDynamic`.
pub const DYNAMIC: i64 = i64::MIN;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Signedness {
    Signless,
    Signed,
    Unsigned,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatKind {
    F16,
    BF16,
    F32,
    F64,
    F80,
    F128,
    TF32,
    F8E5M2,
    F8E4M3FN,
}

impl FloatKind {
    pub fn width(self) -> u32 {
        match self {
            FloatKind::F16 | FloatKind::BF16 => 16,
            FloatKind::F32 => 32,
            FloatKind::F64 => 64,
            FloatKind::F80 => 80,
            FloatKind::F128 => 128,
            FloatKind::TF32 => 19,
            FloatKind::F8E5M2 | FloatKind::F8E4M3FN => 8,
        }
    }
    pub fn keyword(self) -> &'static str {
        match self {
            FloatKind::F16 => "f16",
            FloatKind::BF16 => "bf16",
            FloatKind::F32 => "f32",
            FloatKind::F64 => "f64",
            FloatKind::F80 => "f80",
            FloatKind::F128 => "f128",
            FloatKind::TF32 => "tf32",
            FloatKind::F8E5M2 => "f8E5M2",
            FloatKind::F8E4M3FN => "f8E4M3FN",
        }
    }
    pub fn from_keyword(s: &str) -> Option<FloatKind> {
        Some(match s {
            "f16" => FloatKind::F16,
            "bf16" => FloatKind::BF16,
            "f32" => FloatKind::F32,
            "f64" => FloatKind::F64,
            "f80" => FloatKind::F80,
            "f128" => FloatKind::F128,
            "tf32" => FloatKind::TF32,
            "f8E5M2" => FloatKind::F8E5M2,
            "f8E4M3FN" => FloatKind::F8E4M3FN,
            _ => return None,
        })
    }
}

/// The storage of a type. Compare [`Type`]s, not kinds: types are uniqued.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeKind {
    Integer {
        width: u32,
        signedness: Signedness,
    },
    Index,
    Float(FloatKind),
    None,
    Function {
        inputs: Vec<Type>,
        results: Vec<Type>,
    },
    Tuple(Vec<Type>),
    RankedTensor {
        shape: Vec<i64>,
        elem: Type,
        encoding: Option<Attribute>,
    },
    UnrankedTensor {
        elem: Type,
    },
    MemRef {
        shape: Vec<i64>,
        elem: Type,
        layout: Option<Attribute>,
        memory_space: Option<Attribute>,
    },
    UnrankedMemRef {
        elem: Type,
        memory_space: Option<Attribute>,
    },
    Vector {
        shape: Vec<i64>,
        scalable: Vec<bool>,
        elem: Type,
    },
    Complex(Type),
    /// A type of another dialect, e.g. `!llvm.ptr`, kept as `dialect` and the text after
    /// the dot (`ptr`, `struct<(i32)>`). Printed back exactly.
    Dialect {
        dialect: String,
        body: String,
    },
}

/// A uniqued type handle. Cheap to copy; equality is identity.
#[derive(Clone, Copy)]
pub struct Type(&'static TypeKind);

static TYPES: LazyLock<Interner<TypeKind>> = LazyLock::new(Interner::new);

impl Type {
    pub fn get(kind: TypeKind) -> Type {
        Type(TYPES.intern(kind))
    }
    pub fn kind(self) -> &'static TypeKind {
        self.0
    }
    pub fn integer(width: u32) -> Type {
        Type::get(TypeKind::Integer {
            width,
            signedness: Signedness::Signless,
        })
    }
    pub fn i1() -> Type {
        Type::integer(1)
    }
    pub fn i32() -> Type {
        Type::integer(32)
    }
    pub fn i64() -> Type {
        Type::integer(64)
    }
    pub fn index() -> Type {
        Type::get(TypeKind::Index)
    }
    pub fn float(kind: FloatKind) -> Type {
        Type::get(TypeKind::Float(kind))
    }
    pub fn f32() -> Type {
        Type::float(FloatKind::F32)
    }
    pub fn f64() -> Type {
        Type::float(FloatKind::F64)
    }
    pub fn none() -> Type {
        Type::get(TypeKind::None)
    }
    pub fn function(inputs: Vec<Type>, results: Vec<Type>) -> Type {
        Type::get(TypeKind::Function { inputs, results })
    }
    pub fn tensor(shape: Vec<i64>, elem: Type) -> Type {
        Type::get(TypeKind::RankedTensor {
            shape,
            elem,
            encoding: None,
        })
    }
    pub fn memref(shape: Vec<i64>, elem: Type) -> Type {
        Type::get(TypeKind::MemRef {
            shape,
            elem,
            layout: None,
            memory_space: None,
        })
    }
    pub fn vector(shape: Vec<i64>, elem: Type) -> Type {
        let scalable = vec![false; shape.len()];
        Type::get(TypeKind::Vector {
            shape,
            scalable,
            elem,
        })
    }

    pub fn is_integer(self) -> bool {
        matches!(self.0, TypeKind::Integer { .. })
    }
    pub fn is_signless_integer(self) -> bool {
        matches!(
            self.0,
            TypeKind::Integer {
                signedness: Signedness::Signless,
                ..
            }
        )
    }
    pub fn is_index(self) -> bool {
        matches!(self.0, TypeKind::Index)
    }
    pub fn is_int_or_index(self) -> bool {
        self.is_signless_integer() || self.is_index()
    }
    pub fn is_float(self) -> bool {
        matches!(self.0, TypeKind::Float(_))
    }
    pub fn int_width(self) -> Option<u32> {
        match self.0 {
            TypeKind::Integer { width, .. } => Some(*width),
            _ => None,
        }
    }
    pub fn float_kind(self) -> Option<FloatKind> {
        match self.0 {
            TypeKind::Float(k) => Some(*k),
            _ => None,
        }
    }
    /// Bit width of an integer or float type.
    pub fn bit_width(self) -> Option<u32> {
        match self.0 {
            TypeKind::Integer { width, .. } => Some(*width),
            TypeKind::Float(k) => Some(k.width()),
            TypeKind::Index => Some(64),
            _ => None,
        }
    }
    pub fn is_tensor(self) -> bool {
        matches!(
            self.0,
            TypeKind::RankedTensor { .. } | TypeKind::UnrankedTensor { .. }
        )
    }
    pub fn is_memref(self) -> bool {
        matches!(
            self.0,
            TypeKind::MemRef { .. } | TypeKind::UnrankedMemRef { .. }
        )
    }
    pub fn is_vector(self) -> bool {
        matches!(self.0, TypeKind::Vector { .. })
    }
    pub fn is_shaped(self) -> bool {
        self.is_tensor() || self.is_memref() || self.is_vector()
    }
    /// Shape of a ranked shaped type.
    pub fn shape(self) -> Option<&'static [i64]> {
        match self.0 {
            TypeKind::RankedTensor { shape, .. }
            | TypeKind::MemRef { shape, .. }
            | TypeKind::Vector { shape, .. } => Some(shape),
            _ => None,
        }
    }
    pub fn rank(self) -> Option<usize> {
        self.shape().map(|s| s.len())
    }
    /// Element type of a shaped type or complex; the type itself for a scalar.
    pub fn element_type(self) -> Type {
        match self.0 {
            TypeKind::RankedTensor { elem, .. }
            | TypeKind::UnrankedTensor { elem }
            | TypeKind::MemRef { elem, .. }
            | TypeKind::UnrankedMemRef { elem, .. }
            | TypeKind::Vector { elem, .. } => *elem,
            _ => self,
        }
    }
    /// `(strides, offset)` of a memref type, `DYNAMIC` where unknown (MLIR's
    /// `getStridesAndOffset`): row-major for the identity layout, the layout's own for
    /// `strided<...>`; None for other layouts and non-memrefs.
    pub fn strides_and_offset(self) -> Option<(Vec<i64>, i64)> {
        let TypeKind::MemRef { shape, layout, .. } = self.0 else {
            return None;
        };
        let identity = match layout.map(|l| l.kind()) {
            None => true,
            Some(crate::AttrKind::AffineMap(m)) => m.is_identity(),
            Some(crate::AttrKind::StridedLayout { offset, strides }) => {
                return Some((strides.clone(), *offset))
            }
            Some(_) => false,
        };
        if !identity {
            return None;
        }
        let mut s = vec![1i64; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            s[i] = if s[i + 1] == DYNAMIC || shape[i + 1] == DYNAMIC {
                DYNAMIC
            } else {
                s[i + 1] * shape[i + 1]
            };
        }
        Some((s, 0))
    }
    pub fn has_static_shape(self) -> bool {
        self.shape()
            .is_some_and(|s| s.iter().all(|&d| d != DYNAMIC))
    }
    pub fn num_elements(self) -> Option<i64> {
        let s = self.shape()?;
        let mut n: i64 = 1;
        for &d in s {
            if d == DYNAMIC {
                return None;
            }
            n = n.checked_mul(d)?;
        }
        Some(n)
    }
    pub fn function_inputs(self) -> &'static [Type] {
        match self.0 {
            TypeKind::Function { inputs, .. } => inputs,
            _ => &[],
        }
    }
    pub fn function_results(self) -> &'static [Type] {
        match self.0 {
            TypeKind::Function { results, .. } => results,
            _ => &[],
        }
    }
    /// The same kind of shaped type with a new shape (tensor keeps its encoding).
    pub fn with_shape(self, new_shape: Vec<i64>) -> Type {
        match self.0 {
            TypeKind::RankedTensor { elem, encoding, .. } => Type::get(TypeKind::RankedTensor {
                shape: new_shape,
                elem: *elem,
                encoding: *encoding,
            }),
            TypeKind::UnrankedTensor { elem } => Type::tensor(new_shape, *elem),
            TypeKind::MemRef {
                elem, memory_space, ..
            } => Type::get(TypeKind::MemRef {
                shape: new_shape,
                elem: *elem,
                layout: None,
                memory_space: *memory_space,
            }),
            TypeKind::Vector { elem, .. } => Type::vector(new_shape, *elem),
            _ => self,
        }
    }
}

impl PartialEq for Type {
    fn eq(&self, other: &Type) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}
impl Eq for Type {}
impl Type {
    /// The uniqued type's identity: equal types, equal ids (within a process).
    pub fn id(self) -> usize {
        self.0 as *const TypeKind as usize
    }
}
impl Hash for Type {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id().hash(state)
    }
}
impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        crate::printer::write_type(&mut s, *self, None);
        f.write_str(&s)
    }
}

/// Whether two shapes may describe the same run-time shape (`?` matches anything).
/// Which dims of a slice of `sizes` (static, or `DYNAMIC`) a rank-reducing slice of
/// shape `want` keeps: unit dims are dropped left to right where the result does not
/// need them. None when `want` cannot be reached that way.
pub fn rank_reduction_keep(sizes: &[i64], want: &[i64]) -> Option<Vec<bool>> {
    if want.len() > sizes.len() {
        return None;
    }
    let mut drops = sizes.len() - want.len();
    let mut keep = vec![];
    let mut j = 0;
    for (i, d) in sizes.iter().enumerate() {
        let left = sizes.len() - i;
        let must_keep = left <= want.len().saturating_sub(j);
        let matches = j < want.len() && want[j] == *d;
        if drops > 0 && *d == 1 && !must_keep && !(matches && want[j] != 1) {
            drops -= 1;
            keep.push(false);
            continue;
        }
        keep.push(true);
        j += 1;
    }
    (j == want.len()).then_some(keep)
}

pub fn shapes_compatible(a: &[i64], b: &[i64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(&x, &y)| x == DYNAMIC || y == DYNAMIC || x == y)
}

/// Whether two types are "cast compatible": equal, or shaped types of the same kind and
/// element type whose shapes are compatible (or one is unranked).
pub fn types_compatible(a: Type, b: Type) -> bool {
    if a == b {
        return true;
    }
    if a.element_type() != b.element_type() || a == a.element_type() {
        return false;
    }
    match (a.kind(), b.kind()) {
        (TypeKind::RankedTensor { shape: s1, .. }, TypeKind::RankedTensor { shape: s2, .. }) => {
            shapes_compatible(s1, s2)
        }
        (TypeKind::UnrankedTensor { .. }, TypeKind::RankedTensor { .. })
        | (TypeKind::RankedTensor { .. }, TypeKind::UnrankedTensor { .. }) => true,
        (TypeKind::MemRef { shape: s1, .. }, TypeKind::MemRef { shape: s2, .. }) => {
            shapes_compatible(s1, s2)
        }
        _ => false,
    }
}
