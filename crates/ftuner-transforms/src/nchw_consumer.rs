//! The one elementwise consumer of an NCHW op that a loop over the op's images (or planes)
//! can take with it: what `linalg-fuse-elementwise-ops` leaves after each conv of a CNN
//! (BatchNorm, ReLU/ReLU6, a residual add). `convert-1x1-conv-to-matmul` moves it into its
//! per-image loop, `peel-padded-windows` into its per-plane loop; each applies it to the
//! piece of output just computed, while that is in cache, instead of another pass over
//! the activations.

use ftuner_dialects::linalg::body::{all_parallel, indexing_maps};
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ops;
use ftuner_ir::{AffineExpr, AffineMap, Ir, OpId, Value};

/// How the consumer reads one of its inputs.
pub(crate) enum Input {
    /// The producer's result.
    Producer,
    /// A tensor like the output, through the identity map: sliced like the output.
    Element(Value),
    /// Read by channel (`d1`) and constants only: the tensor, and the same map over `(f, p)`
    /// (a channel and a position of a per-image `F x HW` matmul).
    Channel(Value, AffineMap),
}

/// The elementwise consumer that moves into the loop.
pub(crate) struct Consumer {
    pub(crate) g: OpId,
    pub(crate) ins: Vec<Input>,
    /// The consumer's output init (not read).
    pub(crate) init: Value,
}

/// The one use of `op`'s (4-d) result, when it is a `linalg.generic` a loop can take: in
/// the same block, all loops parallel, one output of the result's type written through the
/// identity map and not read, no `linalg.index`, every input read per channel or per
/// element.
pub(crate) fn consumer(ir: &Ir, op: OpId) -> Option<Consumer> {
    let r = ir.result(op, 0);
    let [u] = ir.uses(r) else {
        return None;
    };
    let g = u.op;
    if ir.name(g) != ops::linalg::GenericOp::NAME
        || !all_parallel(ir, g)
        || ir.results(g).len() != 1
        || ir.parent_block(g) != ir.parent_block(op)
        || ir.value_type(ir.result(g, 0)) != ir.value_type(r)
    {
        return None;
    }
    let (gins, gouts) = ins_outs(ir, g);
    let maps = indexing_maps(ir, g)?;
    let &[init] = gouts.as_slice() else {
        return None;
    };
    if maps.len() != gins.len() + 1 || maps.iter().any(|m| m.num_dims != 4) {
        return None;
    }
    if !maps[gins.len()].is_identity() {
        return None;
    }
    let body = ir.region_entry(*ir.regions_of(g).first()?)?;
    if ir.block_args(body).len() != gins.len() + 1 || ir.has_uses(ir.block_args(body)[gins.len()]) {
        return None;
    }
    let mut uses_index = false;
    ir.walk_pre(g, &mut |o| {
        uses_index |= ir.name(o) == ops::linalg::IndexOp::NAME
    });
    if uses_index {
        return None;
    }
    let rshape = ir.value_type(r).shape()?.to_vec();
    let ins = gins
        .iter()
        .zip(&maps)
        .map(|(v, m)| {
            if *v == r {
                return m.is_identity().then_some(Input::Producer);
            }
            let t = ir.value_type(*v);
            if m.is_identity() {
                return (t.is_tensor() && t.shape()? == rshape.as_slice())
                    .then_some(Input::Element(*v));
            }
            let per_channel = m.results.iter().map(|e| match e {
                AffineExpr::Dim(1) => Some(AffineExpr::Dim(0)),
                AffineExpr::Const(c) => Some(AffineExpr::Const(*c)),
                _ => None,
            });
            Some(Input::Channel(
                *v,
                AffineMap::new(2, 0, per_channel.collect::<Option<_>>()?),
            ))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Consumer { g, ins, init })
}
