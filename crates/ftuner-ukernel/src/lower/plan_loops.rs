//! One patch's lowering: the dispatch (batches, transposed B, convolutions, plain
//! contractions), padding and B-packing decisions, and the kc / mc loops around the tile
//! nest.

use super::batch::{nest, nest_from, split_batch};
use super::conv::{conv_layout, lower_conv};
use super::dot::{skinny_max, transpose_skinny_b};
use super::l2::{b_streams, rows_collide_in_l2, target_l2};
use super::packing::{
    hoisted_packing, pack_a_block, pack_panels, prepared, top_level, transpose_strided_b,
};
use super::padding::{pad_high, padding_amount, plan_padding};
use super::register_tile::vector_plan;
use super::tiles::{layout, tile};
use super::{ir_attr_i64, reduction_dim, res_pos, Blocking, Layout, Plans, VectorBody, B};
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ops::{arith, func, linalg, scf, tensor};
use ftuner_dialects::ukernel::{epilogue_block, epilogue_inputs, epilogue_maps};
use ftuner_ir::{AffineExpr, Attribute, BlockId, Ir, OpId, Type, Value, DYNAMIC};

/// A patch whose init is a `linalg.fill` of zero, every tile of which gets a register
/// body (no batch dims, the largest tile within the vector-body limit), does not need
/// the fill: its register tiles store their sums in the first k block (and an empty
/// reduction still runs one block, writing zeros). The patch then takes the fill's
/// destination as its init, so the fill dies when nothing else reads it. Returns whether
/// the patch was so changed.
fn zero_init_of(ir: &mut Ir, op: OpId, plans: &Plans, vb: &VectorBody) -> bool {
    let biggest = plans
        .m
        .0
        .max(plans.m.2.iter().flatten().copied().max().unwrap_or(0))
        * plans
            .n
            .0
            .max(plans.n.2.iter().flatten().copied().max().unwrap_or(0));
    if !vb.batch.is_empty() || biggest > vb.max_elems {
        return false;
    }
    take_zero_fill(ir, op)
}

/// When `v` is the result of a `linalg.fill` of zero (one destination): that fill.
pub(super) fn zero_fill(ir: &Ir, v: Value) -> Option<OpId> {
    let fill = ir
        .defining_op(v)
        .filter(|f| ir.name(*f) == linalg::FillOp::NAME)?;
    let (fins, fouts) = ins_outs(ir, fill);
    let zero = fins
        .first()
        .and_then(|v| ir.defining_op(*v))
        .filter(|c| ir.name(*c) == arith::ConstantOp::NAME)
        .and_then(|c| ir.attr(c, "value"))
        .is_some_and(|a| matches!(a.kind(), ftuner_ir::AttrKind::Float { bits: 0, .. }));
    (zero && fouts.len() == 1).then_some(fill)
}

/// When `op`'s init is a `linalg.fill` of zero, make the fill's destination its init (the
/// fill dies when nothing else reads it) and return true: the caller's tiles must then
/// write every element of C, starting from zero.
pub(super) fn take_zero_fill(ir: &mut Ir, op: OpId) -> bool {
    let (_, outs) = ins_outs(ir, op);
    let Some(&out) = outs.first() else {
        return false;
    };
    let Some(fill) = zero_fill(ir, out) else {
        return false;
    };
    let dest = ins_outs(ir, fill).1[0];
    let Some(pos) = ir.operands(op).iter().position(|v| *v == out) else {
        return false;
    };
    ir.set_operand(op, pos, dest);
    true
}

/// The lowering's knobs: the pass options, or a patch's schedule.
#[derive(Clone, Copy)]
pub(super) struct Knobs {
    /// Tiles of at most this many elements get register bodies.
    pub(super) vector_bodies: Option<i64>,
    /// Split the reduction into blocks of at most kc (evenly: see [`loops`]).
    pub(super) k_blocking: bool,
    /// Pack B into panels: `None` lets the rule decide.
    pub(super) pack_b: Option<bool>,
    pub(super) blocking: Blocking,
    /// The skinny-N rule ([`transpose_skinny_b`]) has been applied to this patch.
    pub(super) skinny_done: bool,
    /// Mark the N tile loops parallel (else only the M loops): false for the skinny
    /// patch, whose N is a single tile (its one-iteration N loop, kept because it holds
    /// parallel loops, would be the outermost parallel one and run on one thread).
    pub(super) parallel_n: bool,
}

/// [`lower`] after the run-time shape checks: batches split off first, a strided B
/// transposed, a windowed contraction lowered as a convolution; the rest is a plain
/// contraction ([`lower_plain`]).
pub(super) fn lower_checked(ir: &mut Ir, op: OpId, plans: Plans, k: Knobs) -> Result<(), String> {
    // (A patch split here is not split by the skinny rule again: a transposed B has N of
    // at least the transposition's width.)
    let again = |ir: &mut Ir, p: OpId, pack_b| {
        let k = Knobs {
            pack_b,
            skinny_done: true,
            ..k
        };
        lower_checked(ir, p, plans.clone(), k)
    };
    // Batches outermost: each batch is a GEMM of its own, whose B panels stay in cache
    // while the row strips of A pass (a batch loop inside the tile loops walks every
    // batch's panels per tile).
    if k.vector_bodies.is_some() {
        if let Some(inner) = split_batch(ir, op, k.blocking)? {
            // The inner patch carries the same plans.
            return lower_checked(ir, inner, plans.clone(), k);
        }
    }
    if let (Some(max), None) = (k.vector_bodies, k.pack_b) {
        if let Some(lay) = layout(ir, op) {
            if let Some(vb) = vector_plan(ir, op, &lay, max) {
                // Only for a contraction run once per call (not a batch's GEMM inside its
                // loop, as attention's): each split compiles the nest twice.
                let nmax = skinny_max(vb.lanes);
                let narrow_n = plans.n.1.is_none_or(|n| n <= nmax);
                if let Some((sp, wide)) = (!k.skinny_done && narrow_n && once_per_call(ir, op))
                    .then(|| transpose_skinny_b(ir, op, &lay, &vb))
                    .flatten()
                {
                    // B is read whole by every dot tile: no k blocks (each would pay the
                    // tiles' horizontal sums again), no panels.
                    let skinny = Knobs {
                        pack_b: Some(false),
                        k_blocking: false,
                        skinny_done: true,
                        parallel_n: false,
                        ..k
                    };
                    // Its N is at most skinny_max: one tile of all N columns (a dot tile
                    // of any width is exact; two narrower tiles would read A twice), and
                    // no code for the plan's wider tiles, which never run here.
                    let mut narrow = plans.clone();
                    if narrow.n.0 > nmax {
                        narrow.n.0 = nmax;
                        narrow.n.2 = (0..nmax).map(|r| [r].repeat((r > 0) as usize)).collect();
                    }
                    lower_checked(ir, sp, narrow, skinny)?;
                    if let Some(w) = wide {
                        let done = Knobs {
                            skinny_done: true,
                            ..k
                        };
                        lower_checked(ir, w, plans.clone(), done)?;
                    }
                    return Ok(());
                }
                if let Some((tp, ip)) =
                    transpose_strided_b(ir, op, &lay, plans.m.0, (vb.elem, vb.vector_bits))
                {
                    again(ir, tp, None)?;
                    again(ir, ip, Some(false))?;
                    return Ok(());
                }
            }
        }
    }
    let Some(lay) = layout(ir, op) else {
        let conv = conv_layout(ir, op).ok_or(
            "only patches with one M and one N loop dimension and plain indexing, or windowed contractions with one N dimension, are lowered",
        )?;
        if k.vector_bodies.is_none() {
            return Err("windowed contractions are lowered with vector bodies only".into());
        }
        return lower_conv(ir, op, &conv, &plans, (k.blocking, k.k_blocking));
    };
    lower_plain(ir, op, &lay, &plans, k)
}

/// One plain contraction's tile nest: the patch, its layout and plans, the run-time M and
/// N, the init (C), and whether to split the reduction.
#[derive(Clone, Copy)]
struct Nest<'a> {
    op: OpId,
    lay: &'a Layout,
    plans: &'a Plans,
    sizes: (Value, Value),
    out: Value,
    k_blocking: bool,
    /// The target's L2 (loaded once per contraction, for the loop-order and B rules).
    l2: Option<&'a ftuner_hw::CacheLevel>,
    /// A contiguous B of run-time width under a wide static M, read once per call
    /// ([`static_m_over_mc`] of the contraction as written, before a padded plan gives its
    /// output run-time sizes): B packed unless forced in place, and then, with C stored
    /// by rows, the row strips outside unless an order is forced.
    wide_static_m: bool,
}

/// A contraction with one M and one N loop dim and plain indexing: the tile loops (with
/// B packed when that pays), built in a scratch block and moved before the patch, whose
/// result then replaces it.
fn lower_plain(ir: &mut Ir, op: OpId, lay: &Layout, plans: &Plans, k: Knobs) -> Result<(), String> {
    let loc = ir.loc(op);
    ir.op(op).parent.ok_or("patch not in a block")?;
    // Build in a scratch block, then move the ops before the patch.
    let scratch = ir.new_block(&[]);
    let vector = k
        .vector_bodies
        .and_then(|max| vector_plan(ir, op, lay, max));
    let zero_init = match &vector {
        Some(vb) => zero_init_of(ir, op, plans, vb),
        None => false,
    };
    // The init may have changed (a zero fill's destination instead of the fill).
    let (_, outs) = ins_outs(ir, op);
    let l2 = target_l2(ir, op);
    let mut b = B::new(ir, loc);
    b.vector = vector;
    b.blocking = k.blocking;
    b.parallel_n = k.parallel_n;
    b.zero_init = zero_init;
    b.rows_outside = k
        .blocking
        .rows_outside
        .unwrap_or_else(|| rows_outside(b.ir, op, lay, plans, l2.as_ref()));
    let out = outs[0];
    let wide_static_m =
        !strided_n(lay) && once_per_call(b.ir, op) && static_m_over_mc(b.ir, op, lay, out);
    let sizes = (
        out_dim(&mut b, scratch, out, lay, lay.dm),
        out_dim(&mut b, scratch, out, lay, lay.dn),
    );
    let padded = pad_operands(&mut b, scratch, op, lay, plans, sizes);
    let out = padded.as_ref().map_or(out, |p| p.out);
    let nest = Nest {
        op,
        lay,
        plans,
        sizes,
        out,
        k_blocking: k.k_blocking,
        l2: l2.as_ref(),
        wide_static_m,
    };
    let result = packed_or_in_place(&mut b, scratch, &nest, k.pack_b);
    // A padded plan's result, cut back to the extent.
    let result = match padded {
        Some(p) => cut_back(&mut b, scratch, result, p.sizes, p.ty),
        None => result,
    };
    let ops = ir.block_ops_vec(scratch);
    for o in ops {
        ir.unlink(o);
        ir.insert_before(op, o);
    }
    ir.replace_op(op, &[result]);
    Ok(())
}

/// The run-time size of the output along loop dim `d`.
fn out_dim(b: &mut B<'_>, blk: BlockId, out: Value, lay: &Layout, d: u32) -> Value {
    let p = res_pos(&lay.maps[2], d).unwrap_or(0) as i64;
    let pv = b.index(blk, p);
    b.dim(blk, out, pv)
}

/// A padded patch's new init, and the unpadded result's sizes and type.
struct Padded {
    out: Value,
    sizes: Vec<Value>,
    ty: Type,
}

/// A padded plan: every operand indexed by M or N grows by the padding of the run-time
/// residue, so the last tiles stay in bounds; the result is cut back to M x N after.
fn pad_operands(
    b: &mut B<'_>,
    blk: BlockId,
    op: OpId,
    lay: &Layout,
    plans: &Plans,
    (msz, nsz): (Value, Value),
) -> Option<Padded> {
    let padm = padding_amount(b, blk, &plans.m, msz);
    let padn = padding_amount(b, blk, &plans.n, nsz);
    if padm.is_none() && padn.is_none() {
        return None;
    }
    let (pins, pouts) = ins_outs(b.ir, op);
    let out = pouts[0];
    let epi = epilogue_inputs(b.ir, op);
    let emaps = epilogue_maps(b.ir, op);
    let all: Vec<(Value, ftuner_ir::AffineMap)> = pins
        .iter()
        .chain(&pouts)
        .copied()
        .zip(lay.maps.iter().cloned())
        .chain(epi.iter().copied().zip(emaps))
        .collect();
    let first = b.ir.operands(op).len() - all.len();
    for (k, (v, m)) in all.iter().enumerate() {
        let high: Vec<Option<Value>> = m
            .results
            .iter()
            .map(|e| match e {
                AffineExpr::Dim(d) if *d == lay.dm => padm,
                AffineExpr::Dim(d) if *d == lay.dn => padn,
                _ => None,
            })
            .collect();
        let pv = pad_high(b, blk, *v, &high);
        if pv != *v {
            b.ir.set_operand(op, first + k, pv);
        }
    }
    // The sizes of the unpadded result, to cut the padded one back.
    let sizes: Vec<Value> = (0..lay.maps[2].results.len())
        .map(|j| {
            let jv = b.index(blk, j as i64);
            b.dim(blk, out, jv)
        })
        .collect();
    let ty = b.ir.value_type(out);
    Some(Padded {
        out: ins_outs(b.ir, op).1[0],
        sizes,
        ty,
    })
}

/// `result[0 .. sizes]`: a padded plan's result cut back to the extent.
fn cut_back(b: &mut B<'_>, blk: BlockId, result: Value, sizes: Vec<Value>, ty: Type) -> Value {
    let rank = sizes.len();
    let n = rank as i32;
    let mut ops = vec![result];
    ops.extend(sizes);
    b.val(
        blk,
        tensor::ExtractSliceOp::NAME,
        ops,
        ty,
        vec![
            ("static_offsets", Attribute::dense_i64_array(&vec![0; rank])),
            (
                "static_sizes",
                Attribute::dense_i64_array(&vec![DYNAMIC; rank]),
            ),
            ("static_strides", Attribute::dense_i64_array(&vec![1; rank])),
            (
                "operandSegmentSizes",
                Attribute::dense_i32_array(&[1, 0, n, 0]),
            ),
        ],
    )
}

/// The loops with B packed into panels or read in place. Packing B pays when a register
/// tile's row of B is not contiguous (B's N dim is not its innermost: each row would be
/// nr scalar loads, for every row strip); a contiguous B is read in place by fewer rows
/// than an mc block (the rule below), with its next panel prefetched where that pays
/// ([`mark_in_place_k_loops`]). `pack_b`: `None` lets the rule decide; `Some` forces.
fn packed_or_in_place(
    b: &mut B<'_>,
    scratch: BlockId,
    n: &Nest<'_>,
    pack_b: Option<bool>,
) -> Value {
    let Nest {
        op,
        lay,
        plans,
        sizes: (msz, nsz),
        out,
        l2,
        ..
    } = *n;
    let (ins, _) = ins_outs(b.ir, op);
    let kdim = reduction_dim(lay);
    let padded_n = plan_padding(&plans.n).iter().any(|p| *p != 0);
    let strided_n = strided_n(lay);
    let packable = !padded_n
        && kdim.is_some()
        && b.vector
            .as_ref()
            .is_some_and(|vb| vb.batch.is_empty() && plans.m.0 * plans.n.0 <= vb.max_elems);
    let pack = |b: &mut B<'_>, blk: BlockId| {
        if let (Some(vb), Some(dk)) = (b.vector.clone(), kdim) {
            let p = pack_panels(b, blk, lay, ins[1], dk, nsz, plans.n.0, vb.elem);
            b.packed = Some((p, plans.n.0));
        }
    };
    let oty = b.ir.value_type(out);
    // Packing forced, or a prepared B (a weight): packed whatever M, once, in the prepare
    // function (outline-weight-preparation runs again after this pass).
    // (Only for a contraction directly in a function's body: inside a loop the packing
    // could not be hoisted and would run at every iteration.)
    let top_level = top_level(b.ir, op);
    let always = packable
        && pack_b.unwrap_or_else(|| (top_level && prepared(b.ir, ins[1])) || n.wide_static_m);
    // A prepared B of a contraction inside loops (a conv's matmul per image): packed
    // before the outermost loop, where outline-weight-preparation takes the packing into
    // the prepare function, when B's panels are static.
    let once = once_per_call(b.ir, op);
    let hoisted = (packable && !always && pack_b.is_none() && !once)
        .then(|| hoisted_packing(b, op, lay, ins[1], plans.n.0))
        .flatten();
    // A contiguous B's rule (below) counts mc blocks of rows, unless its rows collide in L2.
    let contiguous_mc = (!strided_n && once)
        .then(|| mc_blocks(b.ir, op, plans))
        .flatten();
    let collide = !strided_n && rows_collide_in_l2(b.ir, op, ins[1], l2);
    let colliding = collide && once;
    // A contiguous B read in place whose next panel is worth prefetching.
    let streams = !strided_n && !collide && b_streams(b.ir, op, ins[1], l2);
    match pack_b {
        _ if hoisted.is_some() => {
            b.packed = hoisted;
            loops(b, scratch, n)
        }
        _ if always => {
            pack(b, scratch);
            // The rule's packed B under a wide static M: each strip's rows of C written in
            // order while the panels pass ([`static_m_over_mc`]).
            if n.wide_static_m && c_by_rows(lay) && b.blocking.rows_outside.is_none() {
                b.rows_outside = true;
            }
            loops(b, scratch, n)
        }
        // The rule: a strided B is packed when at least two row strips will read each
        // panel (M >= 2 main tiles), decided at run time; a single strip reads B in place.
        // A contiguous B (rows of N elements, read in place by each mc block of rows) is
        // packed from one whole mc block of rows: the copy is one pass over B, and in place
        // a tile's rows of B, N elements apart, share L2 with the mc x kc block of A that
        // the model sized for a packed panel (Zen 4, mc = 240, packing from four blocks:
        // W3's large GEMMs 0.94 -> 1.03 of the best library, W1 ~3% from M = 992, level at
        // 384-688, 5-50% behind at M <= 80; Emerald Rapids, mc = 432, from one block: the
        // best library / ftuner over 15 W3 shapes, median, 0.75-0.78 -> 0.86-0.88, from the
        // 512- and 1024-row GEMMs; W1 level; packing for 35 rows 30-50% slower). A
        // contiguous B whose rows collide in
        // L2 ([`rows_collide_in_l2`]) is packed from four row strips: in place it streams
        // from L3 at every strip (W1's N = 3072 on an Emerald Rapids: 56-70 GFLOP/s at
        // M = 80-1600 against the libraries' 105-145; packed 103-144; at M = 16 in place
        // is still 12% faster). Only for a contraction run once per call: the choice
        // compiles the nest twice (a batch's GEMM, as attention's, stays in place).
        None if packable && (strided_n || contiguous_mc.is_some() || colliding) => {
            let rows = match (colliding, contiguous_mc) {
                (true, _) => 4 * plans.m.0,
                (false, Some(mc)) => mc,
                (false, None) => 2 * plans.m.0,
            };
            let two = b.index(scratch, rows);
            let many = b.cmpi(scratch, 5, msz, two);
            b.if_else(
                scratch,
                many,
                oty,
                |b, tb| {
                    pack(b, tb);
                    let r = loops(b, tb, n);
                    b.packed = None;
                    r
                },
                |b, eb| {
                    let r = loops(b, eb, n);
                    mark_in_place_k_loops(b.ir, eb, streams);
                    r
                },
            )
        }
        _ => {
            let r = loops(b, scratch, n);
            mark_in_place_k_loops(b.ir, scratch, streams);
            r
        }
    }
}

/// Marks every k loop of the in-place branch `blk` (`scf.for`s with vector results: the
/// register tiles of every strip, residue rows included) `ftuner.prefetch_next_panel`
/// when B streams from L3 ([`b_streams`]) and the target's L2 holds its next
/// column panel beside the current one (B's rows do not collide in L2,
/// [`rows_collide_in_l2`]): `streams`. `prefetch-tile-updates` then fetches the next
/// panel while the strips compute on this one, in the loops that read B's rows through a
/// panel view and have at least 4 accumulators. Measured on an Emerald Rapids (W1, best
/// library / ftuner, three alternated runs): 16x2304x768 0.53-0.63 -> 0.89-0.94,
/// 16x768x3072 0.45-0.48 -> 0.80-0.83, 80 rows 0.65-0.71 -> 0.75-0.91, 384 rows
/// 0.93-0.97 -> 0.90-0.91; where the rows collide (N = 3072) the prefetched panel is
/// evicted before its use and 16 rows went 0.67-0.71 -> 0.47-0.53, hence the condition.
fn mark_in_place_k_loops(ir: &mut Ir, blk: BlockId, streams: bool) {
    if !streams {
        return;
    }
    let mut k_loops = vec![];
    for o in ir.block_ops(blk).collect::<Vec<_>>() {
        ir.walk_pre(o, &mut |x| {
            if ir.name(x) == scf::ForOp::NAME
                && !ir.results(x).is_empty()
                && ir.results(x).iter().all(|r| ir.value_type(*r).is_vector())
            {
                k_loops.push(x);
            }
        });
    }
    for l in k_loops {
        ir.set_attr(
            l,
            ftuner_dialects::scf::PREFETCH_NEXT_PANEL_ATTR,
            Some(Attribute::unit()),
        );
    }
}

/// Whether the tile nest runs its row strips outside its N tiles: M, N and K static, more
/// than one strip, and B (K x N) in half the target's L2. In the register tiles' layout,
/// A's rows are broadcast and B's rows are the vectors; strips outside is BLIS's order with
/// the operands' roles swapped: a strip's mr x kc block of A stays in L1 while B streams
/// from L2 under it, so B must fit L2. Its gain is C: N tiles outside write, per column
/// block, a piece of each of C's M rows (rows N elements apart, M in the hundreds, each
/// line read for ownership first, and an epilogue's operands read the same way), where
/// strips outside write C row by row, in order, which the hardware prefetchers follow.
/// The shorter the reduction, the more C costs against the FMAs. Measured on an Emerald
/// Rapids, one thread, batch 8, caches flushed between calls, the two rules switched in one
/// scratch build (ResNet-50's 1x1 convs with their BatchNorm and ReLU, and the residual
/// where said, each compiled alone): 64 -> 256 channels at 56x56 with a residual (256 x 64 x 3136)
/// 10.1 -> 6.8 ms, 64 -> 64 at 56x56 3.1 -> 2.2 ms, 128 -> 512 at 28x28 with a residual
/// 7.7 -> 6.4 ms, 256 -> 1024 at 14x14 7.1 -> 6.5 ms, the rest within 8% either way;
/// MobileNetV2's expansions (96 x 16 x 12544: 0.44 -> 0.33 ms). A B past half of L2 loses
/// (64 x 256 x 3136: 0.77 -> 1.28 ms: B streams from L3 at every strip), and so did blocks
/// of columns that fit it (strips outside within each block: 4-9% slower on the five such
/// 1x1 convs of ResNet-50).
fn rows_outside(
    ir: &Ir,
    op: OpId,
    lay: &Layout,
    plans: &Plans,
    l2: Option<&ftuner_hw::CacheLevel>,
) -> bool {
    let (ins, outs) = ins_outs(ir, op);
    let (Some(dk), [a, bv, ..], [c]) = (reduction_dim(lay), ins.as_slice(), outs.as_slice()) else {
        return false;
    };
    let size = |v: Value, map: usize, d: u32| {
        let shape = ir.value_type(v).shape().unwrap_or(&[]).to_vec();
        res_pos(&lay.maps[map], d)
            .and_then(|p| shape.get(p).copied())
            .filter(|s| *s != DYNAMIC)
    };
    let (Some(m), Some(n), Some(k)) = (size(*c, 2, lay.dm), size(*c, 2, lay.dn), size(*a, 0, dk))
    else {
        return false;
    };
    if !c_by_rows(lay) {
        return false;
    }
    let elem = ir
        .value_type(*bv)
        .element_type()
        .bit_width()
        .unwrap_or(32)
        .div_ceil(8) as i64;
    let Some(l2) = l2 else {
        return false;
    };
    m > plans.m.0 && k * n * elem <= l2.size as i64 / 2
}

/// Whether a contiguous B of run-time width is read by a static M of at least the patch's
/// mc rows (`out`: the contraction's output as written, before padding): then it is
/// packed, as a dynamic M's B is from one whole mc block (below, in
/// [`packed_or_in_place`]). Each column panel of B is read by every one of M's M / mr row
/// strips, and in place its rows lie N elements apart, a stride known only at run time: when it is
/// a multiple of a large power of two they fall into a few sets of L1 (and L2) and the
/// panel is fetched again for every strip; the copy is one pass over B. Measured on Zen 3
/// (one thread, `ftuner-run --bench 15`, five alternated rounds, medians): the DCGAN
/// generator's transposed convs as GEMMs, 1024x128 x 128xN at N = 2048 (batch 8) 10.2 ->
/// 7.2 ms, N = 768 2.55 -> 2.28, 2048x256 x 256xN at N = 512 7.45 -> 6.78, N = 1536 24.5
/// -> 22.2; level where the stride spreads over the sets (N = 1000, 4000). With C stored
/// by rows, the packed panels then pass under each row strip (M strips outside), so C is
/// written row by row in order, as `rows_outside` orders a static nest — without its
/// condition that B fit half of L2, written for a B read in place (rows N apart, evicted
/// between strips): packed panels are one contiguous stream, which the prefetchers
/// follow from L3 (measured on Zen 3 only, up to a 2 MB B). Packed both ways, 1024x128 x
/// 128x2048 6.28 -> 5.87 ms, 2048x256 x 256x512 (k blocks) 6.44 -> 6.08, N = 4000 12.07
/// -> 11.75, N = 64 level (same runs); the generator, saved both ways
/// (`tools/bench/ab_saved.py dcgan B --rounds 11`), batch 8 26.1 -> 25.1, 28.0 -> 27.3
/// and 25.3 -> 24.0 ms in three sittings, batch 1 4.38 -> 4.13, 3.43 -> 3.41 and 3.97 ->
/// 3.82 (that sitting-to-sitting spread is this guest's noise). A static N has its own
/// rules (`rows_outside`, [`rows_collide_in_l2`]).
fn static_m_over_mc(ir: &Ir, op: OpId, lay: &Layout, out: Value) -> bool {
    let shape = ir.value_type(out).shape().unwrap_or(&[]).to_vec();
    let at = |d: u32| res_pos(&lay.maps[2], d).and_then(|p| shape.get(p).copied());
    let mc = ir_attr_i64(ir, op, "mc").unwrap_or(0);
    matches!((at(lay.dm), at(lay.dn)), (Some(m), Some(DYNAMIC)) if m != DYNAMIC && mc > 0 && m >= mc)
}

/// Whether C is stored by rows (N innermost): what writing it row by row assumes.
fn c_by_rows(lay: &Layout) -> bool {
    res_pos(&lay.maps[2], lay.dm) <= res_pos(&lay.maps[2], lay.dn)
}

/// Whether B's N dim is not its innermost (a tile's row of B is not contiguous).
fn strided_n(lay: &Layout) -> bool {
    res_pos(&lay.maps[1], lay.dn).is_some_and(|p| p + 1 != lay.maps[1].results.len())
}

/// Whether `op` runs once per call of its function: in its body or in the branches of
/// `scf.if`s there (as the patches of an earlier run-time split), not inside a loop.
fn once_per_call(ir: &Ir, op: OpId) -> bool {
    let mut cur = op;
    while let Some(p) = ir.op(cur).parent.and_then(|blk| ir.block_parent_op(blk)) {
        match ir.name(p) {
            n if n == func::FuncOp::NAME => return true,
            n if n == scf::IfOp::NAME => cur = p,
            _ => return false,
        }
    }
    false
}

/// The patch's mc when its dynamic M is split into mc blocks ([`loops`]).
fn mc_blocks(ir: &Ir, op: OpId, plans: &Plans) -> Option<i64> {
    let mc = ir_attr_i64(ir, op, "mc").unwrap_or(0);
    let mmain = plans.m.0;
    (mc >= mmain && mc % mmain == 0 && plans.m.1.is_none()).then_some(mc)
}

/// `(max(K, 1), step)`: the k blocks split K evenly, `ceil(K / ceil(K / kc))` each,
/// rounded up to a multiple of 8 (rows of A stay 32-byte aligned at a block's start) and
/// at most kc (K = 768 with kc = 672 runs two blocks of 384, not 672 and 96: a short block
/// pays C's update and the tile dispatch for little work). Constants fold for a static K.
fn even_k_step(b: &mut B<'_>, blk: BlockId, kext: Value, kc: i64) -> (Value, Value) {
    let one = b.index(blk, 1);
    let ckc = b.index(blk, kc);
    let c8 = b.index(blk, 8);
    let kpos = b.index_op(blk, arith::MaxsiOp::NAME, kext, one);
    let nblocks = b.ibin(blk, arith::CeildivuiOp::NAME, kpos, ckc);
    let even = b.ibin(blk, arith::CeildivuiOp::NAME, kpos, nblocks);
    let eights = b.ibin(blk, arith::CeildivuiOp::NAME, even, c8);
    let even8 = b.ibin(blk, arith::MuliOp::NAME, eights, c8);
    (kpos, b.index_op(blk, arith::MinsiOp::NAME, even8, ckc))
}

/// [`even_k_step`]'s block for a static K longer than kc (None otherwise): what a
/// flat-form conv's k blocks take, whose K is always static.
pub(super) fn even_k_block(k: i64, kc: i64) -> Option<i64> {
    if kc <= 0 || k <= kc {
        return None;
    }
    let blocks = (k + kc - 1) / kc;
    let even = (k + blocks - 1) / blocks;
    Some(((even + 7) / 8 * 8).min(kc))
}

/// The kc loop (when the reduction is longer than the patch's kc) around the tile nest,
/// built in `blk`; returns the patch's result. The reduction is split into even blocks of
/// at most kc (from the cache model, [`even_k_step`]) so that a kc x N panel of B stays in
/// L2 while every row strip of A passes over it; each element still sums its k in order,
/// so results do not change.
fn loops(b: &mut B<'_>, blk: BlockId, n: &Nest<'_>) -> Value {
    let Nest {
        op,
        lay,
        plans,
        sizes: (msz, nsz),
        out,
        k_blocking,
        ..
    } = *n;
    let kc = ir_attr_i64(b.ir, op, "kc").unwrap_or(0);
    let (ins, _) = ins_outs(b.ir, op);
    let kdim = reduction_dim(lay);
    let mut kloop = None;
    let mut body_blk = blk;
    let mut acc0 = out;
    if let (Some(dk), true) = (kdim, k_blocking && kc > 0) {
        let kp = res_pos(&lay.maps[0], dk).unwrap_or(0);
        let a_shape = b.ir.value_type(ins[0]).shape().unwrap_or(&[]).to_vec();
        let kstatic = a_shape.get(kp).copied().unwrap_or(DYNAMIC);
        if kstatic == DYNAMIC || kstatic > kc {
            let c0 = b.index(blk, 0);
            let (kext, kpos, step) = match even_k_block(kstatic, kc) {
                // A static K: it and its block size constants (whole blocks when the size
                // divides K: their slices static, `B::enter_k_block`).
                Some(st) if kstatic != DYNAMIC => {
                    let k = b.index(blk, kstatic);
                    (k, k, b.index(blk, st))
                }
                _ => {
                    let kpv = b.index(blk, kp as i64);
                    let kext = b.val(
                        blk,
                        tensor::DimOp::NAME,
                        vec![ins[0], kpv],
                        Type::index(),
                        vec![],
                    );
                    let (kpos, step) = even_k_step(b, blk, kext, kc);
                    (kext, kpos, step)
                }
            };
            // With an epilogue, an empty reduction still runs one (empty) block, whose
            // tiles apply the epilogue; with a zero init, whose tiles write the zeros.
            let ub = if epilogue_block(b.ir, op).is_some() || b.zero_init {
                kpos
            } else {
                kext
            };
            let (f, fb, k0, acc) = b.for_loop(blk, (c0, ub, step), vec![out]);
            let acc = acc[0];
            let flags = (b.zero_init, epilogue_block(b.ir, op).is_some());
            b.enter_k_block(fb, dk, (k0, step, kext), flags);
            kloop = Some((f, fb));
            body_blk = fb;
            acc0 = acc;
        }
    }
    // Loop order: N tiles outside, M strips inside (BLIS's jr/ir; M strips outside under
    // `rows_outside`, set on the builder): one kc x nr panel of B
    // stays in cache (L1, or L2 where the model streams it from there) while every row
    // strip of A passes over it. Around them, the mc loop (BLIS's ic): blocks of mc rows
    // (from the cache model: an mc x kc block of A fits L2), so a long M does not stream
    // A from L3 once per N tile. A static M is covered by its own specialized plan and is
    // not split.
    let pack_a = b.blocking.pack_a;
    let mc_loop = mc_blocks(b.ir, op, plans).filter(|_| b.blocking.mc);
    let result = if let Some(mc) = mc_loop {
        let c0 = b.index(body_blk, 0);
        let cmc = b.index(body_blk, mc);
        let (f, fb, m0, acc) = b.for_loop(body_blk, (c0, msz, cmc), vec![acc0]);
        let acc = acc[0];
        let left = b.ibin(fb, arith::SubiOp::NAME, msz, m0);
        let cmc2 = b.index(fb, mc);
        let chunk = b.index_op(fb, arith::MinsiOp::NAME, cmc2, left);
        let nest_here = |b: &mut B<'_>, blk: BlockId, acc: Value| {
            nest_from(
                b,
                blk,
                (chunk, nsz),
                plans,
                acc,
                Some(m0),
                &mut |b, blk, acc, t| tile(b, blk, op, lay, acc, t),
            )
        };
        // A's mc x kc block copied contiguous once per block, when it is large (over
        // half the rows the model's mc gives, so over ~40% of L2: its rows at A's full
        // row stride map onto few cache sets and do not stay in L2 while the N tiles
        // pass; Low et al.'s mc assumes a packed block) and read by at least 8 N tiles
        // (the copy is paid once per block). Decided at run time; measured on issue 10's
        // W1/W3: 5-15% on large M x N, a loss on skinny N and small M, hence the rule.
        let r = match (b.vector.clone(), b.kblock) {
            (Some(vb), Some((dk, k0, ks)))
                if pack_a
                    && lay.maps[0].results == [AffineExpr::Dim(lay.dm), AffineExpr::Dim(dk)] =>
            {
                let half = b.index(fb, mc / 2);
                let big = b.cmpi(fb, 5, chunk, half);
                let tiles = b.index(fb, 8 * plans.n.0);
                let wide = b.cmpi(fb, 5, nsz, tiles);
                let both = b.val(fb, arith::AndiOp::NAME, vec![big, wide], Type::i1(), vec![]);
                let aty = b.ir.value_type(acc);
                b.if_else(
                    fb,
                    both,
                    aty,
                    |b, tb| {
                        let ap = pack_a_block(b, tb, ins[0], (m0, chunk), (k0, ks), vb.elem);
                        b.apacked = Some((ap, m0));
                        let r = nest_here(b, tb, acc);
                        b.apacked = None;
                        r
                    },
                    |b, eb| nest_here(b, eb, acc),
                )
            }
            _ => nest_here(b, fb, acc),
        };
        b.yield_(fb, scf::YieldOp::NAME, vec![r]);
        b.ir.result(f, 0)
    } else {
        nest(
            b,
            body_blk,
            (msz, nsz),
            plans,
            acc0,
            &mut |b, blk, acc, t| tile(b, blk, op, lay, acc, t),
        )
    };
    let result = match kloop {
        Some((f, fb)) => {
            b.yield_(fb, scf::YieldOp::NAME, vec![result]);
            b.ir.result(f, 0)
        }
        None => result,
    };
    b.kblock = None;
    b.klast = None;
    b.kfirst = None;
    result
}
