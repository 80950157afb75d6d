//! The search tuner and transfer-tuning through the JIT, on small kernels: every trial is
//! recorded, a second run resumes instead of repeating, and transfer measures the other
//! workloads' schedules on the target.
#![cfg(feature = "measure")]

use ftuner_tune::db::{Db, Source};
use ftuner_tune::kernels::{extract, load, Kernel};
use ftuner_tune::measure::Bench;
use ftuner_tune::{search, transfer};

fn kernel(n: usize, k: usize) -> (ftuner_hw::HardwareModel, Kernel) {
    kernel_m("?", n, k)
}

/// A matmul of `m` rows (`?`: dynamic).
fn kernel_m(m: &str, n: usize, k: usize) -> (ftuner_hw::HardwareModel, Kernel) {
    let src = format!(
        "func.func @f(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>, %c: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n  %r = linalg.matmul ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%c : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>\n  return %r : tensor<{m}x{n}xf32>\n}}\n"
    );
    let ctx = ftuner_transforms::context();
    let mut m = load(&ctx, &src, "k.mlir").unwrap();
    let model = ftuner_hw::HardwareModel::load("host").unwrap();
    let mut ks = extract(&ctx, &mut m.ir, m.top, &model);
    assert_eq!(ks.len(), 1);
    (model, ks.remove(0))
}

fn opts(trials: usize) -> search::SearchOptions {
    search::SearchOptions {
        trials,
        time_limit: std::time::Duration::from_secs(300),
        seed: 7,
        progress: false,
        rounds: 2,
    }
}

#[test]
fn tuning_records_every_trial_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("t.db")).unwrap();
    let (model, k) = kernel(48, 40);
    assert_eq!(k.key.sizes, "M=? N=48 K=40");
    let mut bench = Bench::new(&k, &[5, 37], 2, "host").unwrap();
    assert_eq!(bench.shape_text(&k), "M=5,37");
    let r = search::tune_kernel(&db, &k, &mut bench, &model, &opts(4)).unwrap();
    assert_eq!((r.trials_run, r.trials_total), (4, 4));
    assert!(r.best_cost <= r.default_cost);
    assert!(r.stop.contains("budget"));
    let tune: Vec<_> = db
        .workload(&k.key)
        .unwrap()
        .into_iter()
        .filter(|r| r.source == Source::Tune)
        .collect();
    assert_eq!(tune.len(), 4);
    // Every trial computed the default's results (a wrong one would be a failed trial).
    assert!(
        tune.iter().all(|r| r.error.is_none() && r.costs.len() == 2),
        "{tune:?}"
    );
    // A second run with a larger budget measures only the new trials.
    let mut bench = Bench::new(&k, &[5, 37], 2, "host").unwrap();
    let r2 = search::tune_kernel(&db, &k, &mut bench, &model, &opts(7)).unwrap();
    assert_eq!((r2.trials_run, r2.trials_total), (3, 7));
    let mut scheds: Vec<String> = db
        .workload(&k.key)
        .unwrap()
        .into_iter()
        .filter(|r| r.source == Source::Tune)
        .map(|r| r.schedule.to_string())
        .collect();
    assert_eq!(scheds.len(), 7);
    scheds.sort();
    scheds.dedup();
    assert_eq!(scheds.len(), 7, "no schedule measured twice");
    // What drives patch-ukernels for this workload: a side-by-side figure, the schedule a
    // run reported as its best (the default when nothing beat it beside it).
    let best = db.best(&k.key).unwrap().unwrap();
    assert_eq!(best.source, Source::Confirm);
    assert!(
        best.schedule == r.best || best.schedule == r2.best,
        "{best:?}"
    );
}

#[test]
fn transfer_measures_other_workloads_schedules() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("t.db")).unwrap();
    let (model, src) = kernel(64, 32);
    let mut bench = Bench::new(&src, &[9, 40], 2, "host").unwrap();
    search::tune_kernel(&db, &src, &mut bench, &model, &opts(5)).unwrap();
    let (_, dst) = kernel(80, 48);
    assert_eq!(src.key.class, dst.key.class);
    assert_ne!(src.key, dst.key);
    let mut bench = Bench::new(&dst, &[9, 40], 2, "host").unwrap();
    let r = transfer::transfer_kernel(&db, &[], &db, &dst, &mut bench, &model, 3, 2).unwrap();
    assert!(r.candidates >= 1 && r.candidates <= 3, "{}", r.candidates);
    assert!(r.best_cost <= r.default_cost);
    assert!(r.speedup() >= 1.0);
    // No full search of the target in the database: no fraction.
    assert!(r.full.is_none() && r.fraction().is_none());
    let recs = db.workload(&dst.key).unwrap();
    assert_eq!(
        recs.iter().filter(|r| r.source == Source::Transfer).count(),
        r.candidates
    );
    assert!(recs
        .iter()
        .filter(|r| r.source == Source::Transfer)
        .all(|r| r.origin.starts_with("transferred from M=? N=64 K=32")));
}

/// A kernel whose class no source holds takes the schedules of the same op with another
/// layout or other dynamic dims (Transfer-Tuning's classes): a dynamic-M matmul from a
/// static one's search.
#[test]
fn transfer_reaches_the_same_op_with_other_dynamic_dims() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("t.db")).unwrap();
    let (model, src) = kernel_m("40", 64, 32);
    let mut bench = Bench::new(&src, &[], 2, "host").unwrap();
    search::tune_kernel(&db, &src, &mut bench, &model, &opts(4)).unwrap();
    let (_, dst) = kernel(80, 48);
    assert_ne!(src.key.class, dst.key.class);
    assert_eq!(src.key.class.kind(), dst.key.class.kind());
    let mut bench = Bench::new(&dst, &[9, 40], 2, "host").unwrap();
    let r = transfer::transfer_kernel(&db, &[], &db, &dst, &mut bench, &model, 3, 2).unwrap();
    assert!(r.candidates >= 1, "{}", r.candidates);
    let recs = db.workload(&dst.key).unwrap();
    assert!(
        recs.iter()
            .filter(|r| r.source == Source::Transfer)
            .all(|r| r.origin.contains("(same op, other layout or dynamic dims)")),
        "{recs:?}"
    );
}
