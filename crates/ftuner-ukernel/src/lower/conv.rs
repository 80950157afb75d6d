//! Windowed contractions (convolutions as implicit GEMM): M is the flattened output
//! positions, N one output-channel dim, K the reduction dims. Where the image's dims past
//! the batch and the filter are static (every conv of a torch.export'ed CNN with a
//! dynamic batch), the k dims are one loop over a table of A offsets and B is read as
//! panels ([`FlatK`]); otherwise nested k loops read A through its window expressions.

use super::batch::{nest, nest_from};
use super::conv_flat::{block_rows, flat_k, flat_k_loop, flat_unroll, pack_rows, FlatK, RowsOf};
use super::packing::copy_generic;
use super::padding::plan_padding;
use super::plan_loops::{even_k_block, take_zero_fill};
use super::register_tile::{
    fma_rows, indices, mul_add_elem, pick, read_rows, store_sums, write_rows,
};
use super::tiles::{dim_roles, patch_maps};
use super::vector_epilogue::through_body;
use super::{res_pos, Blocking, Plans, B};
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ops;
use ftuner_dialects::ukernel::{epilogue_block, epilogue_inputs, epilogue_maps};
use ftuner_ir::{AffineExpr, BlockId, Ir, OpId, Type, Value, DYNAMIC};

/// Below this many N panels, a flat-form conv's row loops run in parallel instead of its
/// panel loops.
const MIN_PARALLEL_PANELS: i64 = 4;

/// A windowed contraction (convolution as implicit GEMM): M is the flattened output
/// positions, N one output-channel dim, K the reduction dims.
pub(crate) struct ConvLayout {
    pub(crate) ms: Vec<u32>,
    pub(crate) dn: u32,
    pub(crate) ks: Vec<u32>,
    pub(crate) maps: Vec<ftuner_ir::AffineMap>,
    pub(crate) elem: Type,
}

/// The M dims, the N dim and the K dims of a windowed contraction lower-ukernels tiles:
/// B and C indexed by plain dims, A by sums of dims, constant multiples of dims and
/// constants; one N dim, every k dim read by B (its extent comes from there).
pub(super) fn conv_dims(maps: &[ftuner_ir::AffineMap]) -> Option<(Vec<u32>, u32, Vec<u32>)> {
    if !maps[1..].iter().all(|m| m.as_permutation_like().is_some()) {
        return None;
    }
    let nd = maps[0].num_dims;
    let (ms, ns, ks) = dim_roles(maps);
    if ns.len() != 1 || ms.is_empty() || ks.is_empty() || ms.len() + 1 + ks.len() != nd as usize {
        return None;
    }
    if ks.iter().any(|d| res_pos(&maps[1], *d).is_none()) {
        return None;
    }
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
    maps[0]
        .results
        .iter()
        .all(simple)
        .then_some((ms, ns[0], ks))
}

pub(crate) fn conv_layout(ir: &Ir, op: OpId) -> Option<ConvLayout> {
    let maps = patch_maps(ir, op)?;
    let (ms, dn, ks) = conv_dims(&maps)?;
    let elem = mul_add_elem(ir, op)?;
    Some(ConvLayout {
        ms,
        dn,
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
    (blocking, k_blocking): (Blocking, bool),
) -> Result<(), String> {
    let (ins, outs) = ins_outs(ir, op);
    if outs.len() != 1 || ins.len() != 2 || ir.results(op).len() != 1 {
        return Err("expects two inputs and one tensor output".into());
    }
    // The epilogue (patch-ukernels takes only lanewise ones into a windowed
    // contraction's patch): applied to each row of a register tile before its store.
    let epilogue = match epilogue_block(ir, op) {
        Some(eb) => {
            let extras = epilogue_inputs(ir, op);
            let maps = epilogue_maps(ir, op);
            let pairs = extras.iter().copied().zip(&maps);
            if extras.len() != maps.len()
                || !crate::epilogue::lanewise_epilogue(ir, eb, pairs, cl.dn)
            {
                return Err("a windowed contraction's epilogue must be lanewise arith on floats, its operands read through dims and constants".into());
            }
            Some((eb, extras.into_iter().zip(maps).collect::<Vec<_>>()))
        }
        None => None,
    };
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
    // The flat form's k blocks (K, the step, C zero-initialised).
    let kc = super::ir_attr_i64(b.ir, op, "kc").unwrap_or(0);
    let kb = flat.as_ref().map_or((0, None, zero), |fk| {
        (fk.k, even_k_block(fk.k, kc).filter(|_| k_blocking), zero)
    });
    let dk = cl.ks.first().copied().unwrap_or(0);
    // Resolved here, where the blocks' step is known: the tiles' k loops read it.
    b.blocking.k_unroll = flat_unroll(b.blocking.k_unroll, kb.0, kb.1);
    let ep = epilogue.as_ref().map(|(eb, x)| (*eb, x.as_slice()));
    let mut tile = |b: &mut B<'_>, blk: BlockId, acc: Value, t| {
        let form = match &flat {
            Some(fk) => KForm::Flat(fk, None),
            None => KForm::Nested { a, w, kext: &kext },
        };
        conv_tile(b, blk, cl, (&form, ep), zero, acc, t, &mext)
    };
    let force = b.blocking.rows_outside;
    let result = match block_rows(b.ir, op, cl, plans, (flat.as_ref(), force), out) {
        Some(mc) if b.blocking.mc => {
            let fk = flat.as_ref().expect("blocks are for the flat form");
            let c0 = b.index(scratch, 0);
            let cmc = b.index(scratch, mc);
            let (f, fb, m0, acc) = b.for_loop(scratch, (c0, msz, cmc), vec![out]);
            // Blocks write disjoint rows and pack into their own buffers: the block loop
            // is the parallel one (parallel tile loops inside each block were one fork
            // and join per block: MobileNetV2 ran slower on two threads than on one).
            b.mark_parallel(f);
            let left = b.ibin(fb, ops::arith::SubiOp::NAME, msz, m0);
            let cmc2 = b.index(fb, mc);
            let chunk = b.index_op(fb, ops::arith::MinsiOp::NAME, cmc2, left);
            let packed = pack_rows(&mut b, fb, cl, fk, (m0, chunk, mc), &mext);
            let mut tile = |b: &mut B<'_>, blk: BlockId, acc: Value, t| {
                let form = KForm::Flat(fk, Some((packed, m0)));
                conv_tile(b, blk, cl, (&form, ep), zero, acc, t, &mext)
            };
            let r = k_blocks(&mut b, fb, kb, dk, acc[0], &mut |b, blk, acc| {
                nest_from(b, blk, (chunk, nsz), plans, acc, Some(m0), &mut tile)
            });
            b.yield_(fb, ops::scf::YieldOp::NAME, vec![r]);
            b.ir.result(f, 0)
        }
        _ => {
            // Few N panels (64 output channels: ResNet-50's stem and first stage) leave
            // threads idle when the panel loops are the parallel ones: the row loops
            // inside them are then (one fork and join per panel).
            b.parallel_n = flat
                .as_ref()
                .is_none_or(|fk| fk.panels(plans.n.0) >= MIN_PARALLEL_PANELS);
            k_blocks(&mut b, scratch, kb, dk, out, &mut |b, blk, acc| {
                nest(b, blk, (msz, nsz), plans, acc, &mut tile)
            })
        }
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
    (form, ep): (&KForm<'_>, Option<ConvEpilogue<'_>>),
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
    // In a k block (`k_blocks`) the tile sums its block from zero and adds it to C.
    let blocked = b.kblock.is_some();
    let accs = if zero || blocked {
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
    // The epilogue on each row (inside k blocks, in the last one only).
    let finish = |b: &mut B<'_>, blk: BlockId, vals: &[Value]| -> Vec<Value> {
        let Some(ep) = ep else {
            return vals.to_vec();
        };
        b.in_last_k_block(blk, vals, |b, inner| {
            rows.iter()
                .zip(vals)
                .map(|(row, v)| {
                    let at = |d: u32| {
                        if d == cl.dn {
                            noff
                        } else {
                            pick(d, row, c0)
                        }
                    };
                    through_body(b, inner, ep, (cl.dn, false), &at, *v)
                })
                .collect()
        })
    };
    if blocked {
        store_sums(b, blk, c, &c_rows, &accs, (pad, vty, cn), &finish)
    } else {
        let vals = finish(b, blk, &accs);
        write_rows(b, blk, c, &c_rows, &vals, cn)
    }
}

/// `body` (a tile nest over C `acc`) inside a loop over k blocks of `step` (`Some`: see
/// [`even_k_block`]): its tiles sum each block and add it to C (store it, in the first
/// block of a zero-initialised C), the epilogue in the last block. Without a step, the
/// nest as it is, each tile summing all of K. Before, a tile's k loop streamed the
/// whole `K x nr` panel of B (1.2 MB for a 512-channel 3x3 conv) once per tile of rows.
fn k_blocks(
    b: &mut B<'_>,
    blk: BlockId,
    (k, step, zero): (i64, Option<i64>, bool),
    dk: u32,
    acc: Value,
    body: &mut dyn FnMut(&mut B<'_>, BlockId, Value) -> Value,
) -> Value {
    let Some(step) = step else {
        return body(b, blk, acc);
    };
    let c0 = b.index(blk, 0);
    let (kend, st) = (b.index(blk, k), b.index(blk, step));
    let (f, fb, k0, accs) = b.for_loop(blk, (c0, kend, st), vec![acc]);
    let saved = (b.kblock, b.kfirst, b.klast, b.zero_init);
    b.zero_init = zero;
    b.enter_k_block(fb, dk, (k0, st, kend), (zero, true));
    let r = body(b, fb, accs[0]);
    (b.kblock, b.kfirst, b.klast, b.zero_init) = saved;
    b.yield_(fb, ops::scf::YieldOp::NAME, vec![r]);
    b.ir.result(f, 0)
}

/// A patch's epilogue block and its inputs with their maps over the patch's dims.
type ConvEpilogue<'a> = (BlockId, &'a [(Value, ftuner_ir::AffineMap)]);

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

/// Each row's output position: `moff + i` delinearized over the M extents.
pub(super) fn row_positions(
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
