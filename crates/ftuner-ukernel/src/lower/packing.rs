//! B's panels: the copy that makes each register tile's rows of B contiguous
//! (`[N / nr][K][nr]`), and when it is made once (a prepared weight) rather than per call.

use super::register_tile::{read_rows, write_rows};
use super::{reduction_dim, res_pos, Layout, B};
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::{func_attrs, ops};
use ftuner_ir::{AffineExpr, Attribute, BlockId, Ir, OpId, Type, Value, DYNAMIC};

/// Whether `v` is known when the weights are ([`func_attrs::known_at_preparation`]). A B
/// of that kind (read by a contraction directly in a function's body: see
/// `lower_checked`) is packed into panels unconditionally: the packing moves into the
/// prepare function when that pass runs again (ftuner-cpu-pipeline), so it costs nothing
/// per call, and panels keep a tile's B rows in a few consecutive L1 sets where in-place
/// rows 4 KiB apart (N = 1024, 2048, 3072, ...) all fall into the same ones.
pub(super) fn prepared(ir: &Ir, v: Value) -> bool {
    func_attrs::known_at_preparation(ir, v)
}

/// B repacked as panels `[N / nr][K][nr]`: each main-width tile's B rows become
/// contiguous, whatever B's layout (once per call: vector row copies when B is [k][n],
/// else a `linalg.generic` copy).
#[allow(clippy::too_many_arguments)]
pub(super) fn pack_panels(
    b: &mut B<'_>,
    blk: BlockId,
    lay: &Layout,
    bm: Value,
    dk: u32,
    nsz: Value,
    nr: i64,
    elem: Type,
) -> Value {
    use std::sync::Arc;
    let kp = res_pos(&lay.maps[1], dk).unwrap_or(0);
    let kpv = b.index(blk, kp as i64);
    let kext = b.dim(blk, bm, kpv);
    let cnr = b.index(blk, nr);
    let panels = b.val(
        blk,
        ops::arith::DivuiOp::NAME,
        vec![nsz, cnr],
        Type::index(),
        vec![],
    );
    // Static panels where B's shape is (a weight's always is): a prepared value must
    // have a static shape (outline-weight-preparation keeps only those).
    let bty = b.ir.value_type(bm);
    let np = res_pos(&lay.maps[1], lay.dn);
    let sdim = |p: Option<usize>| {
        p.and_then(|p| bty.shape()?.get(p).copied())
            .filter(|d| *d != DYNAMIC)
    };
    // Static: the loops' bounds are constants too, so nothing ties the packing to the
    // call's own operands (the output's dims) and it can be hoisted. Only whole panels
    // are packed (N / nr, rounded down, as in the dynamic form); the N residue's tiles read
    // B in place. (Requiring N % nr == 0 here left a 1000-wide classifier's panels
    // dynamic, so they were packed on every call: 8 MB copied per call, 4x its GEMV time.)
    let (empty, panels, kext) = match (sdim(np), sdim(Some(kp))) {
        (Some(n), Some(k)) if n >= nr => {
            let pty = Type::tensor(vec![n / nr, k, nr], elem);
            let e = b.val(blk, ops::tensor::EmptyOp::NAME, vec![], pty, vec![]);
            (e, b.index(blk, n / nr), b.index(blk, k))
        }
        _ => {
            let pty = Type::tensor(vec![DYNAMIC, DYNAMIC, nr], elem);
            let e = b.val(
                blk,
                ops::tensor::EmptyOp::NAME,
                vec![panels, kext],
                pty,
                vec![],
            );
            (e, panels, kext)
        }
    };
    // B [k][n] with n innermost: each panel row is one contiguous vector<nr> copy.
    if lay.maps[1].results == [AffineExpr::Dim(dk), AffineExpr::Dim(lay.dn)] {
        let (c0, c1) = (b.index(blk, 0), b.index(blk, 1));
        let vty = Type::vector(vec![nr], elem);
        let pad = b.fzero(blk, elem);
        let (fp, bp, p, ap) = b.for_loop(blk, (c0, panels, c1), vec![empty]);
        b.mark_parallel(fp);
        let (fk, bk, k, ak) = b.for_loop(bp, (c0, kext, c1), vec![ap[0]]);
        let n0 = b.ibin(bk, ops::arith::MuliOp::NAME, p, cnr);
        let row = read_rows(b, bk, bm, &[vec![k, n0]], pad, vty, 1);
        let out = write_rows(b, bk, ak[0], &[vec![p, k, c0]], &row, 2);
        b.yield_(bk, ops::scf::YieldOp::NAME, vec![out]);
        let r = b.ir.result(fk, 0);
        b.yield_(bp, ops::scf::YieldOp::NAME, vec![r]);
        return b.ir.result(fp, 0);
    }
    // in: B[k, n] with k = d1, n = d0 * nr + d2 (in B's own order); out: identity.
    let n_expr = AffineExpr::Add(
        Arc::new(AffineExpr::Mul(
            Arc::new(AffineExpr::Dim(0)),
            Arc::new(AffineExpr::Const(nr)),
        )),
        Arc::new(AffineExpr::Dim(2)),
    );
    let in_results = lay.maps[1]
        .results
        .iter()
        .map(|e| match e {
            AffineExpr::Dim(d) if *d == dk => AffineExpr::Dim(1),
            _ => n_expr.clone(),
        })
        .collect();
    copy_generic(b, blk, bm, in_results, empty)
}

/// `dst` (an empty tensor) filled by a `linalg.generic` that copies `src` read through
/// `src_results` (expressions of `dst`'s dims) — a repacking or a permutation.
pub(super) fn copy_generic(
    b: &mut B<'_>,
    blk: BlockId,
    src: Value,
    src_results: Vec<AffineExpr>,
    dst: Value,
) -> Value {
    let dty = b.ir.value_type(dst);
    let rank = dty.rank().unwrap_or(0);
    let map = |results| {
        Attribute::affine_map(ftuner_ir::AffineMap {
            num_dims: rank as u32,
            num_symbols: 0,
            results,
        })
    };
    let ident = (0..rank as u32).map(AffineExpr::Dim).collect();
    let par = Attribute::dialect("linalg", "iterator_type<parallel>");
    let g = b.op(
        blk,
        ops::linalg::GenericOp::NAME,
        vec![src, dst],
        vec![dty],
        vec![
            (
                "indexing_maps",
                Attribute::array(vec![map(src_results), map(ident)]),
            ),
            ("iterator_types", Attribute::array(vec![par; rank])),
            ("operandSegmentSizes", Attribute::dense_i32_array(&[1, 1])),
        ],
        1,
    );
    let elem = dty.element_type();
    let r = b.ir.regions_of(g)[0];
    let body = b.ir.append_block(r, &[elem, elem]);
    let x = b.ir.block_args(body)[0];
    b.yield_(body, ops::linalg::YieldOp::NAME, vec![x]);
    b.ir.result(g, 0)
}

/// `src` (..., P, Q) with its last two dims swapped: (..., Q, P), as a permuted copy
/// (`linalg.generic`). `convert-linalg-to-loops` turns such copies into w x w blocks
/// transposed in registers (docs/bufferization.md); the interpreter and upstream MLIR
/// take it as it is.
pub(crate) fn transpose_last2(b: &mut B<'_>, blk: BlockId, src: Value) -> Value {
    let sty = b.ir.value_type(src);
    let r = sty.rank().unwrap_or(0);
    debug_assert!(r >= 2);
    let mut dshape = sty.shape().unwrap_or(&[]).to_vec();
    dshape.swap(r - 2, r - 1);
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    let dyn_sizes: Vec<Value> = perm
        .iter()
        .enumerate()
        .filter(|(j, _)| dshape[*j] == DYNAMIC)
        .map(|(_, s)| {
            let jv = b.index(blk, *s as i64);
            b.dim(blk, src, jv)
        })
        .collect();
    let empty = b.val(
        blk,
        ops::tensor::EmptyOp::NAME,
        dyn_sizes,
        sty.with_shape(dshape),
        vec![],
    );
    let src_results = perm.iter().map(|d| AffineExpr::Dim(*d as u32)).collect();
    copy_generic(b, blk, src, src_results, empty)
}

/// A contraction whose B is laid out [..., n, k] (k innermost: NT, as attention's
/// Q·Kᵀ) reads each register-tile row of B as nr strided elements, once per row strip.
/// When a full strip of A (mr rows) will pass over B and B has a full block of w rows
/// (`transpose_lanes`: 16 f32, 8 f64; decided at run time), B is transposed once into
/// [..., k, n] by in-register blocks (`transpose_last2`) and the patch reads that, as an
/// NN contraction; otherwise B is read in place (measured on 192 x T x 64 attention
/// scores: the transposition costs more than it saves below T = 16, on Zen 3's 8 x 8
/// blocks too). `vector_bits`: of the target's registers (0: unknown). Returns the two
/// patches (transposed, in place), or `None` when B is not laid out that way.
pub(super) fn transpose_strided_b(
    ir: &mut Ir,
    op: OpId,
    lay: &Layout,
    mr: i64,
    (elem, vector_bits): (Type, i64),
) -> Option<(OpId, OpId)> {
    let dk = reduction_dim(lay)?;
    let bmap = &lay.maps[1];
    let nres = bmap.results.len();
    if nres < 2
        || bmap.results[nres - 1] != AffineExpr::Dim(dk)
        || bmap.results[nres - 2] != AffineExpr::Dim(lay.dn)
    {
        return None;
    }
    let w = ftuner_dialects::vector::transpose_lanes(elem);
    let (ins, outs) = ins_outs(ir, op);
    let bv = ins[1];
    if !is_ranked_tensor(ir, bv, nres) {
        return None;
    }
    let mut tmap = bmap.clone();
    tmap.results.swap(nres - 2, nres - 1);
    let mut maps = lay.maps.clone();
    maps[1] = tmap;
    let (m_out, a) = (res_pos(&lay.maps[2], lay.dm).unwrap_or(0), ins[0]);
    let npos = res_pos(bmap, lay.dn).unwrap_or(0);
    let amap = lay.maps[0].clone();
    let (tp, ip) = branch_on_b(ir, op, maps, |b, blk| {
        let pv = b.index(blk, m_out as i64);
        let msz = b.dim(blk, outs[0], pv);
        let pv = b.index(blk, npos as i64);
        let nsz = b.dim(blk, bv, pv);
        let (cm, cw) = (b.index(blk, mr), b.index(blk, w));
        let mut strip = b.cmpi(blk, 5, msz, cm);
        // With A contiguous along k too, the tiles of B read in place take the dot-product
        // form: each output pays a reduction (a few shuffles), while the transposition pays
        // K copies per column of B, shared by the M rows. With 512-bit registers they break
        // even near M = K (measured on issue 10's W2, K = 64, Xeon: dot products ahead up to
        // T = 62, the transposition from T = 128, level between): transposed only when
        // M >= K as well. With 256-bit registers (AVX2) the transposition's 8 x 8 f32
        // blocks win from T = 16 (Zen 3, W2 at T = 24-62: 1.3-1.6x faster than dot
        // products), so any full strip transposes there. (Other widths — NEON's 128 bits,
        // unmeasured, or unknown — keep the AVX-512 rule.)
        let narrow_registers = vector_bits == 256;
        if !narrow_registers && res_pos(&amap, dk) == Some(amap.results.len() - 1) {
            let kpos = b.index(blk, (amap.results.len() - 1) as i64);
            let kext = b.dim(blk, a, kpos);
            let long = b.cmpi(blk, 5, msz, kext);
            strip = b.val(
                blk,
                ops::arith::AndiOp::NAME,
                vec![strip, long],
                Type::i1(),
                vec![],
            );
        }
        let block = b.cmpi(blk, 5, nsz, cw);
        Some(b.val(
            blk,
            ops::arith::AndiOp::NAME,
            vec![strip, block],
            Type::i1(),
            vec![],
        ))
    });
    Some((tp, ip?))
}

/// `op` with its B replaced by B's last two dims swapped (`transpose_last2`), read
/// through `maps` (the patch's maps with B's changed), where `cond` (built before `op`)
/// holds at run time, and `op` unchanged elsewhere; `cond` returning `None` means always.
/// Returns the patch that reads the transposed B and, when there is a run-time choice,
/// the unchanged one; they replace `op`.
pub(super) fn branch_on_b(
    ir: &mut Ir,
    op: OpId,
    maps: Vec<ftuner_ir::AffineMap>,
    cond: impl FnOnce(&mut B<'_>, BlockId) -> Option<Value>,
) -> (OpId, Option<OpId>) {
    let bv = ins_outs(ir, op).0[1];
    let loc = ir.loc(op);
    let scratch = ir.new_block(&[]);
    let mut b = B::new(ir, loc);
    let rty = b.ir.value_type(b.ir.result(op, 0));
    let maps = Attribute::array(maps.into_iter().map(Attribute::affine_map).collect());
    let transposed = |b: &mut B<'_>, blk: BlockId| {
        let bt = transpose_last2(b, blk, bv);
        let p = b.ir.clone_op(op, &mut Default::default());
        b.ir.append_op(blk, p);
        b.ir.set_operand(p, 1, bt);
        b.ir.set_prop(p, "indexing_maps", Some(maps));
        p
    };
    let (mut p1, mut p2) = (op, None);
    let result = match cond(&mut b, scratch) {
        Some(c) => b.if_else(
            scratch,
            c,
            rty,
            |b, tb| {
                p1 = transposed(b, tb);
                b.ir.result(p1, 0)
            },
            |b, eb| {
                let p = b.ir.clone_op(op, &mut Default::default());
                b.ir.append_op(eb, p);
                p2 = Some(p);
                b.ir.result(p, 0)
            },
        ),
        None => {
            p1 = transposed(&mut b, scratch);
            b.ir.result(p1, 0)
        }
    };
    for o in ir.block_ops_vec(scratch) {
        ir.unlink(o);
        ir.insert_before(op, o);
    }
    ir.erase_block(scratch);
    ir.replace_op(op, &[result]);
    (p1, p2)
}

/// Whether `v` is a ranked tensor of rank `rank`.
fn is_ranked_tensor(ir: &Ir, v: Value, rank: usize) -> bool {
    let t = ir.value_type(v);
    t.is_tensor() && t.rank() == Some(rank)
}

/// A[m0 .. m0 + ms, k0 .. k0 + ks] copied into a contiguous ms x ks tensor: rows of
/// 16-lane vector copies along k, the k remainder element by element.
pub(super) fn pack_a_block(
    b: &mut B<'_>,
    blk: BlockId,
    a: Value,
    (m0, ms): (Value, Value),
    (k0, ks): (Value, Value),
    elem: Type,
) -> Value {
    let w = 16;
    let ty = Type::tensor(vec![DYNAMIC, DYNAMIC], elem);
    let empty = b.val(blk, ops::tensor::EmptyOp::NAME, vec![ms, ks], ty, vec![]);
    let (c0, c1, cw) = (b.index(blk, 0), b.index(blk, 1), b.index(blk, w));
    let pad = b.fzero(blk, elem);
    let q = b.ibin(blk, ops::arith::DivuiOp::NAME, ks, cw);
    let kw = b.ibin(blk, ops::arith::MuliOp::NAME, q, cw);
    let vty = Type::vector(vec![w], elem);
    let (fr, br, r, ar) = b.for_loop(blk, (c0, ms, c1), vec![empty]);
    b.mark_parallel(fr);
    let row = b.ibin(br, ops::arith::AddiOp::NAME, m0, r);
    let (fv, bv, kk, av) = b.for_loop(br, (c0, kw, cw), vec![ar[0]]);
    let ka = b.ibin(bv, ops::arith::AddiOp::NAME, k0, kk);
    let v = read_rows(b, bv, a, &[vec![row, ka]], pad, vty, 1);
    let out = write_rows(b, bv, av[0], &[vec![r, kk]], &v, 1);
    b.yield_(bv, ops::scf::YieldOp::NAME, vec![out]);
    let t = b.ir.result(fv, 0);
    let (fs, bs, kk, as_) = b.for_loop(br, (kw, ks, c1), vec![t]);
    let ka = b.ibin(bs, ops::arith::AddiOp::NAME, k0, kk);
    let x = b.val(
        bs,
        ops::tensor::ExtractOp::NAME,
        vec![a, row, ka],
        elem,
        vec![],
    );
    let out = b.val(
        bs,
        ops::tensor::InsertOp::NAME,
        vec![x, as_[0], r, kk],
        ty,
        vec![],
    );
    b.yield_(bs, ops::scf::YieldOp::NAME, vec![out]);
    let t = b.ir.result(fs, 0);
    b.yield_(br, ops::scf::YieldOp::NAME, vec![t]);
    b.ir.result(fr, 0)
}

/// B (`bm`, a prepared value of static shape defined in the function's body, N at least
/// `nr`) packed into panels in front of the outermost loop around `op` (a contraction run
/// more than once per call) in its function's body: the packing reads only B and
/// constants, so `outline-weight-preparation` then moves it into the prepare function and
/// it runs once, not per iteration. `None` (nothing built) when B is not such a value.
pub(super) fn hoisted_packing(
    b: &mut B<'_>,
    op: OpId,
    lay: &Layout,
    bm: Value,
    nr: i64,
) -> Option<(Value, i64)> {
    let dk = reduction_dim(lay)?;
    let vb = b.vector.clone()?;
    if !prepared(b.ir, bm) {
        return None;
    }
    let np = res_pos(&lay.maps[1], lay.dn)?;
    let shape = b.ir.value_type(bm).shape()?.to_vec();
    let n = *shape.get(np)?;
    if shape.contains(&DYNAMIC) || n < nr {
        return None;
    }
    // The outermost op around `op` in the function's body.
    let mut anchor = op;
    while let Some(p) = b.ir.parent_op(anchor) {
        if b.ir.name(p) == ops::func::FuncOp::NAME {
            break;
        }
        anchor = p;
    }
    // B itself defined in the function's body (an argument, or a value there, before the
    // anchor since it dominates `op`): a view of it made inside the loops would be read
    // before its definition.
    if anchor == op || b.ir.value_block(bm) != b.ir.op(anchor).parent {
        return None;
    }
    let hb = b.ir.new_block(&[]);
    let nsz = b.index(hb, n);
    let p = pack_panels(b, hb, lay, bm, dk, nsz, nr, vb.elem);
    for o in b.ir.block_ops_vec(hb) {
        b.ir.unlink(o);
        b.ir.insert_before(anchor, o);
    }
    b.ir.erase_block(hb);
    Some((p, nr))
}

/// Whether `op` sits directly in a function's body.
pub(super) fn top_level(ir: &Ir, op: OpId) -> bool {
    ir.op(op)
        .parent
        .and_then(|blk| ir.block_parent_op(blk))
        .is_some_and(|f| ir.name(f) == ops::func::FuncOp::NAME)
}
