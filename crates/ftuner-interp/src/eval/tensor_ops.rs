//! `tensor` ops on values: creation (`empty`, `from_elements`, `splat`, `generate`),
//! element access (`extract`, `insert`), queries (`dim`, `rank`), reshapes (`cast`,
//! `reshape`, `collapse_shape`, `expand_shape`), `concat`, slices (`extract_slice`,
//! `insert_slice`) and `pad`.

use super::{check_type, unravel, Env, Interp, InterpError};
use crate::body::compile;
use crate::tensor::{checked_sizes, RtVal, Tensor};
use crate::word::Word;
use ftuner_ir::{Ir, OpId};
use std::rc::Rc;

/// The dense `i64` array attribute `name` of `op` (empty when absent).
fn dense_attr(ir: &Ir, op: OpId, name: &str) -> Vec<i64> {
    ir.attr(op, name)
        .and_then(|x| x.as_dense_i64s())
        .unwrap_or_default()
}

/// The static shape of a shaped type as `usize`s (empty when unranked or not shaped).
fn static_shape(t: ftuner_ir::Type) -> Vec<usize> {
    t.shape()
        .unwrap_or(&[])
        .iter()
        .map(|d| *d as usize)
        .collect()
}

impl Interp<'_> {
    /// A `tensor` op: scalar queries return directly, new tensors are checked against the
    /// result type.
    pub(super) fn tensor_op(
        &mut self,
        op: OpId,
        short: &str,
        env: &mut Env,
    ) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let rt = ir.value_type(ir.result(op, 0));
        let ops = ir.operands(op);
        let out = match short {
            "dim" => return self.tensor_dim(op, env),
            "rank" => {
                return Ok(RtVal::Scalar(Word::int(
                    self.tensor(env, ops[0], op)?.shape.len() as i64,
                )))
            }
            "extract" => return self.tensor_extract(op, env),
            "cast" => {
                let t = self.tensor(env, ops[0], op)?;
                check_type(ir, op, rt, &t)?;
                return Ok(RtVal::Tensor(t));
            }
            "empty" => {
                let shape = self.mixed(env, op, rt.shape().unwrap_or(&[]), ops)?;
                let sizes = checked_sizes(&shape).map_err(|m| InterpError::at(ir, op, m))?;
                let n = sizes.iter().product();
                // Contents no op wrote: marked, so a result that reads them is known.
                let e = rt.element_type();
                Tensor::new(sizes, e, vec![crate::tensor::undefined(e); n])
            }
            "insert" => self.tensor_insert(op, env)?,
            "from_elements" => {
                let data: Vec<Word> = ops
                    .iter()
                    .map(|v| self.scalar(env, *v, op))
                    .collect::<Result<_, _>>()?;
                Tensor::new(static_shape(rt), rt.element_type(), data)
            }
            "splat" => {
                let v = self.scalar(env, ops[0], op)?;
                let shape = self.mixed(env, op, rt.shape().unwrap_or(&[]), &ops[1..])?;
                let mut t = Tensor::zeros(
                    checked_sizes(&shape).map_err(|m| InterpError::at(ir, op, m))?,
                    rt.element_type(),
                );
                t.data.iter_mut().for_each(|x| *x = v);
                t
            }
            "reshape" => self.tensor_reshape(op, env)?,
            "collapse_shape" | "expand_shape" => self.tensor_reassociate(op, short, env)?,
            "concat" => self.tensor_concat(op, env)?,
            "extract_slice" => self.extract_slice(op, env)?,
            "insert_slice" => self.insert_slice(op, env)?,
            "pad" | "generate" => self.pad_or_generate(op, short, env)?,
            _ => {
                return Err(InterpError::at(
                    ir,
                    op,
                    "is not supported by the interpreter",
                ))
            }
        };
        check_type(ir, op, rt, &out)?;
        Ok(RtVal::Tensor(Rc::new(out)))
    }

    /// `tensor.dim`: the size of one dimension.
    fn tensor_dim(&self, op: OpId, env: &Env) -> Result<RtVal, InterpError> {
        let ops = self.ir.operands(op);
        let t = self.tensor(env, ops[0], op)?;
        let i = self.index(env, ops[1], op)?;
        let d = t
            .shape
            .get(usize::try_from(i).unwrap_or(usize::MAX))
            .ok_or_else(|| InterpError::at(self.ir, op, format!("dimension {i} out of range")))?;
        Ok(RtVal::Scalar(Word::int(*d as i64)))
    }

    /// Where element `idx` of `t` is, or an error at `op` when it is out of bounds.
    fn element_offset(&self, op: OpId, t: &Tensor, idx: &[i64]) -> Result<usize, InterpError> {
        t.offset(idx).ok_or_else(|| {
            InterpError::at(
                self.ir,
                op,
                format!("index {idx:?} out of bounds for shape {:?}", t.shape),
            )
        })
    }

    /// `tensor.extract`: one element.
    fn tensor_extract(&self, op: OpId, env: &Env) -> Result<RtVal, InterpError> {
        let ops = self.ir.operands(op);
        let t = self.tensor(env, ops[0], op)?;
        let idx: Vec<i64> = self.indices(env, op, &ops[1..])?;
        let off = self.element_offset(op, &t, &idx)?;
        Ok(RtVal::Scalar(t.data[off]))
    }

    /// `tensor.insert`: a copy with one element replaced.
    fn tensor_insert(&self, op: OpId, env: &Env) -> Result<Tensor, InterpError> {
        let ops = self.ir.operands(op);
        let v = self.scalar(env, ops[0], op)?;
        let mut t = (*self.tensor(env, ops[1], op)?).clone();
        let idx: Vec<i64> = self.indices(env, op, &ops[2..])?;
        let off = self.element_offset(op, &t, &idx)?;
        t.data[off] = v;
        Ok(t)
    }

    /// `tensor.reshape`: the data under the shape held by a 1-d shape tensor.
    fn tensor_reshape(&self, op: OpId, env: &Env) -> Result<Tensor, InterpError> {
        let ops = self.ir.operands(op);
        let t = self.tensor(env, ops[0], op)?;
        let s = self.tensor(env, ops[1], op)?;
        let shape: Vec<usize> = s
            .data
            .iter()
            .map(|d| usize::try_from(d.i()).unwrap_or(usize::MAX))
            .collect();
        if shape
            .iter()
            .copied()
            .try_fold(1usize, |a, b| a.checked_mul(b))
            != Some(t.data.len())
        {
            return Err(InterpError::at(
                self.ir,
                op,
                format!("cannot reshape {:?} into {:?}", t.shape, s.to_i64()),
            ));
        }
        Ok(Tensor::new(shape, t.elem, t.data.clone()))
    }

    /// `tensor.collapse_shape` (groups of dims multiplied together) and
    /// `tensor.expand_shape` (to its output shape): the same data in a new shape.
    fn tensor_reassociate(&self, op: OpId, short: &str, env: &Env) -> Result<Tensor, InterpError> {
        let ir = self.ir;
        let ops = ir.operands(op);
        let t = self.tensor(env, ops[0], op)?;
        let shape: Vec<i64> = if short == "expand_shape" {
            self.mixed(
                env,
                op,
                &dense_attr(ir, op, "static_output_shape"),
                &ops[1..],
            )?
        } else {
            let groups = ir
                .attr(op, "reassociation")
                .and_then(|a| a.as_array())
                .unwrap_or(&[]);
            groups
                .iter()
                .map(|g| {
                    g.as_array()
                        .unwrap_or(&[])
                        .iter()
                        .map(|d| {
                            t.shape
                                .get(d.as_i64().unwrap_or(0) as usize)
                                .copied()
                                .unwrap_or(1) as i64
                        })
                        .product()
                })
                .collect()
        };
        if shape.iter().product::<i64>() as usize != t.data.len() {
            return Err(InterpError::at(
                ir,
                op,
                format!("cannot reshape {:?} into {shape:?}", t.shape),
            ));
        }
        Ok(Tensor::new(
            shape.iter().map(|d| *d as usize).collect(),
            t.elem,
            t.data.clone(),
        ))
    }

    /// `tensor.concat`: the inputs one after another along `dim` (row-major blocks: each
    /// input contributes `inner * its size along dim` elements per outer index).
    fn tensor_concat(&self, op: OpId, env: &Env) -> Result<Tensor, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let d = ir.attr(op, "dim").and_then(|a| a.as_i64()).unwrap_or(-1);
        let ts = ir
            .operands(op)
            .iter()
            .map(|v| self.tensor(env, *v, op))
            .collect::<Result<Vec<_>, _>>()?;
        let first = ts.first().ok_or_else(|| err("no inputs".into()))?;
        let rank = first.shape.len();
        let d = usize::try_from(d)
            .ok()
            .filter(|d| *d < rank)
            .ok_or_else(|| err("concatenation dim out of range".into()))?;
        for t in &ts {
            if t.shape.len() != rank || (0..rank).any(|k| k != d && t.shape[k] != first.shape[k]) {
                return Err(err(format!(
                    "concatenated shapes {:?} and {:?} differ outside dim {d}",
                    first.shape, t.shape
                )));
            }
        }
        let mut shape = first.shape.clone();
        shape[d] = ts.iter().map(|t| t.shape[d]).sum();
        let outer: usize = shape[..d].iter().product();
        let inner: usize = shape[d + 1..].iter().product();
        let mut data = Vec::with_capacity(outer * shape[d] * inner);
        for o in 0..outer {
            for t in &ts {
                let blk = t.shape[d] * inner;
                data.extend_from_slice(&t.data[o * blk..(o + 1) * blk]);
            }
        }
        Ok(Tensor::new(shape, first.elem, data))
    }

    /// The offsets, sizes and strides of a slice op whose dynamic values follow `rest`
    /// leading tensor operands, checked to stay within `big` (the shape of the larger
    /// tensor: the source of an extract, the destination of an insert).
    fn slice_params(
        &self,
        op: OpId,
        env: &Env,
        rest: usize,
        big: &[usize],
    ) -> Result<[Vec<i64>; 3], InterpError> {
        let ir = self.ir;
        let ops = ir.operands(op);
        let seg = dense_attr(ir, op, "operandSegmentSizes");
        let (no, ns) = (
            seg.get(rest).copied().unwrap_or(0) as usize,
            seg.get(rest + 1).copied().unwrap_or(0) as usize,
        );
        let dyn_o = &ops[rest..rest + no];
        let dyn_s = &ops[rest + no..rest + no + ns];
        let dyn_t = &ops[rest + no + ns..];
        let offs = self.mixed(env, op, &dense_attr(ir, op, "static_offsets"), dyn_o)?;
        let sizes = self.mixed(env, op, &dense_attr(ir, op, "static_sizes"), dyn_s)?;
        let strides = self.mixed(env, op, &dense_attr(ir, op, "static_strides"), dyn_t)?;
        // The compiled code's rule (bufferize's check): offset and size not negative,
        // every index of a non-empty slice inside (in i128: the sum wrapped), an empty one
        // starting at most at the end.
        for d in 0..sizes.len() {
            let (o, z, t) = (offs[d] as i128, sizes[d] as i128, strides[d] as i128);
            let dim = big.get(d).copied().unwrap_or(0) as i128;
            let last = o + (z - 1).max(0) * t;
            let inside = if z > 0 {
                (0..dim).contains(&o) && (0..dim).contains(&last)
            } else {
                o <= dim
            };
            if z < 0 || o < 0 || !inside {
                return Err(InterpError::at(
                    ir,
                    op,
                    format!(
                        "slice out of bounds in dimension {d}: offset {} size {} stride {} of {}",
                        offs[d], sizes[d], strides[d], big[d]
                    ),
                ));
            }
        }
        Ok([offs, sizes, strides])
    }

    /// `tensor.extract_slice`: the strided window, with unit dims dropped down to the
    /// result's rank (a rank-reducing slice; the data order is the same).
    fn extract_slice(&self, op: OpId, env: &Env) -> Result<Tensor, InterpError> {
        let ir = self.ir;
        let src = self.tensor(env, ir.operand(op, 0), op)?;
        let [offs, sizes, strides] = self.slice_params(op, env, 1, &src.shape)?;
        let n: usize = sizes.iter().map(|s| *s as usize).product();
        let mut point = vec![0i64; sizes.len()];
        let mut out = Tensor::zeros(sizes.iter().map(|s| *s as usize).collect(), src.elem);
        for (k, slot) in out.data.iter_mut().enumerate().take(n) {
            unravel(k, &sizes, &mut point);
            let idx: Vec<i64> = (0..sizes.len())
                .map(|d| offs[d] + point[d] * strides[d])
                .collect();
            *slot = src.data[src
                .offset(&idx)
                .ok_or_else(|| InterpError::at(ir, op, "slice index out of bounds"))?];
        }
        let want = ir
            .value_type(ir.results(op)[0])
            .rank()
            .unwrap_or(out.shape.len());
        while out.shape.len() > want {
            match out.shape.iter().position(|d| *d == 1) {
                Some(i) => {
                    out.shape.remove(i);
                }
                None => break,
            }
        }
        Ok(out)
    }

    /// `tensor.insert_slice`: a copy of the destination with the source written into the
    /// strided window.
    fn insert_slice(&self, op: OpId, env: &Env) -> Result<Tensor, InterpError> {
        let ir = self.ir;
        let src = self.tensor(env, ir.operand(op, 0), op)?;
        let dst = self.tensor(env, ir.operand(op, 1), op)?;
        let [offs, sizes, strides] = self.slice_params(op, env, 2, &dst.shape)?;
        let n: usize = sizes.iter().map(|s| *s as usize).product();
        let mut point = vec![0i64; sizes.len()];
        let mut out = (*dst).clone();
        // The same shape, but for unit dims a rank-reducing slice drops (as the compiled
        // code's copy checks; an equal count alone let a 2x3 source fill a 3x2 slice).
        let non_unit =
            |s: &[usize]| -> Vec<usize> { s.iter().copied().filter(|d| *d != 1).collect() };
        let slice_shape: Vec<usize> = sizes.iter().map(|s| *s as usize).collect();
        if src.data.len() != n || non_unit(&src.shape) != non_unit(&slice_shape) {
            return Err(InterpError::at(
                ir,
                op,
                format!(
                    "source of shape {:?} does not fit the slice of sizes {slice_shape:?}",
                    src.shape
                ),
            ));
        }
        for k in 0..n {
            unravel(k, &sizes, &mut point);
            let idx: Vec<i64> = (0..sizes.len())
                .map(|d| offs[d] + point[d] * strides[d])
                .collect();
            let o = out
                .offset(&idx)
                .ok_or_else(|| InterpError::at(ir, op, "slice index out of bounds"))?;
            out.data[o] = src.data[k];
        }
        Ok(out)
    }

    /// `tensor.pad` (the source where it lies, the body's value in the low and high
    /// padding) and `tensor.generate` (the body's value everywhere).
    fn pad_or_generate(&self, op: OpId, short: &str, env: &Env) -> Result<Tensor, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let rt = ir.value_type(ir.result(op, 0));
        let ops = ir.operands(op);
        let (src, shape) = if short == "pad" {
            let src = self.tensor(env, ops[0], op)?;
            let seg = dense_attr(ir, op, "operandSegmentSizes");
            let nl = seg.get(1).copied().unwrap_or(0) as usize;
            let lo = self.mixed(env, op, &dense_attr(ir, op, "static_low"), &ops[1..1 + nl])?;
            let hi = self.mixed(env, op, &dense_attr(ir, op, "static_high"), &ops[1 + nl..])?;
            if let Some(p) = lo.iter().chain(&hi).find(|p| **p < 0) {
                return Err(err(format!("negative padding {p}")));
            }
            let shape: Vec<i64> = (0..src.shape.len())
                .map(|d| {
                    (src.shape[d] as i64)
                        .checked_add(*lo.get(d).unwrap_or(&0))
                        .and_then(|x| x.checked_add(*hi.get(d).unwrap_or(&0)))
                        .unwrap_or(i64::MAX)
                })
                .collect();
            (Some((src, lo)), shape)
        } else {
            (None, self.mixed(env, op, rt.shape().unwrap_or(&[]), ops)?)
        };
        if shape.iter().any(|d| *d < 0) {
            return Err(err(format!("negative result size {shape:?}")));
        }
        // Within the interpreter's budget (a padding of 2^63 - 8 verifies).
        let sizes = checked_sizes(&shape).map_err(err)?;
        let prog = compile(self.ctx, ir, op, env)?;
        let mut out = Tensor::zeros(sizes, rt.element_type());
        let mut slots = vec![Word::ZERO; prog.num_slots];
        for (s, v) in &prog.inits {
            slots[*s] = *v;
        }
        let mut point = vec![0i64; shape.len()];
        for k in 0..out.data.len() {
            unravel(k, &shape, &mut point);
            if let Some((src, lo)) = &src {
                let sidx: Vec<i64> = point.iter().zip(lo).map(|(p, l)| p - l).collect();
                if let Some(o) = src.offset(&sidx) {
                    out.data[k] = src.data[o];
                    continue;
                }
            }
            for (d, p) in point.iter().enumerate() {
                slots[d] = Word::int(*p);
            }
            prog.run(&mut slots, &point)?;
            out.data[k] = slots[*prog
                .yields
                .first()
                .ok_or_else(|| err("body yields nothing".into()))?];
        }
        Ok(out)
    }
}
