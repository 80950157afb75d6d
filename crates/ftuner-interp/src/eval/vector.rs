//! `vector` ops: transfers between vectors and buffers or tensors (permutation maps,
//! padding), and the value ops (broadcast, fma, shuffle) on vectors held as tensors.

use super::{Env, Interp, InterpError};
use crate::body::fused;
use crate::tensor::{round_to, RtVal, Tensor};
use crate::word::Word;
use ftuner_ir::{AffineExpr, OpId, Type};
use std::rc::Rc;

impl Interp<'_> {
    /// Per vector position, the source index a transfer reads or writes: `base` with each
    /// vector dim added along the source dim its permutation map names (a `0` result
    /// broadcasts).
    fn transfer_indices(
        &self,
        op: OpId,
        base: &[i64],
        vshape: &[usize],
    ) -> Result<Vec<Vec<i64>>, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let map = ir
            .attr(op, "permutation_map")
            .and_then(|a| a.as_affine_map())
            .ok_or_else(|| err("has no permutation_map".into()))?;
        if map.results.len() != vshape.len() {
            return Err(err("permutation_map does not match the vector rank".into()));
        }
        let n: usize = vshape.iter().product();
        let mut out = Vec::with_capacity(n);
        for flat in 0..n {
            let mut idx = base.to_vec();
            let mut rest = flat;
            for (t, e) in map.results.iter().enumerate().rev() {
                let j = (rest % vshape[t]) as i64;
                rest /= vshape[t];
                match e {
                    AffineExpr::Dim(d) if (*d as usize) < idx.len() => idx[*d as usize] += j,
                    AffineExpr::Const(0) => {}
                    _ => return Err(err(format!("unsupported permutation_map result {e:?}"))),
                }
            }
            out.push(idx);
        }
        Ok(out)
    }

    /// Whether every dim of a transfer is declared in bounds (`in_bounds = [true, ...]`):
    /// then a lane outside the source is an error, as convert-to-llvm reads and writes
    /// such lanes unchecked; otherwise a read gives the padding and a write drops them
    /// (MLIR's out-of-bounds semantics).
    fn declared_in_bounds(&self, op: OpId) -> bool {
        self.ir
            .attr(op, "in_bounds")
            .and_then(|a| a.as_array())
            .is_some_and(|a| {
                !a.is_empty()
                    && a.iter()
                        .all(|b| matches!(b.kind(), ftuner_ir::AttrKind::Bool(true)))
            })
    }

    /// The error for lane index `idx` of transfer `op`, outside a source of `shape`
    /// although the transfer is declared in bounds.
    fn out_of_bounds(&self, op: OpId, idx: &[i64], shape: &[usize]) -> InterpError {
        InterpError::at(
            self.ir,
            op,
            format!(
                "is declared in bounds, but a lane's index {idx:?} is outside its source of shape {shape:?} (compiled code would access memory outside it)"
            ),
        )
    }

    /// The index operands of a transfer (segment `seg`, after `seg` leading operands),
    /// evaluated; masked transfers and malformed segments are errors. Returns the indices
    /// and how many there are.
    fn transfer_base(
        &self,
        env: &Env,
        op: OpId,
        segs: &[i64],
        seg: usize,
    ) -> Result<(Vec<i64>, usize), InterpError> {
        let ir = self.ir;
        let err = |m: &str| InterpError::at(ir, op, m);
        if segs.get(3).copied().unwrap_or(0) != 0 {
            return Err(err("masked transfers are not supported"));
        }
        let n = segs.get(seg).copied().unwrap_or(0) as usize;
        let ops = ir.operands(op);
        // A read also needs its padding operand after the indices.
        let need = seg + n + usize::from(seg == 1);
        if ops.len() < need {
            return Err(err("operand segments do not match the operands"));
        }
        let base = self.indices(env, op, &ops[seg..seg + n])?;
        Ok((base, n))
    }

    /// A `vector` op: transfers on buffers here, the value forms in
    /// [`Self::vector_value_op`].
    pub(super) fn vector_op(
        &mut self,
        op: OpId,
        short: &str,
        env: &mut Env,
    ) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let ops = ir.operands(op);
        let segs = ir
            .attr(op, "operandSegmentSizes")
            .and_then(|a| a.as_dense_i64s())
            .unwrap_or_default();
        // Transfers on buffers; the tensor forms below.
        let on = match short {
            "transfer_read" => ops.first(),
            "transfer_write" => ops.get(1),
            _ => None,
        };
        let Some(RtVal::MemRef(m)) = on.map(|v| self.get(env, *v, op)).transpose()? else {
            return self.vector_value_op(op, short, env).map(|v| vec![v]);
        };
        m.alive().map_err(&err)?;
        if short == "transfer_read" {
            let (base, n_idx) = self.transfer_base(env, op, &segs, 1)?;
            let pad = self.scalar(env, ops[1 + n_idx], op)?;
            let ty = ir.value_type(ir.result(op, 0));
            let shape: Vec<usize> = ty
                .shape()
                .unwrap_or(&[])
                .iter()
                .map(|d| *d as usize)
                .collect();
            let strict = self.declared_in_bounds(op);
            let data = m.store.data.borrow();
            let mut vals = vec![];
            for idx in self.transfer_indices(op, &base, &shape)? {
                match m.index_of(&idx).and_then(|o| data.get(o).copied()) {
                    Some(x) => vals.push(x),
                    None if strict => return Err(self.out_of_bounds(op, &idx, &m.sizes)),
                    None => vals.push(pad),
                }
            }
            return Ok(vec![RtVal::Tensor(Rc::new(Tensor::new(
                shape,
                ty.element_type(),
                vals,
            )))]);
        }
        let (base, _) = self.transfer_base(env, op, &segs, 2)?;
        let v = self.tensor(env, ops[0], op)?;
        let strict = self.declared_in_bounds(op);
        let mut data = m.store.data.borrow_mut();
        for (k, idx) in self
            .transfer_indices(op, &base, &v.shape)?
            .iter()
            .enumerate()
        {
            match m.index_of(idx).and_then(|o| data.get_mut(o)) {
                Some(slot) => *slot = round_to(v.data[k], m.elem),
                None if strict => return Err(self.out_of_bounds(op, idx, &m.sizes)),
                None => {}
            }
        }
        Ok(vec![])
    }

    /// A `vector` op on values (vectors are tensors here): broadcast, fma, shuffle, and
    /// transfers on tensors.
    fn vector_value_op(
        &mut self,
        op: OpId,
        short: &str,
        env: &mut Env,
    ) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let ops = ir.operands(op).to_vec();
        let segs = ir
            .attr(op, "operandSegmentSizes")
            .and_then(|a| a.as_dense_i64s())
            .unwrap_or_default();
        let vec_shape = |t: Type| -> Vec<usize> {
            t.shape()
                .unwrap_or(&[])
                .iter()
                .map(|d| *d as usize)
                .collect()
        };
        match short {
            "broadcast" => {
                let ty = ir.value_type(ir.result(op, 0));
                let shape = vec_shape(ty);
                let n: usize = shape.iter().product();
                let data = match self.get(env, ops[0], op)? {
                    RtVal::Scalar(x) => vec![x; n],
                    RtVal::Tensor(t) => {
                        // Trailing dims align; leading ones repeat.
                        let m = t.data.len().max(1);
                        if !n.is_multiple_of(m) || !shape.ends_with(&t.shape) {
                            return Err(err(format!(
                                "cannot broadcast {:?} to {:?}",
                                t.shape, shape
                            )));
                        }
                        (0..n).map(|i| t.data[i % m]).collect()
                    }
                    RtVal::MemRef(_) => return Err(err("cannot broadcast a memref".into())),
                };
                Ok(RtVal::Tensor(Rc::new(Tensor::new(
                    shape,
                    ty.element_type(),
                    data,
                ))))
            }
            "fma" => {
                let a = self.tensor(env, ops[0], op)?;
                let b = self.tensor(env, ops[1], op)?;
                let c = self.tensor(env, ops[2], op)?;
                if a.shape != b.shape || a.shape != c.shape {
                    return Err(err("operand shapes differ".into()));
                }
                // Each lane as math.fma computes it (one rounding), without its checks.
                let e = a.elem;
                let data = (0..a.data.len())
                    .map(|i| {
                        let (x, y, z) = (a.data[i].f(), b.data[i].f(), c.data[i].f());
                        round_to(Word::float(fused(x, y, z, e)), e)
                    })
                    .collect();
                Ok(RtVal::Tensor(Rc::new(Tensor::new(
                    a.shape.clone(),
                    a.elem,
                    data,
                ))))
            }
            "shuffle" => {
                let a = self.tensor(env, ops[0], op)?;
                let b = self.tensor(env, ops[1], op)?;
                let mask = ir
                    .attr(op, "mask")
                    .and_then(|m| m.as_dense_i64s())
                    .ok_or_else(|| err("has no mask".into()))?;
                // Rows along the leading dim (a 0-d vector is one row of one lane).
                let row = a.shape.iter().skip(1).product::<usize>().max(1);
                let na = (a.data.len() / row) as i64;
                let nb = (b.data.len() / row) as i64;
                let mut data = Vec::with_capacity(mask.len() * row);
                for &i in &mask {
                    let (src, j) = match i {
                        i if (0..na).contains(&i) => (&a.data, i),
                        i if (na..na + nb).contains(&i) => (&b.data, i - na),
                        // -1: an undefined row.
                        -1 => {
                            data.extend(std::iter::repeat_n(Word::ZERO, row));
                            continue;
                        }
                        i => return Err(err(format!("mask entry {i} is out of range"))),
                    };
                    let j = j as usize * row;
                    data.extend_from_slice(&src[j..j + row]);
                }
                let mut shape = vec![mask.len()];
                shape.extend(a.shape.iter().skip(1));
                Ok(RtVal::Tensor(Rc::new(Tensor::new(shape, a.elem, data))))
            }
            "transfer_read" => {
                let (base, n_idx) = self.transfer_base(env, op, &segs, 1)?;
                let src = self.tensor(env, ops[0], op)?;
                let pad = self.scalar(env, ops[1 + n_idx], op)?;
                let ty = ir.value_type(ir.result(op, 0));
                let shape = vec_shape(ty);
                let strict = self.declared_in_bounds(op);
                let mut data = vec![];
                for idx in self.transfer_indices(op, &base, &shape)? {
                    match src.offset(&idx) {
                        Some(o) => data.push(src.data[o]),
                        None if strict => return Err(self.out_of_bounds(op, &idx, &src.shape)),
                        None => data.push(pad),
                    }
                }
                Ok(RtVal::Tensor(Rc::new(Tensor::new(
                    shape,
                    ty.element_type(),
                    data,
                ))))
            }
            "transfer_write" => {
                let (base, _) = self.transfer_base(env, op, &segs, 2)?;
                let v = self.tensor(env, ops[0], op)?;
                let mut dst = (*self.tensor(env, ops[1], op)?).clone();
                let strict = self.declared_in_bounds(op);
                for (k, idx) in self
                    .transfer_indices(op, &base, &v.shape)?
                    .iter()
                    .enumerate()
                {
                    match dst.offset(idx) {
                        Some(o) => dst.data[o] = v.data[k],
                        None if strict => return Err(self.out_of_bounds(op, idx, &dst.shape)),
                        None => {}
                    }
                }
                Ok(RtVal::Tensor(Rc::new(dst)))
            }
            _ => Err(err("is not supported by the interpreter".into())),
        }
    }
}
