//! A depthwise convolution's plane by output rows (option `rows` of
//! `peel-padded-windows`): the vector form of [`super::flat_vector`] without its flat
//! result.
//!
//! Each output row `h` is computed at flat positions `h*Q + w0` of the buffer of phases
//! (`Q` its row pitch) in vectors of 16 lanes and one of the next power of two for the
//! rest of the row ([`row_vectors`]), each written into the output row in place: the
//! last one's lanes in pieces of 8, 4, 2 and 1 taken out with `vector.shuffle`. Its lanes
//! past the row read the next positions of the buffer (`Geom::len` covers them) and are
//! never written. The flat form stores every output into its flat result, reads it back
//! and stores it again into the output row; by rows it is stored once.

use super::flat::LANES;
use super::flat_vector::{add_const, row_blocks, window_vector, write, Splats};
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, OpBuilder, Type, Value};

/// One vector of a row by rows: `lanes` outputs computed from column `w0`, written as
/// `pieces` `(lane, count)`.
pub(super) struct RowVector {
    pub(super) w0: i64,
    pub(super) lanes: i64,
    pieces: Vec<(i64, i64)>,
}

/// The vectors a row of `n` outputs is computed in by rows: 16 lanes at a time, then the
/// rest in one vector of the next power of two, written in 8/4/2/1-lane pieces.
pub(super) fn row_vectors(n: i64) -> Vec<RowVector> {
    let full = n / LANES * LANES;
    let mut out: Vec<_> = (0..full)
        .step_by(LANES as usize)
        .map(|w0| RowVector {
            w0,
            lanes: LANES,
            pieces: vec![(0, LANES)],
        })
        .collect();
    let rest = n - full;
    if rest > 0 {
        out.push(RowVector {
            w0: full,
            lanes: (rest as u64).next_power_of_two() as i64,
            pieces: row_blocks(rest),
        });
    }
    out
}

/// The plane's `oh` rows of `ow` outputs computed from the buffer of phases `xf` (row
/// pitch `pitch`; `zero` pads its reads) and written into `out` (`1 x 1 x oh x ow`):
/// the updated `out`. `splats` holds the taps at each width [`row_vectors`] takes.
pub(super) fn plane_by_rows(
    b: &mut OpBuilder<'_>,
    (xf, zero): (Value, Value),
    (oh, ow, pitch): (i64, i64, i64),
    splats: &[Splats<'_>],
    per_chain: usize,
    out: Value,
) -> Value {
    let elem = b.ir.value_type(zero);
    let bounds = [b.index(0), b.index(oh), b.index(1)];
    let (rows, h, o) = crate::tensor_build::for_loop_step(b, bounds, out);
    let p = b.index(pitch);
    let base = b.value(ops::arith::MuliOp::NAME, vec![h, p], Type::index(), &[]);
    let z = b.index(0);
    let mut o = o;
    for rv in row_vectors(ow) {
        let sp = splats
            .iter()
            .find(|s| s.lanes == rv.lanes)
            .unwrap_or(&splats[0]);
        let j = add_const(b, base, rv.w0);
        let v = window_vector(b, (xf, zero), j, sp, per_chain);
        for (at, n) in rv.pieces {
            let piece = if n == rv.lanes {
                v
            } else {
                let mask: Vec<i64> = (at..at + n).collect();
                b.value(
                    ops::vector::ShuffleOp::NAME,
                    vec![v, v],
                    Type::vector(vec![n], elem),
                    &[("mask", Attribute::dense_i64_array(&mask))],
                )
            };
            let col = b.index(rv.w0 + at);
            o = write(b, piece, o, &[z, z, h, col]);
        }
    }
    b.create(ops::scf::YieldOp::NAME, vec![o], vec![], &[]);
    b.ir.result(rows, 0)
}
