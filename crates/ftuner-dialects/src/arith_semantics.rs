//! One definition of what arith's integer binary ops, float binary ops and float-to-int
//! casts compute, shared by the folders (`arith.rs`) and the interpreter
//! (`ftuner-interp`), so the oracle of the numerical tests and canonicalization cannot
//! disagree (the JIT gets the same from LLVM's instructions, which these follow; the
//! differential test in ftuner-runtime checks all three).
//!
//! Integer operands are read as their low `w` bits (signed or unsigned as the op says);
//! the result is wrapped to `w` bits and returned sign-extended (an `i1` zero-extended: 0
//! or 1). `None` is what MLIR leaves undefined: division or remainder by zero, signed
//! division overflow (`MIN / -1`), a shift by the width or more, a float-to-int cast of
//! NaN, an infinity or a value out of range (poison).

use crate::util::{sext, zext};

/// The value of `arith.<name>(a, b)` on `w`-bit integers, or `None` where undefined or
/// `name` is not an integer binary op.
pub fn int_binary(name: &str, a: i128, b: i128, w: u32) -> Option<i128> {
    // Constants are i128: wider integers cannot be computed exactly here (and a shift by
    // 128 or more overflowed).
    if w > 128 {
        return None;
    }
    let (sa, sb) = (sext(a, w), sext(b, w));
    // Unsigned in u128: at w = 128 a zero-extended i128 is still negative.
    let (ua, ub) = (zext(a, w) as u128, zext(b, w) as u128);
    // `-(1 << 127)` overflows: i128's smallest is i128::MIN.
    let smin = match w {
        0 => 0,
        1..=127 => -(1i128 << (w - 1)),
        _ => i128::MIN,
    };
    // In i1 too: `true` is both the minimum (-1) and -1, so true / true overflows (APInt's
    // sdiv_ov, which MLIR's folder asks, says so).
    let signed_div_ok = sb != 0 && !(sa == smin && sb == -1);
    let r = match name {
        "addi" => sa.wrapping_add(sb),
        "subi" => sa.wrapping_sub(sb),
        "muli" => sa.wrapping_mul(sb),
        "andi" => sa & sb,
        "ori" => sa | sb,
        "xori" => sa ^ sb,
        "maxsi" => sa.max(sb),
        "minsi" => sa.min(sb),
        "maxui" => ua.max(ub) as i128,
        "minui" => ua.min(ub) as i128,
        "divsi" if signed_div_ok => sa / sb,
        "remsi" if signed_div_ok => sa % sb,
        "floordivsi" if signed_div_ok => {
            sa.div_euclid(sb) - i128::from(sb < 0 && sa.rem_euclid(sb) != 0)
        }
        "ceildivsi" if signed_div_ok => {
            let q = sa / sb;
            q + i128::from(sa % sb != 0 && ((sa < 0) == (sb < 0)))
        }
        "divui" if ub != 0 => (ua / ub) as i128,
        "remui" if ub != 0 => (ua % ub) as i128,
        "ceildivui" if ub != 0 => (ua / ub + u128::from(ua % ub != 0)) as i128,
        "shli" if ub < u128::from(w) => (ua << ub) as i128,
        "shrsi" if ub < u128::from(w) => sa >> ub,
        "shrui" if ub < u128::from(w) => (ua >> ub) as i128,
        _ => return None,
    };
    Some(if w == 1 { zext(r, 1) } else { sext(r, w) })
}

/// The integer binary ops [`int_binary`] defines.
pub const INT_BINARY_OPS: &[&str] = &[
    "addi",
    "subi",
    "muli",
    "andi",
    "ori",
    "xori",
    "maxsi",
    "minsi",
    "maxui",
    "minui",
    "divsi",
    "remsi",
    "floordivsi",
    "ceildivsi",
    "divui",
    "remui",
    "ceildivui",
    "shli",
    "shrsi",
    "shrui",
];

/// Whether `name` is one of [`INT_BINARY_OPS`].
pub fn is_int_binary(name: &str) -> bool {
    INT_BINARY_OPS.contains(&name)
}

/// The value of `arith.<name>(a, b)` on floats (computed in f64: the caller rounds to
/// the result type, which for f32 is the correctly rounded result, as f64 has more than
/// twice f32's precision), or `None` if `name` is not a float binary op of arith.
/// `maximumf`/`minimumf` are IEEE 754-2019 maximum/minimum: NaN if either operand is
/// NaN, and -0 < +0. `maxnumf`/`minnumf` return the other operand when one is NaN.
pub fn float_binary(name: &str, a: f64, b: f64) -> Option<f64> {
    Some(match name {
        "addf" => a + b,
        "subf" => a - b,
        "mulf" => a * b,
        "divf" => a / b,
        "remf" => a % b,
        "maximumf" | "minimumf" if a.is_nan() || b.is_nan() => f64::NAN,
        // Equal operands differ at most in the sign of zero: +0 is the larger.
        "maximumf" if a == b => f64::from_bits(a.to_bits() & b.to_bits()),
        "minimumf" if a == b => f64::from_bits(a.to_bits() | b.to_bits()),
        "maximumf" | "maxnumf" => a.max(b),
        "minimumf" | "minnumf" => a.min(b),
        _ => return None,
    })
}

/// The float binary ops [`float_binary`] defines.
pub const FLOAT_BINARY_OPS: &[&str] = &[
    "addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf", "minnumf",
];

/// `arith.fptosi` (`signed`) or `arith.fptoui` of `x` to a `w`-bit integer: `x` rounded
/// toward zero, or `None` (poison) for NaN, an infinity or a value out of range.
pub fn float_to_int(x: f64, w: u32, signed: bool) -> Option<i128> {
    let t = x.trunc();
    let (lo, hi) = if signed {
        (-(2f64.powi(w as i32 - 1)), 2f64.powi(w as i32 - 1))
    } else {
        (0.0, 2f64.powi(w as i32))
    };
    // `hi` is a power of two (exact); `t < hi` also rejects NaN.
    (t >= lo && t < hi).then_some(t as i128)
}

#[cfg(test)]
mod tests {
    use super::{float_binary, float_to_int, int_binary};

    #[test]
    fn maximumf_orders_signed_zeros_and_propagates_nan() {
        let bits = |v: Option<f64>| v.map(f64::to_bits);
        for (a, b) in [(-0.0, 0.0), (0.0, -0.0)] {
            assert_eq!(bits(float_binary("maximumf", a, b)), Some(0f64.to_bits()));
            assert_eq!(
                bits(float_binary("minimumf", a, b)),
                Some((-0f64).to_bits())
            );
        }
        assert!(float_binary("maximumf", f64::NAN, 1.0).unwrap().is_nan());
        assert!(float_binary("minimumf", 1.0, f64::NAN).unwrap().is_nan());
        assert_eq!(float_binary("maxnumf", f64::NAN, 1.0), Some(1.0));
        assert_eq!(float_binary("minnumf", 1.0, f64::NAN), Some(1.0));
    }

    #[test]
    fn float_to_int_is_poison_out_of_range() {
        assert_eq!(float_to_int(-1.5, 32, true), Some(-1));
        assert_eq!(float_to_int(-0.75, 8, false), Some(0));
        assert_eq!(float_to_int(255.5, 8, false), Some(255));
        assert_eq!(float_to_int(256.0, 8, false), None);
        assert_eq!(float_to_int(128.0, 8, true), None);
        assert_eq!(float_to_int(-128.9, 8, true), Some(-128));
        assert_eq!(float_to_int(1.0, 1, true), None);
        assert_eq!(float_to_int(-1.0, 1, true), Some(-1));
        assert_eq!(float_to_int(f64::NAN, 32, true), None);
        assert_eq!(float_to_int(f64::INFINITY, 64, false), None);
        assert_eq!(float_to_int(2f64.powi(63), 64, true), None);
    }

    #[test]
    fn the_cases_the_interpreter_had_wrong() {
        // ceil(7 / -2) = ceil(-3.5) = -3
        assert_eq!(int_binary("ceildivsi", 7, -2, 64), Some(-3));
        // -1 as u64 / 2 = 2^63 - 1
        assert_eq!(int_binary("divui", -1, 2, 64), Some(i64::MAX as i128));
        // wraps
        assert_eq!(
            int_binary("addi", i64::MAX as i128, 1, 64),
            Some(i64::MIN as i128)
        );
        assert_eq!(int_binary("addi", 127, 1, 8), Some(-128));
        // undefined
        assert_eq!(int_binary("divsi", i64::MIN as i128, -1, 64), None);
        assert_eq!(int_binary("remui", 5, 0, 32), None);
        assert_eq!(int_binary("shli", 1, 32, 32), None);
        // i1 is 0 or 1; true / true is -1 / -1, which overflows
        assert_eq!(int_binary("addi", 1, 1, 1), Some(0));
        assert_eq!(int_binary("divsi", 1, 1, 1), None);
        assert_eq!(int_binary("remsi", 1, 1, 1), None);
        assert_eq!(int_binary("divsi", 0, 1, 1), Some(0));
        assert_eq!(int_binary("ori", 1, 0, 1), Some(1));
    }

    #[test]
    fn against_rust_integer_semantics() {
        let vals = [
            0i64,
            1,
            -1,
            2,
            -2,
            3,
            7,
            -7,
            100,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ];
        for &a in &vals {
            for &b in &vals {
                let (x, y) = (a as i128, b as i128);
                let (ua, ub) = (a as u64, b as u64);
                let s = |v: i64| Some(v as i128);
                assert_eq!(int_binary("addi", x, y, 64), s(a.wrapping_add(b)));
                assert_eq!(int_binary("muli", x, y, 64), s(a.wrapping_mul(b)));
                assert_eq!(
                    int_binary("divsi", x, y, 64),
                    a.checked_div(b).map(|v| v as i128)
                );
                assert_eq!(
                    int_binary("remsi", x, y, 64),
                    a.checked_rem(b).map(|v| v as i128)
                );
                assert_eq!(
                    int_binary("divui", x, y, 64),
                    ua.checked_div(ub).map(|v| v as i64 as i128)
                );
                assert_eq!(
                    int_binary("floordivsi", x, y, 64),
                    a.checked_div(b)
                        .map(|q| { (q - i64::from(a % b != 0 && ((a < 0) != (b < 0)))) as i128 })
                );
                let (a32, b32) = (a as i32, b as i32);
                assert_eq!(
                    int_binary("subi", x, y, 32),
                    Some(a32.wrapping_sub(b32) as i128)
                );
                assert_eq!(
                    int_binary("shrui", x, y, 32),
                    (b32 as u32)
                        .lt(&32)
                        .then(|| ((a32 as u32) >> (b32 as u32)) as i32 as i128)
                );
            }
        }
    }
}
