//! What a run of ftuner-bench reports besides its table: the padding baselines against
//! ftuner, the plot of GFLOP/s against T, and the generated section of
//! docs/benchmarks.md.

use super::{median, Out, Point, POW2, TILE};
use plotters::prelude::*;
use std::fmt::Write as _;

/// The systems of the padding comparison, in plotting order.
const SYSTEMS: [&str; 4] = ["ftuner", "openblas", POW2, TILE];

/// The T of issue 10's small-T goal (T <= 24).
const SMALL_T: usize = 24;

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp()
}

/// Median of `system`'s time over ftuner's time on the shapes of `workload` at `threads`
/// (T at most `max_t` when given); `None` without such shapes.
fn pad_ratio(
    points: &[Point],
    workload: &str,
    threads: usize,
    system: &str,
    max_t: Option<usize>,
) -> Option<(f64, f64, usize)> {
    let mut r: Vec<f64> = points
        .iter()
        .filter(|p| p.workload == workload && p.threads == threads && p.system == system)
        .filter(|p| max_t.is_none_or(|m| p.t_param.is_some_and(|t| t <= m)))
        .map(|p| p.median_s / p.ours_s)
        .collect();
    if r.is_empty() {
        return None;
    }
    let med = median(&mut r);
    Some((med, r[0], r.len()))
}

/// ftuner against OpenBLAS on the shapes of one workload at one thread count.
pub(crate) struct Summary {
    pub shapes: usize,
    /// Geometric means of GFLOP/s.
    pub ours_gflops: f64,
    pub blas_gflops: f64,
    /// Geometric mean of ftuner's time over OpenBLAS's.
    pub time_ratio: f64,
    /// OpenBLAS's time over ftuner's per shape: median, min, max.
    pub speedup: (f64, f64, f64),
}

pub(crate) fn summary(points: &[Point], workload: &str, threads: usize) -> Option<Summary> {
    let of = |sys: &str| -> Vec<&Point> {
        points
            .iter()
            .filter(|p| p.workload == workload && p.threads == threads && p.system == sys)
            .collect()
    };
    let (ours, blas) = (of("ftuner"), of("openblas"));
    if blas.is_empty() {
        return None;
    }
    let mut up: Vec<f64> = blas.iter().map(|p| p.median_s / p.ours_s).collect();
    let med = median(&mut up);
    Some(Summary {
        shapes: blas.len(),
        ours_gflops: geomean(&ours.iter().map(|p| p.gflops).collect::<Vec<_>>()),
        blas_gflops: geomean(&blas.iter().map(|p| p.gflops).collect::<Vec<_>>()),
        time_ratio: geomean(
            &blas
                .iter()
                .map(|p| p.ours_s / p.median_s)
                .collect::<Vec<_>>(),
        ),
        speedup: (med, up[0], up[up.len() - 1]),
    })
}

/// The BLAS systems ftuner is compared with: the linked OpenBLAS and those opened at run
/// time ([`crate::libs`]).
const LIBRARIES: [&str; 3] = ["openblas", "mkl", "openblas-new"];

/// One line per workload and thread count: each library's time over ftuner's (median, min
/// over shapes), and the best library's per shape (the fastest of those measured on it).
pub(crate) fn library_summary(points: &[Point], threads: &[usize]) -> Vec<String> {
    let mut out = vec![];
    for w in ["W1", "W2", "W3", "ATTN"] {
        for &t in threads {
            let at: Vec<&Point> = points
                .iter()
                .filter(|p| p.workload == w && p.threads == t)
                .collect();
            let mut parts = vec![];
            for lib in LIBRARIES {
                let mut r: Vec<f64> = at
                    .iter()
                    .filter(|p| p.system == lib)
                    .map(|p| p.median_s / p.ours_s)
                    .collect();
                if !r.is_empty() {
                    let n = r.len();
                    let med = median(&mut r);
                    parts.push(format!("{lib} {med:.2} (min {:.2}, {n})", r[0]));
                }
            }
            // Per shape: the fastest library; (shape, its time, ftuner's).
            let mut best: Vec<(&str, f64, f64)> = vec![];
            for p in at.iter().filter(|p| LIBRARIES.contains(&p.system)) {
                match best.iter_mut().find(|b| b.0 == p.shape) {
                    Some(b) => b.1 = b.1.min(p.median_s),
                    None => best.push((&p.shape, p.median_s, p.ours_s)),
                }
            }
            if parts.len() > 1 && !best.is_empty() {
                let mut r: Vec<f64> = best.iter().map(|b| b.1 / b.2).collect();
                let med = median(&mut r);
                parts.push(format!("best of them {med:.2} (min {:.2})", r[0]));
            }
            if !parts.is_empty() {
                out.push(format!(
                    "{w} ({t} thread{}) library-time/ftuner-time median: {}",
                    if t == 1 { "" } else { "s" },
                    parts.join(", ")
                ));
            }
        }
    }
    out
}

/// One line per workload and thread count: how much slower the padding baselines are.
pub(crate) fn padding_summary(points: &[Point], threads: &[usize]) -> Vec<String> {
    let mut out = vec![];
    for w in ["W1", "W2"] {
        for &t in threads {
            let mut parts = vec![];
            for sys in [POW2, TILE] {
                let (Some(all), Some(small)) = (
                    pad_ratio(points, w, t, sys, None),
                    pad_ratio(points, w, t, sys, Some(SMALL_T)),
                ) else {
                    continue;
                };
                parts.push(format!(
                    "{sys}-time/ftuner-time median {:.2} (min {:.2}), T <= {SMALL_T}: median {:.2}",
                    all.0, all.1, small.0
                ));
            }
            if !parts.is_empty() {
                out.push(format!(
                    "{w} ({t} thread{}) padding baselines: {}",
                    if t == 1 { "" } else { "s" },
                    parts.join("; ")
                ));
            }
        }
    }
    out
}

/// GFLOP/s of `system` at each T of `workload` (W1: geometric mean over its (K, N)).
fn series(points: &[Point], workload: &str, threads: usize, system: &str) -> Vec<(f64, f64)> {
    let mut ts: Vec<usize> = points
        .iter()
        .filter(|p| p.workload == workload && p.threads == threads && p.system == system)
        .filter_map(|p| p.t_param)
        .collect();
    ts.sort_unstable();
    ts.dedup();
    ts.iter()
        .map(|&t| {
            let g: Vec<f64> = points
                .iter()
                .filter(|p| p.workload == workload && p.threads == threads)
                .filter(|p| p.system == system && p.t_param == Some(t))
                .map(|p| p.gflops)
                .collect();
            (t as f64, geomean(&g))
        })
        .collect()
}

/// The plot: one panel per (workload, thread count) of W1 and W2.
pub(crate) fn svg(points: &[Point], threads: &[usize], path: &str) -> Result<(), String> {
    let panels: Vec<(&str, usize)> = ["W1", "W2"]
        .into_iter()
        .flat_map(|w| threads.iter().map(move |t| (w, *t)))
        .filter(|(w, t)| !series(points, w, *t, "ftuner").is_empty())
        .collect();
    if panels.is_empty() {
        return Err("--svg: no W1 or W2 measurements to plot".into());
    }
    let err = |e: &dyn std::fmt::Display| format!("--svg {path}: {e}");
    let root = SVGBackend::new(path, (720, 360 * panels.len() as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let colors = [RED, BLUE, GREEN, MAGENTA];
    for ((w, t), area) in panels.iter().zip(root.split_evenly((panels.len(), 1))) {
        let all: Vec<Vec<(f64, f64)>> = SYSTEMS.iter().map(|s| series(points, w, *t, s)).collect();
        let xmax = all.iter().flatten().map(|p| p.0).fold(1.0, f64::max);
        let ymax = all.iter().flatten().map(|p| p.1).fold(1.0, f64::max);
        let what = match *w {
            "W1" => "W1 dense, M = 16 T (geomean over the four (K, N))",
            _ => "W2 batch matmul 192 x T x 64 . (192 x T x 64)^T",
        };
        let mut chart = ChartBuilder::on(&area)
            .caption(
                format!("{what}, {t} thread{}", if *t == 1 { "" } else { "s" }),
                ("sans-serif", 15),
            )
            .margin(12)
            .x_label_area_size(32)
            .y_label_area_size(48)
            .build_cartesian_2d(0f64..xmax * 1.03, 0f64..ymax * 1.1)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("T")
            .y_desc("useful GFLOP/s")
            .draw()
            .map_err(|e| err(&e))?;
        for ((sys, pts), color) in SYSTEMS.iter().zip(all).zip(colors) {
            if pts.is_empty() {
                continue;
            }
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(*sys)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
            chart
                .draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))
                .map_err(|e| err(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Days since 1970-01-01 to the civil date (the proleptic Gregorian calendar).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The generated section of docs/benchmarks.md for this run.
pub(crate) fn markdown(out: &Out, threads: &[usize], command: &str) -> String {
    let mut s = String::new();
    let host = ftuner_hw::HardwareModel::load("host").ok();
    let peak = host
        .as_ref()
        .and_then(|m| m.cpu.as_ref())
        .map(|c| c.peak_gflops_core(4));
    let _ = writeln!(s, "### Latest run: {} (generated)\n", today());
    let _ = writeln!(
        s,
        "Generated by `{command}` (with `OPENBLAS_CORETYPE={}`); do not edit by hand, rerun \
         with `--doc docs/benchmarks.md`.{}\n",
        std::env::var("OPENBLAS_CORETYPE").unwrap_or_else(|_| "(unset)".into()),
        host.as_ref()
            .map_or(String::new(), |m| format!(" Host: {}.", m.description))
    );
    let _ = writeln!(
        s,
        "| workload | threads | shapes | ftuner GFLOP/s (geomean) | OpenBLAS GFLOP/s | median OpenBLAS-time / ftuner-time | min | max |\n|---|---|---|---|---|---|---|---|"
    );
    for w in ["W1", "W2", "W3", "ATTN"] {
        for &t in threads {
            let Some(m) = summary(&out.points, w, t) else {
                continue;
            };
            let _ = writeln!(
                s,
                "| {w} | {t} | {} | {:.1} | {:.1} | **{:.2}** | {:.2} | {:.2} |",
                m.shapes, m.ours_gflops, m.blas_gflops, m.speedup.0, m.speedup.1, m.speedup.2
            );
        }
    }
    let mut pads = String::new();
    for w in ["W1", "W2"] {
        for &t in threads {
            let cell = |sys: &str, max_t: Option<usize>| {
                pad_ratio(&out.points, w, t, sys, max_t)
                    .map_or("-".to_string(), |r| format!("{:.2} (min {:.2})", r.0, r.1))
            };
            if pad_ratio(&out.points, w, t, POW2, None).is_none() {
                continue;
            }
            let _ = writeln!(
                pads,
                "| {w} | {t} | {} | {} | {} | {} |",
                cell(POW2, None),
                cell(POW2, Some(SMALL_T)),
                cell(TILE, None),
                cell(TILE, Some(SMALL_T))
            );
        }
    }
    if !pads.is_empty() {
        let _ = writeln!(
            s,
            "\nPadding baselines built by ftuner (`{POW2}`: the dynamic dims padded to the next \
             power of two, one static kernel per bucket; `{TILE}`: padded to a multiple of the \
             main uKernel, one fixed tile), median of their time over ftuner's (> 1: ftuner is \
             faster; the input padding is not timed):\n\n\
             | workload | threads | {POW2} / ftuner, all T | T <= {SMALL_T} | {TILE} / ftuner, all T | T <= {SMALL_T} |\n|---|---|---|---|---|---|\n{pads}"
        );
    }
    for (w, shape, t, gf) in &out.cubes {
        if let Some(peak) = peak {
            let _ = writeln!(
                s,
                "* {w} {shape}, {t} thread{pl}: {gf:.1} GFLOP/s = {:.0}% of the model's peak on {t} core{pl} ({peak:.1} GFLOP/s per core).",
                100.0 * gf / (peak * *t as f64),
                pl = if *t == 1 { "" } else { "s" },
            );
        }
    }
    for w in ["W1", "W2", "W3"] {
        let ks: Vec<_> = out.compile.iter().filter(|c| c.0 == w).collect();
        if !ks.is_empty() {
            let _ = writeln!(
                s,
                "* {w} compile time (parse, passes, LLVM, JIT), one dynamic kernel each: {:.2} s ({}).",
                ks.iter().map(|c| c.2).sum::<f64>(),
                ks.iter()
                    .map(|c| format!("`{}` {:.2} s", c.1, c.2))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    // GFLOP/s against T, the plot's numbers.
    for w in ["W1", "W2"] {
        for &t in threads {
            let cols: Vec<Vec<(f64, f64)>> = SYSTEMS
                .iter()
                .map(|sys| series(&out.points, w, t, sys))
                .collect();
            if cols[0].is_empty() {
                continue;
            }
            let _ = writeln!(
                s,
                "\n{w}, {t} thread{}: useful GFLOP/s against T{}\n\n| T | {} |\n|---|{}",
                if t == 1 { "" } else { "s" },
                if w == "W1" {
                    " (geometric mean over the four (K, N))"
                } else {
                    ""
                },
                SYSTEMS.join(" | "),
                "---|".repeat(SYSTEMS.len())
            );
            for (i, (tv, _)) in cols[0].iter().enumerate() {
                let cells: Vec<String> = cols
                    .iter()
                    .map(|c| c.get(i).map_or("-".into(), |p| format!("{:.1}", p.1)))
                    .collect();
                let _ = writeln!(s, "| {tv} | {} |", cells.join(" | "));
            }
        }
    }
    s
}

const BEGIN: &str = "<!-- ftuner-bench:begin -->";
const END: &str = "<!-- ftuner-bench:end -->";

/// Replace the text between the markers of `path` with `section`; nothing is written when
/// the markers are missing or out of order.
pub(crate) fn update_doc(path: &str, section: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--doc {path}: {e}"))?;
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
        return Err(format!(
            "--doc {path}: no '{BEGIN}' ... '{END}' section to regenerate"
        ));
    };
    if e < b {
        return Err(format!("--doc {path}: '{END}' comes before '{BEGIN}'"));
    }
    let new = format!(
        "{}{BEGIN}\n{}\n{}",
        &text[..b],
        section.trim_end(),
        &text[e..]
    );
    // Written next to the file and renamed over it: a failed write loses nothing.
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, new).map_err(|e| format!("--doc {tmp}: {e}"))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("--doc {path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_between_the_markers_is_replaced() {
        let dir = std::env::temp_dir().join(format!("ftuner-bench-doc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("b.md");
        let ps = p.to_str().unwrap();
        std::fs::write(&p, format!("head\n{BEGIN}\nold\n{END}\ntail\n")).unwrap();
        update_doc(ps, "new\n").unwrap();
        let t = std::fs::read_to_string(&p).unwrap();
        assert_eq!(t, format!("head\n{BEGIN}\nnew\n{END}\ntail\n"));
        std::fs::write(&p, "no markers\n").unwrap();
        assert!(update_doc(ps, "x").unwrap_err().contains("no '"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "no markers\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dates_are_civil() {
        let d = today();
        assert_eq!(d.len(), 10);
        assert!(d.starts_with("20"), "{d}");
    }
}
