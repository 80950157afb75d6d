//! The flat form of a stride-1 window op on one plane (option `flat`): the plane padded
//! once, viewed as one dimension, and the window op as a `linalg.generic` over that
//! dimension.
//!
//! Row `h` of the padded plane starts at `h * P` (`P` the padded width), so output
//! `(h, w)` reads `xp[(h + r*dh) * P + w + s*dw] = xp[i + r*dh*P + s*dw]` with `i = h * P + w`:
//! one index, contiguous in `i`, for every output of the plane at once. Computing every
//! `i < L` (`L = OH * P` rounded up to a multiple of 16, the plane padded with rows
//! below it so every read stays inside) also computes `P - OW` values per row that
//! nothing reads (they straddle two rows), and the plane's consumer, or a copy, reads
//! `y[h * P + w]` for the real ones:
//!
//! ```mlir
//! %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 2, 1]          // 1x1x14x14 -> 1x1x17x16
//! %xf = tensor.collapse_shape %xp [[0, 1, 2, 3]]                  // -> 272
//! %y = linalg.generic {indexing_maps = [(i, r, s) -> (i + r * 16 + s), (i, r, s) -> (0, r, s),
//!                      (i, r, s) -> (i)], iterator_types = [parallel, reduction, reduction]}
//!        ins(%xf, %f : tensor<272xf32>, tensor<1x3x3xf32>) outs(%fill : tensor<224xf32>)
//! %e = linalg.generic (the consumer, reading %y through (n, c, h, w) -> (h * 16 + w))
//! ```
//!
//! Each output still sums its window in the op's order from the same init, over the same
//! values (a real output's window never wraps: `w + s*dw < OW + (KW-1)*dw = P`), so the
//! results are the pieces' bit for bit. What changes is the loop LLVM vectorizes: the
//! pieces' interior runs `OW - 2` iterations per row (12 on a 14x14 plane, 5 on 7x7: scalar
//! code, and the strips are scalar too); the flat loop runs `L` (224, 64) in full vectors.

use super::Window;
use crate::tensor_build::{fill_into, generic};
use ftuner_dialects::linalg::body;
use ftuner_dialects::ops;
use ftuner_ir::{AffineExpr, AffineMap, Attribute, OpBuilder, OpId, Type, Value};

/// Lanes the flat length is rounded up to (a 512-bit vector of f32; a multiple of the
/// narrower ones).
pub(super) const LANES: i64 = 16;

/// The flat geometry of a stride-1 window: padded width `pitch`, computed length `len`,
/// rows of the padded plane `rows`, and the padding of the plane (`[low, high]` of rows,
/// then of columns).
pub(super) struct Flat {
    pub(super) pitch: i64,
    len: i64,
    rows: i64,
    /// `dh * P`: the flat distance between a window's rows.
    row_step: i64,
    pad: [[i64; 2]; 2],
}

/// The flat form of `w`, when it has one: unit strides, and sizes whose products stay
/// small (a padded plane of at most 2^24 elements).
pub(super) fn geometry(w: &Window) -> Option<Flat> {
    let [hd, wd] = w.dims;
    if hd.s != 1 || wd.s != 1 {
        return None;
    }
    let pitch = wd.size.checked_add(wd.low)?.checked_add(wd.high)?;
    let padded_rows = hd.size.checked_add(hd.low)?.checked_add(hd.high)?;
    let len = hd.out.checked_mul(pitch)?.checked_add(LANES - 1)? / LANES * LANES;
    // The last computed position reads `len - 1 + (KH-1)*dh*P + (KW-1)*dw`. (A
    // dilation is not bounded when its kernel dim is 1: `dh * P` is checked on its own.)
    let row_step = hd.d.checked_mul(pitch)?;
    let reach = len
        .checked_add((hd.k - 1).checked_mul(row_step)?)?
        .checked_add((wd.k - 1).checked_mul(wd.d)?)?;
    // At least the padded rows (`reach` exceeds them: `len >= OH * P`).
    let rows = reach.checked_add(pitch - 1)? / pitch;
    if rows.checked_mul(pitch)? > 1 << 24 {
        return None;
    }
    Some(Flat {
        pitch,
        len,
        rows,
        row_step,
        pad: [[hd.low, hd.high + (rows - padded_rows)], [wd.low, wd.high]],
    })
}

/// The window op `op` on plane `x` (`1 x 1 x H x W`) with filter `f` (its plane, or the
/// pooling's window shape), from `fill`'s value: the flat result, `g.len` values of
/// which `h * pitch + w` is output `(h, w)`.
pub(super) fn compute(
    b: &mut OpBuilder<'_>,
    op: OpId,
    w: &Window,
    g: &Flat,
    x: Value,
    f: Value,
    fill: OpId,
) -> Result<Value, String> {
    use ops::tensor;
    let elem = w.elem;
    // The padded plane, then one dimension.
    let pad = b.ir.clone_op(w.pad, &mut Default::default());
    b.ir.set_operands(pad, vec![x]);
    let [[rl, rh], [cl, ch]] = g.pad;
    for (name, v) in [
        ("static_low", [0, 0, rl, cl]),
        ("static_high", [0, 0, rh, ch]),
    ] {
        b.ir.set_prop(pad, name, Some(Attribute::dense_i64_array(&v)));
    }
    let xp = b.ir.result(pad, 0);
    b.ir.set_value_type(xp, Type::tensor(vec![1, 1, g.rows, g.pitch], elem));
    b.place(pad);
    let xf = b.value(
        tensor::CollapseShapeOp::NAME,
        vec![xp],
        Type::tensor(vec![g.rows * g.pitch], elem),
        &[(
            "reassociation",
            ftuner_dialects::tensor::reassociation_attr(&[&[0, 1, 2, 3]]),
        )],
    );
    let empty = b.value(
        tensor::EmptyOp::NAME,
        vec![],
        Type::tensor(vec![g.len], elem),
        &[],
    );
    let init = fill_into(b, fill, empty);
    // (i, r, s): i + r*dh*P + s*dw; the filter at (0, r, s) or the window at (r, s).
    let wd = w.dims[1];
    let (i, r, s) = (AffineExpr::dim(0), AffineExpr::dim(1), AffineExpr::dim(2));
    let read = i.clone()
        + r.clone() * AffineExpr::constant(g.row_step)
        + s.clone() * AffineExpr::constant(wd.d);
    let frank = b.ir.value_type(f).shape().map_or(0, <[i64]>::len);
    let fmap = if frank == 3 {
        vec![AffineExpr::constant(0), r, s]
    } else {
        vec![r, s]
    };
    let maps = [
        AffineMap::new(3, 0, vec![read]),
        AffineMap::new(3, 0, fmap),
        AffineMap::new(3, 0, vec![i]),
    ];
    let name = b.ir.name(op).to_string();
    let unsigned = body::casts_unsigned(b.ir.attr(op, "cast"));
    let iters = ["parallel", "reduction", "reduction"];
    generic(b, (&[xf, f], init), &maps, &iters, (&name, unsigned))
}

/// The map reading output `(n, c, h, w)` of a plane from its flat result.
pub(super) fn reader(pitch: i64) -> AffineMap {
    AffineMap::new(
        4,
        0,
        vec![AffineExpr::dim(2) * AffineExpr::constant(pitch) + AffineExpr::dim(3)],
    )
}

/// The plane (`out`'s type, `1 x 1 x OH x OW`) copied out of flat result `y` into `out`.
pub(super) fn unflatten(
    b: &mut OpBuilder<'_>,
    y: Value,
    pitch: i64,
    out: Value,
) -> Result<Value, String> {
    let maps = [reader(pitch), AffineMap::identity(4)];
    generic(
        b,
        (&[y], out),
        &maps,
        &["parallel"; 4],
        ("linalg.copy", false),
    )
}
