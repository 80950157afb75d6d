//! Transposes in `convert-linalg-to-loops`: ops that read or write through a permutation
//! walk their nest in blocks (unless every operand keeps rows of [`ROW_RUN`] or more
//! elements in place: a plain nest), and a permuted copy of 32- or 64-bit elements becomes
//! blocks of vector rows turned in registers by a `vector.shuffle` network.

use super::{for_loop, B};
use ftuner_dialects::linalg::{body as lbody, ins_outs};
use ftuner_dialects::ops::{arith, linalg, memref, vector};
use ftuner_ir::{AffineExpr, AffineMap, Attribute, BlockId, Ir, OpId, Type, Value};

/// Block size of permuted copies.
const TILE: i64 = 16;

/// Elements of the innermost dims every operand's permutation keeps in place, from which
/// on a transpose moves whole rows of the destination's order: the plain nest reads and
/// writes both along them (and keeps its parallel loops) instead of 16 x 16 blocks.
const ROW_RUN: i64 = 64;

/// An op without reductions, of two or more dimensions, that reads or writes some operand
/// through a permutation other than the identity (a transpose), unless the permutations
/// keep innermost dims in place spanning [`ROW_RUN`] or more elements (statically): DCGAN's
/// NCHW -> CNHW image of a derived transposed conv, `[1, 0, 2, 3]` over 32 x 32 planes,
/// was a 16^4-blocked scalar copy on one thread.
pub(super) fn transposes(ir: &Ir, op: OpId, maps: &[AffineMap]) -> bool {
    let nd = maps.first().map_or(0, |m| m.num_dims as usize);
    if nd < 2 {
        return false;
    }
    let reductions = lbody::reduction_dims(ir, op).unwrap_or_else(|| vec![true]);
    if reductions.iter().any(|r| *r) {
        return false;
    }
    let perms: Vec<Vec<u32>> = maps.iter().filter_map(|m| m.as_permutation()).collect();
    if !perms
        .iter()
        .any(|p| p.iter().enumerate().any(|(i, d)| *d as usize != i))
    {
        return false;
    }
    kept_run(ir, op, maps, &perms).is_none_or(|run| run < ROW_RUN)
}

/// The static number of elements of the trailing dims all of `perms` keep in place, each
/// at its own position (`d_k` at position `k`, the plain nest's loop order: both sides then
/// walk them contiguously), 1 when none; `None` when one of them is dynamic.
fn kept_run(ir: &Ir, op: OpId, maps: &[AffineMap], perms: &[Vec<u32>]) -> Option<i64> {
    let (ins, outs) = ins_outs(ir, op);
    let operands: Vec<Value> = ins.iter().chain(&outs).copied().collect();
    let extent = |d: u32| -> Option<i64> {
        maps.iter().zip(&operands).find_map(|(m, v)| {
            let j = m.results.iter().position(|e| *e == AffineExpr::Dim(d))?;
            let size = *ir.value_type(*v).shape()?.get(j)?;
            Some((size != ftuner_ir::DYNAMIC).then_some(size))
        })?
    };
    let first = perms.first()?;
    let mut run = 1i64;
    for k in (0..first.len()).rev() {
        if first[k] as usize != k || perms.iter().any(|p| p[k] != first[k]) {
            break;
        }
        run = run.checked_mul(extent(first[k])?)?;
    }
    Some(run)
}

/// A copy through a permutation that moves the innermost dim: one input and one output
/// buffer of 32- or 64-bit elements, a body that yields its input, the two maps
/// permutations whose last results differ.
pub(super) struct PermutedCopy {
    src: Value,
    dst: Value,
    maps: [AffineMap; 2],
    /// The loop dims innermost in the source and in the destination.
    inner: (u32, u32),
    pub(super) elem: Type,
}

pub(super) fn permuted_copy(
    ir: &Ir,
    op: OpId,
    maps: &[AffineMap],
    body: BlockId,
) -> Option<PermutedCopy> {
    let (ins, outs) = ins_outs(ir, op);
    let ([src], [dst]) = (ins.as_slice(), outs.as_slice()) else {
        return None;
    };
    let (st, dt) = (ir.value_type(*src), ir.value_type(*dst));
    let elem = st.element_type();
    let bits = elem.bit_width().filter(|_| !elem.is_index())?;
    if !st.is_memref() || !dt.is_memref() || dt.element_type() != elem || !matches!(bits, 32 | 64) {
        return None;
    }
    let nd = maps[0].num_dims as usize;
    // Permutations: every dim once (`(d1, d1)`, a diagonal read, was taken for one and
    // the copy transposed the wrong elements).
    let perm = |m: &AffineMap| m.as_permutation().filter(|_| nd >= 2);
    let (ps, pd) = (perm(&maps[0])?, perm(&maps[1])?);
    let (si, di) = (*ps.last()?, *pd.last()?);
    if si == di {
        return None;
    }
    let ops = ir.block_ops_vec(body);
    let [y] = ops.as_slice() else {
        return None;
    };
    if ir.name(*y) != linalg::YieldOp::NAME || ir.operands(*y) != [ir.block_args(body)[0]] {
        return None;
    }
    Some(PermutedCopy {
        src: *src,
        dst: *dst,
        maps: [maps[0].clone(), maps[1].clone()],
        inner: (si, di),
        elem,
    })
}

/// A permuted copy as w x w blocks (w lanes of `vector_bytes`, one register) of its two
/// innermost dims: w
/// contiguous rows read from the source, turned in registers by a `vector.shuffle`
/// network (`transpose_network`), written as w contiguous rows of the destination; the
/// edges by strided transfers, the corner element by element; scalar loops over the
/// other dims outside.
pub(super) fn lower_permuted_copy(
    b: &mut B<'_>,
    op: OpId,
    pc: &PermutedCopy,
    ubs: &[Value],
    (zero, one): (Value, Value),
    vector_bytes: u64,
) {
    let w = ftuner_dialects::vector::register_lanes(pc.elem, vector_bytes);
    let vty = Type::vector(vec![w], pc.elem);
    let nd = ubs.len();
    let (si, di) = (pc.inner.0 as usize, pc.inner.1 as usize);
    let cw = b.index(op, w);
    // Loops over the other dims.
    let mut ivs: Vec<Option<Value>> = vec![None; nd];
    let mut anchor = op;
    for (d, ub) in ubs.iter().enumerate() {
        if d != si && d != di {
            let (iv, y) = for_loop(b, anchor, zero, *ub, one);
            ivs[d] = Some(iv);
            anchor = y;
        }
    }
    let whole = |b: &mut B<'_>, x: Value| {
        let q = b.val(anchor, arith::DivuiOp::NAME, vec![x, cw], Type::index());
        b.val(anchor, arith::MuliOp::NAME, vec![q, cw], Type::index())
    };
    // Rows of the source run along `si`, rows of the destination along `di`.
    let (us, ud) = (ubs[si], ubs[di]);
    let (ws, wd) = (whole(b, us), whole(b, ud));
    let at = |m: &AffineMap, ivs: &[Option<Value>], s: Value, d: Value| -> Vec<Value> {
        m.results
            .iter()
            .map(|e| match e {
                AffineExpr::Dim(x) if *x as usize == si => s,
                AffineExpr::Dim(x) if *x as usize == di => d,
                AffineExpr::Dim(x) => ivs[*x as usize].expect("outer loop"),
                _ => unreachable!("a permutation"),
            })
            .collect()
    };
    let pos = |m: &AffineMap, d: usize| {
        m.results
            .iter()
            .position(|e| *e == AffineExpr::Dim(d as u32))
            .unwrap_or(0)
    };
    let zero_attr = if pc.elem.float_kind().is_some() {
        Attribute::float(0.0, pc.elem)
    } else {
        Attribute::int(0, pc.elem)
    };
    let c = b.op(
        anchor,
        arith::ConstantOp::NAME,
        vec![],
        vec![pc.elem],
        vec![("value", zero_attr)],
    );
    let pad = b.ir.result(c, 0);
    let read = |b: &mut B<'_>, anchor: OpId, idx: Vec<Value>, along: usize| {
        let rank = idx.len();
        let mut ops = vec![pc.src];
        ops.extend(idx);
        ops.push(pad);
        let props = ftuner_dialects::vector::transfer_props(rank, along, [1, rank as i32, 1, 0]);
        let o = b.op(anchor, vector::TransferReadOp::NAME, ops, vec![vty], props);
        b.ir.result(o, 0)
    };
    let write = |b: &mut B<'_>, anchor: OpId, v: Value, idx: Vec<Value>, along: usize| {
        let rank = idx.len();
        let mut ops = vec![v, pc.dst];
        ops.extend(idx);
        let props = ftuner_dialects::vector::transfer_props(rank, along, [1, 1, rank as i32, 0]);
        b.op(anchor, vector::TransferWriteOp::NAME, ops, vec![], props);
    };
    let plus = |b: &mut B<'_>, anchor: OpId, x: Value, i: i64| {
        if i == 0 {
            return x;
        }
        let c = b.index(anchor, i);
        b.val(anchor, arith::AddiOp::NAME, vec![x, c], Type::index())
    };
    let (src_last, dst_last) = (nd - 1, nd - 1);
    let (src_along_d, dst_along_s) = (pos(&pc.maps[0], di), pos(&pc.maps[1], si));
    // Blocks: source rows at d0 + r (each along si), destination rows at s0 + c.
    {
        let (d0, y) = for_loop(b, anchor, zero, wd, cw);
        let (s0, y) = for_loop(b, y, zero, ws, cw);
        let rows: Vec<Value> = (0..w)
            .map(|r| {
                let dr = plus(b, y, d0, r);
                let idx = at(&pc.maps[0], &ivs, s0, dr);
                read(b, y, idx, src_last)
            })
            .collect();
        let cols = ftuner_dialects::vector::transpose_network(&rows, &mut |x, z, mask| {
            let o = b.op(
                y,
                vector::ShuffleOp::NAME,
                vec![x, z],
                vec![vty],
                vec![("mask", Attribute::dense_i64_array(mask))],
            );
            b.ir.result(o, 0)
        });
        for (c, v) in cols.into_iter().enumerate() {
            let sc = plus(b, y, s0, c as i64);
            let idx = at(&pc.maps[1], &ivs, sc, d0);
            write(b, y, v, idx, dst_last);
        }
    }
    // The source's edge (si beyond whole blocks): strided reads along di.
    {
        let (d0, y) = for_loop(b, anchor, zero, wd, cw);
        let (s, y) = for_loop(b, y, ws, us, one);
        let v = read(b, y, at(&pc.maps[0], &ivs, s, d0), src_along_d);
        write(b, y, v, at(&pc.maps[1], &ivs, s, d0), dst_last);
    }
    // The destination's edge (di beyond whole blocks): strided writes along si.
    {
        let (d, y) = for_loop(b, anchor, wd, ud, one);
        let (s0, y) = for_loop(b, y, zero, ws, cw);
        let v = read(b, y, at(&pc.maps[0], &ivs, s0, d), src_last);
        write(b, y, v, at(&pc.maps[1], &ivs, s0, d), dst_along_s);
    }
    // The corner.
    {
        let (d, y) = for_loop(b, anchor, wd, ud, one);
        let (s, y) = for_loop(b, y, ws, us, one);
        let mut ops = vec![pc.src];
        ops.extend(at(&pc.maps[0], &ivs, s, d));
        let x = b.val(y, memref::LoadOp::NAME, ops, pc.elem);
        let mut ops = vec![x, pc.dst];
        ops.extend(at(&pc.maps[1], &ivs, s, d));
        b.op(y, memref::StoreOp::NAME, ops, vec![], vec![]);
    }
}

/// The loop nest of a transpose (see [`transposes`]), walked in `TILE` x ... x `TILE`
/// blocks so both sides stay in L1 (element order within each output element is
/// unchanged: there is no reduction); returns the induction variables (block offset plus
/// position in the block) and the innermost yield.
pub(super) fn blocked_nest(
    b: &mut B<'_>,
    op: OpId,
    ubs: &[Value],
    (zero, one): (Value, Value),
) -> (Vec<Value>, OpId) {
    let mut ivs = vec![];
    let mut anchor = op;
    let t = b.index(op, TILE);
    let mut outer = vec![];
    for ub in ubs {
        let (iv, y) = for_loop(b, anchor, zero, *ub, t);
        outer.push(iv);
        anchor = y;
    }
    for (ub, o) in ubs.iter().zip(&outer) {
        let rem = b.val(anchor, arith::SubiOp::NAME, vec![*ub, *o], Type::index());
        let ext = b.val(anchor, arith::MinsiOp::NAME, vec![t, rem], Type::index());
        let (inner, y) = for_loop(b, anchor, zero, ext, one);
        anchor = y;
        ivs.push(b.val(anchor, arith::AddiOp::NAME, vec![*o, inner], Type::index()));
    }
    (ivs, anchor)
}
