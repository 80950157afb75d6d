//! `prefetch-tile-updates`: software prefetch of the buffer lines a loop's vector results
//! are combined with after it.
//!
//! `lower-ukernels` builds each register tile as an `scf.for` over k whose iteration
//! arguments are vector accumulators starting at zero; after the loop the tile of C is
//! read (`vector.transfer_read`), added and written back. When C is larger than the
//! caches those reads miss, and the adds (and everything after them) wait for memory.
//! This pass puts a `memref.prefetch` of every 64-byte line such a read covers before the
//! loop, so the lines arrive while the loop computes — what BLIS's micro-kernels do with
//! their C tile.
//!
//! Which reads: the `vector.transfer_read`s of a memref that follow an `scf.for` with
//! vector results in the same block, up to the next op with regions (and, when that is
//! an `scf.if`, those at the top of its branches), whose buffer and indices are all
//! defined before the loop. Reads of in-bounds 1-d vectors along one dim
//! only (the form `lower-ukernels` writes).
//!
//! A k loop that takes several k steps per iteration (`lower-ukernels{k-unroll=2}`) over
//! a dynamic K is followed by a remainder loop that starts from its accumulators: the
//! two are one chain ([`chain_head`]), the reads after the remainder are prefetched
//! before the first loop (between the two, they arrived after the tile's work), and the
//! strips around the chain are split once (below).
//!
//! The same loops read B from panels `[N / nr][K][nr]` when `lower-ukernels` packed it
//! (a prepared weight: packed once, in the prepare function). The first register tile
//! of each panel block waits for memory — a block is read once per call, and a weight
//! is larger than the caches — while the other tiles of the block compute from L1. So
//! each k step of a tile also prefetches the same row of the next panel
//! (`P[min(p + 1, N / nr - 1), k, :]`, into L2: `localityHint = 2`, so the next block
//! does not evict the current one from L1): the next block streams in while this one
//! computes, and the loads of the first tile hit. Which reads: a full row
//! (`vector<nr>` of a rank-3 memref whose last dim is `nr`, at indices `[p, k, 0]`)
//! with `p` defined before the loop.
//!
//! A B read in place (`vector<nr>` rows of a 2-d `memref.subview %B[o0, j] [K, nr]`) in a
//! k loop `lower-ukernels` marked `ftuner.prefetch_next_panel` gets the same treatment:
//! row `o0 + k` of the next panel (`min(j + nr, N - nr)`) into L2 at each k step.
//!
//! Either way only the first [`PREFETCHING_STRIPS`] row strips of a panel prefetch its
//! successor: the loop over strips (`ftuner.row_strips`) is split after them, its copy
//! running the other strips without those prefetches.
//!
//! A tile's epilogue (BatchNorm, a residual add, ReLU after a conv's matmul) runs after
//! the loop on the tile just stored, reading its other operands element by element from
//! slices (`memref.subview`s taken after the loop). A residual was written layers ago and
//! is cold, and each tile reads a few rows of it: the lines of such a slice (2-d, static
//! sizes, unit strides, rows of a line or more, at most 64 lines, read and never written,
//! from a buffer and offsets defined before the loop) are prefetched before the loop too.

use ftuner_dialects::{ops, vector};
use ftuner_ir::{intern_name, AffineExpr, Attribute, Ir, OpId, OpSpec, Type, Value, DYNAMIC};
use ftuner_pass::{define_pass, PassContext, PassFailure};

/// Line size the prefetches assume.
const LINE: i64 = 64;

/// The row strips of a column panel (register tiles along M) that prefetch the next
/// panel: the first few of each panel, not every one. A strip's k loop prefetches the
/// whole next panel, one line per `nr` lanes of each row; at 2048 x 2048 x 2048 (a
/// packed B, 72 strips per mc block of 432 rows) every strip did, four prefetches per k
/// step of the 6x64 tile beside its four loads and six broadcasts: 145-147 GFLOP/s,
/// without them 153-154 (Xeon family 6 model 167, one thread, three alternated runs).
/// Four strips keep what the prefetch was for where M is small (a weight read once per
/// call: BERT's dense layers at 24 tokens run 4 strips) and fetch the panel four times
/// over where M is large. (With the strips outside the panels — a wide static M's packed
/// B, lower-ukernels — the k loop's parent is the loop over panels: each tile prefetches
/// the panel the next tile reads, and no split applies.)
const PREFETCHING_STRIPS: i64 = 4;

/// The loop over full row strips around k loop `lp` (the `scf.for` that `lower-ukernels`
/// marked `ftuner.row_strips`, without results, whose body holds `lp` and no other chain
/// of k loops: an unrolled k loop and its remainder are one), split after [`PREFETCHING_STRIPS`] strips: `[lb, split)` keeps the next panel's
/// prefetches `added` to `lp`, a copy over `[split, ub)` runs without them, `split =
/// min(lb + PREFETCHING_STRIPS * step, ub)`. Only the marked loop: when canonicalization
/// folds a one-strip loop away, the loop around the k loop is the one over panels, and
/// splitting that would leave all but four panels without their successor's prefetch. A
/// parallel strip loop splits into two parallel loops.
fn split_strips(ir: &mut Ir, lp: OpId, added: &[OpId]) {
    let Some(m) = ir.parent_op(lp) else {
        return;
    };
    if ir.name(m) != ops::scf::ForOp::NAME
        || !ir.results(m).is_empty()
        || ir.attr(m, ftuner_dialects::scf::ROW_STRIPS_ATTR).is_none()
    {
        return;
    }
    let nest = ir.collect_pre(m);
    let heads = nest
        .iter()
        .filter(|o| is_k_loop(ir, **o) && continued(ir, **o).is_none());
    if heads.count() != 1 {
        return;
    }
    let rest = ir.clone_op(m, &mut Default::default());
    ir.insert_after(m, rest);
    // The copy's ops in the same order as the original's: the prefetches' copies go (the
    // index arithmetic they leave unused, canonicalization removes).
    for (o, c) in nest.iter().zip(ir.collect_pre(rest)) {
        if added.contains(o) {
            ir.erase_op(c);
        }
    }
    let loc = ir.loc(m);
    let [lb, ub, step] = [0, 1, 2].map(|i| ir.operand(m, i));
    let n = index_const(ir, loc, m, PREFETCHING_STRIPS);
    let span = index_binary(ir, loc, m, ops::arith::MuliOp::NAME, step, n);
    let end = index_binary(ir, loc, m, ops::arith::AddiOp::NAME, lb, span);
    let split = index_binary(ir, loc, m, ops::arith::MinsiOp::NAME, end, ub);
    ir.set_operand(m, 1, split);
    ir.set_operand(rest, 0, split);
}

/// `v` is available at `anchor`: defined by an op before it in its block, or by an
/// enclosing block.
fn before(ir: &Ir, v: Value, anchor: OpId) -> bool {
    match ir.defining_op(v) {
        Some(d) if ir.op(d).parent == ir.op(anchor).parent => ir
            .block_ops(ir.op(anchor).parent.expect("in a block"))
            .take_while(|o| *o != anchor)
            .any(|o| o == d),
        // Defined in an enclosing block (or a block argument of one): it dominates.
        _ => {
            let blk = ir.value_block(v);
            let mut b = ir.op(anchor).parent;
            while let Some(x) = b {
                if Some(x) == blk {
                    return true;
                }
                b = ir.block_parent_op(x).and_then(|p| ir.op(p).parent);
            }
            false
        }
    }
}

/// The 1-d read's dim and lane count, for an in-bounds unmasked transfer of a memref.
fn read_along(ir: &Ir, r: OpId) -> Option<(usize, i64)> {
    let m = ir.operand(r, 0);
    let mt = ir.value_type(m);
    if !mt.is_memref() {
        return None;
    }
    let vt = ir.value_type(ir.result(r, 0));
    let lanes = match vt.shape()? {
        [n] => *n,
        _ => return None,
    };
    // A masked or possibly out-of-bounds read may end before its lanes do: its last
    // element is not an address to prefetch.
    if vector::transfer_masked(ir, r) || !vector::transfer_in_bounds(ir, r) {
        return None;
    }
    let map = ir.attr(r, "permutation_map")?.as_affine_map()?;
    match map.results.as_slice() {
        [AffineExpr::Dim(d)] => Some((*d as usize, lanes)),
        _ => None,
    }
}

fn index_const(ir: &mut Ir, loc: Attribute, anchor: OpId, v: i64) -> Value {
    let c = ir.create_op(
        OpSpec::new(intern_name(ops::arith::ConstantOp::NAME), loc)
            .results(vec![Type::index()])
            .prop("value", Attribute::index(v)),
    );
    ir.insert_before(anchor, c);
    ir.result(c, 0)
}

fn index_binary(
    ir: &mut Ir,
    loc: Attribute,
    anchor: OpId,
    name: &str,
    a: Value,
    b: Value,
) -> Value {
    let mut spec = OpSpec::new(intern_name(name), loc)
        .operands(vec![a, b])
        .results(vec![Type::index()]);
    if name == ops::arith::AddiOp::NAME {
        spec = spec.prop(
            "overflowFlags",
            Attribute::dialect("arith", "overflow<none>"),
        );
    }
    let o = ir.create_op(spec);
    ir.insert_before(anchor, o);
    ir.result(o, 0)
}

/// `v + k` (an index), inserted before `anchor`; `v` itself when `k` is 0.
fn plus(ir: &mut Ir, loc: Attribute, anchor: OpId, v: Value, k: i64) -> Value {
    if k == 0 {
        return v;
    }
    let c = index_const(ir, loc, anchor, k);
    index_binary(ir, loc, anchor, ops::arith::AddiOp::NAME, v, c)
}

/// The offsets to prefetch so that every line a read of `lanes` elements touches is
/// fetched whatever its alignment: one per `per_line` elements, and its last element. A
/// row of C is rarely line-aligned (a leading dimension of 700 f32 starts rows 1, 2, 3, 4
/// 48, 32, 16 and 0 bytes into a line), and then a read of one line's worth of elements
/// spans two.
fn line_starts(lanes: i64, per_line: i64) -> Vec<i64> {
    let mut v: Vec<i64> = (0..lanes).step_by(per_line.max(1) as usize).collect();
    if lanes > 1 && (lanes - 1) % per_line.max(1) != 0 {
        v.push(lanes - 1);
    }
    v
}

/// Elements of `bits` bits in one prefetched line (at least 1).
fn per_line(bits: u32) -> i64 {
    (LINE / (bits.div_ceil(8) as i64).max(1)).max(1)
}

/// The value of an `arith.constant` (an index or integer), if `v` is one.
fn constant(ir: &Ir, v: Value) -> Option<i64> {
    ir.defining_op(v)
        .and_then(|d| ir.attr(d, "value"))
        .and_then(|a| a.as_i64())
}

/// `memref.dim %m, d` minus `k`, inserted before `anchor`.
fn dim_minus(ir: &mut Ir, loc: Attribute, anchor: OpId, m: Value, d: i64, k: i64) -> Value {
    let cd = index_const(ir, loc, anchor, d);
    let op = ir.create_op(
        OpSpec::new(intern_name(ops::memref::DimOp::NAME), loc)
            .operands(vec![m, cd])
            .results(vec![Type::index()]),
    );
    ir.insert_before(anchor, op);
    let ck = index_const(ir, loc, anchor, k);
    index_binary(
        ir,
        loc,
        anchor,
        ops::arith::SubiOp::NAME,
        ir.result(op, 0),
        ck,
    )
}

/// A `memref.subview` with unit strides, decoded: its source, static offsets and sizes
/// (`DYNAMIC` where an operand gives them) and each offset's operand.
struct View {
    src: Value,
    offs: Vec<i64>,
    sizes: Vec<i64>,
    dyn_offs: Vec<Option<Value>>,
}

impl View {
    fn of(ir: &Ir, sv: OpId) -> Option<View> {
        if ir.name(sv) != ops::memref::SubviewOp::NAME {
            return None;
        }
        let arr = |a: &str| ir.attr(sv, a).and_then(|x| x.as_dense_i64s());
        let (offs, sizes, strides) = (
            arr("static_offsets")?,
            arr("static_sizes")?,
            arr("static_strides")?,
        );
        let operands = ir.operands(sv);
        let dynamic = |v: &[i64]| v.iter().filter(|o| **o == DYNAMIC).count();
        if strides.iter().any(|s| *s != 1) || operands.len() != 1 + dynamic(&offs) + dynamic(&sizes)
        {
            return None;
        }
        let mut rest = operands[1..].iter();
        let dyn_offs = offs
            .iter()
            .map(|o| (*o == DYNAMIC).then(|| *rest.next().expect("counted")))
            .collect();
        Some(View {
            src: operands[0],
            offs,
            sizes,
            dyn_offs,
        })
    }

    /// Offset `d` plus `k`, inserted before `anchor`.
    fn offset_plus(&self, ir: &mut Ir, loc: Attribute, anchor: OpId, d: usize, k: i64) -> Value {
        match self.dyn_offs[d] {
            Some(v) => plus(ir, loc, anchor, v, k),
            None => index_const(ir, loc, anchor, self.offs[d] + k),
        }
    }
}

/// The `vector.transfer_read`s of `lp`'s body.
fn body_reads(ir: &Ir, lp: OpId) -> Vec<OpId> {
    let Some(body) = ir.regions_of(lp).first().and_then(|r| ir.region_entry(*r)) else {
        return vec![];
    };
    ir.block_ops(body)
        .filter(|o| ir.name(*o) == ops::vector::TransferReadOp::NAME)
        .collect()
}

/// A `memref.prefetch` (for reading, data cache) of `operands` before `anchor`: the op.
fn prefetch(
    ir: &mut Ir,
    loc: Attribute,
    anchor: OpId,
    operands: Vec<Value>,
    locality: i64,
) -> OpId {
    let p = ir.create_op(
        OpSpec::new(intern_name(ops::memref::PrefetchOp::NAME), loc)
            .operands(operands)
            .prop("isWrite", Attribute::bool(false))
            .prop(
                "localityHint",
                Attribute::int(locality as i128, Type::i32()),
            )
            .prop("isDataCache", Attribute::bool(true)),
    );
    ir.insert_before(anchor, p);
    p
}

/// An `scf.for` with vector results only: a register tile's k loop.
fn is_k_loop(ir: &Ir, o: OpId) -> bool {
    ir.name(o) == ops::scf::ForOp::NAME
        && !ir.results(o).is_empty()
        && ir.results(o).iter().all(|r| ir.value_type(*r).is_vector())
}

/// The k loop that `lp` continues: the op with regions nearest before `lp` in its block,
/// when it is a k loop whose results are `lp`'s initial accumulators, in order (an
/// unrolled k loop's remainder: `lower-ukernels{k-unroll=2}` over a dynamic K).
fn continued(ir: &Ir, lp: OpId) -> Option<OpId> {
    let blk = ir.op(lp).parent?;
    let prev = ir
        .block_ops(blk)
        .take_while(|o| *o != lp)
        .filter(|o| !ir.regions_of(*o).is_empty())
        .last()?;
    let inits = ir.operands(lp).get(3..)?;
    (is_k_loop(ir, prev) && ir.results(prev) == inits).then_some(prev)
}

/// The first k loop of the chain `lp` belongs to (`lp` itself unless it continues one):
/// where what its accumulators are combined with after the chain is prefetched.
fn chain_head(ir: &Ir, lp: OpId) -> OpId {
    let mut head = lp;
    while let Some(p) = continued(ir, head) {
        head = p;
    }
    head
}

/// Fewest accumulators (rows of a register tile) of a k loop that prefetches the next
/// panel of a B read in place: a narrower tile's k step is bound by its loads already
/// (a 1 x 64 AVX-512 tile: four loads and a broadcast for four FMAs), and the wide strips
/// of the same panel prefetch for it.
const MIN_ROWS_IN_PLACE: usize = 4;

/// Most prefetches put before one loop for one slice its epilogue reads.
const MAX_EPILOGUE_LINES: i64 = 64;

impl PrefetchTileUpdatesPass {
    /// The lines of the slices a tile's epilogue reads element by element after `lp`: a
    /// `memref.subview` after the loop in its block (2-d, static sizes, unit strides, rows
    /// of at least a line), whose source and offsets are defined before the loop and whose
    /// every use is a `memref.load` — a residual added after a conv's matmul, cold in
    /// memory where the tile of C it is added to is in L1.
    fn epilogue_slices(&mut self, ir: &mut Ir, lp: OpId) {
        let Some(blk) = ir.op(lp).parent else {
            return;
        };
        // Up to the next k loop (its epilogue is its own).
        let views: Vec<OpId> = ir
            .block_ops(blk)
            .skip_while(|o| *o != lp)
            .skip(1)
            .take_while(|o| !is_k_loop(ir, *o))
            .filter(|o| ir.name(*o) == ops::memref::SubviewOp::NAME)
            .collect();
        let loc = ir.loc(lp);
        // Before the first loop of the chain: a remainder loop runs a few k steps.
        let lp = chain_head(ir, lp);
        for sv in views {
            let Some(view) = View::of(ir, sv) else {
                continue;
            };
            let sizes = view.sizes.clone();
            let res = ir.result(sv, 0);
            let per_line = per_line(ir.value_type(res).element_type().bit_width().unwrap_or(32));
            let only_loads = ir
                .uses(res)
                .iter()
                .all(|u| ir.name(u.op) == ops::memref::LoadOp::NAME);
            if sizes.len() != 2
                || view.offs.len() != 2
                || sizes.iter().any(|s| *s <= 0 || *s == DYNAMIC)
                || sizes[1] < per_line
                || sizes[0] > MAX_EPILOGUE_LINES
                || sizes[1] > MAX_EPILOGUE_LINES * per_line
                || sizes[0] * line_starts(sizes[1], per_line).len() as i64 > MAX_EPILOGUE_LINES
                || !only_loads
                || !ir.has_uses(res)
                || !ir.operands(sv).iter().all(|v| before(ir, *v, lp))
            {
                continue;
            }
            for i in 0..sizes[0] {
                let r = view.offset_plus(ir, loc, lp, 0, i);
                for l in line_starts(sizes[1], per_line) {
                    let c = view.offset_plus(ir, loc, lp, 1, l);
                    prefetch(ir, loc, lp, vec![view.src, r, c], 3);
                    self.prefetches += 1;
                }
            }
        }
    }

    /// The next panel's row, for each read of a packed B's row in `lp`'s body (the
    /// prefetches pushed on `added`).
    fn next_panel(&mut self, ir: &mut Ir, lp: OpId, added: &mut Vec<OpId>) {
        let loc = ir.loc(lp);
        for r in body_reads(ir, lp) {
            let Some((2, lanes)) = read_along(ir, r) else {
                continue;
            };
            let ops = ir.operands(r).to_vec();
            let mt = ir.value_type(ops[0]);
            let (Some(&[panels, _, nr]), Some(elem)) = (mt.shape(), mt.element_type().bit_width())
            else {
                continue;
            };
            if nr != lanes
                || constant(ir, ops[3]) != Some(0)
                || ops.len() != 5
                || !before(ir, ops[0], lp)
                || !before(ir, ops[1], lp)
            {
                continue;
            }
            let last = if panels > 0 {
                index_const(ir, loc, lp, panels - 1)
            } else {
                dim_minus(ir, loc, lp, ops[0], 0, 1)
            };
            let next = plus(ir, loc, lp, ops[1], 1);
            let next = index_binary(ir, loc, lp, ops::arith::MinuiOp::NAME, next, last);
            for l in (0..nr).step_by(per_line(elem) as usize) {
                let col = index_const(ir, loc, r, l);
                added.push(prefetch(ir, loc, r, vec![ops[0], next, ops[2], col], 2));
                self.prefetches += 1;
            }
        }
    }

    /// The next column panel's row, for each read of B's row in place in `lp`'s body: a
    /// `vector<nr>` at `[k, 0]` of a `memref.subview %B[o0, o1] [K, nr] [1, 1]` of a 2-d
    /// B, taken before the loop, in a loop of at least [`MIN_ROWS_IN_PLACE`] accumulators
    /// that `lower-ukernels` marked (`ftuner.prefetch_next_panel`: where the target's L2
    /// holds the next panel beside this one).
    /// Read in place, B's rows are N elements apart, each in its own page once N reaches
    /// 1024 f32, so the hardware prefetchers (which stay within a page) do not follow
    /// them: the first row strip of every panel waits for L3 at each k step. Prefetching
    /// `B[o0 + k, min(o1 + nr, N - nr) ..]` into L2 brings the next panel in while this
    /// one's strips compute, as [`Self::next_panel`] does for packed panels (the
    /// prefetches pushed on `added`).
    fn next_panel_in_place(&mut self, ir: &mut Ir, lp: OpId, added: &mut Vec<OpId>) {
        if ir.results(lp).len() < MIN_ROWS_IN_PLACE
            || ir
                .attr(lp, ftuner_dialects::scf::PREFETCH_NEXT_PANEL_ATTR)
                .is_none()
        {
            return;
        }
        let loc = ir.loc(lp);
        for r in body_reads(ir, lp) {
            let Some((1, lanes)) = read_along(ir, r) else {
                continue;
            };
            let rops = ir.operands(r).to_vec();
            let Some(view) = ir.defining_op(rops[0]).and_then(|sv| View::of(ir, sv)) else {
                continue;
            };
            let st = ir.value_type(view.src);
            let (Some(&[_, n]), Some(bits)) = (st.shape(), st.element_type().bit_width()) else {
                continue;
            };
            if rops.len() != 4
                || constant(ir, rops[2]) != Some(0)
                || view.offs.len() != 2
                || view.sizes.get(1) != Some(&lanes)
                || (n != DYNAMIC && n < 2 * lanes)
                || !before(ir, rops[0], lp)
            {
                continue;
            }
            // The last panel's first column, N - nr (N >= nr: the view holds nr columns).
            let last = if n != DYNAMIC {
                index_const(ir, loc, lp, n - lanes)
            } else {
                dim_minus(ir, loc, lp, view.src, 1, lanes)
            };
            let col = view.offset_plus(ir, loc, lp, 1, lanes);
            let next = index_binary(ir, loc, lp, ops::arith::MinsiOp::NAME, col, last);
            // The row, in the loop (the read's row index is the k step's).
            let row = match view.dyn_offs[0] {
                Some(v) => index_binary(ir, loc, r, ops::arith::AddiOp::NAME, v, rops[1]),
                None => plus(ir, loc, r, rops[1], view.offs[0]),
            };
            for l in (0..lanes).step_by(per_line(bits) as usize) {
                let c = plus(ir, loc, r, next, l);
                added.push(prefetch(ir, loc, r, vec![view.src, row, c], 2));
                self.prefetches += 1;
            }
        }
    }

    fn tile_loop(&mut self, ir: &mut Ir, lp: OpId) {
        let Some(blk) = ir.op(lp).parent else {
            return;
        };
        // The reads after the loop up to the next op with regions, and those at the top of
        // the branches of an `scf.if` there (a tile of a zero-filled C is written in the
        // first k block and read, added and written in the others: the same lines).
        let mut after: Vec<OpId> = vec![];
        let is_read = |o: &OpId| ir.name(*o) == ops::vector::TransferReadOp::NAME;
        for o in ir.block_ops(blk).skip_while(|o| *o != lp).skip(1) {
            if ir.regions_of(o).is_empty() {
                after.extend(Some(o).filter(is_read));
                continue;
            }
            if ir.name(o) == ops::scf::IfOp::NAME {
                for r in ir.regions_of(o).to_vec() {
                    for b in ir.region(r).blocks.clone() {
                        after.extend(ir.block_ops(b).filter(is_read));
                    }
                }
            }
            break;
        }
        let loc = ir.loc(lp);
        // Before the first loop of the chain: a remainder loop runs a few k steps.
        let lp = chain_head(ir, lp);
        for r in after {
            let Some((along, lanes)) = read_along(ir, r) else {
                continue;
            };
            let ops = ir.operands(r).to_vec();
            let mt = ir.value_type(ops[0]);
            let rank = mt.rank().unwrap_or(0);
            if ops.len() < 1 + rank || !ops[..1 + rank].iter().all(|v| before(ir, *v, lp)) {
                continue;
            }
            let per_line = per_line(mt.element_type().bit_width().unwrap_or(32));
            for l in line_starts(lanes, per_line) {
                let mut idx = ops[1..1 + rank].to_vec();
                idx[along] = plus(ir, loc, lp, idx[along], l);
                let mut operands = vec![ops[0]];
                operands.extend(idx);
                prefetch(ir, loc, lp, operands, 3);
                self.prefetches += 1;
            }
        }
    }
}

define_pass! {
    /// `prefetch-tile-updates`: prefetch, before a vector-accumulating scf.for, the buffer lines its results are combined with after it.
    pub struct PrefetchTileUpdatesPass {
        argument: "prefetch-tile-updates",
        name: "PrefetchTileUpdates",
        summary: "Prefetch, before a vector-accumulating scf.for, the buffer lines its results are combined with after it",
        description: "For each scf.for with vector results, the vector.transfer_reads of memrefs that follow it in its block (before the next op with regions), with buffer and indices defined before the loop, get one memref.prefetch per 64-byte line before the loop, and one of the read's last element (a row that does not start on a line spans one more): a register tile's C lines arrive while its k loop runs. A read in its body of a full row of packed B panels (P[p, k, 0] of a rank-3 memref whose last dim is the vector's length) gets prefetches of the next panel's row k into L2: the next panel block streams in while this one computes. A k loop marked `ftuner.prefetch_next_panel` (B read in place through a 2-d subview of nr columns) prefetches the next column panel's row k of B into L2 the same way. A k loop followed by a remainder loop that starts from its results (an unrolled k loop over a dynamic K) is one chain with it: what follows the remainder is prefetched before the first loop. Only the first four row strips of a panel do: the loop over strips around such a k loop or chain (marked `ftuner.row_strips` by lower-ukernels) is split after them, its copy running the other strips without those prefetches. The lines of the slices a tile's epilogue loads after the loop (a 2-d memref.subview there, static sizes, unit strides, only loaded, buffer and offsets defined before the loop) are prefetched before it as well.",
        options: PrefetchTileUpdatesOptions {},
        statistics: {
            prefetches: "num-prefetches" => "Prefetches inserted",
        },
    }
}

impl PrefetchTileUpdatesPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &PrefetchTileUpdatesOptions,
    ) -> Result<(), PassFailure> {
        let mut loops = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            if is_k_loop(cx.ir, o) {
                loops.push(o);
            }
        });
        for &l in &loops {
            self.tile_loop(cx.ir, l);
            self.epilogue_slices(cx.ir, l);
        }
        // Per chain of k loops (one, or an unrolled loop and its remainder): the next
        // panel's rows prefetched in each, the strips split once.
        let mut chains: Vec<(OpId, Vec<OpId>)> = vec![];
        let mut at: rustc_hash::FxHashMap<OpId, usize> = Default::default();
        for &l in &loops {
            // `loops` is in pre-order: a loop's predecessor in its chain came before it.
            match continued(cx.ir, l).and_then(|p| at.get(&p).copied()) {
                Some(i) => {
                    chains[i].1.push(l);
                    at.insert(l, i);
                }
                None => {
                    at.insert(l, chains.len());
                    chains.push((l, vec![l]));
                }
            }
        }
        for (head, chain) in chains {
            let mut added = vec![];
            for &l in &chain {
                self.next_panel(cx.ir, l, &mut added);
                self.next_panel_in_place(cx.ir, l, &mut added);
            }
            if !added.is_empty() {
                split_strips(cx.ir, head, &added);
            }
        }
        Ok(())
    }
}
