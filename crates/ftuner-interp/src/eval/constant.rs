//! Constants: `arith.constant` and `memref.global` initial values (scalars, dense
//! elements, `dense_resource` blobs) turned into run-time values.

use super::{Interp, InterpError};
use crate::tensor::{RtVal, Tensor};
use crate::word::Word;
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
        let scalar = |s: &Scalar, e: Type| -> Word {
            match s {
                Scalar::Int(v) => Word::wrapped(*v, e),
                Scalar::Float(b) => Word::float(ftuner_ir::float::bits_to_f64(
                    *b,
                    e.float_kind().unwrap_or(ftuner_ir::FloatKind::F64),
                )),
                _ => Word::float(f64::NAN),
            }
        };
        // Integers of more than 64 bits are outside the model (a word holds 64): the
        // attribute's own type (a `memref.global`'s initial value has no result).
        if let Some(t) = a.typed_type() {
            if t.element_type().int_width().is_some_and(|w| w > 64) {
                return Err(InterpError::at(
                    ir,
                    op,
                    format!(
                        "the constant of type {t} is {}: integers of more than 64 bits are not modelled",
                        crate::UNMODELLED
                    ),
                ));
            }
        }
        Ok(match a.kind() {
            AttrKind::Integer { value, ty: t } => RtVal::Scalar(Word::wrapped(*value, *t)),
            AttrKind::Bool(b) => RtVal::Scalar(Word::bool(*b)),
            AttrKind::Float { bits, ty } => {
                RtVal::Scalar(Word::float(ftuner_ir::float::bits_to_f64(
                    *bits,
                    ty.float_kind().unwrap_or(ftuner_ir::FloatKind::F64),
                )))
            }
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
                    vec![elements.first().map(|s| scalar(s, e)).unwrap_or(Word::ZERO); n]
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
                let data: Vec<Word> = bytes
                    .get(4..)
                    .unwrap_or(&[])
                    .chunks_exact(4)
                    .map(|c| Word::float(f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64))
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
