//! Printer: types and attributes (here), operations and modules (`ops.rs`), with MLIR's
//! alias rules (`#map`, `#set`, `!tuple`) and spelling.

mod ops;

pub use ops::{print_module, print_module_to, print_op_standalone, OpPrinter, PrintOptions};

use crate::attrs::{AttrKind, Attribute, LocKind, Scalar};
use crate::types::{Signedness, Type, TypeKind, DYNAMIC};
use rustc_hash::FxHashMap;
use std::fmt::Write;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AliasKey {
    Attr(Attribute),
    Type(Type),
}

/// Aliases in effect while printing; in a dry run (`record`), the aliasable values in the
/// order the printer meets them.
#[derive(Default)]
pub struct Aliases {
    pub names: FxHashMap<AliasKey, String>,
    pub record: Option<std::cell::RefCell<Vec<AliasKey>>>,
}

/// The alias name MLIR's builtin dialect gives an attribute or type, if any.
pub fn builtin_alias(k: AliasKey) -> Option<&'static str> {
    match k {
        AliasKey::Attr(a) => match a.kind() {
            AttrKind::AffineMap(_) => Some("map"),
            AttrKind::IntegerSet(_) => Some("set"),
            AttrKind::Location(_) => Some("loc"),
            _ => None,
        },
        AliasKey::Type(t) => match t.kind() {
            TypeKind::Tuple(v) if v.len() > 16 => Some("tuple"),
            _ => None,
        },
    }
}

impl Aliases {
    /// Print through an alias if there is one. Returns true if the caller must not print
    /// the value inline.
    fn use_alias(&self, out: &mut String, k: AliasKey) -> bool {
        if let Some(r) = &self.record {
            if builtin_alias(k).is_some() {
                let mut r = r.borrow_mut();
                if !r.contains(&k) {
                    r.push(k);
                }
            }
            return false;
        }
        if let Some(n) = self.names.get(&k) {
            out.push_str(n);
            return true;
        }
        false
    }

    /// Assign names (`#map`, `#map1`, ...) in MLIR's order: by nesting depth, types
    /// first, then by alias name, then by first visit.
    pub fn finish(seen: Vec<(AliasKey, usize)>) -> (Aliases, Vec<(String, AliasKey)>) {
        let mut items: Vec<(usize, bool, &'static str, usize, AliasKey)> = seen
            .iter()
            .enumerate()
            .filter_map(|(i, (k, d))| {
                builtin_alias(*k).map(|n| (*d, matches!(k, AliasKey::Attr(_)), n, i, *k))
            })
            .collect();
        items.sort_by(|a, b| (a.0, a.1, a.2, a.3).cmp(&(b.0, b.1, b.2, b.3)));
        let mut counts: FxHashMap<&str, usize> = FxHashMap::default();
        let mut names = FxHashMap::default();
        let mut order = vec![];
        for (_, is_attr, n, _, k) in items {
            let c = counts.entry(n).or_insert(0);
            let name = if *c == 0 {
                n.to_string()
            } else {
                format!("{n}{c}")
            };
            *c += 1;
            let full = format!("{}{}", if is_attr { '#' } else { '!' }, name);
            names.insert(k, full.clone());
            order.push((full, k));
        }
        (
            Aliases {
                names,
                record: None,
            },
            order,
        )
    }
}

pub fn write_type(out: &mut String, t: Type, al: Option<&Aliases>) {
    crate::parser::with_stack(|| write_type_checked(out, t, al))
}

fn write_type_checked(out: &mut String, t: Type, al: Option<&Aliases>) {
    if let Some(a) = al {
        if a.use_alias(out, AliasKey::Type(t)) {
            return;
        }
    }
    write_type_body(out, t, al)
}

/// A type spelled out (not through its own alias; nested values may use aliases).
pub fn write_type_body(out: &mut String, t: Type, al: Option<&Aliases>) {
    match t.kind() {
        TypeKind::Integer { width, signedness } => {
            let p = match signedness {
                Signedness::Signless => "i",
                Signedness::Signed => "si",
                Signedness::Unsigned => "ui",
            };
            let _ = write!(out, "{p}{width}");
        }
        TypeKind::Index => out.push_str("index"),
        TypeKind::Float(k) => out.push_str(k.keyword()),
        TypeKind::None => out.push_str("none"),
        TypeKind::Function { inputs, results } => {
            out.push('(');
            write_type_list(out, inputs, al);
            out.push_str(") -> ");
            write_result_types(out, results, al);
        }
        TypeKind::Tuple(v) => {
            out.push_str("tuple<");
            write_type_list(out, v, al);
            out.push('>');
        }
        TypeKind::RankedTensor {
            shape,
            elem,
            encoding,
        } => {
            out.push_str("tensor<");
            write_shape(out, shape, None);
            write_type(out, *elem, al);
            if let Some(e) = encoding {
                out.push_str(", ");
                write_attr(out, *e, al);
            }
            out.push('>');
        }
        TypeKind::UnrankedTensor { elem } => {
            out.push_str("tensor<*x");
            write_type(out, *elem, al);
            out.push('>');
        }
        TypeKind::MemRef {
            shape,
            elem,
            layout,
            memory_space,
        } => {
            out.push_str("memref<");
            write_shape(out, shape, None);
            write_type(out, *elem, al);
            if let Some(l) = layout {
                out.push_str(", ");
                write_attr(out, *l, al);
            }
            if let Some(m) = memory_space {
                out.push_str(", ");
                write_attr_elide(out, *m, al, true);
            }
            out.push('>');
        }
        TypeKind::UnrankedMemRef { elem, memory_space } => {
            out.push_str("memref<*x");
            write_type(out, *elem, al);
            if let Some(m) = memory_space {
                out.push_str(", ");
                write_attr_elide(out, *m, al, true);
            }
            out.push('>');
        }
        TypeKind::Vector {
            shape,
            scalable,
            elem,
        } => {
            out.push_str("vector<");
            write_shape(out, shape, Some(scalable));
            write_type(out, *elem, al);
            out.push('>');
        }
        TypeKind::Complex(e) => {
            out.push_str("complex<");
            write_type(out, *e, al);
            out.push('>');
        }
        TypeKind::Dialect { dialect, body } => {
            out.push('!');
            out.push_str(dialect);
            if !body.is_empty() && !body.starts_with('<') {
                out.push('.');
            }
            out.push_str(body);
        }
    }
}

fn write_shape(out: &mut String, shape: &[i64], scalable: Option<&Vec<bool>>) {
    for (i, d) in shape.iter().enumerate() {
        let sc = scalable.is_some_and(|s| s.get(i).copied().unwrap_or(false));
        if sc {
            out.push('[');
        }
        if *d == DYNAMIC {
            out.push('?');
        } else {
            let _ = write!(out, "{d}");
        }
        if sc {
            out.push(']');
        }
        out.push('x');
    }
}

pub fn write_type_list(out: &mut String, v: &[Type], al: Option<&Aliases>) {
    for (i, t) in v.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_type(out, *t, al);
    }
}

/// A single non-function result bare, otherwise parenthesized.
pub fn write_result_types(out: &mut String, v: &[Type], al: Option<&Aliases>) {
    if v.len() == 1 && !matches!(v[0].kind(), TypeKind::Function { .. }) {
        write_type(out, v[0], al);
    } else {
        out.push('(');
        write_type_list(out, v, al);
        out.push(')');
    }
}

pub fn write_attr(out: &mut String, a: Attribute, al: Option<&Aliases>) {
    write_attr_elide(out, a, al, false)
}

/// Whether `s` can be printed as a bare identifier.
pub fn is_bare_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.'))
}

pub fn write_escaped_string(out: &mut String, s: &str) {
    out.push('"');
    for &c in s.as_bytes() {
        match c {
            b'"' => out.push_str("\\22"),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\0A"),
            b'\t' => out.push_str("\\09"),
            0x20..=0x7e => out.push(c as char),
            _ => {
                let _ = write!(out, "\\{c:02X}");
            }
        }
    }
    out.push('"');
}

fn write_symbol(out: &mut String, s: &str) {
    out.push('@');
    let valid = !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-'))
        && !s.as_bytes()[0].is_ascii_digit();
    if valid {
        out.push_str(s);
    } else {
        write_escaped_string(out, s);
    }
}

fn write_int_value(out: &mut String, v: i128, ty: Type) {
    let unsigned = matches!(
        ty.kind(),
        TypeKind::Integer {
            signedness: Signedness::Unsigned,
            ..
        }
    );
    if unsigned && v < 0 {
        let w = ty.int_width().unwrap_or(64);
        let u = (v as u128)
            & if w >= 128 {
                u128::MAX
            } else {
                (1u128 << w) - 1
            };
        let _ = write!(out, "{u}");
    } else {
        let _ = write!(out, "{v}");
    }
}

fn write_scalar(out: &mut String, s: &Scalar, elem: Type) {
    match s {
        Scalar::Int(v) => {
            if elem.int_width() == Some(1) && elem.is_signless_integer() {
                out.push_str(if *v != 0 { "true" } else { "false" });
            } else {
                write_int_value(out, *v, elem)
            }
        }
        Scalar::Float(b) => out.push_str(&crate::float::format_float(
            *b,
            elem.float_kind().unwrap_or(crate::types::FloatKind::F64),
        )),
        Scalar::ComplexInt(r, i) => {
            let e = match elem.kind() {
                TypeKind::Complex(e) => *e,
                _ => elem,
            };
            out.push('(');
            write_int_value(out, *r, e);
            out.push(',');
            write_int_value(out, *i, e);
            out.push(')');
        }
        Scalar::ComplexFloat(r, i) => {
            let k = match elem.kind() {
                TypeKind::Complex(e) => e.float_kind(),
                _ => elem.float_kind(),
            }
            .unwrap_or(crate::types::FloatKind::F64);
            out.push('(');
            out.push_str(&crate::float::format_float(*r, k));
            out.push(',');
            out.push_str(&crate::float::format_float(*i, k));
            out.push(')');
        }
    }
}

/// Bytes per element (per part, for complex) in a dense attribute's raw data.
fn hex_width(elem: Type) -> Option<usize> {
    let base = match elem.kind() {
        TypeKind::Complex(e) => *e,
        _ => elem,
    };
    base.bit_width().map(|b| b.div_ceil(8) as usize)
}

fn write_dense_nested(
    out: &mut String,
    shape: &[i64],
    elems: &[Scalar],
    elem: Type,
    idx: &mut usize,
) {
    if shape.is_empty() {
        if let Some(s) = elems.get(*idx) {
            write_scalar(out, s, elem);
        }
        *idx += 1;
        return;
    }
    out.push('[');
    for i in 0..shape[0] {
        if i > 0 {
            out.push_str(", ");
        }
        write_dense_nested(out, &shape[1..], elems, elem, idx);
    }
    out.push(']');
}

fn write_nested_loc(out: &mut String, a: Attribute, al: Option<&Aliases>) {
    if let Some(x) = al {
        if x.use_alias(out, AliasKey::Attr(a)) {
            return;
        }
    }
    if let AttrKind::Location(c) = a.kind() {
        write_location(out, c, al);
    }
}

pub fn write_location(out: &mut String, l: &LocKind, al: Option<&Aliases>) {
    match l {
        LocKind::Unknown => out.push_str("unknown"),
        LocKind::FileLineCol { file, line, col } => {
            write_escaped_string(out, file);
            let _ = write!(out, ":{line}:{col}");
        }
        LocKind::Name { name, child } => {
            write_escaped_string(out, name);
            if let Some(c) = child {
                if !matches!(c.kind(), AttrKind::Location(LocKind::Unknown)) {
                    out.push('(');
                    write_nested_loc(out, *c, al);
                    out.push(')');
                }
            }
        }
        LocKind::CallSite { callee, caller } => {
            out.push_str("callsite(");
            write_nested_loc(out, *callee, al);
            out.push_str(" at ");
            write_nested_loc(out, *caller, al);
            out.push(')');
        }
        LocKind::Fused { metadata, locs } => {
            out.push_str("fused");
            if let Some(m) = metadata {
                out.push('<');
                write_attr(out, *m, al);
                out.push('>');
            }
            out.push('[');
            for (i, l) in locs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_nested_loc(out, *l, al);
            }
            out.push(']');
        }
    }
}

/// `elide`: MLIR's `AttrTypeElision::May` (drop `: i64` / `: f64`), used in arrays.
pub fn write_attr_elide(out: &mut String, a: Attribute, al: Option<&Aliases>, elide: bool) {
    crate::parser::with_stack(|| write_attr_checked(out, a, al, elide))
}

fn write_attr_checked(out: &mut String, a: Attribute, al: Option<&Aliases>, elide: bool) {
    if let Some(x) = al {
        if x.use_alias(out, AliasKey::Attr(a)) {
            return;
        }
    }
    write_attr_body(out, a, al, elide)
}

/// An attribute spelled out (not through its own alias).
pub fn write_attr_body(out: &mut String, a: Attribute, al: Option<&Aliases>, elide: bool) {
    match a.kind() {
        AttrKind::Unit => out.push_str("unit"),
        AttrKind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        AttrKind::Integer { value, ty } => {
            write_int_value(out, *value, *ty);
            if !(elide && ty.int_width() == Some(64) && ty.is_signless_integer()) {
                out.push_str(" : ");
                write_type(out, *ty, al);
            }
        }
        AttrKind::Float { bits, ty } => {
            out.push_str(&crate::float::format_float(
                *bits,
                ty.float_kind().unwrap_or(crate::types::FloatKind::F64),
            ));
            if !(elide && ty.float_kind() == Some(crate::types::FloatKind::F64)) {
                out.push_str(" : ");
                write_type(out, *ty, al);
            }
        }
        AttrKind::String { value, ty } => {
            write_escaped_string(out, value);
            if let Some(t) = ty {
                out.push_str(" : ");
                write_type(out, *t, al);
            }
        }
        AttrKind::Array(v) => {
            out.push('[');
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_attr_elide(out, *x, al, true);
            }
            out.push(']');
        }
        AttrKind::DenseArray { elem, values } => {
            out.push_str("array<");
            write_type(out, *elem, al);
            if !values.is_empty() {
                out.push_str(": ");
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_scalar(out, v, *elem);
                }
            }
            out.push('>');
        }
        AttrKind::Dictionary(v) => {
            out.push('{');
            write_named_attrs(out, v, al);
            out.push('}');
        }
        AttrKind::Type(t) => write_type(out, *t, al),
        AttrKind::SymbolRef { root, nested } => {
            write_symbol(out, root);
            for n in nested {
                out.push_str("::");
                write_symbol(out, n);
            }
        }
        AttrKind::AffineMap(m) => {
            out.push_str("affine_map<");
            m.write(out);
            out.push('>');
        }
        AttrKind::IntegerSet(s) => {
            out.push_str("affine_set<");
            s.write(out);
            out.push('>');
        }
        AttrKind::DenseElements {
            ty,
            splat,
            elements,
        } => {
            out.push_str("dense<");
            let elem = ty.element_type();
            if *splat {
                if let Some(s) = elements.first() {
                    write_scalar(out, s, elem);
                }
            } else if elements.len() > 100
                && elem.int_width() != Some(1)
                && hex_width(elem).is_some()
            {
                // mlir-opt prints non-splat elements attributes of more than 100 elements
                // as raw little-endian hex (`--mlir-print-elementsattrs-with-hex-if-larger`).
                out.push_str("\"0x");
                let w = hex_width(elem).unwrap_or(4);
                for e in elements.iter() {
                    let (a, b) = match e {
                        Scalar::Int(v) => (*v as u128, None),
                        Scalar::Float(v) => (*v, None),
                        Scalar::ComplexInt(r, i) => (*r as u128, Some(*i as u128)),
                        Scalar::ComplexFloat(r, i) => (*r, Some(*i)),
                    };
                    for v in std::iter::once(a).chain(b) {
                        for k in 0..w {
                            let _ = write!(out, "{:02X}", (v >> (8 * k)) & 0xFF);
                        }
                    }
                }
                out.push('"');
            } else if !elements.is_empty() {
                let mut i = 0;
                write_dense_nested(out, ty.shape().unwrap_or(&[]), elements, elem, &mut i);
            }
            out.push_str("> : ");
            write_type(out, *ty, al);
        }
        AttrKind::DenseStrings { ty, elements } => {
            out.push_str("dense<");
            let shape = ty.shape().unwrap_or(&[]);
            if elements.len() == 1 && ty.num_elements() != Some(1) || shape.is_empty() {
                if let Some(s) = elements.first() {
                    write_escaped_string(out, s);
                }
            } else {
                fn rec(out: &mut String, shape: &[i64], e: &[String], idx: &mut usize) {
                    if shape.is_empty() {
                        if let Some(s) = e.get(*idx) {
                            write_escaped_string(out, s);
                        }
                        *idx += 1;
                        return;
                    }
                    out.push('[');
                    for i in 0..shape[0] {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        rec(out, &shape[1..], e, idx);
                    }
                    out.push(']');
                }
                let mut i = 0;
                rec(out, shape, elements, &mut i);
            }
            out.push_str("> : ");
            write_type(out, *ty, al);
        }
        AttrKind::Sparse(sp) => {
            let crate::attrs::SparseData {
                ty,
                index_shape,
                indices,
                value_shape,
                values,
            } = &**sp;
            out.push_str("sparse<");
            if !indices.is_empty() || !values.is_empty() {
                let is: Vec<Scalar> = indices.iter().map(|&i| Scalar::Int(i as i128)).collect();
                let mut i = 0;
                if index_shape.is_empty() {
                    write_dense_nested(out, &[], &is, Type::i64(), &mut i);
                } else {
                    write_dense_nested(out, index_shape, &is, Type::i64(), &mut i);
                }
                out.push_str(", ");
                let mut j = 0;
                write_dense_nested(out, value_shape, values, ty.element_type(), &mut j);
            }
            out.push_str("> : ");
            write_type(out, *ty, al);
        }
        AttrKind::DenseResource { ty, handle } => {
            out.push_str("dense_resource<");
            out.push_str(handle);
            out.push_str("> : ");
            write_type(out, *ty, al);
        }
        AttrKind::StridedLayout { offset, strides } => {
            out.push_str("strided<[");
            for (i, s) in strides.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if *s == DYNAMIC {
                    out.push('?');
                } else {
                    let _ = write!(out, "{s}");
                }
            }
            out.push(']');
            if *offset != 0 {
                if *offset == DYNAMIC {
                    out.push_str(", offset: ?");
                } else {
                    let _ = write!(out, ", offset: {offset}");
                }
            }
            out.push('>');
        }
        AttrKind::Location(l) => {
            out.push_str("loc(");
            write_location(out, l, al);
            out.push(')');
        }
        AttrKind::Dialect { dialect, body } => {
            out.push('#');
            out.push_str(dialect);
            if !body.is_empty() && !body.starts_with('<') {
                out.push('.');
            }
            out.push_str(body);
        }
    }
}

/// `a = 1 : i64, b` (unit attributes by name only).
pub fn write_named_attrs(out: &mut String, v: &[(String, Attribute)], al: Option<&Aliases>) {
    for (i, (k, x)) in v.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if is_bare_identifier(k) {
            out.push_str(k);
        } else {
            write_escaped_string(out, k);
        }
        if !matches!(x.kind(), AttrKind::Unit) {
            out.push_str(" = ");
            write_attr(out, *x, al);
        }
    }
}

/// Walk the IR as MLIR's `AliasInitializer` does (for each op: regions first, then operand
/// types, result types, then all attributes sorted by name) and assign alias names.
pub fn collect_aliases(
    ir: &crate::ir::Ir,
    top: crate::ir::OpId,
    debuginfo: bool,
) -> (Aliases, Vec<(String, AliasKey)>) {
    let mut c = Collector {
        seen: FxHashMap::default(),
        order: vec![],
    };
    let _ = debuginfo;
    c.op(ir, top);
    let seen = c.order.iter().map(|k| (*k, c.seen[k].1)).collect();
    Aliases::finish(seen)
}

struct Collector {
    /// value -> (requirement it passes to an enclosing alias, own depth)
    seen: FxHashMap<AliasKey, (Option<usize>, usize)>,
    order: Vec<AliasKey>,
}

impl Collector {
    fn op(&mut self, ir: &crate::ir::Ir, op: crate::ir::OpId) {
        crate::parser::with_stack(|| self.op_inner(ir, op))
    }

    fn op_inner(&mut self, ir: &crate::ir::Ir, op: crate::ir::OpId) {
        let o = ir.op(op);
        for r in &o.regions {
            for b in &ir.region(*r).blocks {
                for a in ir.block_args(*b) {
                    self.ty(ir.value_type(*a));
                }
                for child in ir.block_ops(*b) {
                    self.op(ir, child);
                }
            }
        }
        for v in &o.operands {
            self.ty(ir.value_type(*v));
        }
        for v in &o.results {
            self.ty(ir.value_type(*v));
        }
        let mut all: Vec<&(String, Attribute)> = o
            .props
            .as_dict()
            .unwrap_or(&[])
            .iter()
            .chain(o.attrs.as_dict().unwrap_or(&[]))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, a) in all {
            self.attr(*a);
        }
    }

    fn finish(&mut self, k: AliasKey, children: Option<usize>) -> Option<usize> {
        let aliased = builtin_alias(k).is_some();
        let depth = if aliased {
            children.map(|d| d + 1).unwrap_or(0)
        } else {
            0
        };
        let req = if aliased { Some(depth) } else { children };
        self.seen.insert(k, (req, depth));
        req
    }

    fn ty(&mut self, t: Type) -> Option<usize> {
        crate::parser::with_stack(|| self.ty_inner(t))
    }

    fn ty_inner(&mut self, t: Type) -> Option<usize> {
        let k = AliasKey::Type(t);
        if let Some((r, _)) = self.seen.get(&k) {
            return *r;
        }
        self.seen.insert(k, (None, 0));
        self.order.push(k);
        let mut m: Option<usize> = None;
        let mut acc = |x: Option<usize>| {
            if let Some(x) = x {
                m = Some(m.map_or(x, |y: usize| y.max(x)));
            }
        };
        match t.kind() {
            TypeKind::Function { inputs, results } => {
                for x in inputs.iter().chain(results) {
                    acc(self.ty(*x));
                }
            }
            TypeKind::Tuple(v) => {
                for x in v {
                    acc(self.ty(*x));
                }
            }
            TypeKind::RankedTensor { elem, encoding, .. } => {
                acc(self.ty(*elem));
                if let Some(e) = encoding {
                    acc(self.attr(*e));
                }
            }
            TypeKind::UnrankedTensor { elem }
            | TypeKind::Complex(elem)
            | TypeKind::Vector { elem, .. } => acc(self.ty(*elem)),
            TypeKind::MemRef {
                elem,
                layout,
                memory_space,
                ..
            } => {
                acc(self.ty(*elem));
                if let Some(l) = layout {
                    acc(self.attr(*l));
                }
                if let Some(s) = memory_space {
                    acc(self.attr(*s));
                }
            }
            TypeKind::UnrankedMemRef { elem, memory_space } => {
                acc(self.ty(*elem));
                if let Some(s) = memory_space {
                    acc(self.attr(*s));
                }
            }
            _ => {}
        }
        self.finish(k, m)
    }

    fn attr(&mut self, a: Attribute) -> Option<usize> {
        crate::parser::with_stack(|| self.attr_inner(a))
    }

    fn attr_inner(&mut self, a: Attribute) -> Option<usize> {
        let k = AliasKey::Attr(a);
        if let Some((r, _)) = self.seen.get(&k) {
            return *r;
        }
        self.seen.insert(k, (None, 0));
        self.order.push(k);
        let mut m: Option<usize> = None;
        let mut acc = |x: Option<usize>| {
            if let Some(x) = x {
                m = Some(m.map_or(x, |y: usize| y.max(x)));
            }
        };
        match a.kind() {
            AttrKind::Integer { ty, .. } | AttrKind::Float { ty, .. } => acc(self.ty(*ty)),
            AttrKind::String { ty: Some(ty), .. } => acc(self.ty(*ty)),
            AttrKind::Array(v) => {
                for x in v {
                    acc(self.attr(*x));
                }
            }
            AttrKind::Dictionary(v) => {
                for (_, x) in v {
                    acc(self.attr(*x));
                }
            }
            AttrKind::Type(t) => acc(self.ty(*t)),
            AttrKind::DenseArray { elem, .. } => acc(self.ty(*elem)),
            AttrKind::DenseElements { ty, .. }
            | AttrKind::DenseStrings { ty, .. }
            | AttrKind::DenseResource { ty, .. } => acc(self.ty(*ty)),
            AttrKind::Sparse(sp) => acc(self.ty(sp.ty)),
            AttrKind::Location(l) => match l {
                LocKind::Name { child: Some(c), .. } => acc(self.attr(*c)),
                LocKind::CallSite { callee, caller } => {
                    acc(self.attr(*callee));
                    acc(self.attr(*caller));
                }
                LocKind::Fused { metadata, locs } => {
                    if let Some(md) = metadata {
                        acc(self.attr(*md));
                    }
                    for l in locs {
                        acc(self.attr(*l));
                    }
                }
                _ => {}
            },
            _ => {}
        }
        self.finish(k, m)
    }
}
