//! `math` to `llvm` (MLIR's `MathToLLVM` and `MathToLibm`): an op whose spec names its
//! LLVM form ([`LlvmLowering`]: an intrinsic, or a libm function) converts by that; `rsqrt`
//! becomes a division, `fpowi` multiplications by squaring for a constant exponent.

use super::{unsupported, LlvmRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{FloatKind, LlvmLowering, OpId, Value};

impl LlvmRewriter<'_> {
    /// Convert a `math` op.
    pub(super) fn math(&mut self, op: OpId, name: &'static str) -> R<()> {
        match self.ctx.op_def(name).and_then(|d| d.llvm) {
            Some(LlvmLowering::Intrinsic(ln)) => return self.same_operands(op, ln),
            Some(LlvmLowering::Libm(f)) => return self.libm(op, f),
            Some(LlvmLowering::IntrinsicDefined(ln, flag)) => {
                let ops = self.converted_operands(op)?;
                let ty = self.results_of(op)?[0];
                let no = ftuner_ir::Attribute::get(ftuner_ir::AttrKind::Bool(false));
                let r = self.valp(ln, ops, ty, vec![(flag, no)]);
                self.bind(op, r);
                return Ok(());
            }
            None => {}
        }
        match name {
            ops::math::RsqrtOp::NAME => self.rsqrt(op),
            ops::math::FpowiOp::NAME => self.fpowi(op),
            _ => Err(unsupported(op)),
        }
    }

    fn rsqrt(&mut self, op: OpId) -> R<()> {
        let a = self.v(op, self.ir.operand(op, 0))?;
        let ty = self.results_of(op)?[0];
        let s = self.val(ops::llvm::IntrSqrtOp::NAME, vec![a], ty);
        let one = self.float_of(1.0, ty);
        let r = self.val(ops::llvm::FdivOp::NAME, vec![one, s], ty);
        self.bind(op, r);
        Ok(())
    }

    /// x^n, n an integer. A constant n (the usual case: torch-mlir's `pow(x, 3.0)`) becomes
    /// multiplications by squaring, then one division for n < 0; otherwise `pow` on n
    /// converted to the float type (exact for integral exponents up to 2^24 in f32, and
    /// correct for negative bases).
    fn fpowi(&mut self, op: OpId) -> R<()> {
        let (a, n) = self.two_operands(op)?;
        let ty = self.results_of(op)?[0];
        let k = self
            .constant_attr(n)
            .and_then(|v| v.as_i64())
            .filter(|k| k.unsigned_abs() <= 1 << 16);
        let r = match k {
            Some(k) => {
                let (mut acc, mut base, mut e) = (None::<Value>, a, k.unsigned_abs());
                while e > 0 {
                    if e & 1 == 1 {
                        acc = Some(match acc {
                            Some(p) => self.val(ops::llvm::FmulOp::NAME, vec![p, base], ty),
                            None => base,
                        });
                    }
                    e >>= 1;
                    if e > 0 {
                        base = self.val(ops::llvm::FmulOp::NAME, vec![base, base], ty);
                    }
                }
                match (acc, k < 0) {
                    (Some(pos), false) => pos,
                    (Some(pos), true) => {
                        let one = self.float_of(1.0, ty);
                        self.val(ops::llvm::FdivOp::NAME, vec![one, pos], ty)
                    }
                    (None, _) => self.float_of(1.0, ty),
                }
            }
            None => {
                let fe = self.val(ops::llvm::SitofpOp::NAME, vec![n], ty);
                self.val(ops::llvm::IntrPowOp::NAME, vec![a, fe], ty)
            }
        };
        self.bind(op, r);
        Ok(())
    }

    /// A call of libm's `base` (f64) or `basef` (f32) on the op's operands.
    fn libm(&mut self, op: OpId, base: &str) -> R<()> {
        let args = self.converted_operands(op)?;
        let ty = self.results_of(op)?[0];
        let (f, t) = match ty.float_kind() {
            Some(FloatKind::F32) => (format!("{base}f"), "f32"),
            Some(FloatKind::F64) => (base.to_string(), "f64"),
            _ => {
                let name = self.ir.name(op);
                return Err((op, format!("{name} on {ty} has no libm function")));
            }
        };
        let params = vec![t; args.len()].join(", ");
        let r = self
            .call(&f, &format!("{t} ({params})"), args, Some(ty))
            .ok_or_else(|| (op, "call has no result".to_string()))?;
        self.bind(op, r);
        Ok(())
    }
}
