//! `approximate-math`: f32 `math.tanh` and `math.erf` (scalars or vectors) rewritten as
//! rational functions of `arith`/`math.fma` ops, as MLIR's math polynomial
//! approximations do, so the loops around them vectorize.
//!
//! `convert-to-llvm` turns these ops into libm calls (`tanhf`, `erff`), one per element:
//! LLVM cannot vectorize a loop around a call it has no vector variant for, and there is
//! no vector math library here. GELU evaluates one per activation: in GPT-2 small at
//! T = 75 (one thread) `tanhf` and the `expm1f` it calls took 25% of the model's time,
//! `erff` 5% of BERT-base's.
//!
//! Both functions are odd and saturate: `f(x) = x P(x²) / Q(x²)` with `x` clamped to
//! `[-c, c]` (where `f` is within half an f32 ulp of ±1), the result clamped to `[-1, 1]`,
//! and exactly ±1 where the input saturates. NaN propagates (`arith.minimumf`/`maximumf`),
//! ±∞ give ±1. The coefficients
//! come from `tools/approx/fit_rational.py` (a weighted least-squares rational fit); the
//! maximum error in f32, over all inputs, is 3.6e-7 for tanh and 3.3e-7 for erf (a few
//! ulp near ±1; the unit test below checks it against f64). f64 ops stay libm calls.

use ftuner_dialects::ops;
use ftuner_ir::{Attribute, Ir, OpBuilder, OpId, Scalar, Type, Value};
use ftuner_pass::{define_pass, PassContext, PassFailure};

/// `x P(x²) / Q(x²)` on `[-clamp, clamp]`; coefficients from the constant term up.
pub struct Rational {
    pub clamp: f64,
    pub p: &'static [f64],
    pub q: &'static [f64],
}

pub const TANH: Rational = Rational {
    clamp: 7.90,
    p: &[
        0.9999999735451272,
        0.13444450485390858,
        0.0035716945253778045,
        2.190339163020881e-05,
        1.5259643329559613e-08,
    ],
    q: &[
        1.0,
        0.46777772662025796,
        0.026164407222075685,
        0.00034117406060539437,
        8.530533005408745e-07,
    ],
};

pub const ERF: Rational = Rational {
    clamp: 3.92,
    p: &[
        1.1283790222992782,
        0.19276592595923756,
        0.053060714589849636,
        0.0038684046450823185,
        0.0002874806322750461,
        2.0347134930203206e-06,
    ],
    q: &[
        1.0,
        0.5041660198725646,
        0.11508537937147076,
        0.015172449816017416,
        0.0011881330259122568,
        3.8070485074457686e-05,
    ],
};

impl Rational {
    /// The approximation in f32 arithmetic, step for step as the pass emits it (fused
    /// multiply-adds in Horner's scheme).
    pub fn eval_f32(&self, x: f32) -> f32 {
        let c = self.clamp as f32;
        let x = if x.is_nan() { x } else { x.clamp(-c, c) };
        let t = x * x;
        let horner = |k: &[f64]| {
            let mut acc = k[k.len() - 1] as f32;
            for v in k[..k.len() - 1].iter().rev() {
                acc = acc.mul_add(t, *v as f32);
            }
            acc
        };
        let r = x * horner(self.p) / horner(self.q);
        let r = if r.is_nan() { r } else { r.clamp(-1.0, 1.0) };
        if x.abs() >= c {
            x / c
        } else {
            r
        }
    }
}

/// A constant of `ty` (f32 or a vector of f32) with every element `v`.
fn constant(b: &mut OpBuilder<'_>, ty: Type, v: f64) -> Value {
    let attr = if ty.is_vector() {
        Attribute::dense(ty, vec![Scalar::Float((v as f32).to_bits() as u128)])
    } else {
        Attribute::float(v, ty)
    };
    b.value(ops::arith::ConstantOp::NAME, vec![], ty, &[("value", attr)])
}

fn expand(ir: &mut Ir, op: OpId, r: &Rational) {
    let x = ir.operand(op, 0);
    let ty = ir.value_type(x);
    let mut b = OpBuilder::before(ir, op);
    let bin =
        |b: &mut OpBuilder<'_>, name: &str, l: Value, r: Value| b.value(name, vec![l, r], ty, &[]);
    let (lo, hi) = (
        constant(&mut b, ty, -r.clamp),
        constant(&mut b, ty, r.clamp),
    );
    let x = bin(&mut b, ops::arith::MaximumfOp::NAME, x, lo);
    let x = bin(&mut b, ops::arith::MinimumfOp::NAME, x, hi);
    let t = bin(&mut b, ops::arith::MulfOp::NAME, x, x);
    let horner = |b: &mut OpBuilder<'_>, k: &[f64]| {
        let mut acc = constant(b, ty, k[k.len() - 1]);
        for v in k[..k.len() - 1].iter().rev() {
            let c = constant(b, ty, *v);
            acc = b.value(ops::math::FmaOp::NAME, vec![acc, t, c], ty, &[]);
        }
        acc
    };
    let p = horner(&mut b, r.p);
    let q = horner(&mut b, r.q);
    let num = bin(&mut b, ops::arith::MulfOp::NAME, x, p);
    let y = bin(&mut b, ops::arith::DivfOp::NAME, num, q);
    let (m1, p1) = (constant(&mut b, ty, -1.0), constant(&mut b, ty, 1.0));
    let y = bin(&mut b, ops::arith::MaximumfOp::NAME, y, m1);
    let y = bin(&mut b, ops::arith::MinimumfOp::NAME, y, p1);
    // Saturated (|x| >= c, x clamped to ±c): exactly ±1, as x / c.
    let ax = b.value(ops::math::AbsfOp::NAME, vec![x], ty, &[]);
    let bool_ty = if ty.is_vector() {
        Type::vector(ty.shape().unwrap_or(&[]).to_vec(), Type::i1())
    } else {
        Type::i1()
    };
    let sat = b.value(
        ops::arith::CmpfOp::NAME,
        vec![ax, hi],
        bool_ty,
        &[("predicate", Attribute::i64(3))],
    );
    let unit = bin(&mut b, ops::arith::DivfOp::NAME, x, hi);
    let y = b.value(ops::arith::SelectOp::NAME, vec![sat, unit, y], ty, &[]);
    ir.replace_op(op, &[y]);
}

/// f32 scalars and vectors of f32.
fn is_f32(t: Type) -> bool {
    let e = if t.is_vector() { t.element_type() } else { t };
    e == Type::f32()
}

define_pass! {
    /// `approximate-math`: rewrite f32 math.tanh and math.erf as rational functions of arith ops, so loops around them vectorize.
    pub struct ApproximateMathPass {
        argument: "approximate-math",
        name: "ApproximateMath",
        summary: "Rewrite f32 math.tanh and math.erf as rational functions of arith ops, so loops around them vectorize",
        description: "Each math.tanh / math.erf on f32 or a vector of f32 becomes x * P(x^2) / Q(x^2) with x clamped to where the function saturates and the result clamped to [-1, 1] (arith.maximumf/minimumf, math.fma, arith.mulf/divf); maximum error 3.6e-7 (tanh) and 3.3e-7 (erf) over all f32 inputs. f64 ops are left to libm.",
        options: ApproximateMathOptions {},
        statistics: {
            expanded: "num-expanded" => "math ops rewritten as rational approximations",
        },
    }
}

impl ApproximateMathPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &ApproximateMathOptions,
    ) -> Result<(), PassFailure> {
        let mut ops = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            let r = match cx.ir.name(o) {
                ops::math::TanhOp::NAME => Some(&TANH),
                ops::math::ErfOp::NAME => Some(&ERF),
                _ => None,
            };
            if let Some(r) = r {
                if cx.ir.operands(o).len() == 1 && is_f32(cx.ir.value_type(cx.ir.operand(o, 0))) {
                    ops.push((o, r));
                }
            }
        });
        for (o, r) in ops {
            expand(cx.ir, o, r);
            self.expanded += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worst error over a dense sweep of f32 inputs (every 2^-12 up to 10, both
    /// signs, plus specials) against the f64 functions.
    fn worst(r: &Rational, f: fn(f64) -> f64) -> f64 {
        let mut worst: f64 = 0.0;
        for i in 0..=(10 << 12) {
            for s in [1.0f32, -1.0] {
                let x = s * (i as f32) / 4096.0;
                let e = (r.eval_f32(x) as f64 - f(x as f64)).abs();
                worst = worst.max(e);
            }
        }
        // Tiny inputs: relative error (f(x) ~ x * P(0)).
        for k in 1..120 {
            let x = 2f32.powi(-k);
            let exact = f(x as f64);
            let rel = (r.eval_f32(x) as f64 - exact).abs() / exact.abs();
            assert!(rel < 4e-7, "relative error {rel} at {x}");
        }
        worst
    }

    #[test]
    fn tanh_within_bound() {
        let w = worst(&TANH, f64::tanh);
        assert!(w < 4e-7, "tanh max error {w}");
        assert_eq!(TANH.eval_f32(f32::INFINITY), 1.0);
        assert_eq!(TANH.eval_f32(f32::NEG_INFINITY), -1.0);
        assert!(TANH.eval_f32(f32::NAN).is_nan());
    }

    #[test]
    fn erf_within_bound() {
        let w = worst(&ERF, erf64);
        assert!(w < 4e-7, "erf max error {w}");
        assert_eq!(ERF.eval_f32(f32::INFINITY), 1.0);
        assert!(ERF.eval_f32(f32::NAN).is_nan());
    }

    /// erf in f64 to ~1e-16: its Taylor series below 3, the continued fraction of erfc
    /// above (libm's erf is not in Rust's std).
    fn erf64(x: f64) -> f64 {
        let a = x.abs();
        let v = if a < 3.0 {
            let (mut term, mut sum, mut n) = (a, a, 0.0);
            while term.abs() > 1e-18 * sum.abs() {
                n += 1.0;
                term *= -a * a / n;
                sum += term / (2.0 * n + 1.0);
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            // erfc(a) = exp(-a²)/sqrt(pi) * 1/(a + 1/2/(a + 1/(a + 3/2/(a + ...))))
            let mut f = 0.0;
            for k in (1..60).rev() {
                f = (k as f64 / 2.0) / (a + f);
            }
            1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / (a + f)
        };
        v.copysign(x)
    }
}
