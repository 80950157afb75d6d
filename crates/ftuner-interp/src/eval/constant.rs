//! Constants: `arith.constant` and `memref.global` initial values (scalars, dense
//! elements, `dense_resource` blobs) turned into run-time values.

use super::{Interp, InterpError};
use crate::tensor::{RtVal, Tensor};
use ftuner_ir::{AttrKind, OpId, Scalar, Type};
use std::rc::Rc;

impl Interp<'_> {
    pub(crate) fn constant(&self, op: OpId, a: ftuner_ir::Attribute) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let ty = ir
            .results(op)
            .first()
            .map(|v| ir.value_type(*v).to_string())
            .unwrap_or_default();
        let scalar = |s: &Scalar, e: Type| -> f64 {
            match s {
                Scalar::Int(v) => *v as f64,
                Scalar::Float(b) => ftuner_ir::float::bits_to_f64(
                    *b,
                    e.float_kind().unwrap_or(ftuner_ir::FloatKind::F64),
                ),
                _ => f64::NAN,
            }
        };
        // An integer the f64 carrier would round (2^63 - 1 becomes 2^63) is refused here,
        // so every integer the interpreter computes on is exact (crate::exact_int).
        let exact = |v: i128| {
            crate::body::exact_int(v)
                .map_err(|m| InterpError::at(ir, op, format!("the constant {m}")))
        };
        if let AttrKind::DenseElements { elements, .. } = a.kind() {
            for s in elements {
                if let Scalar::Int(v) = s {
                    exact(*v)?;
                }
            }
        }
        Ok(match a.kind() {
            AttrKind::Integer { value, .. } => RtVal::Scalar(exact(*value)?),
            AttrKind::Bool(b) => RtVal::Scalar(*b as i64 as f64),
            AttrKind::Float { bits, ty } => RtVal::Scalar(ftuner_ir::float::bits_to_f64(
                *bits,
                ty.float_kind().unwrap_or(ftuner_ir::FloatKind::F64),
            )),
            AttrKind::DenseElements {
                ty: t,
                splat,
                elements,
            } => {
                let shape: Vec<usize> = t
                    .shape()
                    .unwrap_or(&[])
                    .iter()
                    .map(|d| *d as usize)
                    .collect();
                let n: usize = shape.iter().product();
                let e = t.element_type();
                let data = if *splat {
                    vec![elements.first().map(|s| scalar(s, e)).unwrap_or(0.0); n]
                } else {
                    elements.iter().map(|s| scalar(s, e)).collect()
                };
                RtVal::Tensor(Rc::new(Tensor::new(shape, e, data)))
            }
            AttrKind::DenseResource { ty: t, handle } => {
                let r = ir
                    .resources
                    .iter()
                    .find(|r| r.key == *handle)
                    .ok_or_else(|| {
                        InterpError::at(ir, op, format!("no resource blob '{handle}'"))
                    })?;
                let hex = r.value.trim_matches('"').trim_start_matches("0x");
                let bytes: Vec<u8> = (0..hex.len() / 2)
                    .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
                    .collect();
                let e = t.element_type();
                if e != Type::f32() {
                    return Err(InterpError::at(
                        ir,
                        op,
                        "dense_resource blobs other than f32 are not supported",
                    ));
                }
                // The blob starts with a 4-byte alignment header.
                let data: Vec<f64> = bytes
                    .get(4..)
                    .unwrap_or(&[])
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
                    .collect();
                let shape: Vec<usize> = t
                    .shape()
                    .unwrap_or(&[])
                    .iter()
                    .map(|d| *d as usize)
                    .collect();
                if data.len() != shape.iter().product::<usize>() {
                    return Err(InterpError::at(
                        ir,
                        op,
                        format!(
                            "blob '{handle}' holds {} elements, the type needs {}",
                            data.len(),
                            shape.iter().product::<usize>()
                        ),
                    ));
                }
                RtVal::Tensor(Rc::new(Tensor::new(shape, e, data)))
            }
            _ => {
                return Err(InterpError::at(
                    ir,
                    op,
                    format!("unsupported constant of type {ty}"),
                ))
            }
        })
    }
}
