//! The plane loop of `peel-padded-windows`: the pieces of a window op over one
//! `(image, channel)` plane at a time, with the op's elementwise consumer.
//!
//! ```mlir
//! %r = scf.for %c = %c0 to %cC step %c1 iter_args(%ac = %init) -> (tensor<?xCxOHxOWxf32>) {
//!   %r1 = scf.for %n = %c0 to %N step %c1 iter_args(%an = %ac) -> (tensor<?xCxOHxOWxf32>) {
//!     %x = tensor.extract_slice %image[%n, %c, 0, 0] [1, 1, H, W] [1, 1, 1, 1]
//!     %f = tensor.extract_slice %filter[%c, 0, 0] [1, KH, KW] [1, 1, 1]
//!     %o = linalg.fill ins(%zero) outs(tensor.empty() : tensor<1x1xOHxOWxf32>)
//!     ... the interior and border pieces on %x, %f into %o, static shapes ...
//!     %e = linalg.generic (the consumer) ins(%pieces, %bn[%c] ...) outs(tensor.empty())
//!     %u = tensor.insert_slice %e into %an[%n, %c, 0, 0] [1, 1, OH, OW] [1, 1, 1, 1]
//!     scf.yield %u
//!   }
//!   scf.yield %r1
//! } {ftuner.parallel}
//! ```
//!
//! Over the whole tensor, each pass of a depthwise conv went through memory: the init's fill,
//! the interior reading the init back and writing, the strips, then the consumer (BatchNorm
//! and ReLU6 in MobileNetV2) reading it all again and writing its result. A plane (12-50
//! KiB) stays in L1/L2 from its fill to the consumer; what is read and written in memory
//! is the image once and the result once. The channel loop runs on the thread pool.

use super::bands::Band;
use super::flat::Flat;
use super::separable::Sep;
use super::{erase, pieces, Operands, Region, Window};
use crate::nchw_consumer::{Consumer, Input};
use crate::tensor_build::{check_batch, extract, fill_into, filled, for_loop, insert, Off};
use ftuner_dialects::linalg::body::indexing_maps;
use ftuner_dialects::ops;
use ftuner_ir::{
    AffineExpr, AffineMap, Attribute, InsertPoint, Ir, OpBuilder, OpId, Type, Value, DYNAMIC,
};

/// The channels of a plane loop are split into this many chunks (at most), run on the
/// thread pool: each chunk allocates its planes' buffers once (`bufferize` hoists them
/// out of the serial loops inside it), where a parallel loop over single channels
/// allocated and freed them per plane (MobileNetV2 batch 1: 15% of the time in malloc and
/// free).
const CHANNEL_CHUNKS: i64 = 16;

/// The consumer's per-channel operands can be sliced to one channel (static sizes).
pub(super) fn sliceable(ir: &Ir, s: &Consumer) -> bool {
    s.ins.iter().all(|i| match i {
        // A scalar is passed as it is.
        Input::Channel(v, _) => ir
            .value_type(*v)
            .shape()
            .is_none_or(|sh| !sh.contains(&DYNAMIC)),
        _ => true,
    })
}

/// `v` (read by the consumer through `map`, by channel and constants) at channel `c`.
fn channel_slice(b: &mut OpBuilder<'_>, v: Value, map: &ftuner_ir::AffineMap, c: Value) -> Value {
    let shape = b.ir.value_type(v).shape().unwrap_or(&[]).to_vec();
    if shape.is_empty() || !b.ir.value_type(v).is_tensor() {
        return v;
    }
    let (offs, sizes): (Vec<Off>, Vec<i64>) = map
        .results
        .iter()
        .zip(&shape)
        .map(|(e, d)| match e {
            AffineExpr::Dim(1) => (Off::At(c), 1),
            _ => (Off::Const(0), *d),
        })
        .unzip();
    extract(b, v, &offs, &sizes)
}

/// The consumer over one plane, reading the plane's result `r` (`1 x 1 x OH x OW`, or
/// flat through `flat_map`) and writing `out` (the plane's slice of the loop's result:
/// bufferized, it writes there).
fn consumer_on_plane(
    b: &mut OpBuilder<'_>,
    s: &Consumer,
    r: Value,
    flat_map: Option<AffineMap>,
    nc: [Value; 2],
    out: Value,
) -> Value {
    let plane = b.ir.value_type(out);
    let sizes = plane.shape().unwrap_or(&[]).to_vec();
    let mut maps = indexing_maps(b.ir, s.g).unwrap_or_default();
    let mut ins = vec![];
    for (how, map) in s.ins.iter().zip(maps.iter_mut()) {
        ins.push(match how {
            Input::Producer => {
                if let Some(m) = &flat_map {
                    *map = m.clone();
                }
                r
            }
            Input::Element(v) => {
                let offs = [Off::At(nc[0]), Off::At(nc[1]), Off::Const(0), Off::Const(0)];
                extract(b, *v, &offs, &sizes)
            }
            Input::Channel(v, _) => channel_slice(b, *v, map, nc[1]),
        });
    }
    ins.push(out);
    let g = b.ir.clone_op(s.g, &mut Default::default());
    b.ir.set_operands(g, ins);
    if flat_map.is_some() {
        let maps = Attribute::array(maps.into_iter().map(Attribute::affine_map).collect());
        b.ir.set_inherent(g, "indexing_maps", maps);
    }
    let out = b.ir.result(g, 0);
    b.ir.set_value_type(out, plane);
    b.place(g);
    out
}

/// How a plane is computed.
pub(super) enum Form {
    /// The interior and border strips, each the window op on slices.
    Pieces,
    /// The generic flat form (a stride-1 op whose init is a fill).
    Flat(Flat),
    /// In vectors over the phase planes, whole or in bands of output rows (a depthwise
    /// conv of f32 whose init is a fill).
    Vector(Vec<Band>),
    /// In two passes of vectors per output row (a max pooling of f32 whose init is a fill).
    Separable(Sep),
}

/// Rewrite window op `op` (and its consumer `sink`) as the plane loop, each plane in
/// `form` (a form other than pieces only when the op's init is a fill).
pub(super) fn rewrite(
    ir: &mut Ir,
    op: OpId,
    w: &Window,
    regions: &[Region],
    sink: Option<Consumer>,
    form: Form,
) -> Result<(), String> {
    let (at, res) = match &sink {
        Some(s) => (s.g, ir.result(s.g, 0)),
        None => (op, ir.result(op, 0)),
    };
    let rt = ir.value_type(res);
    let os = rt.shape().unwrap_or(&[]).to_vec();
    let (c, oh, ow) = (os[1], os[2], os[3]);
    let (h, wd) = (w.dims[0].size, w.dims[1].size);
    let plane = Type::tensor(vec![1, 1, oh, ow], w.elem);
    let fill = filled(ir, w.o);
    let form = match (form, fill) {
        (Form::Pieces, _) | (_, None) => Form::Pieces,
        (f, Some(_)) => f,
    };
    // The loops carry the result: the consumer's output, or the op's init (a filled init's
    // destination: each plane is filled on its own).
    let carried = match (&sink, fill) {
        (Some(s), _) => s.init,
        (None, Some((_, _, e))) => e,
        (None, None) => w.o,
    };
    // What the loops read per plane besides the image, each of the image's batch: the
    // carried result, the op's init when it is read as it is, the consumer's per-element
    // operands. (The ops checked their batches against each other, and they are gone.)
    let mut batched = vec![carried];
    if fill.is_none() && sink.is_some() {
        batched.push(w.o);
    }
    for i in sink.iter().flat_map(|s| &s.ins) {
        if let Input::Element(v) = i {
            batched.push(*v);
        }
    }
    let mut b = OpBuilder::before(ir, at);
    let c0 = b.index(0);
    let n = b.value(ops::tensor::DimOp::NAME, vec![w.x, c0], Type::index(), &[]);
    for v in batched {
        let what = "the image and an operand of the plane loop have different batch sizes";
        check_batch(&mut b, op, w.x, n, v, what);
    }
    // Chunks of channels on the thread pool; in each, its channels and images one by one.
    let chunks = c.min(CHANNEL_CHUNKS);
    let kk = b.index(chunks);
    let (outer, ki, ak) = for_loop(&mut b, c0, kk, carried);
    b.ir.set_attr(
        outer,
        ftuner_dialects::scf::PARALLEL_ATTR,
        Some(Attribute::unit()),
    );
    let bound = |b: &mut OpBuilder<'_>, k: Value| {
        let (cc, kk) = (b.index(c), b.index(chunks));
        let kc = b.value(ops::arith::MuliOp::NAME, vec![k, cc], Type::index(), &[]);
        b.value(ops::arith::DivuiOp::NAME, vec![kc, kk], Type::index(), &[])
    };
    let lo = bound(&mut b, ki);
    let c1 = b.index(1);
    let k1 = b.value(ops::arith::AddiOp::NAME, vec![ki, c1], Type::index(), &[]);
    let hi = bound(&mut b, k1);
    let (mid, ci, ac) = for_loop(&mut b, lo, hi, ak);
    let (inner, ni, an) = for_loop(&mut b, c0, n, ac);
    let at_nc = [Off::At(ni), Off::At(ci), Off::Const(0), Off::Const(0)];
    let x = extract(&mut b, w.x, &at_nc, &[1, 1, h, wd]);
    let f = if b.ir.name(op) == ops::linalg::DepthwiseConv2dNchwChwOp::NAME {
        let fs = b.ir.value_type(w.f).shape().unwrap_or(&[]).to_vec();
        extract(
            &mut b,
            w.f,
            &[Off::At(ci), Off::Const(0), Off::Const(0)],
            &[1, fs[1], fs[2]],
        )
    } else {
        w.f
    };
    // The plane's slice of the loops' result. Without a consumer the pieces write there
    // (a filled init is filled there first); with one, into a plane of their own, and
    // the consumer writes there.
    let out = extract(&mut b, an, &at_nc, &[1, 1, oh, ow]);
    // The fill's value (a form other than pieces has a filled init).
    let init = fill.map(|(_, v, _)| v);
    let sink_c = sink.as_ref().map(|s| (s, ci));
    let r = if let (Form::Vector(g), Some(init)) = (&form, init) {
        super::bands::planes(&mut b, w, g, (x, f), init, sink_c, out)?
    } else if let (Form::Separable(g), Some(init)) = (&form, init) {
        super::separable::plane(&mut b, w, g, x, init, sink_c, out)?
    } else if let (Form::Flat(g), Some((fop, _, _))) = (&form, fill) {
        let y = super::flat::compute(&mut b, op, w, g, x, f, fop)?;
        match &sink {
            Some(s) => {
                let m = super::flat::reader(g.pitch);
                consumer_on_plane(&mut b, s, y, Some(m), [ni, ci], out)
            }
            None => super::flat::unflatten(&mut b, y, g.pitch, out)?,
        }
    } else {
        let o = match (fill, &sink) {
            (Some((f, _, _)), Some(_)) => {
                let empty = b.value(ops::tensor::EmptyOp::NAME, vec![], plane, &[]);
                fill_into(&mut b, f, empty)
            }
            (Some((f, _, _)), None) => fill_into(&mut b, f, out),
            (None, Some(_)) => extract(&mut b, w.o, &at_nc, &[1, 1, oh, ow]),
            (None, None) => out,
        };
        let p = Operands {
            x,
            f,
            o,
            nc: [1, 1],
            n: None,
        };
        let r = pieces(&mut b, op, w, regions, &p);
        match &sink {
            Some(s) => consumer_on_plane(&mut b, s, r, None, [ni, ci], out),
            None => r,
        }
    };
    let u = insert(&mut b, r, an, &at_nc, &[1, 1, oh, ow]);
    b.create(ops::scf::YieldOp::NAME, vec![u], vec![], &[]);
    for lp in [inner, mid] {
        let r = b.ir.result(lp, 0);
        let at_end = b.ir.parent_block(lp).expect("the loop is placed");
        OpBuilder::at_end(b.ir, at_end, b.loc).create(
            ops::scf::YieldOp::NAME,
            vec![r],
            vec![],
            &[],
        );
    }
    b.at = InsertPoint::Before(at);
    let out = b.ir.result(outer, 0);
    b.ir.replace_all_uses(res, out);
    if let Some(s) = sink {
        b.ir.erase_op(s.g);
    }
    erase(b.ir, op, w);
    Ok(())
}
