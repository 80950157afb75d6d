//! The `ollie` workload (issue 7): conv layers exported by torch-mlir and the banded
//! attention of examples/longformer_band_attention.mlir, compiled three ways
//! in one process — direct loop lowering (`loops`), contractions patched as implicit-GEMM
//! uKernels (`ukernels`: `--pipeline`, ftuner's default unless given), and derived by
//! `ollie-derive` (`derived`, target=auto, then the same pipeline) — and timed alternately, one thread. The
//! results of the three are compared before timing.

use crate::{median, Rng};
use ftuner_interp::{RtVal, Tensor};
use ftuner_ir::DYNAMIC;
use std::io::Write;
use std::rc::Rc;

const LOOPS: &str = "builtin.module(canonicalize,cse)";
/// The derived pipeline for an `ollie-derive` target: `ollie-derive` and
/// `convert-ta-to-linalg` ahead of the uKernel pipeline (`--pipeline`).
fn derived(target: &str, ukernels: &str) -> String {
    let rest = ukernels.strip_prefix("builtin.module(").unwrap_or(ukernels);
    format!("builtin.module(canonicalize,cse,ollie-derive{{target={target}}},convert-ta-to-linalg,{rest}")
}

/// A layer: file under the inputs folder (or, `example`, under examples/), entry, batch
/// sizes for its dynamic dim.
struct Layer {
    file: &'static str,
    entry: &'static str,
    batches: &'static [usize],
    example: bool,
    /// The `ollie-derive` target of the derived compilation.
    target: &'static str,
    /// The extent of every dynamic dim after the first (a sequence length); 0: none.
    seq: usize,
}

impl Layer {
    const fn export(file: &'static str, entry: &'static str, batches: &'static [usize]) -> Layer {
        Layer {
            file,
            entry,
            batches,
            example: false,
            target: "auto",
            seq: 0,
        }
    }
}

/// The repository's examples/ folder.
const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");

/// Arguments like the models' own: the activation in [-1, 1], 1-d parameters
/// (normalization scales, variances, biases) in [0.5, 1.5], weights uniform in
/// ±1/sqrt(fan-in) (PyTorch's default scale), so deep layers stay well conditioned.
/// `activations_only`: every argument is an activation (attention's queries and keys).
/// A dynamic dim is `batch` where it is a tensor's first dynamic dim, else `seq`.
fn args(
    shapes: &[Vec<i64>],
    (batch, seq): (usize, usize),
    rng: &mut Rng,
    activations_only: bool,
) -> Vec<Tensor> {
    shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let first = s.iter().position(|d| *d == DYNAMIC);
            let shape: Vec<usize> = s
                .iter()
                .enumerate()
                .map(|(k, d)| match *d {
                    DYNAMIC if Some(k) == first => batch,
                    DYNAMIC => seq,
                    d => d as usize,
                })
                .collect();
            let mut t = rng.tensor(shape.clone());
            let fan: usize = shape.iter().skip(1).product::<usize>().max(1);
            for w in &mut t.data {
                let x = w.f();
                *w = ftuner_interp::Word::float(if i == 0 || activations_only {
                    x
                } else if shape.len() == 1 {
                    1.0 + 0.5 * x
                } else {
                    x / (fan as f64).sqrt()
                } as f32 as f64);
            }
            t
        })
        .collect()
}

/// The layers measured: the conv layers of the exports, then the banded attention
/// (static and with a dynamic sequence length); with `smoke`, the dilated conv alone.
fn layers(smoke: bool) -> Vec<Layer> {
    let band = |entry| Layer {
        file: "longformer_band_attention.mlir",
        entry,
        batches: &[1, 4],
        example: true,
        target: "auto",
        seq: 0,
    };
    // The same scores with the sequence length dynamic, run at a length no chunk divides.
    let dyn_band = |entry| Layer {
        file: "longformer_band_attention_dynamic.mlir",
        batches: &[1],
        seq: 700,
        ..band(entry)
    };
    if smoke {
        vec![Layer::export("dilated_conv.mlir", "dilated_conv", &[1])]
    } else {
        vec![
            Layer::export("dilated_conv.mlir", "dilated_conv", &[1]),
            // The same layer derived into a dense conv through reshapes.
            Layer {
                target: "dense-conv",
                ..Layer::export("dilated_conv.mlir", "dilated_conv", &[1])
            },
            Layer::export("resnet_block.mlir", "resnet_block", &[1]),
            Layer::export("dcgan_generator.mlir", "dcgan_generator", &[1, 8, 32]),
            band("band_scores"),
            band("dilated_band_scores"),
            dyn_band("band_scores"),
            dyn_band("dilated_band_scores"),
        ]
    }
}

/// A layer compiled the three ways (loops, uKernels, derived), with the compile times.
struct Compiled {
    exes: Vec<ftuner_runtime::Executable>,
    compile_s: Vec<f64>,
}

pub fn run(
    inputs: &str,
    ukernels: &str,
    reps: usize,
    smoke: bool,
    json: &mut Option<std::fs::File>,
) -> Result<(), String> {
    let layers = layers(smoke);
    println!(
        "{:24} {:>5} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "layer",
        "batch",
        "loops_ms",
        "ukern_ms",
        "derived_ms",
        "vs_loops",
        "vs_ukern",
        "ukern_c_s",
        "deriv_c_s",
        "max_err"
    );
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut vs_loops, mut vs_uk) = (vec![], vec![]);
    for l in &layers {
        let dir = if l.example { EXAMPLES } else { inputs };
        let path = format!("{dir}/{}", l.file);
        let src = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        let shapes = {
            let ctx = ftuner_transforms::context();
            let m = ftuner_opt::parse_and_verify(&ctx, &src, &path)
                .map_err(|d| format!("{path}: {d:?}"))?;
            ftuner_interp::param_shapes(&m.ir, m.top, l.entry)
                .ok_or_else(|| format!("{path}: no function @{}", l.entry))?
        };
        let compiled = compile_three(&src, l.target, ukernels)?;
        for &b in l.batches {
            let (rl, ru) = run_batch(l, b, &shapes, &compiled, &mut rng, reps, json)?;
            vs_loops.push(rl);
            vs_uk.push(ru);
        }
    }
    let geo = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp();
    println!(
        "OLLIE: geomean speedup of derived over direct loops {:.2}x, over implicit-GEMM uKernels {:.2}x ({} layer runs)",
        geo(&vs_loops),
        geo(&vs_uk),
        vs_loops.len()
    );
    Ok(())
}

/// `src` compiled with the loops, uKernel and derived (for `target`) pipelines.
fn compile_three(src: &str, target: &str, ukernels: &str) -> Result<Compiled, String> {
    let mut exes = vec![];
    let mut compile_s = vec![];
    for p in [
        LOOPS.to_string(),
        ukernels.to_string(),
        derived(target, ukernels),
    ] {
        let t = std::time::Instant::now();
        exes.push(crate::compile(src, &p)?);
        compile_s.push(t.elapsed().as_secs_f64());
    }
    Ok(Compiled { exes, compile_s })
}

/// One batch size of a layer: the three compilations checked to agree, timed
/// alternately, a table row and JSON lines. Returns derived's speedups over loops and
/// over uKernels.
fn run_batch(
    l: &Layer,
    b: usize,
    shapes: &[Vec<i64>],
    compiled: &Compiled,
    rng: &mut Rng,
    reps: usize,
    json: &mut Option<std::fs::File>,
) -> Result<(f64, f64), String> {
    let Compiled { exes, compile_s } = compiled;
    let a = args(shapes, (b, l.seq), rng, l.example);
    let rargs: Vec<RtVal> = a
        .iter()
        .map(|t| RtVal::Tensor(Rc::new(t.clone())))
        .collect();
    let err = check_agree(exes, l.entry, &rargs, b)?;
    let prepared = exes
        .iter()
        .map(|e| e.prepare(l.entry, &rargs).map_err(|e| e.0))
        .collect::<Result<Vec<_>, _>>()?;
    let mut times = vec![vec![]; 3];
    for _ in 0..reps {
        for (k, (e, p)) in exes.iter().zip(&prepared).enumerate() {
            times[k].push(e.time(p).map_err(|e| e.0)?.as_secs_f64());
        }
    }
    let med: Vec<f64> = times.iter_mut().map(|t| median(t)).collect();
    let mut name = if l.target == "auto" {
        l.entry.to_string()
    } else {
        format!("{}[{}]", l.entry, l.target)
    };
    if l.seq > 0 {
        name = format!("{name}(L={})", l.seq);
    }
    let (rl, ru) = (med[0] / med[2], med[1] / med[2]);
    println!(
        "{:24} {:>5} {:>10.3} {:>10.3} {:>10.3} {:>8.2}x {:>8.2}x {:>9.2} {:>9.2} {:>8.1e}",
        name,
        b,
        med[0] * 1e3,
        med[1] * 1e3,
        med[2] * 1e3,
        rl,
        ru,
        compile_s[1],
        compile_s[2],
        err
    );
    if let Some(f) = json {
        for (sys, m) in ["loops", "ukernels", "derived"].iter().zip(&med) {
            let _ = writeln!(
                f,
                "{{\"system\": \"{sys}\", \"workload\": \"OLLIE\", \"shape\": \"{}@{b}\", \"threads\": 1, \"median_s\": {m:e}, \"reps\": {reps}, \"max_abs_err\": {err:e}}}",
                name
            );
        }
    }
    Ok((rl, ru))
}

/// Warm up the three compilations; they must agree. Returns the largest difference from
/// the loops' result.
fn check_agree(
    exes: &[ftuner_runtime::Executable],
    entry: &str,
    rargs: &[RtVal],
    b: usize,
) -> Result<f64, String> {
    let mut results = vec![];
    for e in exes {
        let r = e.call(entry, rargs).map_err(|e| e.0)?;
        results.push(r[0].tensor().ok_or("no result")?.to_f64());
    }
    let scale = results[0].iter().fold(0f64, |m, x| m.max(x.abs()));
    let err = results[1..]
        .iter()
        .flat_map(|r| r.iter().zip(&results[0]).map(|(x, y)| (x - y).abs()))
        .fold(0f64, f64::max);
    if err.is_nan() || err > 1e-3 * (1.0 + scale) {
        return Err(format!(
            "{entry} batch {b}: the three compilations differ by {err:e}"
        ));
    }
    Ok(err)
}
