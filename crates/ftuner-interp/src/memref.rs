//! `memref` ops: buffers as strided views of shared storage, with bounds checks on every
//! access and use-after-free detection, so bufferized IR is checked as strictly as the
//! tensor IR it came from.

use crate::eval::{Env, Interp, InterpError};
use crate::tensor::{row_major, MemRef, RtVal};
use crate::word::Word;
use ftuner_dialects::ops;
use ftuner_ir::{Ir, OpId, Type, DYNAMIC};

impl Interp<'_> {
    fn memref(&self, env: &Env, v: ftuner_ir::Value, op: OpId) -> Result<MemRef, InterpError> {
        match self.get(env, v, op)? {
            RtVal::MemRef(m) => {
                m.alive().map_err(|e| InterpError::at(self.ir, op, e))?;
                Ok(m)
            }
            _ => Err(InterpError::at(self.ir, op, "expected a memref operand")),
        }
    }

    /// A `memref` op: allocation, element access, copies and views.
    pub(crate) fn memref_op(
        &mut self,
        op: OpId,
        short: &str,
        env: &mut Env,
    ) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let ops = ir.operands(op);
        let one = |m: MemRef| Ok(vec![RtVal::MemRef(m)]);
        match short {
            "alloc" | "alloca" => {
                let ty = result_type(ir, op).ok_or_else(|| err("has no result".into()))?;
                let segs = dense_attr(ir, op, "operandSegmentSizes");
                let ndyn = segs.first().copied().unwrap_or(ops.len() as i64) as usize;
                let sizes = self.mixed(env, op, ty.shape().unwrap_or(&[]), &ops[..ndyn])?;
                one(MemRef::alloc(
                    crate::tensor::checked_sizes(&sizes).map_err(err)?,
                    ty.element_type(),
                ))
            }
            "dealloc" => {
                let m = self.memref(env, ops[0], op)?;
                if m.offset != 0 || m.store.data.borrow().len() != m.sizes.iter().product() {
                    return Err(err("deallocates a view, not an allocation".into()));
                }
                m.store.freed.set(true);
                Ok(vec![])
            }
            "load" | "store" => self.load_store(op, short, env),
            "dim" => {
                let m = self.memref(env, ops[0], op)?;
                let i = self.index(env, ops[1], op)?;
                let d = m
                    .sizes
                    .get(usize::try_from(i).unwrap_or(usize::MAX))
                    .ok_or_else(|| err(format!("dimension {i} out of range")))?;
                Ok(vec![RtVal::Scalar(Word::int(*d as i64))])
            }
            "cast" => {
                let m = self.memref(env, ops[0], op)?;
                let ty = result_type(ir, op).ok_or_else(|| err("has no result".into()))?;
                let s = ty.shape().unwrap_or(&[]);
                if s.len() != m.sizes.len()
                    || s.iter()
                        .zip(&m.sizes)
                        .any(|(a, b)| *a != DYNAMIC && *a as usize != *b)
                {
                    return Err(err(format!("cannot cast {:?} to {ty}", m.sizes)));
                }
                one(m)
            }
            "copy" => {
                let src = self.memref(env, ops[0], op)?;
                let dst = self.memref(env, ops[1], op)?;
                if src.sizes != dst.sizes {
                    return Err(err(format!("copies {:?} into {:?}", src.sizes, dst.sizes)));
                }
                let t = src.to_tensor().map_err(&err)?;
                dst.write(&t).map_err(&err)?;
                Ok(vec![])
            }
            "subview" => one(self.subview(op, env)?),
            "collapse_shape" => one(self.collapse_shape(op, env)?),
            "expand_shape" => one(self.expand_shape(op, env)?),
            "reshape" => one(self.reshape(op, env)?),
            "get_global" => one(self.get_global(op)?),
            _ => Err(err("is not supported by the interpreter".into())),
        }
    }

    /// `memref.load` (the element) and `memref.store` (the value, rounded to the
    /// element type, written in place).
    fn load_store(&self, op: OpId, short: &str, env: &Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let ops = ir.operands(op);
        let (m, idx_from) = if short == "load" {
            (self.memref(env, ops[0], op)?, 1)
        } else {
            (self.memref(env, ops[1], op)?, 2)
        };
        let idx = self.indices(env, op, &ops[idx_from..])?;
        let at = m
            .index_of(&idx)
            .ok_or_else(|| err(format!("index {idx:?} out of bounds for {:?}", m.sizes)))?;
        let mut data = m.store.data.borrow_mut();
        let slot = data
            .get_mut(at)
            .ok_or_else(|| err("view exceeds its buffer".into()))?;
        if short == "load" {
            Ok(vec![RtVal::Scalar(*slot)])
        } else {
            *slot = crate::round_to(self.scalar(env, ops[0], op)?, m.elem);
            Ok(vec![])
        }
    }

    /// `memref.subview`: a strided window of the same storage (rank-reducing when the
    /// result type has fewer dims).
    fn subview(&self, op: OpId, env: &Env) -> Result<MemRef, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let ops = ir.operands(op);
        let segs = dense_attr(ir, op, "operandSegmentSizes");
        let arr = |a: &str| dense_attr(ir, op, a);
        let m = self.memref(env, ops[0], op)?;
        let (no, ns) = (
            segs.get(1).copied().unwrap_or(0) as usize,
            segs.get(2).copied().unwrap_or(0) as usize,
        );
        if ops.len() < 1 + no + ns {
            return Err(err("operand segments do not match the operands".into()));
        }
        let offs = self.mixed(env, op, &arr("static_offsets"), &ops[1..1 + no])?;
        let sizes = self.mixed(env, op, &arr("static_sizes"), &ops[1 + no..1 + no + ns])?;
        let strides = self.mixed(env, op, &arr("static_strides"), &ops[1 + no + ns..])?;
        if offs.len() != m.sizes.len()
            || sizes.len() != m.sizes.len()
            || strides.len() != m.sizes.len()
        {
            return Err(err("offsets, sizes and strides must match the rank".into()));
        }
        let mut offset = m.offset;
        for d in 0..sizes.len() {
            let last = offs[d] + (sizes[d] - 1).max(0) * strides[d];
            if sizes[d] < 0 || offs[d] < 0 || (sizes[d] > 0 && last as usize >= m.sizes[d]) {
                return Err(err(format!(
                    "subview out of bounds in dimension {d}: offset {} size {} stride {} of {}",
                    offs[d], sizes[d], strides[d], m.sizes[d]
                )));
            }
            offset += offs[d] * m.strides[d];
        }
        let mut dims: Vec<(usize, i64)> = sizes
            .iter()
            .zip(&strides)
            .zip(&m.strides)
            .map(|((s, t), ms)| (*s as usize, t * ms))
            .collect();
        let want = result_type(ir, op).and_then(|t| t.shape()).unwrap_or(&[]);
        drop_unit_dims(&mut dims, want).map_err(&err)?;
        Ok(MemRef {
            store: m.store.clone(),
            offset,
            sizes: dims.iter().map(|d| d.0).collect(),
            strides: dims.iter().map(|d| d.1).collect(),
            elem: m.elem,
        })
    }

    /// `memref.collapse_shape`: groups of contiguous dims merged into one.
    fn collapse_shape(&self, op: OpId, env: &Env) -> Result<MemRef, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let m = self.memref(env, ir.operand(op, 0), op)?;
        let mut sizes = vec![];
        let mut strides = vec![];
        for g in ftuner_dialects::memref::reassociation(ir, op) {
            let (Some(first), Some(last)) = (g.first(), g.last()) else {
                return Err(err("empty reassociation group".into()));
            };
            if *last >= m.sizes.len() || *first > *last {
                return Err(err("reassociation does not match the rank".into()));
            }
            for w in g.windows(2) {
                let (a, b) = (w[0], w[1]);
                if m.sizes[b] > 1 && m.strides[a] != m.strides[b] * m.sizes[b] as i64 {
                    return Err(err("collapses dimensions that are not contiguous".into()));
                }
            }
            sizes.push(g.iter().map(|d| m.sizes[*d]).product());
            strides.push(m.strides[*last]);
        }
        Ok(MemRef {
            sizes,
            strides,
            ..m
        })
    }

    /// `memref.expand_shape`: each dim split into a group of dims of the output shape.
    fn expand_shape(&self, op: OpId, env: &Env) -> Result<MemRef, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let ops = ir.operands(op);
        let m = self.memref(env, ops[0], op)?;
        let out = self.mixed(
            env,
            op,
            &dense_attr(ir, op, "static_output_shape"),
            &ops[1..],
        )?;
        let groups = ftuner_dialects::memref::reassociation(ir, op);
        if groups.len() != m.sizes.len() {
            return Err(err("reassociation does not match the rank".into()));
        }
        let mut strides = vec![0i64; out.len()];
        for (src, g) in groups.iter().enumerate() {
            let n: i64 = g
                .iter()
                .map(|d| out.get(*d).copied().unwrap_or(-1))
                .product();
            if n != m.sizes[src] as i64 || g.iter().any(|d| *d >= out.len()) {
                return Err(err(format!(
                    "cannot expand dimension {src} of size {} into {g:?} of {out:?}",
                    m.sizes[src]
                )));
            }
            let mut s = m.strides[src];
            for d in g.iter().rev() {
                strides[*d] = s;
                s *= out[*d];
            }
        }
        Ok(MemRef {
            sizes: out.iter().map(|d| *d as usize).collect(),
            strides,
            ..m
        })
    }

    /// `memref.reshape`: a contiguous buffer under the shape held by a 1-d shape buffer.
    fn reshape(&self, op: OpId, env: &Env) -> Result<MemRef, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let ops = ir.operands(op);
        let m = self.memref(env, ops[0], op)?;
        let shape = self.memref(env, ops[1], op)?.to_tensor().map_err(&err)?;
        if m.strides != row_major(&m.sizes) {
            return Err(err("reshapes a buffer that is not contiguous".into()));
        }
        let sizes: Vec<usize> = shape
            .data
            .iter()
            .map(|d| usize::try_from(d.i()).unwrap_or(usize::MAX))
            .collect();
        if sizes.iter().try_fold(1usize, |a, b| a.checked_mul(*b)) != Some(m.sizes.iter().product())
        {
            return Err(err(format!(
                "cannot reshape {:?} into {:?}",
                m.sizes,
                shape.to_i64()
            )));
        }
        Ok(MemRef {
            strides: row_major(&sizes),
            sizes,
            ..m
        })
    }

    /// `memref.get_global`: the global's buffer, made from its initial value on first use
    /// and shared by every later use in the run.
    fn get_global(&mut self, op: OpId) -> Result<MemRef, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let name = ir
            .attr(op, "name")
            .and_then(|a| a.as_symbol())
            .ok_or_else(|| err("has no symbol".into()))?
            .to_string();
        if let Some(m) = self.globals.get(&name) {
            return Ok(m.clone());
        }
        let mut global = None;
        ir.walk_pre(self.module, &mut |o| {
            if global.is_none()
                && ir.name(o) == ops::memref::GlobalOp::NAME
                && ir.symbol_name(o) == Some(name.as_str())
            {
                global = Some(o);
            }
        });
        let g = global.ok_or_else(|| err(format!("no memref.global @{name}")))?;
        let init = ir
            .attr(g, "initial_value")
            .ok_or_else(|| InterpError::at(ir, g, "global has no initial value"))?;
        let t = match self.constant(g, init)? {
            RtVal::Tensor(t) => t,
            _ => return Err(InterpError::at(ir, g, "initial value is not a tensor")),
        };
        let m = MemRef::from_tensor(&t);
        self.globals.insert(name, m.clone());
        Ok(m)
    }
}

/// The dense `i64` array attribute `name` of `op` (empty when absent).
fn dense_attr(ir: &Ir, op: OpId, name: &str) -> Vec<i64> {
    ir.attr(op, name)
        .and_then(|x| x.as_dense_i64s())
        .unwrap_or_default()
}

/// The type of `op`'s first result, if it has one.
fn result_type(ir: &Ir, op: OpId) -> Option<Type> {
    ir.results(op).first().map(|v| ir.value_type(*v))
}

/// Drop unit dims of a rank-reducing subview so the view has the result type's shape.
fn drop_unit_dims(dims: &mut Vec<(usize, i64)>, want: &[i64]) -> Result<(), String> {
    if want.len() == dims.len() {
        return Ok(());
    }
    let sizes: Vec<i64> = dims.iter().map(|d| d.0 as i64).collect();
    let keep = ftuner_ir::rank_reduction_keep(&sizes, want)
        .ok_or_else(|| format!("cannot drop unit dimensions to reach rank {}", want.len()))?;
    let kept = dims
        .iter()
        .zip(keep)
        .filter_map(|(d, k)| k.then_some(*d))
        .collect();
    *dims = kept;
    Ok(())
}
