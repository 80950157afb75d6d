//! Transfer-tuning: reuse the schedules tuned for other workloads of the same kernel class.
//!
//! For each kernel of the target model: collect the distinct schedules the source
//! databases hold, keep those legal on this target, rank them and measure the best
//! `max_candidates` on this kernel (the patch plan covers sizes the tiles do not divide),
//! then keep the fastest, the analytic default included. Each measurement is a `transfer`
//! record in the target database. Ranked first to last:
//!
//! 1. the same workload tuned in another model (exact sizes; only from source databases
//!    other than the target's own: there a record of this workload is its own tuning);
//! 2. other workloads of the same class (other sizes, other models, imported logs);
//! 3. the same contraction with another fused epilogue (`Db::related`: a bias-add instead
//!    of a batch norm changes the class, hardly the best tile);
//! 4. the same op kind with other indexing maps or dynamic dims (`Db::same_kind`: a 3x3
//!    convolution of stride 1 from a 4x4 of stride 2, a static matmul from a dynamic one —
//!    Transfer-Tuning's own classes, which name a kernel's ops and not their layout);
//!
//! and within a rank by the speedup they had on their own workload, side-by-side
//! (`confirm`) figures before single measurements.
//!
//! The speedups reported are confirmed at the end in one interleaved run: the default,
//! transfer's choice and, when a database holds a full search of the kernel (`tune`
//! records), that search's best are timed in turn for several rounds. So the paper's metric
//! `(S_transfer - 1) / (S_full - 1)` compares times taken side by side, not minutes or
//! hours apart. A choice that is no faster than the default there is not taken (speedup
//! 1). The confirmation is not counted as search time.

use crate::db::{Db, Record, Source};
use crate::kernels::Kernel;
use crate::measure::Bench;
use ftuner_hw::HardwareModel;
use ftuner_ukernel::Schedule;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct TransferResult {
    pub default_cost: f64,
    pub best: Schedule,
    pub best_cost: f64,
    /// The workload (class sizes) the best schedule was tuned on; empty for the default.
    pub best_from: String,
    pub candidates: usize,
    pub search_s: f64,
    /// The full search's best, re-measured now, and that search's recorded time.
    pub full: Option<(Schedule, f64, f64)>,
    /// The noise band of the side-by-side run (the default against a copy of itself):
    /// speedups inside it are reported as 1.
    pub noise: f64,
}

impl TransferResult {
    pub fn speedup(&self) -> f64 {
        self.default_cost / self.best_cost
    }
    pub fn full_speedup(&self) -> Option<f64> {
        self.full.map(|f| {
            let s = self.default_cost / f.1.min(self.default_cost);
            if s > 1.0 + self.noise {
                s
            } else {
                1.0
            }
        })
    }
    /// `(S_transfer - 1) / (S_full - 1)`; `None` without a full search or when it found
    /// nothing better than the default.
    pub fn fraction(&self) -> Option<f64> {
        let sf = self.full_speedup()?;
        (sf > 1.0 + 1e-9).then(|| (self.speedup() - 1.0) / (sf - 1.0))
    }
}

/// `sources` supply the candidates (`db` itself when empty); `db` receives the `transfer`
/// records; `full_db` (often `db`) is where a full search of this kernel is looked up.
#[allow(clippy::too_many_arguments)]
pub fn transfer_kernel(
    db: &Db,
    sources: &[&Db],
    full_db: &Db,
    kernel: &Kernel,
    bench: &mut Bench,
    model: &HardwareModel,
    max_candidates: usize,
    rounds: usize,
) -> Result<TransferResult, String> {
    let shape = bench.shape_text(kernel);
    let default = Schedule::analytic(model, kernel.dtype)?;
    let m = bench.measure(kernel, None)?;
    let mut search_s = m.trial_s;
    let (own_db, sources): (bool, Vec<&Db>) = if sources.is_empty() {
        (true, vec![db])
    } else {
        (false, sources.to_vec())
    };
    let mut ranked = candidates(&sources, own_db, kernel, model, &default)?;
    ranked.truncate(max_candidates);
    let (mut best, mut best_cost, mut best_from) = (default, m.cost, String::new());
    for (s, _, from) in &ranked {
        let origin = format!("transferred from {from}");
        let rec = crate::search::trial(db, kernel, bench, &shape, *s, Source::Transfer, &origin)?;
        if let Some(c) = rec.cost.filter(|c| *c < best_cost) {
            (best, best_cost, best_from) = (*s, c, from.clone());
        }
        search_s += rec.trial_s;
    }
    // The full search of this kernel, if there was one: its best, measured again now.
    let own: Vec<Record> = full_db
        .workload(&kernel.key)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|r| r.source == Source::Tune && r.shape == shape)
        .collect();
    let full_best = own
        .iter()
        .filter_map(|r| r.cost.map(|c| (c, r.schedule)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|x| x.1);
    // Confirm in one interleaved run: the default, transfer's choice and the full search's
    // choice. A choice that turns out no faster than the default is not taken (speedup 1).
    let mut scheds = vec![None];
    if best != default {
        scheds.push(Some(best));
    }
    if let Some(f) = full_best {
        scheds.push(Some(f));
    }
    let (confirmed, noise) = bench.compare_noise(kernel, &scheds, rounds)?;
    let default_cost = confirmed[0];
    let mut figures = vec![(default, confirmed[0])];
    if best != default {
        figures.push((best, confirmed[1]));
    }
    crate::search::confirm(db, kernel, &shape, &figures)?;
    let mut best_cost = default_cost;
    if best != default {
        best_cost = confirmed[1].min(default_cost);
        if default_cost / confirmed[1] <= 1.0 + noise {
            (best, best_cost, best_from) = (default, default_cost, String::new());
        }
    }
    let full = full_best.map(|s| {
        let full_s: f64 = own.iter().map(|r| r.trial_s).sum();
        (s, confirmed[confirmed.len() - 1].min(default_cost), full_s)
    });
    Ok(TransferResult {
        default_cost,
        best,
        best_cost,
        best_from,
        candidates: ranked.len(),
        search_s,
        full,
        noise,
    })
}

/// (rank: 0 exact workload, 1 same class, 2 related class, 3 same kind; a side-by-side
/// figure; gain)
type Gain = (u8, bool, f64);

/// The schedules `sources` hold for `kernel`'s class (and related classes and those of
/// the same op kind), legal on
/// `model`, ranked (see the module's doc), each with where it comes from. `own_db`: the
/// one source is the kernel's own database, whose records of its workload are not
/// candidates.
fn candidates(
    sources: &[&Db],
    own_db: bool,
    kernel: &Kernel,
    model: &HardwareModel,
    default: &Schedule,
) -> Result<Vec<(Schedule, Gain, String)>, String> {
    let mut cands: BTreeMap<Schedule, (Gain, String)> = BTreeMap::new();
    for src in sources {
        let class = &kernel.key.class;
        let same = src.class(class).map_err(|e| e.to_string())?;
        let related = src.related(class).map_err(|e| e.to_string())?;
        let kin = src.same_kind(class).map_err(|e| e.to_string())?;
        for (records, level) in [(same, 1u8), (related, 2), (kin, 3)] {
            // Each source workload's default cost, to rank its schedules by their gain.
            type Src = (String, String, String, String);
            let mut defaults: BTreeMap<(bool, Src), f64> = BTreeMap::new();
            let at = |r: &Record| {
                (
                    r.key.class.0.clone(),
                    r.key.sizes.clone(),
                    r.key.target.clone(),
                    r.shape.clone(),
                )
            };
            for r in &records {
                let confirmed = r.source == Source::Confirm;
                if r.source == Source::Default || (confirmed && r.schedule == *default) {
                    if let Some(c) = r.cost {
                        let e = defaults.entry((confirmed, at(r))).or_insert(c);
                        *e = e.min(c);
                    }
                }
            }
            for r in &records {
                let exact = r.key == kernel.key;
                if (exact && own_db) || r.source == Source::Default || r.schedule == *default {
                    continue;
                }
                let Some(c) = r.cost else { continue };
                if r.schedule.check(model, kernel.dtype).is_err() {
                    continue;
                }
                let confirmed = r.source == Source::Confirm;
                let rank = if exact { 0 } else { level };
                // Imported records have no default of ours to compare with: rank them
                // after ours.
                let gain = (
                    rank,
                    confirmed,
                    defaults
                        .get(&(confirmed, at(r)))
                        .map(|d| d / c)
                        .unwrap_or(0.0),
                );
                let from = format!(
                    "{}{} [{}]",
                    r.key.sizes,
                    match level {
                        2 => " (other epilogue)",
                        3 => " (same op, other layout or dynamic dims)",
                        _ => "",
                    },
                    r.source.name()
                );
                let better = |old: &Gain| {
                    gain.0 < old.0 || (gain.0 == old.0 && (gain.1, gain.2) > (old.1, old.2))
                };
                let e = cands.entry(r.schedule).or_insert((gain, from.clone()));
                if better(&e.0) {
                    *e = (gain, from);
                }
            }
        }
    }
    let mut ranked: Vec<(Schedule, Gain, String)> =
        cands.into_iter().map(|(s, (g, f))| (s, g, f)).collect();
    ranked.sort_by(|a, b| {
        (a.1 .0.cmp(&b.1 .0))
            .then(b.1 .1.cmp(&a.1 .1))
            .then(b.1 .2.total_cmp(&a.1 .2))
            .then(a.0.cmp(&b.0))
    });
    Ok(ranked)
}
