//! `ftuner-tune`: the search tuner, transfer-tuning, Ansor import and the tuning database.
//!
//! ```text
//! ftuner-tune kernels MODEL.mlir                         # the kernels, their classes and keys
//! ftuner-tune tune MODEL.mlir --db T.db --trials 32      # full search per kernel
//! ftuner-tune transfer MODEL.mlir --db T.db              # reuse other workloads' schedules
//! ftuner-tune import-ansor LOG.json... --db T.db         # TVM auto-scheduler logs
//! ftuner-tune db stats|export|prune --db T.db
//! ```
//! The tuned schedules are then used with `ftuner-opt --patch-ukernels=tuning-db=T.db`.

use clap::{Parser, Subcommand};
use ftuner_hw::HardwareModel;
use ftuner_tune::kernels::{self, Kernel};
use ftuner_tune::measure::Bench;
use ftuner_tune::{ansor, search, transfer, Db};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "ftuner-tune",
    about = "Tune schedules, transfer them between models, manage the tuning database"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Clone)]
struct MeasureArgs {
    /// Target (host, a built-in CPU name, or a .toml file); measurements run on this machine.
    #[arg(long, default_value = "host")]
    target: String,
    /// The model's arguments that are its weights (`1..`: all but the first; `2,5..7`), as
    /// the Python package marks them: their preparation is outlined and B operands known
    /// with the weights are packed once, as when the model is compiled.
    #[arg(long)]
    weights: Option<String>,
    /// Values every dynamic dim takes when measuring (e.g. the sequence length).
    #[arg(long, value_delimiter = ',', default_value = "64,256")]
    points: Vec<usize>,
    /// Timed runs per point (the median counts).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Rounds of the final side-by-side comparison of the chosen schedules with the default.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Write one JSON object per kernel to this file.
    #[arg(long)]
    json: Option<String>,
    /// Threads the measured code runs on (the compiled model's thread pool); 1 keeps
    /// measurements steadiest on a shared machine.
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

#[derive(Subcommand)]
enum Cmd {
    /// List a model's kernels with their classes and workload keys.
    Kernels {
        file: String,
        #[arg(long, default_value = "host")]
        target: String,
        /// The model's weight arguments (as for `tune`).
        #[arg(long)]
        weights: Option<String>,
    },
    /// Full search for every kernel of a model (resumable: the database remembers trials).
    Tune {
        file: String,
        #[arg(long)]
        db: String,
        /// Trials per kernel, earlier runs' included.
        #[arg(long, default_value_t = 32)]
        trials: usize,
        /// Seconds per kernel.
        #[arg(long, default_value_t = 600.0)]
        time_limit: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        #[command(flatten)]
        m: MeasureArgs,
    },
    /// Transfer-tuning: try the schedules tuned for other workloads of the same classes.
    Transfer {
        file: String,
        #[arg(long)]
        db: String,
        /// Most candidate schedules measured per kernel.
        #[arg(long, default_value_t = 8)]
        max_candidates: usize,
        /// A database holding a full search of this model (to report the fraction of its
        /// speedup transfer reaches); default: --db.
        #[arg(long)]
        compare_db: Option<String>,
        /// Databases to take schedules from (other models' tuning: leave-one-out), instead
        /// of --db; the same workload tuned there is tried first.
        #[arg(long, value_delimiter = ',')]
        from: Vec<String>,
        #[command(flatten)]
        m: MeasureArgs,
    },
    /// Import TVM auto-scheduler (Ansor) logs; report what maps and what does not.
    ImportAnsor {
        files: Vec<String>,
        #[arg(long)]
        db: Option<String>,
        /// Target whose register file the imported tiles are made legal for.
        #[arg(long, default_value = "host")]
        target: String,
    },
    /// The database: stats, export (JSON lines), prune.
    Db {
        #[command(subcommand)]
        what: DbCmd,
    },
}

#[derive(Subcommand)]
enum DbCmd {
    Stats {
        #[arg(long)]
        db: String,
    },
    Export {
        #[arg(long)]
        db: String,
        /// Write here instead of stdout.
        #[arg(short = 'o')]
        out: Option<String>,
    },
    /// Keep the N fastest records per workload and source; drop the rest and failures.
    Prune {
        #[arg(long)]
        db: String,
        #[arg(long, default_value_t = 8)]
        keep: usize,
    },
}

/// The kernels of the model in `file` as `patch-ukernels` meets them when the model is
/// compiled for `target` (with `weights` marked).
fn model_kernels(
    file: &str,
    target: &str,
    weights: Option<&str>,
) -> Result<(HardwareModel, Vec<Kernel>), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let ctx = ftuner_dialects::context();
    let mut m = kernels::load(&ctx, &text, file)?;
    let model = HardwareModel::load(target)?;
    if model.cpu().is_none() {
        return Err(format!(
            "target '{target}': tuning measures on this CPU; give a CPU target"
        ));
    }
    if let Some(w) = weights {
        kernels::mark_weights(&mut m.ir, m.top, w)?;
    }
    kernels::prepare_model(&ctx, &mut m.ir, m.top, target).map_err(|e| format!("{file}: {e}"))?;
    let ks = kernels::extract(&ctx, &mut m.ir, m.top, &model);
    if ks.is_empty() {
        return Err(format!("{file}: no contraction to tune"));
    }
    Ok((model, ks))
}

fn open_json(p: &Option<String>) -> Result<Option<std::fs::File>, String> {
    p.as_ref()
        .map(|p| std::fs::File::create(p).map_err(|e| format!("cannot write {p}: {e}")))
        .transpose()
}

/// `±3%`; `-` when no side-by-side run was made.
fn noise_text(n: f64) -> String {
    if n > 0.0 {
        format!("±{:.0}%", n * 100.0)
    } else {
        "-".into()
    }
}

fn ms(s: f64) -> String {
    format!("{:.3}", s * 1e3)
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.cmd {
        Cmd::Kernels {
            file,
            target,
            weights,
        } => cmd_kernels(&file, &target, weights.as_deref()),
        Cmd::Tune {
            file,
            db,
            trials,
            time_limit,
            seed,
            quiet,
            m,
        } => cmd_tune(&file, &db, (trials, time_limit, seed, quiet), &m),
        Cmd::Transfer {
            file,
            db,
            max_candidates,
            compare_db,
            from,
            m,
        } => cmd_transfer(
            &file,
            &db,
            (max_candidates, &from),
            compare_db.as_deref(),
            &m,
        ),
        Cmd::ImportAnsor { files, db, target } => cmd_import_ansor(&files, db.as_deref(), &target),
        Cmd::Db { what } => cmd_db(what),
    }
}

/// `kernels`: one line per kernel.
fn cmd_kernels(file: &str, target: &str, weights: Option<&str>) -> Result<(), String> {
    let (_, ks) = model_kernels(file, target, weights)?;
    for k in ks {
        println!("{} (x{}): {}", k.loc, k.count, k.key);
    }
    Ok(())
}

/// `tune`: a full search per kernel, a table row each, the model's totals last. The
/// tuple is `--trials`, `--time-limit`, `--seed` and `--quiet`.
fn cmd_tune(
    file: &str,
    db: &str,
    (trials, time_limit, seed, quiet): (usize, f64, u64, bool),
    m: &MeasureArgs,
) -> Result<(), String> {
    use std::io::Write;
    ftuner_tune::measure::set_threads(m.threads);
    let (model, ks) = model_kernels(file, &m.target, m.weights.as_deref())?;
    let db = Db::open(db).map_err(|e| e.to_string())?;
    let mut json = open_json(&m.json)?;
    let opts = search::SearchOptions {
        trials,
        time_limit: Duration::from_secs_f64(time_limit.max(0.0)),
        seed,
        progress: !quiet,
        rounds: m.rounds,
    };
    println!(
        "{:<40} {:>3} {:>10} {:>10} {:>7} {:>6} {:>7} {:>9}  best schedule",
        "kernel", "n", "default ms", "best ms", "speedup", "noise", "trials", "search s"
    );
    let (mut td, mut tb, mut ts) = (0.0, 0.0, 0.0);
    for k in &ks {
        let mut bench = Bench::new(k, &m.points, m.reps, &m.target)?;
        let r = search::tune_kernel(&db, k, &mut bench, &model, &opts)
            .map_err(|e| format!("{}: {e}", k.loc))?;
        println!(
            "{:<40} {:>3} {:>10} {:>10} {:>7.3} {:>6} {:>7} {:>9.1}  {} ({})",
            k.loc,
            k.count,
            ms(r.default_cost),
            ms(r.best_cost),
            r.default_cost / r.best_cost,
            noise_text(r.noise),
            r.trials_total,
            r.search_s,
            r.best,
            r.stop
        );
        td += k.count as f64 * r.default_cost;
        tb += k.count as f64 * r.best_cost;
        ts += r.search_s;
        if let Some(f) = &mut json {
            let _ = writeln!(
                f,
                "{}",
                serde_json_line(&[
                    ("kernel", k.loc.clone().into()),
                    ("workload", k.key.to_string().into()),
                    ("count", (k.count as f64).into()),
                    ("default_s", r.default_cost.into()),
                    ("best_s", r.best_cost.into()),
                    ("best", r.best.to_string().into()),
                    ("trials", (r.trials_total as f64).into()),
                    ("search_s", r.search_s.into()),
                    ("noise", r.noise.into()),
                ])
            );
        }
    }
    println!(
        "model: default {} ms, tuned {} ms, speedup {:.3}x, search {:.1} s",
        ms(td),
        ms(tb),
        td / tb,
        ts
    );
    Ok(())
}

/// The model-wide sums of `transfer`: count-weighted costs and search seconds.
#[derive(Default)]
struct TransferTotals {
    /// Default, transferred and full-search costs.
    td: f64,
    tx: f64,
    tf: f64,
    /// Search seconds of transfer and of the full search.
    sx: f64,
    sf: f64,
    /// Whether every kernel has a full search to compare with.
    all_full: bool,
}

/// `transfer`: other workloads' schedules per kernel, a table row each, the model's
/// speedups last.
fn cmd_transfer(
    file: &str,
    db: &str,
    (max_candidates, from): (usize, &[String]),
    compare_db: Option<&str>,
    m: &MeasureArgs,
) -> Result<(), String> {
    use std::io::Write;
    ftuner_tune::measure::set_threads(m.threads);
    let (model, ks) = model_kernels(file, &m.target, m.weights.as_deref())?;
    let db = Db::open(db).map_err(|e| e.to_string())?;
    let cmp = match compare_db {
        Some(p) => Some(Db::open(p).map_err(|e| e.to_string())?),
        None => None,
    };
    let from: Vec<Db> = from
        .iter()
        .map(|p| Db::open_read_only(p).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let sources: Vec<&Db> = from.iter().collect();
    let mut json = open_json(&m.json)?;
    println!(
        "{:<40} {:>3} {:>10} {:>7} {:>8} {:>7} {:>6} {:>9} {:>9}  transferred from",
        "kernel", "n", "default ms", "S_xfer", "S_full", "frac", "noise", "xfer s", "full s"
    );
    let mut tot = TransferTotals {
        all_full: true,
        ..Default::default()
    };
    for k in &ks {
        let mut bench = Bench::new(k, &m.points, m.reps, &m.target)?;
        let r = transfer::transfer_kernel(
            &db,
            &sources,
            cmp.as_ref().unwrap_or(&db),
            k,
            &mut bench,
            &model,
            max_candidates,
            m.rounds,
        )
        .map_err(|e| format!("{}: {e}", k.loc))?;
        let f = |o: Option<f64>, p: usize| o.map(|v| format!("{v:.p$}")).unwrap_or("-".into());
        println!(
            "{:<40} {:>3} {:>10} {:>7.3} {:>8} {:>7} {:>6} {:>9.1} {:>9}  {}",
            k.loc,
            k.count,
            ms(r.default_cost),
            r.speedup(),
            f(r.full_speedup(), 3),
            f(r.fraction(), 2),
            noise_text(r.noise),
            r.search_s,
            f(r.full.map(|x| x.2), 1),
            if r.best_from.is_empty() {
                format!("(default kept; {} candidates)", r.candidates)
            } else {
                format!("{} ({} candidates)", r.best_from, r.candidates)
            }
        );
        let c = k.count as f64;
        tot.td += c * r.default_cost;
        tot.tx += c * r.best_cost;
        tot.sx += r.search_s;
        match (r.full, r.full_speedup()) {
            (Some((_, _, s)), Some(sp)) => {
                tot.tf += c * r.default_cost / sp;
                tot.sf += s;
            }
            _ => tot.all_full = false,
        }
        if let Some(fh) = &mut json {
            let _ = writeln!(
                fh,
                "{}",
                serde_json_line(&[
                    ("kernel", k.loc.clone().into()),
                    ("workload", k.key.to_string().into()),
                    ("count", c.into()),
                    ("default_s", r.default_cost.into()),
                    ("transfer_s", r.best_cost.into()),
                    ("full_s", r.full.map(|x| x.1).into()),
                    ("transfer_search_s", r.search_s.into()),
                    ("full_search_s", r.full.map(|x| x.2).into()),
                    ("candidates", (r.candidates as f64).into()),
                    ("noise", r.noise.into()),
                    ("from", r.best_from.clone().into()),
                ])
            );
        }
    }
    print_transfer_summary(&tot);
    Ok(())
}

/// The `model:` line of `transfer`.
fn print_transfer_summary(tot: &TransferTotals) {
    let TransferTotals {
        td,
        tx,
        tf,
        sx,
        sf,
        all_full,
    } = *tot;
    let s_x = td / tx;
    print!("model: S_transfer {s_x:.3}x in {sx:.1} s of search");
    if all_full && tf > 0.0 {
        let s_f = td / tf;
        let frac = if s_f > 1.0 + 1e-9 {
            format!("{:.2}", (s_x - 1.0) / (s_f - 1.0))
        } else {
            "undefined (the full search found nothing faster than the default)".into()
        };
        println!(
            "; full search S_full {s_f:.3}x in {sf:.1} s; fraction (S_transfer-1)/(S_full-1) = {frac}; full search took {:.1}x the time",
            sf / sx.max(1e-9)
        );
    } else {
        println!(" (no full search of every kernel in the database to compare with)");
    }
}

/// `import-ansor`: each log's mapping report, then the records into `--db`.
fn cmd_import_ansor(files: &[String], db: Option<&str>, target: &str) -> Result<(), String> {
    let model = HardwareModel::load(target)?;
    let mut all = vec![];
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("cannot read {f}: {e}"))?;
        let recs = ansor::parse_log(&text, f)?;
        let (mapped, rep) = ansor::map_records(&recs, f, &model);
        println!("{f}:");
        print!("{}", rep.text());
        all.extend(mapped);
    }
    if let Some(p) = db {
        let mut db = Db::open(p).map_err(|e| e.to_string())?;
        db.insert_all(&all).map_err(|e| e.to_string())?;
        println!("{} records written to {p}", all.len());
    }
    Ok(())
}

/// `db stats|export|prune`.
fn cmd_db(what: DbCmd) -> Result<(), String> {
    match what {
        DbCmd::Stats { db } => {
            let db = Db::open_read_only(&db).map_err(|e| e.to_string())?;
            let s = db.stats().map_err(|e| e.to_string())?;
            println!(
                "{}: {} records ({} failed), {} workloads, {} kernel classes",
                db.path(),
                s.records,
                s.failed,
                s.workloads,
                s.classes
            );
            for (src, n) in s.by_source {
                println!("  {src}: {n}");
            }
        }
        DbCmd::Export { db, out } => {
            let db = Db::open_read_only(&db).map_err(|e| e.to_string())?;
            let mut text = String::new();
            for r in db.all().map_err(|e| e.to_string())? {
                text.push_str(&ftuner_tune::db::record_json(&r));
                text.push('\n');
            }
            match out {
                Some(p) => {
                    std::fs::write(&p, text).map_err(|e| format!("cannot write {p}: {e}"))?
                }
                None => print!("{text}"),
            }
        }
        DbCmd::Prune { db, keep } => {
            let db = Db::open(&db).map_err(|e| e.to_string())?;
            let n = db.prune(keep.max(1)).map_err(|e| e.to_string())?;
            println!("{}: removed {n} records", db.path());
        }
    }
    Ok(())
}

/// A flat JSON object.
fn serde_json_line(fields: &[(&str, ftuner_tune::db::JsonValue)]) -> String {
    ftuner_tune::db::json_object(fields)
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ftuner-tune: error: {e}");
            ExitCode::FAILURE
        }
    }
}
