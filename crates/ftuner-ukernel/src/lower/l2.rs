//! What the target's L2 holds of a B read in place: whether its rows collide in L2's sets,
//! and whether it comes from L3 at each call or iteration (so that prefetching its next
//! column panel pays).

use super::ir_attr_i64;
use ftuner_dialects::ops::{func, scf, tensor};
use ftuner_ir::{Ir, OpId, Value, DYNAMIC};

/// Whether the rows of a contiguous B (`k x n`, static n), read in place, fall into so
/// few sets of the target's L2 that a k block of them does not fit its ways: a row stride
/// of `s` cache lines visits `sets / gcd(s, sets)` distinct sets, so min(K, kc) rows put
/// `rows / distinct` lines in each. N = 3072 f32 on a 2 MiB 16-way L2 (2048 sets):
/// 192 lines, 32 sets, 768 rows -> 24 lines a set > 15 ways; N = 2304 -> 128 sets, 6 lines
/// (fits); a stride that is not a whole number of lines spreads its rows.
pub(super) fn rows_collide_in_l2(
    ir: &Ir,
    op: OpId,
    bval: Value,
    l2: Option<&ftuner_hw::CacheLevel>,
) -> bool {
    let Some(l2) = l2 else {
        return false;
    };
    let ty = ir.value_type(bval);
    let (Some(&[k, n]), Some(bits)) = (ty.shape(), ty.element_type().bit_width()) else {
        return false;
    };
    let kc = ir_attr_i64(ir, op, "kc").unwrap_or(0);
    let line = l2.line as i64;
    let stride = n * bits as i64 / 8;
    if n == DYNAMIC || stride <= 0 || stride % line.max(1) != 0 || l2.sets() == 0 || kc <= 0 {
        return false;
    }
    let rows = if k == DYNAMIC { kc } else { k.min(kc) };
    l2.most_lines_in_a_set(stride as u64, rows as u64) > l2.ways.saturating_sub(1) as u64
}

/// The L2 of the patch's target (None for a GPU or an unknown target).
pub(super) fn target_l2(ir: &Ir, op: OpId) -> Option<ftuner_hw::CacheLevel> {
    ir.attr(op, "target")
        .and_then(|a| a.as_str())
        .and_then(|t| ftuner_hw::HardwareModel::load_named(t).ok())
        .and_then(|m| m.cpu)
        .map(|c| c.l2)
}

/// Whether B (static `k x n`) comes from L3 at each call, so that read in place each
/// column panel misses at its first row strip: what prefetching the next panel hides.
/// When it is larger than the target's L2: a B that L2 holds is read from L2 by every
/// strip after the first call (or iteration), and the prefetches would only take load
/// slots. A slice of a tensor taken per iteration of the loop around the op
/// ([`sliced_per_iteration`]: a matmul per image of a batched activation, another part of
/// it at each iteration) when it is larger than half of L2: written a layer ago beside
/// that layer's own operands, it is not resident (MobileNetV2's 1x1
/// convs at 56x56, 144 -> 24, B 1.8 MiB on a 2 MiB L2; the whole model saved, one
/// thread, tools/bench/ab_saved.py 9 rounds, Xeon family 6 model 167: batch 8 65.2 ->
/// 62.7 ms, batch 1 8.96 -> 8.70; with every B in a loop at half of L2 (the im2col of a
/// stem and loop-invariant weights too) 63.7 -> 60.8 and 7.48 -> 7.18, two threads batch
/// 8 37.9 -> 35.5, ResNet-50 level, 426 / 430 ms at batch 8). A dynamic shape is not
/// known to be larger: no prefetch (measured on an Emerald Rapids with prefetches there:
/// W3's 35 x 700 x 2048, dynamic N, 8-10% slower).
pub(super) fn b_streams(
    ir: &Ir,
    op: OpId,
    bval: Value,
    l2: Option<&ftuner_hw::CacheLevel>,
) -> bool {
    let ty = ir.value_type(bval);
    let (Some(l2), Some(&[k, n]), Some(bits)) = (l2, ty.shape(), ty.element_type().bit_width())
    else {
        return false;
    };
    let resident = if sliced_per_iteration(ir, op, bval) {
        l2.size as i64 / 2
    } else {
        l2.size as i64
    };
    k != DYNAMIC && n != DYNAMIC && k * n * (bits as i64 / 8) > resident
}

/// Whether `bval` is a `tensor.extract_slice`, taken inside the innermost `scf.for` around
/// `op`, of a tensor defined outside that loop: another part of it at each iteration.
/// Not a loop-invariant operand (a weight read at every step stays resident) nor one
/// computed in the iteration (an im2col copy made just before).
pub(super) fn sliced_per_iteration(ir: &Ir, op: OpId, bval: Value) -> bool {
    let mut cur = op;
    let lp = loop {
        let Some(p) = ir.op(cur).parent.and_then(|blk| ir.block_parent_op(blk)) else {
            return false;
        };
        match ir.name(p) {
            n if n == scf::ForOp::NAME => break p,
            n if n == func::FuncOp::NAME => return false,
            _ => cur = p,
        }
    };
    ir.defining_op(bval).is_some_and(|d| {
        ir.name(d) == tensor::ExtractSliceOp::NAME
            && ir.defined_inside(bval, lp)
            && !ir.defined_inside(ir.operand(d, 0), lp)
    })
}
