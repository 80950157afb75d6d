//! `math`: the value of each float op, registered as the op's [`ScalarEval`] — the one
//! definition the folder (`canonicalize`) and the interpreter compute with — and the
//! folders of the ops it does not cover.
//!
//! Adding a float op takes its spec entry in `ir-specs/math.toml` (with `llvm = { libm =
//! ".." }` or `{ intrinsic = ".." }`, how convert-to-llvm lowers it) and one line in
//! [`EVAL`]: it then parses, verifies, folds, interprets and runs through the JIT
//! (docs/adding-an-op.md; `tests/math_ops.rs` checks every op of the table end to end).

use crate::util::*;
use ftuner_ir::dialect::FoldResult;
use ftuner_ir::ScalarEval::{self, FloatBinary, FloatUnary, IntBinary, IntUnary};
use ftuner_ir::{Attribute, Ir, OpId};

/// The C library's functions Rust's `f64` has no method for; the JIT calls the same ones
/// (`erf`, `erff`), so folding, interpreting and running agree.
mod libm {
    extern "C" {
        pub fn erf(x: f64) -> f64;
        pub fn erfc(x: f64) -> f64;
    }
}

fn erf(x: f64) -> f64 {
    // SAFETY: a pure C function of a double.
    unsafe { libm::erf(x) }
}

fn erfc(x: f64) -> f64 {
    // SAFETY: a pure C function of a double.
    unsafe { libm::erfc(x) }
}

/// Each float op's value in f64 (rounded to the result type by the caller).
pub const EVAL: &[(&str, ScalarEval)] = &[
    ("math.absf", FloatUnary(f64::abs)),
    ("math.acos", FloatUnary(f64::acos)),
    ("math.asin", FloatUnary(f64::asin)),
    ("math.atan", FloatUnary(f64::atan)),
    ("math.cbrt", FloatUnary(f64::cbrt)),
    ("math.ceil", FloatUnary(f64::ceil)),
    ("math.cos", FloatUnary(f64::cos)),
    ("math.erf", FloatUnary(erf)),
    ("math.erfc", FloatUnary(erfc)),
    ("math.exp", FloatUnary(f64::exp)),
    ("math.exp2", FloatUnary(f64::exp2)),
    ("math.expm1", FloatUnary(f64::exp_m1)),
    ("math.floor", FloatUnary(f64::floor)),
    ("math.log", FloatUnary(f64::ln)),
    ("math.log10", FloatUnary(f64::log10)),
    ("math.log1p", FloatUnary(f64::ln_1p)),
    ("math.log2", FloatUnary(f64::log2)),
    ("math.round", FloatUnary(f64::round)),
    ("math.roundeven", FloatUnary(f64::round_ties_even)),
    ("math.rsqrt", FloatUnary(rsqrt)),
    ("math.sin", FloatUnary(f64::sin)),
    ("math.sqrt", FloatUnary(f64::sqrt)),
    ("math.tan", FloatUnary(f64::tan)),
    ("math.tanh", FloatUnary(f64::tanh)),
    ("math.trunc", FloatUnary(f64::trunc)),
    ("math.atan2", FloatBinary(f64::atan2)),
    ("math.copysign", FloatBinary(f64::copysign)),
    ("math.powf", FloatBinary(f64::powf)),
    // Wrapping: |i128::MIN| is i128::MIN, as APInt's abs.
    ("math.absi", IntUnary(|x, _| x.wrapping_abs())),
    (
        "math.ctlz",
        IntUnary(|x, w| ((zext(x, w) as u128).leading_zeros() - (128 - w)) as i128),
    ),
    (
        "math.cttz",
        IntUnary(|x, w| (zext(x, w) as u128).trailing_zeros().min(w) as i128),
    ),
    (
        "math.ctpop",
        IntUnary(|x, w| (zext(x, w) as u128).count_ones() as i128),
    ),
    ("math.ipowi", IntBinary(ipowi)),
];

/// `x^n` wrapping at `w` bits (MLIR's `math.ipowi`): a negative `n` gives 1 for x = 1, ±1
/// for x = -1, 0 otherwise, and is undefined for x = 0 (a division by zero).
fn ipowi(x: i128, n: i128, w: u32) -> Option<i128> {
    let wrap = |v: i128| sext(v, w);
    if n < 0 {
        return match x {
            0 => None,
            1 => Some(1),
            -1 => Some(if n % 2 == 0 { 1 } else { -1 }),
            _ => Some(0),
        };
    }
    let (mut acc, mut base, mut e) = (1i128, wrap(x), n);
    while e > 0 {
        if e & 1 == 1 {
            acc = wrap(acc.wrapping_mul(base));
        }
        base = wrap(base.wrapping_mul(base));
        e >>= 1;
    }
    Some(acc)
}

fn rsqrt(x: f64) -> f64 {
    1.0 / x.sqrt()
}

/// Install [`EVAL`] on the registered ops.
pub fn register_extra(reg: &mut ftuner_ir::Registry) {
    for (name, eval) in EVAL {
        if let Some(def) = reg.op_mut(name) {
            def.scalar_eval = Some(*eval);
        }
    }
}

pub fn fold_fpowi(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    let (Const::Float(x), _) = const_value(c.first().copied()??)? else {
        return None;
    };
    let (Const::Int(n), _) = const_value(c.get(1).copied()??)? else {
        return None;
    };
    let rt = ir.value_type(ir.result(op, 0));
    Some(vec![FoldResult::Attr(make_const(
        Const::Float(x.powi(n.clamp(i32::MIN as i128, i32::MAX as i128) as i32)),
        rt,
    )?)])
}

#[cfg(test)]
mod tests {
    use super::{erf, EVAL};

    #[test]
    fn erf_matches_reference_values() {
        // erf to 10 digits (Abramowitz-Stegun table 7.1).
        for (x, want) in [
            (0.0, 0.0),
            (0.1, 0.112_462_916_0),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (3.5, 0.999_999_256_9),
        ] {
            assert!((erf(x) - want).abs() < 1e-10, "erf({x}) = {}", erf(x));
            assert!((erf(-x) + want).abs() < 1e-10, "erf(-{x}) = {}", erf(-x));
        }
    }

    #[test]
    fn erf_saturates_and_propagates_nan() {
        assert_eq!(erf(f64::INFINITY), 1.0);
        assert_eq!(erf(f64::NEG_INFINITY), -1.0);
        assert!(erf(f64::NAN).is_nan());
        assert!((erf(3.0) - 0.9999779095030014).abs() < 1e-14);
    }

    /// One place: every `math` op on floats has a value here and an LLVM form in its spec
    /// (or a hand-written conversion: `rsqrt`, `fpowi`, `fma`), and nothing here names an
    /// op the spec lacks.
    #[test]
    fn every_float_op_has_a_value_and_a_lowering() {
        let reg = crate::registry();
        for (name, _) in EVAL {
            let def = reg
                .op(name)
                .unwrap_or_else(|| panic!("{name} is not registered"));
            assert!(def.scalar_eval.is_some(), "{name}");
        }
        for def in reg.ops().filter(|d| d.name.starts_with("math.")) {
            let floats = def.operands.iter().all(|a| a.constraint == "FloatLike");
            if !floats || def.name == "math.fma" {
                continue;
            }
            assert!(def.scalar_eval.is_some(), "{} has no ScalarEval", def.name);
            assert!(
                def.llvm.is_some() || def.name == "math.rsqrt",
                "{} has no LLVM form in its spec",
                def.name
            );
        }
    }
}
