//! Building blocks of the loops on tensors that `convert-1x1-conv-to-matmul` and
//! `peel-padded-windows` emit: unit-stride slices at run-time or constant offsets, an
//! `scf.for` carrying one tensor, the fill an init may be, and `linalg.generic`s with a
//! named op's body.

use ftuner_dialects::linalg::{body, ins_outs};
use ftuner_dialects::ops;
use ftuner_ir::{
    intern_name, AffineMap, Attribute, InsertPoint, Ir, OpBuilder, OpId, OpSpec, Type, Value,
    DYNAMIC,
};

/// An offset of a slice: a run-time value or a constant.
#[derive(Clone, Copy)]
pub(crate) enum Off {
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

/// `tensor.extract_slice %src[offs] [sizes] [1, ...]` as a tensor of type `ty` (the sizes'
/// shape, or with unit dims dropped: rank-reducing).
pub(crate) fn extract_as(
    b: &mut OpBuilder<'_>,
    src: Value,
    offs: &[Off],
    sizes: &[i64],
    ty: Type,
) -> Value {
    let (dynamic, props) = slice_parts(offs, sizes, 1);
    let operands = [src].into_iter().chain(dynamic).collect();
    b.value(ops::tensor::ExtractSliceOp::NAME, operands, ty, &props)
}

/// `tensor.extract_slice %src[offs] [sizes] [1, ...]`, of the sizes' shape.
pub(crate) fn extract(b: &mut OpBuilder<'_>, src: Value, offs: &[Off], sizes: &[i64]) -> Value {
    let elem = b.ir.value_type(src).element_type();
    extract_as(b, src, offs, sizes, Type::tensor(sizes.to_vec(), elem))
}

/// `tensor.extract_slice %src[offs] [sizes] [strides]` (static), as a tensor of type `ty`
/// (the sizes' shape, or with unit dims dropped).
pub(crate) fn extract_as_strided(
    b: &mut OpBuilder<'_>,
    src: Value,
    (offs, sizes, strides): (&[i64], &[i64], &[i64]),
    ty: Type,
) -> Value {
    let props = [
        ("static_offsets", Attribute::dense_i64_array(offs)),
        ("static_sizes", Attribute::dense_i64_array(sizes)),
        ("static_strides", Attribute::dense_i64_array(strides)),
        (
            "operandSegmentSizes",
            Attribute::dense_i32_array(&[1, 0, 0, 0]),
        ),
    ];
    b.value(ops::tensor::ExtractSliceOp::NAME, vec![src], ty, &props)
}

/// `linalg.fill ins(%value) outs(%dest)`.
pub(crate) fn splat_into(
    b: &mut OpBuilder<'_>,
    value: Value,
    dest: Value,
) -> Result<Value, String> {
    let ty = b.ir.value_type(dest);
    let f = b.insert(
        OpSpec::new(intern_name(ops::linalg::FillOp::NAME), b.loc)
            .operands([value, dest])
            .results([ty])
            .prop("operandSegmentSizes", Attribute::dense_i32_array(&[1, 1]))
            .regions(1),
    );
    let region = b.ir.regions_of(f)[0];
    let loc = b.loc;
    body::build_body(
        b.ir,
        ops::linalg::FillOp::NAME,
        region,
        &[value],
        &[dest],
        loc,
        false,
    )?;
    Ok(b.ir.result(f, 0))
}

/// `tensor.insert_slice %v into %dst[offs] [sizes] [1, ...]`.
pub(crate) fn insert(
    b: &mut OpBuilder<'_>,
    v: Value,
    dst: Value,
    offs: &[Off],
    sizes: &[i64],
) -> Value {
    let (dynamic, props) = slice_parts(offs, sizes, 2);
    let ty = b.ir.value_type(dst);
    let operands = [v, dst].into_iter().chain(dynamic).collect();
    b.value(ops::tensor::InsertSliceOp::NAME, operands, ty, &props)
}

/// `scf.for %iv = lb to ub step 1 iter_args(%acc = init)` at the builder's point: the op,
/// the induction variable and the carried value; the builder then appends to the loop's
/// body (the caller adds its `scf.yield`).
pub(crate) fn for_loop(
    b: &mut OpBuilder<'_>,
    lb: Value,
    ub: Value,
    init: Value,
) -> (OpId, Value, Value) {
    let c1 = b.index(1);
    for_loop_step(b, [lb, ub, c1], init)
}

/// [`for_loop`] with a step: `scf.for %iv = lb to ub step step iter_args(%acc = init)`.
pub(crate) fn for_loop_step(
    b: &mut OpBuilder<'_>,
    [lb, ub, step]: [Value; 3],
    init: Value,
) -> (OpId, Value, Value) {
    let ty = b.ir.value_type(init);
    let lp = b.insert(
        OpSpec::new(intern_name(ops::scf::ForOp::NAME), b.loc)
            .operands([lb, ub, step, init])
            .results([ty])
            .regions(1),
    );
    let region = b.ir.regions_of(lp)[0];
    let blk = b.ir.append_block(region, &[Type::index(), ty]);
    let (iv, acc) = (b.ir.block_args(blk)[0], b.ir.block_args(blk)[1]);
    b.at = InsertPoint::End(blk);
    (lp, iv, acc)
}

/// When `o` is a `linalg.fill` of a scalar of `o`'s element type: the fill, its value and
/// the tensor it fills.
pub(crate) fn filled(ir: &Ir, o: Value) -> Option<(OpId, Value, Value)> {
    let f = ir
        .defining_op(o)
        .filter(|f| ir.name(*f) == ops::linalg::FillOp::NAME)?;
    let elem = ir.value_type(o).element_type();
    match ins_outs(ir, f) {
        (i, d) if i.len() == 1 && d.len() == 1 && ir.value_type(i[0]) == elem => {
            Some((f, i[0], d[0]))
        }
        _ => None,
    }
}

/// A copy of `fill` writing `dest` instead, at the builder's point.
pub(crate) fn fill_into(b: &mut OpBuilder<'_>, fill: OpId, dest: Value) -> Value {
    let old = ins_outs(b.ir, fill).1[0];
    let mut map = std::iter::once((old, dest)).collect();
    let f = b.ir.clone_op(fill, &mut map);
    let r = b.ir.result(f, 0);
    let ty = b.ir.value_type(dest);
    b.ir.set_value_type(r, ty);
    b.place(f);
    r
}

/// A run-time check, when `x` or `v` has a dynamic batch (dim 0), that `v`'s batch is `n`
/// (`x`'s): a loop over `x`'s images replaces `op`, whose own check is gone. The message
/// is `op`'s description followed by `what`.
pub(crate) fn check_batch(
    b: &mut OpBuilder<'_>,
    op: OpId,
    x: Value,
    n: Value,
    v: Value,
    what: &str,
) {
    let dynamic = |ty: Type| ty.shape().and_then(|s| s.first().copied()) == Some(DYNAMIC);
    if !dynamic(b.ir.value_type(x)) && !dynamic(b.ir.value_type(v)) {
        return;
    }
    let c0 = b.index(0);
    let nv = b.value(ops::tensor::DimOp::NAME, vec![v, c0], Type::index(), &[]);
    let same = b.value(
        ops::arith::CmpiOp::NAME,
        vec![n, nv],
        Type::i1(),
        &[("predicate", Attribute::i64(0))],
    );
    let msg = format!("{}: {what}", crate::runtime_checks::what(b.ir, op));
    b.create(
        ops::cf::AssertOp::NAME,
        vec![same],
        vec![],
        &[("msg", Attribute::string(msg))],
    );
}

/// A `linalg.generic` over `ins` into `outs` (results of their types) with `maps` and
/// iterator types `iters`, at the builder's point, its one region still empty.
pub(crate) fn generic_op(
    b: &mut OpBuilder<'_>,
    (ins, outs): (&[Value], &[Value]),
    maps: &[AffineMap],
    iters: &[&str],
) -> OpId {
    let types: Vec<Type> = outs.iter().map(|v| b.ir.value_type(*v)).collect();
    let it = |k: &&str| Attribute::dialect("linalg", &format!("iterator_type<{k}>"));
    b.insert(
        OpSpec::new(intern_name(ops::linalg::GenericOp::NAME), b.loc)
            .operands(ins.iter().chain(outs).copied())
            .results(types)
            .prop(
                "indexing_maps",
                Attribute::array(maps.iter().cloned().map(Attribute::affine_map).collect()),
            )
            .prop(
                "iterator_types",
                Attribute::array(iters.iter().map(it).collect()),
            )
            .prop(
                "operandSegmentSizes",
                Attribute::dense_i32_array(&[ins.len() as i32, outs.len() as i32]),
            )
            .regions(1),
    )
}

/// A `linalg.generic` over `ins` into `out` (of `out`'s type) with `maps` and iterator
/// types `iters`, whose body is named op `body`'s (unsigned casts when asked).
pub(crate) fn generic(
    b: &mut OpBuilder<'_>,
    (ins, out): (&[Value], Value),
    maps: &[AffineMap],
    iters: &[&str],
    (body_of, unsigned): (&str, bool),
) -> Result<Value, String> {
    let gop = generic_op(b, (ins, &[out]), maps, iters);
    let region = b.ir.regions_of(gop)[0];
    let loc = b.loc;
    body::build_body(b.ir, body_of, region, ins, &[out], loc, unsigned)?;
    Ok(b.ir.result(gop, 0))
}
