//! Dot-product register tiles for `A · Bᵀ` with a contiguous K in both operands: several
//! independent dot products per tile, reduced horizontally at the end (`hsum_network`).

use super::packing::branch_on_b;
use super::register_tile::{indices, pick, read_rows, vector_body};
use super::tiles::{insert_back, slice};
use super::{res_pos, Layout, VectorBody, B};
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, BlockId, Ir, OpId, Type, Value};

/// Accumulators of a dot-product tile (one vector register per output).
pub(super) const DOT_OUTPUTS: i64 = 16;

/// Whether A and B are both contiguous along k (an NT product: rows of A and rows of B
/// are read as whole vectors), so tiles take the dot-product form.
pub(super) fn nt_dot(lay: &Layout, vb: &VectorBody) -> bool {
    let (ma, mb) = (&lay.maps[0], &lay.maps[1]);
    let last = |m: &ftuner_ir::AffineMap, d: u32| res_pos(m, d) == Some(m.results.len() - 1);
    vb.panel.is_none()
        && vb.lanes >= 2
        && last(ma, vb.dk)
        && last(mb, vb.dk)
        && res_pos(mb, lay.dn).is_some()
}

/// A dot-product tile larger than [`DOT_OUTPUTS`]: its 4 x 4 blocks, each a register tile
/// of its own on slices of the tile's A rows, B rows and C block.
pub(super) fn dot_blocks(
    b: &mut B<'_>,
    blk: BlockId,
    lay: &Layout,
    vb: &VectorBody,
    (a, bm): (Value, Value),
    c: Value,
    (mt, nt): (i64, i64),
) -> Value {
    // The operands are the tile's slices already: k is taken whole.
    let kb = b.kblock.take();
    let groups =
        |n: i64| -> Vec<(i64, i64)> { (0..n).step_by(4).map(|o| (o, (n - o).min(4))).collect() };
    let mut acc = c;
    for (i0, ms) in groups(mt) {
        for (j0, ns) in groups(nt) {
            let (i0v, j0v) = (b.index(blk, i0), b.index(blk, j0));
            let t = (i0v, ms, j0v, ns);
            let (sa, _) = slice(b, blk, a, &lay.maps[0], lay, t);
            let (sb, _) = slice(b, blk, bm, &lay.maps[1], lay, t);
            let (sc, cspec) = slice(b, blk, acc, &lay.maps[2], lay, t);
            let r = vector_body(b, blk, lay, vb, sa, sb, sc, ms, ns);
            acc = insert_back(b, blk, r, &cspec, acc);
        }
    }
    b.kblock = kb;
    acc
}

/// The dot-product form of an `mt x nt` register tile when A and B are both contiguous
/// along k: one `vector<lanes>` accumulator per (row, column) over k blocks of `lanes`,
/// each reduced to a lane of the row's `vector<nt>` by [`hsum_network`]. Returns where
/// k continues (the start of the last partial block) and the rows' partial sums.
#[allow(clippy::too_many_arguments)]
pub(super) fn dot_tile(
    b: &mut B<'_>,
    blk: BlockId,
    lay: &Layout,
    vb: &VectorBody,
    (a, bm): (Value, Value),
    (mt, nt): (i64, i64),
    batch_of: &dyn Fn(u32) -> Option<Value>,
    kext: Value,
) -> (Value, Vec<Value>) {
    let (ma, mb) = (&lay.maps[0], &lay.maps[1]);
    let (dk, dm, dn) = (vb.dk, lay.dm, lay.dn);
    let w = vb.lanes;
    let wty = Type::vector(vec![w], vb.elem);
    let (ak, bk) = (ma.results.len() - 1, mb.results.len() - 1);
    let c0 = b.index(blk, 0);
    let cw = b.index(blk, w);
    let q = b.ibin(blk, ops::arith::DivuiOp::NAME, kext, cw);
    let kw = b.ibin(blk, ops::arith::MuliOp::NAME, q, cw);
    let pad = b.fzero(blk, vb.elem);
    let zero = b.val(blk, ops::vector::BroadcastOp::NAME, vec![pad], wty, vec![]);
    let n = (mt * nt) as usize;
    let (f, fb, k, accs) = b.for_loop(blk, (c0, kw, cw), vec![zero; n]);
    let z = b.index(fb, 0);
    let zp = b.fzero(fb, vb.elem);
    let rows: Vec<Value> = (0..mt)
        .map(|i| {
            let iv = b.index(fb, i);
            let idx = indices(ma, &|d| {
                pick(d, &[(dk, k), (dm, iv)], batch_of(d).unwrap_or(z))
            });
            read_rows(b, fb, a, &[idx], zp, wty, ak)[0]
        })
        .collect();
    let cols: Vec<Value> = (0..nt)
        .map(|j| {
            let jv = b.index(fb, j);
            let idx = indices(mb, &|d| {
                pick(d, &[(dk, k), (dn, jv)], batch_of(d).unwrap_or(z))
            });
            read_rows(b, fb, bm, &[idx], zp, wty, bk)[0]
        })
        .collect();
    let mut next = vec![];
    for (i, r) in rows.iter().enumerate() {
        for (j, c) in cols.iter().enumerate() {
            let acc = accs[i * nt as usize + j];
            next.push(b.val(fb, ops::vector::FmaOp::NAME, vec![*r, *c, acc], wty, vec![]));
        }
    }
    b.yield_(fb, ops::scf::YieldOp::NAME, next);
    let sums: Vec<Value> = (0..n).map(|i| b.ir.result(f, i)).collect();
    let out = sums
        .chunks(nt as usize)
        .map(|row| {
            hsum_network(row, w, zero, &mut |x, y, mask| match mask {
                Some(mask) => {
                    let ty = Type::vector(vec![mask.len() as i64], vb.elem);
                    let m = Attribute::dense_i64_array(mask);
                    b.val(
                        blk,
                        ops::vector::ShuffleOp::NAME,
                        vec![x, y],
                        ty,
                        vec![("mask", m)],
                    )
                }
                None => {
                    let ty = b.ir.value_type(x);
                    b.val(blk, ops::arith::AddfOp::NAME, vec![x, y], ty, vec![])
                }
            })
        })
        .collect();
    (kw, out)
}

/// Builds one op of a shuffle network: a shuffle with a mask, or (no mask) an add.
pub(crate) type NetOp<'a> = dyn FnMut(Value, Value, Option<&[i64]>) -> Value + 'a;

/// Horizontal sums of `vs` (vectors of `w` lanes, at most `w` of them, `w` a power of
/// two) as one vector whose lane j is the sum of the lanes of `vs[j]`: pairs merged level
/// by level (each keeps half its lanes, the halves added: `shuffle(x, y, lo) +
/// shuffle(x, y, hi)`), then the groups summed in place, then the first lane of each
/// group picked. `op(x, y, Some(mask))` builds a shuffle, `op(x, y, None)` an add;
/// `zero` pads `vs` to a power of two.
pub(crate) fn hsum_network(vs: &[Value], w: i64, zero: Value, op: &mut NetOp<'_>) -> Value {
    let nt = vs.len();
    let p = nt.next_power_of_two();
    let mut level: Vec<Value> = vs.to_vec();
    level.resize(p, zero);
    // Lanes per input in each vector.
    let mut g = w;
    while level.len() > 1 {
        let c = w / g; // inputs per vector
        let half = g / 2;
        let lo: Vec<i64> = (0..2 * c)
            .flat_map(|t| {
                let base = if t < c { t * g } else { w + (t - c) * g };
                base..base + half
            })
            .collect();
        let hi: Vec<i64> = lo.iter().map(|l| l + half).collect();
        level = level
            .chunks(2)
            .map(|pair| {
                let (x, y) = (pair[0], pair[1]);
                let l = op(x, y, Some(&lo));
                let h = op(x, y, Some(&hi));
                op(l, h, None)
            })
            .collect();
        g = half;
    }
    let mut v = level[0];
    // Each input holds g lanes: sum them into the group's first lane.
    let g0 = g;
    let mut s = g;
    while s > 1 {
        let half = s / 2;
        let mask: Vec<i64> = (0..w)
            .map(|l| if l % g0 < half { l + half } else { l })
            .collect();
        let sh = op(v, v, Some(&mask));
        v = op(v, sh, None);
        s = half;
    }
    let pick: Vec<i64> = (0..nt as i64).map(|j| j * g0).collect();
    op(v, v, Some(&pick))
}

/// The widest N the skinny rule takes, for `lanes` lanes: a broadcast tile of width `nt`
/// fills nt/lanes of each FMA (6 x nt: 6 FMAs and 7 loads per k), a dot-product tile
/// fills all of it (mt x nt: mt*nt FMAs and mt+nt loads per `lanes` k, and a horizontal
/// sum per output). Counted for 6-row tiles on one full-width load and FMA per cycle,
/// the dot form is ahead up to N = lanes/4 and behind from N = lanes/2; lanes/4 is kept.
pub(super) fn skinny_max(lanes: i64) -> i64 {
    (lanes / 4).max(1)
}

/// A skinny N (GEMV-like: DeepBench's M x {1, 2, 4} x K) with A contiguous along k and B
/// laid out [k][n]: broadcast tiles of width N would leave most of each FMA idle, so B
/// is transposed to [n][k] (K x N copies, shared by all M rows) and the tiles take the
/// dot-product form (full-width FMAs along k; A's rows read as whole vectors). Applies
/// when N <= [`skinny_max`]: statically, or at run time (then the patch is split on it).
/// Returns the patch that reads the transposed B and, for a dynamic N, the one that
/// reads B in place; `None` when the layout is not this one or N is statically wider.
pub(super) fn transpose_skinny_b(
    ir: &mut Ir,
    op: OpId,
    lay: &Layout,
    vb: &VectorBody,
) -> Option<(OpId, Option<OpId>)> {
    use ftuner_ir::AffineExpr::Dim;
    let (dk, dm, dn) = (vb.dk, lay.dm, lay.dn);
    if !vb.batch.is_empty()
        || vb.lanes < 4
        || lay.maps[0].results != [Dim(dm), Dim(dk)]
        || lay.maps[1].results != [Dim(dk), Dim(dn)]
    {
        return None;
    }
    let bv = ftuner_dialects::linalg::ins_outs(ir, op).0[1];
    let bty = ir.value_type(bv);
    let nmax = skinny_max(vb.lanes);
    let n_static = match bty.shape() {
        Some([_, n]) if bty.is_tensor() => *n,
        _ => return None,
    };
    if n_static != ftuner_ir::DYNAMIC && n_static > nmax {
        return None;
    }
    let mut maps = lay.maps.clone();
    maps[1].results = vec![Dim(dn), Dim(dk)];
    Some(branch_on_b(ir, op, maps, |b, blk| {
        (n_static == ftuner_ir::DYNAMIC).then(|| {
            let one = b.index(blk, 1);
            let nsz = b.dim(blk, bv, one);
            let cmax = b.index(blk, nmax);
            b.cmpi(blk, 3, nsz, cmax)
        })
    }))
}
