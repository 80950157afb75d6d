//! Run-time values.

use ftuner_ir::{FloatKind, Type};
use std::rc::Rc;

/// A dense row-major n-d array.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub elem: Type,
    pub data: Vec<f64>,
}

impl Tensor {
    pub fn new(shape: Vec<usize>, elem: Type, data: Vec<f64>) -> Tensor {
        Tensor { shape, elem, data }
    }
    pub fn zeros(shape: Vec<usize>, elem: Type) -> Tensor {
        let n = shape.iter().product();
        Tensor {
            shape,
            elem,
            data: vec![0.0; n],
        }
    }
    pub fn strides(&self) -> Vec<usize> {
        let mut s = vec![1; self.shape.len()];
        for i in (0..self.shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * self.shape[i + 1];
        }
        s
    }
    pub fn offset(&self, idx: &[i64]) -> Option<usize> {
        if idx.len() != self.shape.len() {
            return None;
        }
        let mut off = 0usize;
        let st = self.strides();
        for ((i, d), s) in idx.iter().zip(&self.shape).zip(st) {
            if *i < 0 || *i as usize >= *d {
                return None;
            }
            off += *i as usize * s;
        }
        Some(off)
    }
}

/// A value: a tensor or a scalar (ints, index and i1 as exact `f64`).
#[derive(Clone, Debug)]
pub enum RtVal {
    Tensor(Rc<Tensor>),
    Scalar(f64),
}

impl RtVal {
    pub fn tensor(&self) -> Option<&Tensor> {
        match self {
            RtVal::Tensor(t) => Some(t),
            _ => None,
        }
    }
    pub fn scalar(&self) -> Option<f64> {
        match self {
            RtVal::Scalar(s) => Some(*s),
            _ => None,
        }
    }
}

/// Round a value to the precision of `ty` (floats) or wrap it to its width (integers).
pub fn round_to(v: f64, ty: Type) -> f64 {
    match ty.float_kind() {
        Some(FloatKind::F32) => v as f32 as f64,
        Some(FloatKind::F16) => {
            ftuner_ir::float::bits_to_f64(ftuner_ir::float::f64_to_bits(v, ty), FloatKind::F16)
        }
        Some(FloatKind::BF16) => {
            ftuner_ir::float::bits_to_f64(ftuner_ir::float::f64_to_bits(v, ty), FloatKind::BF16)
        }
        Some(_) => v,
        None => match ty.int_width() {
            Some(1) => (v as i64 & 1) as f64,
            Some(w) if w < 64 => {
                let m = 1i128 << w;
                let mut x = (v as i128).rem_euclid(m);
                if x >= m / 2 {
                    x -= m;
                }
                x as f64
            }
            _ => v.trunc(),
        },
    }
}
