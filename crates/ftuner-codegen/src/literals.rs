//! Constants as LLVM IR literals: floats in LLVM's exact spellings, integer and float
//! scalars, dense and splat arrays (nested as LLVM writes aggregates), and the bytes of
//! `dense_resource` blobs.

use crate::emit::ty;
use ftuner_ir::{AttrKind, Attribute, FloatKind, Ir, Scalar, Type};
use std::fmt::Write;

/// LLVM's spelling of a float of type `t` (exact hex for anything not an integer).
pub(crate) fn float_lit(x: f64, t: Type) -> String {
    match t.float_kind() {
        Some(FloatKind::F16) => format!("0xH{:04X}", ftuner_ir::float::f64_to_bits(x, t) as u16),
        Some(FloatKind::BF16) => format!("0xR{:04X}", ftuner_ir::float::f64_to_bits(x, t) as u16),
        Some(FloatKind::F32) => format!("0x{:016X}", (x as f32 as f64).to_bits()),
        _ => format!("0x{:016X}", x.to_bits()),
    }
}

fn scalar_lit(s: &Scalar, elem: Type) -> Option<String> {
    Some(match s {
        Scalar::Int(v) if elem.int_width() == Some(1) => {
            if *v & 1 != 0 { "true" } else { "false" }.into()
        }
        Scalar::Int(v) if elem.is_float() => float_lit(*v as f64, elem),
        Scalar::Int(v) => v.to_string(),
        Scalar::Float(b) => float_lit(
            ftuner_ir::float::bits_to_f64(*b, elem.float_kind().unwrap_or(FloatKind::F64)),
            elem,
        ),
        _ => return None,
    })
}

/// A constant of LLVM type text `lt` from an attribute (scalars, dense vectors and
/// dense tensors as nested arrays).
pub(crate) fn const_lit(a: Attribute, lt: &str) -> Option<String> {
    match a.kind() {
        AttrKind::Integer { value, ty } => {
            if ty.int_width() == Some(1) {
                Some(if *value & 1 != 0 { "true" } else { "false" }.into())
            } else {
                Some(value.to_string())
            }
        }
        AttrKind::Bool(b) => Some(if *b { "true" } else { "false" }.into()),
        AttrKind::Float { bits, ty } => Some(float_lit(
            ftuner_ir::float::bits_to_f64(*bits, ty.float_kind().unwrap_or(FloatKind::F64)),
            *ty,
        )),
        AttrKind::DenseElements {
            ty: t,
            splat,
            elements,
        } => {
            let shape = t.shape().unwrap_or(&[]).to_vec();
            let elem = t.element_type();
            let et = ty(if elem.is_index() { Type::i64() } else { elem })?;
            let n: usize = shape.iter().map(|d| *d as usize).product();
            let lits: Option<Vec<String>> = (0..n)
                .map(|i| {
                    let s = if *splat {
                        elements.first()
                    } else {
                        elements.get(i)
                    };
                    s.and_then(|s| scalar_lit(s, elem))
                })
                .collect();
            let lits = lits?;
            if t.is_vector() {
                Some(format!(
                    "<{}>",
                    lits.iter()
                        .map(|l| format!("{et} {l}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            } else {
                Some(nested(&shape, &lits, &et))
            }
        }
        AttrKind::String { value, .. } if lt.starts_with('[') => {
            let mut s = String::from("c\"");
            for b in value.bytes() {
                if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
                    s.push(b as char);
                } else {
                    let _ = write!(s, "\\{b:02X}");
                }
            }
            s.push('"');
            Some(s)
        }
        _ => None,
    }
}

/// A `dense_resource` initializer: the module's blob (hex, a 4-byte alignment header,
/// then little-endian elements) as nested arrays. None when `a` is not a resource.
pub(crate) fn resource_lit(ir: &Ir, a: Attribute) -> Option<Result<String, String>> {
    let AttrKind::DenseResource { ty: t, handle } = a.kind() else {
        return None;
    };
    Some((|| {
        let r = ir
            .resources
            .iter()
            .find(|r| r.key == *handle)
            .ok_or_else(|| format!("no resource blob '{handle}'"))?;
        let hex = r.value.trim_matches('"').trim_start_matches("0x");
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
            .collect();
        let elem = t.element_type();
        let et = ty(elem).ok_or_else(|| format!("element type {elem}"))?;
        let w = elem.bit_width().unwrap_or(0) as usize / 8;
        let shape = t.shape().unwrap_or(&[]).to_vec();
        let n: usize = shape.iter().map(|d| *d as usize).product();
        let data = bytes.get(4..).unwrap_or(&[]);
        if w == 0 || data.len() != n * w {
            return Err(format!(
                "blob '{handle}' holds {} bytes, {t} needs {}",
                data.len(),
                n * w
            ));
        }
        let lits: Vec<String> = data
            .chunks_exact(w)
            .map(|c| match (elem.float_kind(), w) {
                (Some(FloatKind::F32), 4) => {
                    float_lit(f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64, elem)
                }
                (Some(FloatKind::F64), 8) => {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(c);
                    float_lit(f64::from_le_bytes(b), elem)
                }
                (Some(_), 2) => format!(
                    "0x{}{:04X}",
                    if elem.float_kind() == Some(FloatKind::BF16) {
                        "R"
                    } else {
                        "H"
                    },
                    u16::from_le_bytes([c[0], c[1]])
                ),
                _ => {
                    let mut b = [0u8; 8];
                    b[..w].copy_from_slice(c);
                    let v = i64::from_le_bytes(b);
                    let sh = 64 - 8 * w as u32;
                    ((v << sh) >> sh).to_string()
                }
            })
            .collect();
        Ok(nested(&shape, &lits, &et))
    })())
}

/// A row-major list of element literals as nested LLVM arrays.
fn nested(shape: &[i64], lits: &[String], et: &str) -> String {
    fn ty_of(shape: &[i64], et: &str) -> String {
        shape
            .iter()
            .rev()
            .fold(et.to_string(), |acc, d| format!("[{d} x {acc}]"))
    }
    match shape.split_first() {
        None => lits.first().cloned().unwrap_or_default(),
        Some((d, rest)) => {
            let per: usize = rest.iter().map(|x| *x as usize).product::<usize>().max(1);
            let inner_t = ty_of(rest, et);
            let items: Vec<String> = (0..*d as usize)
                .map(|i| {
                    let chunk = &lits[(i * per).min(lits.len())..((i + 1) * per).min(lits.len())];
                    format!("{inner_t} {}", nested(rest, chunk, et))
                })
                .collect();
            format!("[{}]", items.join(", "))
        }
    }
}

// ----- functions ---------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_literals_are_exact() {
        assert_eq!(float_lit(0.1, Type::f32()), "0x3FB99999A0000000");
        assert_eq!(float_lit(1.0, Type::f64()), "0x3FF0000000000000");
    }
}
