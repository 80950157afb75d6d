//! The oracle's verdict: whether a result of compiled code equals the interpreter's within
//! the rounding error single precision allows (issue 25, "a trustworthy oracle").
//!
//! The interpreter runs the program twice: as its types say (f32 rounded after every
//! operation: `single`) and [`wide`](crate::wide) (the same program in f64: `wide`, the
//! value single-precision code approximates). Their difference `e_i = |single_i - wide_i|`
//! is the error the reference's own roundings made at element `i` — large where the
//! program amplifies rounding (cancellation near zero, a division by a small variance, a
//! long reduction), small where it does not. Compiled code computes the same program in
//! the same precision, in another order (blocked sums, vector lanes) and with other
//! elementary functions (approximate-math's polynomials), so its error is of the same
//! kind but not the same sample. A result is accepted when, at every element,
//!
//! ```text
//! |got_i - wide_i| <= K * (e_i + rho * s_i)      s_i = |wide_i| + mean_j |wide_j|
//! rho = max(eps * sqrt(R), max_j e_j / s_j)
//! ```
//!
//! with K = [`K`], eps the machine epsilon of the element type and R the longest
//! reduction possible (the largest argument extent): `rho` is the worst relative error the
//! reference shows anywhere in this output (never below a sum of R terms' typical
//! rounding), so an element where the reference happened to round exactly is held to
//! its neighbours' error, not to zero. The mean magnitude in `s_i` keeps elements near
//! zero, which cancellation makes, to the output's scale. NaN must meet NaN; where the
//! wide value overflows single precision anything agreeing with `single` passes.
//! Integer outputs (eps = 0) must equal the reference unless the reference itself differs
//! between the two runs there. Elements the reference computed from contents no op wrote
//! ([`crate::UNDEFINED`]: a `tensor.empty` read, an allocation read before it is written)
//! are not compared: compiled code reads whatever memory held there.

use crate::tensor::{is_undefined, RtVal, Tensor};
#[cfg(test)]
use crate::word::Word;
use ftuner_ir::{FloatKind, Type};

/// How many times the reference's own error a result may be off: compiled code sums in
/// another order and calls other elementary functions (a few ulp each).
pub const K: f64 = 8.0;

/// Machine epsilon of `ty` (0 for integers: they must match).
fn eps(ty: Type) -> f64 {
    match ty.float_kind() {
        Some(FloatKind::F64) => f64::EPSILON,
        Some(FloatKind::F32) => f32::EPSILON as f64,
        Some(FloatKind::F16) => 2f64.powi(-10),
        Some(FloatKind::BF16) => 2f64.powi(-7),
        Some(_) => f32::EPSILON as f64,
        None => 0.0,
    }
}

/// Compare result `got` with the interpreter's `single` and `wide` references (see the
/// module doc); `r` bounds the length of any reduction; `ty` is the result's type (what a
/// scalar holds; a tensor says its element type). `Err` names the worst element.
pub fn compare(
    got: &RtVal,
    single: &RtVal,
    wide: &RtVal,
    r: usize,
    ty: Type,
) -> Result<(), String> {
    let as_tensor = |v: &RtVal| -> Option<Tensor> {
        match v {
            RtVal::Tensor(t) => Some((**t).clone()),
            RtVal::Scalar(s) => Some(Tensor::new(vec![], ty.element_type(), vec![*s])),
            _ => None,
        }
    };
    let (Some(g), Some(s), Some(w)) = (as_tensor(got), as_tensor(single), as_tensor(wide)) else {
        return Err("a result that is not a tensor or a scalar".to_string());
    };
    if g.shape != s.shape || s.shape != w.shape {
        return Err(format!(
            "shape {} vs reference {}",
            fmt_shape(&g.shape),
            fmt_shape(&s.shape)
        ));
    }
    let elem = g.elem;
    // Integers are compared as words (exactly, past 2^53 too) where both references agree.
    let exact = !elem.is_float();
    let (gv, sv, wv) = (g.to_f64(), s.to_f64(), w.to_f64());
    let finite = |v: f64| v.is_finite();
    let n = wv.len().max(1) as f64;
    let mean = wv
        .iter()
        .filter(|v| finite(**v))
        .map(|v| v.abs())
        .sum::<f64>()
        / n;
    let err: Vec<f64> = sv.iter().zip(&wv).map(|(a, b)| (a - b).abs()).collect();
    let scale = |x: f64| x.abs() + mean;
    let mut rho = eps(elem) * (r.max(1) as f64).sqrt();
    for (e, x) in err.iter().zip(&wv) {
        if e.is_finite() && scale(*x) > 0.0 {
            rho = rho.max(e / scale(*x));
        }
    }
    let mut worst: Option<(usize, f64, f64)> = None;
    for (i, ((x, y), e)) in gv.iter().zip(&wv).zip(&err).enumerate() {
        let (bad, tol) = if exact && s.data[i] == w.data[i] {
            // Both references agree on the integer: the result must be it.
            (
                if g.data[i] == w.data[i] {
                    0.0
                } else {
                    f64::INFINITY
                },
                0.0,
            )
        } else if !exact && (is_undefined(*y) || is_undefined(sv[i])) {
            // The reference read contents no op wrote: nothing to hold the result to.
            (0.0, f64::INFINITY)
        } else if x.is_nan() || y.is_nan() {
            // NaN meets NaN (or the single reference's NaN where wide is a number).
            let ok = x.is_nan() == (y.is_nan() || sv[i].is_nan());
            (if ok { 0.0 } else { f64::INFINITY }, 0.0)
        } else if !e.is_finite() {
            // The wide value is beyond single precision: agreeing with single passes.
            (
                if *x == sv[i] || (x - y).abs() <= K * rho * scale(*y) {
                    0.0
                } else {
                    f64::INFINITY
                },
                f64::INFINITY,
            )
        } else {
            let tol = K * (e + rho * scale(*y));
            let d = (x - y).abs();
            (
                if d <= tol {
                    0.0
                } else if tol > 0.0 {
                    d / tol
                } else {
                    f64::INFINITY
                },
                tol,
            )
        };
        if bad > 0.0 && worst.is_none_or(|(_, b, _)| bad > b) {
            worst = Some((i, bad, tol));
        }
    }
    let Some((i, _, tol)) = worst else {
        return Ok(());
    };
    let idx: Vec<String> = if g.shape.is_empty() {
        vec![]
    } else {
        let st = g.strides();
        st.iter()
            .zip(&g.shape)
            .map(|(s, d)| ((i / s) % d.max(&1)).to_string())
            .collect()
    };
    let show = |t: &Tensor| {
        if exact {
            t.data[i].i().to_string()
        } else {
            t.data[i].f().to_string()
        }
    };
    Err(format!(
        "worst element [{}]: {} vs reference {} (f64 reference {}; tolerance {:.2e}: {K} x (the reference's own error {:.2e} + {:.2e} relative))",
        idx.join(", "),
        show(&g),
        show(&s),
        show(&w),
        tol,
        err[i],
        rho
    ))
}

fn fmt_shape(s: &[usize]) -> String {
    s.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    fn t(data: Vec<f64>) -> RtVal {
        RtVal::Tensor(Rc::new(Tensor::from_f64(vec![2, 2], Type::f32(), data)))
    }
    fn compare(got: &RtVal, single: &RtVal, wide: &RtVal, r: usize) -> Result<(), String> {
        super::compare(got, single, wide, r, Type::f32())
    }

    #[test]
    fn the_tolerance_follows_the_references_own_error() {
        let wide = t(vec![1.0, 2.0, 3.0, 4.0]);
        // The reference rounds exactly: a result one f32 ulp off passes (rho >= eps).
        let single = wide.clone();
        assert!(compare(&t(vec![1.0, 2.0, 3.0, 4.0 + 4.8e-7]), &single, &wide, 1).is_ok());
        // Twenty ulp at R = 1 do not (the bound: 8 x eps x (4 + the mean 2.5)).
        let e = compare(&t(vec![1.0, 2.0, 3.0, 4.0 + 1e-5]), &single, &wide, 1).unwrap_err();
        assert!(e.starts_with("worst element [1, 1]"), "{e}");
        // The same result passes when the reference itself is that far off somewhere.
        let noisy = t(vec![1.0, 2.0 + 2e-6, 3.0, 4.0]);
        assert!(compare(&t(vec![1.0, 2.0, 3.0, 4.0 + 1e-5]), &noisy, &wide, 1).is_ok());
        // A wrong element is caught however noisy the rest.
        let e = compare(&t(vec![1.0, 2.5, 3.0, 4.0]), &noisy, &wide, 1).unwrap_err();
        assert!(
            e.starts_with("worst element [0, 1]: 2.5 vs reference 2.0000019"),
            "{e}"
        );
    }

    #[test]
    fn small_outputs_are_held_to_their_own_scale() {
        // Outputs of 1e-6: a result off by 1e-7 is 10% wrong (an absolute floor of 1e-5
        // accepted it).
        let wide = t(vec![1e-6, 2e-6, 3e-6, 4e-6]);
        let e = compare(&t(vec![1e-6, 2.1e-6, 3e-6, 4e-6]), &wide, &wide, 64).unwrap_err();
        assert!(e.contains("[0, 1]"), "{e}");
    }

    #[test]
    fn nan_meets_nan_and_shapes_must_match() {
        let wide = t(vec![1.0, f64::NAN, 3.0, 4.0]);
        assert!(compare(&t(vec![1.0, f64::NAN, 3.0, 4.0]), &wide, &wide, 1).is_ok());
        let e = compare(&t(vec![1.0, 2.0, 3.0, 4.0]), &wide, &wide, 1).unwrap_err();
        assert!(e.contains("[0, 1]"), "{e}");
        let e = compare(&t(vec![f64::NAN, f64::NAN, 3.0, 4.0]), &wide, &wide, 1).unwrap_err();
        assert!(e.contains("[0, 0]"), "{e}");
        let other = RtVal::Tensor(Rc::new(Tensor::zeros(vec![4], Type::f32())));
        assert!(compare(&other, &wide, &wide, 1)
            .unwrap_err()
            .contains("shape 4 vs reference 2x2"));
    }

    #[test]
    fn undefined_elements_are_not_compared() {
        let u = std::hint::black_box(crate::UNDEFINED);
        let want = t(vec![1.0, u, -u + std::hint::black_box(1.0), 4.0]);
        assert!(compare(&t(vec![1.0, 7.0, -3.0, 4.0]), &want, &want, 1).is_ok());
        assert!(compare(&t(vec![1.5, 7.0, -3.0, 4.0]), &want, &want, 1).is_err());
        // Through f32 rounding, the mark stays.
        assert!(is_undefined(u as f32 as f64));
        assert!(!is_undefined(f64::NAN));
    }

    #[test]
    fn integers_must_match() {
        let i = |d: Vec<i64>| RtVal::Tensor(Rc::new(Tensor::from_i64(vec![2], Type::i32(), d)));
        let want = i(vec![3, 7]);
        assert!(compare(&i(vec![3, 7]), &want, &want, 100).is_ok());
        assert!(compare(&i(vec![3, 8]), &want, &want, 100).is_err());
        // Exactly, past 2^53 (the f64 numbers of these two are equal).
        let big = |d: Vec<i64>| RtVal::Tensor(Rc::new(Tensor::from_i64(vec![2], Type::i64(), d)));
        let want = big(vec![i64::MAX, 1 << 53]);
        assert!(compare(&big(vec![i64::MAX, 1 << 53]), &want, &want, 1).is_ok());
        let e = compare(&big(vec![i64::MAX - 1, 1 << 53]), &want, &want, 1).unwrap_err();
        assert!(
            e.contains("9223372036854775806 vs reference 9223372036854775807"),
            "{e}"
        );
        // A scalar result is read as its type says.
        let (a, b) = (RtVal::Scalar(Word::int(-1)), RtVal::Scalar(Word::int(-2)));
        assert!(super::compare(&a, &a, &a, 1, Type::i64()).is_ok());
        assert!(super::compare(&b, &a, &a, 1, Type::i64()).is_err());
    }
}
