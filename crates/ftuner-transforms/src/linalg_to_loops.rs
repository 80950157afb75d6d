//! `convert-linalg-to-loops`: structured ops on buffers become `scf.for` nests with
//! `memref.load`/`memref.store` around their body, as upstream MLIR's pass of that name.
//!
//! One loop per iteration dimension, outermost first (reductions included, so the order in
//! which a reduction accumulates is the op's row-major iteration order — the order the
//! reference interpreter uses). Loop bounds come from an operand dimension that a loop
//! dimension indexes directly. Index expressions of the indexing maps (`d0 + d2`,
//! `d1 * 2`, ...) become `arith` ops; an output is loaded only when the body reads it.
//!
//! Unlike upstream, the outer loops of a `linalg.generic` (or a depthwise conv, a pooling,
//! or a `linalg.transpose` walked as a plain nest) whose iterations write disjoint output
//! elements (a parallel dim every output indexes
//! plainly; a body that computes and reads only) are marked `ftuner.parallel` for the
//! runtime's thread pool (`convert-parallel-loops-to-runtime`; `parallel=false` turns the
//! marking off; without that pass marked loops run serially).

use ftuner_dialects::ops;
mod checks;
mod transpose;

use checks::{nonlinear_index_checks, shape_check};
use ftuner_dialects::linalg::{body as lbody, ins_outs};
use ftuner_ir::{
    intern_name, AffineExpr, AffineMap, Attribute, BlockId, Diagnostic, Ir, OpId, OpSpec, Type,
    Value, DYNAMIC,
};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use rustc_hash::FxHashMap;
use transpose::{blocked_nest, lower_permuted_copy, permuted_copy, transposes};

/// Ops inserted before an anchor op at the loop nest's location (through ftuner-ir's
/// `OpBuilder`), and the index and check helpers the lowering uses.
struct B<'a> {
    ir: &'a mut Ir,
    loc: Attribute,
}

impl B<'_> {
    fn op(
        &mut self,
        anchor: OpId,
        name: &str,
        operands: Vec<Value>,
        results: Vec<Type>,
        props: Vec<(&str, Attribute)>,
    ) -> OpId {
        ftuner_ir::OpBuilder {
            ir: &mut *self.ir,
            at: ftuner_ir::InsertPoint::Before(anchor),
            loc: self.loc,
        }
        .create(name, operands, results, &props)
    }
    fn val(&mut self, anchor: OpId, name: &str, operands: Vec<Value>, ty: Type) -> Value {
        let o = self.op(anchor, name, operands, vec![ty], vec![]);
        self.ir.result(o, 0)
    }
    /// `arith.cmpi` with predicate `pred` (0 eq, 6 ult).
    fn cmpi(&mut self, anchor: OpId, pred: i64, a: Value, b: Value) -> Value {
        let props = vec![("predicate", Attribute::i64(pred))];
        let o = self.op(
            anchor,
            ops::arith::CmpiOp::NAME,
            vec![a, b],
            vec![Type::i1()],
            props,
        );
        self.ir.result(o, 0)
    }
    /// `cf.assert ok, msg`.
    fn assert(&mut self, anchor: OpId, ok: Value, msg: String) {
        let props = vec![("msg", Attribute::string(msg))];
        self.op(anchor, ops::cf::AssertOp::NAME, vec![ok], vec![], props);
    }
    fn index(&mut self, anchor: OpId, v: i64) -> Value {
        let o = self.op(
            anchor,
            ops::arith::ConstantOp::NAME,
            vec![],
            vec![Type::index()],
            vec![("value", Attribute::index(v))],
        );
        self.ir.result(o, 0)
    }
    /// `cf.assert` that every index of `load` is within its buffer (unsigned compare,
    /// so negative indices fail too), inserted before `anchor`.
    fn bounds_check(&mut self, anchor: OpId, load: OpId) {
        let ops = self.ir.operands(load).to_vec();
        let Some((m, idx)) = ops.split_first() else {
            return;
        };
        let shape = self.ir.value_type(*m).shape().unwrap_or(&[]).to_vec();
        let mut ok: Option<Value> = None;
        for (i, x) in idx.iter().enumerate() {
            let ub = match shape.get(i) {
                Some(d) if *d != DYNAMIC => self.index(anchor, *d),
                _ => {
                    let c = self.index(anchor, i as i64);
                    self.val(anchor, ops::memref::DimOp::NAME, vec![*m, c], Type::index())
                }
            };
            let lt = self.cmpi(anchor, 6, *x, ub);
            ok = Some(match ok {
                None => lt,
                Some(p) => self.val(anchor, ops::arith::AndiOp::NAME, vec![p, lt], Type::i1()),
            });
        }
        if let Some(ok) = ok {
            // The location is the op's (convert-to-llvm prefixes it), not part of the
            // message: nests that differ only in where they came from (a model's layers)
            // stay identical, so outline-loop-nests compiles them once.
            self.assert(
                anchor,
                ok,
                "index out of bounds in a structured op body".into(),
            );
        }
    }

    /// An affine expression of the loop induction variables as `arith` ops.
    fn expr(&mut self, anchor: OpId, e: &AffineExpr, ivs: &[Value]) -> Result<Value, String> {
        Ok(match e {
            AffineExpr::Dim(d) => *ivs
                .get(*d as usize)
                .ok_or_else(|| format!("indexing map uses d{d} beyond the loops"))?,
            AffineExpr::Const(c) => self.index(anchor, *c),
            AffineExpr::Add(a, b) | AffineExpr::Mul(a, b) => {
                let x = self.expr(anchor, a, ivs)?;
                let y = self.expr(anchor, b, ivs)?;
                let name = if matches!(e, AffineExpr::Add(..)) {
                    ops::arith::AddiOp::NAME
                } else {
                    ops::arith::MuliOp::NAME
                };
                self.val(anchor, name, vec![x, y], Type::index())
            }
            AffineExpr::FloorDiv(a, b) | AffineExpr::Mod(a, b) => {
                let x = self.expr(anchor, a, ivs)?;
                let y = self.expr(anchor, b, ivs)?;
                let name = if matches!(e, AffineExpr::FloorDiv(..)) {
                    ops::arith::FloordivsiOp::NAME
                } else {
                    ops::arith::RemsiOp::NAME
                };
                self.val(anchor, name, vec![x, y], Type::index())
            }
            other => return Err(format!("unsupported index expression {other:?}")),
        })
    }
}

fn ir_ref<'a>(b: &'a B<'_>) -> &'a Ir {
    b.ir
}

/// `scf.for lb to ub step s` before `anchor`; returns its induction variable and the
/// yield of its body (where ops of the body go).
fn for_loop(b: &mut B<'_>, anchor: OpId, lb: Value, ub: Value, step: Value) -> (Value, OpId) {
    let loc = b.loc;
    let f = b.ir.create_op(
        OpSpec::new(intern_name(ops::scf::ForOp::NAME), loc)
            .operands(vec![lb, ub, step])
            .regions(1),
    );
    b.ir.insert_before(anchor, f);
    let r = b.ir.regions_of(f)[0];
    let blk: BlockId = b.ir.append_block(r, &[Type::index()]);
    let iv = b.ir.block_args(blk)[0];
    let y =
        b.ir.create_op(OpSpec::new(intern_name(ops::scf::YieldOp::NAME), loc));
    b.ir.append_op(blk, y);
    (iv, y)
}

/// The loops of `op`'s nest to mark `ftuner.parallel` (by iteration dim), for a
/// `linalg.generic` (or a `linalg.transpose` that [`transposes`] leaves to the plain nest)
/// on buffers in a host function whose iterations write disjoint output
/// elements: a parallel dim that every output's map reads plainly, and a body that only
/// computes and reads (loads, asserts). From the outermost such dim inward until one has
/// 8 or more iterations or a dynamic count (an outer dim of 1, a batch of one, runs
/// inline and leaves the pool to the next); none when the static volume is under
/// [`PARALLEL_MIN_VOLUME`] iterations (a parallel call costs microseconds).
fn parallel_dims(ctx: &ftuner_ir::Context, ir: &Ir, op: OpId, maps: &[AffineMap]) -> Vec<usize> {
    let name = ir.name(op);
    let plain_transpose = name == ops::linalg::TransposeOp::NAME && !transposes(ir, op, maps);
    if name != ops::linalg::GenericOp::NAME && !plain_transpose && !WINDOW_OPS.contains(&name) {
        return vec![];
    }
    let mut p = ir.parent_op(op);
    while let Some(o) = p {
        match ir.name(o) {
            ops::func::FuncOp::NAME => break,
            ops::gpu::FuncOp::NAME | ops::gpu::ModuleOp::NAME | "gpu.launch" => return vec![],
            _ => p = ir.parent_op(o),
        }
    }
    let Some(reduction) = lbody::reduction_dims(ir, op) else {
        return vec![];
    };
    let parallel: Vec<bool> = reduction.iter().map(|r| !r).collect();
    let (ins, outs) = ins_outs(ir, op);
    let out_maps = &maps[ins.len()..];
    if outs.is_empty() || out_maps.len() != outs.len() {
        return vec![];
    }
    // The body computes and reads only.
    let Some(body) = ir.regions_of(op).first().and_then(|r| ir.region_entry(*r)) else {
        return vec![];
    };
    let mut ok = true;
    for o in ir.block_ops(body) {
        let n = ir.name(o);
        ok &= matches!(
            n,
            ops::linalg::YieldOp::NAME
                | ops::linalg::IndexOp::NAME
                | ops::memref::LoadOp::NAME
                | ops::memref::DimOp::NAME
                | ops::cf::AssertOp::NAME
        ) || (ir.regions_of(o).is_empty() && crate::effects::is_pure(ctx, ir, o));
    }
    if !ok {
        return vec![];
    }
    // Static extents (None: dynamic) of each dim, from the outputs.
    let extent = |d: usize| -> Option<i64> {
        for (m, v) in maps.iter().zip(ins.iter().chain(&outs)) {
            let ty = ir.value_type(*v);
            let shape = ty.shape()?;
            if let Some(j) = m
                .results
                .iter()
                .position(|e| *e == AffineExpr::Dim(d as u32))
            {
                return shape.get(j).copied().filter(|s| *s != DYNAMIC);
            }
        }
        None
    };
    let nd = parallel.len();
    let volume: Option<i64> = (0..nd).try_fold(1i64, |a, d| a.checked_mul(extent(d)?));
    if volume.is_some_and(|v| v < PARALLEL_MIN_VOLUME) {
        return vec![];
    }
    let window = WINDOW_OPS.contains(&name);
    let mut dims = vec![];
    for (d, par) in parallel.iter().enumerate() {
        let plain = out_maps
            .iter()
            .all(|m| m.results.contains(&AffineExpr::Dim(d as u32)));
        if !par || !plain {
            continue;
        }
        dims.push(d);
        // Enough iterations to split. A window op's dynamic batch is often 1: its channel
        // loop is marked too, and convert-parallel-loops-to-runtime outlines a marked loop of a dynamic count
        // that holds marked loops with the runtime's nested entry, which runs a batch that
        // does not split evenly on the caller and gives the pool to the loop inside.
        if extent(d).is_some_and(|e| e >= 8) || (extent(d).is_none() && !window) {
            break;
        }
    }
    dims
}

/// The order of the loops, outermost first, and the reductions emitted unrolled inside
/// the innermost one (dim, static extent). The op's dims in order, except that the dim
/// the output's contiguous (last) index is moves inside the reductions that follow it
/// when every input either reads along it contiguously too or does not depend on it —
/// and those reductions, when static and of at most [`MAX_UNROLLED`] points in all, are
/// unrolled in its body. A window op (depthwise conv, pooling: `out[n, c, h, w] += in[n,
/// c, h + r, w + s] * k[c, r, s]`) then has a unit-stride innermost loop over `w` that
/// LLVM vectorizes, its 3x3 taps accumulated in registers, instead of a 3-iteration loop
/// over `s`. Each output element still accumulates its reduction in row-major order, so
/// results do not change. A loop the thread pool runs stays in place.
fn loop_order(
    ir: &Ir,
    op: OpId,
    maps: &[AffineMap],
    operands: &[Value],
    par: &[usize],
) -> (Vec<usize>, Vec<(usize, i64)>) {
    let nd = maps.first().map_or(0, |m| m.num_dims as usize);
    let identity = ((0..nd).collect(), vec![]);
    let (ins, outs) = ins_outs(ir, op);
    let Some(reduction) = lbody::reduction_dims(ir, op) else {
        return identity;
    };
    let [out_map] = &maps[ins.len()..] else {
        return identity;
    };
    if outs.len() != 1 || reduction.len() != nd {
        return identity;
    }
    let Some(AffineExpr::Dim(p)) = out_map.results.last() else {
        return identity;
    };
    let p = *p as usize;
    // Reductions after `p`, nothing parallel after it.
    if par.contains(&p) || p + 1 >= nd || !reduction[p + 1..].iter().all(|r| *r) || reduction[p] {
        return identity;
    }
    let contiguous = maps[..ins.len()].iter().zip(operands).all(|(m, v)| {
        !ir.value_type(*v).is_memref()
            || !m.results.iter().any(|e| e.uses_dim(p as u32))
            || m.results.last().is_some_and(|e| e.uses_dim(p as u32))
    });
    if !contiguous {
        return identity;
    }
    // Static extents of the reductions after `p`: an operand dim each indexes plainly.
    let extent = |d: usize| {
        maps.iter().zip(operands).find_map(|(m, v)| {
            let j = m
                .results
                .iter()
                .position(|e| *e == AffineExpr::Dim(d as u32))?;
            let s = *ir.value_type(*v).shape()?.get(j)?;
            (s != DYNAMIC).then_some(s)
        })
    };
    let inner: Option<Vec<(usize, i64)>> = (p + 1..nd).map(|d| Some((d, extent(d)?))).collect();
    let unrolled = inner
        .filter(|r| {
            r.iter()
                .try_fold(1i64, |a, (_, e)| a.checked_mul(*e))
                .is_some_and(|n| (1..=MAX_UNROLLED).contains(&n))
        })
        .unwrap_or_default();
    let mut order: Vec<usize> = (0..nd)
        .filter(|d| *d != p && !unrolled.iter().any(|(u, _)| u == d))
        .collect();
    order.push(p);
    (order, unrolled)
}

/// The most points of the reductions [`loop_order`] unrolls.
const MAX_UNROLLED: i64 = 32;

/// Named window ops whose outer parallel loops go to the thread pool like a generic's
/// (MobileNetV2's depthwise convs ran on one thread; ResNeXt's and RegNet's grouped convs
/// too, which no uKernel takes yet).
const WINDOW_OPS: &[&str] = &[
    ops::linalg::DepthwiseConv2dNchwChwOp::NAME,
    ops::linalg::PoolingNchwMaxOp::NAME,
    ops::linalg::PoolingNchwSumOp::NAME,
    ops::linalg::Conv2dNgchwGfchwOp::NAME,
    ops::linalg::Conv2dNgchwFgchwOp::NAME,
];

/// Iterations below which a generic's loops stay serial.
const PARALLEL_MIN_VOLUME: i64 = 1 << 14;

/// Lower one structured op on buffers to loops; the loops of the dims in `par` are marked
/// `ftuner.parallel`; a permuted copy's blocks fill vector registers of `vector_bytes`.
fn lower(ir: &mut Ir, op: OpId, par: &[usize], vector_bytes: u64) -> Result<(), String> {
    if !ir.results(op).is_empty() {
        return Err("has tensor results: bufferize first".into());
    }
    let maps: Vec<AffineMap> =
        lbody::indexing_maps(ir, op).ok_or("indexing maps unknown to the lowering")?;
    let (ins, outs) = ins_outs(ir, op);
    let check_live = ir.attr(op, crate::runtime_checks::CHECK_LIVE).is_some();
    let what = match ftuner_ir::diag::file_line_col(ir.loc(op)) {
        Some((f, l, c)) => format!("'{}' at {f}:{l}:{c}", ir.name(op)),
        None => format!("'{}'", ir.name(op)),
    };
    let operands: Vec<Value> = ins.iter().chain(&outs).copied().collect();
    if maps.len() != operands.len() {
        return Err("one indexing map per operand expected".into());
    }
    let body = ir
        .regions_of(op)
        .first()
        .and_then(|r| ir.region_entry(*r))
        .ok_or("has no body")?;
    let args = ir.block_args(body).to_vec();
    if args.len() != operands.len() {
        return Err("body arguments do not match the operands".into());
    }
    let nd = maps.first().map_or(0, |m| m.num_dims as usize);
    let loc = ir.loc(op);
    let mut b = B { ir, loc };
    // Loop extents: an operand dim indexed by exactly `d`.
    let mut ubs = vec![];
    for d in 0..nd as u32 {
        let mut found = None;
        for (m, v) in maps.iter().zip(&operands) {
            let ty = b.ir.value_type(*v);
            let Some(shape) = ty.shape().filter(|_| ty.is_memref()) else {
                continue;
            };
            if let Some(j) = m.results.iter().position(|e| *e == AffineExpr::Dim(d)) {
                found = Some((*v, j, shape[j]));
                break;
            }
        }
        let (v, j, s) = found.ok_or_else(|| format!("cannot find the extent of loop d{d}"))?;
        let ub = if s == DYNAMIC {
            let c = b.index(op, j as i64);
            b.val(op, ops::memref::DimOp::NAME, vec![v, c], Type::index())
        } else {
            b.index(op, s)
        };
        ubs.push(ub);
    }
    let zero = b.index(op, 0);
    let one = b.index(op, 1);
    shape_check(&mut b, op, &maps, &operands, &ubs, zero, one)?;
    // (Registers of one element: no block to turn; the plain nest below.)
    if let Some(plan) = permuted_copy(b.ir, op, &maps, body)
        .filter(|p| ftuner_dialects::vector::register_lanes(p.elem, vector_bytes) >= 2)
    {
        lower_permuted_copy(&mut b, op, &plan, &ubs, (zero, one), vector_bytes);
        b.ir.erase_op(op);
        return Ok(());
    }
    // The nest; `anchor` is where the next op goes (the innermost yield).
    let mut ivs = vec![];
    let mut anchor = op;
    // Small static reductions emitted unrolled inside the innermost loop: (dim, extent).
    let mut unrolled: Vec<(usize, i64)> = vec![];
    if transposes(ir_ref(&b), op, &maps) {
        // A permuted copy reads or writes across rows whatever the loop order: walk it in
        // blocks.
        (ivs, anchor) = blocked_nest(&mut b, op, &ubs, (zero, one));
    } else {
        let order;
        (order, unrolled) = loop_order(ir_ref(&b), op, &maps, &operands, par);
        let mut by_dim = vec![None; nd];
        for (d, _) in &unrolled {
            by_dim[*d] = Some(zero);
        }
        for d in order {
            let (iv, y) = for_loop(&mut b, anchor, zero, ubs[d], one);
            if par.contains(&d) {
                if let Some(f) = b.ir.parent_op(y) {
                    b.ir.set_attr(
                        f,
                        ftuner_dialects::scf::PARALLEL_ATTR,
                        Some(Attribute::unit()),
                    );
                }
            }
            by_dim[d] = Some(iv);
            anchor = y;
        }
        ivs = by_dim
            .into_iter()
            .map(|v| v.ok_or("a loop dim without a loop"))
            .collect::<Result<_, _>>()?;
    }
    // The body once per point of the unrolled reductions (row-major), the output's value
    // carried from one to the next in registers: loaded before the first, stored after
    // the last.
    let points: i64 = unrolled.iter().map(|(_, e)| *e).product();
    let mut carried: Vec<Option<Value>> = vec![None; outs.len()];
    for point in 0..points {
        let mut rest = point;
        for (d, e) in unrolled.iter().rev() {
            ivs[*d] = b.index(anchor, rest % e);
            rest /= e;
        }
        let last = point + 1 == points;
        carried = emit_body(
            &mut b,
            anchor,
            body,
            BodyAt {
                operands: &operands,
                maps: &maps,
                args: &args,
                nin: ins.len(),
                ivs: &ivs,
                check_live,
                what: &what,
            },
            &carried,
            last,
        )?;
    }
    b.ir.erase_op(op);
    Ok(())
}

/// Where one copy of a structured op's body goes, and what it reads.
struct BodyAt<'a> {
    operands: &'a [Value],
    maps: &'a [AffineMap],
    args: &'a [Value],
    nin: usize,
    ivs: &'a [Value],
    /// The structured op carried `runtime_checks::CHECK_LIVE`: so do its loads and stores.
    check_live: bool,
    /// The op and its location, for the messages of failed checks.
    what: &'a str,
}

/// One copy of the body of a structured op before `anchor` at the point `at.ivs`: its
/// inputs loaded, each output read from `carried` (else loaded when the body reads it),
/// and its yields stored when `store` (else returned, to carry into the next copy).
fn emit_body(
    b: &mut B<'_>,
    anchor: OpId,
    body: BlockId,
    at: BodyAt<'_>,
    carried: &[Option<Value>],
    store: bool,
) -> Result<Vec<Option<Value>>, String> {
    let BodyAt {
        operands,
        maps,
        args,
        nin,
        ivs,
        check_live,
        what,
    } = at;
    let live = |b: &mut B<'_>, o: Option<OpId>| {
        if let (true, Some(o)) = (check_live, o) {
            b.ir.set_attr(
                o,
                crate::runtime_checks::CHECK_LIVE,
                Some(Attribute::unit()),
            );
        }
    };
    let mut map: FxHashMap<Value, Value> = FxHashMap::default();
    let mut out_idx = vec![];
    for (i, (v, m)) in operands.iter().zip(maps).enumerate() {
        let ty = b.ir.value_type(*v);
        if !ty.is_memref() {
            map.insert(args[i], *v);
            out_idx.push(vec![]);
            continue;
        }
        let idx = m
            .results
            .iter()
            .map(|e| b.expr(anchor, e, ivs))
            .collect::<Result<Vec<_>, _>>()?;
        nonlinear_index_checks(b, anchor, (i, *v), m, &idx, what);
        if let Some(c) = i
            .checked_sub(nin)
            .and_then(|k| carried.get(k).copied().flatten())
        {
            map.insert(args[i], c);
        } else if i < nin || b.ir.has_uses(args[i]) {
            let mut ops = vec![*v];
            ops.extend(idx.iter().copied());
            let l = b.val(anchor, ops::memref::LoadOp::NAME, ops, ty.element_type());
            let lo = b.ir.defining_op(l);
            live(b, lo);
            map.insert(args[i], l);
        }
        out_idx.push(idx);
    }
    let mut yielded = vec![None; operands.len() - nin];
    for o in b.ir.block_ops_vec(body) {
        let name = b.ir.name(o);
        if name == ops::linalg::YieldOp::NAME {
            for (k, y) in b.ir.operands(o).to_vec().into_iter().enumerate() {
                let val = *map.get(&y).unwrap_or(&y);
                let dst = *operands
                    .get(nin + k)
                    .ok_or("yields more values than outputs")?;
                if store {
                    let mut ops = vec![val, dst];
                    ops.extend(out_idx[nin + k].iter().copied());
                    let so = b.op(anchor, ops::memref::StoreOp::NAME, ops, vec![], vec![]);
                    live(b, Some(so));
                } else {
                    yielded[k] = Some(val);
                }
            }
            continue;
        }
        if name == ops::linalg::IndexOp::NAME {
            let d = b.ir.attr(o, "dim").and_then(|a| a.as_i64()).unwrap_or(-1);
            let iv = *ivs
                .get(usize::try_from(d).unwrap_or(usize::MAX))
                .ok_or_else(|| format!("linalg.index {d} beyond the loops"))?;
            map.insert(b.ir.result(o, 0), iv);
            continue;
        }
        let c = b.ir.clone_op(o, &mut map);
        if name == ops::memref::LoadOp::NAME {
            // A load the body computes its own indices for (a gather, e.g. torch-mlir's
            // broadcast emulation) is checked at run time: an index outside the buffer is
            // an assertion failure, never an out-of-bounds read.
            b.bounds_check(anchor, c);
        }
        b.ir.insert_before(anchor, c);
    }
    Ok(yielded)
}

define_pass! {
    /// `convert-linalg-to-loops`: structured ops on buffers to `scf.for` nests.
    pub struct ConvertLinalgToLoopsPass {
        argument: "convert-linalg-to-loops",
        name: "ConvertLinalgToLoops",
        summary: "Convert the operations from the linalg dialect into loops",
        description: "Structured ops on buffers become scf.for nests (one loop per iteration dimension, outermost first; the output's contiguous dim moves inside the small static reductions after it, which are unrolled) with memref.load/memref.store around the op's body. The outer loops of a linalg.generic, a linalg.transpose of the outer dims, a depthwise conv or a pooling whose iterations write disjoint outputs are marked ftuner.parallel (option parallel).",
        options: ConvertLinalgToLoopsOptions {
            "vector-bytes" => vector_bytes: u64 = "64",
                "Width in bytes of the target's vector registers: a permuted copy turns blocks of that many bytes per row in registers (16 x 16 f32 for AVX-512's 64, 8 x 8 for AVX2's 32; a block wider than the registers spills its rows); a power of two from 4 to 64, and a register of one element leaves the plain nest";
            "parallel" => parallel: bool = "true",
                "Mark the outer loops of a linalg.generic, a linalg.transpose walked as a plain nest (rows of 64 or more elements kept in place), a depthwise conv or a pooling whose iterations write disjoint outputs (parallel dims every output reads plainly; a body that only computes and reads) 'ftuner.parallel', for the runtime's thread pool (convert-parallel-loops-to-runtime); not for generics of fewer than 16384 iterations";
        },
        statistics: {
            lowered: "num-lowered" => "Structured ops lowered to loops",
            marked: "num-parallel-loops" => "Loops marked ftuner.parallel",
        },
    }
}

impl ConvertLinalgToLoopsPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        opts: &ConvertLinalgToLoopsOptions,
    ) -> Result<(), PassFailure> {
        if !opts.vector_bytes.is_power_of_two() || !(4..=64).contains(&opts.vector_bytes) {
            cx.emit(Diagnostic::error(
                cx.ir.loc(top),
                format!(
                    "convert-linalg-to-loops: vector-bytes={} is not a power of two from 4 to 64",
                    opts.vector_bytes
                ),
            ));
            return Err(PassFailure);
        }
        let mut ops = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            let n = cx.ir.name(o);
            if n.starts_with("linalg.")
                && n != ops::linalg::YieldOp::NAME
                && n != ops::linalg::IndexOp::NAME
            {
                ops.push(o);
            }
        });
        let mut failed = false;
        for o in ops {
            if !cx.ir.is_alive(o) {
                continue;
            }
            let par = match lbody::indexing_maps(cx.ir, o) {
                Some(maps) if opts.parallel => parallel_dims(cx.ctx, cx.ir, o, &maps),
                _ => vec![],
            };
            self.marked += par.len() as u64;
            match lower(cx.ir, o, &par, opts.vector_bytes) {
                Ok(()) => self.lowered += 1,
                Err(m) => {
                    cx.emit(Diagnostic::error(
                        cx.ir.loc(o),
                        format!("'{}' op {m}", cx.ir.name(o)),
                    ));
                    failed = true;
                }
            }
        }
        if failed {
            Err(PassFailure)
        } else {
            Ok(())
        }
    }
}
