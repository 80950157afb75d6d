//! Printing types: builtin types in MLIR's spelling (shapes, encodings, layouts, memory
//! spaces), through their aliases where they have one.

use super::{write_attr, write_attr_elide, AliasKey, Aliases};
use crate::types::{Signedness, Type, TypeKind, DYNAMIC};
use std::fmt::Write;

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
