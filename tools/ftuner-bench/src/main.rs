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

use clap::Parser as _;
use ftuner_interp::Tensor;
use ftuner_ir::Type;
use std::io::Write;
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
    /// Measure only these shapes (MxNxK as the table prints them, comma-separated; for
    /// A/B runs of one knob on a few shapes).
    #[arg(long)]
    shapes: Option<String>,
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
mod kernels;
mod libs;
mod measure;
mod ollie;
mod report;
mod workloads;

use measure::{POW2, TILE};
use workloads::Workloads;

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
    let ctx = ftuner_transforms::context();
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
        Tensor::from_f64(shape, Type::f32(), data)
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
    /// `--shapes`: the only shapes measured.
    only: Option<Vec<String>>,
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
    // ftuner's idle workers: asleep 200 µs after a job where the libraries run threads of
    // their own (the next library's call must not find them on its cores), awake as
    // ftuner's default where every system runs on ftuner's pool (a batch: one
    // single-threaded library call per problem). A value the user set is kept.
    if std::env::var_os("FTUNER_SPIN_US").is_none() {
        ftuner_runtime::set_spin((batch == 1).then_some(std::time::Duration::from_micros(200)));
    }
    // SAFETY: OpenBLAS's thread count, set between calls.
    unsafe { openblas_set_num_threads(blas as i32) };
    for l in others {
        l.set_threads(blas);
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    let threads = thread_counts(&cli.threads)?;
    let others = libs::load();
    for l in &others {
        eprintln!("ftuner-bench: {} from {}", l.name, l.path.display());
    }
    use_threads(threads[0], 1, &others);
    let reps = if cli.smoke { 3 } else { cli.reps.max(1) };
    let out = Out {
        json: match &cli.json {
            Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("{p}: {e}"))?),
            None => None,
        },
        threads: threads.clone(),
        compile: vec![],
        cubes: vec![],
        points: vec![],
        libs: others,
        only: cli
            .shapes
            .as_ref()
            .map(|s| s.split(',').map(|x| x.trim().to_string()).collect()),
    };
    let want: Vec<&str> = cli.workloads.split(',').map(str::trim).collect();
    let mut w = Workloads {
        cli,
        out,
        rng: Rng(0x2545_F491_4F6C_DD1D),
        reps,
        ts: if cli.smoke {
            &[1, 5]
        } else {
            &[1, 5, 24, 43, 62, 81, 100, 119, 128]
        },
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
        w.w1()?;
    }
    if want.contains(&"w2") {
        w.w2()?;
    }
    if want.contains(&"attn") {
        w.attn()?;
    }
    if want.contains(&"ollie") {
        use_threads(1, 1, &w.out.libs);
        ollie::run(&cli.inputs, &cli.pipeline, reps, cli.smoke, &mut w.out.json)?;
    }
    if want.contains(&"w3") {
        w.w3()?;
    }
    let out = w.out;
    print_summaries(&out, &threads);
    if let Some(path) = &cli.svg {
        report::svg(&out.points, &threads, path)?;
    }
    if let Some(path) = &cli.doc {
        let section = report::markdown(&out, &threads, &cli_line());
        report::update_doc(path, &section)?;
    }
    Ok(())
}

/// The lines after the table: compile times per workload, the large cubes against the
/// hardware model's peak, the geometric means, the libraries' and the padding summaries.
fn print_summaries(out: &Out, threads: &[usize]) {
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
        for &t in threads {
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
    for line in report::library_summary(&out.points, threads) {
        println!("{line}");
    }
    for line in report::padding_summary(&out.points, threads) {
        println!("{line}");
    }
}

/// The command line of this run, for the generated documentation.
fn cli_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("target/release/ftuner-bench {}", args.join(" "))
}

/// The libraries' idle workers, told to sleep at once: after a parallel call Intel OpenMP
/// (MKL's threads) spins 200 ms by default and OpenBLAS up to 2^28 cycles, and on a
/// machine with few cores the spinning workers take cores from whichever system the
/// alternated rounds run next (measured on a 2-core Zen 4: ftuner at two threads ran
/// 2048x768x768 at 100 GFLOP/s between MKL and OpenBLAS calls, 200 GFLOP/s alone; the
/// libraries' own two-thread times scattered likewise). ftuner's workers, which spin 20 ms
/// after a job by default, spin 200 µs where the libraries run their own threads
/// ([`use_threads`]): still across the forks of one GEMM (microseconds apart), not into
/// the next library's call. The linked OpenBLAS reads its variable when the program
/// loads, so the process runs itself again with them set; a variable the user set is kept.
#[cfg(unix)]
fn quiet_idle_workers() {
    const QUIET: [(&str, &str); 3] = [
        ("KMP_BLOCKTIME", "0"),
        ("OMP_WAIT_POLICY", "PASSIVE"),
        ("OPENBLAS_THREAD_TIMEOUT", "4"),
    ];
    if std::env::var_os("FTUNER_BENCH_QUIET").is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.args(std::env::args_os().skip(1))
        .env("FTUNER_BENCH_QUIET", "1");
    for (k, v) in QUIET {
        if std::env::var_os(k).is_none() {
            cmd.env(k, v);
        }
    }
    use std::os::unix::process::CommandExt as _;
    // Only returns on failure: then the run goes on as it is.
    let e = cmd.exec();
    eprintln!(
        "ftuner-bench: could not restart with quiet thread pools ({e}); idle workers may spin"
    );
}

#[cfg(not(unix))]
fn quiet_idle_workers() {}

fn main() {
    quiet_idle_workers();
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
