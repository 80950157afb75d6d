//! `ftuner-gpu-bench`: ftuner's PTX against cuBLAS on an NVIDIA GPU, over W1 (BERT's dense
//! layers `16T x K * K x N`, M dynamic) and W2 (192 heads of `Q · Kᵀ`, T dynamic).
//!
//! Each workload is compiled once with its dynamic dims left dynamic
//! (`ftuner-gpu-pipeline{target=}`, the device's hardware model), its `gpu.module` to PTX
//! for the device, loaded through the driver. Per shape, the host program runs once on the
//! reference interpreter with a recording launcher (the kernels on the device; the result
//! checked against cuBLAS's on the same inputs), then the recorded launches are replayed on
//! device-resident buffers ([`Replay`]: the accumulator's zero fill is a memset inside the
//! timed run) and timed with CUDA events beside cuBLAS on the same buffers, alternated
//! round by round, the median of the rounds reported. Without a driver or a device it says
//! so and exits 0; without cuBLAS, ftuner's column alone.
//!
//! ```text
//! ftuner-gpu-bench [--workloads w1,w2] [--rounds 7] [--json out.jsonl] [--summary out.md]
//! ```

mod cublas;
#[path = "../kernels.rs"]
mod kernels;

use clap::Parser as _;
use cublas::Cublas;
use ftuner_interp::{run_with_launcher, RtVal, Tensor};
use ftuner_ir::Type;
use ftuner_runtime::cuda::{ptx_for, Cuda, CudaLauncher, Recording, Replay};
use std::io::Write;
use std::rc::Rc;
use std::time::Instant;

#[derive(clap::Parser, Debug)]
#[command(
    name = "ftuner-gpu-bench",
    about = "ftuner's PTX for dynamic-shape GEMM and batch-matmul against cuBLAS"
)]
struct Cli {
    /// Workloads: w1, w2 (comma-separated).
    #[arg(long, default_value = "w1,w2")]
    workloads: String,
    /// Timed rounds per system and shape (alternated; the median is reported).
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// The lengths T (M = 16T for W1; T x T per head for W2), comma-separated.
    #[arg(long, default_value = "1,5,24,43,62,81,100,119,128,256,512")]
    ts: String,
    /// GPU hardware model for patch-ukernels (default: `cuda:sm_XY` of the device when
    /// the model knows it, else `a100`).
    #[arg(long)]
    target: Option<String>,
    /// One JSON object per shape.
    #[arg(long)]
    json: Option<String>,
    /// A markdown summary.
    #[arg(long)]
    summary: Option<String>,
    /// Write each workload's PTX here (`w1-768x2304.ptx`, `w2.ptx`), for `ptxas -v`.
    #[arg(long)]
    ptx_dir: Option<String>,
    /// Only compile every kernel to PTX for H100-class GPUs (`--target`, default h100)
    /// into this folder; no device needed.
    #[arg(long)]
    ptx_only: Option<String>,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ftuner-gpu-bench: error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// One shape's measurement.
struct Row {
    workload: &'static str,
    shape: String,
    flop: f64,
    ours_ms: f64,
    blas_ms: Option<f64>,
    launches: usize,
    max_rel_err: Option<f64>,
}

/// A deterministic generator of inputs in [-1, 1).
struct Rng(u64);
impl Rng {
    fn data(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A workload's kernel and the shapes it is measured at.
struct Kernel {
    workload: &'static str,
    label: String,
    src: String,
    /// Its PTX file's name under `--ptx-dir`.
    file: String,
    cases: Vec<Case>,
}

/// One shape: the inputs' shapes, the library call computing the same, the work.
struct Case {
    shape: String,
    inputs: Vec<Vec<usize>>,
    blas: BlasCall,
    out_len: usize,
    flop: f64,
}

#[derive(Clone, Copy)]
enum BlasCall {
    /// Row-major `m x k * k x n`.
    Gemm(usize, usize, usize),
    /// `batch` times `t x d * (t x d)ᵀ`.
    NtBatched(usize, usize, usize),
}

impl BlasCall {
    fn call(self, b: &Cublas, inputs: &[u64], out: u64) -> Result<(), String> {
        match self {
            BlasCall::Gemm(m, n, k) => b.gemm(m, n, k, inputs[0], inputs[1], out),
            BlasCall::NtBatched(batch, t, d) => {
                b.gemm_nt_batched(batch, t, d, inputs[0], inputs[1], out)
            }
        }
    }
}

/// W1: BERT's dense layers at M = 16T, one dynamic kernel per (K, N); W2: Q·Kᵀ over 192
/// heads, one kernel dynamic in T.
fn workload(w: &str, ts: &[usize]) -> Result<Vec<Kernel>, String> {
    match w {
        "w1" => Ok([(768, 2304), (768, 768), (3072, 768), (768, 3072)]
            .into_iter()
            .map(|(k, n)| Kernel {
                workload: "W1",
                label: format!("?x{k} * {k}x{n}"),
                src: kernels::matmul_src(None, k, n),
                file: format!("w1-{k}x{n}.ptx"),
                cases: ts
                    .iter()
                    .map(|&t| {
                        let m = 16 * t;
                        Case {
                            shape: format!("{m}x{n}x{k}"),
                            inputs: vec![vec![m, k], vec![k, n]],
                            blas: BlasCall::Gemm(m, n, k),
                            out_len: m * n,
                            flop: 2.0 * (m * n * k) as f64,
                        }
                    })
                    .collect(),
            })
            .collect()),
        "w2" => Ok(vec![Kernel {
            workload: "W2",
            label: "192 x ?x64 * (?x64)ᵀ".into(),
            src: kernels::bmm_nt_src(None),
            file: "w2.ptx".into(),
            cases: ts
                .iter()
                .map(|&t| Case {
                    shape: format!("192x{t}x{t}x64"),
                    inputs: vec![vec![192, t, 64], vec![192, t, 64]],
                    blas: BlasCall::NtBatched(192, t, 64),
                    out_len: 192 * t * t,
                    flop: 2.0 * (192 * t * t * 64) as f64,
                })
                .collect(),
        }]),
        other => Err(format!("unknown workload {other:?} (w1, w2)")),
    }
}

/// The host module (interpreted) after `ftuner-gpu-pipeline`, and its kernels' PTX.
struct Built {
    ctx: ftuner_ir::Context,
    m: ftuner_ir::ParsedModule,
    ptx: String,
}

fn build(src: &str, target: &str, sm: &str) -> Result<Built, String> {
    let ctx = ftuner_transforms::context();
    let mut m = ftuner_ir::parse_module(&ctx, src, "gpu-bench.mlir").map_err(|d| d.message)?;
    let reg = ftuner_opt::default_registry();
    let p = format!("builtin.module(ftuner-gpu-pipeline{{target={target}}})");
    let mut pm = ftuner_pass::PassManager::from_pipeline(&reg, &p).map_err(|e| e.to_string())?;
    pm.run(&ctx, &mut m.ir, m.top).map_err(|e| e.to_string())?;
    let ptx = ptx_for(&ctx, &m.ir, m.top, sm)?;
    Ok(Built { ctx, m, ptx })
}

/// Time `ours` and `blas` alternately; each round `reps` calls between two events.
fn time_pair(
    cuda: &Cuda,
    rounds: usize,
    ours: &mut dyn FnMut() -> Result<(), String>,
    blas: Option<&mut dyn FnMut() -> Result<(), String>>,
) -> Result<(f64, Option<f64>), String> {
    // Warm up, and size the repetitions to about 5 ms per timing.
    let one = cuda.time(3, ours)?;
    let reps = ((5.0 / one.max(1e-4)) as usize).clamp(3, 500);
    let (mut a, mut b) = (vec![], vec![]);
    let mut blas = blas;
    if let Some(f) = blas.as_deref_mut() {
        cuda.time(3, f)?;
    }
    for r in 0..rounds {
        let first_ours = r % 2 == 0;
        if first_ours {
            a.push(cuda.time(reps, ours)?);
        }
        if let Some(f) = blas.as_deref_mut() {
            b.push(cuda.time(reps, f)?);
        }
        if !first_ours {
            a.push(cuda.time(reps, ours)?);
        }
    }
    Ok((median(a), (!b.is_empty()).then(|| median(b))))
}

/// The largest `|x - y|` over the largest `|y|`.
fn rel_err(x: &[f32], y: &[f32]) -> f64 {
    if x.len() != y.len() {
        return f64::INFINITY;
    }
    let scale = y.iter().fold(1e-30f64, |m, v| m.max(v.abs() as f64));
    let d = x
        .iter()
        .zip(y)
        .fold(0f64, |m, (a, b)| m.max((*a as f64 - *b as f64).abs()));
    d / scale
}

/// Run one shape: record (interpreter host, kernels on the device), replay, time beside
/// cuBLAS on the same inputs (its own output buffer), compare the two results.
fn measure(
    cuda: &Cuda,
    built: &Built,
    launcher: &mut CudaLauncher<'_>,
    case: &Case,
    rng: &mut Rng,
    rounds: usize,
    blas: Option<&Cublas>,
) -> Result<Row, String> {
    let data: Vec<Vec<f32>> = case
        .inputs
        .iter()
        .map(|s| rng.data(s.iter().product()))
        .collect();
    let args: Vec<RtVal> = case
        .inputs
        .iter()
        .zip(&data)
        .map(|(s, d)| {
            RtVal::Tensor(Rc::new(Tensor::from_f64(
                s.clone(),
                Type::f32(),
                d.iter().map(|x| *x as f64).collect(),
            )))
        })
        .collect();
    launcher.recording = Some(Recording::default());
    let got = run_with_launcher(&built.ctx, &built.m.ir, built.m.top, "mm", args, launcher)
        .map_err(|e| e.to_string())?;
    let rec = launcher.recording.take().unwrap_or_default();
    let ours: Vec<f32> = got[0]
        .tensor()
        .ok_or("the host function returned no tensor")?
        .data
        .iter()
        .map(|x| x.f() as f32)
        .collect();
    let replay = Replay::new(launcher.module(), &rec)?;
    let mut run_ours = || replay.run();
    let (ours_ms, blas_ms, max_rel_err) = match blas {
        Some(b) => {
            let bufs: Vec<_> = data
                .iter()
                .map(|d| cuda.upload(d))
                .collect::<Result<_, _>>()?;
            let ptrs: Vec<u64> = bufs.iter().map(|b| b.ptr()).collect();
            let out = cuda.upload(&vec![0f32; case.out_len])?;
            let mut run_blas = || case.blas.call(b, &ptrs, out.ptr());
            let (a, t) = time_pair(cuda, rounds, &mut run_ours, Some(&mut run_blas))?;
            cuda.synchronize()?;
            (a, t, Some(rel_err(&ours, &out.download()?)))
        }
        None => (time_pair(cuda, rounds, &mut run_ours, None)?.0, None, None),
    };
    Ok(Row {
        workload: "",
        shape: case.shape.clone(),
        flop: case.flop,
        ours_ms,
        blas_ms,
        launches: replay.launches(),
        max_rel_err,
    })
}

fn run(cli: &Cli) -> Result<(), String> {
    let ts: Vec<usize> = cli
        .ts
        .split(',')
        .map(|t| t.trim().parse().map_err(|_| format!("bad T {t:?}")))
        .collect::<Result<_, _>>()?;
    let kernels: Vec<Kernel> = cli
        .workloads
        .split(',')
        .map(|w| workload(w.trim(), &ts))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    if let Some(dir) = &cli.ptx_only {
        // No device needed: what a device run would load, for H100-class GPUs.
        for k in &kernels {
            let b = build(&k.src, cli.target.as_deref().unwrap_or("h100"), "sm_90")?;
            let p = format!("{dir}/{}", k.file);
            std::fs::write(&p, &b.ptx).map_err(|e| format!("{p}: {e}"))?;
            println!(
                "{}: {} kernels -> {p}",
                k.label,
                b.ptx.matches(".visible .entry").count()
            );
        }
        return Ok(());
    }
    let cuda = match Cuda::open()? {
        Some(c) => c,
        None => {
            println!("ftuner-gpu-bench: skipped (no CUDA driver or no NVIDIA device here)");
            return Ok(());
        }
    };
    // LLVM 22 emits PTX up to sm_90; newer devices JIT it.
    let sm = match cuda.capability.0 > 9 {
        true => "sm_90".to_string(),
        false => cuda.sm(),
    };
    let target = cli.target.clone().unwrap_or_else(|| {
        let t = format!("cuda:{sm}");
        match ftuner_hw::HardwareModel::load(&t) {
            Ok(_) => t,
            Err(_) => "a100".into(),
        }
    });
    let blas = Cublas::open()?;
    match &blas {
        Some(b) => println!("cuBLAS {} ({})", b.version, b.path),
        None => println!("cuBLAS not found: ftuner's column alone (set FTUNER_CUBLAS)"),
    }
    println!("device: {} (PTX {sm}, hardware model {target})", cuda.name);
    let mut json = match &cli.json {
        Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("{p}: {e}"))?),
        None => None,
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut rows = vec![];
    let mut errors = vec![];
    println!(
        "{:3} {:>20} {:>9} {:>9} {:>9} {:>9} {:>7} {:>4} {:>9}",
        "wl",
        "shape",
        "ftuner_ms",
        "cublas_ms",
        "ftuner_GF",
        "cublas_GF",
        "ratio",
        "lnch",
        "rel_err"
    );
    for k in &kernels {
        let t0 = Instant::now();
        let built = build(&k.src, &target, &sm)?;
        if let Some(d) = &cli.ptx_dir {
            let p = format!("{d}/{}", k.file);
            std::fs::write(&p, &built.ptx).map_err(|e| format!("{p}: {e}"))?;
        }
        let mut launcher = CudaLauncher::recording(cuda.load(&built.ptx)?);
        println!(
            "{} {}: compiled in {:.2} s",
            k.workload,
            k.label,
            t0.elapsed().as_secs_f64()
        );
        for case in &k.cases {
            match measure(
                &cuda,
                &built,
                &mut launcher,
                case,
                &mut rng,
                cli.rounds,
                blas.as_ref(),
            ) {
                Ok(r) => {
                    let r = Row {
                        workload: k.workload,
                        ..r
                    };
                    report(&r, &mut json)?;
                    rows.push(r);
                }
                Err(e) => {
                    println!("{} {}: error: {e}", k.workload, case.shape);
                    errors.push(format!("{} {}: {e}", k.workload, case.shape));
                }
            }
        }
    }
    let text = summary(&cuda.name, &target, blas.as_ref(), &rows);
    print!("{text}");
    if let Some(p) = &cli.summary {
        std::fs::write(p, &text).map_err(|e| format!("{p}: {e}"))?;
    }
    let bad: Vec<&Row> = rows
        .iter()
        .filter(|r| r.max_rel_err.is_some_and(|e| e.is_nan() || e > 1e-4))
        .collect();
    if let Some(e) = errors.first() {
        return Err(format!("{} shapes failed (first: {e})", errors.len()));
    }
    if let Some(r) = bad.first() {
        return Err(format!(
            "{} of {} shapes disagree with cuBLAS (first: {} {}, relative error {:.2e})",
            bad.len(),
            rows.len(),
            r.workload,
            r.shape,
            r.max_rel_err.unwrap_or(f64::NAN)
        ));
    }
    Ok(())
}

fn gflops(flop: f64, ms: f64) -> f64 {
    flop / (ms * 1e6)
}

fn report(r: &Row, json: &mut Option<std::fs::File>) -> Result<(), String> {
    let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("-".to_string(), f);
    println!(
        "{:3} {:>20} {:>9.4} {:>9} {:>9.0} {:>9} {:>7} {:>4} {:>9}",
        r.workload,
        r.shape,
        r.ours_ms,
        opt(r.blas_ms, &|x| format!("{x:.4}")),
        gflops(r.flop, r.ours_ms),
        opt(r.blas_ms, &|x| format!("{:.0}", gflops(r.flop, x))),
        opt(r.blas_ms, &|x| format!("{:.3}", x / r.ours_ms)),
        r.launches,
        opt(r.max_rel_err, &|x| format!("{x:.1e}")),
    );
    if let Some(f) = json {
        let num = |x: Option<f64>| x.map_or("null".to_string(), |v| format!("{v:.6}"));
        writeln!(
            f,
            "{{\"workload\": \"{}\", \"shape\": \"{}\", \"flop\": {}, \"ftuner_ms\": {:.6}, \"cublas_ms\": {}, \"launches\": {}, \"max_rel_err\": {}}}",
            r.workload,
            r.shape,
            r.flop,
            r.ours_ms,
            num(r.blas_ms),
            r.launches,
            num(r.max_rel_err)
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The markdown summary: per workload, the median cuBLAS-time / ftuner-time and the
/// GFLOP/s of both at the largest shape; then every shape.
fn summary(device: &str, target: &str, blas: Option<&Cublas>, rows: &[Row]) -> String {
    let mut s = format!(
        "# ftuner-gpu-bench: {device}\n\nPTX from `ftuner-gpu-pipeline{{target={target}}}`, one dynamic kernel per workload; {}. \
         Ratio = cuBLAS time / ftuner time (> 1: ftuner faster); medians of alternated rounds, CUDA events.\n\n",
        blas.map_or("cuBLAS not found".to_string(), |b| format!("cuBLAS {} in default math (FP32, no TF32)", b.version))
    );
    s += "| workload | shapes | median ratio | min | max | ftuner GFLOP/s (largest) | cuBLAS GFLOP/s (largest) |\n|---|---|---|---|---|---|---|\n";
    for w in ["W1", "W2"] {
        let rs: Vec<&Row> = rows.iter().filter(|r| r.workload == w).collect();
        if rs.is_empty() {
            continue;
        }
        let ratios: Vec<f64> = rs
            .iter()
            .filter_map(|r| r.blas_ms.map(|b| b / r.ours_ms))
            .collect();
        let big = rs
            .iter()
            .max_by(|a, b| a.flop.total_cmp(&b.flop))
            .expect("non-empty");
        let (med, lo, hi) = match ratios.is_empty() {
            true => ("-".into(), "-".into(), "-".into()),
            false => (
                format!("{:.3}", median(ratios.clone())),
                format!(
                    "{:.3}",
                    ratios.iter().copied().fold(f64::INFINITY, f64::min)
                ),
                format!("{:.3}", ratios.iter().copied().fold(0.0, f64::max)),
            ),
        };
        s += &format!(
            "| {w} | {} | {med} | {lo} | {hi} | {:.0} | {} |\n",
            rs.len(),
            gflops(big.flop, big.ours_ms),
            big.blas_ms
                .map_or("-".into(), |b| format!("{:.0}", gflops(big.flop, b)))
        );
    }
    s += "\n| workload | shape (MxNxK) | ftuner ms | cuBLAS ms | ratio | launches | max rel. error |\n|---|---|---|---|---|---|---|\n";
    for r in rows {
        s += &format!(
            "| {} | {} | {:.4} | {} | {} | {} | {} |\n",
            r.workload,
            r.shape,
            r.ours_ms,
            r.blas_ms.map_or("-".into(), |b| format!("{b:.4}")),
            r.blas_ms
                .map_or("-".into(), |b| format!("{:.3}", b / r.ours_ms)),
            r.launches,
            r.max_rel_err.map_or("-".into(), |e| format!("{e:.1e}"))
        );
    }
    s
}
