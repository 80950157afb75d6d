//! The interpreter's fast path for multiply-accumulate bodies (`out = out + a * b` on f32
//! or f64: matmuls, batch matmuls, convolutions): no body program per point, offsets
//! stepped instead of recomputed, and the innermost loop over a dimension the output is
//! contiguous in (`C[i, j] += A[i, k] * B[k, j]` walks i, k, j). Each output element
//! still accumulates its terms in the order the general path visits them (the dims the
//! output does not index keep their relative order) and every operation rounds as the
//! body's ops do, so results are identical to the general path's, bit for bit.

use crate::body::{Program, ScalarOp, Step};
use crate::word::Word;
use ftuner_ir::{FloatKind, Type};

/// How one operand is read: offset at the origin and step per loop dim.
pub(super) struct Linear<'a> {
    pub base: i64,
    pub coeff: &'a [i64],
}

/// Whether `prog` (of a structured op with two inputs and one output, block arguments in
/// slots 0, 1, 2) is `yield out + in0 * in1` in one float type, and whether it rounds to
/// f32 (`true`; not in [`crate::wide`] mode).
pub(super) fn mac_body(prog: &Program, nin: usize, out_ty: &[Type]) -> Option<bool> {
    let [Step::Op {
        op: ScalarOp::Bin(mul),
        args: margs,
        dst: m,
        ty: mty,
    }, Step::Op {
        op: ScalarOp::Bin(add),
        args: aargs,
        dst: r,
        ty: aty,
    }] = prog.steps.as_slice()
    else {
        return None;
    };
    let is = |args: &[usize], x: usize, y: usize| args == [x, y] || args == [y, x];
    let ok = nin == 2
        && out_ty.len() == 1
        && prog.inits.is_empty()
        && *mul == "mulf"
        && *add == "addf"
        && is(margs, 0, 1)
        && is(aargs, 2, *m)
        && prog.yields == [*r]
        && mty == aty
        && out_ty[0] == *mty;
    match (ok, mty.float_kind()) {
        (true, Some(FloatKind::F32)) => Some(!crate::tensor::is_wide()),
        (true, Some(FloatKind::F64)) => Some(false),
        _ => None,
    }
}

/// The loop order: every dim as given, except one the output steps through (with step 1
/// if it has one) moved innermost. `out_dims`: whether the output is indexed by each dim
/// (only such a dim moves, so the others keep their relative order).
fn order(sizes: &[i64], out: &[i64], out_dims: &[bool]) -> Vec<usize> {
    let nd = sizes.len();
    let inner = (0..nd)
        .filter(|d| out_dims[*d] && sizes[*d] > 1)
        .max_by_key(|d| (out[*d] == 1, sizes[*d]));
    let mut v: Vec<usize> = (0..nd).filter(|d| Some(*d) != inner).collect();
    v.extend(inner);
    v
}

/// `c[.] = round(c[.] + round(a[.] * b[.]))` over the whole loop space. The caller has
/// checked every access is in bounds and that the output map is a projected permutation
/// (`out_dims`: the dims it indexes).
pub(super) fn run(
    sizes: &[i64],
    acc: [Linear; 3],
    out_dims: &[bool],
    (a, b, c): (&[Word], &[Word], &mut [Word]),
    f32: bool,
) {
    let nd = sizes.len();
    if nd == 0 || sizes.iter().any(|s| *s <= 0) {
        if nd == 0 {
            let (x, y, o) = (acc[0].base, acc[1].base, acc[2].base);
            c[o as usize] = mac(c[o as usize], a[x as usize], b[y as usize], f32);
        }
        return;
    }
    let ord = order(sizes, acc[2].coeff, out_dims);
    let inner = ord[nd - 1];
    let n = sizes[inner] as usize;
    let step = |k: usize| acc[k].coeff[inner];
    let (sa, sb, sc) = (step(0), step(1), step(2));
    let mut off = [acc[0].base, acc[1].base, acc[2].base];
    let outer = &ord[..nd - 1];
    let mut point = vec![0i64; outer.len()];
    loop {
        let (oa, ob, oc) = (off[0] as usize, off[1] as usize, off[2] as usize);
        if sc == 1 && sb == 1 && sa == 0 {
            let x = a[oa];
            for (cv, bv) in c[oc..oc + n].iter_mut().zip(&b[ob..ob + n]) {
                *cv = mac(*cv, x, *bv, f32);
            }
        } else {
            for t in 0..n as i64 {
                let (ia, ib, ic) = (oa as i64 + t * sa, ob as i64 + t * sb, oc as i64 + t * sc);
                let i = ic as usize;
                c[i] = mac(c[i], a[ia as usize], b[ib as usize], f32);
            }
        }
        // The next point of the outer dims (an odometer, last dim fastest).
        let mut k = outer.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            let d = outer[k];
            point[k] += 1;
            for (o, l) in off.iter_mut().zip(&acc) {
                *o += l.coeff[d];
            }
            if point[k] < sizes[d] {
                break;
            }
            for (o, l) in off.iter_mut().zip(&acc) {
                *o -= l.coeff[d] * sizes[d];
            }
            point[k] = 0;
        }
    }
}

#[inline(always)]
fn mac(c: Word, a: Word, b: Word, f32: bool) -> Word {
    let (c, a, b) = (c.f(), a.f(), b.f());
    Word::float(if f32 {
        (c + (a * b) as f32 as f64) as f32 as f64
    } else {
        c + a * b
    })
}
