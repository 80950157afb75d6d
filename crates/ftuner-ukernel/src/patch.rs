//! `patch-ukernels`: each contraction becomes a `ukernel.patch` carrying its uKernel
//! family and the patch plans of M and N.

use crate::contraction::{find_all, Contraction, Kind};
use crate::plan::{plan_dim, DimPlan};
use crate::schedule::Schedule;
use crate::{DType, Family};
use ftuner_dialects::linalg::{body, ins_outs};
use ftuner_dialects::ops;
use ftuner_dialects::ukernel::{plan_attr, read_plan};
use ftuner_ir::{intern_name, Attribute, Diagnostic, Ir, OpId, OpSpec, DYNAMIC};
use ftuner_pass::{define_pass, PassContext, PassFailure};

/// Per-dimension tiles with their cost per call, from a family.
/// Tile sizes of one dimension with the estimated cost of one call of each.
pub type DimTiles = Vec<(u32, f64)>;

pub fn dim_tiles(f: &Family) -> (DimTiles, DimTiles) {
    match f {
        Family::Cpu(c) => {
            let all = c.all();
            let cost = |m: u32, n: u32| {
                all.iter()
                    .find(|k| k.mr == m && k.nr == n)
                    .map(|k| k.cycles_per_call)
            };
            let mut ms: Vec<(u32, f64)> = vec![];
            let mut ns: Vec<(u32, f64)> = vec![];
            for k in &all {
                if k.nr == c.main.nr && !ms.iter().any(|x| x.0 == k.mr) {
                    ms.push((k.mr, cost(k.mr, c.main.nr).unwrap_or(k.cycles_per_call)));
                }
                if k.mr == c.main.mr && !ns.iter().any(|x| x.0 == k.nr) {
                    ns.push((k.nr, cost(c.main.mr, k.nr).unwrap_or(k.cycles_per_call)));
                }
            }
            (ms, ns)
        }
        Family::Gpu(g) => {
            let main = g.main();
            // Cost of a block tile: its FLOPs over its estimated throughput.
            let t = |k: &crate::gpu::GpuUkernel| (k.bm * k.bn) as f64 / k.est_gflops.max(1e-9);
            let ms = g
                .tiles
                .iter()
                .filter(|k| k.bn == main.bn)
                .map(|k| (k.bm, t(k)))
                .collect();
            let ns = g
                .tiles
                .iter()
                .filter(|k| k.bm == main.bm)
                .map(|k| (k.bn, t(k)))
                .collect();
            (ms, ns)
        }
    }
}

/// All (m, n) tiles of a family, flattened.
pub fn flat_tiles(f: &Family) -> Vec<i64> {
    match f {
        Family::Cpu(c) => c
            .all()
            .iter()
            .flat_map(|k| [k.mr as i64, k.nr as i64])
            .collect(),
        Family::Gpu(g) => g
            .tiles
            .iter()
            .flat_map(|k| [k.bm as i64, k.bn as i64])
            .collect(),
    }
}

fn keep_at_most(v: &mut Vec<(u32, f64)>, n: usize) {
    // Keep the largest tile and the smallest ones that still cover every residue.
    v.sort_by_key(|t| std::cmp::Reverse(t.0));
    if n >= 2 && v.len() > n {
        let main = v[0];
        let rest: Vec<(u32, f64)> = v[v.len() - (n - 1)..].to_vec();
        *v = std::iter::once(main).chain(rest).collect();
    }
}

/// The plans for a contraction.
pub fn plans(
    f: &Family,
    c: &Contraction,
    max_padding: f64,
    max_ukernels: usize,
) -> Result<(DimPlan, DimPlan), String> {
    let (mut ms, mut ns) = dim_tiles(f);
    keep_at_most(&mut ms, max_ukernels);
    keep_at_most(&mut ns, max_ukernels);
    let st = |x: i64| (x != DYNAMIC).then_some(x as u64);
    Ok((
        plan_dim(&ms, max_padding, st(c.m_size()))?,
        plan_dim(&ns, max_padding, st(c.n_size()))?,
    ))
}

fn to_attr(p: &DimPlan) -> Attribute {
    let res: Vec<Vec<i64>> = p
        .residues
        .iter()
        .map(|v| v.iter().map(|t| *t as i64).collect())
        .collect();
    plan_attr(p.main as i64, p.static_size.map(|s| s as i64), &res)
}

/// Read a plan attribute back into a [`DimPlan`].
pub fn plan_from_attr(a: Attribute) -> Option<DimPlan> {
    let (main, st, res) = read_plan(a)?;
    Some(DimPlan {
        main: main as u32,
        residues: res
            .iter()
            .map(|v| v.iter().map(|t| *t as u32).collect())
            .collect(),
        static_size: st.map(|s| s as u64),
    })
}

/// Replace contraction `c` by a `ukernel.patch`.
pub fn patch(
    ir: &mut Ir,
    c: &Contraction,
    f: &Family,
    target: &str,
    mp: &DimPlan,
    np: &DimPlan,
) -> Result<OpId, String> {
    let op = c.op;
    let maps = body::indexing_maps(ir, op).ok_or("contraction without indexing maps")?;
    let red = body::reduction_dims(ir, op).ok_or("contraction without iterator types")?;
    let (ins, outs) = ins_outs(ir, op);
    let kind = match c.kind {
        Kind::Matmul => "matmul",
        Kind::BatchMatmul => "batch_matmul",
        Kind::Generic => "generic",
        Kind::Conv2d => "conv2d",
    };
    let (kc, mc, nc) = match f {
        Family::Cpu(x) => (x.kc as i64, x.mc as i64, x.nc as i64),
        Family::Gpu(g) => (g.main().bk as i64, 0, 0),
    };
    let its: Vec<Attribute> = red
        .iter()
        .map(|r| {
            Attribute::dialect(
                "linalg",
                if *r {
                    "iterator_type<reduction>"
                } else {
                    "iterator_type<parallel>"
                },
            )
        })
        .collect();
    let result_types: Vec<ftuner_ir::Type> =
        ir.results(op).iter().map(|v| ir.value_type(*v)).collect();
    let loc = ir.loc(op);
    let spec = OpSpec::new(intern_name(ops::ukernel::PatchOp::NAME), loc)
        .operands(ins.iter().chain(&outs).copied())
        .results(result_types)
        .prop("kind", Attribute::string(kind))
        .prop("target", Attribute::string(target))
        .prop("tiles", Attribute::dense_i64_array(&flat_tiles(f)))
        .prop("kc", Attribute::i64(kc))
        .prop("mc", Attribute::i64(mc))
        .prop("nc", Attribute::i64(nc))
        .prop("m_plan", to_attr(mp))
        .prop("n_plan", to_attr(np))
        .prop(
            "indexing_maps",
            Attribute::array(maps.into_iter().map(Attribute::affine_map).collect()),
        )
        .prop("iterator_types", Attribute::array(its))
        .prop(
            "operandSegmentSizes",
            Attribute::dense_i32_array(&[ins.len() as i32, outs.len() as i32, 0]),
        )
        .regions(1);
    let new = ir.create_op(spec);
    // The body: the contraction's scalar computation.
    let src_region = ir.regions_of(op)[0];
    let dst_region = ir.regions_of(new)[0];
    let mut map = Default::default();
    let mut bmap = Default::default();
    ir.clone_region_into(src_region, dst_region, &mut map, &mut bmap);
    // The body ends in ukernel.yield (linalg.yield belongs to linalg ops).
    for b in ir.region(dst_region).blocks.clone() {
        if let Some(t) = ir.terminator(b) {
            if ir.name(t) == ops::linalg::YieldOp::NAME {
                let vals = ir.operands(t).to_vec();
                let y = ir.create_op(
                    OpSpec::new(intern_name(ops::ukernel::YieldOp::NAME), ir.loc(t)).operands(vals),
                );
                ir.insert_before(t, y);
                ir.erase_op(t);
            }
        }
    }
    ir.insert_before(op, new);
    let results = ir.results(new).to_vec();
    ir.replace_op(op, &results);
    Ok(new)
}

/// (m, n) uKernel sizes two plans use together.
fn used_sizes(mp: &DimPlan, np: &DimPlan) -> u64 {
    let sizes = |p: &DimPlan| {
        let mut v: Vec<u32> = p
            .residues
            .iter()
            .flatten()
            .copied()
            .chain([p.main])
            .collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    (sizes(mp) * sizes(np)) as u64
}

/// The analytic family `patch-ukernels` gives contraction `c` with no schedule: the
/// per-dtype family, narrowed where `c`'s output lines collide in L1
/// ([`narrow_for_c_lines`]), a conv's k blocks from L2 ([`conv_k_blocks`]); what
/// `--print-ukernels` and `annotate-ukernels` report.
pub fn default_family(
    ir: &Ir,
    model: &ftuner_hw::HardwareModel,
    c: &Contraction,
) -> Result<Family, String> {
    Ok(fit_to(ir, model, c, Family::build(model, c.dtype)?, true))
}

/// The per-dtype analytic family `f` fitted to contraction `c`: narrowed for its output
/// lines (when `fit_lines`), then a conv's k blocks.
fn fit_to(
    ir: &Ir,
    model: &ftuner_hw::HardwareModel,
    c: &Contraction,
    f: Family,
    fit_lines: bool,
) -> Family {
    let f = if fit_lines {
        narrow_for_c_lines(ir, model, c, f)
    } else {
        f
    };
    conv_k_blocks(model, c, f)
}

/// A convolution's analytic family with kc from L2 where the GEMM's keeps B's
/// micro-panel in L1 ([`crate::cpu::conv_family`]), or with its whole reduction as one k
/// block where B streams from L2 and the whole `K x nr` panel takes at most half of it
/// ([`crate::cpu::conv_one_block`]).
fn conv_k_blocks(model: &ftuner_hw::HardwareModel, c: &Contraction, f: Family) -> Family {
    match (&f, model.cpu()) {
        (Family::Cpu(cf), Some(cpu)) if c.kind == Kind::Conv2d => crate::cpu::conv_family(cpu, cf)
            .or_else(|| {
                let k = u64::try_from(c.k_size()).ok()?;
                crate::cpu::conv_one_block(cpu, cf, k)
            })
            .map(Family::Cpu)
            .unwrap_or(f),
        _ => f,
    }
}

/// The analytic family, or one whose main tile is narrower along N when the output's rows
/// of a main tile (one line per N index, `output_n_stride` apart: an NCHW conv's channels)
/// would not stay in L1 together ([`crate::cpu::c_streams_fit`]): `nr` halved, down to
/// one vector, `mr` kept or raised to keep `latency x FMAs per cycle` accumulators in
/// flight.
fn narrow_for_c_lines(
    ir: &Ir,
    model: &ftuner_hw::HardwareModel,
    c: &Contraction,
    f: Family,
) -> Family {
    let (Family::Cpu(cf), Some(cpu)) = (&f, model.cpu()) else {
        return f;
    };
    let Some(stride) = crate::contraction::output_n_stride(ir, c.op) else {
        return f;
    };
    let bytes = stride.unsigned_abs().saturating_mul(c.dtype.bytes() as u64);
    // A tile writes at most N lines (3 output channels: 3 lines, whatever nr is).
    let n = c.n_size();
    let fits = |nr: u32| {
        let streams = if n > 0 { (nr as i64).min(n) as u32 } else { nr };
        crate::cpu::c_streams_fit(cpu, bytes, streams)
    };
    let mut nr = cf.main.nr;
    while !fits(nr) && nr > cf.lanes && nr % 2 == 0 {
        nr /= 2;
    }
    if nr == cf.main.nr {
        return f;
    }
    let nv = nr.div_ceil(cf.lanes.max(1)).max(1);
    let chains = (cpu.fma_latency as f64 * cpu.vector_fmas_per_cycle()).ceil() as u32;
    // Within the register file: the accumulators, the B vectors and A's broadcast.
    let most = cpu.vector_registers.saturating_sub(nv + 1) / nv;
    let mr = cf.main.mr.max(chains.div_ceil(nv)).min(most.max(1));
    // A tile the model cannot build (a target description of few registers) keeps the
    // analytic family rather than failing the compile.
    crate::cpu::build_with(cpu, c.dtype, Some((mr, nr)), None)
        .map(Family::Cpu)
        .unwrap_or(f)
}

define_pass! {
    /// `patch-ukernels`: cover each contraction with a patch of analytic uKernels.
    pub struct PatchUkernelsPass {
        argument: "patch-ukernels",
        name: "PatchUkernels",
        summary: "Cover each contraction with a patch of analytic uKernels (ukernel.patch)",
        description: "Replaces linalg.matmul, linalg.batch_matmul (and transposed forms), contraction linalg.generic ops and conv_2d (as implicit GEMM) by ukernel.patch ops holding the target's uKernel family and, for M and N, the tiles covering every residue modulo the main tile.",
        options: PatchUkernelsOptions {
            "target" => target: String = "",
                "Target (host, a built-in name, cuda:sm_XX, or a .toml file); empty: the module's ftuner.target or host";
            "dtypes" => dtypes: Vec<String> = "f32,f16,bf16",
                "Element types to patch (others are left alone)";
            "max-ukernels" => max_ukernels: u64 = "8",
                "Most tile sizes per dimension (the main tile plus the smallest)";
            "max-padding" => max_padding: f64 = "0",
                "Fraction of the main tile a residue may be padded by when that is cheaper";
            "schedule" => schedule: String = "",
                "A schedule for every contraction (mr=..,nr=..,kc=..[,k_blocking=0|1][,pack_b=0|1][,max_ukernels=..][,k_unroll=0..8][,order=auto|rows|cols][,pack_a=0|1]) instead of the analytic default (CPU targets)";
            "fit-output-lines" => fit_output_lines: bool = "true",
                "Narrow the main tile along N for a contraction whose output rows of a tile (one line per N index, an NCHW conv's channels) would not stay in L1 together (analytic default only)";
            "fuse-epilogues" => fuse_epilogues: bool = "true",
                "Absorb elementwise consumers (bias-add, activations; broadcasts read at their source) of 2-d contractions, and on CPU targets the lanewise ones of convolutions (BatchNorm, ReLU, a residual add), into the patch's epilogue";
            "tuning-db" => tuning_db: String = "",
                "A tuning database (ftuner-tune): each contraction whose workload has measured schedules gets the best one";
        },
        statistics: {
            patched: "num-patched" => "Contractions patched",
            ukernels: "num-ukernels" => "uKernel sizes the patch plans use (all ops)",
            epilogues: "num-epilogue-ops" => "Elementwise consumers absorbed into patch epilogues",
            scheduled: "num-scheduled" => "Contractions given a schedule (option or tuning database) instead of the analytic default",
            unlowerable: "num-unlowerable" => "Contractions left to the loops: lower-ukernels could not lower them on the CPU",
        },
    }
}

impl PatchUkernelsPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        o: &PatchUkernelsOptions,
    ) -> Result<(), PassFailure> {
        let t = o.target.clone();
        let model = crate::target_model(cx, op, &t)?;
        let dtypes = &o.dtypes;
        let max_pad = o.max_padding;
        if !(0.0..=1.0).contains(&max_pad) {
            cx.emit(Diagnostic::error(
                cx.ir.loc(op),
                format!("max-padding must be within [0, 1], got {max_pad}"),
            ));
            return Err(PassFailure);
        }
        let max_uk = o.max_ukernels.max(2) as usize;
        let fixed = &o.schedule;
        let fixed: Option<Schedule> = if fixed.is_empty() {
            None
        } else {
            match fixed.parse() {
                Ok(s) => Some(s),
                Err(e) => {
                    cx.emit(Diagnostic::error(cx.ir.loc(op), e));
                    return Err(PassFailure);
                }
            }
        };
        let fuse = o.fuse_epilogues;
        let db_path = &o.tuning_db;
        let db = if db_path.is_empty() {
            None
        } else {
            match crate::schedule::open_db(
                cx.extension::<crate::schedule::TuningDbOpener>(),
                db_path,
            ) {
                Ok(d) => Some(d),
                Err(e) => {
                    cx.emit(Diagnostic::error(cx.ir.loc(op), e));
                    return Err(PassFailure);
                }
            }
        };
        let mut families: Vec<(DType, Family)> = vec![];
        for c in find_all(cx.ir, op) {
            if !dtypes.iter().any(|d| d == c.dtype.name()) {
                continue;
            }
            if model.kind == ftuner_hw::Kind::Cpu {
                if let Some(why) = crate::lower::cpu_unlowerable(cx.ir, c.op) {
                    cx.emit(Diagnostic::remark(
                        cx.ir.loc(c.op),
                        format!("not patched: {why}; left to the loops"),
                    ));
                    self.unlowerable += 1;
                    continue;
                }
            }
            let sched = match (&fixed, &db) {
                (Some(s), _) => Some(*s),
                (None, Some(db)) => {
                    let key = crate::schedule::workload_key(cx.ir, &c, &model);
                    let valid = |s: &Schedule| s.check(&model, c.dtype).is_ok();
                    match db.best(&key, &valid) {
                        Ok((s, skipped)) => {
                            if skipped > 0 {
                                cx.emit(Diagnostic::warning(
                                    cx.ir.loc(c.op),
                                    format!(
                                        "tuning-db: skipped {skipped} faster recorded schedule{} that target '{}' cannot take (not a legal register tile); {}",
                                        if skipped == 1 { "" } else { "s" },
                                        model.name,
                                        match &s {
                                            Some(s) => format!("using {s}"),
                                            None => "using the analytic default".into(),
                                        }
                                    ),
                                ));
                            }
                            s
                        }
                        Err(e) => {
                            cx.emit(Diagnostic::error(cx.ir.loc(c.op), e));
                            return Err(PassFailure);
                        }
                    }
                }
                (None, None) => None,
            };
            // A database record of the analytic default (what ftuner-tune stores for the
            // default it measured: patch-ukernels' own choice, narrowing included) is no
            // schedule: that choice, not the per-dtype tile the record names.
            let sched = sched.filter(|s| {
                fixed.is_some() || Schedule::analytic(&model, c.dtype).ok() != Some(*s)
            });
            // The family and tile-count limit: the schedule's, or the analytic default's.
            let family = match sched {
                Some(s) => s
                    .family(&model, c.dtype)
                    .map(|f| (f, s.max_ukernels.max(2) as usize))
                    .map_err(|e| format!("schedule {s}: {e}")),
                None => match families.iter().find(|(d, _)| *d == c.dtype) {
                    Some((_, f)) => Ok((f.clone(), max_uk)),
                    None => Family::build(&model, c.dtype).map(|f| {
                        families.push((c.dtype, f.clone()));
                        (f, max_uk)
                    }),
                }
                .map(|(f, limit)| (fit_to(cx.ir, &model, &c, f, o.fit_output_lines), limit)),
            };
            let done = family.and_then(|(f, limit)| {
                let (mp, np) = plans(&f, &c, max_pad, limit)?;
                let new = patch(cx.ir, &c, &f, &model.name, &mp, &np)?;
                Ok((new, used_sizes(&mp, &np)))
            });
            match done {
                Ok((new, used)) => {
                    if fuse {
                        let windowed = model.kind == ftuner_hw::Kind::Cpu;
                        self.epilogues +=
                            crate::epilogue::fuse_epilogues(cx.ir, new, windowed) as u64;
                    }
                    if let Some(s) = sched {
                        cx.ir.set_attr(
                            new,
                            "ftuner.schedule",
                            Some(Attribute::string(s.to_string())),
                        );
                        self.scheduled += 1;
                    }
                    self.patched += 1;
                    self.ukernels += used;
                }
                Err(e) => {
                    cx.emit(Diagnostic::error(cx.ir.loc(c.op), e));
                    return Err(PassFailure);
                }
            }
        }
        cx.preserved.preserve::<ftuner_hw::HwModelAnalysis>();
        Ok(())
    }
}
