//! `convert-1x1-conv-to-matmul`: an NCHW convolution with a 1x1 filter is a matmul per
//! image, `out[n] (F x HW) += w (F x C) * x[n] (C x HW)`, in the layout the tensors
//! already have (a strided one after its positions are copied out, see below):
//!
//! ```mlir
//! %r = linalg.conv_2d_nchw_fchw {strides = dense<1> : vector<2xi64>}
//!        ins(%x, %w : tensor<?xCxHxWxf32>, tensor<FxCx1x1xf32>) outs(%o : tensor<?xFxHxWxf32>)
//! ```
//! becomes
//! ```mlir
//! %w2 = tensor.collapse_shape %w [[0], [1, 2, 3]] : ... into tensor<FxCxf32>
//! %x3 = tensor.collapse_shape %x [[0], [1], [2, 3]] : ... into tensor<?xCx(HW)xf32>
//! %o3 = tensor.collapse_shape %o [[0], [1], [2, 3]] : ... into tensor<?xFx(HW)xf32>
//! %r3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %o3) -> (tensor<?xFx(HW)xf32>) {
//!   %xi = tensor.extract_slice %x3[%i, 0, 0] [1, C, HW] [1, 1, 1] : ... to tensor<Cx(HW)xf32>
//!   %oi = tensor.extract_slice %acc[%i, 0, 0] [1, F, HW] [1, 1, 1] : ... to tensor<Fx(HW)xf32>
//!   %m = linalg.matmul ins(%w2, %xi : ...) outs(%oi : tensor<Fx(HW)xf32>) -> tensor<Fx(HW)xf32>
//!   %u = tensor.insert_slice %m into %acc[%i, 0, 0] [1, F, HW] [1, 1, 1] : ...
//!   scf.yield %u : tensor<?xFx(HW)xf32>
//! } {ftuner.parallel}   (a dynamic batch only)
//! %r = tensor.expand_shape %r3 [[0], [1], [2, 3]] output_shape [%n, F, H, W] : ...
//! ```
//! (an init that is a `linalg.fill` of a constant is filled per image instead, so the
//! matmul's uKernels see a filled init and skip reading it).
//!
//! A strided conv (ResNet's downsampling shortcuts, stride 2) reads the positions
//! `x[n, c, sh*i, sw*j]`: per image, inside the loop, they are copied into a contiguous
//! `C x (OH*OW)` by a `linalg.generic`, which the matmul then reads (still in cache). The
//! copy is a quarter of the image at stride 2; as an implicit GEMM the conv read the whole
//! image, a strided element per row and k step, and wrote the NCHW output along its
//! channel dim.
//!
//! A conv with a larger filter but few k steps (`C x KH x KW` at most `im2col-max-k`: a
//! network's stem, 3 channels 3x3) copies its windows per image the same way, into an
//! im2col matrix `(C*KH*KW) x (OH*OW)` in the filter's k order, and its matmul reads that:
//! as an implicit GEMM over so few k steps each tile's scatter of its output channels into
//! the NCHW planes costs as much as its FMAs (docs/patch-ukernels.md).
//!
//! An image of fewer than `min-positions` positions (ResNet-50's and MobileNetV2's 7x7
//! stages: 49) makes a matmul of 49 columns, whose N residue of 1 is a 1-wide column strip
//! costing as many cycles per k step as a 16-wide one. When the filter is known at load
//! time (a weight, or a value prepared from weights), such a conv becomes per image
//! `(HW x K) x (K x F)` instead: the image (or its copied positions) transposed before the
//! matmul and the result after it, the filter transposed once (`outline-weight-preparation`
//! then computes it, and `lower-ukernels` packs its panels, in the prepare function). The
//! positions are then the rows, where a 6-row tile leaves at most 5 (a 1x64 strip for
//! 49). Measured on Zen 5 (family 26 model 2), one thread, batch 1, against the implicit
//! GEMM these convs were before (`tools/bench/conv_layers.py`, 11 alternated rounds):
//! 2048 -> 512 channels 0.684 -> 0.550 ms, 512 -> 2048 0.629 -> 0.530, 160 -> 960 0.101
//! -> 0.087 (ONNX Runtime 0.554, 0.542, 0.083). A run-time filter stays an implicit GEMM
//! (transposing it would cost a pass over it per call).
//!
//! The conv's one elementwise consumer (BatchNorm, ReLU, a residual add: what
//! `linalg-fuse-elementwise-ops` leaves after each conv of a CNN) moves into the loop, as a
//! `linalg.generic` over the image's `F x HW` output right after its matmul, when each of
//! its other operands is read per channel (`(d0, d1, d2, d3) -> (d1, 0, 0)`) or per
//! element (identity, a slice per image): `patch-ukernels` then takes it as the matmul's
//! epilogue, applied to each tile while it is in cache instead of another pass over the
//! activations (on the transposed path above it runs after the transpose back). As an implicit GEMM the
//! conv's tiles run over output positions and write the NCHW output along its strided
//! channel dim (gathers and scatters per tile); derived to a matmul in NHWC it pays two
//! transposes of the activations. Here positions are the matmul's columns, contiguous in
//! both the image and the output, and nothing is transposed.

use crate::nchw_consumer::{consumer, Consumer, Input};
use crate::tensor_build::{
    check_batch, extract_as, fill_into, filled, for_loop, generic, insert, Off,
};
use ftuner_dialects::linalg::{body, ins_outs};
use ftuner_dialects::ops;
use ftuner_dialects::tensor::reassociation_attr;
use ftuner_ir::{
    intern_name, AffineExpr, AffineMap, Attribute, InsertPoint, Ir, OpBuilder, OpId, OpSpec, Type,
    Value, DYNAMIC,
};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use rustc_hash::{FxHashMap, FxHashSet};

/// What the rewrite needs of a matching conv.
struct Match {
    x: Value,
    w: Value,
    o: Value,
    /// (F, C, H, W): H and W the output's.
    fchw: [i64; 4],
    /// The filter's (KH, KW) and the dilations.
    kernel: [i64; 2],
    dilations: [i64; 2],
    /// The strides, when the conv does not read the image as it is (a stride above 1, an
    /// image larger than the output, a filter larger than 1x1): each image's windows are
    /// copied out first (an im2col matrix; for a 1x1 filter, the positions read).
    subsample: Option<[i64; 2]>,
    elem: Type,
    /// The init's `linalg.fill`, its value and the filled tensor.
    fill: Option<(OpId, Value, Value)>,
}

/// The matmul's k: C x KH x KW.
fn k_of(m: &Match) -> i64 {
    m.fchw[1] * m.kernel[0] * m.kernel[1]
}

/// `op` as a [`Match`]: a 1x1 filter, or one of at most `max_k` k steps (C x KH x KW).
fn matches(ir: &Ir, op: OpId, max_k: i64) -> Option<Match> {
    if ir.name(op) != ops::linalg::Conv2dNchwFchwOp::NAME
        || ir.attr(op, "cast").is_some()
        || ir.results(op).len() != 1
    {
        return None;
    }
    let (ins, outs) = ins_outs(ir, op);
    let (&[x, w], &[o]) = (ins.as_slice(), outs.as_slice()) else {
        return None;
    };
    let (xt, wt, ot) = (ir.value_type(x), ir.value_type(w), ir.value_type(o));
    let (xs, ws, os) = (xt.shape()?, wt.shape()?, ot.shape()?);
    let elem = ot.element_type();
    let static_past_batch = |s: &[i64]| s.len() == 4 && s[1..].iter().all(|d| *d != DYNAMIC);
    if !xt.is_tensor()
        || !static_past_batch(xs)
        || !static_past_batch(os)
        || ws.len() != 4
        || ws.contains(&DYNAMIC)
        || (ws[2..] != [1, 1]
            && ws[1..]
                .iter()
                .try_fold(1i64, |a, d| a.checked_mul(*d))
                .is_none_or(|k| k > max_k))
        || ws[2..].iter().any(|k| *k < 1)
        || xs[1] != ws[1]
        || os[1] != ws[0]
        || xt.element_type() != elem
        || wt.element_type() != elem
        || !elem.is_float()
        || ir.value_type(ir.result(op, 0)) != ot
    {
        return None;
    }
    // Output position i of a dim reads the image at s*i + t*dil for filter tap t: every
    // read inside, and an output of at least one position.
    let strides = body::ints(ir, op, "strides", 2);
    let dilations = body::ints(ir, op, "dilations", 2);
    let inside = |d: usize| {
        let (s, dil, k) = (strides[d - 2], dilations[d - 2], ws[d]);
        let last = (os[d] - 1)
            .checked_mul(s)
            .and_then(|x| x.checked_add((k - 1).checked_mul(dil)?));
        s >= 1 && dil >= 1 && os[d] >= 1 && last.is_some_and(|last| last < xs[d])
    };
    // (`ints` gives two values, [1, 1] when absent; the verifier requires two.)
    if !inside(2) || !inside(3) {
        return None;
    }
    // The image's positions (the matmul's columns) as one dim.
    os[2].checked_mul(os[3])?;
    let kernel = [ws[2], ws[3]];
    let subsample = (strides != [1, 1] || xs[2..] != os[2..] || kernel != [1, 1])
        .then(|| [strides[0], strides[1]]);
    let fill = filled(ir, o);
    Some(Match {
        x,
        w,
        o,
        fchw: [ws[0], ws[1], os[2], os[3]],
        kernel,
        dilations: [dilations[0], dilations[1]],
        subsample,
        elem,
        fill,
    })
}

/// Image `iv` of `v` (`? x rows x cols`), as `rows x cols`.
fn image(b: &mut OpBuilder<'_>, v: Value, iv: Value, [rows, cols]: [i64; 2]) -> Value {
    let ty = Type::tensor(vec![rows, cols], b.ir.value_type(v).element_type());
    extract_as(
        b,
        v,
        &[Off::At(iv), Off::Const(0), Off::Const(0)],
        &[1, rows, cols],
        ty,
    )
}

/// Image `iv` of the conv's input as the matmul's `K x (OH*OW)` operand, copied by a
/// `linalg.generic` per image (still in cache when the matmul reads it): for a 1x1
/// filter the positions `(sh*i, sw*j)` a strided conv reads (`C x OH x OW`), for a larger
/// one its windows, `x[c, sh*i + dh*u, sw*j + dw*v]` at `(c, u, v, i, j)` (im2col, the
/// k order of the filter's `C x KH x KW`; a filter dim of 1 has no loop).
fn subsampled(b: &mut OpBuilder<'_>, m: &Match, iv: Value) -> Result<Value, String> {
    let [_, c, oh, ow] = m.fchw;
    let [sh, sw] = m.subsample.unwrap_or([1, 1]);
    let ([kh, kw], [dh, dw]) = (m.kernel, m.dilations);
    // The extent read (a unit-stride dim of a 1x1 filter then has the output's size, as
    // the generic's verifier requires of a dim indexed alone).
    let (h, w) = (
        (oh - 1) * sh + (kh - 1) * dh + 1,
        (ow - 1) * sw + (kw - 1) * dw + 1,
    );
    let img = extract_as(
        b,
        m.x,
        &[Off::At(iv), Off::Const(0), Off::Const(0), Off::Const(0)],
        &[1, c, h, w],
        Type::tensor(vec![c, h, w], m.elem),
    );
    // The copy's dims: c, the filter's taps along each dim larger than 1, oh, ow.
    let d = AffineExpr::dim;
    let mut shape = vec![c];
    let tap = |k: i64, dil: i64, shape: &mut Vec<i64>| {
        (k > 1).then(|| {
            shape.push(k);
            let t = d(shape.len() as u32 - 1);
            if dil == 1 {
                t
            } else {
                t * AffineExpr::constant(dil)
            }
        })
    };
    let (th, tw) = (tap(kh, dh, &mut shape), tap(kw, dw, &mut shape));
    let n = shape.len() as u32;
    shape.extend([oh, ow]);
    let at = |pos: AffineExpr, t: Option<AffineExpr>| match t {
        Some(t) => pos + t,
        None => pos,
    };
    let read = AffineMap::new(
        n + 2,
        0,
        vec![
            d(0),
            at(d(n) * AffineExpr::constant(sh), th),
            at(d(n + 1) * AffineExpr::constant(sw), tw),
        ],
    );
    let empty = b.value(
        ops::tensor::EmptyOp::NAME,
        vec![],
        Type::tensor(shape, m.elem),
        &[],
    );
    let maps = [read, AffineMap::identity(n + 2)];
    let copy = generic(
        b,
        (&[img], empty),
        &maps,
        &vec!["parallel"; n as usize + 2],
        ("linalg.copy", false),
    )?;
    let ks: Vec<i64> = (0..n as i64).collect();
    Ok(b.value(
        ops::tensor::CollapseShapeOp::NAME,
        vec![copy],
        Type::tensor(vec![k_of(m), oh * ow], m.elem),
        &[(
            "reassociation",
            reassociation_attr(&[&ks, &[n as i64, n as i64 + 1]]),
        )],
    ))
}

/// The consumer over image `iv`'s `F x HW` (`fp`), reading the image's matmul `mr`: a
/// clone of it with per-image operands and 2-d maps, appended at the builder's block.
fn consumer_in_loop(
    b: &mut OpBuilder<'_>,
    s: &Consumer,
    mr: Value,
    iv: Value,
    fp: [i64; 2],
) -> Value {
    let mut ins = vec![];
    let mut maps = vec![];
    for how in &s.ins {
        let (v, map) = match how {
            Input::Producer => (mr, AffineMap::identity(2)),
            Input::Element(v3) => (image(b, *v3, iv, fp), AffineMap::identity(2)),
            Input::Channel(v, map) => (*v, map.clone()),
        };
        ins.push(v);
        maps.push(Attribute::affine_map(map));
    }
    maps.push(Attribute::affine_map(AffineMap::identity(2)));
    let ty = Type::tensor(fp.to_vec(), b.ir.value_type(mr).element_type());
    let empty = b.value(ops::tensor::EmptyOp::NAME, vec![], ty, &[]);
    let g = b.ir.clone_op(s.g, &mut Default::default());
    ins.push(empty);
    b.ir.set_operands(g, ins);
    b.ir.set_prop(g, "indexing_maps", Some(Attribute::array(maps)));
    let par = Attribute::dialect("linalg", "iterator_type<parallel>");
    b.ir.set_prop(g, "iterator_types", Some(Attribute::array(vec![par; 2])));
    let r = b.ir.result(g, 0);
    b.ir.set_value_type(r, ty);
    b.place(g);
    r
}

fn rewrite(
    ir: &mut Ir,
    op: OpId,
    m: &Match,
    mut sink: Option<Consumer>,
    transposed: bool,
) -> Result<(), String> {
    use ops::{scf, tensor};
    let [f, c, h, w] = m.fchw;
    let p = h * w;
    let res = ir.result(op, 0);
    // With a consumer, the loop takes the consumer's place (its other operands may be
    // defined after the conv) and yields its result.
    let (at, res) = match &sink {
        Some(s) => (s.g, ir.result(s.g, 0)),
        None => (op, res),
    };
    let rt = ir.value_type(res);
    let mut b = OpBuilder::before(ir, at);
    let c0 = b.index(0);
    let n = b.value(tensor::DimOp::NAME, vec![m.x, c0], Type::index(), &[]);
    // The loop runs over the input's images: the output must have as many (a dynamic
    // batch is the conv's to check, and the conv is gone).
    let out = b.ir.operand(op, 2);
    let what = "the input and the output have different batch sizes";
    check_batch(&mut b, op, m.x, n, out, what);
    // A value viewed by image as `N x rows x HW`: its batch dim as it is (static or not).
    let t3 = |ir: &Ir, v: Value, rows: i64| {
        Type::tensor(vec![batch(ir, v), rows, p], ir.value_type(v).element_type())
    };
    let by_image = reassociation_attr(&[&[0], &[1], &[2, 3]]);
    let collapse = |b: &mut OpBuilder<'_>, v: Value, ty: Type, r: Attribute| {
        b.value(
            tensor::CollapseShapeOp::NAME,
            vec![v],
            ty,
            &[("reassociation", r)],
        )
    };
    let w2 = collapse(
        &mut b,
        m.w,
        Type::tensor(vec![f, k_of(m)], m.elem),
        reassociation_attr(&[&[0], &[1, 2, 3]]),
    );
    // Transposed: the filter as K x F (computed once with the weights).
    let wt = if transposed {
        Some(transpose2(&mut b, w2)?)
    } else {
        None
    };
    // Unit strides: the image viewed by image as C x HW; strided: it is read per image.
    let x3 = m.subsample.is_none().then(|| {
        let ty = t3(b.ir, m.x, c);
        collapse(&mut b, m.x, ty, by_image)
    });
    // The loop carries the result: the consumer's output, or the conv's init (with a
    // filled init, the fill's destination, filled per image).
    let carried = match (&sink, m.fill) {
        (Some(s), _) => s.init,
        (None, Some((_, _, e))) => e,
        (None, None) => m.o,
    };
    let o3_ty = t3(b.ir, carried, f);
    let o3 = collapse(&mut b, carried, o3_ty, by_image);
    // The conv's own init when the loop does not carry it.
    let init3 = match (&sink, m.fill) {
        (Some(_), None) => {
            let ty = t3(b.ir, m.o, f);
            Some(collapse(&mut b, m.o, ty, by_image))
        }
        _ => None,
    };
    // The consumer's per-element operands, viewed by image.
    for how in sink.iter_mut().flat_map(|s| &mut s.ins) {
        if let Input::Element(v) = how {
            let vt = t3(b.ir, *v, f);
            *v = collapse(&mut b, *v, vt, by_image);
        }
    }
    let (lp, iv, acc) = for_loop(&mut b, c0, n, o3);
    mark_images_parallel(b.ir, lp, m.x);
    // The loop's body.
    let xi = match x3 {
        Some(x3) => image(&mut b, x3, iv, [c, p]),
        None => subsampled(&mut b, m, iv)?,
    };
    let oi = image(&mut b, init3.unwrap_or(acc), iv, [f, p]);
    let mut mr = image_matmul(&mut b, m, [w2, xi, oi], wt)?;
    if let Some(s) = &sink {
        mr = consumer_in_loop(&mut b, s, mr, iv, [f, p]);
    }
    let u = insert(
        &mut b,
        mr,
        acc,
        &[Off::At(iv), Off::Const(0), Off::Const(0)],
        &[1, f, p],
    );
    b.create(scf::YieldOp::NAME, vec![u], vec![], &[]);
    b.at = InsertPoint::Before(at);
    let r3 = b.ir.result(lp, 0);
    // The batch of the result as it is: a dynamic one is the loop's count.
    let n0 = batch(b.ir, r3);
    let sizes = if n0 == DYNAMIC { vec![r3, n] } else { vec![r3] };
    let e = b.value(
        tensor::ExpandShapeOp::NAME,
        sizes,
        rt,
        &[
            ("reassociation", by_image),
            (
                "static_output_shape",
                Attribute::dense_i64_array(&[n0, f, h, w]),
            ),
        ],
    );
    b.ir.replace_all_uses(res, e);
    if let Some(s) = sink {
        b.ir.erase_op(s.g);
    }
    b.ir.erase_op(op);
    Ok(())
}

/// Image `xi`'s matmul (`K x HW`) with the filter `w2` (`F x K`) into its output `oi`
/// (`F x HW`), the conv's fill applied to it: `w2 x xi`, or with the filter transposed
/// (`wt`, `K x F`) `(xi^T x wt)^T`, the positions as the matmul's rows.
fn image_matmul(
    b: &mut OpBuilder<'_>,
    m: &Match,
    [w2, xi, oi]: [Value; 3],
    wt: Option<Value>,
) -> Result<Value, String> {
    use ops::{linalg, tensor};
    let [f, _, h, w] = m.fchw;
    let p = h * w;
    let loc = b.loc;
    // A named linalg op on `ins` into `init`, with its body.
    let named = |b: &mut OpBuilder<'_>, name: &str, ins: &[Value], init: Value| {
        let ty = b.ir.value_type(init);
        let o = b.insert(
            OpSpec::new(intern_name(name), loc)
                .operands(ins.iter().copied().chain([init]))
                .results([ty])
                .prop(
                    "operandSegmentSizes",
                    Attribute::dense_i32_array(&[ins.len() as i32, 1]),
                )
                .regions(1),
        );
        let r = b.ir.regions_of(o)[0];
        body::build_body(b.ir, name, r, ins, &[init], loc, false)?;
        Ok::<Value, String>(b.ir.result(o, 0))
    };
    let fill = |b: &mut OpBuilder<'_>, into: Value| match m.fill {
        Some((fill, _, _)) => fill_into(b, fill, into),
        None => into,
    };
    match wt {
        // (HW x K) x (K x F), transposed back to F x HW.
        Some(wt) => {
            let xt = transpose2(b, xi)?;
            let ot = match m.fill {
                Some(_) => {
                    let ty = Type::tensor(vec![p, f], m.elem);
                    let e = b.value(tensor::EmptyOp::NAME, vec![], ty, &[]);
                    fill(b, e)
                }
                None => transpose2(b, oi)?,
            };
            let mt = named(b, linalg::MatmulOp::NAME, &[xt, wt], ot)?;
            transpose2(b, mt)
        }
        None => {
            let oi = fill(b, oi);
            named(b, linalg::MatmulOp::NAME, &[w2, xi], oi)
        }
    }
}

/// `v` (a static `rows x cols` tensor) transposed, a copy by a `linalg.generic` at the
/// builder's point (lowered as blocks of vector-register width).
fn transpose2(b: &mut OpBuilder<'_>, v: Value) -> Result<Value, String> {
    let ty = b.ir.value_type(v);
    let Some(&[rows, cols]) = ty.shape() else {
        return Err(format!("transposing {ty}: not a 2-d tensor"));
    };
    let empty = b.value(
        ops::tensor::EmptyOp::NAME,
        vec![],
        Type::tensor(vec![cols, rows], ty.element_type()),
        &[],
    );
    let d = AffineExpr::dim;
    let maps = [
        AffineMap::new(2, 0, vec![d(1), d(0)]),
        AffineMap::identity(2),
    ];
    generic(
        b,
        (&[v], empty),
        &maps,
        &["parallel", "parallel"],
        ("linalg.copy", false),
    )
}

/// The leading (batch) dim of tensor `v`, `DYNAMIC` when dynamic.
fn batch(ir: &Ir, v: Value) -> i64 {
    ir.value_type(v)
        .shape()
        .and_then(|s| s.first().copied())
        .unwrap_or(DYNAMIC)
}

/// The image loop `lp` over `x`'s images is marked `ftuner.parallel` when the batch is
/// dynamic. The images are independent (each writes its own slice): the thread pool then
/// splits them, or the tile loops of each image's matmul, whichever divides evenly at run
/// time (convert-parallel-loops-to-runtime's nested rule). A static batch keeps its loop serial and the tile
/// loops on the pool (a static marked loop takes the pool whatever its count: 3 images on
/// 2 threads would run 2 against 1).
fn mark_images_parallel(ir: &mut Ir, lp: OpId, x: Value) {
    if batch(ir, x) == DYNAMIC {
        ir.set_attr(
            lp,
            ftuner_dialects::scf::PARALLEL_ATTR,
            Some(Attribute::unit()),
        );
    }
}

define_pass! {
    /// `convert-1x1-conv-to-matmul`: NCHW 1x1 convolutions (and convolutions of few k steps,
    /// through an im2col matrix) as a matmul per image.
    pub struct Conv1x1ToMatmulPass {
        argument: "convert-1x1-conv-to-matmul",
        name: "Convert1x1ConvToMatmul",
        summary: "Rewrite NCHW convolutions with a 1x1 filter (or few k steps) as a matmul per image",
        description: "A linalg.conv_2d_nchw_fchw on tensors whose filter is 1x1 and whose image, filter and output dims past the batch are static becomes an scf.for over the batch of linalg.matmul(filter as F x C, image as C x HW) into the output as F x HW (collapse_shape views, no copies at unit strides); an init that is a linalg.fill is filled per image; the conv's one elementwise consumer (read per channel or per element) moves into the loop after each image's matmul, where patch-ukernels makes it the matmul's epilogue. Positions are the matmul's columns, contiguous in the image and the output alike: no gathers or scatters along the strided channel dim, no transposes. A strided conv (or one reading only part of its image) copies, per image inside the loop, the positions it reads into a contiguous C x (OH*OW) (a linalg.generic) for its matmul; a conv with a larger filter and at most im2col-max-k k steps (C x KH x KW) copies its windows into a (C*KH*KW) x (OH*OW) im2col matrix the same way. A conv of fewer than min-positions positions whose filter is known at load time (transpose-small) becomes (HW x K) x (K x F) per image, its image and result transposed around the matmul and its filter transposed once.",
        options: Conv1x1ToMatmulOptions {
            "min-positions" => min_positions: i64 = "128",
                "Rewrite images of fewer positions (H x W) only transposed (transpose-small): a matmul per image has that many columns, and below a few main tiles' widths its tiles are mostly edges (ResNet-50's 7x7 stage, 49 columns: 63 GFLOP/s as matmuls, against 160 as an implicit GEMM over batch x positions)";
            "strided" => strided: bool = "true",
                "Rewrite strided 1x1 convolutions too, after copying out the positions they read (off: they stay implicit GEMMs)";
            "im2col-max-k" => im2col_max_k: i64 = "32",
                "Rewrite a convolution with a larger filter too when its k steps (C x KH x KW) are at most this many (a network's stem: 3 channels, 3x3), its windows copied per image into a K x (OH*OW) im2col matrix for the matmul: as an implicit GEMM over so few k steps, each tile's scatter along the output's channel dim costs as much as its FMAs (MobileNetV2's stem, 27 k steps: 0.49 ms against ONNX Runtime's 0.24); 0 leaves every filter larger than 1x1 alone";
            "transpose-small" => transpose_small: bool = "true",
                "Rewrite a convolution of fewer than min-positions positions too, when its filter is known at load time (a weight, prepared once), as (HW x K) x (K x F) per image, its image and result transposed around the matmul: the positions are then the matmul's rows, where a 6-row tile has a residue of at most 5 rows, instead of its columns, where 49 left a 1-wide column strip (ResNet-50's and MobileNetV2's 7x7 stages)";
            "fuse-consumers" => fuse_consumers: bool = "true",
                "Move the conv's one elementwise consumer (read per channel or per element) into the loop, after each image's matmul, where patch-ukernels makes it the matmul's epilogue";
        },
        statistics: {
            converted: "num-converted" => "Convolutions rewritten as matmuls",
            consumers: "num-consumers" => "Elementwise consumers moved into the loop",
        },
    }
}

impl Conv1x1ToMatmulPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        opts: &Conv1x1ToMatmulOptions,
    ) -> Result<(), PassFailure> {
        let mut found = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            if let Some(m) = matches(cx.ir, o, opts.im2col_max_k) {
                if opts.strided || m.subsample.is_none() || m.kernel != [1, 1] {
                    let small = m.fchw[2].saturating_mul(m.fchw[3]) < opts.min_positions;
                    found.push((o, small));
                }
            }
        });
        // The values each function computes once, with its weights.
        let mut load_time: FxHashMap<OpId, FxHashSet<Value>> = FxHashMap::default();
        for (o, small) in found {
            let transposed = small && opts.transpose_small;
            if small && !transposed {
                continue;
            }
            // Matched again: an earlier rewrite may have replaced its operands.
            let Some(m) = matches(cx.ir, o, opts.im2col_max_k) else {
                continue;
            };
            if transposed {
                // Only a conv in a function's body: there the filter's transpose is what
                // outline-weight-preparation takes into the prepare function.
                let Some(f) = cx
                    .ir
                    .parent_op(o)
                    .filter(|f| cx.ir.name(*f) == ops::func::FuncOp::NAME)
                else {
                    continue;
                };
                let lt = load_time
                    .entry(f)
                    .or_insert_with(|| crate::outline_weights::load_time_values(cx.ctx, cx.ir, f));
                if !lt.contains(&m.w) {
                    continue;
                }
            }
            let loc = cx.ir.loc(o);
            let sink = if opts.fuse_consumers {
                consumer(cx.ir, o)
            } else {
                None
            };
            if sink.is_some() {
                self.consumers += 1;
            }
            if let Err(e) = rewrite(cx.ir, o, &m, sink, transposed) {
                cx.emit(ftuner_ir::Diagnostic::error(loc, e));
                return Err(PassFailure);
            }
            self.converted += 1;
        }
        Ok(())
    }
}
