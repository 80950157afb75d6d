//! Printing elements attributes: `dense<...>` (nested, splat, or raw hex when large),
//! dense strings and `sparse<...>`.

use super::attrs::{write_escaped_string, write_scalar};
use super::{write_type, Aliases};
use crate::attrs::{Scalar, SparseData};
use crate::types::{Type, TypeKind};
use std::fmt::Write;

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

/// `dense<...> : type`: a splat, raw little-endian hex for more than 100 elements (as
/// mlir-opt), or nested lists by the shape.
pub(super) fn write_dense_elements(
    out: &mut String,
    ty: Type,
    splat: bool,
    elements: &[Scalar],
    al: Option<&Aliases>,
) {
    out.push_str("dense<");
    let elem = ty.element_type();
    if splat {
        if let Some(s) = elements.first() {
            write_scalar(out, s, elem);
        }
    } else if elements.len() > 100 && elem.int_width() != Some(1) && hex_width(elem).is_some() {
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
    write_type(out, ty, al);
}

/// `dense<"a", ...> : type` of strings.
pub(super) fn write_dense_strings(
    out: &mut String,
    ty: Type,
    elements: &[String],
    al: Option<&Aliases>,
) {
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
    write_type(out, ty, al);
}

/// `sparse<indices, values> : type`.
pub(super) fn write_sparse(out: &mut String, sp: &SparseData, al: Option<&Aliases>) {
    let SparseData {
        ty,
        index_shape,
        indices,
        value_shape,
        values,
    } = sp;
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
