//! Scalar arithmetic: `affine.apply` on index values, and the `arith`/`math` ops applied
//! to scalars or elementwise over tensors of one shape.

use super::{Env, Interp, InterpError};
use crate::body::ScalarOp;
use crate::tensor::{RtVal, Tensor};
use crate::word::Word;
use ftuner_ir::OpId;
use std::rc::Rc;

impl Interp<'_> {
    /// `affine.apply`: the map's first result at the operands (dims, then symbols).
    pub(super) fn affine_apply(&mut self, op: OpId, env: &Env) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let m = ir
            .attr(op, "map")
            .and_then(|a| a.as_affine_map())
            .ok_or_else(|| err("missing map".into()))?;
        let vals: Vec<i64> = ir
            .operands(op)
            .iter()
            .map(|v| self.scalar(env, *v, op).map(|x| x.i()))
            .collect::<Result<_, _>>()?;
        let nd = (m.num_dims as usize).min(vals.len());
        let r = m
            .results
            .first()
            .and_then(|e| e.eval(&vals[..nd], &vals[nd..]))
            .ok_or_else(|| err("the map has no value here (division by zero?)".into()))?;
        Ok(RtVal::Scalar(Word::int(r)))
    }

    /// A scalar `arith`/`math` op: on scalars, or elementwise over tensors of one shape
    /// (scalar operands broadcast).
    pub(super) fn elementwise(
        &mut self,
        op: OpId,
        sop: ScalarOp,
        env: &Env,
    ) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let vals: Result<Vec<RtVal>, _> = ir
            .operands(op)
            .iter()
            .map(|v| self.get(env, *v, op))
            .collect();
        let vals = vals?;
        // A select by one condition chooses a whole value, buffers included.
        if let [RtVal::Scalar(c), a @ RtVal::MemRef(_), b] = vals.as_slice() {
            if ir.name(op) == ftuner_dialects::ops::arith::SelectOp::NAME {
                return Ok(if c.truth() { a.clone() } else { b.clone() });
            }
        }
        let ty = ir.value_type(ir.result(op, 0));
        if vals.iter().all(|v| matches!(v, RtVal::Scalar(_))) {
            let a: Vec<Word> = vals.iter().filter_map(|v| v.scalar()).collect();
            return Ok(RtVal::Scalar(
                sop.apply(&a, ty).map_err(|e| err(e.message))?,
            ));
        }
        let shape = vals
            .iter()
            .find_map(|v| v.tensor().map(|t| t.shape.clone()))
            .unwrap_or_default();
        let n: usize = shape.iter().product();
        let mut out = Tensor::zeros(shape.clone(), ty.element_type());
        let mut a = vec![Word::ZERO; vals.len()];
        for i in 0..n {
            for (k, v) in vals.iter().enumerate() {
                a[k] = match v {
                    RtVal::Scalar(s) => *s,
                    RtVal::Tensor(t) => {
                        if t.shape != shape {
                            return Err(err("elementwise operands of different shapes".into()));
                        }
                        t.data[i]
                    }
                    RtVal::MemRef(_) => {
                        return Err(err("elementwise ops do not take memrefs".into()))
                    }
                };
            }
            out.data[i] = sop
                .apply(&a, ty.element_type())
                .map_err(|e| err(e.message))?;
        }
        Ok(RtVal::Tensor(Rc::new(out)))
    }
}
