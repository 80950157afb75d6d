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

use super::{erase, pieces, Operands, Region, Window};
use crate::nchw_consumer::{Consumer, Input};
use ftuner_dialects::linalg::{body, ins_outs};
use ftuner_dialects::ops;
use ftuner_ir::{
    intern_name, AffineExpr, Attribute, InsertPoint, Ir, OpBuilder, OpId, OpSpec, Type, Value,
    DYNAMIC,
};

/// The channels of a plane loop are split into this many chunks (at most), run on the
/// thread pool: each chunk allocates its planes' buffers once (`bufferize` hoists them
/// out of the serial loops inside it), where a parallel loop over single channels
/// allocated and freed them per plane (MobileNetV2 batch 1: 15% of the time in malloc and
/// free).
const CHANNEL_CHUNKS: i64 = 16;

/// An offset of a slice: a run-time value or a constant.
#[derive(Clone, Copy)]
enum Off {
    At(Value),
    Const(i64),
}

/// Props and offset operands of a unit-stride slice at `offs` of sizes `sizes`, after
/// `leading` operands (source, and dest for an insert).
fn slice_parts(
    offs: &[Off],
    sizes: &[i64],
    leading: i32,
) -> (Vec<Value>, Vec<(&'static str, Attribute)>) {
    let dynamic: Vec<Value> = offs
        .iter()
        .filter_map(|o| match o {
            Off::At(v) => Some(*v),
            Off::Const(_) => None,
        })
        .collect();
    let statics: Vec<i64> = offs
        .iter()
        .map(|o| match o {
            Off::At(_) => DYNAMIC,
            Off::Const(k) => *k,
        })
        .collect();
    let mut segs = vec![1; leading as usize];
    segs.extend([dynamic.len() as i32, 0, 0]);
    let props = vec![
        ("static_offsets", Attribute::dense_i64_array(&statics)),
        ("static_sizes", Attribute::dense_i64_array(sizes)),
        (
            "static_strides",
            Attribute::dense_i64_array(&vec![1; sizes.len()]),
        ),
        ("operandSegmentSizes", Attribute::dense_i32_array(&segs)),
    ];
    (dynamic, props)
}

fn extract(b: &mut OpBuilder<'_>, src: Value, offs: &[Off], sizes: &[i64]) -> Value {
    let elem = b.ir.value_type(src).element_type();
    let (dynamic, props) = slice_parts(offs, sizes, 1);
    let operands = [src].into_iter().chain(dynamic).collect();
    b.value(
        ops::tensor::ExtractSliceOp::NAME,
        operands,
        Type::tensor(sizes.to_vec(), elem),
        &props,
    )
}

fn insert(b: &mut OpBuilder<'_>, v: Value, dst: Value, offs: &[Off], sizes: &[i64]) -> Value {
    let (dynamic, props) = slice_parts(offs, sizes, 2);
    let ty = b.ir.value_type(dst);
    let operands = [v, dst].into_iter().chain(dynamic).collect();
    b.value(ops::tensor::InsertSliceOp::NAME, operands, ty, &props)
}

/// `scf.for %iv = lb to ub step 1 iter_args(%acc = init)` at the builder's point: the op,
/// and a builder position at the end of its body with the induction variable and the
/// carried value.
fn for_loop(b: &mut OpBuilder<'_>, lb: Value, ub: Value, init: Value) -> (OpId, Value, Value) {
    let ty = b.ir.value_type(init);
    let c1 = b.index(1);
    let lp = b.insert(
        OpSpec::new(intern_name(ops::scf::ForOp::NAME), b.loc)
            .operands([lb, ub, c1, init])
            .results([ty])
            .regions(1),
    );
    let region = b.ir.regions_of(lp)[0];
    let blk = b.ir.append_block(region, &[Type::index(), ty]);
    let (iv, acc) = (b.ir.block_args(blk)[0], b.ir.block_args(blk)[1]);
    b.at = InsertPoint::End(blk);
    (lp, iv, acc)
}

/// The consumer's per-channel operands can be sliced to one channel (static sizes).
pub(super) fn sliceable(ir: &Ir, s: &Consumer) -> bool {
    s.ins.iter().all(|i| match i {
        Input::Channel(v, _, _) => ir
            .value_type(*v)
            .shape()
            .is_some_and(|sh| !sh.contains(&DYNAMIC)),
        _ => true,
    })
}

/// `v` (read by the consumer through `map`, by channel and constants) at channel `c`.
fn channel_slice(b: &mut OpBuilder<'_>, v: Value, map: &ftuner_ir::AffineMap, c: Value) -> Value {
    let shape = b.ir.value_type(v).shape().unwrap_or(&[]).to_vec();
    if shape.is_empty() {
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

/// The consumer over one plane, reading the plane's result `r` (`1 x 1 x OH x OW`).
fn consumer_on_plane(b: &mut OpBuilder<'_>, s: &Consumer, r: Value, nc: [Value; 2]) -> Value {
    let plane = b.ir.value_type(r);
    let sizes = plane.shape().unwrap_or(&[]).to_vec();
    let mut ins = vec![];
    for how in &s.ins {
        ins.push(match how {
            Input::Producer => r,
            Input::Element(v) => {
                let offs = [Off::At(nc[0]), Off::At(nc[1]), Off::Const(0), Off::Const(0)];
                extract(b, *v, &offs, &sizes)
            }
            Input::Channel(v, _, map) => channel_slice(b, *v, map, nc[1]),
        });
    }
    let empty = b.value(ops::tensor::EmptyOp::NAME, vec![], plane, &[]);
    ins.push(empty);
    let g = b.ir.clone_op(s.g, &mut Default::default());
    b.ir.set_operands(g, ins);
    let out = b.ir.result(g, 0);
    b.ir.set_value_type(out, plane);
    b.place(g);
    out
}

/// A fill of `v` into a new `1 x 1 x OH x OW` tensor.
fn plane_fill(b: &mut OpBuilder<'_>, v: Value, plane: Type) -> Result<Value, String> {
    let empty = b.value(ops::tensor::EmptyOp::NAME, vec![], plane, &[]);
    let name = ops::linalg::FillOp::NAME;
    let f = b.insert(
        OpSpec::new(intern_name(name), b.loc)
            .operands([v, empty])
            .results([plane])
            .prop("operandSegmentSizes", Attribute::dense_i32_array(&[1, 1]))
            .regions(1),
    );
    let region = b.ir.regions_of(f)[0];
    body::build_body(b.ir, name, region, &[v], &[empty], b.loc, false)?;
    Ok(b.ir.result(f, 0))
}

/// The fill value and filled tensor when `o` is a `linalg.fill` of a scalar.
fn filled(ir: &Ir, o: Value) -> Option<(Value, Value)> {
    let f = ir
        .defining_op(o)
        .filter(|f| ir.name(*f) == ops::linalg::FillOp::NAME)?;
    match ins_outs(ir, f) {
        (i, o) if i.len() == 1 && o.len() == 1 && !ir.value_type(i[0]).is_tensor() => {
            Some((i[0], o[0]))
        }
        _ => None,
    }
}

/// Rewrite window op `op` (and its consumer `sink`) as the plane loop.
pub(super) fn rewrite(
    ir: &mut Ir,
    op: OpId,
    w: &Window,
    regions: &[Region],
    sink: Option<Consumer>,
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
    // The loops carry the result: the consumer's output, or the op's init (a filled init's
    // destination: each plane is filled on its own).
    let carried = match (&sink, fill) {
        (Some(s), _) => s.init,
        (None, Some((_, e))) => e,
        (None, None) => w.o,
    };
    let mut b = OpBuilder::before(ir, at);
    let c0 = b.index(0);
    let n = b.value(ops::tensor::DimOp::NAME, vec![w.x, c0], Type::index(), &[]);
    // The loop runs over the image's batch: the result must have as many (the op checked
    // it, and the op is gone).
    let dynamic = |ty: Type| ty.shape().and_then(|s| s.first().copied()) == Some(DYNAMIC);
    if dynamic(b.ir.value_type(w.x)) || dynamic(b.ir.value_type(carried)) {
        let no = b.value(
            ops::tensor::DimOp::NAME,
            vec![carried, c0],
            Type::index(),
            &[],
        );
        let same = b.value(
            ops::arith::CmpiOp::NAME,
            vec![n, no],
            Type::i1(),
            &[("predicate", Attribute::i64(0))],
        );
        let msg = format!(
            "{}: the image and the result have different batch sizes",
            crate::runtime_checks::what(b.ir, op)
        );
        b.create(
            ops::cf::AssertOp::NAME,
            vec![same],
            vec![],
            &[("msg", Attribute::string(msg))],
        );
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
    let o = match (fill, &sink) {
        (Some((v, _)), _) => plane_fill(&mut b, v, plane)?,
        (None, Some(_)) => extract(&mut b, w.o, &at_nc, &[1, 1, oh, ow]),
        (None, None) => extract(&mut b, an, &at_nc, &[1, 1, oh, ow]),
    };
    let p = Operands {
        x,
        f,
        o,
        nc: [1, 1],
        n: None,
    };
    let mut r = pieces(&mut b, op, w, regions, &p);
    if let Some(s) = &sink {
        r = consumer_on_plane(&mut b, s, r, [ni, ci]);
    }
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
