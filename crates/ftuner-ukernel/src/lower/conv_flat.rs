//! The flat-k form of a windowed contraction whose image (past the batch) and filter are
//! static: the k dims as one loop over a table of A offsets, B as panels, and, when it
//! reads less, blocks of rows outside the N panels with their A rows packed
//! (docs/patch-ukernels.md).

use super::conv::{row_positions, ConvLayout};
use super::packing::copy_generic;
use super::register_tile::{fma_rows, read_rows, unrolled_k_loop};
use super::{ir_attr_i64, res_pos, Plans, B};
use ftuner_dialects::ops;
use ftuner_dialects::tensor::reassociation_attr;
use ftuner_ir::{AffineExpr, BlockId, Ir, OpId, Type, Value, DYNAMIC};

/// A windowed contraction's k dims as one loop (an indirect GEMM): A viewed as one
/// dimension, where the element a row reads at k step `j` sits at the row's own offset
/// plus `table[j]` (A's index expressions are linear in the dims, so the offset splits
/// into an M part and a k part); B viewed as `[K][N]`. Each k step is then what a
/// matmul's is — one B row, one broadcast per row, the FMAs — in one loop carrying the
/// accumulators: the nested (c, kh, kw) loops left LLVM copying and spilling the
/// accumulators at every level (a 3x3 conv ran at half the speed of the same GEMM).
pub(crate) struct FlatK {
    /// A collapsed to one dimension.
    a1: Value,
    /// B as `[K][N]`, or as panels `[N / nr][K][nr]` (`panel` = nr) when N is a
    /// multiple of the main tile width: each tile's B rows are then one contiguous
    /// stream (in place, rows N·4 bytes apart spread a 512-channel 3x3 filter's panel
    /// over 9 MiB and 2,300 pages).
    w2: Value,
    panel: Option<i64>,
    /// `tensor<K x index>`: the k part of A's offset at each k step.
    table: Value,
    /// K: the k steps.
    pub(super) k: i64,
    /// N (static).
    n: i64,
    /// A's elements per image (its dims past the first).
    img: i64,
    /// A's offset per unit of each M dim, and the constant part of the offset.
    m_coef: Vec<(u32, i64)>,
    konst: i64,
}

/// The largest k table built (entries).
const MAX_FLAT_K: i64 = 1 << 20;

/// The flat-k form of `cl` over A `a` and B `w` (B's N dim last), when A's dims past
/// the first and all of B's are static; None otherwise (the nested k loops are used).
pub(super) fn flat_k(
    b: &mut B<'_>,
    blk: BlockId,
    cl: &ConvLayout,
    a: Value,
    w: Value,
    nr: i64,
) -> Option<FlatK> {
    let (aty, wty) = (b.ir.value_type(a), b.ir.value_type(w));
    let (ash, wsh) = (aty.shape()?.to_vec(), wty.shape()?.to_vec());
    let (ma, mb) = (&cl.maps[0], &cl.maps[1]);
    if ash.len() != ma.results.len()
        || ash.iter().skip(1).any(|d| *d == DYNAMIC)
        || wsh.contains(&DYNAMIC)
        || wsh.len() < 2
        || mb.results.last() != Some(&AffineExpr::Dim(cl.dn))
    {
        return None;
    }
    // A's row-major strides; its offset at loop dims `x` is `sum(stride * expr(x))`,
    // linear in `x` (conv_layout admits sums of dims, constants and constant multiples
    // of dims), so the offset at 0 and at each unit vector give every coefficient.
    let mut stride = vec![1i64; ash.len()];
    for j in (0..ash.len().saturating_sub(1)).rev() {
        stride[j] = stride[j + 1].checked_mul(ash[j + 1])?;
    }
    let nd = ma.num_dims as usize;
    let offset = |x: &[i64]| -> Option<i64> {
        ma.results
            .iter()
            .zip(&stride)
            .try_fold(0i64, |acc, (e, st)| {
                acc.checked_add(e.eval(x, &[])?.checked_mul(*st)?)
            })
    };
    let konst = offset(&vec![0; nd])?;
    let mut coef = vec![0i64; nd];
    for (d, c) in coef.iter_mut().enumerate() {
        let mut x = vec![0; nd];
        x[d] = 1;
        *c = offset(&x)?.checked_sub(konst)?;
    }
    // A's first dim (possibly dynamic) must not move with k: its stride is the
    // dynamic one's neighbour, and a k step stays inside one of its slices.
    if cl.ks.iter().any(|d| ma.results[0].uses_dim(*d)) {
        return None;
    }
    // B's leading dims are the k dims (row-major); N last.
    let lead = &mb.results[..mb.results.len() - 1];
    let kdims: Vec<u32> = lead
        .iter()
        .map(|e| match e {
            AffineExpr::Dim(d) if cl.ks.contains(d) => Some(*d),
            _ => None,
        })
        .collect::<Option<_>>()?;
    if kdims.len() != cl.ks.len() {
        return None;
    }
    let k = wsh[..wsh.len() - 1]
        .iter()
        .try_fold(1i64, |p, d| p.checked_mul(*d))?;
    if k == 0 || k > MAX_FLAT_K {
        return None;
    }
    let mut table = Vec::with_capacity(k as usize);
    for j in 0..k {
        let (mut rest, mut off) = (j, 0i64);
        for (d, ext) in kdims.iter().zip(&wsh).rev() {
            off += coef[*d as usize] * (rest % ext);
            rest /= ext;
        }
        table.push(ftuner_ir::Scalar::Int(off as i128));
    }
    let table = b.index_table(blk, vec![k], table);
    let alen = if ash[0] == DYNAMIC {
        DYNAMIC
    } else {
        ash.iter().try_fold(1i64, |p, d| p.checked_mul(*d))?
    };
    let all: Vec<i64> = (0..ash.len() as i64).collect();
    let a1 = b.val(
        blk,
        ops::tensor::CollapseShapeOp::NAME,
        vec![a],
        Type::tensor(vec![alen], aty.element_type()),
        vec![("reassociation", reassociation_attr(&[&all]))],
    );
    let wr = wsh.len();
    let lead: Vec<i64> = (0..wr as i64 - 1).collect();
    let w2 = b.val(
        blk,
        ops::tensor::CollapseShapeOp::NAME,
        vec![w],
        Type::tensor(vec![k, wsh[wr - 1]], wty.element_type()),
        vec![(
            "reassociation",
            reassociation_attr(&[&lead, &[wr as i64 - 1]]),
        )],
    );
    let f = wsh[wr - 1];
    let panel = (nr > 0 && f > 0 && f % nr == 0).then_some(nr);
    let w2 = match panel {
        Some(nr) => {
            let empty = b.val(
                blk,
                ops::tensor::EmptyOp::NAME,
                vec![],
                Type::tensor(vec![f / nr, k, nr], wty.element_type()),
                vec![],
            );
            let src = vec![
                AffineExpr::Dim(1),
                AffineExpr::Dim(0) * AffineExpr::Const(nr) + AffineExpr::Dim(2),
            ];
            copy_generic(b, blk, w2, src, empty)
        }
        None => w2,
    };
    let m_coef = cl.ms.iter().map(|d| (*d, coef[*d as usize])).collect();
    Some(FlatK {
        a1,
        w2,
        panel,
        table,
        k,
        n: f,
        img: ash[1..].iter().product(),
        m_coef,
        konst,
    })
}

/// The k steps per iteration of a flat-form tile's k loop: `k-unroll` (0: the default,
/// [`super::CONV_K_UNROLL`]) where K and the k blocks' step are multiples of it (so is
/// every block, the last one K less the others), else one.
pub(super) fn flat_unroll(k_unroll: i64, k: i64, step: Option<i64>) -> i64 {
    let ku = match k_unroll {
        0 => super::CONV_K_UNROLL,
        u => u.min(crate::schedule::MAX_K_UNROLL as i64),
    };
    if ku > 1 && k % ku == 0 && step.is_none_or(|s| s % ku == 0) {
        ku
    } else {
        1
    }
}

impl FlatK {
    /// The k part of A's offset at k step `j`: `table[j]`.
    fn k_offset(&self, b: &mut B<'_>, blk: BlockId, j: Value) -> Value {
        b.val(
            blk,
            ops::tensor::ExtractOp::NAME,
            vec![self.table, j],
            Type::index(),
            vec![],
        )
    }

    /// The N panels of width `nr` (the main N tile).
    pub(super) fn panels(&self, nr: i64) -> i64 {
        let nr = nr.max(1);
        (self.n + nr - 1) / nr
    }
}

/// Where a flat-form tile's rows read A.
pub(super) enum RowsOf<'a> {
    /// A viewed flat, at each row's own offset plus the k step's.
    Flat(&'a [Vec<(u32, Value)>]),
    /// A packed block `[mc][K]` and the tile's first row in it.
    Packed(Value, Value),
}

/// The k loop of a flat-k tile: each row's offset into A once (or its row in the packed
/// block), then one loop carrying the accumulators.
#[allow(clippy::too_many_arguments)]
pub(super) fn flat_k_loop(
    b: &mut B<'_>,
    blk: BlockId,
    cl: &ConvLayout,
    fk: &FlatK,
    rows: RowsOf<'_>,
    noff: Value,
    vty: Type,
    accs: Vec<Value>,
) -> Vec<Value> {
    let c0 = b.index(blk, 0);
    let n = accs.len();
    // Each row's base: its offset into A viewed flat, or its row of the packed block.
    let (a_src, packed, bases): (Value, bool, Vec<Value>) = match rows {
        RowsOf::Flat(rows) => (
            fk.a1,
            false,
            rows.iter()
                .map(|row| row_base(b, blk, fk, row, c0))
                .collect(),
        ),
        RowsOf::Packed(p, r0) => (
            p,
            true,
            (0..n as i64)
                .map(|i| {
                    let iv = b.index(blk, i);
                    b.ibin(blk, ops::arith::AddiOp::NAME, r0, iv)
                })
                .collect(),
        ),
    };
    // The tile's panel and its column in it: 0 for a full-width tile (full tiles start at
    // multiples of the main width, the panels' width), a constant that
    // `prefetch-tile-updates` reads as a panel row it can fetch the next panel's row of.
    let full = fk.panel.is_some_and(|nr| vty.shape() == Some(&[nr][..]));
    let panel_of = fk.panel.map(|nr| {
        let nrv = b.index(blk, nr);
        let p = b.index_op(blk, ops::arith::DivuiOp::NAME, noff, nrv);
        let j0 = if full {
            c0
        } else {
            b.index_op(blk, ops::arith::RemuiOp::NAME, noff, nrv)
        };
        (p, j0)
    });
    // All of K, or the k block of the loop around the tile nest (`k_blocks`).
    let (kbeg, kend) = match b.kblock {
        Some((_, k0, ks)) => (k0, b.ibin(blk, ops::arith::AddiOp::NAME, k0, ks)),
        None => (c0, b.index(blk, fk.k)),
    };
    // One k step: B's row, each row's A element, the FMAs.
    let step = |b: &mut B<'_>, fb: BlockId, j: Value, accs: &[Value]| -> Vec<Value> {
        let zp = b.fzero(fb, cl.elem);
        let bidx = match panel_of {
            Some((p, j0)) => vec![p, j, j0],
            None => vec![j, noff],
        };
        let along = bidx.len() - 1;
        let brow = read_rows(b, fb, fk.w2, &[bidx], zp, vty, along)[0];
        let a_rows: Vec<Vec<Value>> = if packed {
            bases.iter().map(|base| vec![*base, j]).collect()
        } else {
            let koff = fk.k_offset(b, fb, j);
            bases
                .iter()
                .map(|base| vec![b.ibin(fb, ops::arith::AddiOp::NAME, *base, koff)])
                .collect()
        };
        fma_rows(b, fb, brow, a_src, &a_rows, accs, vty)
    };
    // `k-unroll` k steps per iteration (`flat_unroll`: every block's length a multiple).
    let unroll = b.blocking.k_unroll.max(1);
    unrolled_k_loop(b, blk, (kbeg, kend, unroll), accs, &step)
}

/// Rows per block when the flat form should run blocks of M rows outside the N panels
/// (each block's A rows packed once, `[mc][K]`, then read by every panel), None when
/// the panels should stay outside (each panel, L2-resident, meeting every row in turn).
/// Per image, the panels-outside order reads the image once per panel (`F / nr` times)
/// and B once; the blocks-outside order reads the image once and B once per block of
/// `mc` rows — the order with less traffic wins. A 1x1 stride-2 conv, 1024 -> 2048
/// channels on a 14x14 image, reads its 0.8 MB image 32 times the first way and its
/// 8 MiB filter about once the second; a 256-channel 3x3 conv on 16x16 reads its 0.26 MB
/// image 4 times the first way and its 2.4 MB filter 4 times per image the second.
/// `mc` keeps the packed block in a quarter of L2 (the patch's mc x kc block of A is
/// sized for L2), between one and 16 main tiles. `force` (a schedule's `order`, the
/// pass's `loop-order`) takes one order or the other whatever the traffic; blocks still
/// need the flat form and a dynamic M.
pub(super) fn block_rows(
    ir: &Ir,
    op: OpId,
    cl: &ConvLayout,
    plans: &Plans,
    (fk, force): (Option<&FlatK>, Option<bool>),
    out: Value,
) -> Option<i64> {
    let fk = fk?;
    if force == Some(false) {
        return None;
    }
    let (mmain, mstatic, _) = &plans.m;
    let (nmain, _, _) = &plans.n;
    if *mmain <= 0 || *nmain <= 0 || mstatic.is_some() {
        return None;
    }
    let l2 = ir_attr_i64(ir, op, "mc")?.checked_mul(ir_attr_i64(ir, op, "kc")?)?;
    let mc = (l2 / 4 / fk.k.max(1) / mmain * mmain).clamp(*mmain, 16 * mmain);
    // Output positions per image: the static M extents.
    let oshape = ir.value_type(out).shape()?.to_vec();
    let per_image: i64 = cl
        .ms
        .iter()
        .filter_map(|d| res_pos(&cl.maps[2], *d).map(|p| oshape[p]))
        .filter(|e| *e != DYNAMIC)
        .product();
    let panels = fk.panels(*nmain);
    let by_panel = (panels as f64) * fk.img as f64;
    let by_block = (per_image as f64 / mc as f64).ceil() * (fk.k * fk.n) as f64;
    (force == Some(true) || by_block < by_panel).then_some(mc)
}

/// A's rows `m0 .. m0 + rows` (at most `mc`) of a flat-form conv packed as `[mc][K]`:
/// row `r`, column `j` holds the element row `m0 + r` reads at k step `j`.
pub(super) fn pack_rows(
    b: &mut B<'_>,
    blk: BlockId,
    cl: &ConvLayout,
    fk: &FlatK,
    (m0, rows, mc): (Value, Value, i64),
    mext: &[Value],
) -> Value {
    let elem = cl.elem;
    let empty = b.val(
        blk,
        ops::tensor::EmptyOp::NAME,
        vec![],
        Type::tensor(vec![mc, fk.k], elem),
        vec![],
    );
    let (c0, c1) = (b.index(blk, 0), b.index(blk, 1));
    let (fr, br, r, acc) = b.for_loop(blk, (c0, rows, c1), vec![empty]);
    let m = b.ibin(br, ops::arith::AddiOp::NAME, m0, r);
    let zero = b.index(br, 0);
    let pos = row_positions(b, br, cl, m, 1, mext).remove(0);
    let base = row_base(b, br, fk, &pos, zero);
    let kend = b.index(br, fk.k);
    let (fj, bj, j, acc2) = b.for_loop(br, (zero, kend, c1), vec![acc[0]]);
    let koff = fk.k_offset(b, bj, j);
    let at = b.ibin(bj, ops::arith::AddiOp::NAME, base, koff);
    let x = b.val(
        bj,
        ops::tensor::ExtractOp::NAME,
        vec![fk.a1, at],
        elem,
        vec![],
    );
    let ins = b.val(
        bj,
        ops::tensor::InsertOp::NAME,
        vec![x, acc2[0], r, j],
        Type::tensor(vec![mc, fk.k], elem),
        vec![],
    );
    b.yield_(bj, ops::scf::YieldOp::NAME, vec![ins]);
    let inner = b.ir.result(fj, 0);
    b.yield_(br, ops::scf::YieldOp::NAME, vec![inner]);
    b.ir.result(fr, 0)
}

/// A row's own part of A's offset in the flat form.
fn row_base(b: &mut B<'_>, blk: BlockId, fk: &FlatK, row: &[(u32, Value)], c0: Value) -> Value {
    let mut acc = b.index(blk, fk.konst);
    for (d, k) in &fk.m_coef {
        if *k == 0 {
            continue;
        }
        let v = row.iter().find(|(x, _)| x == d).map_or(c0, |(_, v)| *v);
        let kv = b.index(blk, *k);
        let t = b.ibin(blk, ops::arith::MuliOp::NAME, v, kv);
        acc = b.ibin(blk, ops::arith::AddiOp::NAME, acc, t);
    }
    acc
}
