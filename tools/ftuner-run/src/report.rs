//! `ftuner-run`'s report of a run: each result summarized (shape, range, mean, first
//! values), as text or as one JSON object, with the timing, memory and check lines.

use crate::{fmt_shape, Cli, Outcome};
use ftuner_interp::RtVal;
use ftuner_ir::Type;

/// One result, summarized.
pub(crate) struct Summary {
    shape: String,
    elem: String,
    min: f64,
    max: f64,
    mean: f64,
    head: Vec<f64>,
}

/// Result `v`, of type `ty` (what a scalar's word holds).
pub(crate) fn summarize(v: &RtVal, ty: Type) -> Summary {
    match v {
        RtVal::Tensor(t) => {
            let n = t.data.len().max(1) as f64;
            let x = t.to_f64();
            Summary {
                shape: fmt_shape(&t.shape),
                elem: t.elem.to_string(),
                min: x.iter().copied().fold(f64::INFINITY, f64::min),
                max: x.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                mean: x.iter().sum::<f64>() / n,
                head: x.iter().take(8).copied().collect(),
            }
        }
        other => {
            let x = other.scalar().map_or(f64::NAN, |w| w.number(ty));
            Summary {
                shape: String::new(),
                elem: "scalar".into(),
                min: x,
                max: x,
                mean: x,
                head: vec![x],
            }
        }
    }
}

fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

/// `--json`: the run as one JSON object on stdout.
pub(crate) fn print_json(
    name: &str,
    jit: bool,
    outcome: &Outcome,
    sums: &[Summary],
    check: &Option<Result<(), String>>,
) {
    let rs: Vec<String> = sums
        .iter()
        .map(|s| {
            format!(
                "{{\"shape\": \"{}\", \"type\": \"{}\", \"min\": {}, \"max\": {}, \"mean\": {}, \"first\": [{}]}}",
                s.shape,
                s.elem,
                json_num(s.min),
                json_num(s.max),
                json_num(s.mean),
                s.head.iter().map(|v| json_num(*v)).collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    let chk = match check {
        None => "null".to_string(),
        Some(Ok(())) => "{\"ok\": true}".into(),
        Some(Err(e)) => format!(
            "{{\"ok\": false, \"message\": \"{}\"}}",
            e.replace('\\', "\\\\").replace('"', "\\\"")
        ),
    };
    println!(
        "{{\"entry\": \"{name}\", \"backend\": \"{}\", \"compile_s\": {}, \"peak_bytes\": {}, \"runs\": {}, \"median_s\": {}, \"results\": [{}], \"check\": {chk}}}",
        if jit { "jit" } else { "interpreter" },
        json_num(outcome.compile_s),
        outcome
            .peak_bytes
            .map_or("null".to_string(), |b| b.to_string()),
        outcome.times.len(),
        json_num(outcome.median()),
        rs.join(", ")
    );
}

/// The text report: a line per result, then with `--bench` the time and memory, then the
/// check.
pub(crate) fn print_text(
    cli: &Cli,
    jit: bool,
    outcome: &Outcome,
    sums: &[Summary],
    args: &[RtVal],
    check: &Option<Result<(), String>>,
) {
    for (i, s) in sums.iter().enumerate() {
        println!(
            "result #{i}: {}{} min {:.6} max {:.6} mean {:.6} first [{}]",
            if s.shape.is_empty() { "" } else { "tensor " },
            if s.shape.is_empty() {
                s.elem.clone()
            } else {
                format!("{}x{}", s.shape, s.elem)
            },
            s.min,
            s.max,
            s.mean,
            s.head
                .iter()
                .map(|v| format!("{v:.6}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if cli.bench.is_some() {
        println!(
            "time: median {:.3} ms over {} runs ({})",
            outcome.median() * 1e3,
            outcome.times.len(),
            if jit {
                format!("compiled for this machine in {:.2} s", outcome.compile_s)
            } else {
                "interpreter".into()
            }
        );
    }
    if let Some(b) = outcome.peak_bytes.filter(|_| cli.bench.is_some()) {
        let input: usize = args
            .iter()
            .filter_map(|a| a.tensor())
            .map(|t| t.data.len() * t.elem.bit_width().unwrap_or(32).div_ceil(8) as usize)
            .sum();
        println!(
            "memory: peak {:.2} MiB allocated by the compiled code (temporaries and results), inputs {:.2} MiB",
            b as f64 / (1 << 20) as f64,
            input as f64 / (1 << 20) as f64
        );
    }
    match check {
        Some(Ok(())) => println!("check: ok (every result matches the module as read)"),
        Some(Err(e)) => eprintln!("ftuner-run: check failed: {e}"),
        None => {}
    }
}
