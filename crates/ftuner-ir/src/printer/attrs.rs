//! Printing attributes: scalars, strings and symbols, arrays and dictionaries, locations,
//! strided layouts; dense and sparse elements are in `dense`.

use super::dense::{write_dense_elements, write_dense_strings, write_sparse};
use super::{write_type, AliasKey, Aliases};
use crate::attrs::{AttrKind, Attribute, LocKind, Scalar};
use crate::types::{Signedness, Type, TypeKind, DYNAMIC};
use std::fmt::Write;

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

pub(super) fn write_scalar(out: &mut String, s: &Scalar, elem: Type) {
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
        } => write_dense_elements(out, *ty, *splat, elements, al),
        AttrKind::DenseStrings { ty, elements } => write_dense_strings(out, *ty, elements, al),
        AttrKind::Sparse(sp) => write_sparse(out, sp, al),
        AttrKind::DenseResource { ty, handle } => {
            out.push_str("dense_resource<");
            out.push_str(handle);
            out.push_str("> : ");
            write_type(out, *ty, al);
        }
        AttrKind::StridedLayout { offset, strides } => write_strided_layout(out, *offset, strides),
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

/// `strided<[s0, ?], offset: o>`.
fn write_strided_layout(out: &mut String, offset: i64, strides: &[i64]) {
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
    if offset != 0 {
        if offset == DYNAMIC {
            out.push_str(", offset: ?");
        } else {
            let _ = write!(out, ", offset: {offset}");
        }
    }
    out.push('>');
}
