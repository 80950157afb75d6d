//! Memory ops: `llvm.getelementptr` (constant and dynamic indices), `load`, `store`
//! (with their `alignment`) and `alloca`.

use super::types::ty;
use super::{err, prop, Fn, R};
use ftuner_ir::OpId;
use std::fmt::Write;

impl Fn<'_> {
    /// `llvm.getelementptr`, `load`, `store` and `alloca`.
    pub(super) fn memory(&mut self, op: OpId, short: &str) -> R<()> {
        let ir = self.ir;
        let ops = ir.operands(op);
        match short {
            "getelementptr" => {
                let et = prop(ir, op, "elem_type")
                    .and_then(|a| a.as_type())
                    .and_then(ty)
                    .map_or_else(|| err(op, "has no element type"), Ok)?;
                let raw = prop(ir, op, "rawConstantIndices")
                    .and_then(|a| a.as_dense_i64s())
                    .unwrap_or_default();
                let base = self.typed(op, ops[0])?;
                let mut dyns = ops[1..].iter();
                let mut idx = vec![];
                for r in raw {
                    if r == i32::MIN as i64 {
                        let v = *dyns
                            .next()
                            .map_or_else(|| err(op, "missing dynamic index"), Ok)?;
                        idx.push(self.typed(op, v)?);
                    } else {
                        idx.push(format!("i32 {r}"));
                    }
                }
                self.def(
                    op,
                    format!("getelementptr {et}, {base}, {}", idx.join(", ")),
                )?;
            }
            "load" => {
                let t = self.res_ty(op)?;
                let p = self.typed(op, ops[0])?;
                let a = prop(ir, op, "alignment").and_then(|a| a.as_i64());
                let al = a.map(|a| format!(", align {a}")).unwrap_or_default();
                self.def(op, format!("load {t}, {p}{al}"))?;
            }
            "store" => {
                let v = self.typed(op, ops[0])?;
                let p = self.typed(op, ops[1])?;
                let a = prop(ir, op, "alignment").and_then(|a| a.as_i64());
                let al = a.map(|a| format!(", align {a}")).unwrap_or_default();
                let _ = writeln!(self.out, "  store {v}, {p}{al}");
            }
            "alloca" => {
                let et = prop(ir, op, "elem_type")
                    .and_then(|a| a.as_type())
                    .and_then(ty)
                    .map_or_else(|| err(op, "has no element type"), Ok)?;
                let n = self.typed(op, ops[0])?;
                self.def(op, format!("alloca {et}, {n}, align 64"))?;
            }
            _ => return err(op, "has no LLVM IR translation"),
        }
        Ok(())
    }
}
