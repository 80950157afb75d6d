//! Register tiles: a static tile of a multiply-accumulate patch as vector FMAs over
//! rows of C held in registers (the plan's vector body, its batch loops, the row reads,
//! FMAs and writes).

use super::dot::{dot_tile, nt_dot, DOT_OUTPUTS};
use super::{reduction_dim, res_pos, Layout, VectorBody, B};
use ftuner_dialects::ops;
use ftuner_ir::{AffineExpr, BlockId, Ir, OpId, Type, Value};

/// A patch gets vector bodies when it is a (batched) contraction (b..., m, n, k) with one
/// reduction dim, batch dims in every operand, and the body `acc + a * b` on floats.
pub(super) fn vector_plan(ir: &Ir, op: OpId, lay: &Layout, max_elems: i64) -> Option<VectorBody> {
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
    let (chains, lanes, registers, vector_bits) = cpu.map_or((1, 1, 32, 0), |c| {
        (
            (c.fma_latency as f64 * c.vector_fmas_per_cycle()).round() as i64,
            c.lanes(bytes) as i64,
            c.vector_registers as i64,
            c.vector_bits as i64,
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
        registers: registers.max(1),
        vector_bits,
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
    if !is(ops[0], ops::arith::MulfOp::NAME)
        || !is(ops[1], ops::arith::AddfOp::NAME)
        || !(is(ops[2], ops::ukernel::YieldOp::NAME) || is(ops[2], ops::linalg::YieldOp::NAME))
    {
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
pub(super) fn indices(map: &ftuner_ir::AffineMap, at: &dyn Fn(u32) -> Value) -> Vec<Value> {
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
pub(super) fn vector_body(
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
    let ext = b.dim(blk, c, pv);
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    let (f, fb, iv, acc) = b.for_loop(blk, (c0, ext, c1), vec![c]);
    let acc = acc[0];
    fixed.push((d, iv));
    let r = batch_loops(b, fb, lay, vb, ab, acc, tile, fixed);
    fixed.pop();
    b.yield_(fb, ops::scf::YieldOp::NAME, vec![r]);
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
    let kext = b.dim(blk, a, akv);
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
    let zero = b.val(blk, ops::vector::BroadcastOp::NAME, vec![pad], vty, vec![]);
    let accs = vec![zero; rows.len()];
    // Packed B: panel noff / nt, rows from the k block's offset.
    let panel_idx = match vb.panel {
        Some((_, noff)) => {
            let cnt = b.index(blk, nt);
            let j = b.val(
                blk,
                ops::arith::DivuiOp::NAME,
                vec![noff, cnt],
                Type::index(),
                vec![],
            );
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
                let kabs = b.ibin(fb, ops::arith::AddiOp::NAME, k0, k);
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
    // Each set holds its accumulators, and each of the u steps in flight a row of B and
    // an A broadcast; u sets must fit the register file with one register to spare, or
    // LLVM spills accumulators to the stack every k step (AVX2's 6x8 edge tile: 2 x 6
    // accumulators, 2 B vectors and 2 broadcasts in 16 ymm spilled six per step, slower
    // than one set of 6 chains).
    let nv = (nt + vb.lanes - 1) / vb.lanes;
    let regs = mt * nv;
    let per_set = crate::cpu::tile_registers(mt as u32, nv as u32) as i64;
    let fit = ((vb.registers - 1) / per_set).max(1);
    let u = ((vb.chains + regs - 1) / regs).clamp(1, 8).min(fit);
    // Both A and B contiguous along k (an NT product) and a narrow tile: B's row at k would
    // be nt strided loads per k step; dot products along k instead (rows of A and B read
    // as full vectors), reduced to C's rows, and the k remainder as below.
    let dot = nt_dot(lay, vb) && mt * nt <= DOT_OUTPUTS && nt <= vb.lanes;
    let ku = k_steps(b, a, ak);
    // k from `start` to the end, one step at a time, from the accumulators `init`.
    let k_loop = |b: &mut B<'_>, start: Value, init: Vec<Value>| -> Vec<Value> {
        let n = init.len();
        let (f, fb, k, inner) = b.for_loop(blk, (start, kext, c1), init);
        let next = step(b, fb, k, &inner);
        b.yield_(fb, ops::scf::YieldOp::NAME, next);
        (0..n).map(|i| b.ir.result(f, i)).collect()
    };
    let sums: Vec<Value> = if dot {
        let (start, init) = dot_tile(b, blk, lay, vb, (a, bm), (mt, nt), &batch_of, kext);
        k_loop(b, start, init)
    } else if u == 1 && ku > 1 {
        // `ku` steps per iteration into the same accumulators, the remainder after.
        let cu = b.index(blk, ku);
        let q = b.ibin(blk, ops::arith::DivuiOp::NAME, kext, cu);
        let kmain = b.ibin(blk, ops::arith::MuliOp::NAME, q, cu);
        let main = unrolled_k_loop(b, blk, (c0, kmain, ku), accs, &step);
        k_loop(b, kmain, main)
    } else if u == 1 {
        k_loop(b, c0, accs)
    } else {
        let n = rows.len();
        let cu = b.index(blk, u);
        let q = b.ibin(blk, ops::arith::DivuiOp::NAME, kext, cu);
        let kmain = b.ibin(blk, ops::arith::MuliOp::NAME, q, cu);
        let inits: Vec<Value> = std::iter::repeat_n(zero, n * u as usize).collect();
        let (f, fb, k, inner) = b.for_loop(blk, (c0, kmain, cu), inits);
        let mut next = vec![];
        for j in 0..u as usize {
            let kj = if j == 0 {
                k
            } else {
                let cj = b.index(fb, j as i64);
                b.ibin(fb, ops::arith::AddiOp::NAME, k, cj)
            };
            next.extend(step(b, fb, kj, &inner[j * n..(j + 1) * n]));
        }
        b.yield_(fb, ops::scf::YieldOp::NAME, next);
        let sets: Vec<Value> = (0..n * u as usize).map(|i| b.ir.result(f, i)).collect();
        let mut parts: Vec<Vec<Value>> = vec![k_loop(b, kmain, sets[..n].to_vec())];
        parts.extend((1..u as usize).map(|j| sets[j * n..(j + 1) * n].to_vec()));
        sum_pairwise(b, blk, parts, vty)
    };
    // The patch's epilogue, when `tiles` prepared it for registers: on each row before
    // its store.
    let ep = b.tile_epilogue.take();
    let finish = |b: &mut B<'_>, blk: BlockId, vals: &[Value]| match &ep {
        Some(ep) => super::vector_epilogue::apply(b, blk, ep, lay, &batch_of, vals),
        None => vals.to_vec(),
    };
    store_sums(b, blk, c, &c_rows, &sums, (pad, vty, cn), &finish)
}

/// k steps per iteration of a register tile's k loop by default (`k-unroll=0`) where its
/// k extent is static and a multiple of it (a static K, or a whole block of one: the
/// remainder loop runs no step, and canonicalization removes it); one where it is
/// dynamic. (Tiles that split k over several accumulator sets, and dot-product tiles,
/// keep their own loops.) LLVM does not unroll a loop carrying 6-24
/// vector accumulators, and two steps per iteration halve its counter and branch work.
/// Measured (one thread, Xeon family 6 model 167): `ftuner-bench --workloads w1` with
/// this default and static k blocks against the build before, alternated, three runs:
/// best-library-time/ftuner-time median 0.918 -> 0.960, 34 of 36 shapes faster (per
/// shape 0.97-1.13x, median 1.05x), against Debian's OpenBLAS 1.064 -> 1.108; whole models
/// saved before and after (`tools/bench/ab_saved.py`, 11 rounds): BERT at 64 / 256 tokens
/// 95.9 -> 94.5 / 351.0 -> 335.6 ms, GPT-2 94.7 -> 92.4 / 379.9 -> 364.3, ResNet-50 batch
/// 1 68.0 -> 66.4, MobileNetV2 batch 8 67.1 -> 66.0. Over a dynamic K (W3's `?x? * ?x?`,
/// `k-unroll=2` against one, three runs each; the remainder loop's C prefetches placed by
/// `prefetch-tile-updates`'s chains) mixed: 5124x700x2048 0.88 -> 1.00 and 8448x1500x2816
/// 0.91 -> 1.03 of the best library's speed, but 3072x3000x1024 0.90 -> 0.85 and
/// 4608x4x1536 0.99 -> 0.80, inside a noise band of about 10% that day (the same code
/// measured 0.89-1.01x apart).
pub(super) const MATMUL_K_UNROLL: i64 = 2;

/// k steps per iteration of the tile reading A slice `a` (k at its dim `ak`): `k-unroll`,
/// or by default [`MATMUL_K_UNROLL`] where the slice's k extent is static and a multiple
/// of it (its remainder runs no step), else one. At most 8.
fn k_steps(b: &B<'_>, a: Value, ak: usize) -> i64 {
    if b.blocking.k_unroll != 0 {
        return b
            .blocking
            .k_unroll
            .min(crate::schedule::MAX_K_UNROLL as i64);
    }
    match b.ir.value_type(a).shape().and_then(|s| s.get(ak).copied()) {
        Some(k) if k != ftuner_ir::DYNAMIC && k > 0 && k % MATMUL_K_UNROLL == 0 => MATMUL_K_UNROLL,
        _ => 1,
    }
}

/// One k step of a register tile: the accumulators after step `k`.
pub(super) type KStep<'f> = dyn Fn(&mut B<'_>, BlockId, Value, &[Value]) -> Vec<Value> + 'f;

/// A k loop from `lb` to `ub` (`ub - lb` a multiple of `ku`) taking `ku` steps (`step`:
/// k, k + 1, ...) per iteration into the accumulators `accs`; its results.
pub(super) fn unrolled_k_loop(
    b: &mut B<'_>,
    blk: BlockId,
    (lb, ub, ku): (Value, Value, i64),
    accs: Vec<Value>,
    step: &KStep<'_>,
) -> Vec<Value> {
    let n = accs.len();
    let cu = b.index(blk, ku);
    let (f, fb, k, inner) = b.for_loop(blk, (lb, ub, cu), accs);
    let mut cur = inner;
    for j in 0..ku {
        let kj = if j == 0 {
            k
        } else {
            let cj = b.index(fb, j);
            b.ibin(fb, ops::arith::AddiOp::NAME, k, cj)
        };
        cur = step(b, fb, kj, &cur);
    }
    b.yield_(fb, ops::scf::YieldOp::NAME, cur);
    (0..n).map(|i| b.ir.result(f, i)).collect()
}

/// The accumulator sets of a split k loop summed pairwise (a tree, so no set waits on
/// all the others).
fn sum_pairwise(b: &mut B<'_>, blk: BlockId, mut parts: Vec<Vec<Value>>, vty: Type) -> Vec<Value> {
    while parts.len() > 1 {
        let mut merged = vec![];
        for pair in parts.chunks(2) {
            match pair {
                [x, y] => merged.push(
                    x.iter()
                        .zip(y)
                        .map(|(p, q)| {
                            b.val(blk, ops::arith::AddfOp::NAME, vec![*p, *q], vty, vec![])
                        })
                        .collect(),
                ),
                [x] => merged.push(x.clone()),
                _ => {}
            }
        }
        parts = merged;
    }
    parts.pop().unwrap_or_default()
}

/// What a tile's rows get before their store (the patch's epilogue, or nothing).
pub(super) type RowFinish<'f> = dyn Fn(&mut B<'_>, BlockId, &[Value]) -> Vec<Value> + 'f;

/// The register tile's row sums into C: added to C's rows, or — C starting at zero —
/// stored as they are in the first k block.
pub(super) fn store_sums(
    b: &mut B<'_>,
    blk: BlockId,
    c: Value,
    c_rows: &[Vec<Value>],
    sums: &[Value],
    (pad, vty, cn): (Value, Type, usize),
    finish: &RowFinish,
) -> Value {
    let add_to_c = |b: &mut B<'_>, blk: BlockId| {
        let olds = read_rows(b, blk, c, c_rows, pad, vty, cn);
        let vals: Vec<Value> = olds
            .iter()
            .zip(sums)
            .map(|(o, r)| b.val(blk, ops::arith::AddfOp::NAME, vec![*o, *r], vty, vec![]))
            .collect();
        let vals = finish(b, blk, &vals);
        write_rows(b, blk, c, c_rows, &vals, cn)
    };
    match (b.zero_init, b.kfirst) {
        (false, _) => add_to_c(b, blk),
        // C starts at zero: the sums are C (one k block), or C's first values.
        (true, None) => {
            let vals = finish(b, blk, sums);
            write_rows(b, blk, c, c_rows, &vals, cn)
        }
        (true, Some(first)) => {
            let cty = b.ir.value_type(c);
            b.if_else(
                blk,
                first,
                cty,
                |b, tb| {
                    // The first block may be the last too (K within one block).
                    let vals = finish(b, tb, sums);
                    write_rows(b, tb, c, c_rows, &vals, cn)
                },
                add_to_c,
            )
        }
    }
}

/// The value assigned to loop dim `d`: from `pairs`, else `other`.
pub(super) fn pick(d: u32, pairs: &[(u32, Value)], other: Value) -> Value {
    pairs
        .iter()
        .find(|(x, _)| *x == d)
        .map_or(other, |(_, v)| *v)
}

/// One k step of the register tile: per row, broadcast A's element at its indices and
/// `vector.fma` it with the B row into the row's accumulator.
pub(super) fn fma_rows(
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
            let x = b.val(blk, ops::tensor::ExtractOp::NAME, ops, elem, vec![]);
            let xv = b.val(blk, ops::vector::BroadcastOp::NAME, vec![x], vty, vec![]);
            b.val(
                blk,
                ops::vector::FmaOp::NAME,
                vec![xv, brow, *acc],
                vty,
                vec![],
            )
        })
        .collect()
}

/// One `vector.transfer_read` of `vty` along dim `along` of `c` per index list.
pub(super) fn read_rows(
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
            b.val(blk, ops::vector::TransferReadOp::NAME, ops, vty, props)
        })
        .collect()
}

/// `vector.transfer_write` of each of `vals` along dim `along` of `c` at its index list;
/// returns the updated tensor.
pub(super) fn write_rows(
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
        out = b.val(blk, ops::vector::TransferWriteOp::NAME, ops, cty, props);
    }
    out
}
