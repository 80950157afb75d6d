//! `ftuner-e2e`: a whole layer with a dynamic sequence length, compiled once, run at every
//! length of a sweep, checked, and timed against the bucket approach built with the same
//! compiler.
//!
//! ```text
//! ftuner-e2e examples/bert_layer_dynamic.mlir --seq 2..512 --check-loops --check-interp 2,7,33 \
//!     --json e2e.jsonl --svg e2e.svg
//! ```
//!
//! * ftuner: the layer compiled once with `?` dims (patch-ukernels, lower-ukernels), run at
//!   each T.
//! * buckets: the layer compiled once per bucket size (32, 64, 128, 256, 512) with the
//!   dynamic dims fixed to it (a `tensor.cast` at entry, so every shape is static), the
//!   input zero-padded from T up to the next bucket.
//! * checks: `--check-loops` compares every T with the same layer lowered without
//!   patch-ukernels (plain loops: an independent lowering of every contraction);
//!   `--check-interp` compares the listed T with the reference interpreter running the
//!   layer as read. Tolerance `1e-5 * (1 + |ref|) * sqrt(R)`, R the largest extent (3072
//!   for BERT), as `ftuner-run --check`.
//!
//! Every dynamic dim of every argument takes T. Times are medians of `--reps` runs of the
//! compiled function alone, one thread.

mod blas_calls;
mod layer;
mod plot;

use clap::Parser;
use ftuner_interp::{RtVal, Tensor};
use ftuner_ir::DYNAMIC;
use ftuner_run::Rng;
use layer::{compile, entry, load, pad, tensor, Layer};
use plot::{rows_from_json, svg, Row};
use std::io::Write;
use std::rc::Rc;

extern crate openblas_src;

#[derive(Parser)]
#[command(
    name = "ftuner-e2e",
    about = "A dynamic-shape layer over a sweep of lengths: compiled once, checked, against buckets"
)]
struct Cli {
    /// The layer (MLIR with `?` dims).
    layer: Option<String>,
    /// Lengths: `A..B` (inclusive) or a list `a,b,c`.
    #[arg(long, default_value = "2..512")]
    seq: String,
    /// Step through an `A..B` range.
    #[arg(long, default_value_t = 1)]
    step: usize,
    /// Timed runs per length (median).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Bucket sizes for the padding baseline.
    #[arg(long, value_delimiter = ',', default_value = "32,64,128,256,512")]
    buckets: Vec<usize>,
    /// No bucket baseline.
    #[arg(long)]
    no_buckets: bool,
    /// Also time the layer with every matmul / batch_matmul done by OpenBLAS (one thread)
    /// and the rest by our generated loops.
    #[arg(long)]
    blas: bool,
    /// Check every length against the layer lowered without patch-ukernels.
    #[arg(long)]
    check_loops: bool,
    /// Check these lengths against the reference interpreter.
    #[arg(long, value_delimiter = ',')]
    check_interp: Vec<usize>,
    /// JSON lines, one per length.
    #[arg(long)]
    json: Option<String>,
    /// An SVG plot of latency against length.
    #[arg(long)]
    svg: Option<String>,
    /// Compile ftuner's version with the schedules of this tuning database
    /// (`patch-ukernels{tuning-db=...}`; ftuner-tune) instead of the analytic defaults.
    #[arg(long)]
    tuning_db: Option<String>,
    /// The static arguments (the weights) are drawn from U(-S, S) instead of U(-1, 1).
    /// A layer whose output is not normalized (a GPT-2 block ends on the residual stream)
    /// needs realistic magnitudes for the checks: with U(-1, 1) weights its activations
    /// reach 1e3 and float32 rounding alone exceeds the per-element tolerance near zero.
    /// 0.036 is PyTorch's `Linear` bound for 768 inputs.
    #[arg(long, default_value_t = 1.0)]
    weight_scale: f64,
    /// Only redraw `--svg` from a `--json` file of an earlier run (the layer is not run).
    #[arg(long)]
    replot: Option<String>,
}

const PIPELINE: &str =
    "builtin.module(canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)";
const LOOPS: &str = "builtin.module(canonicalize,cse)";
/// Contractions to OpenBLAS, the rest ours: bufferized, then the library calls.
const BLAS: &str =
    "builtin.module(canonicalize,cse,bufferize,convert-linalg-to-library-calls,canonicalize,cse)";

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time(
    exe: &ftuner_runtime::Executable,
    name: &str,
    args: &[RtVal],
    reps: usize,
) -> Result<f64, String> {
    let p = exe.prepare(name, args).map_err(|e| e.0)?;
    exe.time(&p).map_err(|e| e.0)?;
    let mut ts = vec![];
    for _ in 0..reps.max(1) {
        ts.push(exe.time(&p).map_err(|e| e.0)?.as_secs_f64());
    }
    Ok(median(&mut ts))
}

fn lengths(cli: &Cli) -> Result<Vec<usize>, String> {
    let s = cli.seq.trim();
    if let Some((a, b)) = s.split_once("..") {
        let (a, b): (usize, usize) = (
            a.parse()
                .map_err(|_| format!("--seq: '{a}' is not a length"))?,
            b.parse()
                .map_err(|_| format!("--seq: '{b}' is not a length"))?,
        );
        if a == 0 || b < a {
            return Err(format!("--seq {s}: expected 1 <= A <= B"));
        }
        return Ok((a..=b).step_by(cli.step.max(1)).collect());
    }
    s.split(',')
        .map(|x| {
            x.trim()
                .parse::<usize>()
                .ok()
                .filter(|v| *v > 0)
                .ok_or_else(|| format!("--seq: '{x}' is not a length"))
        })
        .collect()
}

/// The layer's compilations: ftuner's (once, the lengths dynamic), the OpenBLAS
/// variant, the loop lowering (`--check-loops`) and the buckets.
struct Systems {
    exe: ftuner_runtime::Executable,
    compile_s: f64,
    blas: Option<ftuner_runtime::Executable>,
    loops: Option<ftuner_runtime::Executable>,
    /// (bucket size, its kernel), smallest first.
    buckets: Vec<(usize, ftuner_runtime::Executable)>,
    bucket_compile: f64,
}

impl Systems {
    /// Compile every system `cli` asks for, saying how long each took.
    fn compile(cli: &Cli, src: &str, file: &str, layer: &Layer) -> Result<Systems, String> {
        let tuned;
        let ftuner_pipeline = match &cli.tuning_db {
            Some(db) => {
                tuned = PIPELINE.replace("target=host", &format!("target=host tuning-db={db}"));
                tuned.as_str()
            }
            None => PIPELINE,
        };
        let (exe, compile_s) = compile(src, file, ftuner_pipeline, None)?;
        eprintln!("compiled @{} once in {compile_s:.2} s", layer.name);
        let blas = if cli.blas {
            // SAFETY: single-threaded OpenBLAS; the callees have exactly the
            // expanded-descriptor signatures `convert-linalg-to-library-calls` declares.
            unsafe {
                blas_calls::openblas_set_num_threads(1);
                ftuner_codegen::add_symbol(
                    "ftuner_lib_matmul_f32",
                    blas_calls::lib_matmul_f32 as *mut _,
                );
                ftuner_codegen::add_symbol(
                    "ftuner_lib_batch_matmul_f32",
                    blas_calls::lib_batch_matmul_f32 as *mut _,
                );
            }
            let (e, s) = compile(src, file, BLAS, None)?;
            eprintln!("compiled the OpenBLAS variant in {s:.2} s");
            Some(e)
        } else {
            None
        };
        let loops = if cli.check_loops {
            Some(compile(src, file, LOOPS, None)?.0)
        } else {
            None
        };
        let mut buckets: Vec<(usize, ftuner_runtime::Executable)> = vec![];
        let mut bucket_compile = 0.0;
        if !cli.no_buckets {
            let mut bs = cli.buckets.clone();
            bs.sort_unstable();
            bs.dedup();
            for b in bs {
                let (e, s) = compile(src, file, PIPELINE, Some(b as i64))?;
                bucket_compile += s;
                buckets.push((b, e));
            }
            eprintln!(
                "compiled {} buckets in {bucket_compile:.2} s",
                buckets.len()
            );
        }
        Ok(Systems {
            exe,
            compile_s,
            blas,
            loops,
            buckets,
            bucket_compile,
        })
    }
}

fn run(cli: &Cli) -> Result<bool, String> {
    // One thread for every system measured here (issue 6 compares single-threaded).
    ftuner_runtime::set_num_threads(1);
    if !(cli.weight_scale.is_finite() && cli.weight_scale > 0.0) {
        return Err(format!(
            "--weight-scale {}: expected a positive number",
            cli.weight_scale
        ));
    }
    if let Some(j) = &cli.replot {
        return replot(cli, j);
    }
    let file = cli.layer.clone().ok_or("no layer given")?;
    let src = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let ts = lengths(cli)?;
    let (ctx, m) = load(&src, &file)?;
    let f = entry(&m.ir, m.top)?;
    let layer = Layer::of(&m, f)?;
    if !layer.shapes.iter().flatten().any(|d| *d == DYNAMIC) {
        return Err(format!(
            "{}: @{} has no dynamic dimension",
            file, layer.name
        ));
    }
    let sys = Systems::compile(cli, &src, &file, &layer)?;
    // Weights (static arguments) once; the dynamic ones per length.
    let mut rng = Rng(0x5eed_1234);
    let fixed: Vec<Option<Tensor>> = (0..layer.shapes.len())
        .map(|i| {
            (!layer.shapes[i].contains(&DYNAMIC)).then(|| {
                let mut w = tensor(&layer.shape_at(i, 0), layer.elems[i], &mut rng);
                let elem = w.elem;
                w.data.iter_mut().for_each(|x| {
                    *x = ftuner_interp::Word::of_number(x.number(elem) * cli.weight_scale, elem)
                });
                w
            })
        })
        .collect();
    let json = match &cli.json {
        Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("cannot write {p}: {e}"))?),
        None => None,
    };
    println!(
        "{:>5} {:>11} {:>7} {:>11} {:>7} {:>9} {:>7}  check",
        "T", "ftuner ms", "bucket", "bucket ms", "ratio", "blas ms", "ratio"
    );
    let mut sweep = Sweep {
        cli,
        ctx: &ctx,
        module: &m,
        r: layer.extent(),
        layer: &layer,
        sys: &sys,
        fixed,
        json,
        rows: vec![],
        blas_ratios: vec![],
        ok: true,
        checked_loops: 0,
        checked_interp: 0,
        peak_at_max: 0,
    };
    let tmax = *ts.iter().max().unwrap_or(&1);
    for &t in &ts {
        sweep.length(t, tmax)?;
    }
    sweep.print_summary(tmax);
    if let Some(p) = &cli.svg {
        std::fs::write(
            p,
            svg(
                &sweep.rows,
                &format!(
                    "@{}: latency against sequence length (one thread)",
                    layer.name
                ),
            ),
        )
        .map_err(|e| format!("cannot write {p}: {e}"))?;
    }
    Ok(sweep.ok)
}

/// `--replot`: only the SVG, from an earlier run's `--json`.
fn replot(cli: &Cli, j: &str) -> Result<bool, String> {
    let text = std::fs::read_to_string(j).map_err(|e| format!("cannot read {j}: {e}"))?;
    let (name, rows) = rows_from_json(&text)?;
    let out = cli.svg.as_deref().ok_or("--replot needs --svg OUT")?;
    std::fs::write(
        out,
        svg(
            &rows,
            &format!("@{name}: latency against sequence length (one thread)"),
        ),
    )
    .map_err(|e| format!("cannot write {out}: {e}"))?;
    Ok(true)
}

/// The sweep over the lengths: what every length uses, and what the lengths gave.
struct Sweep<'a> {
    cli: &'a Cli,
    ctx: &'a ftuner_ir::Context,
    /// The layer as read (the interpreter's check runs it).
    module: &'a ftuner_ir::ParsedModule,
    layer: &'a Layer,
    sys: &'a Systems,
    /// The weights (static arguments), `None` for the dynamic ones.
    fixed: Vec<Option<Tensor>>,
    /// The checks' R (the largest extent).
    r: usize,
    json: Option<std::fs::File>,
    rows: Vec<Row>,
    blas_ratios: Vec<f64>,
    /// Whether every check agreed.
    ok: bool,
    checked_loops: usize,
    checked_interp: usize,
    /// The peak bytes allocated by ftuner's code at the longest length.
    peak_at_max: usize,
}

impl Sweep<'_> {
    /// One length: run, check, time every system, a table row and a JSON line.
    fn length(&mut self, t: usize, tmax: usize) -> Result<(), String> {
        let (layer, sys) = (self.layer, self.sys);
        let mut rng = Rng(0x1000 + t as u64);
        let args: Vec<RtVal> = (0..layer.shapes.len())
            .map(|i| match &self.fixed[i] {
                Some(w) => RtVal::Tensor(Rc::new(w.clone())),
                None => RtVal::Tensor(Rc::new(tensor(
                    &layer.shape_at(i, t),
                    layer.elems[i],
                    &mut rng,
                ))),
            })
            .collect();
        let got = sys
            .exe
            .call(&layer.name, &args)
            .map_err(|e| format!("T={t}: {}", e.0))?;
        if t == tmax {
            self.peak_at_max = sys.exe.last_peak_bytes();
        }
        let mut status = vec![];
        self.check_loops(t, &args, &got, &mut status)?;
        self.check_interp(t, &args, &got, &mut status)?;
        let ms = time(&sys.exe, &layer.name, &args, self.cli.reps)? * 1e3;
        let blas_ms = self.blas_variant(t, &args, &got, &mut status)?;
        let bucket = self.bucket(t, &args)?;
        self.record(t, ms, bucket, blas_ms, &status);
        Ok(())
    }

    /// `--check-loops`: the layer lowered without patch-ukernels gives the same.
    fn check_loops(
        &mut self,
        t: usize,
        args: &[RtVal],
        got: &[RtVal],
        status: &mut Vec<String>,
    ) -> Result<(), String> {
        let Some(l) = &self.sys.loops else {
            return Ok(());
        };
        let want = l
            .call(&self.layer.name, args)
            .map_err(|e| format!("T={t}: {}", e.0))?;
        // Two single-precision computations: held to each other (no wide reference).
        for (g, w) in got.iter().zip(&want) {
            if let Err(e) = ftuner_run::compare(g, w, w, self.r, ftuner_ir::Type::f32()) {
                self.ok = false;
                status.push(format!("MISMATCH vs loops: {e}"));
            }
        }
        self.checked_loops += 1;
        if status.is_empty() {
            status.push("loops ok".into());
        }
        Ok(())
    }

    /// `--check-interp`: the reference interpreter on the layer as read gives the same.
    fn check_interp(
        &mut self,
        t: usize,
        args: &[RtVal],
        got: &[RtVal],
        status: &mut Vec<String>,
    ) -> Result<(), String> {
        if !self.cli.check_interp.contains(&t) {
            return Ok(());
        }
        let m = self.module;
        let run = || ftuner_interp::run(self.ctx, &m.ir, m.top, &self.layer.name, args.to_vec());
        let want = run().map_err(|e| format!("T={t}: interpreter: {e}"))?;
        let wide = ftuner_interp::wide(run).map_err(|e| format!("T={t}: interpreter: {e}"))?;
        let mut good = true;
        for ((g, w), x) in got.iter().zip(&want).zip(&wide) {
            if let Err(e) = ftuner_run::compare(g, w, x, self.r, ftuner_ir::Type::f32()) {
                self.ok = false;
                good = false;
                status.push(format!("MISMATCH vs interpreter: {e}"));
            }
        }
        self.checked_interp += 1;
        if good {
            status.push("interpreter ok".into());
        }
        Ok(())
    }

    /// `--blas`: the OpenBLAS variant checked against ftuner's result and timed (ms).
    fn blas_variant(
        &mut self,
        t: usize,
        args: &[RtVal],
        got: &[RtVal],
        status: &mut Vec<String>,
    ) -> Result<Option<f64>, String> {
        let Some(be) = &self.sys.blas else {
            return Ok(None);
        };
        let want = be
            .call(&self.layer.name, args)
            .map_err(|e| format!("T={t}: {}", e.0))?;
        for (g, w) in got.iter().zip(&want) {
            if let Err(e) = ftuner_run::compare(g, w, w, self.r, ftuner_ir::Type::f32()) {
                self.ok = false;
                status.push(format!("MISMATCH vs the OpenBLAS variant: {e}"));
            }
        }
        Ok(Some(time(be, &self.layer.name, args, self.cli.reps)? * 1e3))
    }

    /// The smallest bucket that holds `t`, timed on the zero-padded inputs: (bucket, ms).
    fn bucket(&self, t: usize, args: &[RtVal]) -> Result<Option<(usize, f64)>, String> {
        let Some((b, be)) = self.sys.buckets.iter().find(|(b, _)| *b >= t) else {
            return Ok(None);
        };
        let padded: Vec<RtVal> = (0..self.layer.shapes.len())
            .map(|i| match (&self.fixed[i], &args[i]) {
                (Some(_), a) => a.clone(),
                (None, RtVal::Tensor(x)) => {
                    RtVal::Tensor(Rc::new(pad(x, &self.layer.shape_at(i, *b))))
                }
                (None, a) => a.clone(),
            })
            .collect();
        // The bucket's answer is the layer's only where padding is neutral (not for
        // attention over padded keys): it is timed, not checked.
        let bms = time(be, &self.layer.name, &padded, self.cli.reps)? * 1e3;
        Ok(Some((*b, bms)))
    }

    /// One length's table row, JSON line and plot row.
    fn record(
        &mut self,
        t: usize,
        ms: f64,
        bucket: Option<(usize, f64)>,
        blas_ms: Option<f64>,
        status: &[String],
    ) {
        println!(
            "{t:>5} {ms:>11.3} {:>7} {:>11} {:>7} {:>9} {:>7}  {}",
            bucket.map(|x| x.0.to_string()).unwrap_or("-".into()),
            bucket.map(|x| format!("{:.3}", x.1)).unwrap_or("-".into()),
            bucket
                .map(|x| format!("{:.2}", x.1 / ms))
                .unwrap_or("-".into()),
            blas_ms.map(|x| format!("{x:.3}")).unwrap_or("-".into()),
            blas_ms
                .map(|x| format!("{:.2}", x / ms))
                .unwrap_or("-".into()),
            status.join("; ")
        );
        if let Some(b) = blas_ms {
            self.blas_ratios.push(b / ms);
        }
        if let Some(j) = &mut self.json {
            let _ = writeln!(
                j,
                "{{\"layer\": \"{}\", \"T\": {t}, \"ftuner_ms\": {ms:.4}, \"bucket\": {}, \"bucket_ms\": {}, \"blas_ms\": {}, \"check\": \"{}\"}}",
                self.layer.name,
                bucket.map(|x| x.0.to_string()).unwrap_or("null".into()),
                bucket.map(|x| format!("{:.4}", x.1)).unwrap_or("null".into()),
                blas_ms.map(|x| format!("{x:.4}")).unwrap_or("null".into()),
                status.join("; ").replace('"', "'")
            );
        }
        self.rows.push((t, ms, bucket.map(|x| x.1), blas_ms));
    }

    /// The `summary:` lines: compile times and memory, the latency ratios, the checks.
    fn print_summary(&mut self, tmax: usize) {
        let sys = self.sys;
        let mut ratios: Vec<f64> = self
            .rows
            .iter()
            .filter_map(|x| x.2.map(|b| b / x.1))
            .collect();
        println!(
            "summary: {} lengths; compile once {:.2} s (buckets: {} compilations, {:.2} s); peak memory at T={tmax}: {:.2} MiB",
            self.rows.len(),
            sys.compile_s,
            sys.buckets.len(),
            sys.bucket_compile,
            self.peak_at_max as f64 / (1 << 20) as f64
        );
        if !ratios.is_empty() {
            println!(
                "summary: bucket / ftuner latency, median over T: {:.2}x (min {:.2}x, max {:.2}x)",
                median(&mut ratios),
                ratios.first().copied().unwrap_or(0.0),
                ratios.last().copied().unwrap_or(0.0)
            );
        }
        if !self.blas_ratios.is_empty() {
            let n = self.blas_ratios.len();
            println!(
                "summary: OpenBLAS-contractions / ftuner latency, median over T: {:.2}x ({n} lengths)",
                median(&mut self.blas_ratios)
            );
        }
        println!(
            "summary: checked {} lengths against the loop lowering, {} against the interpreter: {}",
            self.checked_loops,
            self.checked_interp,
            if self.ok { "all agree" } else { "MISMATCH" }
        );
    }
}

fn main() {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("ftuner-e2e: error: {e}");
            std::process::exit(1);
        }
    }
}
