//! `llvm.intr.*` ops as calls of LLVM intrinsics, each declared on first use: `memcpy`,
//! `prefetch`, masked gathers and scatters, and the overloaded rest (one type for the
//! result and every operand).

use super::types::intrinsic_suffix;
use super::{err, prop, Fn, R};
use ftuner_ir::OpId;
use std::fmt::Write;

impl Fn<'_> {
    /// `llvm.intr.NAME` (`intr` is `NAME`).
    pub(super) fn intrinsic(&mut self, op: OpId, intr: &str) -> R<()> {
        match intr {
            "memcpy" => self.memcpy(op),
            "prefetch" => self.prefetch(op),
            "masked.gather" | "masked.scatter" => self.gather_scatter(op, intr == "masked.gather"),
            _ => self.overloaded_intrinsic(op, intr),
        }
    }

    fn memcpy(&mut self, op: OpId) -> R<()> {
        let ops = self.ir.operands(op);
        self.decls.insert(
            "llvm.memcpy.p0.p0.i64".into(),
            "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)".into(),
        );
        let (d, s, n) = (
            self.typed(op, ops[0])?,
            self.typed(op, ops[1])?,
            self.typed(op, ops[2])?,
        );
        let _ = writeln!(
            self.out,
            "  call void @llvm.memcpy.p0.p0.i64({d}, {s}, {n}, i1 false)"
        );
        Ok(())
    }

    fn prefetch(&mut self, op: OpId) -> R<()> {
        let ir = self.ir;
        self.decls.insert(
            "llvm.prefetch.p0".into(),
            "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)".into(),
        );
        let a = self.typed(op, ir.operands(op)[0])?;
        let imm = |k: &str| prop(ir, op, k).and_then(|x| x.as_i64()).unwrap_or(0);
        let _ = writeln!(
            self.out,
            "  call void @llvm.prefetch.p0({a}, i32 {}, i32 {}, i32 {})",
            imm("rw"),
            imm("hint"),
            imm("cache")
        );
        Ok(())
    }

    /// An intrinsic overloaded on its result type, which every operand shares too.
    fn overloaded_intrinsic(&mut self, op: OpId, intr: &str) -> R<()> {
        let ops = self.ir.operands(op);
        let t = self.res_ty(op)?;
        let f = format!("llvm.{intr}.{}", intrinsic_suffix(&t));
        let mut params = vec![t.clone(); ops.len()];
        let mut args = ops
            .iter()
            .map(|v| self.typed(op, *v))
            .collect::<R<Vec<_>>>()?;
        // The immediate flag of abs/ctlz/cttz, a trailing i1 argument.
        let flag = ["is_int_min_poison", "is_zero_poison"]
            .iter()
            .find_map(|k| prop(self.ir, op, k));
        if let Some(a) = flag {
            params.push("i1".into());
            let on = matches!(a.kind(), ftuner_ir::AttrKind::Bool(true));
            args.push(format!("i1 {on}"));
        }
        let params = params.join(", ");
        self.decls
            .insert(f.clone(), format!("declare {t} @{f}({params})"));
        let args = args.join(", ");
        let fm = super::ops::fast_math_flags(self.ir, op);
        self.def(op, format!("call{fm} {t} @{f}({args})"))
    }

    /// `llvm.intr.masked.gather %ptrs, %mask, %pass` / `llvm.intr.masked.scatter %v,
    /// %ptrs, %mask` (`alignment` an attribute, as in MLIR's LLVM dialect; LLVM 22 takes
    /// it as the `align` attribute of the pointer vector).
    fn gather_scatter(&mut self, op: OpId, gather: bool) -> R<()> {
        let ops = self.ir.operands(op).to_vec();
        if ops.len() != 3 {
            return err(op, "expects three operands");
        }
        let align = prop(self.ir, op, "alignment")
            .and_then(|a| a.as_i64())
            .unwrap_or(1);
        let (data, ptrs) = if gather {
            (self.ir.result(op, 0), ops[0])
        } else {
            (ops[0], ops[1])
        };
        let dt = self.vty(op, data)?;
        let pt = self.vty(op, ptrs)?;
        let sfx = format!("{}.{}", intrinsic_suffix(&dt), intrinsic_suffix(&pt));
        let mt = self.vty(op, if gather { ops[1] } else { ops[2] })?;
        if gather {
            let f = format!("llvm.masked.gather.{sfx}");
            self.decls
                .insert(f.clone(), format!("declare {dt} @{f}({pt}, {mt}, {dt})"));
            let (p, m, pass) = (
                format!("{pt} align {align} {}", self.get(op, ops[0])?),
                self.typed(op, ops[1])?,
                self.typed(op, ops[2])?,
            );
            self.def(op, format!("call {dt} @{f}({p}, {m}, {pass})"))
        } else {
            let f = format!("llvm.masked.scatter.{sfx}");
            self.decls
                .insert(f.clone(), format!("declare void @{f}({dt}, {pt}, {mt})"));
            let (v, p, m) = (
                self.typed(op, ops[0])?,
                format!("{pt} align {align} {}", self.get(op, ops[1])?),
                self.typed(op, ops[2])?,
            );
            let _ = writeln!(self.out, "  call void @{f}({v}, {p}, {m})");
            Ok(())
        }
    }
}
