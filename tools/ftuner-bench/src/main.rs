//! `ftuner-bench`: ftuner's dynamic-shape kernels against OpenBLAS, in one process.
//!
//! Each workload is compiled once with its dynamic dimension left dynamic (patch-ukernels
//! for the host, lower-ukernels, bufferize, LLVM O3, JIT); then for every shape the two
//! systems run alternately on the same data, `--reps` times after two warm-up calls each,
//! one thread. Reported per shape: medians, GFLOP/s, the time ratio ftuner/OpenBLAS (< 1
//! means ftuner is faster) and the largest difference of the results. One JSON object per
//! line goes to `--json FILE`; a table goes to stdout; the geometric means per workload
//! close the run.
//!
//! W1 and W2 also run the two padding approaches FTuner replaces, built by ftuner and
//! checked against OpenBLAS: `pad-pow2` (the dynamic dims padded to the next power of two,
//! a kernel compiled per bucket) and `pad-tile` (padded to a multiple of the main
//! uKernel). `--svg` plots GFLOP/s against T per system, `--doc` regenerates the marked
//! section of docs/benchmarks.md (module `report`).
//!
//! Workloads (issue 10): W1 dense X[M,K] x W[K,N] with M = 16*T; W2 batch matmul
//! Q[192,T,64] x K[192,T,64]^T; W3 DeepBench's inference-server GEMMs plus 127^3 and
//! 1000^3. Both systems use the same layouts: NN for W1/W3 (DeepBench's transpose flags
//! are not applied), NT for W2.

use blas::Blas;
use clap::Parser as _;
use ftuner_interp::{RtVal, Tensor};
use ftuner_ir::Type;
use std::io::Write;
use std::rc::Rc;
use std::time::Instant;

extern crate openblas_src;

extern "C" {
    fn openblas_set_num_threads(n: i32);
}

#[derive(clap::Parser, Debug)]
#[command(
    name = "ftuner-bench",
    about = "ftuner's compiled dynamic-shape kernels against OpenBLAS"
)]
struct Cli {
    /// Workloads to run: w1, w2, w3 (comma-separated); also attn (BERT's attention
    /// batch-matmuls) and ollie (conv layers and banded attention: direct loops vs implicit-GEMM uKernels vs
    /// ollie-derive), not part of the default set.
    #[arg(long, default_value = "w1,w2,w3")]
    workloads: String,
    /// Timed repetitions per system and shape (after 2 warm-up calls).
    #[arg(long, default_value_t = 10)]
    reps: usize,
    /// A tiny subset (CI): two shapes per workload, 3 repetitions.
    #[arg(long)]
    smoke: bool,
    /// Write one JSON object per measurement to this file.
    #[arg(long)]
    json: Option<String>,
    /// DeepBench's CSV (W3).
    #[arg(long, default_value = "../shared/data/deepbench/gemm_problems.csv")]
    deepbench: String,
    /// The pass pipeline that compiles ftuner's kernels (for A/B runs of options, e.g.
    /// `lower-ukernels{k-blocking=false}`).
    #[arg(long, default_value = PIPELINE)]
    pipeline: String,
    /// Folder of the torch-mlir exports (the ollie workload's layers).
    #[arg(long, default_value = "../shared/inputs")]
    inputs: String,
    /// Thread counts to measure, comma-separated: numbers or `all` (every core). Each
    /// shape runs at each count, ftuner and OpenBLAS with the same number of threads.
    #[arg(long, default_value = "1")]
    threads: String,
    /// Plot GFLOP/s against T per system (W1: geometric mean over its four (K, N); W2), one
    /// panel per workload and thread count, to this SVG file.
    #[arg(long)]
    svg: Option<String>,
    /// Regenerate the section between `<!-- ftuner-bench:begin -->` and
    /// `<!-- ftuner-bench:end -->` of this Markdown file (docs/benchmarks.md) from the run.
    #[arg(long)]
    doc: Option<String>,
}

/// `--threads`: the counts, `all` as the machine's available parallelism.
fn thread_counts(spec: &str) -> Result<Vec<usize>, String> {
    let all = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    spec.split(',')
        .map(str::trim)
        .map(|t| match t {
            "all" => Ok(all),
            _ => t
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=1024).contains(n))
                .ok_or(format!(
                    "--threads: '{t}' is not a thread count (1..1024 or all)"
                )),
        })
        .collect()
}

mod blas;
mod libs;
mod ollie;
mod report;

/// ftuner's pipeline: elementwise chains fused (the matmul workloads have none; the ollie
/// workload's BatchNorm/ReLU chains do), contractions patched with uKernels and lowered.
const PIPELINE: &str =
    "builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)";

fn compile(src: &str, pipeline: &str) -> Result<ftuner_runtime::Executable, String> {
    compile_timed(src, pipeline).map(|(e, _)| e)
}

/// [`compile`], with the wall time of the whole compilation (parse, passes, LLVM, JIT).
fn compile_timed(src: &str, pipeline: &str) -> Result<(ftuner_runtime::Executable, f64), String> {
    let t0 = Instant::now();
    let ctx = ftuner_dialects::context();
    let mut m =
        ftuner_opt::parse_and_verify(&ctx, src, "bench.mlir").map_err(|d| format!("{d:?}"))?;
    let reg = ftuner_opt::default_registry();
    let mut pm =
        ftuner_pass::PassManager::from_pipeline(&reg, pipeline).map_err(|e| e.to_string())?;
    pm.run(&ctx, &mut m.ir, m.top).map_err(|e| e.to_string())?;
    let exe = ftuner_runtime::Executable::compile(&ctx, &mut m.ir, m.top).map_err(|e| e.0)?;
    Ok((exe, t0.elapsed().as_secs_f64()))
}

impl Out {
    /// Record the compile time of one dynamic kernel.
    fn compiled(&mut self, workload: &str, kernel: String, secs: f64) {
        if let Some(f) = &mut self.json {
            let _ = writeln!(
                f,
                "{{\"system\": \"ftuner\", \"workload\": \"{workload}\", \"kernel\": \"{kernel}\", \"compile_s\": {secs:.4}}}"
            );
        }
        self.compile.push((workload.to_string(), kernel, secs));
    }
}

/// W1's dense layer `?xK * KxN` (M dynamic), or with M static (a bucket's kernel).
fn matmul_src(m: Option<usize>, k: usize, n: usize) -> String {
    let (ms, dim, empty) = match m {
        Some(m) => (m.to_string(), String::new(), String::new()),
        None => (
            "?".to_string(),
            format!("  %m = tensor.dim %a, %c0 : tensor<?x{k}xf32>\n"),
            "%m".to_string(),
        ),
    };
    format!(
        r#"func.func @mm(%a: tensor<{ms}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{ms}x{n}xf32> {{
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
{dim}  %e = tensor.empty({empty}) : tensor<{ms}x{n}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<{ms}x{n}xf32>) -> tensor<{ms}x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{ms}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%f : tensor<{ms}x{n}xf32>) -> tensor<{ms}x{n}xf32>
  return %r : tensor<{ms}x{n}xf32>
}}"#
    )
}

/// The host's main uKernel `(mr, nr)` for f32 (the fixed tile of the `pad-tile` baseline).
fn main_tile() -> Result<(usize, usize), String> {
    let m = ftuner_hw::HardwareModel::load("host")?;
    let cpu = m.cpu().ok_or("the host has no CPU model")?;
    let f = ftuner_ukernel::cpu::build(cpu, ftuner_ukernel::DType::F32)?;
    Ok((f.main.mr as usize, f.main.nr as usize))
}

const DYN_MM: &str = include_str!("../../../examples/kernels/matmul_dynamic.mlir");

/// W2's `Q · Kᵀ` over 192 heads, T dynamic (`None`) or static (a bucket's kernel).
fn bmm_nt_src(t: Option<usize>) -> String {
    let ts = t.map_or("?".to_string(), |t| t.to_string());
    let (dims, empty) = match t {
        Some(_) => (String::new(), String::new()),
        None => (
            "  %t = tensor.dim %q, %c1 : tensor<192x?x64xf32>\n  %s = tensor.dim %k, %c1 : tensor<192x?x64xf32>\n".to_string(),
            "%t, %s".to_string(),
        ),
    };
    format!(
        r#"func.func @mm(%q: tensor<192x{ts}x64xf32>, %k: tensor<192x{ts}x64xf32>) -> tensor<192x{ts}x{ts}xf32> {{
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
{dims}  %e = tensor.empty({empty}) : tensor<192x{ts}x{ts}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<192x{ts}x{ts}xf32>) -> tensor<192x{ts}x{ts}xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}} ins(%q, %k : tensor<192x{ts}x64xf32>, tensor<192x{ts}x64xf32>) outs(%f : tensor<192x{ts}x{ts}xf32>) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %a = arith.addf %o, %p : f32
    linalg.yield %a : f32
  }} -> tensor<192x{ts}x{ts}xf32>
  return %r : tensor<192x{ts}x{ts}xf32>
}}"#
    )
}

/// BERT's attention products, 12 heads: scores Q·Kᵀ (the export materializes Kᵀ) and
/// probabilities·V, all but the heads dynamic.
const BMM_NN: &str = r#"func.func @mm(%a: tensor<12x?x?xf32>, %b: tensor<12x?x?xf32>) -> tensor<12x?x?xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c1 : tensor<12x?x?xf32>
  %n = tensor.dim %b, %c2 : tensor<12x?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<12x?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<12x?x?xf32>) -> tensor<12x?x?xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<12x?x?xf32>, tensor<12x?x?xf32>) outs(%f : tensor<12x?x?xf32>) -> tensor<12x?x?xf32>
  return %r : tensor<12x?x?xf32>
}"#;

struct Rng(u64);
impl Rng {
    fn tensor(&mut self, shape: Vec<usize>) -> Tensor {
        let n: usize = shape.iter().product();
        let data = (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                ((self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32 as f64
            })
            .collect();
        Tensor::new(shape, Type::f32(), data)
    }
}

/// The median (the mean of the two middle values for an even count); sorts `v`.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n.is_multiple_of(2) {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    } else {
        v[n / 2]
    }
}

struct Out {
    json: Option<std::fs::File>,
    threads: Vec<usize>,
    /// (workload, kernel, seconds) of each compilation.
    compile: Vec<(String, String, f64)>,
    /// (workload, shape, threads, ftuner GFLOP/s) of the large cubes.
    cubes: Vec<(String, String, usize, f64)>,
    /// Every system's median per shape and thread count.
    points: Vec<Point>,
    /// MKL and a current OpenBLAS, where found ([`libs`]).
    libs: Vec<libs::BlasLib>,
}

/// One system's median on one shape.
pub(crate) struct Point {
    pub workload: &'static str,
    /// MxNxK (batch x MxNxK).
    pub shape: String,
    /// T of W1/W2.
    pub t_param: Option<usize>,
    pub threads: usize,
    pub system: &'static str,
    pub median_s: f64,
    /// ftuner's median on the same shape and thread count.
    pub ours_s: f64,
    /// Useful FLOPs per second (the unpadded problem's).
    pub gflops: f64,
}

/// Both systems on `threads` threads, set outside the timed calls: ftuner's pool, and
/// OpenBLAS's own threads, or one OpenBLAS thread per problem when `batch` problems are
/// spread over the pool.
fn use_threads(threads: usize, batch: usize, others: &[libs::BlasLib]) {
    ftuner_runtime::set_num_threads(threads);
    let blas = if batch > 1 { 1 } else { threads };
    // SAFETY: OpenBLAS's thread count, set between calls.
    unsafe { openblas_set_num_threads(blas as i32) };
    for l in others {
        l.set_threads(blas);
    }
}

/// A padding baseline of issue 10, built by our own compiler: the problem zero-padded to a
/// larger shape and run by a kernel compiled for that shape.
struct Padded<'a> {
    /// [`POW2`] or [`TILE`].
    system: &'static str,
    exe: &'a ftuner_runtime::Executable,
    args: [Tensor; 2],
}

/// Every dynamic dim padded to the next power of two, one kernel compiled per bucket with
/// its shapes static (the bucketing FTuner replaces).
const POW2: &str = "pad-pow2";
/// The dynamic dims padded to a multiple of the main uKernel (mr rows, nr columns), run by
/// the dynamic kernel, whose plan then uses the main tile alone (one fixed tile).
const TILE: &str = "pad-tile";

/// One shape of a workload: the inputs, OpenBLAS on them, and the padding baselines.
struct Case<'a> {
    workload: &'static str,
    shape: String,
    /// T of W1/W2 (the length the shape comes from).
    t: Option<usize>,
    args: [Tensor; 2],
    blas: Blas,
    pads: Vec<Padded<'a>>,
}

/// `t` zero-padded to `dims` (same rank, each at least `t`'s).
fn pad_to(t: &Tensor, dims: &[usize]) -> Tensor {
    let total: usize = dims.iter().product();
    let mut data = vec![0.0; total];
    let rank = dims.len();
    let inner = t.shape[rank - 1];
    let rows: usize = t.shape[..rank - 1].iter().product();
    for r in 0..rows {
        // The row's index in `t`'s leading dims, re-linearized in `dims`.
        let (mut rem, mut dst) = (r, 0);
        let mut stride = dims[rank - 1];
        for d in (0..rank - 1).rev() {
            dst += (rem % t.shape[d]) * stride;
            rem /= t.shape[d];
            stride *= dims[d];
        }
        data[dst..dst + inner].copy_from_slice(&t.data[r * inner..(r + 1) * inner]);
    }
    Tensor::new(dims.to_vec(), Type::f32(), data)
}

/// The largest difference between the `(m, n)` blocks of a padded batched result (last
/// two dims at least `m` and `n`) and OpenBLAS's `batch x m x n` result.
fn block_err(got: &Tensor, (batch, m, n): (usize, usize, usize), want: &[f32]) -> f64 {
    let r = got.shape.len();
    let (pm, pn) = (got.shape[r - 2], got.shape[r - 1]);
    let mut err = 0f64;
    for b in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let x = got.data[(b * pm + i) * pn + j];
                err = err.max((x - want[(b * m + i) * n + j] as f64).abs());
            }
        }
    }
    err
}

fn measure(
    out: &mut Out,
    exe: &ftuner_runtime::Executable,
    case: Case<'_>,
    reps: usize,
) -> Result<(), String> {
    let Case {
        workload,
        shape,
        t: tparam,
        args,
        mut blas,
        pads,
    } = case;
    let flops = blas.flops();
    let rt = |args: &[Tensor]| -> Vec<RtVal> {
        args.iter()
            .map(|t| RtVal::Tensor(Rc::new(t.clone())))
            .collect()
    };
    let rargs = rt(&args);
    // Warm up both; check the results agree.
    let got = exe.call("mm", &rargs).map_err(|e| e.0)?;
    blas.run(1);
    blas.run(1);
    let g = got[0].tensor().ok_or("no result")?;
    let err = g
        .data
        .iter()
        .zip(&blas.c)
        .map(|(x, y)| (x - *y as f64).abs())
        .fold(0.0, f64::max);
    let prepared = exe.prepare("mm", &rargs).map_err(|e| e.0)?;
    drop(rargs);
    let scale = blas.c.iter().fold(0f32, |a, x| a.max(x.abs())) as f64;
    let tol = 1e-5 * (blas.k as f64).sqrt() * (1.0 + scale);
    if err.is_nan() || err > tol {
        return Err(format!(
            "{workload} {shape}: ftuner and OpenBLAS differ by {err:e} (tolerance {tol:e})"
        ));
    }
    // The padding baselines compute the same answer in a corner of their result.
    let mut pads_prepared = vec![];
    for p in &pads {
        let a = rt(&p.args);
        let got = p.exe.call("mm", &a).map_err(|e| e.0)?;
        let g = got[0].tensor().ok_or("no result")?;
        let perr = block_err(g, (blas.batch, blas.m, blas.n), &blas.c);
        if perr.is_nan() || perr > tol {
            return Err(format!(
                "{workload} {shape}: {} and OpenBLAS differ by {perr:e} (tolerance {tol:e})",
                p.system
            ));
        }
        pads_prepared.push((p.system, p.exe, p.exe.prepare("mm", &a).map_err(|e| e.0)?));
    }
    // The libraries opened at run time: the same answer first, then timed beside the rest.
    let reference = blas.c.clone();
    let mut others: Vec<(&'static str, libs::SgemmFn)> = vec![];
    for l in &out.libs {
        l.set_threads(1);
        // NaN first: a library that writes nothing (a rejected parameter) fails the check.
        blas.c.fill(f32::NAN);
        blas.run_with(1, l.sgemm);
        let e = blas
            .c
            .iter()
            .zip(&reference)
            .map(|(x, y)| (x - y).abs() as f64)
            .fold(0.0, f64::max);
        if e.is_nan() || e > tol {
            eprintln!(
                "{workload} {shape}: {} and OpenBLAS differ by {e:e} (tolerance {tol:e}): not timed",
                l.name
            );
            continue;
        }
        others.push((l.name, l.sgemm));
    }
    for t in out.threads.clone() {
        use_threads(t, blas.batch, &out.libs);
        // One more call of each at this thread count (the pools start, caches settle).
        exe.time(&prepared).map_err(|e| e.0)?;
        blas.run(t);
        for (_, f) in &others {
            blas.run_with(t, *f);
        }
        for (_, pexe, pp) in &pads_prepared {
            pexe.time(pp).map_err(|e| e.0)?;
        }
        let (mut ours, mut theirs) = (vec![], vec![]);
        let mut padded: Vec<Vec<f64>> = vec![vec![]; pads_prepared.len()];
        let mut other_times: Vec<Vec<f64>> = vec![vec![]; others.len()];
        for _ in 0..reps {
            ours.push(exe.time(&prepared).map_err(|e| e.0)?.as_secs_f64());
            let t0 = Instant::now();
            blas.run(t);
            theirs.push(t0.elapsed().as_secs_f64());
            for ((_, f), times) in others.iter().zip(&mut other_times) {
                let t0 = Instant::now();
                blas.run_with(t, *f);
                times.push(t0.elapsed().as_secs_f64());
            }
            for ((_, pexe, pp), times) in pads_prepared.iter().zip(&mut padded) {
                times.push(pexe.time(pp).map_err(|e| e.0)?.as_secs_f64());
            }
        }
        let (mo, mb) = (median(&mut ours), median(&mut theirs));
        let (go, gb) = (flops / mo / 1e9, flops / mb / 1e9);
        // Padded systems' GFLOP/s count the useful FLOPs only (their waste shows as time).
        let pad_meds: Vec<(&'static str, f64)> = pads_prepared
            .iter()
            .zip(&mut padded)
            .map(|((sys, _, _), times)| (*sys, median(times)))
            .collect();
        let pad_col = |sys: &str| {
            pad_meds
                .iter()
                .find(|p| p.0 == sys)
                .map_or("-".to_string(), |p| format!("{:.3}", p.1 * 1e3))
        };
        println!(
            "{workload:4} {shape:>22} {t:>3} {:>10.3} {:>10.3} {go:>8.1} {gb:>8.1} {:>7.2} {err:>9.2e} {:>9} {:>9}",
            mo * 1e3,
            mb * 1e3,
            mo / mb,
            pad_col(POW2),
            pad_col(TILE),
        );
        let mut systems = vec![("ftuner", mo), ("openblas", mb)];
        for ((name, _), times) in others.iter().zip(&mut other_times) {
            systems.push((*name, median(times)));
        }
        systems.extend(pad_meds.iter().copied());
        for (sys, med) in systems {
            let gf = flops / med / 1e9;
            if let Some(f) = &mut out.json {
                let tfield = tparam.map_or(String::new(), |v| format!(", \"t\": {v}"));
                let _ = writeln!(
                    f,
                    "{{\"system\": \"{sys}\", \"workload\": \"{workload}\", \"shape\": \"{shape}\"{tfield}, \"threads\": {t}, \"median_s\": {med:e}, \"gflops\": {gf:.3}, \"reps\": {reps}, \"max_abs_err\": {err:e}}}"
                );
            }
            out.points.push(Point {
                workload,
                shape: shape.clone(),
                t_param: tparam,
                threads: t,
                system: sys,
                median_s: med,
                ours_s: mo,
                gflops: gf,
            });
        }
        if ["1000x1000x1000", "2048x2048x2048"].contains(&shape.as_str()) {
            out.cubes.push((workload.to_string(), shape.clone(), t, go));
        }
    }
    Ok(())
}

fn run(cli: &Cli) -> Result<(), String> {
    let threads = thread_counts(&cli.threads)?;
    let others = libs::load();
    for l in &others {
        eprintln!("ftuner-bench: {} from {}", l.name, l.path.display());
    }
    use_threads(threads[0], 1, &others);
    let reps = if cli.smoke { 3 } else { cli.reps.max(1) };
    let mut out = Out {
        json: match &cli.json {
            Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("{p}: {e}"))?),
            None => None,
        },
        threads: threads.clone(),
        compile: vec![],
        cubes: vec![],
        points: vec![],
        libs: others,
    };
    let want: Vec<&str> = cli.workloads.split(',').map(str::trim).collect();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let ts: &[usize] = if cli.smoke {
        &[1, 5]
    } else {
        &[1, 5, 24, 43, 62, 81, 100, 119, 128]
    };
    println!(
        "{:4} {:>22} {:>3} {:>10} {:>10} {:>8} {:>8} {:>7} {:>9} {:>9} {:>9}",
        "wl",
        "shape (MxNxK)",
        "thr",
        "ftuner_ms",
        "blas_ms",
        "ftuner",
        "blas",
        "ratio",
        "max_err",
        "pow2_ms",
        "tile_ms"
    );
    if want.contains(&"w1") {
        let kn: &[(usize, usize)] = if cli.smoke {
            &[(768, 768)]
        } else {
            &[(768, 2304), (768, 768), (3072, 768), (768, 3072)]
        };
        let (mr, nr) = main_tile()?;
        for &(k, n) in kn {
            let (exe, secs) = compile_timed(&matmul_src(None, k, n), &cli.pipeline)?;
            out.compiled("W1", format!("?x{k} * {k}x{n}"), secs);
            // N is static: the fixed tile pads it with a kernel of its own when needed.
            let np = n.next_multiple_of(nr);
            let tile_exe = match np == n {
                true => None,
                false => Some(compile(&matmul_src(None, k, np), &cli.pipeline)?),
            };
            let mut buckets: rustc_hash::FxHashMap<usize, ftuner_runtime::Executable> =
                Default::default();
            for &t in ts {
                let m = 16 * t;
                let (a, b) = (rng.tensor(vec![m, k]), rng.tensor(vec![k, n]));
                let blas = Blas::new(&a, &b, (m, n, k), 1, false);
                let mb = m.next_power_of_two();
                if let std::collections::hash_map::Entry::Vacant(v) = buckets.entry(mb) {
                    v.insert(compile(&matmul_src(Some(mb), k, n), &cli.pipeline)?);
                }
                let pads = vec![
                    Padded {
                        system: POW2,
                        exe: &buckets[&mb],
                        args: [pad_to(&a, &[mb, k]), b.clone()],
                    },
                    Padded {
                        system: TILE,
                        exe: tile_exe.as_ref().unwrap_or(&exe),
                        args: [
                            pad_to(&a, &[m.next_multiple_of(mr), k]),
                            pad_to(&b, &[k, np]),
                        ],
                    },
                ];
                let case = Case {
                    workload: "W1",
                    shape: format!("{m}x{n}x{k}"),
                    t: Some(t),
                    args: [a, b],
                    blas,
                    pads,
                };
                measure(&mut out, &exe, case, reps)?;
            }
        }
    }
    if want.contains(&"w2") {
        let (exe, secs) = compile_timed(&bmm_nt_src(None), &cli.pipeline)?;
        out.compiled("W2", "192x?x64 * (192x?x64)^T".into(), secs);
        let (mr, nr) = main_tile()?;
        let mut buckets: rustc_hash::FxHashMap<usize, ftuner_runtime::Executable> =
            Default::default();
        for &t in ts {
            let (q, kk) = (rng.tensor(vec![192, t, 64]), rng.tensor(vec![192, t, 64]));
            let blas = Blas::new(&q, &kk, (t, t, 64), 192, true);
            let tb = t.next_power_of_two();
            if let std::collections::hash_map::Entry::Vacant(v) = buckets.entry(tb) {
                v.insert(compile(&bmm_nt_src(Some(tb)), &cli.pipeline)?);
            }
            let pads = vec![
                Padded {
                    system: POW2,
                    exe: &buckets[&tb],
                    args: [pad_to(&q, &[192, tb, 64]), pad_to(&kk, &[192, tb, 64])],
                },
                Padded {
                    system: TILE,
                    exe: &exe,
                    args: [
                        pad_to(&q, &[192, t.next_multiple_of(mr), 64]),
                        pad_to(&kk, &[192, t.next_multiple_of(nr), 64]),
                    ],
                },
            ];
            let case = Case {
                workload: "W2",
                shape: format!("192x{t}x{t}x64"),
                t: Some(t),
                args: [q, kk],
                blas,
                pads,
            };
            measure(&mut out, &exe, case, reps)?;
        }
    }
    if want.contains(&"attn") {
        // Not one of issue 10's workloads: the BERT layer's attention products (issue 6).
        let exe = compile(BMM_NN, &cli.pipeline)?;
        let ts: &[usize] = if cli.smoke {
            &[5]
        } else {
            &[32, 128, 256, 384, 512]
        };
        for &t in ts {
            for (m, n, k) in [(t, t, 64), (t, 64, t)] {
                let (a, b) = (rng.tensor(vec![12, m, k]), rng.tensor(vec![12, k, n]));
                let blas = Blas::new(&a, &b, (m, n, k), 12, false);
                let case = Case {
                    workload: "ATTN",
                    shape: format!("12x{m}x{n}x{k}"),
                    t: Some(t),
                    args: [a, b],
                    blas,
                    pads: vec![],
                };
                measure(&mut out, &exe, case, reps)?;
            }
        }
    }
    if want.contains(&"ollie") {
        use_threads(1, 1, &out.libs);
        ollie::run(&cli.inputs, &cli.pipeline, reps, cli.smoke, &mut out.json)?;
    }
    if want.contains(&"w3") {
        let csv = std::fs::read_to_string(&cli.deepbench)
            .map_err(|e| format!("{}: {e} (--deepbench FILE)", cli.deepbench))?;
        let mut shapes: Vec<(usize, usize, usize)> = csv
            .lines()
            .skip(1)
            .filter(|l| l.starts_with("inference_server,"))
            .filter_map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                Some((
                    f.get(2)?.parse().ok()?,
                    f.get(3)?.parse().ok()?,
                    f.get(4)?.parse().ok()?,
                ))
            })
            .collect();
        // Shapes whose operands hold more than 2^26 elements (DeepBench's K = 500000
        // GEMVs) are left out: the harness keeps several copies of each operand.
        let big = shapes.len();
        shapes.retain(|(m, n, k)| m * k <= 1 << 26 && k * n <= 1 << 26);
        if shapes.len() < big {
            eprintln!(
                "ftuner-bench: W3: {} of {big} DeepBench shapes have operands over 2^26 elements; left out",
                big - shapes.len()
            );
        }
        shapes.push((127, 127, 127));
        shapes.push((1000, 1000, 1000));
        shapes.push((2048, 2048, 2048));
        if cli.smoke {
            shapes = vec![(127, 127, 127), shapes[0]];
        }
        let (exe, secs) = compile_timed(DYN_MM, &cli.pipeline)?;
        out.compiled("W3", "?x? * ?x?".into(), secs);
        for (m, n, k) in shapes {
            let (a, b) = (rng.tensor(vec![m, k]), rng.tensor(vec![k, n]));
            let blas = Blas::new(&a, &b, (m, n, k), 1, false);
            let case = Case {
                workload: "W3",
                shape: format!("{m}x{n}x{k}"),
                t: None,
                args: [a, b],
                blas,
                pads: vec![],
            };
            measure(&mut out, &exe, case, reps)?;
        }
    }
    println!();
    for w in ["W1", "W2", "W3"] {
        let ks: Vec<&(String, String, f64)> = out.compile.iter().filter(|c| c.0 == w).collect();
        if !ks.is_empty() {
            println!(
                "{w}: compiled once per kernel: {} kernel{} in {:.2} s ({})",
                ks.len(),
                if ks.len() == 1 { "" } else { "s" },
                ks.iter().map(|c| c.2).sum::<f64>(),
                ks.iter()
                    .map(|c| format!("{} {:.2} s", c.1, c.2))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    // Issue 10: the large cubes against the hardware model's single-core peak.
    if let Some(peak) = ftuner_hw::HardwareModel::load("host")
        .ok()
        .and_then(|m| m.cpu.map(|c| c.peak_gflops_core(4)))
    {
        for (w, shape, t, gf) in &out.cubes {
            if *t == 1 {
                println!(
                    "{w} {shape} (1 thread): ftuner {gf:.1} GFLOP/s = {:.0}% of the model's peak {peak:.1} GFLOP/s per core",
                    100.0 * gf / peak
                );
            }
        }
    }
    for w in ["W1", "W2", "W3", "ATTN"] {
        for &t in &threads {
            let Some(m) = report::summary(&out.points, w, t) else {
                continue;
            };
            println!(
                "{w} ({t} thread{}): geomean GFLOP/s ftuner {:.1}, OpenBLAS {:.1}; time ratio ftuner/OpenBLAS {:.2}; OpenBLAS-time/ftuner-time median {:.2}, min {:.2}, max {:.2} ({} shapes)",
                if t == 1 { "" } else { "s" },
                m.ours_gflops,
                m.blas_gflops,
                m.time_ratio,
                m.speedup.0,
                m.speedup.1,
                m.speedup.2,
                m.shapes
            );
        }
    }
    for line in report::library_summary(&out.points, &threads) {
        println!("{line}");
    }
    for line in report::padding_summary(&out.points, &threads) {
        println!("{line}");
    }
    if let Some(path) = &cli.svg {
        report::svg(&out.points, &threads, path)?;
    }
    if let Some(path) = &cli.doc {
        let section = report::markdown(&out, &threads, &cli_line());
        report::update_doc(path, &section)?;
    }
    Ok(())
}

/// The command line of this run, for the generated documentation.
fn cli_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("target/release/ftuner-bench {}", args.join(" "))
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 2 } else { 0 });
        }
    };
    if let Err(e) = run(&cli) {
        eprintln!("ftuner-bench: error: {e}");
        std::process::exit(1);
    }
}
