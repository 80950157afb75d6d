//! Calls and control flow: `llvm.call` (direct), `br`, `cond_br`, `return` and
//! `unreachable`.

use super::{err, prop, Fn, R};
use ftuner_ir::{BlockId, OpId};
use rustc_hash::FxHashMap;
use std::fmt::Write;

impl Fn<'_> {
    /// `llvm.call`, `br`, `cond_br`, `return` and `unreachable`; branches name their successors
    /// by `block_of` (the phis of block arguments are filled in by the function).
    pub(super) fn control(
        &mut self,
        op: OpId,
        short: &str,
        block_of: &FxHashMap<BlockId, String>,
    ) -> R<()> {
        let ir = self.ir;
        let ops = ir.operands(op);
        match short {
            "call" => {
                let callee = prop(ir, op, "callee")
                    .and_then(|a| a.as_symbol())
                    .map_or_else(|| err(op, "indirect calls are not supported"), Ok)?;
                let args = ops
                    .iter()
                    .map(|v| self.typed(op, *v))
                    .collect::<R<Vec<_>>>()?
                    .join(", ");
                if ir.results(op).is_empty() {
                    let _ = writeln!(self.out, "  call void @{callee}({args})");
                } else {
                    let t = self.res_ty(op)?;
                    self.def(op, format!("call {t} @{callee}({args})"))?;
                }
            }
            "br" => {
                let s = *ir
                    .op(op)
                    .successors
                    .first()
                    .map_or_else(|| err(op, "no successor"), Ok)?;
                let l = block_of
                    .get(&s)
                    .map_or_else(|| err(op, "bad successor"), Ok)?;
                let _ = writeln!(self.out, "  br label %{l}");
            }
            "cond_br" => {
                let succ = &ir.op(op).successors;
                if succ.len() != 2 {
                    return err(op, "needs two successors");
                }
                let c = self.typed(op, ops[0])?;
                let t = block_of
                    .get(&succ[0])
                    .map_or_else(|| err(op, "bad successor"), Ok)?;
                let f = block_of
                    .get(&succ[1])
                    .map_or_else(|| err(op, "bad successor"), Ok)?;
                let _ = writeln!(self.out, "  br {c}, label %{t}, label %{f}");
            }
            "return" => {
                if let Some(v) = ops.first() {
                    let v = self.typed(op, *v)?;
                    let _ = writeln!(self.out, "  ret {v}");
                } else {
                    let _ = writeln!(self.out, "  ret void");
                }
            }
            "unreachable" => {
                let _ = writeln!(self.out, "  unreachable");
            }
            _ => return err(op, "has no LLVM IR translation"),
        }
        Ok(())
    }
}
