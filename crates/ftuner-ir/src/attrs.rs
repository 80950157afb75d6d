//! Builtin attributes (MLIR's `BuiltinAttributes.td`), locations, and dialect attributes
//! kept as opaque text.

use crate::affine::{AffineMap, IntegerSet};
use crate::intern::Interner;
use crate::types::Type;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

/// One element of a `dense<...>` attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Int(i128),
    /// IEEE bits of a float of the element type's width.
    Float(u128),
    /// Real and imaginary parts of a complex element.
    ComplexInt(i128, i128),
    ComplexFloat(u128, u128),
}

/// `sparse<indices, values> : ty` (boxed: rare and large).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SparseData {
    pub ty: Type,
    pub index_shape: Vec<i64>,
    pub indices: Vec<i64>,
    pub value_shape: Vec<i64>,
    pub values: Vec<Scalar>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LocKind {
    Unknown,
    FileLineCol {
        /// Interned file name (shared by every location in the file).
        file: &'static str,
        line: u32,
        col: u32,
    },
    Name {
        name: String,
        child: Option<Attribute>,
    },
    CallSite {
        callee: Attribute,
        caller: Attribute,
    },
    Fused {
        metadata: Option<Attribute>,
        locs: Vec<Attribute>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AttrKind {
    Unit,
    Bool(bool),
    Integer {
        value: i128,
        ty: Type,
    },
    Float {
        bits: u128,
        ty: Type,
    },
    String {
        value: String,
        ty: Option<Type>,
    },
    Array(Vec<Attribute>),
    /// `array<i64: 1, 2>`; integer values (or float bits for float element types).
    DenseArray {
        elem: Type,
        values: Vec<Scalar>,
    },
    /// Sorted by name.
    Dictionary(Vec<(String, Attribute)>),
    Type(Type),
    SymbolRef {
        root: String,
        nested: Vec<String>,
    },
    AffineMap(AffineMap),
    IntegerSet(IntegerSet),
    /// `dense<...>`: a splat holds one element.
    DenseElements {
        ty: Type,
        splat: bool,
        elements: Vec<Scalar>,
    },
    /// `dense<["a", "b"]>`
    DenseStrings {
        ty: Type,
        elements: Vec<String>,
    },
    DenseResource {
        ty: Type,
        handle: String,
    },
    /// `sparse<indices, values> : type`
    Sparse(Box<SparseData>),
    StridedLayout {
        offset: i64,
        strides: Vec<i64>,
    },
    Location(LocKind),
    /// `#dialect.name<body>` or `#dialect<...>`; `body` is everything after the dialect
    /// namespace, printed back as is.
    Dialect {
        dialect: String,
        body: String,
    },
}

#[derive(Clone, Copy)]
pub struct Attribute(&'static AttrKind);

static ATTRS: LazyLock<Interner<AttrKind>> = LazyLock::new(Interner::new);

impl Attribute {
    pub fn get(kind: AttrKind) -> Attribute {
        Attribute(ATTRS.intern(kind))
    }
    pub fn kind(self) -> &'static AttrKind {
        self.0
    }
    pub fn unit() -> Attribute {
        Attribute::get(AttrKind::Unit)
    }
    pub fn bool(b: bool) -> Attribute {
        Attribute::get(AttrKind::Bool(b))
    }
    pub fn int(value: i128, ty: Type) -> Attribute {
        if ty.int_width() == Some(1) && ty.is_signless_integer() {
            return Attribute::bool(value & 1 != 0);
        }
        Attribute::get(AttrKind::Integer {
            value: crate::attrs::truncate_to_width(value, ty),
            ty,
        })
    }
    pub fn i64(value: i64) -> Attribute {
        Attribute::int(value as i128, Type::i64())
    }
    pub fn index(value: i64) -> Attribute {
        Attribute::int(value as i128, Type::index())
    }
    pub fn float(value: f64, ty: Type) -> Attribute {
        Attribute::get(AttrKind::Float {
            bits: crate::float::f64_to_bits(value, ty),
            ty,
        })
    }
    pub fn string(s: impl Into<String>) -> Attribute {
        Attribute::get(AttrKind::String {
            value: s.into(),
            ty: None,
        })
    }
    pub fn array(v: Vec<Attribute>) -> Attribute {
        Attribute::get(AttrKind::Array(v))
    }
    pub fn dense_i64_array(values: &[i64]) -> Attribute {
        Attribute::get(AttrKind::DenseArray {
            elem: Type::i64(),
            values: values.iter().map(|&v| Scalar::Int(v as i128)).collect(),
        })
    }
    pub fn dense_i32_array(values: &[i32]) -> Attribute {
        Attribute::get(AttrKind::DenseArray {
            elem: Type::i32(),
            values: values.iter().map(|&v| Scalar::Int(v as i128)).collect(),
        })
    }
    pub fn dictionary(mut entries: Vec<(String, Attribute)>) -> Attribute {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|a, b| a.0 == b.0);
        Attribute::get(AttrKind::Dictionary(entries))
    }
    pub fn type_attr(t: Type) -> Attribute {
        Attribute::get(AttrKind::Type(t))
    }
    pub fn symbol_ref(name: impl Into<String>) -> Attribute {
        Attribute::get(AttrKind::SymbolRef {
            root: name.into(),
            nested: vec![],
        })
    }
    pub fn affine_map(m: AffineMap) -> Attribute {
        Attribute::get(AttrKind::AffineMap(m))
    }
    pub fn dialect(dialect: &str, body: &str) -> Attribute {
        Attribute::get(AttrKind::Dialect {
            dialect: dialect.to_string(),
            body: body.to_string(),
        })
    }
    pub fn location(l: LocKind) -> Attribute {
        Attribute::get(AttrKind::Location(l))
    }
    pub fn unknown_loc() -> Attribute {
        Attribute::location(LocKind::Unknown)
    }
    /// A dense elements attribute; becomes a splat when all elements are equal (as MLIR).
    pub fn dense(ty: Type, elements: Vec<Scalar>) -> Attribute {
        let splat = !elements.is_empty() && elements.iter().all(|e| *e == elements[0]);
        let elements = if splat { vec![elements[0]] } else { elements };
        Attribute::get(AttrKind::DenseElements {
            ty,
            splat,
            elements,
        })
    }

    pub fn as_int(self) -> Option<i128> {
        match self.0 {
            AttrKind::Integer { value, .. } => Some(*value),
            AttrKind::Bool(b) => Some(*b as i128),
            _ => None,
        }
    }
    pub fn as_i64(self) -> Option<i64> {
        self.as_int().and_then(|v| i64::try_from(v).ok())
    }
    pub fn as_str(self) -> Option<&'static str> {
        match self.0 {
            AttrKind::String { value, .. } => Some(value),
            _ => None,
        }
    }
    pub fn as_array(self) -> Option<&'static [Attribute]> {
        match self.0 {
            AttrKind::Array(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_type(self) -> Option<Type> {
        match self.0 {
            AttrKind::Type(t) => Some(*t),
            _ => None,
        }
    }
    pub fn as_affine_map(self) -> Option<&'static AffineMap> {
        match self.0 {
            AttrKind::AffineMap(m) => Some(m),
            _ => None,
        }
    }
    pub fn as_dict(self) -> Option<&'static [(String, Attribute)]> {
        match self.0 {
            AttrKind::Dictionary(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_symbol(self) -> Option<&'static str> {
        match self.0 {
            AttrKind::SymbolRef { root, nested } if nested.is_empty() => Some(root),
            _ => None,
        }
    }
    /// Values of an integer dense array (`array<i64: ...>`).
    pub fn as_dense_i64s(self) -> Option<Vec<i64>> {
        match self.0 {
            AttrKind::DenseArray { values, .. } => values
                .iter()
                .map(|v| match v {
                    Scalar::Int(i) => i64::try_from(*i).ok(),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }
    /// The dialect attribute body, e.g. `parallel` of `#linalg.iterator_type<parallel>`.
    pub fn dialect_body(self) -> Option<(&'static str, &'static str)> {
        match self.0 {
            AttrKind::Dialect { dialect, body } => Some((dialect, body)),
            _ => None,
        }
    }
    /// The type of a typed attribute (integer, float, elements).
    pub fn typed_type(self) -> Option<Type> {
        match self.0 {
            AttrKind::Integer { ty, .. } | AttrKind::Float { ty, .. } => Some(*ty),
            AttrKind::Bool(_) => Some(Type::i1()),
            AttrKind::DenseElements { ty, .. }
            | AttrKind::DenseStrings { ty, .. }
            | AttrKind::DenseResource { ty, .. } => Some(*ty),
            AttrKind::Sparse(s) => Some(s.ty),
            AttrKind::String { ty, .. } => *ty,
            _ => None,
        }
    }
    pub fn is_location(self) -> bool {
        matches!(self.0, AttrKind::Location(_))
    }
}

/// Sign-extend `value` from the bit width of integer type `ty` (index: 64 bits), so that
/// equal values have one representation. Unsigned types are zero-extended.
pub fn truncate_to_width(value: i128, ty: Type) -> i128 {
    let (w, unsigned) = match ty.kind() {
        crate::types::TypeKind::Integer { width, signedness } => {
            (*width, *signedness == crate::types::Signedness::Unsigned)
        }
        crate::types::TypeKind::Index => (64, false),
        _ => return value,
    };
    if w == 0 || w >= 128 {
        return value;
    }
    // In u128: `(1i128 << 127) - 1` overflows (i127).
    let mask = ((1u128 << w) - 1) as i128;
    let v = value & mask;
    if unsigned || w == 1 {
        // i1 keeps 0/1 ("true" is 1, not -1).
        v
    } else {
        // Sign-extend from bit w - 1.
        (v << (128 - w)) >> (128 - w)
    }
}

impl Attribute {
    /// The uniqued attribute's identity: equal attributes, equal ids (within a process).
    pub fn id(self) -> usize {
        self.0 as *const AttrKind as usize
    }
}
impl PartialEq for Attribute {
    fn eq(&self, other: &Attribute) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}
impl Eq for Attribute {}
impl Hash for Attribute {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id().hash(state)
    }
}
impl fmt::Debug for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}
impl fmt::Display for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        crate::printer::write_attr(&mut s, *self, None);
        f.write_str(&s)
    }
}
