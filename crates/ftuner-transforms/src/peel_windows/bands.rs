//! A depthwise convolution's plane in bands of output rows, each band in the vector form
//! over its own phase planes ([`super::flat_vector`]), when the whole plane's phases do
//! not fit [`MAX_BYTES`].
//!
//! Band `t` of `bh` rows computes output rows `[t*bh, (t+1)*bh)` from the image rows its
//! windows read (`Dim::reads`: the band's rows of the image and the padding above or
//! below them), as a window op of its own on that slice of the image, written into that
//! slice of the plane's output. Consecutive bands that read alike (the same number of
//! image rows and the same padding, `bh * s` image rows apart: the bands between the
//! first and the last, and those too when they read no padding) run as one `scf.for`;
//! the others are written out one by one. A 3x3 stride-1 conv of a 400 x 64 plane,
//! padding 1 all round (103.9 KiB of phases), in four bands of 100 rows:
//!
//! ```mlir
//! %x0 = tensor.extract_slice %x[0, 0, 0, 0] [1, 1, 101, 64] [1, 1, 1, 1]   // band 0's rows
//! %o0 = tensor.extract_slice %out[0, 0, 0, 0] [1, 1, 100, 64] [1, 1, 1, 1]
//! ... the vector form on %x0 (one padding row above) into %o0 ...
//! %u0 = tensor.insert_slice %r0 into %out[0, 0, 0, 0] [1, 1, 100, 64] [1, 1, 1, 1]
//! %u = scf.for %t = %c0 to %c2 step %c1 iter_args(%a = %u0) -> (tensor<1x1x400x64xf32>) {
//!   ... image rows from 99 + 100 * %t (102 of them), output rows from 100 + 100 * %t ...
//! }
//! ... the last band: image rows [299, 400) and one padding row below ...
//! ```
//!
//! MobileNetV2's depthwise convs at 112x112 (stride 1: 32 channels, stride 2: 96) have
//! 51.2-51.7 KiB of phases: whole, they ran slower than the generic flat form and the
//! pieces; in two bands of 26.3-26.7 KiB they take the vector form.

use super::flat_vector::{geometry_of, plane, Geom, MAX_BYTES};
use super::{Dim, Window};
use crate::nchw_consumer::Consumer;
use crate::tensor_build::{extract, for_loop, insert, Off};
use ftuner_dialects::ops;
use ftuner_ir::{OpBuilder, Type, Value};

/// A run of bands that read alike, one after another.
pub(super) struct Band {
    /// The first band's first output row and first image row.
    h0: i64,
    i0: i64,
    /// Bands in the run: each `step` output rows and `step * s` image rows after the last.
    count: i64,
    step: i64,
    /// Each band as a window dim: its output rows, its image rows and its padding.
    dim: Dim,
    geom: Geom,
}

/// The bands of window `w`'s plane: the whole plane as one band when its phases fit
/// [`MAX_BYTES`], else the fewest bands of equal height whose phases do; None when the
/// window has no vector form, or not even single rows fit. `rows`: wide enough planes
/// computed by rows (`geometry_of`).
pub(super) fn bands(w: &Window, rows: bool) -> Option<Vec<Band>> {
    let elem_bytes = w.elem.bit_width()?.div_ceil(8) as i64;
    bands_of(w.dims, (elem_bytes, rows), MAX_BYTES)
}

/// `elem`: the bytes of an element, and whether planes wide enough are computed by rows
/// (`geometry_of`).
fn bands_of([hd, wd]: [Dim; 2], elem: (i64, bool), max: i64) -> Option<Vec<Band>> {
    let fits = |bh: i64| match runs(hd, wd, bh, elem) {
        Some(r) if r.iter().all(|b| b.geom.bytes <= max) => Some(r),
        _ => None,
    };
    // The whole plane as the one band it is (its own dims: the IR it had before bands).
    let whole = geometry_of([hd, wd], elem.0, elem.1)?;
    if whole.bytes <= max {
        return Some(vec![Band {
            h0: 0,
            i0: 0,
            count: 1,
            step: hd.out,
            dim: hd,
            geom: whole,
        }]);
    }
    // The tallest band that fits (a band's phases grow with its rows), then as many bands
    // of equal height as that takes.
    let mut best = fits(1)?;
    let (mut lo, mut hi) = (1, hd.out);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match fits(mid) {
            Some(r) => (lo, best) = (mid, r),
            None => hi = mid,
        }
    }
    let ceil = |a: i64, b: i64| (a + b - 1) / b;
    let even = ceil(hd.out, ceil(hd.out, lo));
    Some(if even < lo {
        fits(even).unwrap_or(best)
    } else {
        best
    })
}

/// The plane's bands of `bh` output rows, grouped into runs; None when a band has no
/// vector form (or reads no image row).
fn runs(hd: Dim, wd: Dim, bh: i64, elem: (i64, bool)) -> Option<Vec<Band>> {
    let mut out: Vec<Band> = vec![];
    let mut a = 0;
    while a < hd.out {
        let e = (a + bh).min(hd.out);
        let (start, end, low, high) = hd.reads(a, e);
        if end <= start {
            return None;
        }
        let dim = Dim {
            size: end - start,
            out: e - a,
            low,
            high,
            ..hd
        };
        match out.last_mut() {
            Some(r)
                if r.dim == dim
                    && a == r.h0 + r.count * r.step
                    && start == r.i0 + r.count * r.step * hd.s =>
            {
                r.count += 1;
            }
            _ => out.push(Band {
                h0: a,
                i0: start,
                count: 1,
                step: bh,
                dim,
                geom: geometry_of([dim, wd], elem.0, elem.1)?,
            }),
        }
        a = e;
    }
    Some(out)
}

/// Depthwise conv plane `x` (`1 x 1 x H x W`, filter plane `f`) in `bands`, from the fill
/// value `init`, then `sink` on its channel, written into `out` (`1 x 1 x OH x OW`): the
/// updated `out`.
pub(super) fn planes(
    b: &mut OpBuilder<'_>,
    w: &Window,
    bands: &[Band],
    (x, f): (Value, Value),
    init: Value,
    sink: Option<(&Consumer, Value)>,
    out: Value,
) -> Result<Value, String> {
    if let [one] = bands {
        if one.count == 1 && one.dim == w.dims[0] {
            return plane(b, w, &one.geom, (x, f), init, sink, out);
        }
    }
    let mut out = out;
    for band in bands {
        let bw = Window {
            dims: [band.dim, w.dims[1]],
            ..w.clone()
        };
        let band_at = |b: &mut OpBuilder<'_>, out, i0, h0| {
            band_plane(b, &bw, band, (x, f), (init, sink), out, [i0, h0])
        };
        if band.count == 1 {
            out = band_at(b, out, Off::Const(band.i0), Off::Const(band.h0))?;
            continue;
        }
        let resume = b.at;
        let (c0, n) = (b.index(0), b.index(band.count));
        let (lp, t, acc) = for_loop(b, c0, n, out);
        let row = |b: &mut OpBuilder<'_>, first: i64, step: i64| {
            let k = b.index(step);
            let tk = b.value(ops::arith::MuliOp::NAME, vec![t, k], Type::index(), &[]);
            Off::At(super::flat_vector::add_const(b, tk, first))
        };
        let i0 = row(b, band.i0, band.step * w.dims[0].s);
        let h0 = row(b, band.h0, band.step);
        let r = band_at(b, acc, i0, h0)?;
        b.create(ops::scf::YieldOp::NAME, vec![r], vec![], &[]);
        b.at = resume;
        out = b.ir.result(lp, 0);
    }
    Ok(out)
}

/// One band (window `bw`) on the image rows from `i0`, into the output rows from `h0`.
fn band_plane(
    b: &mut OpBuilder<'_>,
    bw: &Window,
    band: &Band,
    (x, f): (Value, Value),
    (init, sink): (Value, Option<(&Consumer, Value)>),
    out: Value,
    [i0, h0]: [Off; 2],
) -> Result<Value, String> {
    let [hd, wd] = bw.dims;
    let zero = Off::Const(0);
    let xb = extract(b, x, &[zero, zero, i0, zero], &[1, 1, hd.size, wd.size]);
    let at = [zero, zero, h0, zero];
    let ob = extract(b, out, &at, &[1, 1, hd.out, wd.out]);
    let r = plane(b, bw, &band.geom, (xb, f), init, sink, ob)?;
    Ok(insert(b, r, out, &at, &[1, 1, hd.out, wd.out]))
}

#[cfg(test)]
mod tests {
    use super::super::Dim;
    use super::bands_of;

    /// The bands cover every output row once, and each band's window reads, for each of
    /// its rows, the image rows (or padding) the whole window reads for that row.
    #[test]
    fn bands_read_what_the_window_reads() {
        let wd = Dim {
            size: 8,
            out: 8,
            k: 3,
            s: 1,
            d: 1,
            low: 1,
            high: 1,
        };
        let mut banded = 0;
        for hd in Dim::all([1..=20, 1..=3, 1..=3, 1..=2, 0..=2, 0..=2]) {
            for max in [64, 400, 4000] {
                let Some(bands) = bands_of([hd, wd], (4, true), max) else {
                    continue;
                };
                banded += usize::from(bands.len() > 1 || bands[0].count > 1);
                let mut next = 0;
                for band in &bands {
                    assert!(band.geom.bytes <= max, "{hd:?}: {} bytes", band.geom.bytes);
                    for t in 0..band.count {
                        let (h0, i0) = (band.h0 + t * band.step, band.i0 + t * band.step * hd.s);
                        assert_eq!(h0, next, "{hd:?} max {max}: rows not covered in order");
                        for r in 0..band.dim.out {
                            for k in 0..hd.k {
                                // Image row of tap k at output row h0 + r: in the band, in
                                // the whole window (None: padding).
                                let image = |d: &Dim, o: i64| {
                                    let p = o * d.s + k * d.d - d.low;
                                    (0..d.size).contains(&p).then_some(p)
                                };
                                let got = image(&band.dim, r).map(|p| p + i0);
                                assert_eq!(got, image(&hd, h0 + r), "{hd:?} max {max}");
                            }
                        }
                        next += band.dim.out;
                    }
                }
                assert_eq!(next, hd.out, "{hd:?} max {max}");
            }
        }
        assert!(banded > 100, "only {banded} banded planes");
    }
}
