//! `lower-ukernels` for GPU targets, on buffers (after `bufferize`): a `ukernel.patch`
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

use crate::gpu::GpuFamily;
use crate::lower::{
    conv_layout, eval_expr, layout, read_plans, reduction_dim, res_pos, residue_tiles,
    shape_asserts, Plan, B,
};
use ftuner_dialects::linalg::ins_outs;
use ftuner_ir::{intern_name, AttrKind, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value};
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
        if ir.name(o) == "gpu.module" && ir.symbol_name(o) == Some(KERNEL_MODULE) {
            return body_block(ir, o).ok_or_else(|| "gpu.module without a body".into());
        }
    }
    let gm = ir.create_op(
        OpSpec::new(intern_name("gpu.module"), loc)
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

/// Whether every value the regions of `op` use is defined inside `op` (or, with
/// `constants`, is an `arith.constant` from outside, which can be cloned in).
pub(crate) fn body_is_closed(ir: &Ir, op: OpId, constants: bool) -> bool {
    let mut ok = true;
    ir.walk_pre(op, &mut |o| {
        if o == op {
            return;
        }
        for v in ir.operands(o) {
            let def = ir.defining_op(*v);
            let inside = match def {
                Some(d) => d != op && ir.is_ancestor(op, d),
                None => ir
                    .value_block(*v)
                    .and_then(|b| ir.block_parent_op(b))
                    .is_some_and(|p| ir.is_ancestor(op, p)),
            };
            let constant = constants && def.is_some_and(|d| ir.name(d) == "arith.constant");
            ok &= inside || constant;
        }
    });
    ok
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
        .any(|p| crate::lower::plan_padding(p).iter().any(|x| *x > 0))
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
    while ir.name(f) != "func.func" {
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
                b.val(scratch, "memref.dim", vec![out, pv], Type::index(), vec![])
            }
        }
    };
    let mut msz = b.index(scratch, 1);
    for d in shape.ms.clone() {
        let e = dim(&mut b, d);
        msz = b.ibin(scratch, "arith.muli", msz, e);
    }
    let nsz = dim(&mut b, shape.dn);
    let mut nb = b.index(scratch, 1);
    for d in shape.batch.clone() {
        let e = dim(&mut b, d);
        nb = b.ibin(scratch, "arith.muli", nb, e);
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
    let iff = b.op(blk, "scf.if", vec![pos], vec![], vec![], 2);
    let (tr, er) = (b.ir.regions_of(iff)[0], b.ir.regions_of(iff)[1]);
    let tb = b.ir.append_block(tr, &[]);
    then(b, tb);
    b.yield_(tb, "scf.yield", vec![]);
    let eb = b.ir.append_block(er, &[]);
    b.yield_(eb, "scf.yield", vec![]);
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

struct Kernels {
    prefix: String,
    threads: FxHashMap<(i64, i64), i64>,
    ms: Vec<i64>,
    ns: Vec<i64>,
    /// A, B, C and the epilogue operands.
    operands: Vec<Value>,
}

/// Where plan tables go: private constant globals of the top-level module.
struct Tables {
    top: OpId,
    stem: String,
}

impl Tables {
    /// A `memref.global` holding `residues` as a `main x len` index table; its name.
    fn global(&self, ir: &mut Ir, which: &str, plan: &Plan, len: usize, loc: Attribute) -> String {
        let (main, _, residues) = plan;
        let name = format!("__{}{which}_plan", self.stem);
        let body = body_block(ir, self.top);
        if body.is_some_and(|b| symbols(ir, b).contains(&name)) {
            return name;
        }
        let mut flat = vec![];
        for r in residues {
            for k in 0..len {
                flat.push(ftuner_ir::Scalar::Int(
                    r.get(k).copied().unwrap_or(0) as i128
                ));
            }
        }
        let tty = Type::tensor(vec![*main, len as i64], Type::index());
        let g = ir.create_op(
            OpSpec::new(intern_name("memref.global"), loc)
                .prop("sym_name", Attribute::string(name.clone()))
                .prop("sym_visibility", Attribute::string("private"))
                .prop(
                    "type",
                    Attribute::type_attr(Type::memref(vec![*main, len as i64], Type::index())),
                )
                .prop("initial_value", Attribute::dense(tty, flat))
                .prop("constant", Attribute::unit()),
        );
        if let Some(body) = body {
            ir.prepend_op(body, g);
        }
        name
    }
}

/// The tiles of one dimension of extent `total`: all full tiles as one group
/// (`body(offset 0, count total/main, main)`), then the residue's tiles one by one
/// (`body(offset, 1, size)`), from the plan table or, for a static extent, in line.
fn cover(
    b: &mut B<'_>,
    blk: BlockId,
    total: Value,
    plan: &Plan,
    tables: &Tables,
    which: &str,
    body: &mut dyn FnMut(&mut B<'_>, BlockId, Value, Value, Sz),
) {
    let (main, st, residues) = plan;
    let main = *main;
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    if let Some(st) = *st {
        if st >= main {
            let q = b.index(blk, st / main);
            body(b, blk, c0, q, Sz::Static(main));
        }
        let mut off = st - st % main;
        for &t in &residues[(st % main) as usize] {
            let o = b.index(blk, off);
            body(b, blk, o, c1, Sz::Static(t));
            off += t;
        }
        return;
    }
    let cm = b.index(blk, main);
    let q = b.ibin(blk, "arith.divui", total, cm);
    let full = b.ibin(blk, "arith.muli", q, cm);
    let rem = b.ibin(blk, "arith.subi", total, full);
    // Full tiles: one group, when there is any.
    if_positive(b, blk, q, &mut |b, tb| {
        let c0t = b.index(tb, 0);
        body(b, tb, c0t, q, Sz::Static(main));
    });
    // The residue's tiles, from the plan table.
    let len = residues.iter().map(|v| v.len()).max().unwrap_or(0);
    if len == 0 {
        return;
    }
    let loc = b.loc;
    let name = tables.global(b.ir, which, plan, len, loc);
    let gty = Type::memref(vec![main, len as i64], Type::index());
    let table = b.val(
        blk,
        "memref.get_global",
        vec![],
        gty,
        vec![("name", Attribute::symbol_ref(name))],
    );
    residue_tiles(
        b,
        blk,
        len as i64,
        full,
        vec![],
        &mut |b, lb, k| {
            b.val(
                lb,
                "memref.load",
                vec![table, rem, k],
                Type::index(),
                vec![],
            )
        },
        &mut |b, tb, off, t, _| {
            let one = b.index(tb, 1);
            body(b, tb, off, one, Sz::Dyn(t));
            vec![]
        },
    );
}

/// Launch the kernel of tile `(mt, nt)` over `grid` blocks at `(m0, n0)`; a size known
/// only at run time selects the kernel with an `scf.index_switch` on `1000·m + n`.
fn launch(
    b: &mut B<'_>,
    blk: BlockId,
    k: &Kernels,
    (mt, nt): (Sz, Sz),
    grid: [Value; 3],
    (m0, n0): (Value, Value),
) {
    let one = |b: &mut B<'_>, blk: BlockId, m: i64, n: i64| {
        let t = k.threads[&(m, n)];
        let tv = b.index(blk, t);
        let c1 = b.index(blk, 1);
        let mut ops = grid.to_vec();
        ops.extend([tv, c1, c1]);
        ops.extend(k.operands.iter().copied());
        ops.extend([m0, n0]);
        let segs = [
            0,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            0,
            0,
            0,
            k.operands.len() as i32 + 2,
            0,
        ];
        let sym = Attribute::get(AttrKind::SymbolRef {
            root: KERNEL_MODULE.into(),
            nested: vec![format!("{}{m}x{n}", k.prefix)],
        });
        b.op(
            blk,
            "gpu.launch_func",
            ops,
            vec![],
            vec![
                ("kernel", sym),
                ("operandSegmentSizes", Attribute::dense_i32_array(&segs)),
            ],
            0,
        );
    };
    let (sel_m, ms) = match mt {
        Sz::Static(m) => (None, vec![m]),
        Sz::Dyn(v) => (Some(v), k.ms.clone()),
    };
    let (sel_n, ns) = match nt {
        Sz::Static(n) => (None, vec![n]),
        Sz::Dyn(v) => (Some(v), k.ns.clone()),
    };
    if sel_m.is_none() && sel_n.is_none() {
        one(b, blk, ms[0], ns[0]);
        return;
    }
    // selector = 1000·m + n
    let mv = match sel_m {
        Some(v) => v,
        None => b.index(blk, ms[0]),
    };
    let nv = match sel_n {
        Some(v) => v,
        None => b.index(blk, ns[0]),
    };
    let thousand = b.index(blk, 1000);
    let hi = b.ibin(blk, "arith.muli", mv, thousand);
    let sel = b.ibin(blk, "arith.addi", hi, nv);
    let mut cases = vec![];
    for &m in &ms {
        for &n in &ns {
            cases.push((m, n));
        }
    }
    let keys: Vec<i64> = cases.iter().map(|(m, n)| 1000 * m + n).collect();
    let sw = b.op(
        blk,
        "scf.index_switch",
        vec![sel],
        vec![],
        vec![("cases", Attribute::dense_i64_array(&keys))],
        cases.len() + 1,
    );
    let regions = b.ir.regions_of(sw).to_vec();
    let d = b.ir.append_block(regions[0], &[]);
    b.yield_(d, "scf.yield", vec![]);
    for (i, (m, n)) in cases.into_iter().enumerate() {
        let cb = b.ir.append_block(regions[i + 1], &[]);
        one(b, cb, m, n);
        b.yield_(cb, "scf.yield", vec![]);
    }
}

/// The kernel of an `m x n` block with `tm x tn` elements per thread.
fn build_kernel(
    ir: &mut Ir,
    patch: OpId,
    s: &Shape,
    name: &str,
    (m, n): (i64, i64),
    (tm, tn): (i64, i64),
) -> Result<OpId, String> {
    let loc = ir.loc(patch);
    let idx = Type::index();
    let mut params = s.types.clone();
    params.extend([idx, idx]);
    let fty = Type::function(params.clone(), vec![]);
    let f = ir.create_op(
        // Attributes, not properties: upstream's gpu.func keeps them in its dictionary.
        OpSpec::new(intern_name("gpu.func"), loc)
            .attr("sym_name", Attribute::string(name))
            .attr("function_type", Attribute::type_attr(fty))
            .regions(1),
    );
    ir.set_attr(f, "gpu.kernel", Some(Attribute::unit()));
    let r = ir.regions_of(f)[0];
    let e = ir.append_block(r, &params);
    let args = ir.block_args(e).to_vec();
    let ne = s.emaps.len();
    let (a, bm, c) = (args[0], args[1], args[2]);
    let extras = args[3..3 + ne].to_vec();
    let (m0, n0) = (args[3 + ne], args[4 + ne]);
    let mut b = B::new(ir, loc);
    let special = |b: &mut B<'_>, op: &str, d: &str| {
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
    };
    let tid = special(&mut b, "gpu.thread_id", "x");
    let bx = special(&mut b, "gpu.block_id", "x");
    let by = special(&mut b, "gpu.block_id", "y");
    let cols = b.index(e, n / tn);
    let tx = b.ibin(e, "arith.remui", tid, cols);
    let ty = b.ibin(e, "arith.divui", tid, cols);
    let cm = b.index(e, m);
    let cn = b.index(e, n);
    let rb = b.ibin(e, "arith.muli", by, cm);
    let rb = b.ibin(e, "arith.addi", m0, rb);
    let row = b.ibin(e, "arith.addi", rb, ty);
    let cb = b.ibin(e, "arith.muli", bx, cn);
    let cb = b.ibin(e, "arith.addi", n0, cb);
    let col = b.ibin(e, "arith.addi", cb, tx);
    // Extent of dim `d` from the first operand that indexes it directly.
    let extent = |b: &mut B<'_>, d: u32| -> Value {
        let (k, p) = [2usize, 1, 0]
            .iter()
            .find_map(|k| res_pos(&s.maps[*k], d).map(|p| (*k, p)))
            .unwrap_or((2, 0));
        match s.types[k].shape().and_then(|x| x.get(p)).copied() {
            Some(x) if x != ftuner_ir::DYNAMIC => b.index(e, x),
            _ => {
                let pv = b.index(e, p as i64);
                b.val(e, "memref.dim", vec![args[k], pv], idx, vec![])
            }
        }
    };
    // Each of the thread's rows: its flattened M index, delinearized over the M dims.
    let mext: Vec<Value> = if s.ms.len() > 1 {
        s.ms.iter().map(|d| extent(&mut b, *d)).collect()
    } else {
        vec![]
    };
    let mut rows: Vec<Vec<(u32, Value)>> = vec![];
    for i in 0..tm {
        let mut flat = row;
        if i > 0 {
            let o = b.index(e, i * (m / tm));
            flat = b.ibin(e, "arith.addi", row, o);
        }
        if s.ms.len() == 1 {
            rows.push(vec![(s.ms[0], flat)]);
            continue;
        }
        let mut pos = vec![];
        for (d, x) in s.ms.iter().zip(&mext).rev() {
            pos.push((*d, b.ibin(e, "arith.remui", flat, *x)));
            flat = b.ibin(e, "arith.divui", flat, *x);
        }
        rows.push(pos);
    }
    let mut colv = vec![col];
    for j in 1..tn {
        let o = b.index(e, j * (n / tn));
        colv.push(b.ibin(e, "arith.addi", col, o));
    }
    // Batch indices: blockIdx.z delinearized over the batch dims (last fastest).
    let mut fixed: Vec<(u32, Value)> = vec![];
    if !s.batch.is_empty() {
        let mut z = special(&mut b, "gpu.block_id", "z");
        for (i, d) in s.batch.iter().enumerate().rev() {
            if i == 0 {
                fixed.push((*d, z));
                break;
            }
            let ext = extent(&mut b, *d);
            fixed.push((*d, b.ibin(e, "arith.remui", z, ext)));
            z = b.ibin(e, "arith.divui", z, ext);
        }
    }
    let kext: Vec<Value> = s.ks.iter().map(|d| extent(&mut b, *d)).collect();
    let c0 = b.index(e, 0);
    let c1 = b.index(e, 1);
    // Subscripts of operand `k` at (row i, column j, k values) in block `blk`.
    let dn = s.dn;
    let subscripts = |b: &mut B<'_>,
                      blk: BlockId,
                      map: &ftuner_ir::AffineMap,
                      row: &[(u32, Value)],
                      nj: Value,
                      kv: &[(u32, Value)]|
     -> Vec<Value> {
        let at = |d: u32| -> Value {
            if d == dn {
                return nj;
            }
            row.iter()
                .chain(kv)
                .chain(&fixed)
                .find(|(x, _)| *x == d)
                .map_or(c0, |(_, v)| *v)
        };
        map.results
            .iter()
            .map(|x| eval_expr(b, blk, x, &at))
            .collect()
    };
    // Accumulators from C.
    let mut accs = vec![];
    for r in &rows {
        for &nj in &colv {
            let mut ops = vec![c];
            ops.extend(subscripts(&mut b, e, &s.maps[2], r, nj, &[]));
            accs.push(b.val(e, "memref.load", ops, s.elem, vec![]));
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
    let lb = blk;
    let a_elem = s.types[0].element_type();
    let b_elem = s.types[1].element_type();
    let avals: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut ops = vec![a];
            ops.extend(subscripts(&mut b, lb, &s.maps[0], r, col, &kv));
            b.val(lb, "memref.load", ops, a_elem, vec![])
        })
        .collect();
    let bvals: Vec<Value> = colv
        .iter()
        .map(|nj| {
            let mut ops = vec![bm];
            ops.extend(subscripts(&mut b, lb, &s.maps[1], &rows[0], *nj, &kv));
            b.val(lb, "memref.load", ops, b_elem, vec![])
        })
        .collect();
    // The patch body, once per element.
    let pbody = body_block(b.ir, patch).ok_or("the patch has no body")?;
    let pargs = b.ir.block_args(pbody).to_vec();
    let pops = b.ir.block_ops_vec(pbody);
    let (last, rest) = pops.split_last().ok_or("the patch body is empty")?;
    // `acc + a·b` on floats becomes one fused multiply-add (`fma.rn`), as the CPU register
    // tiles use `vector.fma`; any other body is cloned as it is.
    let fused = crate::lower::mul_add_elem(b.ir, patch).is_some();
    let mut news = vec![];
    for (i, _) in rows.iter().enumerate() {
        for (j, _) in colv.iter().enumerate() {
            let acc = cur[i * colv.len() + j];
            if fused {
                let fm = Attribute::dialect("arith", "fastmath<none>");
                news.push(b.val(
                    lb,
                    "math.fma",
                    vec![avals[i], bvals[j], acc],
                    s.elem,
                    vec![("fastmath", fm)],
                ));
                continue;
            }
            let mut map: FxHashMap<Value, Value> = FxHashMap::default();
            map.insert(pargs[0], avals[i]);
            map.insert(pargs[1], bvals[j]);
            map.insert(pargs[2], acc);
            for o in rest {
                let n = b.ir.clone_op(*o, &mut map);
                b.ir.append_op(lb, n);
            }
            let y = b.ir.operands(*last).first().copied().ok_or("empty yield")?;
            news.push(*map.get(&y).unwrap_or(&y));
        }
    }
    let mut vals = news;
    for (l, lb) in loops.iter().rev() {
        b.yield_(*lb, "scf.yield", vals);
        vals = b.ir.results(*l).to_vec();
    }
    let mut r = vals.iter();
    let epi = ftuner_dialects::ukernel::epilogue_block(b.ir, patch);
    for row in &rows {
        for &nj in &colv {
            let mut v = *r.next().ok_or("result count")?;
            // The fused epilogue, on the finished element.
            if let Some(eb) = epi {
                let eargs = b.ir.block_args(eb).to_vec();
                let mut map: FxHashMap<Value, Value> = FxHashMap::default();
                map.insert(eargs[0], v);
                for (j, (x, m)) in extras.iter().zip(&s.emaps).enumerate() {
                    let mut ops = vec![*x];
                    ops.extend(subscripts(&mut b, e, m, row, nj, &[]));
                    let ty = s.types[3 + j].element_type();
                    map.insert(eargs[1 + j], b.val(e, "memref.load", ops, ty, vec![]));
                }
                let eops = b.ir.block_ops_vec(eb);
                let (y, rest) = eops.split_last().ok_or("empty epilogue")?;
                for o in rest {
                    let n = b.ir.clone_op(*o, &mut map);
                    b.ir.append_op(e, n);
                }
                let yv = b.ir.operands(*y).first().copied().ok_or("empty yield")?;
                v = *map.get(&yv).unwrap_or(&yv);
            }
            let mut ops = vec![v, c];
            ops.extend(subscripts(&mut b, e, &s.maps[2], row, nj, &[]));
            b.op(e, "memref.store", ops, vec![], vec![], 0);
        }
    }
    b.op(e, "gpu.return", vec![], vec![], vec![], 0);
    Ok(f)
}
