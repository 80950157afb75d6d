//! `approximate-math`: f32 `math.tanh` and `math.erf` (scalars or vectors) rewritten as
//! rational functions of `arith`/`math.fma` ops, and `math.exp` as a polynomial times a
//! power of two built from its exponent bits, as MLIR's math polynomial approximations
//! do, so the loops around them vectorize.
//!
//! `convert-to-llvm` turns these ops into libm calls (`tanhf`, `erff`, `expf`), one per element:
//! LLVM cannot vectorize a loop around a call it has no vector variant for, and there is
//! no vector math library here. GELU evaluates one per activation: in GPT-2 small at
//! T = 75 (one thread) `tanhf` and the `expm1f` it calls took 25% of the model's time,
//! `erff` 5% of BERT-base's; softmax's `expf` ~3% of BERT-base's at 75 tokens.
//!
//! tanh and erf are odd and saturate: `f(x) = x P(x²) / Q(x²)` with `x` clamped to
//! `[-c, c]` (where `f` is within half an f32 ulp of ±1), the result clamped to `[-1, 1]`,
//! and exactly ±1 where the input saturates. NaN propagates (`arith.minimumf`/`maximumf`),
//! ±∞ give ±1. The coefficients
//! come from `tools/approx/fit_rational.py` (a weighted least-squares rational fit); the
//! maximum error in f32, over all inputs, is 3.6e-7 for tanh and 3.3e-7 for erf (a few
//! ulp near ±1; the unit test below checks it against f64). exp: [`Exp`] (relative error
//! below 1.5e-7, `tools/approx/fit_exp.py`). f64 ops stay libm calls.

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

/// `exp(x) = 2^n exp(r)`, `n = round(x / ln 2)`, `r = x - n ln 2` in `[-ln2/2, ln2/2]` (ln 2
/// split as `LN2[0] + LN2[1]`, Cody and Waite: `n * LN2[0]` is exact), `exp(r) = 1 + r + r²
/// q(r)`; `x` clamped to `[CLAMP[0], CLAMP[1]]`, where `exp` is 0 (rounded) and +∞.
pub struct Exp {
    pub clamp: [f64; 2],
    pub ln2: [f64; 2],
    pub q: &'static [f64],
}

pub const EXP: Exp = Exp {
    clamp: [-104.0, 88.8],
    ln2: [0.693359375, -0.00021219444005471377],
    q: &[
        0.5000000067643342,
        0.16666665869411898,
        0.041666295090823625,
        0.008333497008658068,
        0.0013944648790279119,
        0.00019790352626042346,
    ],
};

/// `1.5 * 2^23`: `x * log2(e) + MAGIC` rounds to an integer `n`, whose bits are those of
/// `MAGIC` plus `n` (for `|n| < 2^22`).
const MAGIC: f32 = 12582912.0;

impl Exp {
    /// The approximation in f32 arithmetic, step for step as the pass emits it.
    pub fn eval_f32(&self, x: f32) -> f32 {
        let x = if x.is_nan() {
            x
        } else {
            x.clamp(self.clamp[0] as f32, self.clamp[1] as f32)
        };
        let t = x.mul_add(std::f32::consts::LOG2_E, MAGIC);
        let nf = t - MAGIC;
        let r = nf.mul_add(-self.ln2[0] as f32, x);
        let r = nf.mul_add(-self.ln2[1] as f32, r);
        let q = self.q;
        let mut acc = q[q.len() - 1] as f32;
        for c in q[..q.len() - 1].iter().rev() {
            acc = acc.mul_add(r, *c as f32);
        }
        let y = (r * r).mul_add(acc, r) + 1.0;
        let n = (t.to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32);
        let n1 = n >> 1;
        let n2 = n.wrapping_sub(n1);
        let scale = |k: i32| f32::from_bits((k.wrapping_add(127) as u32).wrapping_shl(23));
        y * scale(n1) * scale(n2)
    }
}

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

/// `math.exp` (f32 or a vector of f32) as [`EXP`]: the scale `2^n` built from `n`'s bits
/// in two halves (`2^(n>>1) * 2^(n - (n>>1))`, each a normal float), so results that
/// overflow give +∞ and those below the normal range round once to a subnormal or 0.
/// `n` comes from the bits of `x * log2(e) + MAGIC`, not a float-to-int conversion: NaN
/// gives garbage bits there (no poison), and NaN from the polynomial.
fn expand_exp(ir: &mut Ir, op: OpId) {
    let x = ir.operand(op, 0);
    let ty = ir.value_type(x);
    let ity = if ty.is_vector() {
        Type::vector(ty.shape().unwrap_or(&[]).to_vec(), Type::i32())
    } else {
        Type::i32()
    };
    let mut b = OpBuilder::before(ir, op);
    let int = |b: &mut OpBuilder<'_>, v: i32| {
        let attr = if ity.is_vector() {
            Attribute::dense(ity, vec![Scalar::Int(v as i128)])
        } else {
            Attribute::int(v as i128, ity)
        };
        b.value(
            ops::arith::ConstantOp::NAME,
            vec![],
            ity,
            &[("value", attr)],
        )
    };
    let bin = |b: &mut OpBuilder<'_>, name: &str, l: Value, r: Value, t: Type| {
        b.value(name, vec![l, r], t, &[])
    };
    let fma = |b: &mut OpBuilder<'_>, a: Value, m: Value, c: Value| {
        b.value(ops::math::FmaOp::NAME, vec![a, m, c], ty, &[])
    };
    let (lo, hi) = (
        constant(&mut b, ty, EXP.clamp[0]),
        constant(&mut b, ty, EXP.clamp[1]),
    );
    let x = bin(&mut b, ops::arith::MaximumfOp::NAME, x, lo, ty);
    let x = bin(&mut b, ops::arith::MinimumfOp::NAME, x, hi, ty);
    let (log2e, magic) = (
        constant(&mut b, ty, std::f64::consts::LOG2_E),
        constant(&mut b, ty, MAGIC as f64),
    );
    let t = fma(&mut b, x, log2e, magic);
    let nf = bin(&mut b, ops::arith::SubfOp::NAME, t, magic, ty);
    let (h, l) = (
        constant(&mut b, ty, -EXP.ln2[0]),
        constant(&mut b, ty, -EXP.ln2[1]),
    );
    let r = fma(&mut b, nf, h, x);
    let r = fma(&mut b, nf, l, r);
    let mut acc = constant(&mut b, ty, EXP.q[EXP.q.len() - 1]);
    for c in EXP.q[..EXP.q.len() - 1].iter().rev() {
        let c = constant(&mut b, ty, *c);
        acc = fma(&mut b, acc, r, c);
    }
    let r2 = bin(&mut b, ops::arith::MulfOp::NAME, r, r, ty);
    let y = fma(&mut b, r2, acc, r);
    let one = constant(&mut b, ty, 1.0);
    let y = bin(&mut b, ops::arith::AddfOp::NAME, y, one, ty);
    // n = bits(t) - bits(MAGIC), then 2^(n>>1) and 2^(n - (n>>1)) from their exponents.
    let tb = b.value(ops::arith::BitcastOp::NAME, vec![t], ity, &[]);
    let mb = int(&mut b, MAGIC.to_bits() as i32);
    let n = bin(&mut b, ops::arith::SubiOp::NAME, tb, mb, ity);
    let c1 = int(&mut b, 1);
    let n1 = bin(&mut b, ops::arith::ShrsiOp::NAME, n, c1, ity);
    let n2 = bin(&mut b, ops::arith::SubiOp::NAME, n, n1, ity);
    let (bias, shift) = (int(&mut b, 127), int(&mut b, 23));
    let mut y = y;
    for k in [n1, n2] {
        let e = bin(&mut b, ops::arith::AddiOp::NAME, k, bias, ity);
        let e = bin(&mut b, ops::arith::ShliOp::NAME, e, shift, ity);
        let s = b.value(ops::arith::BitcastOp::NAME, vec![e], ty, &[]);
        y = bin(&mut b, ops::arith::MulfOp::NAME, y, s, ty);
    }
    ir.replace_op(op, &[y]);
}

/// What an f32 math op is rewritten as.
enum Approx {
    Rational(&'static Rational),
    Exp,
}

/// f32 scalars and vectors of f32.
fn is_f32(t: Type) -> bool {
    let e = if t.is_vector() { t.element_type() } else { t };
    e == Type::f32()
}

define_pass! {
    /// `approximate-math`: rewrite f32 math.tanh, math.erf and math.exp as arith ops, so loops around them vectorize.
    pub struct ApproximateMathPass {
        argument: "approximate-math",
        name: "ApproximateMath",
        summary: "Rewrite f32 math.tanh, math.erf and math.exp as arith ops (rational functions, a polynomial times a power of two), so loops around them vectorize",
        description: "Each math.tanh / math.erf on f32 or a vector of f32 becomes x * P(x^2) / Q(x^2) with x clamped to where the function saturates and the result clamped to [-1, 1] (arith.maximumf/minimumf, math.fma, arith.mulf/divf); maximum error 3.6e-7 (tanh) and 3.3e-7 (erf) over all f32 inputs. Each f32 math.exp becomes 2^n * (1 + r + r^2 q(r)) with n = round(x log2 e) taken from the bits of x log2 e + 1.5 * 2^23, r = x - n ln 2 (ln 2 in two parts), 2^n built from exponent bits in two halves (overflow gives +inf, the subnormal range rounds once); relative error below 1.5e-7. f64 ops are left to libm.",
        options: ApproximateMathOptions {},
        statistics: {
            expanded: "num-expanded" => "math ops rewritten as approximations",
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
                ops::math::TanhOp::NAME => Some(Approx::Rational(&TANH)),
                ops::math::ErfOp::NAME => Some(Approx::Rational(&ERF)),
                ops::math::ExpOp::NAME => Some(Approx::Exp),
                _ => None,
            };
            if let Some(r) = r {
                if cx.ir.operands(o).len() == 1 && is_f32(cx.ir.value_type(cx.ir.operand(o, 0))) {
                    ops.push((o, r));
                }
            }
        });
        for (o, r) in ops {
            match r {
                Approx::Rational(r) => expand(cx.ir, o, r),
                Approx::Exp => expand_exp(cx.ir, o),
            }
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

    /// Relative error against f64 `exp` at every 2^-10 over the normal range, specials,
    /// overflow, and the subnormal range (absolute there: one subnormal ulp).
    #[test]
    fn exp_within_bound() {
        let mut worst: f64 = 0.0;
        for i in -(87 << 10)..=(88 << 10) {
            let x = i as f32 / 1024.0;
            let exact = (x as f64).exp();
            worst = worst.max((EXP.eval_f32(x) as f64 - exact).abs() / exact);
        }
        assert!(worst < 1.5e-7, "exp max relative error {worst}");
        assert_eq!(EXP.eval_f32(0.0), 1.0);
        assert_eq!(EXP.eval_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(EXP.eval_f32(89.0), f32::INFINITY);
        assert_eq!(EXP.eval_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(EXP.eval_f32(-110.0), 0.0);
        assert!(EXP.eval_f32(f32::NAN).is_nan());
        // The largest finite result and the subnormals.
        assert!(EXP.eval_f32(88.72).is_finite());
        for i in 0..=200 {
            let x = -87.5 - i as f32 * 0.08;
            let exact = (x as f64).exp();
            let e = (EXP.eval_f32(x) as f64 - exact).abs();
            assert!(e <= 1.5 * 2f64.powi(-149), "exp({x}) off by {e}");
        }
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
