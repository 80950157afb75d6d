//! A patch's epilogue applied in registers: on each row of a register tile, as vectors,
//! between the k loop and the store of C.
//!
//! The general epilogue (`tiles::epilogue_tile`) is a `linalg.generic` over the finished C
//! tile: the tile's sums are stored, read back, transformed and stored again. LLVM keeps
//! both stores (the first is dead, but it does not prove it past the epilogue's loads),
//! and on a contraction with a short k loop — MobileNetV2's 1x1 convolutions with 16 to 32
//! input channels — the second pass over the tile is about as long as the k loop. Here
//! the body of the epilogue is cloned once per tile row on `vector<nt>` values: its inputs
//! read per row (a scalar broadcast: a per-channel BatchNorm scale) or per row and column
//! (a vector: a residual), elementwise `arith` ops on vectors, one store.
//!
//! Taken when the epilogue is elementwise `arith` only (no calls, no `math` op: the
//! approximations of `approximate-math` run on scalars), each input is read through
//! dims and constants with N, if read at all, as its last (contiguous) dim, and floats.
//! A windowed contraction's tiles (`conv.rs`) put their rows through the same body
//! ([`through_body`]), their inputs read whole, N along any one dim.
//! Inside k blocks the rows take it in the last block only (an `scf.if` on the block's
//! flag, as the general path does).

use super::register_tile::read_rows;
use super::tiles::slice;
use super::{Layout, B};
use ftuner_dialects::ops;
use ftuner_dialects::ukernel::{epilogue_block, epilogue_inputs, epilogue_maps};
use ftuner_ir::{AffineExpr, AffineMap, BlockId, OpId, Type, Value};
use rustc_hash::FxHashMap;

/// What a register tile needs to apply its patch's epilogue to its rows.
pub(crate) struct TileEpilogue {
    /// The patch's epilogue block: (C's element, inputs...) -> yield.
    block: BlockId,
    /// Each input's slice for this tile, with its map over the patch's dims.
    inputs: Vec<(Value, AffineMap)>,
}

/// The tile epilogue of `patch` for tile `t`, or None where the general path must run
/// (no epilogue, k blocks, an op or an input this file does not vectorize). Emits the
/// inputs' tile slices into `blk`.
pub(super) fn prepare(
    b: &mut B<'_>,
    blk: BlockId,
    patch: OpId,
    lay: &Layout,
    t: (Value, i64, Value, i64),
) -> Option<TileEpilogue> {
    let eb = epilogue_block(b.ir, patch)?;
    let args = b.ir.block_args(eb).to_vec();
    if !ftuner_dialects::vector::is_lanewise_body(b.ir, eb) || !b.ir.value_type(args[0]).is_float()
    {
        return None;
    }
    let extras = epilogue_inputs(b.ir, patch);
    let maps = epilogue_maps(b.ir, patch);
    if extras.len() != maps.len() {
        return None;
    }
    for (v, m) in extras.iter().zip(&maps) {
        let reads_n = m.results.iter().position(|e| e.uses_dim(lay.dn));
        let plain = m
            .results
            .iter()
            .all(|e| matches!(e, AffineExpr::Dim(_) | AffineExpr::Const(_)));
        let elem = b.ir.value_type(*v).element_type();
        let along_last = reads_n.is_none_or(|p| p + 1 == m.results.len() && elem.is_float());
        if !plain || !along_last {
            return None;
        }
    }
    let inputs = extras
        .iter()
        .zip(maps)
        .map(|(v, m)| (slice(b, blk, *v, &m, lay, t).0, m))
        .collect();
    Some(TileEpilogue { block: eb, inputs })
}

/// The epilogue on each of a tile's row values `vals` (`vector<nt>`, row i of the tile):
/// the rows to store; inside k blocks, only in the last one. `batch_of` gives the batch
/// loops' indices.
pub(super) fn apply(
    b: &mut B<'_>,
    blk: BlockId,
    ep: &TileEpilogue,
    lay: &Layout,
    batch_of: &dyn Fn(u32) -> Option<Value>,
    vals: &[Value],
) -> Vec<Value> {
    b.in_last_k_block(blk, vals, |b, inner| {
        vals.iter()
            .enumerate()
            .map(|(i, v)| apply_row(b, inner, ep, lay, batch_of, (i, *v)))
            .collect()
    })
}

/// Row `i` of the tile, `v: vector<nt>`, through the epilogue's body on vectors.
fn apply_row(
    b: &mut B<'_>,
    blk: BlockId,
    ep: &TileEpilogue,
    lay: &Layout,
    batch_of: &dyn Fn(u32) -> Option<Value>,
    (i, v): (usize, Value),
) -> Value {
    let z = b.index(blk, 0);
    let iv = b.index(blk, i as i64);
    let at = |d: u32| {
        if d == lay.dm {
            iv
        } else {
            batch_of(d).unwrap_or(z)
        }
    };
    through_body(b, blk, (ep.block, &ep.inputs), (lay.dn, true), &at, v)
}

/// `v: vector<nt>` (a row of a register tile: lanes along patch dim `dn`) through
/// epilogue body `block` on vectors: each of `inputs` (over the patch's dims) read at the
/// row's indices (`at`: each dim's index; `dn` the row's first column; a constant its
/// value, or 0 where `sliced`: the inputs are the tile's slices, a constant dim already
/// taken) — a vector along the position where its map reads `dn` (callers admit maps
/// reading it at most once), else its scalar broadcast.
pub(super) fn through_body(
    b: &mut B<'_>,
    blk: BlockId,
    (block, inputs): (BlockId, &[(Value, AffineMap)]),
    (dn, sliced): (u32, bool),
    at: &dyn Fn(u32) -> Value,
    v: Value,
) -> Value {
    let nt = match b.ir.value_type(v).shape() {
        Some([n]) => *n,
        _ => return v,
    };
    let z = b.index(blk, 0);
    let eargs = b.ir.block_args(block).to_vec();
    let mut vmap: FxHashMap<Value, Value> = Default::default();
    vmap.insert(eargs[0], v);
    for (j, (s, m)) in inputs.iter().enumerate() {
        let idx: Vec<Value> = m
            .results
            .iter()
            .map(|e| match e {
                AffineExpr::Dim(d) => at(*d),
                AffineExpr::Const(c) if !sliced => b.index(blk, *c),
                _ => z,
            })
            .collect();
        let elem = b.ir.value_type(*s).element_type();
        let vty = Type::vector(vec![nt], elem);
        let x = match m.results.iter().position(|e| e.uses_dim(dn)) {
            Some(along) => {
                let pad = b.fzero(blk, elem);
                read_rows(b, blk, *s, std::slice::from_ref(&idx), pad, vty, along)[0]
            }
            None => {
                let mut ops = vec![*s];
                ops.extend(idx);
                let e = b.val(blk, ops::tensor::ExtractOp::NAME, ops, elem, vec![]);
                splat(b, blk, e, nt)
            }
        };
        vmap.insert(eargs[1 + j], x);
    }
    let mut place = |ir: &mut ftuner_ir::Ir, o: ftuner_ir::OpId| ir.append_op(blk, o);
    let loc = b.loc;
    ftuner_dialects::vector::clone_lanewise(b.ir, block, &mut vmap, (nt, loc), &mut place)
        .unwrap_or(v)
}

/// `vector.broadcast` of scalar `s` to `vector<nt>`.
fn splat(b: &mut B<'_>, blk: BlockId, s: Value, nt: i64) -> Value {
    let ty = Type::vector(vec![nt], b.ir.value_type(s));
    b.val(blk, ops::vector::BroadcastOp::NAME, vec![s], ty, vec![])
}
