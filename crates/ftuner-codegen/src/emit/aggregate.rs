//! Aggregate and vector element ops: `llvm.extractvalue`/`insertvalue` on structs and
//! arrays, `insertelement`/`extractelement` and `shufflevector` on vectors.

use super::{err, prop, Fn, R};
use ftuner_ir::OpId;

impl Fn<'_> {
    /// `llvm.extractvalue`, `insertvalue`, `insertelement`, `extractelement` and `shufflevector`.
    pub(super) fn aggregate(&mut self, op: OpId, short: &str) -> R<()> {
        let ir = self.ir;
        let ops = ir.operands(op);
        match short {
            "extractvalue" | "insertvalue" => {
                let pos = prop(ir, op, "position")
                    .and_then(|a| a.as_dense_i64s())
                    .map_or_else(|| err(op, "has no position"), Ok)?;
                let p = pos
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                let agg = self.typed(op, ops[0])?;
                if short == "extractvalue" {
                    self.def(op, format!("extractvalue {agg}, {p}"))?;
                } else {
                    let v = self.typed(op, ops[1])?;
                    self.def(op, format!("insertvalue {agg}, {v}, {p}"))?;
                }
            }
            "insertelement" => {
                let (v, x, i) = (
                    self.typed(op, ops[0])?,
                    self.typed(op, ops[1])?,
                    self.typed(op, ops[2])?,
                );
                self.def(op, format!("insertelement {v}, {x}, {i}"))?;
            }
            "extractelement" => {
                let (v, i) = (self.typed(op, ops[0])?, self.typed(op, ops[1])?);
                self.def(op, format!("extractelement {v}, {i}"))?;
            }
            "shufflevector" => {
                let mask = prop(ir, op, "mask")
                    .and_then(|a| a.as_dense_i64s())
                    .map_or_else(|| err(op, "has no mask"), Ok)?;
                let m = mask
                    .iter()
                    .map(|x| {
                        if *x < 0 {
                            "i32 poison".to_string()
                        } else {
                            format!("i32 {x}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let (a, b) = (self.typed(op, ops[0])?, self.typed(op, ops[1])?);
                self.def(
                    op,
                    format!("shufflevector {a}, {b}, <{} x i32> <{m}>", mask.len()),
                )?;
            }
            _ => return err(op, "has no LLVM IR translation"),
        }
        Ok(())
    }
}
