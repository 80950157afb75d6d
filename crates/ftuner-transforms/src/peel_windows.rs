//! `peel-padded-windows`: a depthwise convolution or a pooling (NCHW) over a `tensor.pad`
//! of its image is split by output region: the interior, whose windows lie inside the
//! image, reads a slice of the image itself; only the border strips (the output rows
//! above and below it, the columns left and right of it) read small pads of the few image
//! rows or columns they need.
//!
//! ```mlir
//! %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] { ... } : tensor<?x96x56x56xf32> to tensor<?x96x58x58xf32>
//! %r = linalg.depthwise_conv_2d_nchw_chw ins(%p, %w ...) outs(%o : tensor<?x96x56x56xf32>)
//! ```
//! becomes, for the interior rows/columns `[1, 55)`,
//! ```mlir
//! %xi = tensor.extract_slice %x[0, 0, 0, 0] [%n, 96, 56, 56] [1, 1, 1, 1]
//! %oi = tensor.extract_slice %o[0, 0, 1, 1] [%n, 96, 54, 54] [1, 1, 1, 1]
//! %ri = linalg.depthwise_conv_2d_nchw_chw ins(%xi, %w ...) outs(%oi ...)
//! %o1 = tensor.insert_slice %ri into %o[0, 0, 1, 1] [%n, 96, 54, 54] [1, 1, 1, 1]
//! ```
//! and four such strips (top, bottom: every column; left, right: the interior rows), each
//! over a pad of its image slice (`[%n, 96, 2, 56]` padded to `[%n, 96, 3, 58]` for the top
//! row). Bufferized, the pieces write their slices of the output in place and the image is
//! read where it is: the padded copy of the whole activation (a fill, a copy, and the
//! conv reading it back: MobileNetV2 pads the input of each of its 17 depthwise convs) is
//! gone; what is padded is 2-4 rows or columns per channel.
//!
//! By default (option `planes`) the pieces run per `(image, channel)` plane, with the op's
//! elementwise consumer applied to each plane right after them ([`planes`]); the form
//! above, over the whole tensor, is `planes=false`. Per plane, a stride-1 op whose init
//! is a fill runs in its flat form instead of pieces (option `flat`, [`flat`]), and a
//! depthwise conv of f32 whose init is a fill, of any stride, in vectors over its phase
//! planes with its consumer in registers (option `vector`, [`flat_vector`]; a large plane
//! in bands of output rows, [`bands`]), and a max
//! pooling of f32 whose init is a fill, at a column stride of 1 or 2, in two passes of
//! vectors per output row, over the window's rows then its columns (option `separable`,
//! [`separable`]); an op whose image has no interior (or whose strip would read only
//! padding) is left alone either way.

mod bands;
mod flat;
mod flat_vector;
mod planes;
mod rows;
mod separable;

use crate::nchw_consumer::consumer;
use ftuner_dialects::linalg::{body, ins_outs};
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, Ir, OpBuilder, OpId, Type, Value, DYNAMIC};
use ftuner_pass::{define_pass, PassContext, PassFailure};

/// A window op over a padded image, with everything static past the batch.
#[derive(Clone)]
struct Window {
    /// The pad's source (`N x C x H x W`), the pad op.
    x: Value,
    pad: OpId,
    /// Filter or window shape operand, the output init.
    f: Value,
    o: Value,
    /// Per spatial dim: image size, output size, kernel size, stride, dilation, low and
    /// high padding.
    dims: [Dim; 2],
    elem: Type,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Dim {
    size: i64,
    out: i64,
    k: i64,
    s: i64,
    d: i64,
    low: i64,
    high: i64,
}

impl Dim {
    /// Output positions `[lo, hi)` whose windows lie inside the image.
    fn interior(&self) -> (i64, i64) {
        // `matches` checked that these products fit (the op's shapes agree).
        let span = (self.k - 1) * self.d;
        let lo = if self.low == 0 {
            0
        } else {
            (self.low - 1) / self.s + 1
        };
        let last = self.size - 1 + self.low - span;
        let hi = if last < 0 { 0 } else { last / self.s + 1 };
        (lo.min(self.out), hi.min(self.out))
    }

    /// For output positions `[a, b)`: the image positions read `[start, end)` clipped to
    /// the image, and the padding below and above them.
    fn reads(&self, a: i64, b: i64) -> (i64, i64, i64, i64) {
        let start = a * self.s - self.low;
        let end = (b - 1) * self.s - self.low + (self.k - 1) * self.d + 1;
        let (lo, hi) = ((-start).max(0), (end - self.size).max(0));
        (start.max(0), end.min(self.size), lo, hi)
    }
}

#[cfg(test)]
impl Dim {
    /// Every window dim with an output over ranges of `[size, k, s, d, low, high]` (the
    /// forms' geometry tests).
    fn all(r: [std::ops::RangeInclusive<i64>; 6]) -> Vec<Dim> {
        let mut out = vec![];
        for size in r[0].clone() {
            for k in r[1].clone() {
                for s in r[2].clone() {
                    for d in r[3].clone() {
                        for low in r[4].clone() {
                            for high in r[5].clone() {
                                let (padded, span) = (size + low + high, (k - 1) * d + 1);
                                if padded >= span {
                                    let o = (padded - span) / s + 1;
                                    out.push(Dim {
                                        size,
                                        out: o,
                                        k,
                                        s,
                                        d,
                                        low,
                                        high,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

/// The window ops this pass splits: image operand 0, kernel shape from operand 1's last two
/// dims (the depthwise filter `C x KH x KW`, the pooling window `KH x KW`).
const WINDOW_OPS: [&str; 3] = [
    ops::linalg::DepthwiseConv2dNchwChwOp::NAME,
    ops::linalg::PoolingNchwMaxOp::NAME,
    ops::linalg::PoolingNchwSumOp::NAME,
];

fn pair(ir: &Ir, op: OpId, name: &str) -> Option<[i64; 2]> {
    let v = body::ints(ir, op, name, 2);
    v.iter().all(|x| *x >= 1).then_some([v[0], v[1]])
}

fn matches(ir: &Ir, op: OpId) -> Option<Window> {
    if !WINDOW_OPS.contains(&ir.name(op)) || ir.results(op).len() != 1 {
        return None;
    }
    let (ins, outs) = ins_outs(ir, op);
    let (&[p, f], &[o]) = (ins.as_slice(), outs.as_slice()) else {
        return None;
    };
    let pad = ir
        .defining_op(p)
        .filter(|d| ir.name(*d) == ops::tensor::PadOp::NAME)?;
    // Static padding of the spatial dims only, a padding value that does not depend on the
    // position, and no other reader of the padded image (it would stay, and the strips'
    // pads come on top). The window's maps are its strides and dilations (no explicit
    // or memoized `indexing_maps` saying otherwise).
    if ir.operands(pad).len() != 1
        || ir.uses(p).len() != 1
        || ftuner_dialects::tensor::pad_value(ir, pad).is_none()
        || body::indexing_maps(ir, op) != body::definition_maps(ir, op)
    {
        return None;
    }
    let arr = |a: &str| ir.attr(pad, a).and_then(|x| x.as_dense_i64s());
    let (low, high) = (arr("static_low")?, arr("static_high")?);
    if low.len() != 4 || high.len() != 4 || low[..2] != [0, 0] || high[..2] != [0, 0] {
        return None;
    }
    let x = ir.operand(pad, 0);
    let (xt, ft, ot) = (ir.value_type(x), ir.value_type(f), ir.value_type(o));
    let (xs, fs, os) = (xt.shape()?, ft.shape()?, ot.shape()?);
    let elem = ot.element_type();
    if xs.len() != 4
        || os.len() != 4
        || fs.len() < 2
        || xs[1..].contains(&DYNAMIC)
        || os[1..].contains(&DYNAMIC)
        || fs.contains(&DYNAMIC)
        || xs[1] != os[1]
        || xt.element_type() != elem
        || ir.value_type(ir.result(op, 0)) != ot
        || !xt.is_tensor()
    {
        return None;
    }
    let (s, d) = (pair(ir, op, "strides")?, pair(ir, op, "dilations")?);
    let k = [fs[fs.len() - 2], fs[fs.len() - 1]];
    let dim = |i: usize| Dim {
        size: xs[2 + i],
        out: os[2 + i],
        k: k[i],
        s: s[i],
        d: d[i],
        low: low[2 + i],
        high: high[2 + i],
    };
    let dims = [dim(0), dim(1)];
    // The op's own shapes must agree (the verifier says so; the arithmetic relies on it).
    // In i128: strides and dilations are not bounded by the verifier when the batch is
    // dynamic, and the arithmetic below relies on the agreement.
    let agrees = dims.iter().all(|m| {
        let w = |x: i64| x as i128;
        let padded = w(m.size) + w(m.low) + w(m.high);
        let span = (w(m.k) - 1) * w(m.d);
        m.low >= 0
            && m.high >= 0
            && m.k >= 1
            && padded < w(i64::MAX / 4)
            && span < w(i64::MAX / 4)
            && padded > span
            && (padded - span - 1).div_euclid(w(m.s)) + 1 == w(m.out)
    });
    agrees.then_some(Window {
        x,
        pad,
        f,
        o,
        dims,
        elem,
    })
}

/// Props of a 4-d slice at `[0, 0, offs]` of sizes `[N, C, sizes]` (`N` an operand when
/// it is `DYNAMIC`), unit strides; `leading` operands (source, and dest for an insert)
/// first.
fn slice_props(
    offs: [i64; 2],
    [n, c]: [i64; 2],
    sizes: [i64; 2],
    leading: i32,
) -> Vec<(&'static str, Attribute)> {
    let mut segs = vec![1; leading as usize];
    segs.extend([0, i32::from(n == DYNAMIC), 0]);
    vec![
        (
            "static_offsets",
            Attribute::dense_i64_array(&[0, 0, offs[0], offs[1]]),
        ),
        (
            "static_sizes",
            Attribute::dense_i64_array(&[n, c, sizes[0], sizes[1]]),
        ),
        ("static_strides", Attribute::dense_i64_array(&[1, 1, 1, 1])),
        ("operandSegmentSizes", Attribute::dense_i32_array(&segs)),
    ]
}

/// Output regions `(rows, cols)`: the interior first, then the strips around it.
type Region = ([i64; 2], [i64; 2]);

fn regions(w: &Window) -> Option<Vec<Region>> {
    let [(h0, h1), (w0, w1)] = [w.dims[0].interior(), w.dims[1].interior()];
    if h0 >= h1 || w0 >= w1 {
        return None;
    }
    let (oh, ow) = (w.dims[0].out, w.dims[1].out);
    let all = [
        ([h0, h1], [w0, w1]),
        ([0, h0], [0, ow]),
        ([h1, oh], [0, ow]),
        ([h0, h1], [0, w0]),
        ([h0, h1], [w1, ow]),
    ];
    let out: Vec<Region> = all
        .into_iter()
        .filter(|(r, c)| r[0] < r[1] && c[0] < c[1])
        .collect();
    // Each piece reads at least one image row and column (not padding alone).
    let reads_image = |m: &Dim, [a, b]: [i64; 2]| {
        let (s, e, _, _) = m.reads(a, b);
        s < e
    };
    out.iter()
        .all(|(r, c)| reads_image(&w.dims[0], *r) && reads_image(&w.dims[1], *c))
        .then_some(out)
}

/// What the pieces of one window op read and write: the image, the filter (or window
/// shape), the init, the leading sizes `[N, C]` of each piece (`N` may be `DYNAMIC`, then
/// `n` is the run-time batch).
struct Operands {
    x: Value,
    f: Value,
    o: Value,
    nc: [i64; 2],
    n: Option<Value>,
}

/// The pieces of window op `op` (one per region) at the builder's insertion point, each
/// written into its slice of `p.o`: the assembled result.
fn pieces(b: &mut OpBuilder<'_>, op: OpId, w: &Window, regions: &[Region], p: &Operands) -> Value {
    use ops::tensor;
    let t4 = |h: i64, wd: i64| Type::tensor(vec![p.nc[0], p.nc[1], h, wd], w.elem);
    let with_n = |lead: &[Value]| lead.iter().chain(&p.n).copied().collect::<Vec<Value>>();
    let mut acc = p.o;
    for (rows, cols) in regions {
        let (rs, re, rlo, rhi) = w.dims[0].reads(rows[0], rows[1]);
        let (cs, ce, clo, chi) = w.dims[1].reads(cols[0], cols[1]);
        let mut img = b.value(
            tensor::ExtractSliceOp::NAME,
            with_n(&[p.x]),
            t4(re - rs, ce - cs),
            &slice_props([rs, cs], p.nc, [re - rs, ce - cs], 1),
        );
        if rlo + rhi + clo + chi > 0 {
            let pad = b.ir.clone_op(w.pad, &mut Default::default());
            b.ir.set_operands(pad, vec![img]);
            b.ir.set_prop(
                pad,
                "static_low",
                Some(Attribute::dense_i64_array(&[0, 0, rlo, clo])),
            );
            b.ir.set_prop(
                pad,
                "static_high",
                Some(Attribute::dense_i64_array(&[0, 0, rhi, chi])),
            );
            img = b.ir.result(pad, 0);
            let ty = t4(re - rs + rlo + rhi, ce - cs + clo + chi);
            b.ir.set_value_type(img, ty);
            b.place(pad);
        }
        let size = [rows[1] - rows[0], cols[1] - cols[0]];
        let at = [rows[0], cols[0]];
        let out = b.value(
            tensor::ExtractSliceOp::NAME,
            with_n(&[acc]),
            t4(size[0], size[1]),
            &slice_props(at, p.nc, size, 1),
        );
        let piece = b.ir.clone_op(op, &mut Default::default());
        b.ir.set_operands(piece, vec![img, p.f, out]);
        let r = b.ir.result(piece, 0);
        b.ir.set_value_type(r, t4(size[0], size[1]));
        b.place(piece);
        let acc_ty = b.ir.value_type(acc);
        acc = b.value(
            tensor::InsertSliceOp::NAME,
            with_n(&[r, acc]),
            acc_ty,
            &slice_props(at, p.nc, size, 2),
        );
    }
    acc
}

/// The whole op split into pieces over the whole batch and all channels.
fn rewrite(ir: &mut Ir, op: OpId, w: &Window, regions: &[Region]) {
    let res = ir.result(op, 0);
    let (xs, os) = (ir.value_type(w.x), ir.value_type(w.o));
    let (xs, os) = (xs.shape().unwrap_or(&[]), os.shape().unwrap_or(&[]));
    let c = os.get(1).copied().unwrap_or(0);
    // A static batch stays static (the pieces' types keep it); a dynamic one is a
    // `tensor.dim` operand of every slice.
    let batch = match (xs.first(), os.first()) {
        (Some(&x), Some(&o)) if x == o => x,
        _ => DYNAMIC,
    };
    let mut b = OpBuilder::before(ir, op);
    let n = (batch == DYNAMIC).then(|| {
        let c0 = b.index(0);
        b.value(ops::tensor::DimOp::NAME, vec![w.x, c0], Type::index(), &[])
    });
    let p = Operands {
        x: w.x,
        f: w.f,
        o: w.o,
        nc: [batch, c],
        n,
    };
    let acc = pieces(&mut b, op, w, regions, &p);
    b.ir.replace_all_uses(res, acc);
    erase(b.ir, op, w);
}

/// Erase the split op, and its pad when nothing else reads it.
fn erase(ir: &mut Ir, op: OpId, w: &Window) {
    ir.erase_op(op);
    if !ir.has_uses(ir.result(w.pad, 0)) {
        ir.erase_op(w.pad);
    }
}

/// How the planes of window op `op` are computed. A form other than pieces needs an init
/// that is a fill (each plane's result starts from the fill's value): in vectors, a
/// depthwise conv of f32 over its phases; in two passes, a max pooling of f32; else the
/// flat form at stride 1.
fn choose_form(
    ir: &Ir,
    op: OpId,
    w: &Window,
    sink: Option<&crate::nchw_consumer::Consumer>,
    opts: &PeelPaddedWindowsOptions,
) -> planes::Form {
    if crate::tensor_build::filled(ir, w.o).is_none() {
        return planes::Form::Pieces;
    }
    if opts.flat && opts.vector && flat_vector::applies(ir, op, w, sink) {
        if let Some(bands) = bands::bands(w, opts.rows) {
            return planes::Form::Vector(bands);
        }
    }
    if opts.separable && separable::applies(ir, op, w, sink) {
        if let Some(g) = separable::geometry(w) {
            return planes::Form::Separable(g);
        }
    }
    match opts.flat.then(|| flat::geometry(w)).flatten() {
        Some(g) => planes::Form::Flat(g),
        None => planes::Form::Pieces,
    }
}

define_pass! {
    /// `peel-padded-windows`: depthwise convs and poolings over a pad, split by region.
    pub struct PeelPaddedWindowsPass {
        argument: "peel-padded-windows",
        name: "PeelPaddedWindows",
        summary: "Split depthwise convolutions and poolings over a tensor.pad into an interior that reads the image in place and border strips over small pads",
        description: "A linalg.depthwise_conv_2d_nchw_chw, linalg.pooling_nchw_max or linalg.pooling_nchw_sum on tensors whose image is a tensor.pad of the spatial dims (static padding; static channel, spatial, filter and output sizes; the batch may be dynamic) becomes the same op on output slices: the interior, whose windows lie inside the image, over a slice of the unpadded image, and the strips above, below, left and right of it over pads of just the image rows or columns they read, each inserted into the output. The padded copy of the whole image is no longer made. By default the pieces run per (image, channel) plane, in a loop over channels (ftuner.parallel) and images, with the op's one elementwise consumer (read per channel or per element) applied to each plane after its pieces: a plane stays in cache from its init to the consumer. With flat (the default), a stride-1 op whose init is a fill runs over its plane padded once and viewed as one dimension, as a linalg.generic whose every output is one iteration of a loop LLVM vectorizes; with vector (the default) a depthwise conv of f32 (image, filter, output) with a filled init, of any stride, is written in vectors over its phase planes instead of the generic flat form or the pieces, its consumer applied in registers; with separable (the default) a max pooling of f32 with a filled init and a column stride of 1 or 2 is computed per output row in two passes of vectors, over the window's rows then its columns.",
        options: PeelPaddedWindowsOptions {
            "planes" => planes: bool = "true",
                "Run the pieces per (image, channel) plane in a loop over channels and images, each plane's init filled on its own; false: the pieces over the whole tensor";
            "flat" => flat: bool = "true",
                "With planes: a stride-1 window op whose init is a fill runs over its plane padded once and viewed as one dimension, every output in one vectorizable loop, instead of an interior and border strips";
            "vector" => vector: bool = "true",
                "With flat: a depthwise conv of f32 (image, filter and output) with a filled init, of any stride, whose phase planes fit 32 KiB (whole, or in bands of output rows), is written in vectors of 16 flat positions, its consumer (lanewise arith, inputs read per channel) applied in registers before the store (by rows, written into each output row in place; otherwise each output row copied out of the flat result in vectors); false: the flat form as a linalg.generic and the consumer as a second pass over the plane";
            "rows" => rows: bool = "true",
                "With vector: a plane at least 8 outputs wide is computed by output rows, each row's vectors (16 lanes, then one of the next power of two for the rest) written in place into the output, instead of one flat result whose rows are copied out";
            "separable" => separable: bool = "true",
                "With planes: a max pooling of f32 with a filled init, column stride 1 or 2, is computed per output row in two passes of vectors (the maximum over the window's rows into a row buffer, then over its columns), its consumer (lanewise arith, inputs read per channel) applied in registers; false: the flat form at stride 1, pieces otherwise";
            "fuse-consumers" => fuse_consumers: bool = "true",
                "With planes: move the op's one elementwise consumer (read per channel or per element) into the loop, applied to each plane after its pieces";
        },
        statistics: {
            peeled: "num-peeled" => "Window ops rewritten (split into interior and border, or in flat form)",
            consumers: "num-consumers" => "Elementwise consumers moved into the plane loop",
            flat: "num-flat" => "Window ops run in a flat form (the generic one, or in vectors)",
            vector: "num-vector" => "Window ops written in vectors over their phase planes (any stride)",
            separable: "num-separable" => "Max poolings computed in two passes of vectors per output row",
        },
    }
}

impl PeelPaddedWindowsPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        opts: &PeelPaddedWindowsOptions,
    ) -> Result<(), PassFailure> {
        let mut found = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            if matches(cx.ir, o).is_some() {
                found.push(o);
            }
        });
        for o in found {
            let Some(w) = matches(cx.ir, o) else {
                continue;
            };
            let Some(rs) = regions(&w) else {
                continue;
            };
            if !opts.planes {
                rewrite(cx.ir, o, &w, &rs);
                self.peeled += 1;
                continue;
            }
            let sink = opts
                .fuse_consumers
                .then(|| consumer(cx.ir, o))
                .flatten()
                .filter(|s| planes::sliceable(cx.ir, s));
            self.consumers += u64::from(sink.is_some());
            let form = choose_form(cx.ir, o, &w, sink.as_ref(), opts);
            self.flat += u64::from(matches!(
                form,
                planes::Form::Flat(_) | planes::Form::Vector(_)
            ));
            self.vector += u64::from(matches!(form, planes::Form::Vector(_)));
            self.separable += u64::from(matches!(form, planes::Form::Separable(_)));
            let loc = cx.ir.loc(o);
            if let Err(e) = planes::rewrite(cx.ir, o, &w, &rs, sink, form) {
                cx.emit(ftuner_ir::Diagnostic::error(loc, e));
                return Err(PassFailure);
            }
            self.peeled += 1;
        }
        Ok(())
    }
}
