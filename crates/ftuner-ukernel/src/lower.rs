//! `lower-ukernels` (first stage): realize the patch plan as loops. Each `ukernel.patch`
//! with a single M and a single N loop dimension becomes
//!
//! * an `scf.for` over the full M tiles and, for the M residue, an `scf.for` over the
//!   residue's tiles read from a constant table (`plan[M mod main]`, a table lookup);
//! * inside each row strip the same over N;
//! * each tile dispatched on its (m, n) size with `scf.index_switch` to a computation of
//!   static shape: a `linalg.generic` on `tensor.extract_slice`s, inserted back with
//!   `tensor.insert_slice`.
//!
//! Semantics are those of the patch (checked against the reference interpreter). The
//! register-level bodies (vector FMAs, packing) replace the per-tile `linalg.generic` in
//! the next stage, together with bufferization.

mod packing;
mod shape_asserts;

use ftuner_dialects::linalg::ins_outs;
pub use ftuner_dialects::scf::PARALLEL_ATTR;
use ftuner_dialects::ukernel::{epilogue_block, epilogue_inputs, epilogue_maps, read_plan};
use ftuner_ir::{
    intern_name, AffineExpr, Attribute, BlockId, Diagnostic, Ir, OpId, OpSpec, Type, Value, DYNAMIC,
};
use ftuner_pass::{
    options::OptionKind, OptionSpec, Pass, PassContext, PassFailure, PassOptions, Statistic,
};
pub(crate) use shape_asserts::shape_asserts;

pub(crate) struct B<'a> {
    pub(crate) ir: &'a mut Ir,
    pub(crate) loc: Attribute,
    /// Register-level bodies: `Some` when the patch's body is a multiply-accumulate.
    pub(crate) vector: Option<VectorBody>,
    /// Inside the kc loop: the reduction dim and the block's offset and size along it.
    pub(crate) kblock: Option<(u32, Value, Value)>,
    /// B packed into panels `[N / nr][K][nr]` (contiguous rows of the main tile width).
    pub(crate) packed: Option<(Value, i64)>,
    /// Inside the kc loop: whether this is the last k block (epilogues run then).
    pub(crate) klast: Option<Value>,
    /// The mc loop, A packing (run-time rule in `loops`) and parallel loop marking.
    pub(crate) blocking: Blocking,
    /// Inside the mc loop: A's mc x kc block copied contiguous, and the block's first row.
    pub(crate) apacked: Option<(Value, Value)>,
    /// C starts at zero (its init was a zero `linalg.fill`): register tiles store their
    /// sums in the first k block instead of adding them to C, and C is never read first.
    pub(crate) zero_init: bool,
    /// Inside the kc loop with `zero_init`: whether this is the first k block.
    pub(crate) kfirst: Option<Value>,
}

/// The CPU lowering's knobs beyond the tile bodies.
#[derive(Clone, Copy, Debug, Default)]
pub struct Blocking {
    /// Split a dynamic M into blocks of the patch's `mc`.
    pub mc: bool,
    /// Copy large A blocks contiguous inside the mc loop.
    pub pack_a: bool,
    /// Mark independent loops `ftuner.parallel` ([`PARALLEL_ATTR`]).
    pub parallel: bool,
}

/// What the register-level body needs to know about a patch.
#[derive(Clone)]
pub(crate) struct VectorBody {
    /// The reduction loop dim.
    dk: u32,
    /// Batch loop dims (in all three operands), looped over around the register tile.
    batch: Vec<u32>,
    elem: Type,
    /// Largest tile (elements) given a vector body: a register file's worth.
    max_elems: i64,
    /// For a full-width tile with B packed: the packed panels and this tile's N offset.
    panel: Option<(Value, Value)>,
    /// Independent FMA chains the core needs to be busy (FMA latency x FMAs per cycle,
    /// from the hardware model) and the lanes of one vector register.
    chains: i64,
    lanes: i64,
}

fn ir_attr_i64(ir: &Ir, op: OpId, name: &str) -> Option<i64> {
    ir.attr(op, name).and_then(|a| a.as_i64())
}

/// The single reduction dim: read by both inputs, absent from the output.
pub(crate) fn reduction_dim(lay: &Layout) -> Option<u32> {
    let uses = |mi: usize, d: u32| lay.maps[mi].results.iter().any(|e| e.uses_dim(d));
    let ks: Vec<u32> = (0..lay.maps[0].num_dims)
        .filter(|d| uses(0, *d) && uses(1, *d) && !uses(2, *d))
        .collect();
    (ks.len() == 1).then(|| ks[0])
}

/// Position of loop dim `d` among a map's results.
pub(crate) fn res_pos(map: &ftuner_ir::AffineMap, d: u32) -> Option<usize> {
    map.results.iter().position(|e| *e == AffineExpr::Dim(d))
}

/// A patch gets vector bodies when it is a (batched) contraction (b..., m, n, k) with one
/// reduction dim, batch dims in every operand, and the body `acc + a * b` on floats.
fn vector_plan(ir: &Ir, op: OpId, lay: &Layout, max_elems: i64) -> Option<VectorBody> {
    let nd = lay.maps[0].num_dims;
    let dk = reduction_dim(lay)?;
    let batch: Vec<u32> = (0..nd)
        .filter(|d| *d != lay.dm && *d != lay.dn && *d != dk)
        .collect();
    for d in &batch {
        if lay.maps.iter().any(|m| res_pos(m, *d).is_none()) {
            return None;
        }
    }
    // Every operand is indexed by exactly its dims: A (b, m, k), B (b, k, n), C (b, m, n).
    let want = [2 + batch.len(); 3];
    if lay.maps.iter().zip(want).any(|(m, w)| m.results.len() != w) {
        return None;
    }
    let elem = mul_add_elem(ir, op)?;
    // The core's FMA pipeline: a tile with fewer accumulator registers than FMA latency x
    // FMAs per cycle leaves it idle (each k step waits for the previous FMA).
    let cpu = ir
        .attr(op, "target")
        .and_then(|a| a.as_str())
        .and_then(|t| ftuner_hw::HardwareModel::load_named(t).ok())
        .and_then(|m| m.cpu);
    let bytes = elem.float_kind().map_or(4, |k| k.width() / 8).max(1);
    let (chains, lanes) = cpu.map_or((1, 1), |c| {
        (
            (c.fma_latency as f64 * c.vector_fmas_per_cycle()).round() as i64,
            c.lanes(bytes) as i64,
        )
    });
    Some(VectorBody {
        dk,
        batch,
        elem,
        max_elems,
        panel: None,
        chains: chains.max(1),
        lanes: lanes.max(1),
    })
}

/// The element type when the patch's body is `acc + a * b` on floats of one type.
pub(crate) fn mul_add_elem(ir: &Ir, op: OpId) -> Option<Type> {
    let body = ir.region_entry(*ir.regions_of(op).first()?)?;
    let args = ir.block_args(body).to_vec();
    let ops = ir.block_ops_vec(body);
    if args.len() != 3 || ops.len() != 3 {
        return None;
    }
    let elem = ir.value_type(args[2]);
    elem.float_kind()?;
    let is = |o: OpId, n: &str| ir.name(o) == n;
    if !is(ops[0], "arith.mulf") || !is(ops[1], "arith.addf") || !is(ops[2], "ukernel.yield") {
        return None;
    }
    let m = ir.operands(ops[0]);
    let s = ir.operands(ops[1]);
    let p = ir.result(ops[0], 0);
    let mul_ok = (m[0] == args[0] && m[1] == args[1]) || (m[0] == args[1] && m[1] == args[0]);
    let add_ok = (s[0] == args[2] && s[1] == p) || (s[0] == p && s[1] == args[2]);
    let typed = args.iter().all(|a| ir.value_type(*a) == elem);
    (mul_ok && add_ok && typed && ir.operands(ops[2]) == [ir.result(ops[1], 0)]).then_some(elem)
}

/// Indices of an access through `map`, each result dim's value from `at`.
fn indices(map: &ftuner_ir::AffineMap, at: &dyn Fn(u32) -> Value) -> Vec<Value> {
    map.results
        .iter()
        .map(|e| match e {
            AffineExpr::Dim(d) => at(*d),
            _ => unreachable!("checked by layout"),
        })
        .collect()
}

/// The register-level body of an `mt x nt` tile, inside loops over the batch dims: `mt`
/// accumulators of `vector<nt>` live across the k loop; each step loads one row of B,
/// broadcasts one element of A per row and issues `vector.fma`s; the accumulators are
/// read from and written back to C.
#[allow(clippy::too_many_arguments)]
fn vector_body(
    b: &mut B<'_>,
    blk: BlockId,
    lay: &Layout,
    vb: &VectorBody,
    a: Value,
    bm: Value,
    c: Value,
    mt: i64,
    nt: i64,
) -> Value {
    batch_loops(b, blk, lay, vb, (a, bm), c, (mt, nt), &mut vec![])
}

#[allow(clippy::too_many_arguments)]
fn batch_loops(
    b: &mut B<'_>,
    blk: BlockId,
    lay: &Layout,
    vb: &VectorBody,
    ab: (Value, Value),
    c: Value,
    tile: (i64, i64),
    fixed: &mut Vec<(u32, Value)>,
) -> Value {
    let Some(&d) = vb.batch.get(fixed.len()) else {
        return register_tile(b, blk, lay, vb, ab, c, tile, fixed);
    };
    let pos = res_pos(&lay.maps[2], d).unwrap_or(0);
    let pv = b.index(blk, pos as i64);
    let ext = b.val(blk, "tensor.dim", vec![c, pv], Type::index(), vec![]);
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    let (f, fb, iv, acc) = b.for_loop(blk, (c0, ext, c1), vec![c]);
    let acc = acc[0];
    fixed.push((d, iv));
    let r = batch_loops(b, fb, lay, vb, ab, acc, tile, fixed);
    fixed.pop();
    b.yield_(fb, "scf.yield", vec![r]);
    b.ir.result(f, 0)
}

#[allow(clippy::too_many_arguments)]
fn register_tile(
    b: &mut B<'_>,
    blk: BlockId,
    lay: &Layout,
    vb: &VectorBody,
    (a, bm): (Value, Value),
    c: Value,
    (mt, nt): (i64, i64),
    fixed: &[(u32, Value)],
) -> Value {
    let vty = Type::vector(vec![nt], vb.elem);
    let (ma, mb, mc) = (&lay.maps[0], &lay.maps[1], &lay.maps[2]);
    let bn = res_pos(mb, lay.dn).unwrap_or(0);
    let cn = res_pos(mc, lay.dn).unwrap_or(0);
    let ak = res_pos(ma, vb.dk).unwrap_or(0);
    let batch_of = |d: u32| fixed.iter().find(|(x, _)| *x == d).map(|(_, v)| *v);
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    let pad = b.fzero(blk, vb.elem);
    let akv = b.index(blk, ak as i64);
    let kext = b.val(blk, "tensor.dim", vec![a, akv], Type::index(), vec![]);
    let rows: Vec<Value> = (0..mt).map(|i| b.index(blk, i)).collect();
    let (dm, dn) = (lay.dm, lay.dn);
    let c_rows: Vec<Vec<Value>> = rows
        .iter()
        .map(|&iv| {
            indices(mc, &|d| {
                pick(d, &[(dm, iv), (dn, c0)], batch_of(d).unwrap_or(c0))
            })
        })
        .collect();
    // The accumulators start at zero and C is added once after the k loop (as BLIS's
    // micro-kernels do): the FMAs never wait for C, which misses the caches when it is
    // large (`prefetch-tile-updates` fetches its lines during the loop).
    let zero = b.val(blk, "vector.broadcast", vec![pad], vty, vec![]);
    let accs = vec![zero; rows.len()];
    // Packed B: panel noff / nt, rows from the k block's offset.
    let panel_idx = match vb.panel {
        Some((_, noff)) => {
            let cnt = b.index(blk, nt);
            let j = b.val(blk, "arith.divui", vec![noff, cnt], Type::index(), vec![]);
            Some((j, b.kblock.map_or(c0, |kb| kb.1)))
        }
        None => None,
    };
    // One k step: B's row at k (packed panel or in place), each A element broadcast and
    // FMA'd into its row's accumulator.
    let dk = vb.dk;
    let step = |b: &mut B<'_>, fb: BlockId, k: Value, accs: &[Value]| -> Vec<Value> {
        let z = b.index(fb, 0);
        let zp = b.fzero(fb, vb.elem);
        let at_b = |d: u32| pick(d, &[(dk, k), (dn, z)], batch_of(d).unwrap_or(z));
        let brow = match (vb.panel, panel_idx) {
            (Some((p, _)), Some((j, k0))) => {
                let kabs = b.ibin(fb, "arith.addi", k0, k);
                read_rows(b, fb, p, &[vec![j, kabs, z]], zp, vty, 2)[0]
            }
            _ => read_rows(b, fb, bm, &[indices(mb, &at_b)], zp, vty, bn)[0],
        };
        let a_rows: Vec<Vec<Value>> = (0..accs.len())
            .map(|i| {
                let iv = b.index(fb, i as i64);
                indices(ma, &|d| {
                    pick(d, &[(dk, k), (dm, iv)], batch_of(d).unwrap_or(z))
                })
            })
            .collect();
        fma_rows(b, fb, brow, a, &a_rows, accs, vty)
    };
    // A small tile has fewer accumulator registers than the FMA pipeline holds: its k loop
    // is split over `u` sets of accumulators (k, k+1, ... k+u-1 each into its own set),
    // summed after the loop, so `u` times as many FMAs are in flight. The remainder of k
    // modulo u runs into the first set. (The sums are reassociated, as in any BLAS.)
    let regs = mt * ((nt + vb.lanes - 1) / vb.lanes);
    let u = ((vb.chains + regs - 1) / regs).clamp(1, 8);
    // Both A and B contiguous along k (an NT product) and a narrow tile: B's row at k would
    // be nt strided loads per k step; dot products along k instead (rows of A and B read
    // as full vectors), reduced to C's rows, and the k remainder as below.
    let dot = nt_dot(lay, vb) && mt * nt <= DOT_OUTPUTS && nt <= vb.lanes;
    // k from `start` to the end, one step at a time, from the accumulators `init`.
    let k_loop = |b: &mut B<'_>, start: Value, init: Vec<Value>| -> Vec<Value> {
        let n = init.len();
        let (f, fb, k, inner) = b.for_loop(blk, (start, kext, c1), init);
        let next = step(b, fb, k, &inner);
        b.yield_(fb, "scf.yield", next);
        (0..n).map(|i| b.ir.result(f, i)).collect()
    };
    let sums: Vec<Value> = if dot {
        let (start, init) = dot_tile(b, blk, lay, vb, (a, bm), (mt, nt), &batch_of, kext);
        k_loop(b, start, init)
    } else if u == 1 {
        k_loop(b, c0, accs)
    } else {
        let n = rows.len();
        let cu = b.index(blk, u);
        let q = b.ibin(blk, "arith.divui", kext, cu);
        let kmain = b.ibin(blk, "arith.muli", q, cu);
        let inits: Vec<Value> = std::iter::repeat_n(zero, n * u as usize).collect();
        let (f, fb, k, inner) = b.for_loop(blk, (c0, kmain, cu), inits);
        let mut next = vec![];
        for j in 0..u as usize {
            let kj = if j == 0 {
                k
            } else {
                let cj = b.index(fb, j as i64);
                b.ibin(fb, "arith.addi", k, cj)
            };
            next.extend(step(b, fb, kj, &inner[j * n..(j + 1) * n]));
        }
        b.yield_(fb, "scf.yield", next);
        let sets: Vec<Value> = (0..n * u as usize).map(|i| b.ir.result(f, i)).collect();
        let mut parts: Vec<Vec<Value>> = vec![k_loop(b, kmain, sets[..n].to_vec())];
        parts.extend((1..u as usize).map(|j| sets[j * n..(j + 1) * n].to_vec()));
        // Pairwise sums of the sets.
        while parts.len() > 1 {
            let mut merged = vec![];
            for pair in parts.chunks(2) {
                match pair {
                    [x, y] => merged.push(
                        x.iter()
                            .zip(y)
                            .map(|(p, q)| b.val(blk, "arith.addf", vec![*p, *q], vty, vec![]))
                            .collect(),
                    ),
                    [x] => merged.push(x.clone()),
                    _ => {}
                }
            }
            parts = merged;
        }
        parts.pop().unwrap_or_default()
    };

    let add_to_c = |b: &mut B<'_>, blk: BlockId| {
        let olds = read_rows(b, blk, c, &c_rows, pad, vty, cn);
        let vals: Vec<Value> = olds
            .iter()
            .zip(&sums)
            .map(|(o, r)| b.val(blk, "arith.addf", vec![*o, *r], vty, vec![]))
            .collect();
        write_rows(b, blk, c, &c_rows, &vals, cn)
    };
    match (b.zero_init, b.kfirst) {
        (false, _) => add_to_c(b, blk),
        // C starts at zero: the sums are C (one k block), or C's first values.
        (true, None) => write_rows(b, blk, c, &c_rows, &sums, cn),
        (true, Some(first)) => {
            let cty = b.ir.value_type(c);
            b.if_else(
                blk,
                first,
                cty,
                |b, tb| write_rows(b, tb, c, &c_rows, &sums, cn),
                add_to_c,
            )
        }
    }
}

/// Accumulators of a dot-product tile (one vector register per output).
const DOT_OUTPUTS: i64 = 16;

/// Whether A and B are both contiguous along k (an NT product: rows of A and rows of B
/// are read as whole vectors), so tiles take the dot-product form.
fn nt_dot(lay: &Layout, vb: &VectorBody) -> bool {
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
fn dot_blocks(
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
fn dot_tile(
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
    let q = b.ibin(blk, "arith.divui", kext, cw);
    let kw = b.ibin(blk, "arith.muli", q, cw);
    let pad = b.fzero(blk, vb.elem);
    let zero = b.val(blk, "vector.broadcast", vec![pad], wty, vec![]);
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
            next.push(b.val(fb, "vector.fma", vec![*r, *c, acc], wty, vec![]));
        }
    }
    b.yield_(fb, "scf.yield", next);
    let sums: Vec<Value> = (0..n).map(|i| b.ir.result(f, i)).collect();
    let out = sums
        .chunks(nt as usize)
        .map(|row| {
            hsum_network(row, w, zero, &mut |x, y, mask| match mask {
                Some(mask) => {
                    let ty = Type::vector(vec![mask.len() as i64], vb.elem);
                    let m = Attribute::dense_i64_array(mask);
                    b.val(blk, "vector.shuffle", vec![x, y], ty, vec![("mask", m)])
                }
                None => {
                    let ty = b.ir.value_type(x);
                    b.val(blk, "arith.addf", vec![x, y], ty, vec![])
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

/// The value assigned to loop dim `d`: from `pairs`, else `other`.
fn pick(d: u32, pairs: &[(u32, Value)], other: Value) -> Value {
    pairs
        .iter()
        .find(|(x, _)| *x == d)
        .map_or(other, |(_, v)| *v)
}

/// One k step of the register tile: per row, broadcast A's element at its indices and
/// `vector.fma` it with the B row into the row's accumulator.
fn fma_rows(
    b: &mut B<'_>,
    blk: BlockId,
    brow: Value,
    a: Value,
    a_rows: &[Vec<Value>],
    accs: &[Value],
    vty: Type,
) -> Vec<Value> {
    let elem = vty.element_type();
    a_rows
        .iter()
        .zip(accs)
        .map(|(idx, acc)| {
            let mut ops = vec![a];
            ops.extend(idx.iter().copied());
            let x = b.val(blk, "tensor.extract", ops, elem, vec![]);
            let xv = b.val(blk, "vector.broadcast", vec![x], vty, vec![]);
            b.val(blk, "vector.fma", vec![xv, brow, *acc], vty, vec![])
        })
        .collect()
}

/// One `vector.transfer_read` of `vty` along dim `along` of `c` per index list.
fn read_rows(
    b: &mut B<'_>,
    blk: BlockId,
    c: Value,
    rows: &[Vec<Value>],
    pad: Value,
    vty: Type,
    along: usize,
) -> Vec<Value> {
    rows.iter()
        .map(|idx| {
            let rank = idx.len();
            let mut ops = vec![c];
            ops.extend(idx.iter().copied());
            ops.push(pad);
            let props =
                ftuner_dialects::vector::transfer_props(rank, along, [1, rank as i32, 1, 0]);
            b.val(blk, "vector.transfer_read", ops, vty, props)
        })
        .collect()
}

/// `vector.transfer_write` of each of `vals` along dim `along` of `c` at its index list;
/// returns the updated tensor.
fn write_rows(
    b: &mut B<'_>,
    blk: BlockId,
    c: Value,
    rows: &[Vec<Value>],
    vals: &[Value],
    along: usize,
) -> Value {
    let cty = b.ir.value_type(c);
    let mut out = c;
    for (idx, v) in rows.iter().zip(vals) {
        let rank = idx.len();
        let mut ops = vec![*v, out];
        ops.extend(idx.iter().copied());
        let props = ftuner_dialects::vector::transfer_props(rank, along, [1, 1, rank as i32, 0]);
        out = b.val(blk, "vector.transfer_write", ops, cty, props);
    }
    out
}

impl<'a> B<'a> {
    /// A builder with no register-level state.
    pub(crate) fn new(ir: &'a mut Ir, loc: Attribute) -> B<'a> {
        B {
            ir,
            loc,
            vector: None,
            kblock: None,
            packed: None,
            klast: None,
            blocking: Blocking::default(),
            apacked: None,
            zero_init: false,
            kfirst: None,
        }
    }
    pub(crate) fn op(
        &mut self,
        block: BlockId,
        name: &str,
        operands: Vec<Value>,
        results: Vec<Type>,
        props: Vec<(&str, Attribute)>,
        regions: usize,
    ) -> OpId {
        let mut s = OpSpec::new(intern_name(name), self.loc)
            .operands(operands)
            .results(results)
            .regions(regions);
        for (k, v) in props {
            s = s.prop(k, v);
        }
        let o = self.ir.create_op(s);
        self.ir.append_op(block, o);
        if matches!(name, "tensor.extract_slice" | "tensor.insert_slice") {
            // Tiles of the iteration space this lowering sized (after its run-time
            // shape check): in bounds by construction, bufferization checks nothing.
            self.ir.set_attr(
                o,
                ftuner_dialects::tensor::IN_BOUNDS,
                Some(Attribute::unit()),
            );
        }
        o
    }
    pub(crate) fn val(
        &mut self,
        block: BlockId,
        name: &str,
        operands: Vec<Value>,
        ty: Type,
        props: Vec<(&str, Attribute)>,
    ) -> Value {
        let o = self.op(block, name, operands, vec![ty], props, 0);
        self.ir.result(o, 0)
    }
    pub(crate) fn index(&mut self, block: BlockId, v: i64) -> Value {
        self.val(
            block,
            "arith.constant",
            vec![],
            Type::index(),
            vec![("value", Attribute::index(v))],
        )
    }
    /// Mark loop `f` `ftuner.parallel` (when the lowering marks loops): its iterations
    /// write disjoint parts of its result.
    pub(crate) fn mark_parallel(&mut self, f: OpId) {
        if self.blocking.parallel {
            self.ir.set_attr(f, PARALLEL_ATTR, Some(Attribute::unit()));
        }
    }
    /// `scf.for %iv = lb to ub step st iter_args(inits)` appended to `block`: the op, its
    /// body block, the induction variable and the iteration arguments.
    pub(crate) fn for_loop(
        &mut self,
        block: BlockId,
        (lb, ub, step): (Value, Value, Value),
        inits: Vec<Value>,
    ) -> (OpId, BlockId, Value, Vec<Value>) {
        let tys: Vec<Type> = inits.iter().map(|v| self.ir.value_type(*v)).collect();
        let mut ops = vec![lb, ub, step];
        ops.extend(inits);
        let f = self.op(block, "scf.for", ops, tys.clone(), vec![], 1);
        let r = self.ir.regions_of(f)[0];
        let mut btys = vec![Type::index()];
        btys.extend(tys);
        let body = self.ir.append_block(r, &btys);
        let args = self.ir.block_args(body).to_vec();
        (f, body, args[0], args[1..].to_vec())
    }
    /// `scf.if %cond -> (ty)` appended to `block`, each branch built by its closure into
    /// its block, yielding what the closure returns: the run-time choice between two
    /// versions of a nest.
    pub(crate) fn if_else(
        &mut self,
        block: BlockId,
        cond: Value,
        ty: Type,
        then: impl FnOnce(&mut B<'a>, BlockId) -> Value,
        els: impl FnOnce(&mut B<'a>, BlockId) -> Value,
    ) -> Value {
        let iff = self.op(block, "scf.if", vec![cond], vec![ty], vec![], 2);
        let (tr, er) = (self.ir.regions_of(iff)[0], self.ir.regions_of(iff)[1]);
        let tb = self.ir.append_block(tr, &[]);
        let r1 = then(self, tb);
        self.yield_(tb, "scf.yield", vec![r1]);
        let eb = self.ir.append_block(er, &[]);
        let r2 = els(self, eb);
        self.yield_(eb, "scf.yield", vec![r2]);
        self.ir.result(iff, 0)
    }
    /// `arith.cmpi` with MLIR's predicate number (4 sgt, 5 sge, ...).
    pub(crate) fn cmpi(&mut self, block: BlockId, pred: i64, a: Value, b: Value) -> Value {
        self.val(
            block,
            "arith.cmpi",
            vec![a, b],
            Type::i1(),
            vec![("predicate", Attribute::i64(pred))],
        )
    }
    /// A constant `tensor<shape x index>` (a plan table).
    pub(crate) fn index_table(
        &mut self,
        block: BlockId,
        shape: Vec<i64>,
        values: Vec<ftuner_ir::Scalar>,
    ) -> Value {
        let tty = Type::tensor(shape, Type::index());
        self.val(
            block,
            "arith.constant",
            vec![],
            tty,
            vec![("value", Attribute::dense(tty, values))],
        )
    }
    /// A floating-point zero of type `elem`.
    pub(crate) fn fzero(&mut self, block: BlockId, elem: Type) -> Value {
        self.val(
            block,
            "arith.constant",
            vec![],
            elem,
            vec![("value", Attribute::float(0.0, elem))],
        )
    }
    pub(crate) fn ibin(&mut self, block: BlockId, name: &str, a: Value, b: Value) -> Value {
        let ov = Attribute::dialect("arith", "overflow<none>");
        let props = if matches!(name, "arith.addi" | "arith.subi" | "arith.muli") {
            vec![("overflowFlags", ov)]
        } else {
            vec![]
        };
        self.val(block, name, vec![a, b], Type::index(), props)
    }
    pub(crate) fn yield_(&mut self, block: BlockId, name: &str, vals: Vec<Value>) {
        self.op(block, name, vals, vec![], vec![], 0);
    }
}

/// Where the M and N loop dims sit in each operand (position or None).
pub(crate) struct Layout {
    pub(crate) dm: u32,
    pub(crate) dn: u32,
    pub(crate) maps: Vec<ftuner_ir::AffineMap>,
    /// The patch's `indexing_maps` and `iterator_types`, for per-tile `linalg.generic`s.
    maps_attr: Attribute,
    iterators_attr: Attribute,
}

/// Where a tile slice sits in its tensor: what `tensor.insert_slice` needs to put a
/// computed tile back (operands: dynamic offsets then dynamic sizes).
struct SliceSpec {
    operands: Vec<Value>,
    n_offsets: usize,
    static_offsets: Vec<i64>,
    static_sizes: Vec<i64>,
}

impl SliceSpec {
    /// Properties of an `extract_slice` / `insert_slice` at this place (unit strides);
    /// `leading` are the segment sizes of the operands before the offsets.
    fn props(&self, leading: &[i32]) -> Vec<(&'static str, Attribute)> {
        let no = self.n_offsets as i32;
        let ns = self.operands.len() as i32 - no;
        let mut segs = leading.to_vec();
        segs.extend([no, ns, 0]);
        vec![
            (
                "static_offsets",
                Attribute::dense_i64_array(&self.static_offsets),
            ),
            (
                "static_sizes",
                Attribute::dense_i64_array(&self.static_sizes),
            ),
            (
                "static_strides",
                Attribute::dense_i64_array(&vec![1; self.static_offsets.len()]),
            ),
            ("operandSegmentSizes", Attribute::dense_i32_array(&segs)),
        ]
    }
}

/// The patch's three indexing maps.
fn patch_maps(ir: &Ir, op: OpId) -> Option<Vec<ftuner_ir::AffineMap>> {
    let maps: Vec<ftuner_ir::AffineMap> = ir
        .attr(op, "indexing_maps")?
        .as_array()?
        .iter()
        .map(|a| a.as_affine_map().cloned())
        .collect::<Option<_>>()?;
    (maps.len() == 3).then_some(maps)
}

/// Loop dims by role: M (A and C), N (B and C), K (an input, not C).
fn dim_roles(maps: &[ftuner_ir::AffineMap]) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    use crate::contraction::{loop_roles, Role};
    // Patches come from contractions, whose every loop dim has a role.
    let roles = loop_roles(maps).unwrap_or_default();
    let pick = |want: Role| {
        (0..roles.len() as u32)
            .filter(|d| roles[*d as usize] == want)
            .collect::<Vec<u32>>()
    };
    (pick(Role::M), pick(Role::N), pick(Role::K))
}

pub(crate) fn layout(ir: &Ir, op: OpId) -> Option<Layout> {
    let maps = patch_maps(ir, op)?;
    let (ms, ns, _) = dim_roles(&maps);
    if ms.len() != 1 || ns.len() != 1 {
        return None;
    }
    // Every operand indexes by plain dims (no windows).
    if !maps
        .iter()
        .all(|m| m.results.iter().all(|e| matches!(e, AffineExpr::Dim(_))))
    {
        return None;
    }
    Some(Layout {
        dm: ms[0],
        dn: ns[0],
        maps,
        maps_attr: ir.attr(op, "indexing_maps")?,
        iterators_attr: ir.attr(op, "iterator_types")?,
    })
}

/// Extract the (mo, ms) x (no, ns) part of operand `v` read through `map`.
fn slice(
    b: &mut B<'_>,
    blk: BlockId,
    v: Value,
    map: &ftuner_ir::AffineMap,
    lay: &Layout,
    tile: (Value, i64, Value, i64),
) -> (Value, SliceSpec) {
    let ty = b.ir.value_type(v);
    let shape = ty.shape().unwrap_or(&[]).to_vec();
    let mut dyn_off = vec![];
    let mut dyn_size = vec![];
    let mut st_off = vec![];
    let mut st_size = vec![];
    let mut new_shape = vec![];
    for (j, e) in map.results.iter().enumerate() {
        let d = match e {
            AffineExpr::Dim(d) => d,
            // A fixed index (an epilogue operand's unit dim): one element.
            AffineExpr::Const(c) => {
                st_off.push(*c);
                st_size.push(1);
                new_shape.push(1);
                continue;
            }
            _ => unreachable!("checked by layout and the epilogue fusion"),
        };
        if *d == lay.dm || *d == lay.dn {
            let (o, s) = if *d == lay.dm {
                (tile.0, tile.1)
            } else {
                (tile.2, tile.3)
            };
            dyn_off.push(o);
            st_off.push(DYNAMIC);
            st_size.push(s);
            new_shape.push(s);
        } else if let Some((_, k0, ks)) = b.kblock.filter(|kb| kb.0 == *d) {
            dyn_off.push(k0);
            st_off.push(DYNAMIC);
            dyn_size.push(ks);
            st_size.push(DYNAMIC);
            new_shape.push(DYNAMIC);
        } else {
            st_off.push(0);
            if shape[j] == DYNAMIC {
                let jv = b.index(blk, j as i64);
                let dv = b.val(blk, "tensor.dim", vec![v, jv], Type::index(), vec![]);
                dyn_size.push(dv);
                st_size.push(DYNAMIC);
            } else {
                st_size.push(shape[j]);
            }
            new_shape.push(shape[j]);
        }
    }
    let rt = ty.with_shape(new_shape);
    let no = dyn_off.len();
    let spec = SliceSpec {
        operands: dyn_off.into_iter().chain(dyn_size).collect(),
        n_offsets: no,
        static_offsets: st_off,
        static_sizes: st_size,
    };
    let mut ops = vec![v];
    ops.extend(spec.operands.iter().copied());
    let sl = b.val(blk, "tensor.extract_slice", ops, rt, spec.props(&[1]));
    (sl, spec)
}

/// The tile computation at static sizes, inserted into the accumulator `acc`.
fn tile(
    b: &mut B<'_>,
    blk: BlockId,
    patch: OpId,
    lay: &Layout,
    acc: Value,
    t: (Value, i64, Value, i64),
) -> Value {
    let (ins, _) = ins_outs(b.ir, patch);
    let (a, _) = match (b.apacked, b.kblock) {
        // The tile's rows of the packed A block: all of its k columns.
        (Some((ap, m0)), Some((_, _, ks))) => {
            let r = b.ibin(blk, "arith.subi", t.0, m0);
            let elem = b.ir.value_type(ap).element_type();
            let rt = Type::tensor(vec![t.1, DYNAMIC], elem);
            let spec = SliceSpec {
                operands: vec![r, ks],
                n_offsets: 1,
                static_offsets: vec![DYNAMIC, 0],
                static_sizes: vec![t.1, DYNAMIC],
            };
            let sl = b.val(
                blk,
                "tensor.extract_slice",
                vec![ap, r, ks],
                rt,
                spec.props(&[1]),
            );
            (sl, spec)
        }
        _ => slice(b, blk, ins[0], &lay.maps[0], lay, t),
    };
    let (bb, _) = slice(b, blk, ins[1], &lay.maps[1], lay, t);
    let (c, cspec) = slice(b, blk, acc, &lay.maps[2], lay, t);
    let cty = b.ir.value_type(c);
    if let Some(vb) = b.vector.clone() {
        if t.1 * t.3 <= vb.max_elems {
            let mut vb = vb;
            vb.panel = b
                .packed
                .filter(|(_, nr)| *nr == t.3 && vb.batch.is_empty())
                .map(|(p, _)| (p, t.2));
            let r = if nt_dot(lay, &vb) && t.1 * t.3 > DOT_OUTPUTS {
                dot_blocks(b, blk, lay, &vb, (a, bb), c, (t.1, t.3))
            } else {
                vector_body(b, blk, lay, &vb, a, bb, c, t.1, t.3)
            };
            let r = epilogue_tile(b, blk, patch, lay, r, t);
            return insert_back(b, blk, r, &cspec, acc);
        }
    }
    let (maps, its) = (lay.maps_attr, lay.iterators_attr);
    let g = b.op(
        blk,
        "linalg.generic",
        vec![a, bb, c],
        vec![cty],
        vec![
            ("indexing_maps", maps),
            ("iterator_types", its),
            ("operandSegmentSizes", Attribute::dense_i32_array(&[2, 1])),
        ],
        1,
    );
    let src = b.ir.regions_of(patch)[0];
    let dst = b.ir.regions_of(g)[0];
    let mut map = Default::default();
    let mut bmap = Default::default();
    b.ir.clone_region_into(src, dst, &mut map, &mut bmap);
    for blk2 in b.ir.region(dst).blocks.clone() {
        if let Some(term) = b.ir.terminator(blk2) {
            if b.ir.name(term) == "ukernel.yield" {
                let vals = b.ir.operands(term).to_vec();
                let y =
                    b.ir.create_op(OpSpec::new(intern_name("linalg.yield"), b.loc).operands(vals));
                b.ir.insert_before(term, y);
                b.ir.erase_op(term);
            }
        }
    }
    let gr = b.ir.result(g, 0);
    let gr = epilogue_tile(b, blk, patch, lay, gr, t);
    insert_back(b, blk, gr, &cspec, acc)
}

/// The patch's epilogue on a finished C tile `r`: a `linalg.generic` over the tile that
/// reads the matching slices of the epilogue operands; inside the kc loop, only in the
/// last k block (`scf.if`).
fn epilogue_tile(
    b: &mut B<'_>,
    blk: BlockId,
    patch: OpId,
    lay: &Layout,
    r: Value,
    t: (Value, i64, Value, i64),
) -> Value {
    let Some(eb) = epilogue_block(b.ir, patch) else {
        return r;
    };
    let cty = b.ir.value_type(r);
    let (inner, outer) = match b.klast {
        Some(last) => {
            let iff = b.op(blk, "scf.if", vec![last], vec![cty], vec![], 2);
            let (tr, er) = (b.ir.regions_of(iff)[0], b.ir.regions_of(iff)[1]);
            let tb = b.ir.append_block(tr, &[]);
            let e = b.ir.append_block(er, &[]);
            b.yield_(e, "scf.yield", vec![r]);
            (tb, Some(iff))
        }
        None => (blk, None),
    };
    let cmap = &lay.maps[2];
    let rank = cmap.results.len() as u32;
    // Tile loops are C's dims in order: patch dim d is tile dim (position of d in C).
    let tile_map = |m: &ftuner_ir::AffineMap| ftuner_ir::AffineMap {
        num_dims: rank,
        num_symbols: 0,
        results: m
            .results
            .iter()
            .map(|e| match e {
                AffineExpr::Dim(d) => AffineExpr::Dim(res_pos(cmap, *d).unwrap_or(0) as u32),
                other => other.clone(),
            })
            .collect(),
    };
    let extras = epilogue_inputs(b.ir, patch);
    let emaps = epilogue_maps(b.ir, patch);
    let mut ops = vec![];
    let mut maps = vec![];
    for (v, m) in extras.iter().zip(&emaps) {
        let (s, _) = slice(b, inner, *v, m, lay, t);
        ops.push(s);
        maps.push(Attribute::affine_map(tile_map(m)));
    }
    maps.push(Attribute::affine_map(ftuner_ir::AffineMap::identity(rank)));
    let n = ops.len();
    ops.push(r);
    let par = Attribute::dialect("linalg", "iterator_type<parallel>");
    let g = b.op(
        inner,
        "linalg.generic",
        ops,
        vec![cty],
        vec![
            ("indexing_maps", Attribute::array(maps)),
            ("iterator_types", Attribute::array(vec![par; rank as usize])),
            (
                "operandSegmentSizes",
                Attribute::dense_i32_array(&[n as i32, 1]),
            ),
        ],
        1,
    );
    // Body: linalg's argument order (inputs, then the output) from the epilogue's
    // (output element, inputs).
    let eargs = b.ir.block_args(eb).to_vec();
    let mut tys: Vec<Type> = eargs[1..].iter().map(|a| b.ir.value_type(*a)).collect();
    tys.push(b.ir.value_type(eargs[0]));
    let gr = b.ir.regions_of(g)[0];
    let gb = b.ir.append_block(gr, &tys);
    let gargs = b.ir.block_args(gb).to_vec();
    let mut vmap: rustc_hash::FxHashMap<Value, Value> = Default::default();
    vmap.insert(eargs[0], gargs[n]);
    for j in 0..n {
        vmap.insert(eargs[1 + j], gargs[j]);
    }
    let eops = b.ir.block_ops_vec(eb);
    if let Some((y, rest)) = eops.split_last() {
        for o in rest {
            let c = b.ir.clone_op(*o, &mut vmap);
            b.ir.append_op(gb, c);
        }
        let yv = b.ir.operands(*y)[0];
        let yv = *vmap.get(&yv).unwrap_or(&yv);
        b.yield_(gb, "linalg.yield", vec![yv]);
    }
    let res = b.ir.result(g, 0);
    match outer {
        Some(iff) => {
            b.yield_(inner, "scf.yield", vec![res]);
            b.ir.result(iff, 0)
        }
        None => res,
    }
}

/// `tensor.insert_slice %r into %acc` at the place described by `spec`.
fn insert_back(b: &mut B<'_>, blk: BlockId, r: Value, spec: &SliceSpec, acc: Value) -> Value {
    let mut ops = vec![r, acc];
    ops.extend(spec.operands.iter().copied());
    let accty = b.ir.value_type(acc);
    b.val(blk, "tensor.insert_slice", ops, accty, spec.props(&[1, 1]))
}

/// `scf.index_switch %sel` over `cases`, each case built by `f`, default yielding `acc`.
fn switch(
    b: &mut B<'_>,
    blk: BlockId,
    sel: Value,
    cases: &[i64],
    acc: Value,
    f: &mut dyn FnMut(&mut B<'_>, BlockId, i64) -> Value,
) -> Value {
    let ty = b.ir.value_type(acc);
    let sw = b.op(
        blk,
        "scf.index_switch",
        vec![sel],
        vec![ty],
        vec![("cases", Attribute::dense_i64_array(cases))],
        cases.len() + 1,
    );
    let regions = b.ir.regions_of(sw).to_vec();
    let d = b.ir.append_block(regions[0], &[]);
    b.yield_(d, "scf.yield", vec![acc]);
    for (i, c) in cases.iter().enumerate() {
        let cb = b.ir.append_block(regions[i + 1], &[]);
        let r = f(b, cb, *c);
        b.yield_(cb, "scf.yield", vec![r]);
    }
    b.ir.result(sw, 0)
}

/// Loop over the tiles of one dimension: full tiles, then the residue's tiles from the
/// plan table. `body(b, block, offset, size_value, acc) -> acc`.
#[allow(clippy::too_many_arguments)]
fn cover(
    b: &mut B<'_>,
    blk: BlockId,
    total: Value,
    main: i64,
    residues: &[Vec<i64>],
    static_extent: Option<i64>,
    acc: Value,
    body: &mut dyn FnMut(&mut B<'_>, BlockId, Value, Value, Value) -> Value,
) -> Value {
    let c0 = b.index(blk, 0);
    let cm = b.index(blk, main);
    let q = b.ibin(blk, "arith.divui", total, cm);
    let full = b.ibin(blk, "arith.muli", q, cm);
    let rem = b.ibin(blk, "arith.subi", total, full);
    // Full tiles.
    let (f, fb, iv, a) = b.for_loop(blk, (c0, full, cm), vec![acc]);
    b.mark_parallel(f);
    let cmain = b.index(fb, main);
    let r = body(b, fb, iv, cmain, a[0]);
    b.yield_(fb, "scf.yield", vec![r]);
    let acc1 = b.ir.result(f, 0);
    if let Some(st) = static_extent {
        // A static extent has one residue, known now: its tiles are emitted in line.
        let mut acc = acc1;
        let mut off = st - st % main;
        for &t in &residues[(st % main) as usize] {
            let (ov, tv) = (b.index(blk, off), b.index(blk, t));
            acc = body(b, blk, ov, tv, acc);
            off += t;
        }
        return acc;
    }
    // Residue: the plan's tiles for `rem`, from a constant table.
    let len = residues.iter().map(|v| v.len()).max().unwrap_or(0).max(1);
    let mut flat = vec![];
    for r in residues {
        for k in 0..len {
            flat.push(ftuner_ir::Scalar::Int(
                r.get(k).copied().unwrap_or(0) as i128
            ));
        }
    }
    let table = b.index_table(blk, vec![main, len as i64], flat);
    let r = residue_tiles(
        b,
        blk,
        len as i64,
        full,
        vec![acc1],
        &mut |b, lb, k| {
            b.val(
                lb,
                "tensor.extract",
                vec![table, rem, k],
                Type::index(),
                vec![],
            )
        },
        &mut |b, tb, off, t, a| vec![body(b, tb, off, t, a[0])],
    );
    r[0]
}

/// `scf.for k < len` over a residue's plan tiles: `size(b, block, k)` reads the k-th tile
/// size (0 past the last); each tile runs `body(b, block, offset, size, accs) -> accs`,
/// the offset starting at `start` and advancing by the tile. Returns the final `accs`.
#[allow(clippy::type_complexity)]
pub(crate) fn residue_tiles(
    b: &mut B<'_>,
    blk: BlockId,
    len: i64,
    start: Value,
    accs: Vec<Value>,
    size: &mut dyn FnMut(&mut B<'_>, BlockId, Value) -> Value,
    body: &mut dyn FnMut(&mut B<'_>, BlockId, Value, Value, Vec<Value>) -> Vec<Value>,
) -> Vec<Value> {
    let tys: Vec<Type> = accs.iter().map(|a| b.ir.value_type(*a)).collect();
    let n = accs.len();
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    let clen = b.index(blk, len);
    let mut inits = accs;
    inits.push(start);
    let (l, lb, k, args) = b.for_loop(blk, (c0, clen, c1), inits);
    let (a, off) = (args[..n].to_vec(), args[n]);
    let mut rtys = tys;
    rtys.push(Type::index());
    let t = size(b, lb, k);
    let zero = b.index(lb, 0);
    let pos = b.cmpi(lb, 4, t, zero);
    let iff = b.op(lb, "scf.if", vec![pos], rtys, vec![], 2);
    let (tr, er) = (b.ir.regions_of(iff)[0], b.ir.regions_of(iff)[1]);
    let tb = b.ir.append_block(tr, &[]);
    let mut r = body(b, tb, off, t, a.clone());
    let noff = b.ibin(tb, "arith.addi", off, t);
    r.push(noff);
    b.yield_(tb, "scf.yield", r);
    let eb = b.ir.append_block(er, &[]);
    let mut keep = a;
    keep.push(off);
    b.yield_(eb, "scf.yield", keep);
    let rs = b.ir.results(iff).to_vec();
    b.yield_(lb, "scf.yield", rs);
    b.ir.results(l)[..n].to_vec()
}

/// Lower one patch; `Err` explains why it was left alone.
pub(crate) type Plan = (i64, Option<i64>, Vec<Vec<i64>>);

/// A tile: (m offset, m size, n offset, n size).
type Tile = (Value, i64, Value, i64);

/// Builds one tile into the accumulator: `f(b, block, acc, tile) -> acc`.
type TileFn<'f> = dyn FnMut(&mut B<'_>, BlockId, Value, Tile) -> Value + 'f;

/// The M and N plans of a patch: main tile, static extent, tiles per residue.
#[derive(Clone)]
pub(crate) struct Plans {
    pub(crate) m: Plan,
    pub(crate) n: Plan,
}

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
            b.ibin(blk, "arith.addi", x, y)
        }
        AffineExpr::Mul(x, y) => {
            let (x, y) = (eval_expr(b, blk, x, at), eval_expr(b, blk, y, at));
            b.ibin(blk, "arith.muli", x, y)
        }
        _ => unreachable!("checked by conv_layout"),
    }
}

/// Lower a windowed contraction: the plan's tiles over the flattened output positions
/// (M) and the channel dim (N); each row of a tile is delinearized into its output
/// position, the k dims are nested loops, and the register tile is `mt` vectors along N.
fn lower_conv(ir: &mut Ir, op: OpId, cl: &ConvLayout, plans: &Plans) -> Result<(), String> {
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
    let loc = ir.loc(op);
    let scratch = ir.new_block(&[]);
    let mut b = B::new(ir, loc);
    let out = outs[0];
    let cpos = |d: u32| res_pos(&cl.maps[2], d).unwrap_or(0) as i64;
    // Extents of the M dims (from C), of N (from C) and of the k dims (from B).
    let mut mext = vec![];
    for d in &cl.ms {
        let pv = b.index(scratch, cpos(*d));
        mext.push(b.val(scratch, "tensor.dim", vec![out, pv], Type::index(), vec![]));
    }
    let mut msz = b.index(scratch, 1);
    for e in &mext {
        msz = b.ibin(scratch, "arith.muli", msz, *e);
    }
    let pnv = b.index(scratch, cpos(cl.dn));
    let nsz = b.val(scratch, "tensor.dim", vec![out, pnv], Type::index(), vec![]);
    let mut kext = vec![];
    for d in &cl.ks {
        let pv = b.index(scratch, res_pos(&cl.maps[1], *d).unwrap_or(0) as i64);
        kext.push(b.val(
            scratch,
            "tensor.dim",
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
    let result = nest(
        &mut b,
        scratch,
        (msz, nsz),
        plans,
        out,
        &mut |b, blk, acc, t| conv_tile(b, blk, cl, (a, w), acc, t, &mext, &kext),
    );
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
            b.val(blk, "tensor.dim", vec![w, pv], Type::index(), vec![])
        })
        .collect();
    let empty = b.val(
        blk,
        "tensor.empty",
        dyn_sizes,
        wty.with_shape(dshape),
        vec![],
    );
    let src_results = (0..rank)
        .map(|p| AffineExpr::Dim(perm.iter().position(|x| *x == p).unwrap_or(p) as u32))
        .collect();
    let packed = packing::copy_generic(b, blk, w, src_results, empty);
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

#[allow(clippy::too_many_arguments)]
fn conv_tile(
    b: &mut B<'_>,
    blk: BlockId,
    cl: &ConvLayout,
    (a, w): (Value, Value),
    c: Value,
    (moff, mt, noff, nt): (Value, i64, Value, i64),
    mext: &[Value],
    kext: &[Value],
) -> Value {
    let vty = Type::vector(vec![nt], cl.elem);
    let mc = &cl.maps[2];
    let cn = res_pos(mc, cl.dn).unwrap_or(0);
    let c0 = b.index(blk, 0);
    let pad = b.fzero(blk, cl.elem);
    // Each row's output position: delinearize moff + i over the M extents.
    let mut rows: Vec<Vec<(u32, Value)>> = vec![];
    for i in 0..mt {
        let iv = b.index(blk, i);
        let mut m = b.ibin(blk, "arith.addi", moff, iv);
        let mut pos = vec![];
        for (d, e) in cl.ms.iter().zip(mext).rev() {
            let r = b.val(blk, "arith.remui", vec![m, *e], Type::index(), vec![]);
            m = b.val(blk, "arith.divui", vec![m, *e], Type::index(), vec![]);
            pos.push((*d, r));
        }
        rows.push(pos);
    }
    let dn = cl.dn;
    let find =
        |fixed: &[(u32, Value)], d: u32| fixed.iter().find(|(x, _)| *x == d).map(|(_, v)| *v);
    let c_rows: Vec<Vec<Value>> = rows
        .iter()
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
        .collect();
    let accs = read_rows(b, blk, c, &c_rows, pad, vty, cn);
    // Nested k loops carrying the accumulators.
    let accs = conv_k_loops(
        b,
        blk,
        cl,
        (a, w),
        &rows,
        noff,
        vty,
        kext,
        accs,
        &mut vec![],
    );
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
    b.yield_(fb, "scf.yield", next);
    (0..n).map(|i| b.ir.result(f, i)).collect()
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
            b.val(blk, "tensor.dim", vec![src, jv], Type::index(), vec![])
        })
        .collect();
    let empty = b.val(
        blk,
        "tensor.empty",
        dyn_sizes,
        sty.with_shape(dshape),
        vec![],
    );
    let src_results = perm.iter().map(|d| AffineExpr::Dim(*d as u32)).collect();
    packing::copy_generic(b, blk, src, src_results, empty)
}

/// A contraction whose B is laid out [..., n, k] (k innermost: NT, as attention's
/// Q·Kᵀ) reads each register-tile row of B as nr strided elements, once per row strip.
/// When a full strip of A (mr rows) will pass over B and B has a full block of w rows
/// (decided at run time), B is transposed once into [..., k, n] by in-register w x w
/// blocks (`transpose_last2`) and the patch reads that, as an NN contraction; otherwise
/// B is read in place (measured on 192 x T x 64 attention scores: the transposition
/// costs more than it saves below T = 16). Returns the two patches (transposed, in
/// place), or `None` when B is not laid out that way.
fn transpose_strided_b(
    ir: &mut Ir,
    op: OpId,
    lay: &Layout,
    mr: i64,
    elem: Type,
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
    let loc = ir.loc(op);
    let scratch = ir.new_block(&[]);
    let mut b = B::new(ir, loc);
    let rty = b.ir.value_type(b.ir.result(op, 0));
    let cpos = res_pos(&lay.maps[2], lay.dm).unwrap_or(0);
    let pv = b.index(scratch, cpos as i64);
    let msz = b.val(
        scratch,
        "tensor.dim",
        vec![outs[0], pv],
        Type::index(),
        vec![],
    );
    let npos = res_pos(bmap, lay.dn).unwrap_or(0);
    let pv = b.index(scratch, npos as i64);
    let nsz = b.val(scratch, "tensor.dim", vec![bv, pv], Type::index(), vec![]);
    let mut tmap = bmap.clone();
    tmap.results.swap(nres - 2, nres - 1);
    let mut maps: Vec<Attribute> = lay
        .maps
        .iter()
        .cloned()
        .map(Attribute::affine_map)
        .collect();
    maps[1] = Attribute::affine_map(tmap);
    let transposed = |b: &mut B<'_>, blk: BlockId| {
        let bt = transpose_last2(b, blk, bv);
        let p = b.ir.clone_op(op, &mut Default::default());
        b.ir.append_op(blk, p);
        b.ir.set_operand(p, 1, bt);
        b.ir.set_prop(p, "indexing_maps", Some(Attribute::array(maps.clone())));
        p
    };
    let (cm, cw) = (b.index(scratch, mr), b.index(scratch, w));
    let mut strip = b.cmpi(scratch, 5, msz, cm);
    // With A contiguous along k too, the tiles of B read in place take the dot-product
    // form: each output pays a reduction (a few shuffles), while the transposition pays
    // K copies per column of B, shared by the M rows. They break even near M = K
    // (measured on issue 10's W2, K = 64: dot products ahead up to T = 62, the
    // transposition from T = 128, level between): transposed only when M >= K as well.
    let amap = &lay.maps[0];
    if res_pos(amap, dk) == Some(amap.results.len() - 1) {
        let kpos = b.index(scratch, (amap.results.len() - 1) as i64);
        let kext = b.val(
            scratch,
            "tensor.dim",
            vec![ins[0], kpos],
            Type::index(),
            vec![],
        );
        let long = b.cmpi(scratch, 5, msz, kext);
        strip = b.val(scratch, "arith.andi", vec![strip, long], Type::i1(), vec![]);
    }
    let block = b.cmpi(scratch, 5, nsz, cw);
    let many = b.val(
        scratch,
        "arith.andi",
        vec![strip, block],
        Type::i1(),
        vec![],
    );
    let (mut p1, mut p2) = (op, op);
    let result = b.if_else(
        scratch,
        many,
        rty,
        |b, tb| {
            p1 = transposed(b, tb);
            b.ir.result(p1, 0)
        },
        |b, eb| {
            p2 = b.ir.clone_op(op, &mut Default::default());
            b.ir.append_op(eb, p2);
            b.ir.result(p2, 0)
        },
    );
    for o in ir.block_ops_vec(scratch) {
        ir.unlink(o);
        ir.insert_before(op, o);
    }
    ir.erase_block(scratch);
    ir.replace_op(op, &[result]);
    Some((p1, p2))
}

/// A patch whose init is a `linalg.fill` of zero, every tile of which gets a register
/// body (no batch dims, the largest tile within the vector-body limit), does not need
/// the fill: its register tiles store their sums in the first k block (and an empty
/// reduction still runs one block, writing zeros). The patch then takes the fill's
/// destination as its init, so the fill dies when nothing else reads it. Returns whether
/// the patch was so changed.
fn zero_init_of(ir: &mut Ir, op: OpId, plans: &Plans, vb: &VectorBody) -> bool {
    let (_, outs) = ins_outs(ir, op);
    let Some(&out) = outs.first() else {
        return false;
    };
    let Some(fill) = ir.defining_op(out).filter(|f| ir.name(*f) == "linalg.fill") else {
        return false;
    };
    let (fins, fouts) = ins_outs(ir, fill);
    let zero = fins
        .first()
        .and_then(|v| ir.defining_op(*v))
        .filter(|c| ir.name(*c) == "arith.constant")
        .and_then(|c| ir.attr(c, "value"))
        .is_some_and(|a| matches!(a.kind(), ftuner_ir::AttrKind::Float { bits: 0, .. }));
    let biggest = plans
        .m
        .0
        .max(plans.m.2.iter().flatten().copied().max().unwrap_or(0))
        * plans
            .n
            .0
            .max(plans.n.2.iter().flatten().copied().max().unwrap_or(0));
    if !zero || !vb.batch.is_empty() || biggest > vb.max_elems || fouts.len() != 1 {
        return false;
    }
    let Some(pos) = ir.operands(op).iter().position(|v| *v == out) else {
        return false;
    };
    ir.set_operand(op, pos, fouts[0]);
    true
}

/// Whether `v` is a ranked tensor of rank `rank`.
fn is_ranked_tensor(ir: &Ir, v: Value, rank: usize) -> bool {
    let t = ir.value_type(v);
    t.is_tensor() && t.rank() == Some(rank)
}

/// A[m0 .. m0 + ms, k0 .. k0 + ks] copied into a contiguous ms x ks tensor: rows of
/// 16-lane vector copies along k, the k remainder element by element.
fn pack_a_block(
    b: &mut B<'_>,
    blk: BlockId,
    a: Value,
    (m0, ms): (Value, Value),
    (k0, ks): (Value, Value),
    elem: Type,
) -> Value {
    let w = 16;
    let ty = Type::tensor(vec![DYNAMIC, DYNAMIC], elem);
    let empty = b.val(blk, "tensor.empty", vec![ms, ks], ty, vec![]);
    let (c0, c1, cw) = (b.index(blk, 0), b.index(blk, 1), b.index(blk, w));
    let pad = b.fzero(blk, elem);
    let q = b.ibin(blk, "arith.divui", ks, cw);
    let kw = b.ibin(blk, "arith.muli", q, cw);
    let vty = Type::vector(vec![w], elem);
    let (fr, br, r, ar) = b.for_loop(blk, (c0, ms, c1), vec![empty]);
    b.mark_parallel(fr);
    let row = b.ibin(br, "arith.addi", m0, r);
    let (fv, bv, kk, av) = b.for_loop(br, (c0, kw, cw), vec![ar[0]]);
    let ka = b.ibin(bv, "arith.addi", k0, kk);
    let v = read_rows(b, bv, a, &[vec![row, ka]], pad, vty, 1);
    let out = write_rows(b, bv, av[0], &[vec![r, kk]], &v, 1);
    b.yield_(bv, "scf.yield", vec![out]);
    let t = b.ir.result(fv, 0);
    let (fs, bs, kk, as_) = b.for_loop(br, (kw, ks, c1), vec![t]);
    let ka = b.ibin(bs, "arith.addi", k0, kk);
    let x = b.val(bs, "tensor.extract", vec![a, row, ka], elem, vec![]);
    let out = b.val(bs, "tensor.insert", vec![x, as_[0], r, kk], ty, vec![]);
    b.yield_(bs, "scf.yield", vec![out]);
    let t = b.ir.result(fs, 0);
    b.yield_(br, "scf.yield", vec![t]);
    b.ir.result(fr, 0)
}

/// The tile loops of a patch: N tiles outside, M strips inside (BLIS's jr/ir, so one
/// kc x nr panel of B stays in L1 while the row strips of A pass over it), each tile
/// dispatched on its (m, n) size to `f(b, block, acc, (m_off, m_size, n_off, n_size))`.
fn nest(
    b: &mut B<'_>,
    blk: BlockId,
    (msz, nsz): (Value, Value),
    plans: &Plans,
    acc: Value,
    f: &mut TileFn<'_>,
) -> Value {
    nest_from(b, blk, (msz, nsz), plans, acc, None, f)
}

/// [`nest`] over the rows `m0 .. m0 + msz` (an mc block) when `m0` is given.
fn nest_from(
    b: &mut B<'_>,
    blk: BlockId,
    (msz, nsz): (Value, Value),
    plans: &Plans,
    acc: Value,
    m0: Option<Value>,
    f: &mut TileFn<'_>,
) -> Value {
    let (mmain, mst, mres) = &plans.m;
    let (nmain, nst, nres) = &plans.n;
    let sizes = |res: &[Vec<i64>], main: i64| {
        let mut v: Vec<i64> = res.iter().flatten().copied().chain([main]).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (msizes, nsizes) = (sizes(mres, *mmain), sizes(nres, *nmain));
    cover(
        b,
        blk,
        nsz,
        *nmain,
        nres,
        *nst,
        acc,
        &mut |b, rb, noff, nval, acc| {
            cover(
                b,
                rb,
                msz,
                *mmain,
                mres,
                *mst,
                acc,
                &mut |b, cb, moff, mval, acc2| {
                    let moff = match m0 {
                        Some(m0) => b.ibin(cb, "arith.addi", m0, moff),
                        None => moff,
                    };
                    switch(b, cb, mval, &msizes, acc2, &mut |b, mb, mi| {
                        switch(b, mb, nval, &nsizes, acc2, &mut |b, nb, nj| {
                            f(b, nb, acc2, (moff, mi, noff, nj))
                        })
                    })
                },
            )
        },
    )
}

/// A patch with a batch dim (indexed by all three operands) becomes an `scf.for` over that
/// dim around the same patch on the batch's rank-reduced slices (`tensor.extract_slice`,
/// result put back with `tensor.insert_slice`); returns the inner patch, to be lowered.
fn split_batch(ir: &mut Ir, op: OpId, blocking: Blocking) -> Result<Option<OpId>, String> {
    let Some(lay) = layout(ir, op) else {
        return Ok(None);
    };
    let nd = lay.maps[0].num_dims;
    let Some(bd) = (0..nd).find(|d| lay.maps.iter().all(|m| res_pos(m, *d).is_some())) else {
        return Ok(None);
    };
    let (ins, outs) = ins_outs(ir, op);
    if ins.len() != 2 || outs.len() != 1 {
        return Ok(None);
    }
    if epilogue_block(ir, op).is_some() {
        return Err("epilogues of batched contractions are not lowered".into());
    }
    let loc = ir.loc(op);
    let scratch = ir.new_block(&[]);
    let mut b = B::new(ir, loc);
    b.blocking = blocking;
    let out = outs[0];
    let cpos = res_pos(&lay.maps[2], bd).unwrap_or(0);
    let pv = b.index(scratch, cpos as i64);
    let ext = b.val(scratch, "tensor.dim", vec![out, pv], Type::index(), vec![]);
    let c0 = b.index(scratch, 0);
    let c1 = b.index(scratch, 1);
    let (f, fb, iv, acc) = b.for_loop(scratch, (c0, ext, c1), vec![out]);
    b.mark_parallel(f);
    let acc = acc[0];
    // The batch's slice of each operand, the batch dim dropped.
    let mut slices = vec![];
    let mut c_spec = None;
    for (i, v) in [ins[0], ins[1], acc].into_iter().enumerate() {
        let ty = b.ir.value_type(v);
        let shape = ty.shape().unwrap_or(&[]).to_vec();
        let p = res_pos(&lay.maps[i], bd).unwrap_or(0);
        let mut dyn_size = vec![];
        let mut st_off = vec![];
        let mut st_size = vec![];
        let mut new_shape = vec![];
        for (j, d) in shape.iter().enumerate() {
            if j == p {
                st_off.push(DYNAMIC);
                st_size.push(1);
                continue;
            }
            st_off.push(0);
            if *d == DYNAMIC {
                let jv = b.index(fb, j as i64);
                dyn_size.push(b.val(fb, "tensor.dim", vec![v, jv], Type::index(), vec![]));
            }
            st_size.push(*d);
            new_shape.push(*d);
        }
        let spec = SliceSpec {
            operands: std::iter::once(iv).chain(dyn_size).collect(),
            n_offsets: 1,
            static_offsets: st_off,
            static_sizes: st_size,
        };
        let mut ops = vec![v];
        ops.extend(spec.operands.iter().copied());
        let rt = ty.with_shape(new_shape);
        slices.push(b.val(fb, "tensor.extract_slice", ops, rt, spec.props(&[1])));
        if i == 2 {
            c_spec = Some(spec);
        }
    }
    // The same patch without the batch dim.
    let drop_dim = |m: &ftuner_ir::AffineMap| ftuner_ir::AffineMap {
        num_dims: m.num_dims - 1,
        num_symbols: m.num_symbols,
        results: m
            .results
            .iter()
            .filter(|e| **e != AffineExpr::Dim(bd))
            .map(|e| match e {
                AffineExpr::Dim(d) if *d > bd => AffineExpr::Dim(d - 1),
                other => other.clone(),
            })
            .collect(),
    };
    let maps: Vec<Attribute> = lay
        .maps
        .iter()
        .map(|m| Attribute::affine_map(drop_dim(m)))
        .collect();
    let its: Vec<Attribute> = lay
        .iterators_attr
        .as_array()
        .unwrap_or(&[])
        .iter()
        .enumerate()
        .filter(|(i, _)| *i as u32 != bd)
        .map(|(_, a)| *a)
        .collect();
    let data = b.ir.op(op).clone();
    let mut props: Vec<(String, Attribute)> = data
        .props
        .as_dict()
        .unwrap_or(&[])
        .iter()
        .filter(|(k, _)| k != "indexing_maps" && k != "iterator_types")
        .cloned()
        .collect();
    props.push(("indexing_maps".into(), Attribute::array(maps)));
    props.push(("iterator_types".into(), Attribute::array(its)));
    let attrs: Vec<(String, Attribute)> = data.attrs.as_dict().unwrap_or(&[]).to_vec();
    let c2 = b.ir.value_type(slices[2]);
    let inner = b.ir.create_op(OpSpec {
        name: intern_name("ukernel.patch"),
        operands: slices.clone(),
        result_types: vec![c2],
        props,
        attrs,
        num_regions: 1,
        successors: vec![],
        loc,
    });
    let (src_r, dst_r) = (b.ir.regions_of(op)[0], b.ir.regions_of(inner)[0]);
    let (mut map, mut bmap) = (Default::default(), Default::default());
    b.ir.clone_region_into(src_r, dst_r, &mut map, &mut bmap);
    b.ir.append_op(fb, inner);
    let r = b.ir.result(inner, 0);
    let spec = c_spec.ok_or("no output slice")?;
    let back = insert_back(&mut b, fb, r, &spec, acc);
    b.yield_(fb, "scf.yield", vec![back]);
    let result = b.ir.result(f, 0);
    for o in ir.block_ops_vec(scratch) {
        ir.unlink(o);
        ir.insert_before(op, o);
    }
    ir.replace_op(op, &[result]);
    Ok(Some(inner))
}

/// `vector_bodies`: tiles of at most this many elements get register-level vector bodies
/// (when the patch's body allows); larger ones, or `None`, keep a `linalg.generic`.
/// `k_blocking`: split the reduction into blocks of the patch's `kc`. `blocking`: the
/// mc loop, A packing and parallel loop marking.
pub fn lower(
    ir: &mut Ir,
    op: OpId,
    vector_bodies: Option<i64>,
    k_blocking: bool,
    pack_b: Option<bool>,
    blocking: Blocking,
) -> Result<(), String> {
    let plans = read_plans(ir, op)?;
    let (_, outs) = ins_outs(ir, op);
    if outs.len() != 1 || ir.results(op).len() != 1 {
        return Err("expects one tensor output".into());
    }
    shape_asserts(ir, op)?;
    lower_checked(ir, op, plans, vector_bodies, k_blocking, pack_b, blocking)
}

/// The patch's M and N plans, checked: one entry per residue, each covering it exactly.
pub(crate) fn read_plans(ir: &Ir, op: OpId) -> Result<Plans, String> {
    let m = ir
        .attr(op, "m_plan")
        .and_then(read_plan)
        .ok_or("malformed m_plan")?;
    let n = ir
        .attr(op, "n_plan")
        .and_then(read_plan)
        .ok_or("malformed n_plan")?;
    for (main, st, res) in [&m, &n] {
        let (main, st) = (*main, *st);
        if main <= 0 || res.len() != main as usize {
            return Err(format!(
                "plan table has {} entries for main tile {main}",
                res.len()
            ));
        }
        for (r, v) in res.iter().enumerate() {
            // A static extent only ever meets one residue.
            if st.is_some_and(|s| s % main != r as i64) {
                continue;
            }
            if v.iter().sum::<i64>() < r as i64 {
                return Err(format!("the plan does not cover residue {r} of {main}"));
            }
        }
    }
    Ok(Plans { m, n })
}

/// Rows or columns the plan's tiles cover past a residue, per residue (all 0 for an exact
/// plan; only the static extent's residue counts when there is one).
pub(crate) fn plan_padding(plan: &Plan) -> Vec<i64> {
    let (main, st, res) = plan;
    res.iter()
        .enumerate()
        .map(|(r, v)| {
            if st.is_some_and(|s| s % main != r as i64) {
                0
            } else {
                v.iter().sum::<i64>() - r as i64
            }
        })
        .collect()
}

/// A padded plan's tiles reach past the extent: the operands grow by the padding of the
/// run-time residue (zeros), the loops run over the padded tensors, and the result is the
/// extent's part. `None` when the plan is exact.
fn padding_amount(b: &mut B<'_>, blk: BlockId, plan: &Plan, total: Value) -> Option<Value> {
    let pads = plan_padding(plan);
    if pads.iter().all(|p| *p == 0) {
        return None;
    }
    let (main, st, _) = plan;
    if let Some(s) = st {
        return Some(b.index(blk, pads[(s % main) as usize]));
    }
    let flat = pads
        .iter()
        .map(|p| ftuner_ir::Scalar::Int(*p as i128))
        .collect();
    let table = b.index_table(blk, vec![*main], flat);
    let cm = b.index(blk, *main);
    let rem = b.ibin(blk, "arith.remui", total, cm);
    Some(b.val(
        blk,
        "tensor.extract",
        vec![table, rem],
        Type::index(),
        vec![],
    ))
}

/// `v` with `high[j]` zeros appended along dim j (where given), as `tensor.pad`.
fn pad_high(b: &mut B<'_>, blk: BlockId, v: Value, high: &[Option<Value>]) -> Value {
    let ty = b.ir.value_type(v);
    let shape = ty.shape().unwrap_or(&[]).to_vec();
    let elem = ty.element_type();
    let rank = shape.len();
    let mut dyn_high = vec![];
    let mut st_high = vec![];
    let mut new_shape = vec![];
    for (j, d) in shape.iter().enumerate() {
        match high.get(j).copied().flatten() {
            Some(h) => {
                dyn_high.push(h);
                st_high.push(DYNAMIC);
                new_shape.push(DYNAMIC);
            }
            None => {
                st_high.push(0);
                new_shape.push(*d);
            }
        }
    }
    if dyn_high.is_empty() {
        return v;
    }
    let zero = b.fzero(blk, elem);
    let n = dyn_high.len() as i32;
    let mut ops = vec![v];
    ops.extend(dyn_high);
    let p = b.op(
        blk,
        "tensor.pad",
        ops,
        vec![ty.with_shape(new_shape)],
        vec![
            ("static_low", Attribute::dense_i64_array(&vec![0; rank])),
            ("static_high", Attribute::dense_i64_array(&st_high)),
            (
                "operandSegmentSizes",
                Attribute::dense_i32_array(&[1, 0, n]),
            ),
        ],
        1,
    );
    let r = b.ir.regions_of(p)[0];
    let pb = b.ir.append_block(r, &vec![Type::index(); rank]);
    b.yield_(pb, "tensor.yield", vec![zero]);
    b.ir.result(p, 0)
}

/// [`lower`] after the run-time shape checks.
fn lower_checked(
    ir: &mut Ir,
    op: OpId,
    plans: Plans,
    vector_bodies: Option<i64>,
    k_blocking: bool,
    pack_b: Option<bool>,
    blocking: Blocking,
) -> Result<(), String> {
    // Batches outermost: each batch is a GEMM of its own, whose B panels stay in cache
    // while the row strips of A pass (a batch loop inside the tile loops walks every
    // batch's panels per tile).
    if vector_bodies.is_some() {
        if let Some(inner) = split_batch(ir, op, blocking)? {
            // The inner patch carries the same plans.
            return lower_checked(
                ir,
                inner,
                plans,
                vector_bodies,
                k_blocking,
                pack_b,
                blocking,
            );
        }
    }
    if let (Some(max), None) = (vector_bodies, pack_b) {
        if let Some(lay) = layout(ir, op) {
            if let Some(vb) = vector_plan(ir, op, &lay, max) {
                if let Some((tp, ip)) = transpose_strided_b(ir, op, &lay, plans.m.0, vb.elem) {
                    let again = |ir: &mut Ir, p: OpId, pack_b| {
                        lower_checked(
                            ir,
                            p,
                            plans.clone(),
                            vector_bodies,
                            k_blocking,
                            pack_b,
                            blocking,
                        )
                    };
                    again(ir, tp, None)?;
                    again(ir, ip, Some(false))?;
                    return Ok(());
                }
            }
        }
    }
    let lay = layout(ir, op);
    let Some(lay) = lay else {
        let conv = conv_layout(ir, op).ok_or(
            "only patches with one M and one N loop dimension and plain indexing, or windowed contractions with one N dimension, are lowered",
        )?;
        if vector_bodies.is_none() {
            return Err("windowed contractions are lowered with vector bodies only".into());
        }
        return lower_conv(ir, op, &conv, &plans);
    };
    let loc = ir.loc(op);
    let blk = ir.op(op).parent.ok_or("patch not in a block")?;
    // Build in a scratch block, then move the ops before the patch.
    let scratch = ir.new_block(&[]);
    let vector = vector_bodies.and_then(|max| vector_plan(ir, op, &lay, max));
    let zero_init = match &vector {
        Some(vb) => zero_init_of(ir, op, &plans, vb),
        None => false,
    };
    // The init may have changed (a zero fill's destination instead of the fill).
    let (_, outs) = ins_outs(ir, op);
    let mut b = B::new(ir, loc);
    b.vector = vector;
    b.blocking = blocking;
    b.zero_init = zero_init;
    let out = outs[0];
    let omap = lay.maps[2].clone();
    let pos = |d: u32| {
        omap.results
            .iter()
            .position(|e| *e == AffineExpr::Dim(d))
            .unwrap_or(0) as i64
    };
    let (pm, pn) = (pos(lay.dm), pos(lay.dn));
    let pmv = b.index(scratch, pm);
    let msz = b.val(scratch, "tensor.dim", vec![out, pmv], Type::index(), vec![]);
    let pnv = b.index(scratch, pn);
    let nsz = b.val(scratch, "tensor.dim", vec![out, pnv], Type::index(), vec![]);
    // A padded plan: every operand indexed by M or N grows by the padding of the run-time
    // residue, so the last tiles stay in bounds; the result is cut back to M x N below.
    let padm = padding_amount(&mut b, scratch, &plans.m, msz);
    let padn = padding_amount(&mut b, scratch, &plans.n, nsz);
    let mut out = out;
    let mut cut = None;
    if padm.is_some() || padn.is_some() {
        let (pins, pouts) = ins_outs(b.ir, op);
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
            let pv = pad_high(&mut b, scratch, *v, &high);
            if pv != *v {
                b.ir.set_operand(op, first + k, pv);
            }
        }
        // The sizes of the unpadded result, to cut the padded one back.
        let rank = omap.results.len();
        let sizes: Vec<Value> = (0..rank)
            .map(|j| {
                let jv = b.index(scratch, j as i64);
                b.val(scratch, "tensor.dim", vec![out, jv], Type::index(), vec![])
            })
            .collect();
        cut = Some((sizes, b.ir.value_type(out)));
        out = ins_outs(b.ir, op).1[0];
    }
    let (ins, _) = ins_outs(b.ir, op);
    let kdim = reduction_dim(&lay);
    // Packing B into panels pays when a register tile's row of B is not contiguous
    // (B's N dim is not its innermost: each row would be nr scalar loads, for every row
    // strip); a contiguous B is read in place (measured: packing it does not pay).
    // `None` lets that rule decide; `Some` forces.
    let strided_n =
        res_pos(&lay.maps[1], lay.dn).is_some_and(|p| p + 1 != lay.maps[1].results.len());
    let packable = padn.is_none()
        && kdim.is_some()
        && b.vector
            .as_ref()
            .is_some_and(|vb| vb.batch.is_empty() && plans.m.0 * plans.n.0 <= vb.max_elems);
    let pack = |b: &mut B<'_>, blk: BlockId| {
        if let (Some(vb), Some(dk)) = (b.vector.clone(), kdim) {
            let p = packing::pack_panels(b, blk, &lay, ins[1], dk, nsz, plans.n.0, vb.elem);
            b.packed = Some((p, plans.n.0));
        }
    };
    let oty = b.ir.value_type(out);
    // Packing forced, or a prepared B (a weight): packed whatever M, once, in the prepare
    // function (outline-weight-preparation runs again after this pass).
    // (Only for a contraction directly in a function's body: inside a loop the packing
    // could not be hoisted and would run at every iteration.)
    let top_level =
        b.ir.op(op)
            .parent
            .and_then(|blk| b.ir.block_parent_op(blk))
            .is_some_and(|f| b.ir.name(f) == "func.func");
    let always = packable && pack_b.unwrap_or_else(|| top_level && packing::prepared(b.ir, ins[1]));
    let result = match pack_b {
        _ if always => {
            pack(&mut b, scratch);
            loops(
                &mut b,
                scratch,
                op,
                &lay,
                &plans,
                (msz, nsz),
                out,
                k_blocking,
            )
        }
        // The rule: a strided B is packed when at least two row strips will read each
        // panel (M >= 2 main tiles), decided at run time; a single strip reads B in place.
        None if packable && strided_n => {
            let two = b.index(scratch, 2 * plans.m.0);
            let many = b.cmpi(scratch, 5, msz, two);
            b.if_else(
                scratch,
                many,
                oty,
                |b, tb| {
                    pack(b, tb);
                    let r = loops(b, tb, op, &lay, &plans, (msz, nsz), out, k_blocking);
                    b.packed = None;
                    r
                },
                |b, eb| loops(b, eb, op, &lay, &plans, (msz, nsz), out, k_blocking),
            )
        }
        _ => loops(
            &mut b,
            scratch,
            op,
            &lay,
            &plans,
            (msz, nsz),
            out,
            k_blocking,
        ),
    };
    // A padded plan's result, cut back to the extent.
    let result = match cut {
        Some((sizes, ty)) => {
            let rank = sizes.len();
            let n = rank as i32;
            let mut ops = vec![result];
            ops.extend(sizes);
            b.val(
                scratch,
                "tensor.extract_slice",
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
        None => result,
    };
    let ops = ir.block_ops_vec(scratch);
    for o in ops {
        ir.unlink(o);
        ir.insert_before(op, o);
    }
    let _ = blk;
    ir.replace_op(op, &[result]);
    Ok(())
}

/// The kc loop (when the reduction is longer than the patch's kc) around the tile nest,
/// built in `blk`; returns the patch's result. The reduction is split into blocks of kc
/// (from the cache model) so that a kc x N panel of B stays in L2 while every row strip
/// of A passes over it; each element still sums its k in order, so results do not change.
#[allow(clippy::too_many_arguments)]
fn loops(
    b: &mut B<'_>,
    blk: BlockId,
    op: OpId,
    lay: &Layout,
    plans: &Plans,
    (msz, nsz): (Value, Value),
    out: Value,
    k_blocking: bool,
) -> Value {
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
            let kpv = b.index(blk, kp as i64);
            let kext = b.val(blk, "tensor.dim", vec![ins[0], kpv], Type::index(), vec![]);
            let c0 = b.index(blk, 0);
            let ckc = b.index(blk, kc);
            // With an epilogue, an empty reduction still runs one (empty) block, whose
            // tiles apply the epilogue; with a zero init, whose tiles write the zeros.
            let ub = if epilogue_block(b.ir, op).is_some() || b.zero_init {
                let one = b.index(blk, 1);
                b.val(blk, "arith.maxsi", vec![kext, one], Type::index(), vec![])
            } else {
                kext
            };
            let (f, fb, k0, acc) = b.for_loop(blk, (c0, ub, ckc), vec![out]);
            let acc = acc[0];
            let left = b.ibin(fb, "arith.subi", kext, k0);
            let ckc2 = b.index(fb, kc);
            let ks = b.val(fb, "arith.minsi", vec![ckc2, left], Type::index(), vec![]);
            b.kblock = Some((dk, k0, ks));
            if b.zero_init {
                let c0 = b.index(fb, 0);
                b.kfirst = Some(b.cmpi(fb, 0, k0, c0));
            }
            if epilogue_block(b.ir, op).is_some() {
                let end = b.ibin(fb, "arith.addi", k0, ks);
                b.klast = Some(b.cmpi(fb, 5, end, kext));
            }
            kloop = Some((f, fb));
            body_blk = fb;
            acc0 = acc;
        }
    }
    // Loop order: N tiles outside, M strips inside (BLIS's jr/ir): one kc x nr panel of B
    // stays in L1 while every row strip of A passes over it. Around them, the mc loop
    // (BLIS's ic): blocks of mc rows (from the cache model: an mc x kc block of A fits
    // L2), so a long M does not stream A from L3 once per N tile. A static M is covered
    // by its own specialized plan and is not split.
    let mc = ir_attr_i64(b.ir, op, "mc").unwrap_or(0);
    let pack_a = b.blocking.pack_a;
    let (mmain, mstatic, _) = &plans.m;
    let result = if mc >= *mmain && mc % mmain == 0 && mstatic.is_none() && b.blocking.mc {
        let c0 = b.index(body_blk, 0);
        let cmc = b.index(body_blk, mc);
        let (f, fb, m0, acc) = b.for_loop(body_blk, (c0, msz, cmc), vec![acc0]);
        let acc = acc[0];
        let left = b.ibin(fb, "arith.subi", msz, m0);
        let cmc2 = b.index(fb, mc);
        let chunk = b.val(fb, "arith.minsi", vec![cmc2, left], Type::index(), vec![]);
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
                let both = b.val(fb, "arith.andi", vec![big, wide], Type::i1(), vec![]);
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
        b.yield_(fb, "scf.yield", vec![r]);
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
            b.yield_(fb, "scf.yield", vec![result]);
            b.ir.result(f, 0)
        }
        None => result,
    };
    b.kblock = None;
    b.klast = None;
    b.kfirst = None;
    result
}

pub struct LowerUkernelsPass {
    opts: PassOptions,
    lowered: u64,
    skipped: u64,
    kernels_launched: u64,
}

/// The GPU uKernel family of a patch on buffers (its `target` and element type).
fn gpu_family(ir: &Ir, p: OpId) -> Result<crate::gpu::GpuFamily, String> {
    let target = ir
        .attr(p, "target")
        .and_then(|a| a.as_str())
        .ok_or("the patch has no target")?;
    let model = ftuner_hw::HardwareModel::load(target)?;
    let (_, outs) = ins_outs(ir, p);
    let elem = outs
        .first()
        .map(|v| ir.value_type(*v).element_type())
        .ok_or("the patch has no output")?;
    let dtype =
        crate::DType::from_type(elem).ok_or(format!("element type {elem} has no uKernels"))?;
    match crate::Family::build(&model, dtype)? {
        crate::Family::Gpu(g) => Ok(g),
        crate::Family::Cpu(_) => Err(format!(
            "'{target}' is a CPU target: CPU patches are lowered on tensors, before bufferize"
        )),
    }
}

impl Default for LowerUkernelsPass {
    fn default() -> Self {
        LowerUkernelsPass {
            opts: PassOptions::new(vec![
                OptionSpec {
                    name: "vector-bodies",
                    kind: OptionKind::Int,
                    default: "512",
                    description: "Tiles of at most this many elements get register-level vector bodies (vector.fma over vector<n>); 0 keeps linalg.generic tiles",
                },
                OptionSpec {
                    name: "pack-b",
                    kind: OptionKind::String,
                    default: "auto",
                    description: "Make register tiles read contiguous rows of B: auto (an [n][k] B transposed to [k][n] when M >= mr and N >= 16; another strided B repacked into [N/nr][K][nr] panels when M >= 2 mr; both decided at run time), true (always panels), false (B read in place)",
                },
                OptionSpec {
                    name: "pack-a",
                    kind: OptionKind::Bool,
                    default: "true",
                    description: "Inside the mc loop, copy A's mc x kc block contiguous when it is large (at least mc/2 rows) and at least 8 N tiles read it (decided at run time)",
                },
                OptionSpec {
                    name: "mc-blocking",
                    kind: OptionKind::Bool,
                    default: "true",
                    description: "Split a dynamic M into blocks of the patch's mc (an scf.for around the tile loops, inside the kc loop)",
                },
                OptionSpec {
                    name: "parallel",
                    kind: OptionKind::Bool,
                    default: "true",
                    description: "Mark the loops over batches and over full N and M tiles 'ftuner.parallel' (independent iterations); convert-to-llvm runs the outermost one with enough iterations on the thread pool",
                },
                OptionSpec {
                    name: "k-blocking",
                    kind: OptionKind::Bool,
                    default: "true",
                    description: "Split the reduction into blocks of the patch's kc (an scf.for around the tile loops)",
                },
            ]),
            lowered: 0,
            skipped: 0,
            kernels_launched: 0,
        }
    }
}

impl Pass for LowerUkernelsPass {
    fn argument(&self) -> &'static str {
        "lower-ukernels"
    }
    fn name(&self) -> &'static str {
        "LowerUkernels"
    }
    fn summary(&self) -> &'static str {
        "Realize ukernel.patch plans as loops over statically shaped tiles (tensor level)"
    }
    fn options(&mut self) -> Option<&mut PassOptions> {
        Some(&mut self.opts)
    }
    fn options_ref(&self) -> Option<&PassOptions> {
        Some(&self.opts)
    }
    fn run(&mut self, cx: &mut PassContext<'_>, op: OpId) -> Result<(), PassFailure> {
        let vb = self.opts.int("vector-bodies");
        let vector_bodies = (vb > 0).then_some(vb);
        let k_blocking = self.opts.bool("k-blocking");
        let blocking = Blocking {
            mc: self.opts.bool("mc-blocking"),
            pack_a: self.opts.bool("pack-a"),
            parallel: self.opts.bool("parallel"),
        };
        let pack_b = match self.opts.str("pack-b").as_str() {
            "auto" => None,
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            other => {
                cx.emit(Diagnostic::error(
                    cx.ir.loc(op),
                    format!("pack-b must be auto, true or false, got '{other}'"),
                ));
                return Err(PassFailure);
            }
        };
        let mut patches = vec![];
        cx.ir.walk_pre(op, &mut |o| {
            if cx.ir.name(o) == "ukernel.patch" {
                patches.push(o);
            }
        });
        for p in patches {
            // A scheduled patch carries its own lowering knobs.
            let sched: Option<crate::Schedule> = match cx.ir.attr(p, "ftuner.schedule") {
                None => None,
                Some(a) => match a.as_str().map(str::parse) {
                    Some(Ok(s)) => Some(s),
                    Some(Err(e)) => {
                        cx.emit(Diagnostic::error(cx.ir.loc(p), e));
                        return Err(PassFailure);
                    }
                    None => {
                        cx.emit(Diagnostic::error(
                            cx.ir.loc(p),
                            "'ftuner.schedule' must be a string attribute",
                        ));
                        return Err(PassFailure);
                    }
                },
            };
            // On buffers: a GPU patch becomes kernels and launches.
            let (ins, outs) = ins_outs(cx.ir, p);
            if ins
                .iter()
                .chain(&outs)
                .any(|v| cx.ir.value_type(*v).is_memref())
            {
                match gpu_family(cx.ir, p).and_then(|g| crate::gpu_lower::lower_gpu(cx.ir, p, &g)) {
                    Ok(()) => {
                        self.lowered += 1;
                        self.kernels_launched += 1;
                    }
                    Err(e) => {
                        cx.emit(Diagnostic::remark(
                            cx.ir.loc(p),
                            format!("not lowered: {e}"),
                        ));
                        self.skipped += 1;
                    }
                }
                continue;
            }
            let (vb, kb, pb) = match sched {
                Some(s) => (
                    vector_bodies.map(|v| v.max((s.mr * s.nr) as i64)),
                    s.k_blocking,
                    // A schedule's pack_b=1 forces packing; 0 leaves it to the model.
                    s.pack_b.then_some(true).or(pack_b),
                ),
                None => (vector_bodies, k_blocking, pack_b),
            };
            match lower(cx.ir, p, vb, kb, pb, blocking) {
                Ok(()) => self.lowered += 1,
                Err(e) => {
                    cx.emit(Diagnostic::remark(
                        cx.ir.loc(p),
                        format!("not lowered: {e}"),
                    ));
                    self.skipped += 1;
                }
            }
        }
        Ok(())
    }
    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "num-lowered",
                description: "Patches lowered to loops",
                value: self.lowered,
            },
            Statistic {
                name: "num-gpu-patches",
                description: "Patches lowered to GPU kernels and launches",
                value: self.kernels_launched,
            },
            Statistic {
                name: "num-skipped",
                description: "Patches left as they are",
                value: self.skipped,
            },
        ]
    }
    fn clone_pass(&self) -> Box<dyn Pass> {
        Box::new(LowerUkernelsPass {
            opts: self.opts.clone(),
            ..LowerUkernelsPass::default()
        })
    }
}
