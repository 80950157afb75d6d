//! Canonicalization of `linalg.batch_matmul`: a batched product against a right operand
//! broadcast along the batch is one matmul over batch x rows.
//!
//! ```mlir
//! %wb = linalg.broadcast ins(%w : tensor<KxN>) outs(%e : tensor<?xKxN>) dimensions = [0]
//! %r = linalg.batch_matmul ins(%a, %wb : tensor<?x?xK>, tensor<?xKxN>) outs(%c : tensor<?x?xN>)
//! ```
//! becomes
//! ```mlir
//! %a2 = tensor.collapse_shape %a [[0, 1], [2]] : tensor<?x?xK> into tensor<?xK>
//! %c2 = tensor.collapse_shape %c [[0, 1], [2]] : tensor<?x?xN> into tensor<?xN>
//! %m = linalg.matmul ins(%a2, %w : tensor<?xK>, tensor<KxN>) outs(%c2 : tensor<?xN>)
//! %r = tensor.expand_shape %m [[0, 1], [2]] output_shape [%b, %rows, N]
//! ```
//! Frontends emit the first form for a dense layer on a 3-d input when batch and sequence
//! are both dynamic (torch-mlir cannot merge two dynamic dims, ../shared/inputs); run as
//! written it materializes the weight once per batch element and multiplies B small
//! matrices. The broadcast may be a `linalg.broadcast` with `dimensions = [0]` or the
//! `linalg.generic` torch-mlir writes for it (input map `(d0, d1, d2) -> (d1, d2)`, the
//! identity output map, a body yielding its input). A product whose operands both have a
//! batch of one (`tensor<1x?xK>`, `tensor<1xKxN>`: how TOSA writes every matmul) is the
//! same single matmul, the right operand collapsed to `KxN`.

use crate::linalg::{body, ins_outs};
use ftuner_ir::Context;
use ftuner_ir::{intern_name, AffineExpr, Attribute, Ir, OpId, OpSpec, Type, Value, DYNAMIC};

/// The `KxN` value `v` is a broadcast of along a new leading dim, if it is one.
fn broadcast_source(ir: &Ir, v: Value) -> Option<Value> {
    let d = ir.defining_op(v)?;
    let (ins, outs) = ins_outs(ir, d);
    if ins.len() != 1 || outs.len() != 1 || ir.results(d).len() != 1 {
        return None;
    }
    let src = ins[0];
    if ir.value_type(src).rank()? != 2 {
        return None;
    }
    match ir.name(d) {
        "linalg.broadcast" => {
            let dims = ir.attr(d, "dimensions")?.as_dense_i64s()?;
            (dims == [0]).then_some(src)
        }
        "linalg.generic" => {
            let maps = body::indexing_maps(ir, d)?;
            let read = maps.first()?;
            let ok = maps.len() == 2
                && maps[1].is_identity()
                && read.num_dims == 3
                && read.results == [AffineExpr::Dim(1), AffineExpr::Dim(2)]
                && body::all_parallel(ir, d);
            let b = ir.region_entry(*ir.regions_of(d).first()?)?;
            let ops = ir.block_ops_vec(b);
            let yields_input = ops.len() == 1
                && ir.name(ops[0]) == "linalg.yield"
                && ir.operands(ops[0]) == [ir.block_args(b)[0]];
            (ok && yields_input).then_some(src)
        }
        _ => None,
    }
}

fn reassoc_01_2() -> Attribute {
    crate::tensor::reassociation_attr(&[&[0, 1], &[2]])
}

fn collapse(ir: &mut Ir, before: OpId, v: Value) -> Option<Value> {
    let t = ir.value_type(v);
    let s = t.shape()?;
    let rows = if s[0] == DYNAMIC || s[1] == DYNAMIC {
        DYNAMIC
    } else {
        s[0].checked_mul(s[1])?
    };
    let ty = Type::tensor(vec![rows, s[2]], t.element_type());
    let op = ir.create_op(
        OpSpec::new(intern_name("tensor.collapse_shape"), ir.loc(before))
            .operands([v])
            .results([ty])
            .prop("reassociation", reassoc_01_2()),
    );
    ir.insert_before(before, op);
    Some(ir.result(op, 0))
}

fn index_constant(ir: &mut Ir, before: OpId, i: i64) -> Value {
    let c = ir.create_op(
        OpSpec::new(intern_name("arith.constant"), ir.loc(before))
            .results([Type::index()])
            .prop("value", Attribute::index(i)),
    );
    ir.insert_before(before, c);
    ir.result(c, 0)
}

/// Dim `i` of `v` as an index value (a constant when static).
fn dim(ir: &mut Ir, before: OpId, v: Value, i: i64) -> Option<Value> {
    let d = *ir.value_type(v).shape()?.get(i as usize)?;
    if d != DYNAMIC {
        return Some(index_constant(ir, before, d));
    }
    let loc = ir.loc(before);
    let idx = index_constant(ir, before, i);
    let d = ir.create_op(
        OpSpec::new(intern_name("tensor.dim"), loc)
            .operands([v, idx])
            .results([Type::index()]),
    );
    ir.insert_before(before, d);
    Some(ir.result(d, 0))
}

fn batch_matmul_broadcast_rhs(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    rewrite(ir, op).is_some()
}

fn rewrite(ir: &mut Ir, op: OpId) -> Option<()> {
    // The default maps and cast only: the op as its name defines it.
    if ir.attr(op, "cast").is_some()
        || body::indexing_maps(ir, op) != body::default_contraction_maps("linalg.batch_matmul")
    {
        return None;
    }
    let (ins, outs) = ins_outs(ir, op);
    if ins.len() != 2 || outs.len() != 1 || ir.results(op).len() != 1 {
        return None;
    }
    let (a, c) = (ins[0], outs[0]);
    let res = ir.result(op, 0);
    let rt = ir.value_type(res);
    // Everything checked before anything is created: a failed match changes nothing.
    let rank3 = |t: Type| t.is_tensor() && t.rank() == Some(3);
    if !rank3(ir.value_type(a)) || !rank3(ir.value_type(c)) || !rank3(rt) {
        return None;
    }
    let unit_batch = |v: Value| ir.value_type(v).shape().is_some_and(|s| s[0] == 1);
    let w = match broadcast_source(ir, ins[1]) {
        Some(w) => w,
        // A batch of one on both sides (TOSA writes every matmul so): B's one matrix.
        None if unit_batch(a) && unit_batch(ins[1]) && rank3(ir.value_type(ins[1])) => {
            collapse(ir, op, ins[1])?
        }
        None => return None,
    };
    let a2 = collapse(ir, op, a)?;
    let c2 = collapse(ir, op, c)?;
    let mt = ir.value_type(c2);
    let m = ir.create_op(
        OpSpec::new(intern_name("linalg.matmul"), ir.loc(op))
            .operands([a2, w, c2])
            .results([mt])
            .prop("operandSegmentSizes", Attribute::dense_i32_array(&[2, 1]))
            .regions(1),
    );
    let region = ir.regions_of(m)[0];
    let loc = ir.loc(op);
    body::build_body(ir, "linalg.matmul", region, &[a2, w], &[c2], loc, false).ok()?;
    ir.insert_before(op, m);
    let shape = rt.shape()?.to_vec();
    let mut sizes = vec![];
    for (i, s) in shape.iter().enumerate() {
        if *s == DYNAMIC {
            // Batch and rows from the left operand, columns (dynamic when the right
            // operand is a `1xKx?` of the unit-batch case) from the init.
            let src = if i < 2 { a } else { c };
            sizes.push(dim(ir, op, src, i as i64)?);
        }
    }
    let e = ir.create_op(
        OpSpec::new(intern_name("tensor.expand_shape"), ir.loc(op))
            .operands(std::iter::once(ir.result(m, 0)).chain(sizes))
            .results([rt])
            .prop("reassociation", reassoc_01_2())
            .prop("static_output_shape", Attribute::dense_i64_array(&shape)),
    );
    ir.insert_before(op, e);
    let new = ir.result(e, 0);
    ir.replace_all_uses(res, new);
    ir.erase_op(op);
    Some(())
}

pub const CANONICALIZE_BATCH_MATMUL: &[ftuner_ir::dialect::CanonFn] = &[batch_matmul_broadcast_rhs];
