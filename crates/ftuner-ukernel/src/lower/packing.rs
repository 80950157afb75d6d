//! B's panels: the copy that makes each register tile's rows of B contiguous
//! (`[N / nr][K][nr]`), and when it is made once (a prepared weight) rather than per call.

use super::{read_rows, res_pos, write_rows, Layout, B};
use ftuner_ir::{AffineExpr, Attribute, BlockId, Ir, Type, Value, DYNAMIC};

/// Whether `v` is known when the weights are: an argument marked `{ftuner.weight}`, an
/// argument of a function that `outline-weight-preparation` split, past the arguments it
/// kept (a prepared value), or a pure op's result on such values and constants (at least
/// one of them not a constant), of static shape. A B of that kind (read by a contraction
/// directly in a function's body: see `lower_checked`) is packed into panels
/// unconditionally: the packing moves into the prepare function when that pass
/// runs again (ftuner-cpu-pipeline), so it costs nothing per call, and panels keep a
/// tile's B rows in a few consecutive L1 sets where in-place rows 4 KiB apart (N = 1024,
/// 2048, 3072, ...) all fall into the same ones.
pub(super) fn prepared(ir: &Ir, v: Value) -> bool {
    // (known at preparation, reads a weight or prepared value)
    fn go(ir: &Ir, v: Value, depth: u32) -> (bool, bool) {
        if let Some(op) = ir.defining_op(v) {
            let name = ir.name(op);
            if name == "arith.constant" {
                return (true, false);
            }
            if depth >= 8
                || !ir.regions_of(op).is_empty()
                || !(name.starts_with("tensor.") || name.starts_with("arith."))
                || ir.operands(op).is_empty()
            {
                return (false, false);
            }
            let (mut known, mut weight) = (true, false);
            for o in ir.operands(op) {
                let (k, w) = go(ir, *o, depth + 1);
                known &= k;
                weight |= w;
            }
            return (known, weight);
        }
        let Some(block) = ir.value_block(v) else {
            return (false, false);
        };
        let Some(i) = ir.block_args(block).iter().position(|a| *a == v) else {
            return (false, false);
        };
        let Some(f) = ir
            .block_parent_op(block)
            .filter(|f| ir.name(*f) == "func.func")
        else {
            return (false, false);
        };
        let kept = ir
            .attr(f, "ftuner.prepared")
            .and_then(|a| a.as_dict())
            .and_then(|d| d.iter().find(|(k, _)| k == "inputs").map(|(_, a)| *a))
            .and_then(|a| a.as_dense_i64s())
            .map(|k| k.len());
        // A weight argument itself (a function with nothing to prepare before: GPT-2's
        // Conv1D weights are read as they are).
        let weight = ir
            .attr(f, "arg_attrs")
            .and_then(|a| a.as_array())
            .and_then(|a| a.get(i).copied())
            .and_then(|d| d.as_dict())
            .is_some_and(|d| d.iter().any(|(k, _)| k == "ftuner.weight"));
        let known = weight || kept.is_some_and(|k| i >= k);
        (known, known)
    }
    // Constants alone are not hoisted by outline-weight-preparation (nothing derives from
    // a weight), and a dynamic shape is not kept prepared: either would pack per call.
    go(ir, v, 0) == (true, true) && ir.value_type(v).has_static_shape()
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
    let kext = b.val(blk, "tensor.dim", vec![bm, kpv], Type::index(), vec![]);
    let cnr = b.index(blk, nr);
    let panels = b.val(blk, "arith.divui", vec![nsz, cnr], Type::index(), vec![]);
    // Static panels where B's shape is (a weight's always is): a prepared value must
    // have a static shape (outline-weight-preparation keeps only those).
    let bty = b.ir.value_type(bm);
    let np = res_pos(&lay.maps[1], lay.dn);
    let sdim = |p: Option<usize>| {
        p.and_then(|p| bty.shape()?.get(p).copied())
            .filter(|d| *d != DYNAMIC)
    };
    // Static: the loops' bounds are constants too, so nothing ties the packing to the
    // call's own operands (the output's dims) and it can be hoisted.
    let (empty, panels, kext) = match (sdim(np), sdim(Some(kp))) {
        (Some(n), Some(k)) if n % nr == 0 => {
            let pty = Type::tensor(vec![n / nr, k, nr], elem);
            let e = b.val(blk, "tensor.empty", vec![], pty, vec![]);
            (e, b.index(blk, n / nr), b.index(blk, k))
        }
        _ => {
            let pty = Type::tensor(vec![DYNAMIC, DYNAMIC, nr], elem);
            let e = b.val(blk, "tensor.empty", vec![panels, kext], pty, vec![]);
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
        let n0 = b.ibin(bk, "arith.muli", p, cnr);
        let row = read_rows(b, bk, bm, &[vec![k, n0]], pad, vty, 1);
        let out = write_rows(b, bk, ak[0], &[vec![p, k, c0]], &row, 2);
        b.yield_(bk, "scf.yield", vec![out]);
        let r = b.ir.result(fk, 0);
        b.yield_(bp, "scf.yield", vec![r]);
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
        "linalg.generic",
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
    b.yield_(body, "linalg.yield", vec![x]);
    b.ir.result(g, 0)
}
