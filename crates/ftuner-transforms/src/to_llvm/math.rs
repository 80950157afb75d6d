//! `math` to `llvm` (MLIR's `MathToLLVM` and `MathToLibm`): intrinsics by table, `rsqrt`
//! as a division, `fpowi` by squaring for a constant exponent, and calls of libm for the
//! functions LLVM has no intrinsic for.

use super::{unsupported, Cv, R};
use ftuner_ir::{FloatKind, OpId, Value};

/// The `llvm` intrinsic of a `math` op that converts one to one.
fn intrinsic(name: &str) -> Option<&'static str> {
    Some(match name {
        "math.exp" => "llvm.intr.exp",
        "math.exp2" => "llvm.intr.exp2",
        "math.log" => "llvm.intr.log",
        "math.log2" => "llvm.intr.log2",
        "math.sqrt" => "llvm.intr.sqrt",
        "math.absf" => "llvm.intr.fabs",
        "math.floor" => "llvm.intr.floor",
        "math.ceil" => "llvm.intr.ceil",
        "math.sin" => "llvm.intr.sin",
        "math.cos" => "llvm.intr.cos",
        "math.powf" => "llvm.intr.pow",
        "math.fma" => "llvm.intr.fma",
        _ => return None,
    })
}

impl Cv<'_> {
    /// Convert a `math` op.
    pub(super) fn math(&mut self, op: OpId, name: &'static str) -> R<()> {
        if let Some(ln) = intrinsic(name) {
            return self.same_operands(op, ln);
        }
        match name {
            "math.rsqrt" => self.rsqrt(op),
            "math.fpowi" => self.fpowi(op),
            "math.tanh" | "math.erf" | "math.atan" | "math.tan" | "math.log1p" | "math.expm1" => {
                self.libm(op, name)
            }
            _ => Err(unsupported(op)),
        }
    }

    fn rsqrt(&mut self, op: OpId) -> R<()> {
        let a = self.v(op, self.ir.operand(op, 0))?;
        let ty = self.results_of(op)?[0];
        let s = self.val("llvm.intr.sqrt", vec![a], ty);
        let one = self.float_of(1.0, ty);
        let r = self.val("llvm.fdiv", vec![one, s], ty);
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
                            Some(p) => self.val("llvm.fmul", vec![p, base], ty),
                            None => base,
                        });
                    }
                    e >>= 1;
                    if e > 0 {
                        base = self.val("llvm.fmul", vec![base, base], ty);
                    }
                }
                match (acc, k < 0) {
                    (Some(pos), false) => pos,
                    (Some(pos), true) => {
                        let one = self.float_of(1.0, ty);
                        self.val("llvm.fdiv", vec![one, pos], ty)
                    }
                    (None, _) => self.float_of(1.0, ty),
                }
            }
            None => {
                let fe = self.val("llvm.sitofp", vec![n], ty);
                self.val("llvm.intr.pow", vec![a, fe], ty)
            }
        };
        self.bind(op, r);
        Ok(())
    }

    /// A call of libm's `NAME` (f64) or `NAMEf` (f32).
    fn libm(&mut self, op: OpId, name: &str) -> R<()> {
        let a = self.v(op, self.ir.operand(op, 0))?;
        let ty = self.results_of(op)?[0];
        let base = name.trim_start_matches("math.");
        let (f, t) = match ty.float_kind() {
            Some(FloatKind::F32) => (format!("{base}f"), "f32"),
            Some(FloatKind::F64) => (base.to_string(), "f64"),
            _ => return Err((op, format!("{name} on {ty} has no libm function"))),
        };
        let r = self
            .call(&f, &format!("{t} ({t})"), vec![a], Some(ty))
            .ok_or_else(|| (op, "call has no result".to_string()))?;
        self.bind(op, r);
        Ok(())
    }
}
