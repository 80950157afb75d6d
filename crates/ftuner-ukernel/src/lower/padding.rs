//! Padded plans: operands grown by the run-time residue's padding so the last tiles stay
//! in bounds, and the amount each plan pads.

use super::{Plan, B};
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, BlockId, Type, Value, DYNAMIC};

/// Rows or columns the plan's tiles cover past a residue, per residue (all 0 for an exact
/// plan; only the static extent's residue counts when there is one).
pub(crate) fn plan_padding(plan: &Plan) -> Vec<i64> {
    let (main, st, res) = plan;
    res.iter()
        .enumerate()
        .map(|(r, v)| {
            if st.is_some_and(|s| s % main != r as i64) {
                0
            } else {
                v.iter().sum::<i64>() - r as i64
            }
        })
        .collect()
}

/// A padded plan's tiles reach past the extent: the operands grow by the padding of the
/// run-time residue (zeros), the loops run over the padded tensors, and the result is the
/// extent's part. `None` when the plan is exact.
pub(super) fn padding_amount(
    b: &mut B<'_>,
    blk: BlockId,
    plan: &Plan,
    total: Value,
) -> Option<Value> {
    let pads = plan_padding(plan);
    if pads.iter().all(|p| *p == 0) {
        return None;
    }
    let (main, st, _) = plan;
    if let Some(s) = st {
        return Some(b.index(blk, pads[(s % main) as usize]));
    }
    let flat = pads
        .iter()
        .map(|p| ftuner_ir::Scalar::Int(*p as i128))
        .collect();
    let table = b.index_table(blk, vec![*main], flat);
    let cm = b.index(blk, *main);
    let rem = b.ibin(blk, ops::arith::RemuiOp::NAME, total, cm);
    Some(b.val(
        blk,
        ops::tensor::ExtractOp::NAME,
        vec![table, rem],
        Type::index(),
        vec![],
    ))
}

/// `v` with `high[j]` zeros appended along dim j (where given), as `tensor.pad`.
pub(super) fn pad_high(b: &mut B<'_>, blk: BlockId, v: Value, high: &[Option<Value>]) -> Value {
    let ty = b.ir.value_type(v);
    let shape = ty.shape().unwrap_or(&[]).to_vec();
    let elem = ty.element_type();
    let rank = shape.len();
    let mut dyn_high = vec![];
    let mut st_high = vec![];
    let mut new_shape = vec![];
    for (j, d) in shape.iter().enumerate() {
        match high.get(j).copied().flatten() {
            Some(h) => {
                dyn_high.push(h);
                st_high.push(DYNAMIC);
                new_shape.push(DYNAMIC);
            }
            None => {
                st_high.push(0);
                new_shape.push(*d);
            }
        }
    }
    if dyn_high.is_empty() {
        return v;
    }
    let zero = b.fzero(blk, elem);
    let n = dyn_high.len() as i32;
    let mut ops = vec![v];
    ops.extend(dyn_high);
    let p = b.op(
        blk,
        ops::tensor::PadOp::NAME,
        ops,
        vec![ty.with_shape(new_shape)],
        vec![
            ("static_low", Attribute::dense_i64_array(&vec![0; rank])),
            ("static_high", Attribute::dense_i64_array(&st_high)),
            (
                "operandSegmentSizes",
                Attribute::dense_i32_array(&[1, 0, n]),
            ),
        ],
        1,
    );
    let r = b.ir.regions_of(p)[0];
    let pb = b.ir.append_block(r, &vec![Type::index(); rank]);
    b.yield_(pb, ops::tensor::YieldOp::NAME, vec![zero]);
    b.ir.result(p, 0)
}
