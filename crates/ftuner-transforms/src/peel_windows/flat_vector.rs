//! A depthwise convolution's plane in vectors over its phase planes, with the plane's
//! consumer applied in registers (option `vector`).
//!
//! A stride-`(sh, sw)` window reads padded image position `(h*sh + r*dh, w*sw + s*dw)`
//! for output `(h, w)`. Split the padded image by phase, plane `(a, b)` holding the
//! positions `(a + sh*i, b + sw*j)`: that position is element `(h + (r*dh)/sh,
//! w + (s*dw)/sw)` of phase `((r*dh) % sh, (s*dw) % sw)`. Laid out one after the other
//! with a common row pitch `Q`, in one buffer viewed as one dimension, every tap is then
//! a constant offset from the flat output index `j = h*Q + w`: tap `(r, s)` reads
//! `buf[base(phase) + j + ((r*dh)/sh)*Q + (s*dw)/sw]`, contiguous in `j`. A stride-1 op
//! has one phase, the padded plane itself ([`super::flat`]'s form); a stride-2 3x3 conv
//! (MobileNetV2's downsampling blocks) has four, each a quarter of the image, and reads
//! nine vectors per 16 outputs as the stride-1 form does, where its pieces ran a scalar
//! interior and border strips.
//!
//! Per plane: the buffer filled with the padding value, each phase's positions of the
//! image copied in (at a column stride of 2, per row: two reads of the row and a
//! `vector.shuffle` of their even or odd lanes; otherwise a strided slice), then for each
//! 16 flat positions `j`:
//!
//! ```mlir
//! %acc0 = vector.broadcast %init : f32 to vector<16xf32>          // the fill's value
//! %x0 = vector.transfer_read %buf[%j0], %zero : tensor<Lxf32>, vector<16xf32>
//! %r0 = vector.fma %x0, %f0, %acc0 : vector<16xf32>                // %f0: tap (0, 0), splat
//! ... one read and fma per tap of filter row 0, at j + its offset ...
//! %r1 = arith.mulf %x3, %f3 : vector<16xf32>                       // row 1's first tap
//! ... each filter row its own chain, then %acc = %r0 + %r1 + %r2 ...
//! %e = (the consumer's body on vectors: per-channel inputs splat)
//! %y1 = vector.transfer_write %e, %y[%j] : vector<16xf32>, tensor<Lxf32>
//! ```
//!
//! then each output row is copied out of the flat result in vectors of 16, 8, 4, 2 and 1
//! lanes (28 = 16 + 8 + 4). The flat positions past a row's `OW` outputs are computed and
//! never read.
//!
//! By rows (option `rows`, planes at least [`MIN_ROW_WIDTH`] outputs wide): no flat
//! result. Each output row `h` is computed at flat positions `h*Q + w0` in vectors of 16
//! and one of the next power of two for the rest ([`row_vectors`]: 56 = 16 + 16 + 16 +
//! 8; 28 = 16 + a 16 of which 12 are kept), each written into the output row in place
//! (the last one's lanes in 8/4/2/1-lane pieces, `vector.shuffle`d out). The flat
//! result's store, its reload and the copy's store of every output were 45% of the
//! 56x56 stride-1 conv's samples (`perf annotate`, MobileNetV2 batch 8); by rows an
//! output is stored once. MobileNetV2 (both pipelines compiled in one process,
//! `tools/bench/ab_pipeline.py mobilenet_v2 1,8` with `peel-padded-windows{rows=false}`
//! and `{rows=true}`, rows from 16 outputs wide, 11 rounds, one thread, Xeon family 6
//! model 167): batch 1 12.23 -> 10.70 ms, batch 8 86.5 -> 76.1; from 8 wide, see
//! [`MIN_ROW_WIDTH`]. The generic flat form's LLVM-vectorized loop and the consumer's separate
//! pass over rows of 28, 14 or 7 outputs (four lanes and a scalar remainder: 43% of a
//! 28x28 plane's time under `perf annotate`) are gone; the sums are fused multiply-adds,
//! so results differ from the op's own multiply-then-add order by rounding. One chain per
//! filter row, summed at the end, instead of all nine taps in one: each 16 outputs waited
//! nine FMA latencies (36 cycles) behind the samples `perf annotate` put on the consumer's
//! instructions; three chains of three and two additions wait 20 (MobileNetV2 saved, one
//! thread, `tools/bench/ab_saved.py`, 9 rounds: batch 1 7.97 -> 7.64 ms, batch 8 61.3 ->
//! 59.9).
//!
//! Taken where the buffer of phases fits [`MAX_BYTES`], the plane whole or in bands of
//! output rows ([`super::bands`]). An earlier try of phase planes
//! (docs/patch-ukernels.md) kept the generic flat loop and copied the phases as strided
//! slices, element by element: the copy cost more than the loop saved.

use super::flat::LANES;
use super::rows::row_vectors;
use super::Window;
use crate::nchw_consumer::{Consumer, Input};
use crate::tensor_build::{extract_as_strided, for_loop_step, insert, Off};
use ftuner_dialects::linalg::body::indexing_maps;
use ftuner_dialects::ops;
use ftuner_dialects::vector::{clone_lanewise, is_lanewise_body, transfer_props};
use ftuner_ir::{AffineExpr, Attribute, InsertPoint, Ir, OpBuilder, OpId, Type, Value};
use rustc_hash::FxHashMap;

/// Whether the vector form applies to `op` with its consumer `sink`: a depthwise conv of
/// f32 without casts, and a consumer (if any) whose other inputs are read per channel and
/// whose body is lanewise `arith` on scalars.
pub(super) fn applies(ir: &Ir, op: OpId, w: &Window, sink: Option<&Consumer>) -> bool {
    // Image, filter and output all f32 (the named op casts mixed types in its body).
    let f32_of = |v: Value| ir.value_type(v).element_type() == Type::f32();
    if ir.name(op) != ops::linalg::DepthwiseConv2dNchwChwOp::NAME
        || ir.attr(op, "cast").is_some()
        || w.elem != Type::f32()
        || !f32_of(w.x)
        || !f32_of(w.f)
    {
        return false;
    }
    sink.is_none_or(|s| lanewise_sink(ir, s))
}

/// A consumer whose other inputs are read per channel and whose body is lanewise `arith`
/// on scalars: what can run on the window's vectors before they are stored.
pub(super) fn lanewise_sink(ir: &Ir, s: &Consumer) -> bool {
    !s.ins.iter().any(|i| matches!(i, Input::Element(_)))
        && ir
            .regions_of(s.g)
            .first()
            .and_then(|r| ir.region_entry(*r))
            .is_some_and(|body| is_lanewise_body(ir, body))
}

/// The largest buffer of phases taken at once: past it the plane, its phases and its flat
/// result no longer share L1 (48 KiB on the machines measured), and the op ran faster
/// otherwise. MobileNetV2's depthwise convs at batch 8 alone, one thread (Emerald
/// Rapids): at 112x112, 51.2-51.7 KiB of phases, stride 1 2.46 ms here against 2.35 in the
/// generic flat form, stride 2 5.0 ms against 3.0 as pieces; at 56x56, 14 KiB, stride 1
/// 2.48 against 2.91, stride 2 1.60 against 1.89. A larger plane is taken in bands of
/// output rows whose phases fit ([`super::bands`]).
pub(super) const MAX_BYTES: i64 = 32 << 10;

/// The narrowest output rows computed by rows (option `rows`): half a vector. Narrower
/// ones (7x7 planes) compute more lanes by rows (7 rows of 8 lanes against 4 flat
/// vectors of 16 at a pitch of 9) than the copy out of a flat result costs: MobileNetV2
/// saved with rows from widths 16, 8 and 1, alternated (`tools/bench/ab_saved.py`, 11
/// rounds, one thread, Xeon family 6 model 167): batch 1 9.88 / 9.33 / 9.35 ms, batch 8
/// 71.3 / 69.2 / 69.4 (flat throughout: 11.00 and 80.0).
const MIN_ROW_WIDTH: i64 = LANES / 2;

/// The most taps taken: the loop reads and multiplies once per tap, unrolled (a 7x7
/// filter has 49).
const MAX_TAPS: i64 = 64;

/// The phase planes of a window op's plane and its flat output.
pub(super) struct Geom {
    /// Row pitch of every phase plane and of the flat output.
    pitch: i64,
    /// Flat positions computed: `OH * pitch` rounded up to [`LANES`]; by rows, up to the
    /// last row's last vector ([`row_vectors`]).
    len: i64,
    /// Computed by output rows, each written in place ([`row_vectors`]), not as one flat
    /// result copied out.
    by_rows: bool,
    /// Rows of each phase plane in the buffer (its data, then what the last phase's reads
    /// reach past it).
    rows: i64,
    /// The phases read, in order: `(a, b)`, the image rows and columns they hold
    /// (`first, count` each) and where (`row, col`) in the phase plane they start.
    phases: Vec<Phase>,
    /// Each tap's flat offset, in the op's order of `(r, s)`.
    taps: Vec<i64>,
    strides: [i64; 2],
    /// Bytes of the buffer of phases.
    pub(super) bytes: i64,
}

struct Phase {
    /// Image rows `src[0].0, + stride, ...` (`src[0].1` of them), likewise columns.
    src: [(i64, i64); 2],
    /// Where the first of them sits in the phase plane.
    at: [i64; 2],
}

/// Positions `a + s*i` of a padded dim (`low` padding, image of `size`) that hold image
/// data: the first image index, how many, and the first `i`.
fn phase_span(a: i64, s: i64, low: i64, size: i64) -> Option<((i64, i64), i64)> {
    // The first i with a + s*i >= low (a < s, so i0 * s < low + s).
    let i0 = if a >= low {
        0
    } else {
        low.checked_sub(a)?.checked_add(s - 1)? / s
    };
    let first = i0.checked_mul(s)?.checked_add(a)?.checked_sub(low)?;
    let count = if first < size {
        (size - 1 - first) / s + 1
    } else {
        0
    };
    Some(((first, count), i0))
}

/// The geometry of a window of dims `[hd, wd]` in phase planes of elements of
/// `elem_bytes`, when every stride and dilation is positive and the filter has at most
/// [`MAX_TAPS`] taps (the caller checks the buffer's bytes against [`MAX_BYTES`]);
/// computed by rows (`by_rows`) when `rows` and the output is at least [`MIN_ROW_WIDTH`]
/// wide.
pub(super) fn geometry_of([hd, wd]: [super::Dim; 2], elem_bytes: i64, rows: bool) -> Option<Geom> {
    let by_rows = rows && wd.out >= MIN_ROW_WIDTH;
    if [hd.s, wd.s, hd.d, wd.d, hd.k, wd.k].iter().any(|v| *v < 1)
        || hd.out < 1
        || wd.out < 1
        || hd.k.checked_mul(wd.k)? > MAX_TAPS
    {
        return None;
    }
    let (sh, sw) = (hd.s, wd.s);
    // Each tap's phase and offsets within it.
    let mut tap_at = vec![];
    let mut order: Vec<(i64, i64)> = vec![];
    for r in 0..hd.k {
        for s in 0..wd.k {
            let (vr, vs) = (r.checked_mul(hd.d)?, s.checked_mul(wd.d)?);
            let ph = (vr % sh, vs % sw);
            if !order.contains(&ph) {
                order.push(ph);
            }
            tap_at.push((ph, vr / sh, vs / sw));
        }
    }
    let max_roff = tap_at.iter().map(|t| t.1).max()?;
    let max_coff = tap_at.iter().map(|t| t.2).max()?;
    let mut phases = vec![];
    let (mut pitch, mut rows) = (wd.out.checked_add(max_coff)?, hd.out.checked_add(max_roff)?);
    for &(a, b) in &order {
        let (rs, i0) = phase_span(a, sh, hd.low, hd.size)?;
        let (cs, j0) = phase_span(b, sw, wd.low, wd.size)?;
        rows = rows.max(i0.checked_add(rs.1)?);
        pitch = pitch.max(j0.checked_add(cs.1)?);
        phases.push(Phase {
            src: [rs, cs],
            at: [i0, j0],
        });
    }
    let len = if by_rows {
        let last = row_vectors(wd.out).last().map_or(0, |v| v.w0 + v.lanes);
        (hd.out - 1).checked_mul(pitch)?.checked_add(last)?
    } else {
        hd.out.checked_mul(pitch)?.checked_add(LANES - 1)? / LANES * LANES
    };
    // The last phase's furthest read, `len - 1 + max_roff*Q + max_coff`, inside it.
    let reach = len
        .checked_add(max_roff.checked_mul(pitch)?)?
        .checked_add(max_coff)?;
    rows = rows.max(reach.checked_add(pitch - 1)? / pitch);
    let plane = rows.checked_mul(pitch)?;
    let bytes = plane
        .checked_mul(order.len() as i64)?
        .checked_mul(elem_bytes)?;
    let taps = tap_at
        .iter()
        .map(|(ph, ro, co)| {
            let p = order.iter().position(|x| x == ph).unwrap_or(0) as i64;
            p * plane + ro * pitch + co
        })
        .collect();
    Some(Geom {
        pitch,
        len,
        by_rows,
        rows,
        phases,
        taps,
        strides: [sh, sw],
        bytes,
    })
}

/// Plane `x` (`1 x 1 x H x W`) as `g`'s phase planes, one after the other, in one
/// dimension: filled with the padding value, each phase's image positions copied in.
fn phase_buffer(b: &mut OpBuilder<'_>, w: &Window, g: &Geom, x: Value) -> Option<Value> {
    let elem = w.elem;
    let pad = pad_scalar(b, w)?;
    let n = g.phases.len() as i64;
    let shape = vec![n, g.rows, g.pitch];
    let empty = b.value(
        ops::tensor::EmptyOp::NAME,
        vec![],
        Type::tensor(shape.clone(), elem),
        &[],
    );
    let mut buf = crate::tensor_build::splat_into(b, pad, empty).ok()?;
    for (p, ph) in g.phases.iter().enumerate() {
        let [(r0, nr), (c0, nc)] = ph.src;
        if nr == 0 || nc == 0 {
            continue;
        }
        let [sh, sw] = g.strides;
        if sw == 2 {
            buf = pairs_copy(b, x, buf, (p as i64, ph, sh), w.dims[1].size);
            continue;
        }
        let sl = extract_as_strided(
            b,
            x,
            (&[0, 0, r0, c0], &[1, 1, nr, nc], &[1, 1, sh, sw]),
            Type::tensor(vec![nr, nc], elem),
        );
        let at = [
            Off::Const(p as i64),
            Off::Const(ph.at[0]),
            Off::Const(ph.at[1]),
        ];
        buf = insert(b, sl, buf, &at, &[1, nr, nc]);
    }
    Some(b.value(
        ops::tensor::CollapseShapeOp::NAME,
        vec![buf],
        Type::tensor(vec![n * g.rows * g.pitch], elem),
        &[(
            "reassociation",
            ftuner_dialects::tensor::reassociation_attr(&[&[0, 1, 2]]),
        )],
    ))
}

/// The window's padding value at the builder's point (a constant cloned there).
pub(super) fn pad_scalar(b: &mut OpBuilder<'_>, w: &Window) -> Option<Value> {
    Some(match ftuner_dialects::tensor::pad_value(b.ir, w.pad)? {
        ftuner_dialects::tensor::PadValue::Outside(v) => v,
        ftuner_dialects::tensor::PadValue::Constant(c) => {
            let k = b.ir.clone_op(c, &mut FxHashMap::default());
            b.place(k);
            b.ir.result(k, 0)
        }
    })
}

/// The blocks a phase row of `n` elements at image columns `c0, c0 + 2, ...` (of a row of
/// `width`) is copied in: `(end, lanes, odd)`, elements `[end - lanes, end)` of the
/// phase row from the `2 * lanes` image columns ending at its last one (`odd`: they are
/// the odd lanes) or starting at its first (the even lanes), whichever stays in the row.
fn pair_blocks(n: i64, c0: i64, width: i64) -> Vec<(i64, i64, bool)> {
    // The widest power of two up to 16 lanes that the row holds, halved when it is the
    // whole row and neither its first nor its last `2 * lanes` columns fit (an odd-width
    // row starting at column 0: no column before the first, none after the last).
    let mut v = 1;
    while v * 2 <= n.min(LANES) {
        v *= 2;
    }
    if n == v && c0 + 2 * v > width && c0 < 1 {
        v /= 2;
    }
    if v <= 1 {
        return (1..=n).map(|e| (e, 1, false)).collect();
    }
    // The first block from its first column (inside: c0 + 2v - 1 <= c0 + 2(n - 1) when
    // n > v, or checked above); the others from their last (c0 + 2(e - v) - 1 >= 0).
    let first_even = c0 + 2 * v <= width;
    let mut out = vec![(v, v, !first_even)];
    let mut e = v;
    while e < n {
        e = (e + v).min(n);
        out.push((e, v, true));
    }
    out
}

/// Phase `p` of a stride-2-wide window (its image rows `r0, r0 + sh, ...`, columns `c0,
/// c0 + 2, ...`) copied into `buf` in vectors: per image row, each block of `lanes`
/// phase columns from two `lanes`-wide reads of the row and a `vector.shuffle` of their
/// even or odd lanes. A strided slice copied element by element (LLVM unrolls the loop
/// and keeps it scalar) cost more than the phases' vector loop saved at 56x56.
fn pairs_copy(
    b: &mut OpBuilder<'_>,
    x: Value,
    buf: Value,
    (p, ph, sh): (i64, &Phase, i64),
    width: i64,
) -> Value {
    let elem = b.ir.value_type(x).element_type();
    let [(r0, nr), (c0, nc)] = ph.src;
    let zero = b.value(
        ops::arith::ConstantOp::NAME,
        vec![],
        elem,
        &[("value", Attribute::float(0.0, elem))],
    );
    let resume = b.at;
    let bounds = [b.index(0), b.index(nr), b.index(1)];
    let (lp, i, acc) = for_loop_step(b, bounds, buf);
    let shc = b.index(sh);
    let si = b.value(ops::arith::MuliOp::NAME, vec![i, shc], Type::index(), &[]);
    let row = add_const(b, si, r0);
    let brow = add_const(b, i, ph.at[0]);
    let (z, pc) = (b.index(0), b.index(p));
    let mut acc = acc;
    for (end, lanes, odd) in pair_blocks(nc, c0, width) {
        let v = if lanes == 1 {
            let col = b.index(c0 + 2 * (end - 1));
            read(b, x, &[z, z, row, col], 1, zero)
        } else {
            let start = if odd {
                c0 + 2 * (end - 1) - (2 * lanes - 1)
            } else {
                c0 + 2 * (end - lanes)
            };
            let (c_lo, c_hi) = (b.index(start), b.index(start + lanes));
            let lo = read(b, x, &[z, z, row, c_lo], lanes, zero);
            let hi = read(b, x, &[z, z, row, c_hi], lanes, zero);
            let mask: Vec<i64> = (0..lanes).map(|l| 2 * l + i64::from(odd)).collect();
            let ty = Type::vector(vec![lanes], elem);
            b.value(
                ops::vector::ShuffleOp::NAME,
                vec![lo, hi],
                ty,
                &[("mask", Attribute::dense_i64_array(&mask))],
            )
        };
        let col = b.index(ph.at[1] + end - lanes);
        acc = write(b, v, acc, &[pc, brow, col]);
    }
    b.create(ops::scf::YieldOp::NAME, vec![acc], vec![], &[]);
    b.at = resume;
    b.ir.result(lp, 0)
}

/// `vector.broadcast` of scalar `s` to `lanes` lanes.
pub(super) fn splat(b: &mut OpBuilder<'_>, s: Value, lanes: i64) -> Value {
    let ty = Type::vector(vec![lanes], b.ir.value_type(s));
    b.value(ops::vector::BroadcastOp::NAME, vec![s], ty, &[])
}

/// `a + k` on indices (`a` itself for 0).
pub(super) fn add_const(b: &mut OpBuilder<'_>, a: Value, k: i64) -> Value {
    if k == 0 {
        return a;
    }
    let c = b.index(k);
    b.value(ops::arith::AddiOp::NAME, vec![a, c], Type::index(), &[])
}

/// A `lanes`-lane read of `src` along its last dim at `idx`.
pub(super) fn read(
    b: &mut OpBuilder<'_>,
    src: Value,
    idx: &[Value],
    lanes: i64,
    pad: Value,
) -> Value {
    let rank = idx.len();
    let elem = b.ir.value_type(src).element_type();
    let mut operands = vec![src];
    operands.extend_from_slice(idx);
    operands.push(pad);
    let props = transfer_props(rank, rank - 1, [1, rank as i32, 1, 0]);
    let ty = Type::vector(vec![lanes], elem);
    b.value(ops::vector::TransferReadOp::NAME, operands, ty, &props)
}

/// `v` written into `dst` along its last dim at `idx`: the updated tensor.
pub(super) fn write(b: &mut OpBuilder<'_>, v: Value, dst: Value, idx: &[Value]) -> Value {
    let rank = idx.len();
    let mut operands = vec![v, dst];
    operands.extend_from_slice(idx);
    let props = transfer_props(rank, rank - 1, [1, 1, rank as i32, 0]);
    let ty = b.ir.value_type(dst);
    b.value(ops::vector::TransferWriteOp::NAME, operands, ty, &props)
}

/// The consumer's inputs other than the conv's result, on channel `c`: each a scalar
/// (`tensor.extract` at the channel and the map's constants); None for the result.
pub(super) fn channel_scalars(b: &mut OpBuilder<'_>, s: &Consumer, c: Value) -> Vec<Option<Value>> {
    let maps = indexing_maps(b.ir, s.g).unwrap_or_default();
    s.ins
        .iter()
        .zip(&maps)
        .map(|(how, map)| match how {
            Input::Channel(v, _) => {
                let ty = b.ir.value_type(*v);
                Some(if ty.is_tensor() {
                    let mut operands = vec![*v];
                    for r in &map.results {
                        operands.push(match r {
                            AffineExpr::Const(k) => b.index(*k),
                            _ => c,
                        });
                    }
                    let elem = ty.element_type();
                    b.value(ops::tensor::ExtractOp::NAME, operands, elem, &[])
                } else {
                    *v
                })
            }
            _ => None,
        })
        .collect()
}

/// [`channel_scalars`] splat to `lanes` lanes.
pub(super) fn splat_all(
    b: &mut OpBuilder<'_>,
    scalars: &[Option<Value>],
    lanes: i64,
) -> Vec<Option<Value>> {
    scalars
        .iter()
        .map(|v| v.map(|v| splat(b, v, lanes)))
        .collect()
}

/// The consumer's body on vector `acc` of `lanes` lanes, its other inputs `extra` (splat
/// to as many).
pub(super) fn consume(
    b: &mut OpBuilder<'_>,
    s: &Consumer,
    extra: &[Option<Value>],
    (acc, lanes): (Value, i64),
) -> Value {
    let Some(body) =
        b.ir.regions_of(s.g)
            .first()
            .and_then(|r| b.ir.region_entry(*r))
    else {
        return acc;
    };
    let mut vmap: FxHashMap<Value, Value> =
        b.ir.block_args(body)
            .iter()
            .zip(extra)
            .map(|(a, x)| (*a, x.unwrap_or(acc)))
            .collect();
    let at = b.at;
    let mut place = |ir: &mut Ir, o: OpId| match at {
        InsertPoint::End(blk) => ir.append_op(blk, o),
        InsertPoint::Before(x) => ir.insert_before(x, o),
    };
    clone_lanewise(b.ir, body, &mut vmap, (lanes, b.loc), &mut place).unwrap_or(acc)
}

/// Blocks of a row of `n` outputs: `(offset, lanes)`, 16 lanes at a time, then 8, 4, 2, 1.
pub(super) fn row_blocks(n: i64) -> Vec<(i64, i64)> {
    let mut out = vec![];
    let mut at = 0;
    for lanes in [16, 8, 4, 2, 1] {
        while n - at >= lanes {
            out.push((at, lanes));
            at += lanes;
        }
    }
    out
}

/// Depthwise conv `op` on plane `x` with filter plane `f` (`1 x KH x KW`) from the fill
/// value `init`, then `sink` on channel `c` (when given), written into `out` (the plane's
/// `1 x 1 x OH x OW`): the updated `out`.
pub(super) fn plane(
    b: &mut OpBuilder<'_>,
    w: &Window,
    g: &Geom,
    (x, f): (Value, Value),
    init: Value,
    sink: Option<(&Consumer, Value)>,
    out: Value,
) -> Result<Value, String> {
    let elem = w.elem;
    let xf = phase_buffer(b, w, g, x).ok_or("the padding value of the window's image")?;
    let zero = b.value(
        ops::arith::ConstantOp::NAME,
        vec![],
        elem,
        &[("value", Attribute::float(0.0, elem))],
    );
    // The taps (filter values, splat) and their flat offsets, in the op's order.
    let [hd, wd] = w.dims;
    let mut taps = vec![];
    for r in 0..hd.k {
        for s in 0..wd.k {
            let idx = vec![b.index(0), b.index(r), b.index(s)];
            let mut operands = vec![f];
            operands.extend(idx);
            let t = b.value(ops::tensor::ExtractOp::NAME, operands, elem, &[]);
            taps.push((g.taps[taps.len()], t));
        }
    }
    let scalars = sink.map(|(s, c)| (s, channel_scalars(b, s, c)));
    // The taps, the fill's value and the consumer's inputs splat to each width computed:
    // 16 lanes flat; by rows, those of a row's vectors.
    let mut widths = vec![];
    if g.by_rows {
        widths.extend(row_vectors(wd.out).iter().map(|v| v.lanes));
        widths.dedup();
    } else {
        widths.push(LANES);
    }
    let splats: Vec<Splats> = widths
        .into_iter()
        .map(|v| Splats {
            lanes: v,
            taps: taps
                .iter()
                .map(|(off, t)| (*off, splat(b, *t, v)))
                .collect(),
            acc0: splat(b, init, v),
            extra: scalars.as_ref().map(|(s, sc)| (*s, splat_all(b, sc, v))),
        })
        .collect();
    let per_chain = if wd.k > 1 {
        wd.k as usize
    } else {
        taps.len().max(1)
    };
    let resume = b.at;
    if g.by_rows {
        let r = super::rows::plane_by_rows(
            b,
            (xf, zero),
            (hd.out, wd.out, g.pitch),
            &splats,
            per_chain,
            out,
        );
        b.at = resume;
        return Ok(r);
    }
    let y0 = b.value(
        ops::tensor::EmptyOp::NAME,
        vec![],
        Type::tensor(vec![g.len], elem),
        &[],
    );
    let bounds = [b.index(0), b.index(g.len), b.index(LANES)];
    let (lp, j, y) = for_loop_step(b, bounds, y0);
    let acc = window_vector(b, (xf, zero), j, &splats[0], per_chain);
    let y1 = write(b, acc, y, &[j]);
    b.create(ops::scf::YieldOp::NAME, vec![y1], vec![], &[]);
    b.at = resume;
    let yf = b.ir.result(lp, 0);
    // The rows copied out.
    let oh = hd.out;
    let bounds = [b.index(0), b.index(oh), b.index(1)];
    let (rows, h, o) = for_loop_step(b, bounds, out);
    let p = b.index(g.pitch);
    let base = b.value(ops::arith::MuliOp::NAME, vec![h, p], Type::index(), &[]);
    let z = b.index(0);
    let mut o = o;
    for (w0, lanes) in row_blocks(wd.out) {
        let at = add_const(b, base, w0);
        let v = read(b, yf, &[at], lanes, zero);
        let col = b.index(w0);
        o = write(b, v, o, &[z, z, h, col]);
    }
    b.create(ops::scf::YieldOp::NAME, vec![o], vec![], &[]);
    b.at = resume;
    Ok(b.ir.result(rows, 0))
}

/// What a vector of `lanes` outputs is computed from, splat before the loops: each tap's
/// flat offset and filter value, the fill's value, the consumer and its per-channel
/// inputs.
pub(super) struct Splats<'a> {
    pub(super) lanes: i64,
    taps: Vec<(i64, Value)>,
    acc0: Value,
    extra: Option<(&'a Consumer, Vec<Option<Value>>)>,
}

/// The window's sums at flat positions `j ..` of the phase buffer `xf` (`zero`: the
/// reads' padding), in vectors of `sp.lanes`, with the consumer applied: one chain of
/// fused multiply-adds per `per_chain` taps (a filter row; nine taps in one chain made
/// each 16 outputs wait 9 FMA latencies), the first from the fill's value, each other
/// from its first product, the chains summed at the end.
pub(super) fn window_vector(
    b: &mut OpBuilder<'_>,
    (xf, zero): (Value, Value),
    j: Value,
    sp: &Splats<'_>,
    per_chain: usize,
) -> Value {
    let vty = Type::vector(vec![sp.lanes], b.ir.value_type(zero));
    let mut chains = vec![];
    for (c, row) in sp.taps.chunks(per_chain).enumerate() {
        let mut acc = (c == 0).then_some(sp.acc0);
        for (off, t) in row {
            let at = add_const(b, j, *off);
            let xv = read(b, xf, &[at], sp.lanes, zero);
            acc = Some(match acc {
                Some(a) => b.value(ops::vector::FmaOp::NAME, vec![xv, *t, a], vty, &[]),
                None => b.value(ops::arith::MulfOp::NAME, vec![xv, *t], vty, &[]),
            });
        }
        chains.extend(acc);
    }
    let mut acc = chains.first().copied().unwrap_or(sp.acc0);
    for r in chains.iter().skip(1) {
        acc = b.value(ops::arith::AddfOp::NAME, vec![acc, *r], vty, &[]);
    }
    match &sp.extra {
        Some((s, ins)) => consume(b, s, ins, (acc, sp.lanes)),
        None => acc,
    }
}

#[cfg(test)]
mod tests {
    use super::super::rows::row_vectors;
    use super::super::Dim;
    use super::{geometry_of, pair_blocks};

    /// The buffer of phases as `geometry_of` lays it out, simulated: which image position
    /// (or the padding, None) each element holds. Then every tap of every flat position
    /// reads inside it, and every real output's taps read what the window reads.
    #[test]
    fn phases_read_what_the_window_reads() {
        // Sizes 1-6, kernels 1-3, strides 1-3, dilations 1-2, low padding 0-2, high 0-1.
        // Rows 16-20 wide too: those computed by rows (`by_rows`), their last vector
        // reading past the row.
        let all = Dim::all([1..=6, 1..=3, 1..=3, 1..=2, 0..=2, 0..=1]);
        let wide = Dim::all([16..=20, 1..=3, 1..=2, 1..=2, 0..=2, 0..=1]);
        let mut taken = 0;
        let mut by_rows = 0;
        let cases = all.iter().flat_map(|hd| {
            let wds = all.iter().step_by(7).chain(wide.iter().step_by(5));
            wds.flat_map(move |wd| [(hd, wd, false), (hd, wd, true)])
        });
        for (hd, wd, rows) in cases {
            let Some(g) = geometry_of([*hd, *wd], 4, rows) else {
                continue;
            };
            by_rows += usize::from(g.by_rows);
            if g.by_rows {
                // Every vector of every row reads before position len.
                let last = row_vectors(wd.out).last().map(|v| v.w0 + v.lanes);
                assert_eq!((hd.out - 1) * g.pitch + last.unwrap_or(0), g.len);
            }
            taken += 1;
            let plane = (g.rows * g.pitch) as usize;
            let mut buf = vec![None; plane * g.phases.len()];
            for (p, ph) in g.phases.iter().enumerate() {
                let [(r0, nr), (c0, nc)] = ph.src;
                for i in 0..nr {
                    for j in 0..nc {
                        let at = (ph.at[0] + i) * g.pitch + ph.at[1] + j;
                        assert!(ph.at[0] + i < g.rows && ph.at[1] + j < g.pitch);
                        buf[p * plane + at as usize] = Some((r0 + hd.s * i, c0 + wd.s * j));
                    }
                }
            }
            for t in &g.taps {
                assert!(
                    (t + g.len - 1) < buf.len() as i64,
                    "{hd:?} {wd:?}: tap {t} reads past the buffer"
                );
            }
            let mut t = 0;
            for r in 0..hd.k {
                for s in 0..wd.k {
                    for h in 0..hd.out {
                        for w in 0..wd.out {
                            let (ph, pw) =
                                (h * hd.s + r * hd.d - hd.low, w * wd.s + s * wd.d - wd.low);
                            let want = (ph >= 0 && ph < hd.size && pw >= 0 && pw < wd.size)
                                .then_some((ph, pw));
                            let got = buf[(g.taps[t] + h * g.pitch + w) as usize];
                            assert_eq!(got, want, "{hd:?} {wd:?}: tap ({r}, {s}) at ({h}, {w})");
                        }
                    }
                    t += 1;
                }
            }
        }
        assert!(taken > 10_000, "only {taken} geometries taken");
        assert!(by_rows > 1_000, "only {by_rows} geometries by rows");
    }

    /// Each block of a stride-2 phase row reads inside the image row, and the lanes it
    /// keeps are the row's elements `[end - lanes, end)`, every element once at least.
    #[test]
    fn pair_blocks_stay_in_the_row() {
        for width in 1..80 {
            for c0 in 0..2.min(width) {
                let n = (width - 1 - c0) / 2 + 1;
                let mut seen = vec![false; n as usize];
                for (end, lanes, odd) in pair_blocks(n, c0, width) {
                    assert!(end <= n && lanes <= end);
                    let start = if lanes == 1 {
                        c0 + 2 * (end - 1)
                    } else if odd {
                        c0 + 2 * (end - 1) - (2 * lanes - 1)
                    } else {
                        c0 + 2 * (end - lanes)
                    };
                    let span = if lanes == 1 { 1 } else { 2 * lanes };
                    assert!(
                        start >= 0 && start + span <= width,
                        "width {width} c0 {c0}: block ({end}, {lanes}, {odd})"
                    );
                    for m in 0..lanes {
                        let lane = if lanes == 1 {
                            0
                        } else {
                            2 * m + i64::from(odd)
                        };
                        assert_eq!(start + lane, c0 + 2 * (end - lanes + m));
                        seen[(end - lanes + m) as usize] = true;
                    }
                }
                assert!(seen.iter().all(|s| *s), "width {width} c0 {c0}");
            }
        }
    }
}
