//! Floating-point literals: conversion between values and the bits of each float type,
//! and printing exactly as MLIR's `printFloatValue` (which uses LLVM's
//! `APFloat::toString`): `0.000000e+00`, `1.41421354`, `9.9999999999999998E-13`,
//! `0xFF800000`.

use crate::types::{FloatKind, Type};
use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};

/// (precision incl. the implicit bit, exponent bits) of the IEEE-like formats we print.
fn layout(kind: FloatKind) -> Option<(u32, u32)> {
    Some(match kind {
        FloatKind::F16 => (11, 5),
        FloatKind::BF16 => (8, 8),
        FloatKind::F32 => (24, 8),
        FloatKind::F64 => (53, 11),
        FloatKind::TF32 => (11, 8),
        _ => return None,
    })
}

/// Round an f64 to `ty` and return its bit pattern.
pub fn f64_to_bits(v: f64, ty: Type) -> u128 {
    match ty.float_kind() {
        Some(FloatKind::F16) => half::f16::from_f64(v).to_bits() as u128,
        Some(FloatKind::BF16) => half::bf16::from_f64(v).to_bits() as u128,
        Some(FloatKind::F32) => (v as f32).to_bits() as u128,
        _ => v.to_bits() as u128,
    }
}

/// The value of `bits` of a float type, widened to f64.
pub fn bits_to_f64(bits: u128, kind: FloatKind) -> f64 {
    match kind {
        FloatKind::F16 => half::f16::from_bits(bits as u16).to_f64(),
        FloatKind::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
        FloatKind::F32 => f32::from_bits(bits as u32) as f64,
        _ => f64::from_bits(bits as u64),
    }
}

/// Parse a decimal literal to the nearest value of `kind`; `None` if not representable
/// by our conversions (f80, f128, f8 types).
pub fn parse_decimal(text: &str, kind: FloatKind) -> Option<u128> {
    Some(match kind {
        FloatKind::F32 => text.parse::<f32>().ok()?.to_bits() as u128,
        FloatKind::F64 => text.parse::<f64>().ok()?.to_bits() as u128,
        FloatKind::F16 => half::f16::from_f64(text.parse::<f64>().ok()?).to_bits() as u128,
        FloatKind::BF16 => half::bf16::from_f64(text.parse::<f64>().ok()?).to_bits() as u128,
        _ => return None,
    })
}

/// Print a float the way MLIR does.
pub fn format_float(bits: u128, kind: FloatKind) -> String {
    if let Some((prec, ebits)) = layout(kind) {
        let mant_bits = prec - 1;
        let sign = (bits >> (mant_bits + ebits)) & 1 == 1;
        let exp_field = ((bits >> mant_bits) & ((1u128 << ebits) - 1)) as i64;
        let mant = bits & ((1u128 << mant_bits) - 1);
        let max_exp = (1i64 << ebits) - 1;
        if exp_field != max_exp {
            let bias = (1i64 << (ebits - 1)) - 1;
            let s = if exp_field == 0 && mant == 0 {
                // Zero.
                let mut s = String::new();
                if sign {
                    s.push('-');
                }
                s.push_str("0.000000e+00");
                s
            } else {
                let (sig, e) = if exp_field == 0 {
                    (mant, 1 - bias - mant_bits as i64)
                } else {
                    (
                        mant | (1u128 << mant_bits),
                        exp_field - bias - mant_bits as i64,
                    )
                };
                to_string_impl(sign, e, sig, prec, 6, 0, false)
            };
            if parse_decimal(&s, kind) == Some(bits) {
                return s;
            }
            if !(exp_field == 0 && mant == 0) {
                let (sig, e) = if exp_field == 0 {
                    (mant, 1 - bias - mant_bits as i64)
                } else {
                    (
                        mant | (1u128 << mant_bits),
                        exp_field - bias - mant_bits as i64,
                    )
                };
                let s = to_string_impl(sign, e, sig, prec, 0, 3, true);
                if s.contains('.') {
                    return s;
                }
            }
        }
    }
    format!("0x{bits:X}")
}

/// LLVM's `toStringImpl` from APFloat.cpp, on arbitrary-precision integers.
fn to_string_impl(
    neg: bool,
    exp: i64,
    significand: u128,
    sig_width: u32,
    mut format_precision: u32,
    format_max_padding: u32,
    truncate_zero: bool,
) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if format_precision == 0 {
        format_precision = 2 + sig_width * 59 / 196;
    }
    let (sig, exp) = decimal_significand(exp, significand, format_precision);
    let (mut buffer, mut exp) = digit_buffer(sig, exp);
    round_digits(&mut buffer, &mut exp, format_precision);
    let nd = buffer.len();
    let scientific = if format_max_padding == 0 {
        true
    } else if exp >= 0 {
        exp as u64 > format_max_padding as u64 || nd as u64 + exp as u64 > format_precision as u64
    } else {
        let msd = exp + nd as i64 - 1;
        if msd >= 0 {
            false
        } else {
            (-msd) as u64 > format_max_padding as u64
        }
    };
    if scientific {
        write_scientific(&mut out, &buffer, exp, format_precision, truncate_zero);
    } else {
        write_plain(&mut out, &buffer, exp);
    }
    out
}

/// The value `significand * 2^exp` as a decimal integer times `10^exp` (the returned
/// exponent), cut to about `format_precision` digits (`AdjustToPrecision` on the integer).
fn decimal_significand(mut exp: i64, significand: u128, format_precision: u32) -> (BigUint, i64) {
    let tz = significand.trailing_zeros();
    exp += tz as i64;
    let mut sig = BigUint::from(significand >> tz);
    if exp > 0 {
        sig <<= exp as usize;
        exp = 0;
    } else if exp < 0 {
        let texp = (-exp) as u32;
        sig *= BigUint::from(5u32).pow(texp);
    }
    let bits = sig.bits() as u32;
    let bits_required = (format_precision * 196).div_ceil(59);
    if bits > bits_required {
        let tens = (bits - bits_required) * 59 / 196;
        if tens > 0 {
            exp += tens as i64;
            sig /= BigUint::from(10u32).pow(tens);
        }
    }
    (sig, exp)
}

/// Digits, least significant first, trailing zeros dropped (each adds one to the exponent).
fn digit_buffer(mut sig: BigUint, mut exp: i64) -> (Vec<u8>, i64) {
    let mut buffer: Vec<u8> = Vec::new();
    let ten = BigUint::from(10u32);
    let mut in_trail = true;
    while !sig.is_zero() {
        let d = (&sig % &ten).to_u32().unwrap_or(0) as u8;
        sig /= &ten;
        if in_trail && d == 0 {
            exp += 1;
        } else {
            buffer.push(b'0' + d);
            in_trail = false;
        }
    }
    if buffer.is_empty() {
        buffer.push(b'0');
    }
    (buffer, exp)
}

/// `AdjustToPrecision` on the digit buffer: round to `format_precision` digits.
fn round_digits(buffer: &mut Vec<u8>, exp: &mut i64, format_precision: u32) {
    let n = buffer.len();
    if n > format_precision as usize {
        let mut first = n - format_precision as usize;
        if buffer[first - 1] < b'5' {
            while first < n && buffer[first] == b'0' {
                first += 1;
            }
            *exp += first as i64;
            buffer.drain(0..first);
        } else {
            let mut i = first;
            while i != n {
                if buffer[i] == b'9' {
                    first += 1;
                    i += 1;
                } else {
                    buffer[i] += 1;
                    break;
                }
            }
            if first == n {
                *exp += first as i64;
                buffer.clear();
                buffer.push(b'1');
            } else {
                *exp += first as i64;
                buffer.drain(0..first);
            }
        }
    }
}

/// `d.ddddE+XX` (or `e+XX` padded to the precision when not truncating zeros).
fn write_scientific(
    out: &mut String,
    buffer: &[u8],
    mut exp: i64,
    format_precision: u32,
    truncate_zero: bool,
) {
    let nd = buffer.len();
    exp += nd as i64 - 1;
    out.push(buffer[nd - 1] as char);
    out.push('.');
    if nd == 1 && truncate_zero {
        out.push('0');
    } else {
        for i in 1..nd {
            out.push(buffer[nd - 1 - i] as char);
        }
    }
    if !truncate_zero && format_precision as usize > nd - 1 {
        for _ in 0..(format_precision as usize - nd + 1) {
            out.push('0');
        }
    }
    out.push(if truncate_zero { 'E' } else { 'e' });
    out.push(if exp >= 0 { '+' } else { '-' });
    let e = exp.unsigned_abs();
    let digits = e.to_string();
    if !truncate_zero && digits.len() < 2 {
        out.push('0');
    }
    out.push_str(&digits);
}

/// Positional notation: digits then zeros, or digits with the point inside or before them.
fn write_plain(out: &mut String, buffer: &[u8], exp: i64) {
    let nd = buffer.len();
    if exp >= 0 {
        for i in 0..nd {
            out.push(buffer[nd - 1 - i] as char);
        }
        for _ in 0..exp {
            out.push('0');
        }
        return;
    }
    let whole = exp + nd as i64;
    let mut i = 0usize;
    if whole > 0 {
        while i < whole as usize {
            out.push(buffer[nd - i - 1] as char);
            i += 1;
        }
        out.push('.');
    } else {
        out.push_str("0.");
        for _ in 1..(1 + (-whole) as usize) {
            out.push('0');
        }
    }
    while i < nd {
        out.push(buffer[nd - i - 1] as char);
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn f32s(v: f32) -> String {
        format_float(v.to_bits() as u128, FloatKind::F32)
    }
    fn f64s(v: f64) -> String {
        format_float(v.to_bits() as u128, FloatKind::F64)
    }
    #[test]
    fn mlir_float_spelling() {
        assert_eq!(f32s(0.0), "0.000000e+00");
        assert_eq!(f32s(-0.0), "-0.000000e+00");
        assert_eq!(f32s(0.125), "1.250000e-01");
        assert_eq!(f32s(768.0), "7.680000e+02");
        assert_eq!(f32s(f32::from_bits(0x3FB504F3)), "1.41421354");
        assert_eq!(f64s(1e-12), "9.9999999999999998E-13");
        assert_eq!(f32s(f32::NEG_INFINITY), "0xFF800000");
        assert_eq!(f64s(1e-5), "1.000000e-05");
        assert_eq!(f32s(0.1), "1.000000e-01");
        assert_eq!(f64s(0.1), "1.000000e-01");
        assert_eq!(f32s(f32::from_bits(0x40490FDB)), "3.14159274");
    }
}
