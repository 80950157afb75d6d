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
//! Workloads (issue 10): W1 dense X[M,K] x W[K,N] with M = 16*T; W2 batch matmul
//! Q[192,T,64] x K[192,T,64]^T; W3 DeepBench's inference-server GEMMs plus 127^3 and
//! 1000^3. Both systems use the same layouts: NN for W1/W3 (DeepBench's transpose flags
//! are not applied), NT for W2.

use cblas_sys::{cblas_sgemm, CBLAS_LAYOUT, CBLAS_TRANSPOSE};
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
    /// batch-matmuls) and ollie (conv layers: direct loops vs implicit-GEMM uKernels vs
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

mod ollie;

const PIPELINE: &str =
    "builtin.module(canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)";

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

fn matmul_src(k: usize, n: usize) -> String {
    format!(
        r#"func.func @mm(%a: tensor<?x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<?x{n}xf32> {{
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x{k}xf32>
  %e = tensor.empty(%m) : tensor<?x{n}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x{n}xf32>) -> tensor<?x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x{k}xf32>, tensor<{k}x{n}xf32>) outs(%f : tensor<?x{n}xf32>) -> tensor<?x{n}xf32>
  return %r : tensor<?x{n}xf32>
}}"#
    )
}

const DYN_MM: &str = include_str!("../../../examples/kernels/matmul_dynamic.mlir");

const BMM_NT: &str = r#"func.func @mm(%q: tensor<192x?x64xf32>, %k: tensor<192x?x64xf32>) -> tensor<192x?x?xf32> {
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %t = tensor.dim %q, %c1 : tensor<192x?x64xf32>
  %s = tensor.dim %k, %c1 : tensor<192x?x64xf32>
  %e = tensor.empty(%t, %s) : tensor<192x?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<192x?x?xf32>) -> tensor<192x?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<192x?x64xf32>, tensor<192x?x64xf32>) outs(%f : tensor<192x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %a = arith.addf %o, %p : f32
    linalg.yield %a : f32
  } -> tensor<192x?x?xf32>
  return %r : tensor<192x?x?xf32>
}"#;

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

fn f32s(t: &Tensor) -> Vec<f32> {
    t.data.iter().map(|x| *x as f32).collect()
}

/// OpenBLAS on the same problem: C = A(MxK) * B, B as KxN (NN) or NxK (NT), `batch`
/// independent problems laid out back to back.
struct Blas {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    m: usize,
    n: usize,
    k: usize,
    batch: usize,
    nt: bool,
}

impl Blas {
    /// `batch` problems of (m, n, k); B is KxN (NN) or NxK (NT).
    fn new(
        a: &Tensor,
        b: &Tensor,
        (m, n, k): (usize, usize, usize),
        batch: usize,
        nt: bool,
    ) -> Blas {
        Blas {
            a: f32s(a),
            b: f32s(b),
            c: vec![0.0; batch * m * n],
            m,
            n,
            k,
            batch,
            nt,
        }
    }
    fn flops(&self) -> f64 {
        2.0 * (self.batch * self.m * self.n * self.k) as f64
    }
    /// All `batch` problems; with `threads` > 1 and several problems, the problems are
    /// spread over the threads (ftuner's pool, each sgemm single-threaded — see
    /// [`use_threads`] — how a batched GEMM is best run on a BLAS without a batched
    /// interface), else one call after the other with OpenBLAS's own threads.
    fn run(&mut self, threads: usize) {
        let c = self.c.as_mut_ptr();
        if threads > 1 && self.batch > 1 {
            // SAFETY: `blas_range` on this `Blas`; chunks are disjoint batches, each
            // writing only its own part of `c`.
            let job = (&*self, c);
            unsafe {
                ftuner_codegen::parallel::ftuner_rt_parallel_for(
                    blas_range,
                    &job as *const (&Blas, *mut f32) as *mut std::ffi::c_void,
                    self.batch as i64,
                )
            };
        } else {
            for i in 0..self.batch {
                self.one(i, c);
            }
        }
    }
    /// Problem `i`, writing its part of `c` (this `Blas`'s result buffer).
    fn one(&self, i: usize, c: *mut f32) {
        let (m, n, k) = (self.m as i32, self.n as i32, self.k as i32);
        let (a, b) = (
            &self.a[i * self.m * self.k..],
            &self.b[i * self.k * self.n..],
        );
        // Problems write disjoint ranges of `c` (and may run on several threads).
        // SAFETY: i < batch, so the offset stays inside the buffer.
        let c = unsafe { c.add(i * self.m * self.n) };
        // SAFETY: the slices hold at least the m*k, k*n and m*n elements cblas reads
        // and writes, with the leading dimensions given.
        unsafe {
            cblas_sgemm(
                CBLAS_LAYOUT::CblasRowMajor,
                CBLAS_TRANSPOSE::CblasNoTrans,
                if self.nt {
                    CBLAS_TRANSPOSE::CblasTrans
                } else {
                    CBLAS_TRANSPOSE::CblasNoTrans
                },
                m,
                n,
                k,
                1.0,
                a.as_ptr(),
                k,
                b.as_ptr(),
                if self.nt { k } else { n },
                0.0,
                c,
                n,
            );
        }
    }
}

/// Problems `lo .. hi` of the `Blas` at `ctx`.
unsafe extern "C" fn blas_range(ctx: *mut std::ffi::c_void, lo: i64, hi: i64) {
    // SAFETY: `Blas::run` passes itself and its result buffer; the problems touch
    // disjoint parts of the buffer.
    let (b, c) = unsafe { *(ctx as *const (&Blas, *mut f32)) };
    for i in lo..hi {
        b.one(i as usize, c);
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

/// (workload, threads, ftuner GFLOP/s, OpenBLAS GFLOP/s, time ratio) per shape.
type Row = (String, usize, f64, f64, f64);

struct Out {
    json: Option<std::fs::File>,
    ratios: Vec<Row>,
    threads: Vec<usize>,
    /// (workload, kernel, seconds) of each compilation.
    compile: Vec<(String, String, f64)>,
    /// (workload, shape, threads, ftuner GFLOP/s) of the large cubes.
    cubes: Vec<(String, String, usize, f64)>,
}

/// Both systems on `threads` threads, set outside the timed calls: ftuner's pool, and
/// OpenBLAS's own threads, or one OpenBLAS thread per problem when `batch` problems are
/// spread over the pool.
fn use_threads(threads: usize, batch: usize) {
    ftuner_runtime::set_num_threads(threads);
    let blas = if batch > 1 { 1 } else { threads };
    // SAFETY: OpenBLAS's thread count, set between calls.
    unsafe { openblas_set_num_threads(blas as i32) };
}

#[allow(clippy::too_many_arguments)]
fn measure(
    out: &mut Out,
    exe: &ftuner_runtime::Executable,
    workload: &str,
    shape: String,
    args: [Tensor; 2],
    mut blas: Blas,
    flops: f64,
    reps: usize,
) -> Result<(), String> {
    let rargs: Vec<RtVal> = args
        .iter()
        .map(|t| RtVal::Tensor(Rc::new(t.clone())))
        .collect();
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
    for t in out.threads.clone() {
        use_threads(t, blas.batch);
        // One more call of each at this thread count (the pools start, caches settle).
        exe.time(&prepared).map_err(|e| e.0)?;
        blas.run(t);
        let (mut ours, mut theirs) = (vec![], vec![]);
        for _ in 0..reps {
            ours.push(exe.time(&prepared).map_err(|e| e.0)?.as_secs_f64());
            let t0 = Instant::now();
            blas.run(t);
            theirs.push(t0.elapsed().as_secs_f64());
        }
        let (mo, mb) = (median(&mut ours), median(&mut theirs));
        let (go, gb) = (flops / mo / 1e9, flops / mb / 1e9);
        println!(
            "{workload:4} {shape:>22} {t:>3} {:>10.3} {:>10.3} {go:>8.1} {gb:>8.1} {:>7.2} {err:>9.2e}",
            mo * 1e3,
            mb * 1e3,
            mo / mb
        );
        if let Some(f) = &mut out.json {
            for (sys, med, gf) in [("ftuner", mo, go), ("openblas", mb, gb)] {
                let _ = writeln!(
                    f,
                    "{{\"system\": \"{sys}\", \"workload\": \"{workload}\", \"shape\": \"{shape}\", \"threads\": {t}, \"median_s\": {med:e}, \"gflops\": {gf:.3}, \"reps\": {reps}, \"max_abs_err\": {err:e}}}"
                );
            }
        }
        out.ratios.push((workload.to_string(), t, go, gb, mo / mb));
        if ["1000x1000x1000", "2048x2048x2048"].contains(&shape.as_str()) {
            out.cubes.push((workload.to_string(), shape.clone(), t, go));
        }
    }
    Ok(())
}

fn run(cli: &Cli) -> Result<(), String> {
    let threads = thread_counts(&cli.threads)?;
    use_threads(threads[0], 1);
    let reps = if cli.smoke { 3 } else { cli.reps.max(1) };
    let mut out = Out {
        json: match &cli.json {
            Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("{p}: {e}"))?),
            None => None,
        },
        ratios: vec![],
        threads: threads.clone(),
        compile: vec![],
        cubes: vec![],
    };
    let want: Vec<&str> = cli.workloads.split(',').map(str::trim).collect();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let ts: &[usize] = if cli.smoke {
        &[1, 5]
    } else {
        &[1, 5, 24, 43, 62, 81, 100, 119, 128]
    };
    println!(
        "{:4} {:>22} {:>3} {:>10} {:>10} {:>8} {:>8} {:>7} {:>9}",
        "wl", "shape (MxNxK)", "thr", "ftuner_ms", "blas_ms", "ftuner", "blas", "ratio", "max_err"
    );
    if want.contains(&"w1") {
        let kn: &[(usize, usize)] = if cli.smoke {
            &[(768, 768)]
        } else {
            &[(768, 2304), (768, 768), (3072, 768), (768, 3072)]
        };
        for &(k, n) in kn {
            let (exe, secs) = compile_timed(&matmul_src(k, n), &cli.pipeline)?;
            out.compiled("W1", format!("?x{k} * {k}x{n}"), secs);
            for &t in ts {
                let m = 16 * t;
                let (a, b) = (rng.tensor(vec![m, k]), rng.tensor(vec![k, n]));
                let blas = Blas::new(&a, &b, (m, n, k), 1, false);
                let flops = blas.flops();
                measure(
                    &mut out,
                    &exe,
                    "W1",
                    format!("{m}x{n}x{k}"),
                    [a, b],
                    blas,
                    flops,
                    reps,
                )?;
            }
        }
    }
    if want.contains(&"w2") {
        let (exe, secs) = compile_timed(BMM_NT, &cli.pipeline)?;
        out.compiled("W2", "192x?x64 * (192x?x64)^T".into(), secs);
        for &t in ts {
            let (q, kk) = (rng.tensor(vec![192, t, 64]), rng.tensor(vec![192, t, 64]));
            let blas = Blas::new(&q, &kk, (t, t, 64), 192, true);
            let flops = blas.flops();
            measure(
                &mut out,
                &exe,
                "W2",
                format!("192x{t}x{t}x64"),
                [q, kk],
                blas,
                flops,
                reps,
            )?;
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
                let flops = blas.flops();
                measure(
                    &mut out,
                    &exe,
                    "ATTN",
                    format!("12x{m}x{n}x{k}"),
                    [a, b],
                    blas,
                    flops,
                    reps,
                )?;
            }
        }
    }
    if want.contains(&"ollie") {
        use_threads(1, 1);
        ollie::run(&cli.inputs, reps, cli.smoke, &mut out.json)?;
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
            let flops = blas.flops();
            measure(
                &mut out,
                &exe,
                "W3",
                format!("{m}x{n}x{k}"),
                [a, b],
                blas,
                flops,
                reps,
            )?;
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
            let rs: Vec<&Row> = out.ratios.iter().filter(|r| r.0 == w && r.1 == t).collect();
            if rs.is_empty() {
                continue;
            }
            let geo = |f: &dyn Fn(&Row) -> f64| {
                (rs.iter().map(|r| f(r).ln()).sum::<f64>() / rs.len() as f64).exp()
            };
            // Speed-up of ftuner over OpenBLAS per shape (OpenBLAS time / ftuner time).
            let mut up: Vec<f64> = rs.iter().map(|r| 1.0 / r.4).collect();
            let med = median(&mut up);
            println!(
                "{w} ({t} thread{}): geomean GFLOP/s ftuner {:.1}, OpenBLAS {:.1}; time ratio ftuner/OpenBLAS {:.2}; OpenBLAS-time/ftuner-time median {med:.2}, min {:.2}, max {:.2} ({} shapes)",
                if t == 1 { "" } else { "s" },
                geo(&|r| r.2),
                geo(&|r| r.3),
                geo(&|r| r.4),
                up[0],
                up[up.len() - 1],
                rs.len()
            );
        }
    }
    Ok(())
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
