//! The search tuner: the baseline a user would otherwise run (in the spirit of Ansor and
//! MetaSchedule, with real measurements and no learned cost model).
//!
//! The space is every knob of a [`Schedule`] that is legal on the target: register tiles
//! `mr x nr` that fit the vector register file (`nr` in whole vectors, or a power of two
//! below one), `kc` from 16 to 1024 plus the analytic value, reduction blocking on or off,
//! B packing on or off, 2 to 8 tile sizes per patched dimension, and the lowering's loop
//! knobs: 1, 2 or 4 k steps per iteration of the register tile's k loop (or the rule),
//! row or column loops outside (or the rule), A blocks copied or never. The search is
//! evolutionary: a few random schedules first, then each trial mutates one of the best
//! measured so far (one knob at a time) or, one time in four, samples at random. Every
//! trial is a record in the database the moment it is measured, so a search stopped at any
//! point (a time limit, Ctrl-C, `kill -9`) resumes from the database: schedules already
//! measured for the workload are neither repeated nor forgotten, and the trial budget
//! counts them.

use crate::db::{Db, Record, Source};
use crate::kernels::Kernel;
use crate::measure::Bench;
use ftuner_hw::HardwareModel;
use ftuner_ukernel::{Order, Schedule};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Trials for the workload in all (earlier runs' included).
    pub trials: usize,
    pub time_limit: Duration,
    pub seed: u64,
    pub progress: bool,
    /// Rounds of the final interleaved comparison of the best schedule with the default
    /// (0: report the search's own measurements).
    pub rounds: usize,
}

#[derive(Clone, Debug)]
pub struct SearchResult {
    pub default: Schedule,
    /// Cost of the analytic default and of the best schedule, measured side by side at the
    /// end of the run (see `SearchOptions::rounds`).
    pub default_cost: f64,
    pub best: Schedule,
    pub best_cost: f64,
    /// Trials measured in this run / recorded for the workload in all.
    pub trials_run: usize,
    pub trials_total: usize,
    /// Search time of every recorded trial of the workload (this run and earlier ones).
    pub search_s: f64,
    /// Why the search stopped.
    pub stop: String,
    /// The noise band of the side-by-side comparison (`Bench::compare_noise`); 0 when
    /// there was none.
    pub noise: f64,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The legal values of each knob on `model`.
pub struct Space {
    pub tiles: Vec<(u32, u32)>,
    pub kcs: Vec<u32>,
    pub max_ukernels: Vec<u32>,
    /// k steps per iteration (0: the lowering's rule).
    pub k_unrolls: Vec<u32>,
    pub orders: Vec<Order>,
    /// `pack_a` values (`true` is the lowering's rule).
    pub pack_as: Vec<bool>,
}

impl Space {
    pub fn new(
        model: &HardwareModel,
        dtype: ftuner_ukernel::DType,
        analytic_kc: u32,
    ) -> Result<Space, String> {
        let cpu = model.cpu().ok_or("the search tuner needs a CPU target")?;
        let lanes = cpu.lanes(4);
        let mut nrs: Vec<u32> = (1..=4).map(|v| v * lanes).collect();
        nrs.push(lanes / 2);
        let mut tiles = vec![];
        for nr in nrs {
            for mr in 1..=cpu.vector_registers {
                if ftuner_ukernel::cpu::check_tile(cpu, dtype, mr, nr).is_ok()
                    && mr * nr >= lanes * 2
                {
                    tiles.push((mr, nr));
                }
            }
        }
        let mut kcs = vec![
            16,
            32,
            48,
            64,
            96,
            128,
            192,
            256,
            384,
            512,
            768,
            1024,
            analytic_kc,
        ];
        // A convolution's own analytic kc where it differs (`cpu::conv_family`).
        if let Some(conv) = ftuner_ukernel::cpu::build(cpu, dtype)
            .ok()
            .and_then(|f| ftuner_ukernel::cpu::conv_family(cpu, &f))
        {
            kcs.push(conv.kc);
        }
        kcs.sort_unstable();
        kcs.dedup();
        Ok(Space {
            tiles,
            kcs,
            max_ukernels: vec![2, 3, 4, 8],
            k_unrolls: vec![0, 1, 2, 4],
            orders: vec![Order::Auto, Order::Rows, Order::Cols],
            pack_as: vec![true, false],
        })
    }
    /// Drop the loop knobs' values that cannot change `kernel`'s code, so that no trial
    /// re-measures the default under another label: a matmul's order where its M is
    /// dynamic (split into mc blocks, each running its strips inside its N tiles whatever
    /// the order), a conv's where its M is static (blocks of output rows need a dynamic
    /// M), and `pack_a=0` where nothing copies A blocks (a static M has no mc loop; a conv
    /// packs its row blocks whole).
    pub fn for_kernel(mut self, kernel: &Kernel) -> Space {
        let conv = kernel
            .key
            .class
            .kind()
            .is_some_and(|k| k.starts_with("conv"));
        let dynamic_m = kernel.dynamic_roles().contains(&crate::kernels::Role::M);
        self.prune(conv, dynamic_m);
        self
    }
    fn prune(&mut self, conv: bool, dynamic_m: bool) {
        if conv != dynamic_m {
            self.orders = vec![Order::Auto];
        }
        if conv || !dynamic_m {
            self.pack_as = vec![true];
        }
    }
    fn random(&self, r: &mut Rng) -> Schedule {
        let (mr, nr) = self.tiles[r.below(self.tiles.len())];
        Schedule {
            mr,
            nr,
            kc: self.kcs[r.below(self.kcs.len())],
            k_blocking: r.below(4) != 0,
            pack_b: r.below(2) == 0,
            max_ukernels: self.max_ukernels[r.below(self.max_ukernels.len())],
            // The lowering's rules at least half the time: their knobs alone are a
            // large space.
            k_unroll: rule_or(r, &self.k_unrolls, 0),
            order: rule_or(r, &self.orders, Order::Auto),
            pack_a: rule_or(r, &self.pack_as, true),
        }
    }
    fn mutate(&self, s: &Schedule, r: &mut Rng) -> Schedule {
        let mut n = *s;
        match r.below(9) {
            0 | 1 => {
                // A neighbouring tile: same nr with mr +-1..2, or same mr with another nr.
                let near: Vec<(u32, u32)> = self
                    .tiles
                    .iter()
                    .copied()
                    .filter(|(m, nn)| {
                        (*nn == s.nr && m.abs_diff(s.mr) <= 2 && *m != s.mr)
                            || (*m == s.mr && *nn != s.nr)
                    })
                    .collect();
                if let Some(t) = near.get(r.below(near.len().max(1))) {
                    (n.mr, n.nr) = *t;
                }
            }
            2 => {
                let i = self.kcs.iter().position(|k| *k == s.kc).unwrap_or(0) as i64;
                let j =
                    (i + if r.below(2) == 0 { -1 } else { 1 }).clamp(0, self.kcs.len() as i64 - 1);
                n.kc = self.kcs[j as usize];
            }
            3 => n.k_blocking = !n.k_blocking,
            4 => n.pack_b = !n.pack_b,
            5 => n.k_unroll = pick(r, &self.k_unrolls, 0),
            6 => n.order = pick(r, &self.orders, Order::Auto),
            7 => n.pack_a = pick(r, &self.pack_as, true),
            _ => n.max_ukernels = self.max_ukernels[r.below(self.max_ukernels.len())],
        }
        n
    }
}

/// A value of `of` at random (`rule` when it is empty).
fn pick<T: Copy>(r: &mut Rng, of: &[T], rule: T) -> T {
    of.get(r.below(of.len())).copied().unwrap_or(rule)
}

/// The lowering's rule half the time, else a value of `of` at random.
fn rule_or<T: Copy>(r: &mut Rng, of: &[T], rule: T) -> T {
    if r.below(2) == 0 {
        rule
    } else {
        pick(r, of, rule)
    }
}

/// An unmeasured schedule to try (a bounded number of attempts): a random one while fewer
/// than four are measured (and one time in four), else a mutation of one of the four best.
/// Never `default`'s label: the default is measured as patch-ukernels builds it, and as a
/// schedule the label fixes the GEMM's kc, which a conv's default does not take
/// (`cpu::conv_family`) — a trial of it would measure another schedule under the
/// default's name.
fn propose(
    space: &Space,
    measured: &[(f64, Schedule)],
    seen: &std::collections::BTreeSet<Schedule>,
    default: Schedule,
    rng: &mut Rng,
) -> Option<Schedule> {
    (0..200).find_map(|_| {
        let s = if measured.len() < 4 || rng.below(4) == 0 {
            space.random(rng)
        } else {
            let parent = measured[rng.below(measured.len().min(4))].1;
            space.mutate(&parent, rng)
        };
        (!seen.contains(&s) && s != default).then_some(s)
    })
}

/// Tune one kernel; every trial is written to `db` as it completes.
pub fn tune_kernel(
    db: &Db,
    kernel: &Kernel,
    bench: &mut Bench,
    model: &HardwareModel,
    opts: &SearchOptions,
) -> Result<SearchResult, String> {
    let start = Instant::now();
    let shape = bench.shape_text(kernel);
    let default = Schedule::analytic(model, kernel.dtype)?;
    // The default first: it fixes the reference results the trials are checked against.
    let m = bench.measure(kernel, None)?;
    let mut rec = Record::new(kernel.key.clone(), shape.clone(), default, Source::Default);
    rec.costs = m.per_point.clone();
    rec.cost = Some(m.cost);
    rec.trial_s = m.trial_s;
    db.insert(&rec).map_err(|e| e.to_string())?;
    let default_cost = m.cost;
    // What earlier runs measured for this workload at these points.
    let earlier: Vec<Record> = db
        .workload(&kernel.key)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|r| r.source == Source::Tune && r.shape == shape)
        .collect();
    let mut seen: std::collections::BTreeSet<Schedule> =
        earlier.iter().map(|r| r.schedule).collect();
    let mut measured: Vec<(f64, Schedule)> = earlier
        .iter()
        .filter_map(|r| r.cost.map(|c| (c, r.schedule)))
        .collect();
    let mut search_s: f64 = earlier.iter().map(|r| r.trial_s).sum::<f64>() + m.trial_s;
    let space = Space::new(model, kernel.dtype, default.kc)?.for_kernel(kernel);
    let mut rng = Rng(opts.seed.max(1) ^ 0x9e37_79b9_7f4a_7c15);
    let bar = if opts.progress {
        let b = indicatif::ProgressBar::new(opts.trials as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} trials {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b.set_prefix(kernel.loc.clone());
        b.set_position(seen.len().min(opts.trials) as u64);
        Some(b)
    } else {
        None
    };
    let mut run = 0;
    let stop;
    loop {
        if seen.len() >= opts.trials {
            stop = format!("trial budget ({}) reached", opts.trials);
            break;
        }
        if start.elapsed() >= opts.time_limit {
            stop = format!(
                "time limit ({:.0} s) reached",
                opts.time_limit.as_secs_f64()
            );
            break;
        }
        measured.sort_by(|a, b| a.0.total_cmp(&b.0));
        let Some(s) = propose(&space, &measured, &seen, default, &mut rng) else {
            stop = "no unmeasured schedule found near the best ones".into();
            break;
        };
        seen.insert(s);
        run += 1;
        let rec = trial(db, kernel, bench, &shape, s, Source::Tune, "")?;
        if let Some(c) = rec.cost {
            measured.push((c, s));
        }
        search_s += rec.trial_s;
        if let Some(b) = &bar {
            b.set_position(seen.len() as u64);
            if let Some(best) = measured.iter().min_by(|a, b| a.0.total_cmp(&b.0)) {
                b.set_message(format!(
                    "best {:.3} ms ({:.2}x default)",
                    best.0 * 1e3,
                    default_cost / best.0
                ));
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let (best_cost, best) = measured
        .iter()
        .copied()
        .chain([(default_cost, default)])
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap_or((default_cost, default));
    // Confirm side by side: the search measured each schedule once, minutes apart.
    // Recorded as `confirm` records, which the database's `best` prefers; a schedule that
    // loses to the default side by side is not the result.
    // A gain inside the noise band (the default against a second copy of itself) is
    // reported as none.
    let mut noise = 0.0;
    let (default_cost, best, best_cost) = if best != default && opts.rounds > 0 {
        let (c, n) = bench.compare_noise(kernel, &[None, Some(best)], opts.rounds)?;
        noise = n;
        confirm(db, kernel, &shape, &[(default, c[0]), (best, c[1])])?;
        if c[0] / c[1] > 1.0 + noise {
            (c[0], best, c[1])
        } else {
            (c[0], default, c[0])
        }
    } else {
        confirm(db, kernel, &shape, &[(default, default_cost)])?;
        (default_cost, best, best_cost)
    };
    Ok(SearchResult {
        default,
        default_cost,
        best,
        best_cost,
        trials_run: run,
        trials_total: seen.len(),
        search_s,
        stop,
        noise,
    })
}

/// Record side-by-side figures as `confirm` records.
pub(crate) fn confirm(
    db: &Db,
    kernel: &Kernel,
    shape: &str,
    figures: &[(Schedule, f64)],
) -> Result<(), String> {
    for (s, c) in figures {
        let mut r = Record::new(kernel.key.clone(), shape.to_string(), *s, Source::Confirm);
        r.costs = vec![*c];
        r.cost = Some(*c);
        db.insert(&r).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Measure schedule `s` on `kernel` and record it (a failed trial is recorded with its
/// error): one trial of a search or a transfer.
pub(crate) fn trial(
    db: &Db,
    kernel: &Kernel,
    bench: &mut Bench,
    shape: &str,
    s: Schedule,
    source: Source,
    origin: &str,
) -> Result<Record, String> {
    let mut rec = Record::new(kernel.key.clone(), shape.to_string(), s, source);
    let t = Instant::now();
    match bench.measure(kernel, Some(&s)) {
        Ok(m) => {
            rec.costs = m.per_point;
            rec.cost = Some(m.cost);
        }
        Err(e) => rec.error = Some(e),
    }
    rec.trial_s = t.elapsed().as_secs_f64();
    rec.origin = origin.to_string();
    rec.id = db.insert(&rec).map_err(|e| e.to_string())?;
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search space holds a conv's own analytic kc where it differs from the GEMM's
    /// (Zen 3: 472 beside 168), and nothing extra where it does not (Zen 4).
    #[test]
    fn space_holds_the_conv_kc() {
        let zen3 = HardwareModel::load("zen3").unwrap();
        let kcs = Space::new(&zen3, ftuner_ukernel::DType::F32, 168)
            .unwrap()
            .kcs;
        assert!(kcs.contains(&168) && kcs.contains(&472), "{kcs:?}");
        let zen4 = HardwareModel::load("zen4").unwrap();
        let kcs = Space::new(&zen4, ftuner_ukernel::DType::F32, 672)
            .unwrap()
            .kcs;
        assert_eq!(kcs.len(), 13, "{kcs:?}");
    }

    /// A space whose only unmeasured point is the default's label proposes nothing.
    #[test]
    fn the_default_is_never_proposed() {
        let zen3 = HardwareModel::load("zen3").unwrap();
        let default = Schedule::analytic(&zen3, ftuner_ukernel::DType::F32).unwrap();
        let space = Space {
            tiles: vec![(default.mr, default.nr)],
            kcs: vec![default.kc],
            max_ukernels: vec![default.max_ukernels],
            k_unrolls: vec![default.k_unroll],
            orders: vec![default.order],
            pack_as: vec![default.pack_a],
        };
        let mut seen = std::collections::BTreeSet::new();
        for (k_blocking, pack_b) in [(true, true), (false, false), (false, true)] {
            seen.insert(Schedule {
                k_blocking,
                pack_b,
                ..default
            });
        }
        assert!(!seen.contains(&default));
        let mut rng = Rng(7);
        assert_eq!(propose(&space, &[], &seen, default, &mut rng), None);
    }

    /// The search reaches every value of the loop knobs, by random draws and by mutation
    /// of a measured schedule, and leaves `pack_a` alone where the space has no `pack_a=0`.
    #[test]
    fn the_loop_knobs_are_searched() {
        let zen3 = HardwareModel::load("zen3").unwrap();
        let default = Schedule::analytic(&zen3, ftuner_ukernel::DType::F32).unwrap();
        let mut space = Space::new(&zen3, ftuner_ukernel::DType::F32, default.kc).unwrap();
        let mut rng = Rng(11);
        let drawn: Vec<Schedule> = (0..400).map(|_| space.random(&mut rng)).collect();
        let mutated: Vec<Schedule> = (0..400).map(|_| space.mutate(&default, &mut rng)).collect();
        for of in [&drawn, &mutated] {
            for u in [0, 1, 2, 4] {
                assert!(of.iter().any(|s| s.k_unroll == u), "k_unroll={u}");
            }
            for o in [Order::Auto, Order::Rows, Order::Cols] {
                assert!(of.iter().any(|s| s.order == o), "order={o}");
            }
            assert!(of.iter().any(|s| !s.pack_a) && of.iter().any(|s| s.pack_a));
        }
        // One knob at a time: a mutation of the default changes at most one loop knob.
        for s in &mutated {
            let changed = [
                s.k_unroll != default.k_unroll,
                s.order != default.order,
                s.pack_a != default.pack_a,
            ];
            assert!(changed.iter().filter(|c| **c).count() <= 1, "{s}");
        }
        space.pack_as = vec![true];
        assert!((0..200).all(|_| space.random(&mut rng).pack_a));
        assert!((0..200).all(|_| space.mutate(&default, &mut rng).pack_a));
    }

    /// Only the loop knobs that can change a kernel's code are searched.
    #[test]
    fn the_loop_knobs_follow_the_kernel() {
        let zen3 = HardwareModel::load("zen3").unwrap();
        let full = || Space::new(&zen3, ftuner_ukernel::DType::F32, 168).unwrap();
        // (conv, dynamic M) -> (orders searched, pack_a=0 searched)
        for (conv, dm, orders, no_pack_a) in [
            (false, true, 1, true),
            (false, false, 3, false),
            (true, true, 3, false),
            (true, false, 1, false),
        ] {
            let mut sp = full();
            sp.prune(conv, dm);
            assert_eq!(
                (sp.orders.len(), sp.pack_as.contains(&false)),
                (orders, no_pack_a),
                "conv {conv} dynamic M {dm}"
            );
        }
    }
}
