//! Control flow: `func.call`, `rt.parallel_for`, `cf.assert`, and the `scf` loops and conditionals
//! (`scf.for`, `scf.if`, `scf.index_switch`).

use super::{Env, Interp, InterpError};
use crate::tensor::RtVal;
use crate::word::Word;
use ftuner_ir::{OpId, RegionId};

impl Interp<'_> {
    /// The function `op` (`func.call`, `rt.parallel_for`) calls.
    fn callee(&self, op: OpId) -> Result<&'static str, InterpError> {
        self.ir
            .attr(op, "callee")
            .and_then(|a| a.as_symbol())
            .ok_or_else(|| InterpError::at(self.ir, op, "missing callee"))
    }

    /// `func.call`: the callee run on the operands.
    pub(super) fn func_call(&mut self, op: OpId, env: &Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let callee = self.callee(op)?;
        let args: Result<Vec<RtVal>, _> = ir
            .operands(op)
            .iter()
            .map(|v| self.get(env, *v, op))
            .collect();
        self.call(callee, args?)
    }

    /// `rt.parallel_for @f(%n) args(...)`: `@f(0, n, args...)` when `n` is positive (its
    /// chunks run one after the other; its iterations are independent).
    pub(super) fn parallel_for(&mut self, op: OpId, env: &Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let callee = self.callee(op)?;
        let n = self.index(env, ir.operand(op, 0), op)?;
        if n <= 0 {
            return Ok(vec![]);
        }
        let mut args = vec![RtVal::Scalar(Word::int(0)), RtVal::Scalar(Word::int(n))];
        for v in &ir.operands(op)[1..] {
            args.push(self.get(env, *v, op)?);
        }
        self.call(callee, args)?;
        Ok(vec![])
    }

    /// `cf.assert`: an error with the op's message when the condition is false.
    pub(super) fn cf_assert(&mut self, op: OpId, env: &Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        if !self.scalar(env, ir.operand(op, 0), op)?.truth() {
            let msg = ir.attr(op, "msg").and_then(|a| a.as_str()).unwrap_or("");
            return Err(InterpError::at(ir, op, format!("assertion failed: {msg}")));
        }
        Ok(vec![])
    }

    /// `scf.for`: the body run from the lower to the upper bound by the step, the
    /// iteration arguments carried from one iteration to the next.
    pub(super) fn scf_for(&mut self, op: OpId, env: &mut Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let ops = ir.operands(op).to_vec();
        let (lb, ub, step) = (
            self.index(env, ops[0], op)?,
            self.index(env, ops[1], op)?,
            self.index(env, ops[2], op)?,
        );
        if step <= 0 {
            return Err(InterpError::at(
                ir,
                op,
                format!("step must be positive, got {step}"),
            ));
        }
        let mut iters: Vec<RtVal> = ops[3..]
            .iter()
            .map(|v| self.get(env, *v, op))
            .collect::<Result<_, _>>()?;
        let b = ir
            .region_entry(ir.regions_of(op)[0])
            .ok_or_else(|| InterpError::at(ir, op, "empty body"))?;
        let args = ir.block_args(b).to_vec();
        let mut i = lb;
        while i < ub {
            let mut inner = env.clone();
            inner.insert(args[0], RtVal::Scalar(Word::int(i)));
            for (a, v) in args[1..].iter().zip(&iters) {
                inner.insert(*a, v.clone());
            }
            iters = self.exec_block(b, &mut inner)?;
            // The induction variable is exact to i64's maximum: past it there is no
            // next iteration (i < ub fails), not a wrap.
            match i.checked_add(step) {
                Some(n) => i = n,
                None => break,
            }
        }
        Ok(iters)
    }

    /// `scf.if`: the then region when the condition holds, else the else region.
    pub(super) fn scf_if(&mut self, op: OpId, env: &Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let c = self.scalar(env, ir.operand(op, 0), op)?;
        let r = ir.regions_of(op)[if c.truth() { 0 } else { 1 }];
        self.exec_region_in_copy(r, env)
    }

    /// `scf.index_switch`: the region of the case equal to the selector, else the default.
    pub(super) fn scf_index_switch(
        &mut self,
        op: OpId,
        env: &Env,
    ) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let sel = self.scalar(env, ir.operand(op, 0), op)?.i();
        let cases = ir
            .attr(op, "cases")
            .and_then(|a| a.as_dense_i64s())
            .ok_or_else(|| err("has no 'cases' array".into()))?;
        // Region 0 is the default; region i + 1 belongs to cases[i].
        let idx = cases.iter().position(|c| *c == sel).map_or(0, |i| i + 1);
        let r = *ir
            .regions_of(op)
            .get(idx)
            .ok_or_else(|| err("has fewer regions than cases".into()))?;
        self.exec_region_in_copy(r, env)
    }

    /// Execute region `r`'s entry block in a copy of `env` (its definitions stay inside);
    /// an empty region yields nothing.
    fn exec_region_in_copy(&mut self, r: RegionId, env: &Env) -> Result<Vec<RtVal>, InterpError> {
        match self.ir.region_entry(r) {
            Some(b) => {
                let mut inner = env.clone();
                self.exec_block(b, &mut inner)
            }
            None => Ok(vec![]),
        }
    }
}
