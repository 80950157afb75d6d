//! `vector`: op definitions come from its spec (ir-specs/vector.toml); this module adds
//! the verifiers a spec cannot state.

use ftuner_ir::Context;
use ftuner_ir::{
    intern_name, AffineExpr, AffineMap, AttrKind, Attribute, BlockId, Ir, MemoryEffects, OpId,
    OpSpec, Type, Value,
};
use rustc_hash::FxHashMap;

/// Transfers read and write memory only when their base is a memref (MLIR's
/// `TransferReadOp::getEffects`); on a tensor they are values.
fn transfer_effects(ir: &Ir, op: OpId) -> MemoryEffects {
    let base = ir
        .operands(op)
        .get(usize::from(ir.name(op) == "vector.transfer_write"));
    if base.is_some_and(|v| ir.value_type(*v).is_tensor()) {
        MemoryEffects::None
    } else {
        MemoryEffects::ReadWrite
    }
}

/// vector's interfaces: the transfers' memory effects.
pub fn register_extra(reg: &mut ftuner_ir::Registry) {
    for name in ["vector.transfer_read", "vector.transfer_write"] {
        if let Some(def) = reg.op_mut(name) {
            def.memory_effects = Some(transfer_effects);
        }
    }
}

/// `arith` ops that apply to vectors lane by lane as to scalars and that convert-to-llvm
/// lowers one to one on vectors: what a scalar elementwise body (a contraction's
/// epilogue, a convolution's consumer) may hold to be cloned on vectors. No `math` op:
/// `approximate-math` expands those on scalars.
pub const LANEWISE_ARITH: &[&str] = &[
    crate::ops::arith::AddfOp::NAME,
    crate::ops::arith::SubfOp::NAME,
    crate::ops::arith::MulfOp::NAME,
    crate::ops::arith::DivfOp::NAME,
    crate::ops::arith::NegfOp::NAME,
    crate::ops::arith::MaximumfOp::NAME,
    crate::ops::arith::MinimumfOp::NAME,
    crate::ops::arith::MaxnumfOp::NAME,
    crate::ops::arith::MinnumfOp::NAME,
    crate::ops::arith::CmpfOp::NAME,
    crate::ops::arith::SelectOp::NAME,
    crate::ops::arith::ExtfOp::NAME,
    crate::ops::arith::TruncfOp::NAME,
];

/// Whether scalar body `blk` (a `linalg.generic`'s: scalar block arguments, a terminator
/// yielding its result) can be cloned on vectors by [`clone_lanewise`]: every op before
/// the terminator is [`LANEWISE_ARITH`] or a constant, without regions, with one result
/// and scalar operands.
pub fn is_lanewise_body(ir: &Ir, blk: BlockId) -> bool {
    let scalar = |v: &Value| !ir.value_type(*v).is_shaped();
    let ops = ir.block_ops_vec(blk);
    let Some((_, rest)) = ops.split_last() else {
        return false;
    };
    ir.block_args(blk).iter().all(scalar)
        && rest.iter().all(|o| {
            let name = ir.name(*o);
            (LANEWISE_ARITH.contains(&name) || name == crate::ops::arith::ConstantOp::NAME)
                && ir.regions_of(*o).is_empty()
                && ir.results(*o).len() == 1
                && ir.operands(*o).iter().all(scalar)
        })
}

/// The ops of scalar body `blk` ([`is_lanewise_body`]) cloned on `lanes`-lane vectors,
/// each created op handed to `place` (which puts it at the caller's insertion point):
/// `vmap` maps the block's arguments to their vectors; constants and values from outside
/// the body enter as `vector.broadcast`s at `loc`. Returns the vector of the value the
/// terminator yields first.
pub fn clone_lanewise(
    ir: &mut Ir,
    blk: BlockId,
    vmap: &mut FxHashMap<Value, Value>,
    (lanes, loc): (i64, Attribute),
    place: &mut dyn FnMut(&mut Ir, OpId),
) -> Option<Value> {
    let splat = |ir: &mut Ir, place: &mut dyn FnMut(&mut Ir, OpId), s: Value| {
        let ty = Type::vector(vec![lanes], ir.value_type(s));
        let o = ir.create_op(
            OpSpec::new(intern_name(crate::ops::vector::BroadcastOp::NAME), loc)
                .operands([s])
                .results([ty]),
        );
        place(ir, o);
        ir.result(o, 0)
    };
    let ops = ir.block_ops_vec(blk);
    let (y, rest) = ops.split_last()?;
    for o in rest {
        if ir.name(*o) == crate::ops::arith::ConstantOp::NAME {
            let c = ir.clone_op(*o, &mut FxHashMap::default());
            place(ir, c);
            let v = splat(ir, place, ir.result(c, 0));
            vmap.insert(ir.result(*o, 0), v);
            continue;
        }
        for v in ir.operands(*o).to_vec() {
            if let std::collections::hash_map::Entry::Vacant(e) = vmap.entry(v) {
                e.insert(splat(ir, place, v));
            }
        }
        let c = ir.clone_op(*o, vmap);
        place(ir, c);
        for r in ir.results(c).to_vec() {
            let ty = ir.value_type(r);
            ir.set_value_type(r, Type::vector(vec![lanes], ty));
        }
    }
    let yv = *ir.operands(*y).first()?;
    Some(match vmap.get(&yv) {
        Some(r) => *r,
        None => splat(ir, place, yv),
    })
}

/// Properties of an in-bounds 1-d `vector.transfer_read`/`transfer_write` along dim
/// `along` of a rank-`rank` tensor or buffer; `segments` as `operandSegmentSizes`.
pub fn transfer_props(
    rank: usize,
    along: usize,
    segments: [i32; 4],
) -> Vec<(&'static str, Attribute)> {
    let map = AffineMap {
        num_dims: rank as u32,
        num_symbols: 0,
        results: vec![AffineExpr::Dim(along as u32)],
    };
    vec![
        ("in_bounds", Attribute::array(vec![Attribute::bool(true)])),
        ("operandSegmentSizes", Attribute::dense_i32_array(&segments)),
        ("permutation_map", Attribute::affine_map(map)),
    ]
}

/// Whether a `vector.transfer_read`/`transfer_write` carries a mask operand (the fourth
/// operand segment).
pub fn transfer_masked(ir: &Ir, op: OpId) -> bool {
    ir.attr(op, "operandSegmentSizes")
        .and_then(|a| a.as_dense_i64s())
        .is_some_and(|s| s.get(3).copied().unwrap_or(0) != 0)
}

/// Whether every dim of a `vector.transfer_read`/`transfer_write` is marked in bounds (what
/// [`transfer_props`] builds): its lanes are all addresses of the buffer.
pub fn transfer_in_bounds(ir: &Ir, op: OpId) -> bool {
    ir.attr(op, "in_bounds")
        .and_then(|a| a.as_array())
        .is_some_and(|a| {
            !a.is_empty() && a.iter().all(|b| matches!(b.kind(), AttrKind::Bool(true)))
        })
}

/// `vector.shuffle`: operands of one element type and rank (0-d ones read as one lane)
/// with the same trailing dims; one mask entry per leading row of the result, each naming
/// a row of the two operands concatenated along the leading dim.
pub fn verify_shuffle(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let (a, b) = (
        ir.value_type(ir.operand(op, 0)),
        ir.value_type(ir.operand(op, 1)),
    );
    let r = ir.value_type(ir.result(op, 0));
    let (Some(sa), Some(sb), Some(sr)) = (a.shape(), b.shape(), r.shape()) else {
        return Err("expects vector operands and result".into());
    };
    if a.element_type() != b.element_type() || a.element_type() != r.element_type() {
        return Err("operands and result must have the same element type".into());
    }
    if sa.len() != sb.len() || sa.get(1..) != sb.get(1..) {
        return Err("operands must have the same rank and trailing dims".into());
    }
    let lead = |s: &[i64]| s.first().copied().unwrap_or(1);
    let (na, nb) = (lead(sa), lead(sb));
    let mask = ir
        .attr(op, "mask")
        .and_then(|m| m.as_dense_i64s())
        .ok_or("requires a `mask` dense i64 array")?;
    if sr.first() != Some(&(mask.len() as i64)) || sr.get(1..) != sa.get(1..).or(Some(&[])) {
        return Err(format!(
            "result must have {} leading rows (the mask's length) and the operands' trailing dims",
            mask.len()
        ));
    }
    if let Some(bad) = mask.iter().find(|m| **m < -1 || **m >= na + nb) {
        return Err(format!(
            "mask entry {bad} is out of range for operands of {na} and {nb} rows"
        ));
    }
    Ok(())
}

/// Lanes of `elem` in one 64-byte line (16 f32, 8 f64): lower-ukernels' threshold for
/// transposing an NT contraction's B (a full block of that many rows). The transposes'
/// own blocks follow the target's registers ([`register_lanes`]).
pub fn transpose_lanes(elem: ftuner_ir::Type) -> i64 {
    register_lanes(elem, 64)
}

/// Lanes of `elem` in a vector register of `vector_bytes` (8 f32 in AVX2's 32 bytes), at
/// least 1.
pub fn register_lanes(elem: ftuner_ir::Type, vector_bytes: u64) -> i64 {
    let bytes = elem.bit_width().map_or(4, |b| (b as i64 / 8).max(1));
    (vector_bytes as i64 / bytes).max(1)
}

/// The w x w transpose of `rows` (w vectors of w lanes, w a power of two) as a network of
/// `vector.shuffle`s, each built by `shuffle(v1, v2, mask)`: log2(w) rounds, new row
/// `2i + h` the low (h = 0) or high half of rows `i` and `i + w/2` zipped. A round
/// rotates the (row, lane) address bits by one, so after log2(w) rounds row and lane have
/// swapped: `w/2 · 2 · log2(w)` shuffles (64 for 16 x 16).
pub fn transpose_network<V: Copy>(
    rows: &[V],
    shuffle: &mut dyn FnMut(V, V, &[i64]) -> V,
) -> Vec<V> {
    let w = rows.len();
    debug_assert!(w.is_power_of_two());
    let half = w / 2;
    let zip = |h: usize| -> Vec<i64> {
        (0..half)
            .flat_map(|j| [(h * half + j) as i64, (w + h * half + j) as i64])
            .collect()
    };
    let (lo, hi) = (zip(0), zip(1));
    let mut cur = rows.to_vec();
    for _ in 0..w.trailing_zeros() {
        cur = (0..half)
            .flat_map(|i| [(i, &lo), (i, &hi)])
            .map(|(i, mask)| shuffle(cur[i], cur[i + half], mask))
            .collect();
    }
    cur
}

#[cfg(test)]
mod tests {
    /// The network transposes: rows of lane numbers come back as columns.
    #[test]
    fn transpose_network_transposes() {
        for w in [2usize, 4, 8, 16] {
            let rows: Vec<Vec<usize>> = (0..w)
                .map(|r| (0..w).map(|c| r * w + c).collect())
                .collect();
            let mut store = rows.clone();
            let ids: Vec<usize> = (0..w).collect();
            let out = super::transpose_network(&ids, &mut |a, b, mask| {
                let cat: Vec<usize> = store[a].iter().chain(&store[b]).copied().collect();
                store.push(mask.iter().map(|m| cat[*m as usize]).collect());
                store.len() - 1
            });
            for (c, id) in out.iter().enumerate() {
                let want: Vec<usize> = (0..w).map(|r| r * w + c).collect();
                assert_eq!(store[*id], want, "w = {w}, column {c}");
            }
        }
    }
}
