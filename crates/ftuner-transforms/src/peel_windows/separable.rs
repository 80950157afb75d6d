//! A max pooling's plane in two passes of vectors per output row (option `separable`).
//!
//! The maximum of a window is the maximum over its columns of the maximum over its rows,
//! in any order (`arith.maximumf` is commutative and associative, NaN and signed zeros
//! included). So for output row `h` the `KH` image rows its windows read are reduced
//! first, once for the whole padded width, into a row buffer
//!
//! ```text
//! v[c] = max_r xpad[h*sh + r*dh][c]          c < len (the padded width, and a little more)
//! out[h][w] = max(init, max_s v[w*sw + s*dw])
//! ```
//!
//! both in vectors of 16 lanes (then 8, 4, 2, 1 for what is left of a row): the first
//! reads `KH` contiguous image rows, the second reads the row buffer at each tap's offset,
//! contiguously at a column stride of 1, and at a stride of 2 as two reads and a
//! `vector.shuffle` of their even lanes. A 3x3 window costs `3 + 3` maxima per output
//! rather than 9, and every read is a vector: ResNet-50's stride-2 max pool ran as pieces,
//! a scalar interior and strips.
//!
//! ```mlir
//! %v0 = tensor.empty() : tensor<115xf32>                      // one image row, padded
//! %v1 = vector.transfer_write %pad16, %v0[%c0]                // the padding columns
//! %v2 = scf.for %c = %c0 to %c112 step %c16 iter_args(%v = %v1) {
//!   %a = vector.transfer_read %x[%c0, %c0, %ih0, %c] ...       // the window's rows
//!   %b = vector.transfer_read %x[%c0, %c0, %ih1, %c] ...
//!   %m = arith.maximumf %a, %b : vector<16xf32>
//!   ...
//!   vector.transfer_write %m, %v[%c + 1]
//! }
//! %o1 = scf.for %w = %c0 to %c48 step %c16 iter_args(%o = %o0) {
//!   %lo = vector.transfer_read %v2[2 * %w + s] ...              // tap s, stride 2
//!   %hi = vector.transfer_read %v2[2 * %w + s + 16] ...
//!   %t = vector.shuffle %lo, %hi [0, 2, ..., 30]
//!   %acc = arith.maximumf %init16, %t ...
//!   vector.transfer_write %acc, %o[%c0, %c0, %h, %w]
//! }
//! ```
//!
//! Output rows whose windows read padding rows (the first and last, typically) are
//! written one by one with their own rows (the padding value joins the maximum when a
//! window row is padding); the others run in a loop. The plane's consumer (lanewise
//! `arith`, inputs read per channel) is applied to each output vector before its store.

use super::flat::LANES;
use super::flat_vector::{
    add_const, channel_scalars, consume, lanewise_sink, pad_scalar, read, row_blocks, splat,
    splat_all, write,
};
use super::{Dim, Window};
use crate::nchw_consumer::Consumer;
use crate::tensor_build::for_loop_step;
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, Ir, OpBuilder, OpId, Type, Value};

/// The largest window dim taken: the reads of a block are unrolled per window row and
/// per window column.
const MAX_K: i64 = 16;

/// The most output rows written one by one (their windows read padding rows).
const MAX_BORDER_ROWS: usize = 8;

/// The most elements of a row buffer (a row of the padded image).
const MAX_LEN: i64 = 1 << 20;

/// Whether the separable form applies to `op` with its consumer `sink`: a max pooling
/// of f32 (its image is f32 too: the pass's match requires one element type), its
/// consumer, if any, lanewise.
pub(super) fn applies(ir: &Ir, op: OpId, w: &Window, sink: Option<&Consumer>) -> bool {
    ir.name(op) == ops::linalg::PoolingNchwMaxOp::NAME
        && w.elem == Type::f32()
        && sink.is_none_or(|s| lanewise_sink(ir, s))
}

/// An output row written on its own: its index, the image rows its windows read (in the
/// window's order, padding rows left out) and whether some window row is padding.
#[derive(Debug)]
struct EdgeRow {
    h: i64,
    rows: Vec<i64>,
    padded: bool,
}

/// How a max pooling's plane is computed in two passes.
pub(super) struct Sep {
    /// Length of the row buffer: the padded width, and what the last block's reads reach.
    len: i64,
    /// Output rows whose windows read only image rows: `[lo, hi)`, in a loop.
    interior: (i64, i64),
    /// The other output rows, each on its own.
    edges: Vec<EdgeRow>,
    dims: [Dim; 2],
}

/// The separable geometry of `w`: a column stride of 1 or 2, window dims up to
/// [`MAX_K`], at most [`MAX_BORDER_ROWS`] output rows outside the interior.
pub(super) fn geometry(w: &Window) -> Option<Sep> {
    geometry_of(w.dims)
}

/// Where tap `s` of the output block `[w0, w0 + lanes)` reads the row buffer: its first
/// element and how many it reads (twice the lanes at a stride of 2, keeping the even ones).
fn tap_read(wd: &Dim, w0: i64, lanes: i64, s: i64) -> (i64, i64) {
    let start = w0 * wd.s + s * wd.d;
    let span = if wd.s == 2 && lanes > 1 {
        2 * lanes
    } else {
        lanes
    };
    (start, span)
}

fn geometry_of([hd, wd]: [Dim; 2]) -> Option<Sep> {
    if !(1..=2).contains(&wd.s)
        || [hd.s, hd.d, wd.d, hd.k, wd.k].iter().any(|v| *v < 1)
        || hd.k > MAX_K
        || wd.k > MAX_K
        || hd.out < 1
        || wd.out < 1
    {
        return None;
    }
    let (lo, hi) = hd.interior();
    if lo >= hi {
        return None;
    }
    let mut edges = vec![];
    for h in (0..lo).chain(hi..hd.out) {
        let (mut rows, mut padded) = (vec![], false);
        for r in 0..hd.k {
            let ih = h
                .checked_mul(hd.s)?
                .checked_add(r.checked_mul(hd.d)?)?
                .checked_sub(hd.low)?;
            if (0..hd.size).contains(&ih) {
                rows.push(ih);
            } else {
                padded = true;
            }
        }
        edges.push(EdgeRow { h, rows, padded });
        if edges.len() > MAX_BORDER_ROWS {
            return None;
        }
    }
    // The padded width (the image's columns at `low`), and every tap's reads.
    let mut len = wd.size.checked_add(wd.low)?.checked_add(wd.high)?;
    let (last_w, k_span) = (
        wd.out.checked_add(LANES)?.checked_mul(wd.s)?,
        (wd.k - 1).checked_mul(wd.d)?,
    );
    if last_w.checked_add(k_span)?.checked_add(2 * LANES)? > MAX_LEN {
        return None;
    }
    for (w0, lanes) in row_blocks(wd.out) {
        for s in 0..wd.k {
            let (start, span) = tap_read(&wd, w0, lanes, s);
            len = len.max(start + span);
        }
    }
    (len <= MAX_LEN).then_some(Sep {
        len,
        interior: (lo, hi),
        edges,
        dims: [hd, wd],
    })
}

/// What every row of a plane uses.
struct Plane<'a> {
    g: &'a Sep,
    x: Value,
    pad: Value,
    init: Value,
    zero: Value,
    /// The consumer and its per-channel inputs (scalars, splat where a block uses them:
    /// LLVM hoists the splats out of the loops).
    sink: Option<(&'a Consumer, Vec<Option<Value>>)>,
}

/// `arith.maximumf` of two vectors.
fn max(b: &mut OpBuilder<'_>, a: Value, v: Value) -> Value {
    let ty = b.ir.value_type(a);
    b.value(ops::arith::MaximumfOp::NAME, vec![a, v], ty, &[])
}

/// Max pooling `w` on plane `x` (`1 x 1 x H x W`) from the fill value `init`, then `sink`
/// on channel `c` (when given), written into `out` (the plane's `1 x 1 x OH x OW`): the
/// updated `out`.
pub(super) fn plane(
    b: &mut OpBuilder<'_>,
    w: &Window,
    g: &Sep,
    x: Value,
    init: Value,
    sink: Option<(&Consumer, Value)>,
    out: Value,
) -> Result<Value, String> {
    let pad = pad_scalar(b, w).ok_or("the padding value of the window's image")?;
    let zero = b.value(
        ops::arith::ConstantOp::NAME,
        vec![],
        w.elem,
        &[("value", Attribute::float(0.0, w.elem))],
    );
    let sink = sink.map(|(s, c)| (s, channel_scalars(b, s, c)));
    let p = Plane {
        g,
        x,
        pad,
        init,
        zero,
        sink,
    };
    let [hd, _] = g.dims;
    let (lo, hi) = g.interior;
    let mut o = out;
    for e in g.edges.iter().filter(|e| e.h < lo) {
        o = edge_row(b, &p, e, o);
    }
    // The interior rows: window row `r` of output row `h` is image row `h*sh + r*dh - low`.
    let resume = b.at;
    let bounds = [b.index(lo), b.index(hi), b.index(1)];
    let (lp, h, oh) = for_loop_step(b, bounds, o);
    let sh = b.index(hd.s);
    let hs = b.value(ops::arith::MuliOp::NAME, vec![h, sh], Type::index(), &[]);
    let rows: Vec<Value> = (0..hd.k)
        .map(|r| add_const(b, hs, r * hd.d - hd.low))
        .collect();
    let o1 = row(b, &p, (h, &rows, false), oh);
    b.create(ops::scf::YieldOp::NAME, vec![o1], vec![], &[]);
    b.at = resume;
    o = b.ir.result(lp, 0);
    for e in g.edges.iter().filter(|e| e.h >= hi) {
        o = edge_row(b, &p, e, o);
    }
    Ok(o)
}

/// An output row outside the interior, its image rows static.
fn edge_row(b: &mut OpBuilder<'_>, p: &Plane<'_>, e: &EdgeRow, o: Value) -> Value {
    let h = b.index(e.h);
    let rows: Vec<Value> = e.rows.iter().map(|r| b.index(*r)).collect();
    row(b, p, (h, &rows, e.padded), o)
}

/// Blocks of `n` elements: full 16-lane ones in a loop from 0 (`f(b, offset, 16)` in its
/// body, carrying `acc`), then the rest one by one.
fn blocks(
    b: &mut OpBuilder<'_>,
    n: i64,
    acc: Value,
    f: &mut dyn FnMut(&mut OpBuilder<'_>, Value, i64, Value) -> Value,
) -> Value {
    let full = n / LANES * LANES;
    let mut acc = acc;
    if full > 0 {
        let resume = b.at;
        let bounds = [b.index(0), b.index(full), b.index(LANES)];
        let (lp, at, a) = for_loop_step(b, bounds, acc);
        let a1 = f(b, at, LANES, a);
        b.create(ops::scf::YieldOp::NAME, vec![a1], vec![], &[]);
        b.at = resume;
        acc = b.ir.result(lp, 0);
    }
    for (off, lanes) in row_blocks(n - full) {
        let at = b.index(full + off);
        acc = f(b, at, lanes, acc);
    }
    acc
}

/// Output row `h` from image rows `rows` (and the padding value when `padded`): the
/// row buffer, then the outputs written into `o`.
fn row(
    b: &mut OpBuilder<'_>,
    p: &Plane<'_>,
    (h, rows, padded): (Value, &[Value], bool),
    o: Value,
) -> Value {
    let [_, wd] = p.g.dims;
    let elem = b.ir.value_type(p.pad);
    let empty = b.value(
        ops::tensor::EmptyOp::NAME,
        vec![],
        Type::tensor(vec![p.g.len], elem),
        &[],
    );
    // The padding columns, left and right of the image's.
    let mut v = empty;
    let right = wd.low + wd.size;
    for (start, n) in [(0, wd.low), (right, p.g.len - right)] {
        for (off, lanes) in row_blocks(n) {
            let s = splat(b, p.pad, lanes);
            let at = b.index(start + off);
            v = write(b, s, v, &[at]);
        }
    }
    // The image's columns: the maximum over the window's rows.
    let z = b.index(0);
    v = blocks(b, wd.size, v, &mut |b, c, lanes, v| {
        let mut acc = padded.then(|| splat(b, p.pad, lanes));
        for ih in rows {
            let x = read(b, p.x, &[z, z, *ih, c], lanes, p.zero);
            acc = Some(match acc {
                Some(a) => max(b, a, x),
                None => x,
            });
        }
        let m = acc.unwrap_or_else(|| splat(b, p.pad, lanes));
        let at = add_const(b, c, wd.low);
        write(b, m, v, &[at])
    });
    // The outputs: the maximum over the window's columns, from the fill's value.
    blocks(b, wd.out, o, &mut |b, w0, lanes, o| {
        let mut acc = splat(b, p.init, lanes);
        let ws = if wd.s == 1 {
            w0
        } else {
            let s = b.index(wd.s);
            b.value(ops::arith::MuliOp::NAME, vec![w0, s], Type::index(), &[])
        };
        for s in 0..wd.k {
            let (off, span) = tap_read(&wd, 0, lanes, s);
            let start = add_const(b, ws, off);
            let t = if span == lanes {
                read(b, v, &[start], lanes, p.zero)
            } else {
                let lo = read(b, v, &[start], lanes, p.zero);
                let at = add_const(b, start, lanes);
                let hi = read(b, v, &[at], lanes, p.zero);
                let mask: Vec<i64> = (0..lanes).map(|l| 2 * l).collect();
                b.value(
                    ops::vector::ShuffleOp::NAME,
                    vec![lo, hi],
                    Type::vector(vec![lanes], elem),
                    &[("mask", Attribute::dense_i64_array(&mask))],
                )
            };
            acc = max(b, acc, t);
        }
        if let Some((s, scalars)) = &p.sink {
            let extra = splat_all(b, scalars, lanes);
            acc = consume(b, s, &extra, (acc, lanes));
        }
        write(b, acc, o, &[z, z, h, w0])
    })
}

#[cfg(test)]
mod tests {
    use super::super::Dim;
    use super::{geometry_of, row_blocks, tap_read, LANES};

    /// A window dim of one tap over 4 positions: the other dim of a geometry under test.
    const UNIT: Dim = Dim {
        size: 4,
        out: 4,
        k: 1,
        s: 1,
        d: 1,
        low: 0,
        high: 0,
    };

    /// The first pass: each output row reduces exactly the image rows its windows read
    /// (and the padding, when one of them is a padding row), every one inside the image.
    #[test]
    fn rows_are_the_windows_rows() {
        let mut taken = 0;
        for hd in Dim::all([1..=20, 1..=4, 1..=3, 1..=2, 0..=2, 0..=2]) {
            let Some(g) = geometry_of([hd, UNIT]) else {
                continue;
            };
            taken += 1;
            for h in 0..hd.out {
                let window: Vec<i64> = (0..hd.k).map(|r| h * hd.s + r * hd.d - hd.low).collect();
                let inside: Vec<i64> = window
                    .iter()
                    .copied()
                    .filter(|r| (0..hd.size).contains(r))
                    .collect();
                match g.edges.iter().find(|e| e.h == h) {
                    Some(e) => {
                        assert_eq!(e.rows, inside, "{hd:?}: output row {h}");
                        assert_eq!(e.padded, inside.len() < window.len(), "{hd:?}: {h}");
                    }
                    None => {
                        assert!((g.interior.0..g.interior.1).contains(&h), "{hd:?}: {h}");
                        assert_eq!(inside, window, "{hd:?}: interior row {h}");
                    }
                }
            }
        }
        assert!(taken > 2_000, "only {taken} geometries taken");
    }

    /// The second pass simulated on one padded row laid out in the row buffer (the image's
    /// columns at `low`, the padding elsewhere up to `len`): every block's every tap reads
    /// inside the buffer, and each output lane gets its window's maximum.
    #[test]
    fn columns_give_the_windows_maximum() {
        const PAD: i64 = -1;
        let mut taken = 0;
        for wd in Dim::all([1..=70, 1..=4, 1..=3, 1..=2, 0..=2, 0..=2]) {
            let Some(g) = geometry_of([UNIT, wd]) else {
                continue;
            };
            taken += 1;
            // Distinct, increasing image values: a wrong column gives a wrong maximum.
            let at = |c: i64| {
                let c = c - wd.low;
                if (0..wd.size).contains(&c) {
                    c * 7 + 3
                } else {
                    PAD
                }
            };
            let buf: Vec<i64> = (0..g.len).map(at).collect();
            for (w0, lanes) in row_blocks(wd.out) {
                assert!(lanes <= LANES);
                for lane in 0..lanes {
                    let mut got = i64::MIN;
                    for s in 0..wd.k {
                        let (start, span) = tap_read(&wd, w0, lanes, s);
                        assert!(start + span <= g.len, "{wd:?}: block {w0}+{lanes}");
                        let i = if span == lanes {
                            start + lane
                        } else {
                            start + 2 * lane
                        };
                        got = got.max(buf[i as usize]);
                    }
                    let w = w0 + lane;
                    let want = (0..wd.k).map(|s| at(w * wd.s + s * wd.d)).max();
                    assert_eq!(Some(got), want, "{wd:?} at {w}");
                }
            }
        }
        assert!(taken > 5_000, "only {taken} geometries taken");
    }
}
