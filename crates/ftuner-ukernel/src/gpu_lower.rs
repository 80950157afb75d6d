//! `lower-ukernels-to-gpu`: GPU targets, on buffers (after `bufferize`): a `ukernel.patch`
//! becomes thread-block kernels in a `gpu.module` and `gpu.launch_func`s that cover the
//! run-time M x N space with the patch plan, the same plan the CPU loops follow.
//!
//! * **Kernels.** One `gpu.func` per (m, n) block tile the plans can use
//!   (`@<func>_p<k>_<m>x<n>`). A block of `(m/tm)·(n/tn)` threads computes an m x n tile
//!   of C at `(m0 + blockIdx.y·m, n0 + blockIdx.x·n)` for batch `blockIdx.z`; each thread
//!   owns `tm x tn` elements strided by the thread grid (`row = ty + i·m/tm`,
//!   `col = tx + j·n/tn`), so the threads of a warp touch adjacent columns (coalesced), and
//!   keeps them in registers (`scf.for` over K with `tm·tn` `iter_args`), then stores them.
//!   `(tm, tn)` is the hardware model's thread tile for that block shape
//!   (`crate::gpu::build`); shapes the family does not hold (narrow corners under a warp)
//!   get one element per thread. `acc + a·b` becomes `math.fma` (`fma.rn.f32` in PTX); any
//!   other scalar body is cloned into the K loop as it is.
//! * **Launches.** The host side mirrors the CPU plan loops, with whole strips of tiles
//!   becoming one grid: the full M tiles x full N tiles are one launch with grid
//!   `(N/n, M/m, batch)`; the N residue's tiles (from the plan table, `plan[N mod n]`) are
//!   launches of one column of blocks; the M residue's tiles the same over rows; the
//!   corner their product. A tile size known only at run time selects its kernel with an
//!   `scf.index_switch` on `1000·m + n`. Static extents are specialized (no table).
//! * **Not done:** shared-memory staging of the A/B panels (`bk`), double buffering and
//!   tensor cores; each thread reads its A and B elements from global memory (through L1).
//!   The plan and the tile shapes are the model's; the kernel body is the simplest correct
//!   one for them.

use ftuner_dialects::ops;
mod kernel;
mod launch;
mod pass;

use crate::epilogue::body_is_closed;
use crate::gpu::GpuFamily;
use crate::lower::{
    conv_layout, layout, plan_padding, read_plans, reduction_dim, res_pos, shape_asserts, Plan, B,
};
use ftuner_dialects::linalg::ins_outs;
use ftuner_ir::{intern_name, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value};
use kernel::build_kernel;
use launch::{cover, launch, Kernels, Tables};
pub use pass::LowerUkernelsToGpuPass;
use rustc_hash::FxHashMap;

/// Name of the `gpu.module` that holds the kernels of every patch of a module.
pub const KERNEL_MODULE: &str = "ftuner_kernels";

/// A tile size: known when the kernels are built, or read from a plan table at run time.
#[derive(Clone, Copy)]
enum Sz {
    Static(i64),
    Dyn(Value),
}

/// The tile sizes a plan can use along its dimension.
fn sizes_used(plan: &Plan) -> Vec<i64> {
    let (main, st, res) = plan;
    let mut v: Vec<i64> = match st {
        Some(s) => {
            let mut v: Vec<i64> = res[(s % main) as usize].clone();
            if *s >= *main {
                v.push(*main);
            }
            v
        }
        None => {
            let mut v: Vec<i64> = res.iter().flatten().copied().collect();
            v.push(*main);
            v
        }
    };
    v.sort_unstable_by(|a, b| b.cmp(a));
    v.dedup();
    v
}

/// The outermost op (the top-level module).
fn top_op(ir: &Ir, mut op: OpId) -> OpId {
    while let Some(p) = ir.parent_op(op) {
        op = p;
    }
    op
}

fn body_block(ir: &Ir, op: OpId) -> Option<BlockId> {
    ir.regions_of(op).first().and_then(|r| ir.region_entry(*r))
}

/// The `gpu.module @ftuner_kernels` of the top-level module (created when missing).
fn kernel_module(ir: &mut Ir, top: OpId, loc: Attribute) -> Result<BlockId, String> {
    let body = body_block(ir, top).ok_or("the top-level op has no body")?;
    for o in ir.block_ops_vec(body) {
        if ir.name(o) == ops::gpu::ModuleOp::NAME && ir.symbol_name(o) == Some(KERNEL_MODULE) {
            return body_block(ir, o).ok_or_else(|| "gpu.module without a body".into());
        }
    }
    let gm = ir.create_op(
        OpSpec::new(intern_name(ops::gpu::ModuleOp::NAME), loc)
            .prop("sym_name", Attribute::string(KERNEL_MODULE))
            .regions(1),
    );
    let r = ir.regions_of(gm)[0];
    let b = ir.append_block(r, &[]);
    ir.append_op(body, gm);
    // What MLIR's verifier asks of a module that launches kernels.
    ir.set_attr(top, "gpu.container_module", Some(Attribute::unit()));
    Ok(b)
}

/// Symbols defined directly in a block.
fn symbols(ir: &Ir, b: BlockId) -> Vec<String> {
    ir.block_ops_vec(b)
        .into_iter()
        .filter_map(|o| ir.symbol_name(o).map(str::to_string))
        .collect()
}

/// What a kernel needs to know about the patch: the loop dims by role (M dims, flattened
/// row-major into the plan's M; the N dim; the reduction dims; batch dims), the maps.
struct Shape {
    ms: Vec<u32>,
    dn: u32,
    ks: Vec<u32>,
    batch: Vec<u32>,
    maps: Vec<ftuner_ir::AffineMap>,
    /// Types of A, B, C, then the epilogue operands.
    types: Vec<Type>,
    /// The epilogue operands' maps (over the patch's loop dims).
    emaps: Vec<ftuner_ir::AffineMap>,
    elem: Type,
}

/// The patch's loop structure: a plain (batched) GEMM, or a windowed contraction
/// (convolution as implicit GEMM: M = the flattened output positions, K = C·KH·KW).
fn shape_of(ir: &Ir, op: OpId, types: Vec<Type>) -> Result<Shape, String> {
    let emaps = ftuner_dialects::ukernel::epilogue_maps(ir, op);
    let elem = types[2].element_type();
    if let Some(lay) = layout(ir, op) {
        let dk = reduction_dim(&lay).ok_or("GPU kernels need exactly one reduction dimension")?;
        let nd = lay.maps[0].num_dims;
        let batch: Vec<u32> = (0..nd)
            .filter(|d| ![lay.dm, lay.dn, dk].contains(d))
            .collect();
        if batch.iter().any(|d| res_pos(&lay.maps[2], *d).is_none()) {
            return Err("every parallel dimension must index the output".into());
        }
        if res_pos(&lay.maps[1], dk).is_none() {
            return Err("the reduction dimension must index B".into());
        }
        return Ok(Shape {
            ms: vec![lay.dm],
            dn: lay.dn,
            ks: vec![dk],
            batch,
            maps: lay.maps,
            types,
            emaps,
            elem,
        });
    }
    let cl = conv_layout(ir, op).ok_or(
        "GPU kernels are built for (batched) GEMMs with plain indexing and for windowed contractions with one N dimension",
    )?;
    if cl.ms.iter().any(|d| res_pos(&cl.maps[2], *d).is_none()) {
        return Err("every M dimension must index the output".into());
    }
    Ok(Shape {
        ms: cl.ms,
        dn: cl.dn,
        ks: cl.ks,
        batch: vec![],
        maps: cl.maps,
        types,
        emaps,
        elem,
    })
}

/// Lower one GPU patch on buffers; `Err` says why it was left alone.
pub(crate) fn lower_gpu(ir: &mut Ir, op: OpId, fam: &GpuFamily) -> Result<(), String> {
    let plans = read_plans(ir, op)?;
    if [&plans.m, &plans.n]
        .iter()
        .any(|p| plan_padding(p).iter().any(|x| *x > 0))
    {
        return Err("padded plans are lowered on tensors only (before bufferize)".into());
    }
    let (ins, outs) = ins_outs(ir, op);
    if ins.len() != 2 || outs.len() != 1 || !ir.results(op).is_empty() {
        return Err("expects two input buffers and one output buffer".into());
    }
    let mut operands = vec![ins[0], ins[1], outs[0]];
    operands.extend(ftuner_dialects::ukernel::epilogue_inputs(ir, op));
    if !operands.iter().all(|v| ir.value_type(*v).is_memref()) {
        return Err("GPU patches are lowered on buffers: run bufferize first".into());
    }
    if !body_is_closed(ir, op, false) {
        return Err("the body uses values defined outside the patch".into());
    }
    let shape = shape_of(ir, op, operands.iter().map(|v| ir.value_type(*v)).collect())?;
    let (ms, ns) = (sizes_used(&plans.m), sizes_used(&plans.n));
    if ms.iter().chain(&ns).any(|s| *s >= 1000) {
        return Err("tile sizes of 1000 or more are not lowered".into());
    }
    shape_asserts(ir, op)?;

    // Kernels, one per block shape the plans use.
    let loc = ir.loc(op);
    let top = top_op(ir, op);
    let gm = kernel_module(ir, top, loc)?;
    let mut f = op;
    while ir.name(f) != ops::func::FuncOp::NAME {
        match ir.parent_op(f) {
            Some(p) => f = p,
            None => break,
        }
    }
    let func = ir.symbol_name(f).unwrap_or("kernel").to_string();
    let taken = symbols(ir, gm);
    let mut k = 0;
    let prefix = loop {
        let p = format!("{func}_p{k}_");
        if !taken.iter().any(|s| s.starts_with(&p)) {
            break p;
        }
        k += 1;
    };
    let mut threads: FxHashMap<(i64, i64), i64> = FxHashMap::default();
    for &m in &ms {
        for &n in &ns {
            let (tm, tn) = thread_tile(fam, m, n);
            let t = (m / tm) * (n / tn);
            if t > 1024 {
                return Err(format!("block {m}x{n} would need {t} threads"));
            }
            threads.insert((m, n), t);
            let kf = build_kernel(
                ir,
                op,
                &shape,
                &format!("{prefix}{m}x{n}"),
                (m, n),
                (tm, tn),
            )?;
            ir.append_op(gm, kf);
        }
    }

    // The host side: launches over the plan.
    let scratch = ir.new_block(&[]);
    let mut b = B::new(ir, loc);
    let out = operands[2];
    let dim = |b: &mut B<'_>, d: u32| -> Value {
        let p = res_pos(&shape.maps[2], d).unwrap_or(0);
        match shape.types[2].shape().and_then(|s| s.get(p)).copied() {
            Some(s) if s != ftuner_ir::DYNAMIC => b.index(scratch, s),
            _ => {
                let pv = b.index(scratch, p as i64);
                b.val(
                    scratch,
                    ops::memref::DimOp::NAME,
                    vec![out, pv],
                    Type::index(),
                    vec![],
                )
            }
        }
    };
    let mut msz = b.index(scratch, 1);
    for d in shape.ms.clone() {
        let e = dim(&mut b, d);
        msz = b.ibin(scratch, ops::arith::MuliOp::NAME, msz, e);
    }
    let nsz = dim(&mut b, shape.dn);
    let mut nb = b.index(scratch, 1);
    for d in shape.batch.clone() {
        let e = dim(&mut b, d);
        nb = b.ibin(scratch, ops::arith::MuliOp::NAME, nb, e);
    }
    let names = Kernels {
        prefix,
        threads,
        ms: ms.clone(),
        ns: ns.clone(),
        operands,
    };
    let tables = Tables {
        top,
        stem: names.prefix.clone(),
    };
    let mut all = |b: &mut B<'_>, blk: BlockId| {
        cover(
            b,
            blk,
            msz,
            &plans.m,
            &tables,
            "m",
            &mut |b, blk, m0, gy, mt| {
                cover(
                    b,
                    blk,
                    nsz,
                    &plans.n,
                    &tables,
                    "n",
                    &mut |b, blk, n0, gx, nt| {
                        launch(b, blk, &names, (mt, nt), [gx, gy, nb], (m0, n0));
                    },
                );
            },
        );
    };
    // An empty batch launches nothing (a grid dimension of 0 is not a launch).
    let batch_static = shape.batch.iter().all(|d| {
        let p = res_pos(&shape.maps[2], *d).unwrap_or(0);
        matches!(shape.types[2].shape().and_then(|s| s.get(p)), Some(s) if *s > 0)
    });
    if batch_static {
        all(&mut b, scratch);
    } else {
        if_positive(&mut b, scratch, nb, &mut all);
    }
    finish(ir, op, scratch)
}

/// `scf.if x > 0` without results; `then` fills the then-block (the else-block is empty).
fn if_positive(b: &mut B<'_>, blk: BlockId, x: Value, then: &mut dyn FnMut(&mut B<'_>, BlockId)) {
    let c0 = b.index(blk, 0);
    let pos = b.cmpi(blk, 4, x, c0);
    let iff = b.op(blk, ops::scf::IfOp::NAME, vec![pos], vec![], vec![], 2);
    let (tr, er) = (b.ir.regions_of(iff)[0], b.ir.regions_of(iff)[1]);
    let tb = b.ir.append_block(tr, &[]);
    then(b, tb);
    b.yield_(tb, ops::scf::YieldOp::NAME, vec![]);
    let eb = b.ir.append_block(er, &[]);
    b.yield_(eb, ops::scf::YieldOp::NAME, vec![]);
}

/// Move the host code built in `scratch` before the patch, which it replaces.
fn finish(ir: &mut Ir, op: OpId, scratch: BlockId) -> Result<(), String> {
    for o in ir.block_ops_vec(scratch) {
        ir.unlink(o);
        ir.insert_before(op, o);
    }
    ir.erase_block(scratch);
    ir.erase_op(op);
    Ok(())
}

/// The model's thread tile for an m x n block, or one element per thread.
fn thread_tile(fam: &GpuFamily, m: i64, n: i64) -> (i64, i64) {
    fam.tiles
        .iter()
        .find(|k| k.bm as i64 == m && k.bn as i64 == n && !k.tensor_cores)
        .map(|k| (k.tm as i64, k.tn as i64))
        .filter(|(tm, tn)| m % tm == 0 && n % tn == 0)
        .unwrap_or((1, 1))
}
