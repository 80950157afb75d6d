//! Windowed contractions (convolutions as implicit GEMM): M is the flattened output
//! positions, N one output-channel dim, K the reduction dims. Where the image's dims past
//! the batch and the filter are static (every conv of a torch.export'ed CNN with a
//! dynamic batch), the k dims are one loop over a table of A offsets and B is read as
//! panels ([`FlatK`]); otherwise nested k loops read A through its window expressions.

use super::batch::{nest, nest_from};
use super::packing::copy_generic;
use super::padding::plan_padding;
use super::plan_loops::take_zero_fill;
use super::register_tile::{fma_rows, indices, mul_add_elem, read_rows, write_rows};
use super::tiles::{dim_roles, patch_maps};
use super::{ir_attr_i64, res_pos, Blocking, Plans, B};
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ops;
use ftuner_dialects::ukernel::epilogue_block;
use ftuner_ir::{AffineExpr, Attribute, BlockId, Ir, OpId, Type, Value, DYNAMIC};

/// A windowed contraction (convolution as implicit GEMM): M is the flattened output
/// positions, N one output-channel dim, K the reduction dims.
pub(crate) struct ConvLayout {
    pub(crate) ms: Vec<u32>,
    pub(crate) dn: u32,
    pub(crate) ks: Vec<u32>,
    pub(crate) maps: Vec<ftuner_ir::AffineMap>,
    pub(crate) elem: Type,
}

pub(crate) fn conv_layout(ir: &Ir, op: OpId) -> Option<ConvLayout> {
    let maps = patch_maps(ir, op)?;
    // B and C index by plain dims; A by sums of dims and constant multiples of dims.
    if !maps[1..]
        .iter()
        .all(|m| m.results.iter().all(|e| matches!(e, AffineExpr::Dim(_))))
    {
        return None;
    }
    let nd = maps[0].num_dims;
    let (ms, ns, ks) = dim_roles(&maps);
    if ns.len() != 1 || ms.is_empty() || ks.is_empty() || ms.len() + 1 + ks.len() != nd as usize {
        return None;
    }
    // Every k dim must be read by B (its extent comes from there).
    if ks.iter().any(|d| res_pos(&maps[1], *d).is_none()) {
        return None;
    }
    let elem = mul_add_elem(ir, op)?;
    // A's expressions: sums of dims and constant multiples of dims, or constants.
    fn simple(e: &AffineExpr) -> bool {
        match e {
            AffineExpr::Dim(_) | AffineExpr::Const(_) => true,
            AffineExpr::Add(a, b) => simple(a) && simple(b),
            AffineExpr::Mul(a, b) => {
                matches!(**b, AffineExpr::Const(_)) && simple(a)
                    || matches!(**a, AffineExpr::Const(_)) && simple(b)
            }
            _ => false,
        }
    }
    if !maps[0].results.iter().all(simple) {
        return None;
    }
    Some(ConvLayout {
        ms,
        dn: ns[0],
        ks,
        maps,
        elem,
    })
}

/// The value of `e` with dims from `at`, as index arithmetic in `blk`.
pub(crate) fn eval_expr(
    b: &mut B<'_>,
    blk: BlockId,
    e: &AffineExpr,
    at: &dyn Fn(u32) -> Value,
) -> Value {
    match e {
        AffineExpr::Dim(d) => at(*d),
        AffineExpr::Const(c) => b.index(blk, *c),
        AffineExpr::Add(x, y) => {
            let (x, y) = (eval_expr(b, blk, x, at), eval_expr(b, blk, y, at));
            b.ibin(blk, ops::arith::AddiOp::NAME, x, y)
        }
        AffineExpr::Mul(x, y) => {
            let (x, y) = (eval_expr(b, blk, x, at), eval_expr(b, blk, y, at));
            b.ibin(blk, ops::arith::MuliOp::NAME, x, y)
        }
        _ => unreachable!("checked by conv_layout"),
    }
}

/// Lower a windowed contraction: the plan's tiles over the flattened output positions
/// (M) and the channel dim (N); each row of a tile is delinearized into its output
/// position, the k dims are nested loops, and the register tile is `mt` vectors along N.
pub(super) fn lower_conv(
    ir: &mut Ir,
    op: OpId,
    cl: &ConvLayout,
    plans: &Plans,
    blocking: Blocking,
) -> Result<(), String> {
    let (ins, outs) = ins_outs(ir, op);
    if outs.len() != 1 || ins.len() != 2 || ir.results(op).len() != 1 {
        return Err("expects two inputs and one tensor output".into());
    }
    if epilogue_block(ir, op).is_some() {
        return Err("epilogues of windowed contractions are not lowered".into());
    }
    if [&plans.m, &plans.n]
        .iter()
        .any(|p| plan_padding(p).iter().any(|x| *x > 0))
    {
        return Err("padded plans of windowed contractions are not lowered".into());
    }
    // A zero-filled init is not read: every tile writes its sums (all of K) once.
    let zero = take_zero_fill(ir, op);
    let (ins, outs) = ins_outs(ir, op);
    let loc = ir.loc(op);
    let scratch = ir.new_block(&[]);
    let mut b = B::new(ir, loc);
    b.blocking = blocking;
    let out = outs[0];
    let cpos = |d: u32| res_pos(&cl.maps[2], d).unwrap_or(0) as i64;
    // Extents of the M dims (from C), of N (from C) and of the k dims (from B).
    let mut mext = vec![];
    for d in &cl.ms {
        let pv = b.index(scratch, cpos(*d));
        mext.push(b.dim(scratch, out, pv));
    }
    let mut msz = b.index(scratch, 1);
    for e in &mext {
        msz = b.ibin(scratch, ops::arith::MuliOp::NAME, msz, *e);
    }
    let pnv = b.index(scratch, cpos(cl.dn));
    let nsz = b.dim(scratch, out, pnv);
    let mut kext = vec![];
    for d in &cl.ks {
        let pv = b.index(scratch, res_pos(&cl.maps[1], *d).unwrap_or(0) as i64);
        kext.push(b.val(
            scratch,
            ops::tensor::DimOp::NAME,
            vec![ins[1], pv],
            Type::index(),
            vec![],
        ));
    }
    let a = ins[0];
    // The filter with its output-channel dim innermost (FCHW → CHWF, once per call: a
    // filter is small next to the conv's work), so each k step loads B as contiguous
    // vectors instead of `nr` strided elements.
    let (w, cl_packed);
    let cl = match channels_last(&mut b, scratch, cl, ins[1]) {
        Some((wp, c)) => {
            w = wp;
            cl_packed = c;
            &cl_packed
        }
        None => {
            w = ins[1];
            cl
        }
    };
    let flat = flat_k(&mut b, scratch, cl, a, w, plans.n.0);
    let mut tile = |b: &mut B<'_>, blk: BlockId, acc: Value, t| {
        let form = match &flat {
            Some(fk) => KForm::Flat(fk, None),
            None => KForm::Nested { a, w, kext: &kext },
        };
        conv_tile(b, blk, cl, &form, zero, acc, t, &mext)
    };
    let result = match block_rows(b.ir, op, cl, plans, flat.as_ref(), out) {
        Some(mc) if b.blocking.mc => {
            let fk = flat.as_ref().expect("blocks are for the flat form");
            let c0 = b.index(scratch, 0);
            let cmc = b.index(scratch, mc);
            let (f, fb, m0, acc) = b.for_loop(scratch, (c0, msz, cmc), vec![out]);
            let left = b.ibin(fb, ops::arith::SubiOp::NAME, msz, m0);
            let cmc2 = b.index(fb, mc);
            let chunk = b.index_op(fb, ops::arith::MinsiOp::NAME, cmc2, left);
            let packed = pack_rows(&mut b, fb, cl, fk, (m0, chunk, mc), &mext);
            let mut tile = |b: &mut B<'_>, blk: BlockId, acc: Value, t| {
                let form = KForm::Flat(fk, Some((packed, m0)));
                conv_tile(b, blk, cl, &form, zero, acc, t, &mext)
            };
            let r = nest_from(&mut b, fb, (chunk, nsz), plans, acc[0], Some(m0), &mut tile);
            b.yield_(fb, ops::scf::YieldOp::NAME, vec![r]);
            b.ir.result(f, 0)
        }
        _ => nest(&mut b, scratch, (msz, nsz), plans, out, &mut tile),
    };
    let ops = b.ir.block_ops_vec(scratch);
    for o in ops {
        b.ir.unlink(o);
        b.ir.insert_before(op, o);
    }
    b.ir.replace_op(op, &[result]);
    Ok(())
}

/// A copy of the filter `w` whose output-channel dim (N) is its last one, and the layout
/// reading it; None when it already is.
fn channels_last(
    b: &mut B<'_>,
    blk: BlockId,
    cl: &ConvLayout,
    w: Value,
) -> Option<(Value, ConvLayout)> {
    let mb = &cl.maps[1];
    let rank = mb.results.len();
    let bn = res_pos(mb, cl.dn)?;
    if bn + 1 == rank {
        return None;
    }
    // dst dim j holds w's dim perm[j].
    let perm: Vec<usize> = (0..rank).filter(|p| *p != bn).chain([bn]).collect();
    let wty = b.ir.value_type(w);
    let shape = wty.shape()?.to_vec();
    let dshape: Vec<i64> = perm.iter().map(|p| shape[*p]).collect();
    let dyn_sizes: Vec<Value> = perm
        .iter()
        .filter(|p| shape[**p] == DYNAMIC)
        .map(|p| {
            let pv = b.index(blk, *p as i64);
            b.dim(blk, w, pv)
        })
        .collect();
    let empty = b.val(
        blk,
        ops::tensor::EmptyOp::NAME,
        dyn_sizes,
        wty.with_shape(dshape),
        vec![],
    );
    let src_results = (0..rank)
        .map(|p| AffineExpr::Dim(perm.iter().position(|x| *x == p).unwrap_or(p) as u32))
        .collect();
    let packed = copy_generic(b, blk, w, src_results, empty);
    let mut maps = cl.maps.clone();
    maps[1].results = perm.iter().map(|p| mb.results[*p].clone()).collect();
    Some((
        packed,
        ConvLayout {
            ms: cl.ms.clone(),
            dn: cl.dn,
            ks: cl.ks.clone(),
            maps,
            elem: cl.elem,
        },
    ))
}

/// How a tile's k steps read A and B.
enum KForm<'a> {
    /// Nested loops over the k dims, A through its window expressions.
    Nested {
        a: Value,
        w: Value,
        kext: &'a [Value],
    },
    /// One loop over a table of A offsets ([`FlatK`]); with `(packed, m0)`, A's rows
    /// from `m0` packed `[mc][K]` ([`pack_rows`]).
    Flat(&'a FlatK, Option<(Value, Value)>),
}

#[allow(clippy::too_many_arguments)]
fn conv_tile(
    b: &mut B<'_>,
    blk: BlockId,
    cl: &ConvLayout,
    form: &KForm<'_>,
    zero: bool,
    c: Value,
    (moff, mt, noff, nt): (Value, i64, Value, i64),
    mext: &[Value],
) -> Value {
    let vty = Type::vector(vec![nt], cl.elem);
    let mc = &cl.maps[2];
    let cn = res_pos(mc, cl.dn).unwrap_or(0);
    let c0 = b.index(blk, 0);
    let pad = b.fzero(blk, cl.elem);
    let rows = row_positions(b, blk, cl, moff, mt, mext);
    let c_rows = c_indices(cl, &rows, noff, c0);
    let accs = if zero {
        let z = b.val(blk, ops::vector::BroadcastOp::NAME, vec![pad], vty, vec![]);
        vec![z; c_rows.len()]
    } else {
        read_rows(b, blk, c, &c_rows, pad, vty, cn)
    };
    let accs = match form {
        KForm::Nested { a, w, kext } => conv_k_loops(
            b,
            blk,
            cl,
            (*a, *w),
            &rows,
            noff,
            vty,
            kext,
            accs,
            &mut vec![],
        ),
        KForm::Flat(fk, packed) => {
            let a_at = match packed {
                Some((p, m0)) => {
                    RowsOf::Packed(*p, b.ibin(blk, ops::arith::SubiOp::NAME, moff, *m0))
                }
                None => RowsOf::Flat(&rows),
            };
            flat_k_loop(b, blk, cl, fk, a_at, noff, vty, accs)
        }
    };
    write_rows(b, blk, c, &c_rows, &accs, cn)
}

#[allow(clippy::too_many_arguments)]
fn conv_k_loops(
    b: &mut B<'_>,
    blk: BlockId,
    cl: &ConvLayout,
    (a, w): (Value, Value),
    rows: &[Vec<(u32, Value)>],
    noff: Value,
    vty: Type,
    kext: &[Value],
    accs: Vec<Value>,
    kvals: &mut Vec<(u32, Value)>,
) -> Vec<Value> {
    let level = kvals.len();
    let n = accs.len();
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    let (f, fb, k, inner) = b.for_loop(blk, (c0, kext[level], c1), accs);
    kvals.push((cl.ks[level], k));
    let next = if level + 1 < cl.ks.len() {
        conv_k_loops(b, fb, cl, (a, w), rows, noff, vty, kext, inner, kvals)
    } else {
        let z = b.index(fb, 0);
        let zp = b.fzero(fb, cl.elem);
        let (ma, mb) = (&cl.maps[0], &cl.maps[1]);
        let bn = res_pos(mb, cl.dn).unwrap_or(0);
        let dn = cl.dn;
        let kv = kvals.clone();
        let at_b = |d: u32| {
            if d == dn {
                noff
            } else {
                kv.iter().find(|(x, _)| *x == d).map_or(z, |(_, v)| *v)
            }
        };
        let brow = read_rows(b, fb, w, &[indices(mb, &at_b)], zp, vty, bn)[0];
        let a_rows: Vec<Vec<Value>> = rows
            .iter()
            .map(|row| {
                let at_a = |d: u32| {
                    row.iter()
                        .chain(kv.iter())
                        .find(|(x, _)| *x == d)
                        .map_or(z, |(_, v)| *v)
                };
                ma.results
                    .iter()
                    .map(|e| eval_expr(b, fb, e, &at_a))
                    .collect()
            })
            .collect();
        fma_rows(b, fb, brow, a, &a_rows, &inner, vty)
    };
    kvals.pop();
    b.yield_(fb, ops::scf::YieldOp::NAME, next);
    (0..n).map(|i| b.ir.result(f, i)).collect()
}

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
    k: i64,
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

/// `e` as `sum(coef * dim) + const`; None for anything else.
fn linear(e: &AffineExpr, coef: &mut std::collections::BTreeMap<u32, i64>) -> Option<i64> {
    Some(match e {
        AffineExpr::Dim(d) => {
            *coef.entry(*d).or_insert(0) += 1;
            0
        }
        AffineExpr::Const(c) => *c,
        AffineExpr::Add(x, y) => linear(x, coef)?.checked_add(linear(y, coef)?)?,
        AffineExpr::Mul(x, y) => {
            let (c, e) = match (x.as_const(), y.as_const()) {
                (Some(c), _) => (c, y),
                (_, Some(c)) => (c, x),
                _ => return None,
            };
            let mut inner = std::collections::BTreeMap::new();
            let k = linear(e, &mut inner)?;
            for (d, v) in inner {
                *coef.entry(d).or_insert(0) += v.checked_mul(c)?;
            }
            k.checked_mul(c)?
        }
        _ => return None,
    })
}

/// The flat-k form of `cl` over A `a` and B `w` (B's N dim last), when A's dims past
/// the first and all of B's are static; None otherwise (the nested k loops are used).
fn flat_k(
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
    // A's row-major strides and the linear coefficient of every loop dim in its offset.
    let mut stride = vec![1i64; ash.len()];
    for j in (0..ash.len().saturating_sub(1)).rev() {
        stride[j] = stride[j + 1].checked_mul(ash[j + 1])?;
    }
    let mut coef = std::collections::BTreeMap::<u32, i64>::new();
    let mut konst = 0i64;
    for (e, st) in ma.results.iter().zip(&stride) {
        let mut c = std::collections::BTreeMap::new();
        konst = konst.checked_add(linear(e, &mut c)?.checked_mul(*st)?)?;
        for (d, v) in c {
            *coef.entry(d).or_insert(0) += v.checked_mul(*st)?;
        }
    }
    // A's first dim (possibly dynamic) must not move with k: its stride is the
    // dynamic one's neighbour, and a k step stays inside one of its slices.
    let mut c0 = std::collections::BTreeMap::new();
    linear(&ma.results[0], &mut c0)?;
    if c0.keys().any(|d| cl.ks.contains(d)) {
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
            off += coef.get(d).copied().unwrap_or(0) * (rest % ext);
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
    let all = |n: usize| Attribute::array((0..n as i64).map(Attribute::i64).collect());
    let a1 = b.val(
        blk,
        ops::tensor::CollapseShapeOp::NAME,
        vec![a],
        Type::tensor(vec![alen], aty.element_type()),
        vec![("reassociation", Attribute::array(vec![all(ash.len())]))],
    );
    let wr = wsh.len();
    let w2 = b.val(
        blk,
        ops::tensor::CollapseShapeOp::NAME,
        vec![w],
        Type::tensor(vec![k, wsh[wr - 1]], wty.element_type()),
        vec![(
            "reassociation",
            Attribute::array(vec![
                all(wr - 1),
                Attribute::array(vec![Attribute::i64(wr as i64 - 1)]),
            ]),
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
    let m_coef = cl
        .ms
        .iter()
        .map(|d| (*d, coef.get(d).copied().unwrap_or(0)))
        .collect();
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

/// Where a flat-form tile's rows read A.
enum RowsOf<'a> {
    /// A viewed flat, at each row's own offset plus the k step's.
    Flat(&'a [Vec<(u32, Value)>]),
    /// A packed block `[mc][K]` and the tile's first row in it.
    Packed(Value, Value),
}

/// The k loop of a flat-k tile: each row's offset into A once (or its row in the packed
/// block), then one loop carrying the accumulators.
#[allow(clippy::too_many_arguments)]
fn flat_k_loop(
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
    let (a_src, bases): (Value, Vec<Value>) = match rows {
        RowsOf::Flat(rows) => (
            fk.a1,
            rows.iter()
                .map(|row| row_base(b, blk, fk, row, c0))
                .collect(),
        ),
        RowsOf::Packed(p, r0) => (
            p,
            (0..n as i64)
                .map(|i| {
                    let iv = b.index(blk, i);
                    b.ibin(blk, ops::arith::AddiOp::NAME, r0, iv)
                })
                .collect(),
        ),
    };
    let packed = a_src != fk.a1;
    // The tile's panel and its column in it.
    let panel_of = fk.panel.map(|nr| {
        let nrv = b.index(blk, nr);
        (
            b.index_op(blk, ops::arith::DivuiOp::NAME, noff, nrv),
            b.index_op(blk, ops::arith::RemuiOp::NAME, noff, nrv),
        )
    });
    let (one, kend) = (b.index(blk, 1), b.index(blk, fk.k));
    let (f, fb, j, inner) = b.for_loop(blk, (c0, kend, one), accs);
    let koff = b.val(
        fb,
        ops::tensor::ExtractOp::NAME,
        vec![fk.table, j],
        Type::index(),
        vec![],
    );
    let zp = b.fzero(fb, cl.elem);
    let bidx = match panel_of {
        Some((p, j0)) => vec![p, j, j0],
        None => vec![j, noff],
    };
    let along = bidx.len() - 1;
    let brow = read_rows(b, fb, fk.w2, &[bidx], zp, vty, along)[0];
    let a_rows: Vec<Vec<Value>> = bases
        .iter()
        .map(|base| {
            if packed {
                vec![*base, j]
            } else {
                vec![b.ibin(fb, ops::arith::AddiOp::NAME, *base, koff)]
            }
        })
        .collect();
    let next = fma_rows(b, fb, brow, a_src, &a_rows, &inner, vty);
    b.yield_(fb, ops::scf::YieldOp::NAME, next);
    (0..n).map(|i| b.ir.result(f, i)).collect()
}

/// Each row's output position: `moff + i` delinearized over the M extents.
fn row_positions(
    b: &mut B<'_>,
    blk: BlockId,
    cl: &ConvLayout,
    moff: Value,
    mt: i64,
    mext: &[Value],
) -> Vec<Vec<(u32, Value)>> {
    let mut rows: Vec<Vec<(u32, Value)>> = vec![];
    for i in 0..mt {
        let iv = b.index(blk, i);
        let mut m = b.ibin(blk, ops::arith::AddiOp::NAME, moff, iv);
        let mut pos = vec![];
        for (d, e) in cl.ms.iter().zip(mext).rev() {
            let r = b.val(
                blk,
                ops::arith::RemuiOp::NAME,
                vec![m, *e],
                Type::index(),
                vec![],
            );
            m = b.val(
                blk,
                ops::arith::DivuiOp::NAME,
                vec![m, *e],
                Type::index(),
                vec![],
            );
            pos.push((*d, r));
        }
        rows.push(pos);
    }
    rows
}

/// C's indices of each row at column `noff`.
fn c_indices(
    cl: &ConvLayout,
    rows: &[Vec<(u32, Value)>],
    noff: Value,
    c0: Value,
) -> Vec<Vec<Value>> {
    let (mc, dn) = (&cl.maps[2], cl.dn);
    let find =
        |fixed: &[(u32, Value)], d: u32| fixed.iter().find(|(x, _)| *x == d).map(|(_, v)| *v);
    rows.iter()
        .map(|row| {
            let at = |d: u32| {
                if d == dn {
                    noff
                } else {
                    find(row, d).unwrap_or(c0)
                }
            };
            indices(mc, &at)
        })
        .collect()
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
/// sized for L2), between one and 16 main tiles.
fn block_rows(
    ir: &Ir,
    op: OpId,
    cl: &ConvLayout,
    plans: &Plans,
    fk: Option<&FlatK>,
    out: Value,
) -> Option<i64> {
    let fk = fk?;
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
    let panels = (fk.n + nmain - 1) / nmain;
    let by_panel = (panels as f64) * fk.img as f64;
    let by_block = (per_image as f64 / mc as f64).ceil() * (fk.k * fk.n) as f64;
    (by_block < by_panel).then_some(mc)
}

/// A's rows `m0 .. m0 + rows` (at most `mc`) of a flat-form conv packed as `[mc][K]`:
/// row `r`, column `j` holds the element row `m0 + r` reads at k step `j`.
fn pack_rows(
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
    let koff = b.val(
        bj,
        ops::tensor::ExtractOp::NAME,
        vec![fk.table, j],
        Type::index(),
        vec![],
    );
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
