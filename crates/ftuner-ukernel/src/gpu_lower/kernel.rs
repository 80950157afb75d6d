//! One GPU kernel: the `gpu.func` of an `m x n` block tile, each thread computing its
//! `tm x tn` elements in registers over the reduction loops, the patch body (or one
//! fused multiply-add) per element, the fused epilogue, and the stores.

use super::{body_block, Shape};
use crate::lower::{eval_expr, mul_add_elem, res_pos, B};
use ftuner_dialects::ops;
use ftuner_dialects::ukernel::epilogue_block;
use ftuner_ir::{intern_name, AffineMap, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value};
use rustc_hash::FxHashMap;

/// The kernel of an `m x n` block with `tm x tn` elements per thread.
pub(super) fn build_kernel(
    ir: &mut Ir,
    patch: OpId,
    s: &Shape,
    name: &str,
    (m, n): (i64, i64),
    (tm, tn): (i64, i64),
) -> Result<OpId, String> {
    let loc = ir.loc(patch);
    let (f, e, args) = kernel_func(ir, s, name, loc);
    let ne = s.emaps.len();
    let (a, bm, c) = (args[0], args[1], args[2]);
    let extras = args[3..3 + ne].to_vec();
    let mut b = B::new(ir, loc);
    let (row, col) = thread_origin(&mut b, e, (m, n), tn, (args[3 + ne], args[4 + ne]));
    let rows = thread_rows(&mut b, e, s, &args, row, m, tm);
    let mut colv = vec![col];
    for j in 1..tn {
        let o = b.index(e, j * (n / tn));
        colv.push(b.ibin(e, ops::arith::AddiOp::NAME, col, o));
    }
    let fixed = batch_indices(&mut b, e, s, &args);
    let kext: Vec<Value> =
        s.ks.iter()
            .map(|d| extent(&mut b, e, s, &args, *d))
            .collect();
    let c0 = b.index(e, 0);
    let c1 = b.index(e, 1);
    let ix = Subscripts {
        dn: s.dn,
        fixed,
        c0,
    };
    // Accumulators from C.
    let mut accs = vec![];
    for r in &rows {
        for &nj in &colv {
            let mut ops = vec![c];
            ops.extend(ix.of(&mut b, e, &s.maps[2], r, nj, &[]));
            accs.push(b.val(e, ops::memref::LoadOp::NAME, ops, s.elem, vec![]));
        }
    }
    // The reduction loops (one per K dim), carrying the accumulators.
    let mut blk = e;
    let mut loops = vec![];
    let mut kv: Vec<(u32, Value)> = vec![];
    let mut cur = accs;
    for (d, x) in s.ks.iter().zip(&kext) {
        let (l, lb, iv, args) = b.for_loop(blk, (c0, *x, c1), cur);
        kv.push((*d, iv));
        cur = args;
        loops.push((l, lb));
        blk = lb;
    }
    let avals: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut ops = vec![a];
            ops.extend(ix.of(&mut b, blk, &s.maps[0], r, col, &kv));
            b.val(
                blk,
                ops::memref::LoadOp::NAME,
                ops,
                s.types[0].element_type(),
                vec![],
            )
        })
        .collect();
    let bvals: Vec<Value> = colv
        .iter()
        .map(|nj| {
            let mut ops = vec![bm];
            ops.extend(ix.of(&mut b, blk, &s.maps[1], &rows[0], *nj, &kv));
            b.val(
                blk,
                ops::memref::LoadOp::NAME,
                ops,
                s.types[1].element_type(),
                vec![],
            )
        })
        .collect();
    let mut vals = element_bodies(&mut b, blk, patch, s.elem, &avals, &bvals, &cur)?;
    for (l, lb) in loops.iter().rev() {
        b.yield_(*lb, ops::scf::YieldOp::NAME, vals);
        vals = b.ir.results(*l).to_vec();
    }
    let mut r = vals.iter();
    for row in &rows {
        for &nj in &colv {
            let v = *r.next().ok_or("result count")?;
            // The fused epilogue, on the finished element.
            let v = epilogue(&mut b, e, patch, s, &ix, &extras, (row, nj), v)?;
            let mut ops = vec![v, c];
            ops.extend(ix.of(&mut b, e, &s.maps[2], row, nj, &[]));
            b.op(e, ops::memref::StoreOp::NAME, ops, vec![], vec![], 0);
        }
    }
    b.op(e, ops::gpu::ReturnOp::NAME, vec![], vec![], vec![], 0);
    Ok(f)
}

/// The `gpu.func` (A, B, C, the epilogue operands, then the block tile's M and N
/// offsets), its entry block and arguments.
fn kernel_func(ir: &mut Ir, s: &Shape, name: &str, loc: Attribute) -> (OpId, BlockId, Vec<Value>) {
    let idx = Type::index();
    let mut params = s.types.clone();
    params.extend([idx, idx]);
    let fty = Type::function(params.clone(), vec![]);
    let f = ir.create_op(
        // Attributes, not properties: upstream's gpu.func keeps them in its dictionary.
        OpSpec::new(intern_name(ops::gpu::FuncOp::NAME), loc)
            .attr("sym_name", Attribute::string(name))
            .attr("function_type", Attribute::type_attr(fty))
            .regions(1),
    );
    ir.set_attr(f, "gpu.kernel", Some(Attribute::unit()));
    let r = ir.regions_of(f)[0];
    let e = ir.append_block(r, &params);
    let args = ir.block_args(e).to_vec();
    (f, e, args)
}

/// `gpu.thread_id` / `gpu.block_id` along `d`.
fn special(b: &mut B<'_>, e: BlockId, op: &str, d: &str) -> Value {
    b.val(
        e,
        op,
        vec![],
        Type::index(),
        vec![(
            "dimension",
            Attribute::dialect("gpu", &format!("<dim {d}>")),
        )],
    )
}

/// The thread's first row and column: the block tile's origin (`m0 + blockIdx.y·m`,
/// `n0 + blockIdx.x·n`) plus the thread's place in the `(m/tm) x (n/tn)` grid.
fn thread_origin(
    b: &mut B<'_>,
    e: BlockId,
    (m, n): (i64, i64),
    tn: i64,
    (m0, n0): (Value, Value),
) -> (Value, Value) {
    let tid = special(b, e, ops::gpu::ThreadIdOp::NAME, "x");
    let bx = special(b, e, ops::gpu::BlockIdOp::NAME, "x");
    let by = special(b, e, ops::gpu::BlockIdOp::NAME, "y");
    let cols = b.index(e, n / tn);
    let tx = b.ibin(e, ops::arith::RemuiOp::NAME, tid, cols);
    let ty = b.ibin(e, ops::arith::DivuiOp::NAME, tid, cols);
    let cm = b.index(e, m);
    let cn = b.index(e, n);
    let rb = b.ibin(e, ops::arith::MuliOp::NAME, by, cm);
    let rb = b.ibin(e, ops::arith::AddiOp::NAME, m0, rb);
    let row = b.ibin(e, ops::arith::AddiOp::NAME, rb, ty);
    let cb = b.ibin(e, ops::arith::MuliOp::NAME, bx, cn);
    let cb = b.ibin(e, ops::arith::AddiOp::NAME, n0, cb);
    let col = b.ibin(e, ops::arith::AddiOp::NAME, cb, tx);
    (row, col)
}

/// Extent of dim `d` from the first operand that indexes it directly.
fn extent(b: &mut B<'_>, e: BlockId, s: &Shape, args: &[Value], d: u32) -> Value {
    let (k, p) = [2usize, 1, 0]
        .iter()
        .find_map(|k| res_pos(&s.maps[*k], d).map(|p| (*k, p)))
        .unwrap_or((2, 0));
    match s.types[k].shape().and_then(|x| x.get(p)).copied() {
        Some(x) if x != ftuner_ir::DYNAMIC => b.index(e, x),
        _ => {
            let pv = b.index(e, p as i64);
            b.val(
                e,
                ops::memref::DimOp::NAME,
                vec![args[k], pv],
                Type::index(),
                vec![],
            )
        }
    }
}

/// Each of the thread's rows: its flattened M index, delinearized over the M dims.
fn thread_rows(
    b: &mut B<'_>,
    e: BlockId,
    s: &Shape,
    args: &[Value],
    row: Value,
    m: i64,
    tm: i64,
) -> Vec<Vec<(u32, Value)>> {
    let mext: Vec<Value> = if s.ms.len() > 1 {
        s.ms.iter().map(|d| extent(b, e, s, args, *d)).collect()
    } else {
        vec![]
    };
    let mut rows: Vec<Vec<(u32, Value)>> = vec![];
    for i in 0..tm {
        let mut flat = row;
        if i > 0 {
            let o = b.index(e, i * (m / tm));
            flat = b.ibin(e, ops::arith::AddiOp::NAME, row, o);
        }
        if s.ms.len() == 1 {
            rows.push(vec![(s.ms[0], flat)]);
            continue;
        }
        let mut pos = vec![];
        for (d, x) in s.ms.iter().zip(&mext).rev() {
            pos.push((*d, b.ibin(e, ops::arith::RemuiOp::NAME, flat, *x)));
            flat = b.ibin(e, ops::arith::DivuiOp::NAME, flat, *x);
        }
        rows.push(pos);
    }
    rows
}

/// Batch indices: blockIdx.z delinearized over the batch dims (last fastest).
fn batch_indices(b: &mut B<'_>, e: BlockId, s: &Shape, args: &[Value]) -> Vec<(u32, Value)> {
    let mut fixed: Vec<(u32, Value)> = vec![];
    if s.batch.is_empty() {
        return fixed;
    }
    let mut z = special(b, e, ops::gpu::BlockIdOp::NAME, "z");
    for (i, d) in s.batch.iter().enumerate().rev() {
        if i == 0 {
            fixed.push((*d, z));
            break;
        }
        let ext = extent(b, e, s, args, *d);
        fixed.push((*d, b.ibin(e, ops::arith::RemuiOp::NAME, z, ext)));
        z = b.ibin(e, ops::arith::DivuiOp::NAME, z, ext);
    }
    fixed
}

/// Subscripts of an operand at (row, column, k values): the N dim's value, the row's M
/// dims, the k loops' values, the batch indices, else 0.
struct Subscripts {
    dn: u32,
    fixed: Vec<(u32, Value)>,
    c0: Value,
}

impl Subscripts {
    fn of(
        &self,
        b: &mut B<'_>,
        blk: BlockId,
        map: &AffineMap,
        row: &[(u32, Value)],
        nj: Value,
        kv: &[(u32, Value)],
    ) -> Vec<Value> {
        let at = |d: u32| -> Value {
            if d == self.dn {
                return nj;
            }
            row.iter()
                .chain(kv)
                .chain(&self.fixed)
                .find(|(x, _)| *x == d)
                .map_or(self.c0, |(_, v)| *v)
        };
        map.results
            .iter()
            .map(|x| eval_expr(b, blk, x, &at))
            .collect()
    }
}

/// The patch body once per element of the thread's tile, in the innermost k loop:
/// `acc + a·b` on floats becomes one fused multiply-add (`fma.rn`), as the CPU register
/// tiles use `vector.fma`; any other body is cloned as it is.
fn element_bodies(
    b: &mut B<'_>,
    lb: BlockId,
    patch: OpId,
    elem: Type,
    avals: &[Value],
    bvals: &[Value],
    cur: &[Value],
) -> Result<Vec<Value>, String> {
    let pbody = body_block(b.ir, patch).ok_or("the patch has no body")?;
    let pargs = b.ir.block_args(pbody).to_vec();
    let pops = b.ir.block_ops_vec(pbody);
    let (last, rest) = pops.split_last().ok_or("the patch body is empty")?;
    let fused = mul_add_elem(b.ir, patch).is_some();
    let mut news = vec![];
    for (i, av) in avals.iter().enumerate() {
        for (j, bv) in bvals.iter().enumerate() {
            let acc = cur[i * bvals.len() + j];
            if fused {
                let fm = Attribute::dialect("arith", "fastmath<none>");
                news.push(b.val(
                    lb,
                    ops::math::FmaOp::NAME,
                    vec![*av, *bv, acc],
                    elem,
                    vec![("fastmath", fm)],
                ));
                continue;
            }
            let mut map: FxHashMap<Value, Value> = FxHashMap::default();
            map.insert(pargs[0], *av);
            map.insert(pargs[1], *bv);
            map.insert(pargs[2], acc);
            for o in rest {
                let n = b.ir.clone_op(*o, &mut map);
                b.ir.append_op(lb, n);
            }
            let y = b.ir.operands(*last).first().copied().ok_or("empty yield")?;
            news.push(*map.get(&y).unwrap_or(&y));
        }
    }
    Ok(news)
}

/// The patch's fused epilogue (if any) on a finished element `v` at (row, column), its
/// operands loaded at the same place.
#[allow(clippy::too_many_arguments)]
fn epilogue(
    b: &mut B<'_>,
    e: BlockId,
    patch: OpId,
    s: &Shape,
    ix: &Subscripts,
    extras: &[Value],
    (row, nj): (&[(u32, Value)], Value),
    v: Value,
) -> Result<Value, String> {
    let Some(eb) = epilogue_block(b.ir, patch) else {
        return Ok(v);
    };
    let eargs = b.ir.block_args(eb).to_vec();
    let mut map: FxHashMap<Value, Value> = FxHashMap::default();
    map.insert(eargs[0], v);
    for (j, (x, m)) in extras.iter().zip(&s.emaps).enumerate() {
        let mut ops = vec![*x];
        ops.extend(ix.of(b, e, m, row, nj, &[]));
        let ty = s.types[3 + j].element_type();
        map.insert(
            eargs[1 + j],
            b.val(e, ops::memref::LoadOp::NAME, ops, ty, vec![]),
        );
    }
    let eops = b.ir.block_ops_vec(eb);
    let (y, rest) = eops.split_last().ok_or("empty epilogue")?;
    for o in rest {
        let n = b.ir.clone_op(*o, &mut map);
        b.ir.append_op(e, n);
    }
    let yv = b.ir.operands(*y).first().copied().ok_or("empty yield")?;
    Ok(*map.get(&yv).unwrap_or(&yv))
}
