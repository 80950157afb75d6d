//! Structured ops: `linalg` (named and generic, on tensors and on buffers) and
//! `ukernel.patch` (with its epilogue), run by iterating their loop space with each
//! operand read through its indexing map; and `ta.expr`, evaluated over its inputs.

use super::{check_type, contraction, unravel, Env, Interp, InterpError};
use crate::body::{compile, Program};
use crate::tensor::{round_to, RtVal, Tensor};
use crate::word::Word;
use ftuner_dialects::linalg::{body as lbody, ins_outs};
use ftuner_dialects::ops;
use ftuner_ir::{AffineExpr, AffineMap, Ir, OpId, Type, Value};
use std::rc::Rc;

/// How an operand is read at a loop point: `offset = base + sum(coeff[d] * p[d])`, with the
/// per-result coefficients (`[b0, c_0 .. c_nd]` per result) for bounds checks.
type Access = (i64, Vec<i64>, Vec<i64>, Rc<Tensor>);

/// The loop space of a structured op and how each operand is read in it.
struct LoopNest {
    /// The size of every loop dimension.
    sizes: Vec<i64>,
    /// Per operand (inputs, then outputs): its linear access; `None` for scalars.
    access: Vec<Option<Access>>,
    /// How many operands are inputs.
    nin: usize,
}

fn name_is_patch_with_epilogue(ir: &Ir, op: OpId) -> bool {
    ir.name(op) == ops::ukernel::PatchOp::NAME && ir.regions_of(op).len() > 1
}

fn has_div(e: &AffineExpr) -> bool {
    match e {
        AffineExpr::Mod(..) | AffineExpr::FloorDiv(..) | AffineExpr::CeilDiv(..) => true,
        AffineExpr::Add(a, b) | AffineExpr::Mul(a, b) => has_div(a) || has_div(b),
        _ => false,
    }
}

/// `t` read through `m` at every point of the loop space `sizes` (row-major), each index
/// checked against its dim.
fn gather(m: &AffineMap, t: &Tensor, sizes: &[i64]) -> Result<Tensor, String> {
    if m.results.len() != t.shape.len() {
        return Err("operand rank does not match its indexing map".into());
    }
    let shape = crate::tensor::checked_sizes(sizes)?;
    let n: usize = shape.iter().product();
    let st = t.strides();
    let mut data = Vec::with_capacity(n);
    let mut point = vec![0i64; sizes.len()];
    for _ in 0..n {
        let idx = m
            .eval(&point, &[])
            .ok_or_else(|| "cannot evaluate indexing map".to_string())?;
        let mut off = 0usize;
        for ((i, d), s) in idx.iter().zip(&t.shape).zip(&st) {
            let i = usize::try_from(*i)
                .ok()
                .filter(|i| i < d)
                .ok_or_else(|| format!("index {idx:?} out of bounds of {:?}", t.shape))?;
            off += i * s;
        }
        data.push(t.data[off]);
        for k in (0..point.len()).rev() {
            point[k] += 1;
            if point[k] < sizes[k] {
                break;
            }
            point[k] = 0;
        }
    }
    Ok(Tensor::new(shape, t.elem, data))
}

/// Loop sizes from operand dims indexed by a single loop dim; every loop dim must be
/// given by some operand (dims that only appear in compound expressions, such as
/// convolution windows, are given by the filter), and all operands must agree.
fn loop_sizes(maps: &[AffineMap], vals: &[RtVal], nd: usize) -> Result<Vec<i64>, String> {
    let mut size: Vec<Option<i64>> = vec![None; nd];
    for (m, v) in maps.iter().zip(vals) {
        if let RtVal::Tensor(t) = v {
            for (j, e) in m.results.iter().enumerate() {
                if let AffineExpr::Dim(d) = e {
                    let s = t.shape[j] as i64;
                    match size[*d as usize] {
                        None => size[*d as usize] = Some(s),
                        Some(p) if p != s => {
                            return Err(format!(
                                "loop dimension d{d} is {p} for one operand and {s} for another"
                            ))
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    size.iter()
        .enumerate()
        .map(|(d, s)| s.ok_or_else(|| format!("cannot infer the size of loop dimension d{d}")))
        .collect()
}

/// The linear access of tensor `t` through map `m` over `nd` loop dims: the offset at
/// the origin, the offset step per loop dim, and per result its value at the origin and
/// step per loop dim (for bounds checks). Maps with div/mod are refused (inputs read
/// through them are gathered first).
fn linear_access(m: &AffineMap, t: &Rc<Tensor>, nd: usize) -> Result<Access, String> {
    if m.results.len() != t.shape.len() {
        return Err("operand rank does not match its indexing map".into());
    }
    let st = t.strides();
    let zero = vec![0i64; nd];
    let base_idx = m
        .eval(&zero, &[])
        .ok_or_else(|| "cannot evaluate indexing map".to_string())?;
    let base: i64 = base_idx.iter().zip(&st).map(|(i, s)| i * *s as i64).sum();
    let mut coeff = vec![0i64; nd];
    for (d, c) in coeff.iter_mut().enumerate() {
        let mut unit = vec![0i64; nd];
        unit[d] = 1;
        let idx = m
            .eval(&unit, &[])
            .ok_or_else(|| "cannot evaluate indexing map".to_string())?;
        *c = idx
            .iter()
            .zip(&base_idx)
            .zip(&st)
            .map(|((i, b), s)| (i - b) * *s as i64)
            .sum();
    }
    // Per-result linear coefficients for bounds checks.
    let mut rc = vec![];
    for e in &m.results {
        let b0 = e.eval(&zero, &[]).unwrap_or(0);
        rc.push(b0);
        for d in 0..nd {
            let mut unit = vec![0i64; nd];
            unit[d] = 1;
            rc.push(e.eval(&unit, &[]).unwrap_or(0) - b0);
        }
    }
    if !m.results.iter().all(|e| e.is_pure_affine() && !has_div(e)) {
        return Err("indexing maps with div/mod are not supported by the interpreter".into());
    }
    Ok((base, coeff, rc, t.clone()))
}

/// Every operand's every index within its dim at every point of the loop space: a linear
/// index takes its extremes at corners of the box, so checking those suffices (nothing is
/// read when the space is empty).
fn check_bounds(nest: &LoopNest) -> Result<(), String> {
    let nd = nest.sizes.len();
    if nest.sizes.iter().any(|s| *s <= 0) {
        return Ok(());
    }
    for (i, a) in nest.access.iter().enumerate() {
        let Some((_, _, rc, t)) = a else { continue };
        for (j, size) in t.shape.iter().enumerate() {
            let row = &rc[j * (nd + 1)..(j + 1) * (nd + 1)];
            let span = |f: fn(i64, i64) -> i64| -> i64 {
                row[0]
                    + row[1..]
                        .iter()
                        .zip(&nest.sizes)
                        .map(|(c, s)| f(0, c * (s - 1)))
                        .sum::<i64>()
            };
            for idx in [span(i64::min), span(i64::max)] {
                if idx < 0 || idx as usize >= *size {
                    return Err(format!(
                        "operand #{i} accessed at {idx} in dimension {j} of size {size}"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The loop dims an output map indexes, if it is a projected permutation (each result one
/// dim, no dim twice).
fn output_dims(a: &Access, nd: usize) -> Option<Vec<bool>> {
    let rc = &a.2;
    let mut dims = vec![false; nd];
    for row in rc.chunks(nd + 1) {
        let nz: Vec<usize> = (0..nd).filter(|d| row[d + 1] != 0).collect();
        match nz.as_slice() {
            [d] if row[0] == 0 && row[d + 1] == 1 && !dims[*d] => dims[*d] = true,
            _ => return None,
        }
    }
    Some(dims)
}

impl Interp<'_> {
    /// `ta.expr`: the expression evaluated over its inputs (out-of-bounds reads are 0).
    pub(super) fn ta_expr(&mut self, op: OpId, env: &mut Env) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let scope = ftuner_dialects::ta::scope_of(ir, op)
            .ok_or_else(|| err("has a malformed expression".into()))?;
        let mut ins = vec![];
        for v in ir.operands(op) {
            match self.get(env, *v, op)? {
                RtVal::Tensor(t) => ins.push(t),
                _ => return Err(err("takes tensors".into())),
            }
        }
        // Tensor-algebra expressions compute on numbers (their operands are floats).
        let numbers: Vec<Vec<f64>> = ins.iter().map(|t| t.to_f64()).collect();
        let inputs = ftuner_dialects::ta::expr::Inputs {
            shapes: ins.iter().map(|t| t.shape.clone()).collect(),
            data: numbers.iter().map(|d| d.as_slice()).collect(),
        };
        let (shape, data) = ftuner_dialects::ta::expr::evaluate(&scope, &inputs).map_err(err)?;
        let ty = ir.value_type(ir.result(op, 0));
        Ok(RtVal::Tensor(Rc::new(Tensor::from_f64(
            shape,
            ty.element_type(),
            data,
        ))))
    }

    /// Structured ops (named, generic, ukernel.patch): iterate the loop space.
    pub(super) fn structured(
        &mut self,
        op: OpId,
        env: &mut Env,
    ) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let mut maps = lbody::indexing_maps(ir, op)
            .ok_or_else(|| err("indexing maps unknown to the interpreter".into()))?;
        let (ins, outs) = ins_outs(ir, op);
        let all: Vec<Value> = ins.iter().chain(&outs).copied().collect();
        let raw: Vec<RtVal> = all
            .iter()
            .map(|v| self.get(env, *v, op))
            .collect::<Result<_, _>>()?;
        // On buffers: read every operand's current contents, compute as on tensors, then
        // write the outputs back into their buffers.
        let mut vals: Vec<RtVal> = raw
            .iter()
            .map(|v| match v {
                RtVal::MemRef(m) => m
                    .to_tensor()
                    .map(|t| RtVal::Tensor(Rc::new(t)))
                    .map_err(&err),
                other => Ok(other.clone()),
            })
            .collect::<Result<_, _>>()?;
        let nd = maps.first().map(|m| m.num_dims as usize).unwrap_or(0);
        let sizes = loop_sizes(&maps, &vals, nd).map_err(&err)?;
        // An input read through div/mod (not linear in the loop dims): gathered over the
        // loop space first, then read through the identity.
        for i in 0..ins.len() {
            if let (Some(m), RtVal::Tensor(t)) = (maps.get(i), &vals[i]) {
                if m.results.iter().any(has_div) {
                    vals[i] = RtVal::Tensor(Rc::new(gather(m, t, &sizes).map_err(&err)?));
                    maps[i] = AffineMap::identity(nd as u32);
                }
            }
        }
        let access = maps
            .iter()
            .zip(&vals)
            .map(|(m, v)| match v {
                RtVal::Scalar(_) | RtVal::MemRef(_) => Ok(None),
                RtVal::Tensor(t) => linear_access(m, t, nd).map(Some),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(&err)?;
        let nest = LoopNest {
            sizes,
            access,
            nin: ins.len(),
        };
        check_bounds(&nest).map_err(&err)?;
        let prog = compile(self.ctx, ir, op, env)?;
        let nin = nest.nin;
        let mut outs_t: Vec<Tensor> = vals[nin..]
            .iter()
            .map(|v| {
                v.tensor()
                    .cloned()
                    .ok_or_else(|| err("outputs must be tensors".into()))
            })
            .collect::<Result<_, _>>()?;
        let out_ty: Vec<Type> = outs
            .iter()
            .map(|v| ir.value_type(*v).element_type())
            .collect();
        let dims = match &nest.access[..] {
            [_, _, Some(c)] => output_dims(c, nd),
            _ => None,
        };
        match (
            contraction::mac_body(&prog, nin, &out_ty),
            &nest.access[..],
            dims,
        ) {
            (Some(f32), [Some(a), Some(b), Some(c)], Some(dims)) => {
                fn lin(x: &Access) -> contraction::Linear<'_> {
                    contraction::Linear {
                        base: x.0,
                        coeff: &x.1,
                    }
                }
                contraction::run(
                    &nest.sizes,
                    [lin(a), lin(b), lin(c)],
                    &dims,
                    (&a.3.data, &b.3.data, &mut outs_t[0].data),
                    f32,
                );
            }
            _ => self.run_nest(op, &nest, &prog, &vals, &mut outs_t, &out_ty)?,
        }
        if name_is_patch_with_epilogue(ir, op) {
            self.epilogue(op, env, &maps[nin], &nest.sizes, &mut outs_t[0])?;
        }
        let mut results = vec![];
        for (i, t) in outs_t.into_iter().enumerate() {
            if let Some(RtVal::MemRef(m)) = raw.get(nin + i) {
                m.write(&t).map_err(&err)?;
                continue;
            }
            if let Some(r) = ir.results(op).get(i) {
                check_type(ir, op, ir.value_type(*r), &t)?;
                results.push(RtVal::Tensor(Rc::new(t)));
            }
        }
        Ok(results)
    }

    /// Run the body `prog` at every point of the loop nest: load each operand's element
    /// (in bounds: [`check_bounds`]) into its slot, run, and store the yields into the outputs
    /// `outs_t` (rounded to their element types `out_ty`).
    fn run_nest(
        &self,
        op: OpId,
        nest: &LoopNest,
        prog: &Program,
        vals: &[RtVal],
        outs_t: &mut [Tensor],
        out_ty: &[Type],
    ) -> Result<(), InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let (sizes, access, nin) = (&nest.sizes, &nest.access, nest.nin);
        let nd = sizes.len();
        let mut slots = vec![Word::ZERO; prog.num_slots];
        for (s, v) in &prog.inits {
            slots[*s] = *v;
        }
        let total: i64 = sizes.iter().product();
        let mut point = vec![0i64; nd];
        for k in 0..total {
            unravel(k as usize, sizes, &mut point);
            for (i, a) in access.iter().enumerate() {
                match a {
                    None => slots[i] = vals[i].scalar().unwrap_or(Word::ZERO),
                    Some((base, coeff, _, t)) => {
                        // In bounds: checked for the whole loop space (check_bounds).
                        let off = base + coeff.iter().zip(&point).map(|(c, p)| c * p).sum::<i64>();
                        slots[i] = if i < nin {
                            t.data[off as usize]
                        } else {
                            outs_t[i - nin].data[off as usize]
                        };
                    }
                }
            }
            prog.run(&mut slots, &point).map_err(|e| err(e.message))?;
            for (o, y) in prog.yields.iter().enumerate() {
                if let Some(Some((base, coeff, _, _))) = access.get(nin + o) {
                    let off = base + coeff.iter().zip(&point).map(|(c, p)| c * p).sum::<i64>();
                    outs_t[o].data[off as usize] = round_to(slots[*y], out_ty[o]);
                }
            }
        }
        Ok(())
    }

    /// A `ukernel.patch` epilogue: once the reduction is complete, every output element
    /// `c` becomes `epilogue(c, operands at their maps)`.
    fn epilogue(
        &mut self,
        op: OpId,
        env: &Env,
        cmap: &AffineMap,
        sizes: &[i64],
        out: &mut Tensor,
    ) -> Result<(), InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let operands = ftuner_dialects::ukernel::epilogue_inputs(ir, op);
        let emaps = ftuner_dialects::ukernel::epilogue_maps(ir, op);
        let extras: Vec<Tensor> = operands
            .iter()
            .map(|v| match self.get(env, *v, op)? {
                RtVal::Tensor(t) => Ok((*t).clone()),
                RtVal::MemRef(m) => m.to_tensor().map_err(&err),
                RtVal::Scalar(_) => Err(err("epilogue operands must be shaped".into())),
            })
            .collect::<Result<_, _>>()?;
        let prog = crate::body::compile_region(self.ctx, ir, op, 1, env)?;
        // The epilogue maps use no reduction dim: walk the parallel dims only.
        let red: Vec<bool> = ir
            .attr(op, "iterator_types")
            .and_then(|a| a.as_array())
            .unwrap_or(&[])
            .iter()
            .map(|a| {
                a.dialect_body()
                    .is_some_and(|(_, b)| b.contains("reduction"))
            })
            .collect();
        let psizes: Vec<i64> = sizes
            .iter()
            .enumerate()
            .map(|(d, s)| if red.get(d) == Some(&true) { 1 } else { *s })
            .collect();
        let total: i64 = psizes.iter().product();
        if total == 0 {
            return Ok(());
        }
        let mut slots = vec![Word::ZERO; prog.num_slots];
        for (s, v) in &prog.inits {
            slots[*s] = *v;
        }
        let elem = out.elem;
        let mut point = vec![0i64; psizes.len()];
        for k in 0..total {
            unravel(k as usize, &psizes, &mut point);
            let at = |m: &AffineMap, t: &Tensor, what: &str| -> Result<usize, InterpError> {
                let idx = m
                    .eval(&point, &[])
                    .ok_or_else(|| err("cannot evaluate an epilogue map".into()))?;
                t.offset(&idx)
                    .ok_or_else(|| err(format!("{what} accessed out of bounds at {idx:?}")))
            };
            let c = at(cmap, out, "the output")?;
            slots[0] = out.data[c];
            for (j, (m, t)) in emaps.iter().zip(&extras).enumerate() {
                slots[1 + j] = t.data[at(m, t, &format!("epilogue operand #{j}"))?];
            }
            prog.run(&mut slots, &point)?;
            let y = *prog
                .yields
                .first()
                .ok_or_else(|| err("the epilogue yields nothing".into()))?;
            out.data[c] = round_to(slots[y], elem);
        }
        Ok(())
    }
}
