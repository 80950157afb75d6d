//! `patch-ukernels{tuning-db=FILE}`: each contraction whose workload the database has
//! measured gets the fastest schedule ftuner measured; imported times never count.

use ftuner_tune::db::{Db, Record, Source};
use ftuner_ukernel::Schedule;

const TARGET: &str = "skylake-avx512";

fn dense() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/dense_dynamic.mlir"),
    )
    .unwrap()
}

fn patched(src: &str, db: &std::path::Path) -> Result<String, String> {
    let ctx = ftuner_transforms::context();
    let mut m = ftuner_tune::kernels::load(&ctx, src, "dense.mlir")?;
    let mut reg = ftuner_pass::PassRegistry::default();
    reg.register(|| Box::new(ftuner_ukernel::PatchUkernelsPass::default()));
    ftuner_tune::register(&mut reg);
    let p = format!(
        "builtin.module(patch-ukernels{{target={TARGET} tuning-db={}}})",
        db.display()
    );
    let mut pm = ftuner_pass::PassManager::from_pipeline(&reg, &p).map_err(|e| e.to_string())?;
    pm.run(&ctx, &mut m.ir, m.top).map_err(|e| e.to_string())?;
    Ok(ftuner_ir::print_module(
        &m.ir,
        &ctx,
        m.top,
        Default::default(),
    ))
}

fn key_of(src: &str) -> ftuner_ukernel::WorkloadKey {
    let ctx = ftuner_transforms::context();
    let mut m = ftuner_tune::kernels::load(&ctx, src, "dense.mlir").unwrap();
    let model = ftuner_hw::HardwareModel::load(TARGET).unwrap();
    let ks = ftuner_tune::kernels::extract(&ctx, &mut m.ir, m.top, &model);
    assert_eq!(ks.len(), 1);
    ks[0].key.clone()
}

fn rec(key: &ftuner_ukernel::WorkloadKey, s: &str, src: Source, cost: Option<f64>) -> Record {
    let mut r = Record::new(
        key.clone(),
        "M=64,256".into(),
        s.parse::<Schedule>().unwrap(),
        src,
    );
    r.cost = cost;
    r
}

#[test]
fn the_best_measured_schedule_is_applied() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.db");
    let src = dense();
    let key = key_of(&src);
    assert!(key.sizes == "M=? N=2304 K=768", "{}", key.sizes);
    {
        let db = Db::open(&p).unwrap();
        db.insert(&rec(
            &key,
            "mr=14,nr=32,kc=144",
            Source::Default,
            Some(2.0e-3),
        ))
        .unwrap();
        db.insert(&rec(
            &key,
            "mr=10,nr=32,kc=512,k_blocking=0,max_ukernels=4",
            Source::Tune,
            Some(1.6e-3),
        ))
        .unwrap();
        db.insert(&rec(&key, "mr=6,nr=64,kc=256", Source::Tune, Some(1.9e-3)))
            .unwrap();
        db.insert(&rec(&key, "mr=2,nr=16,kc=64", Source::Tune, None))
            .unwrap();
        // Another tool's time: ignored however small.
        db.insert(&rec(&key, "mr=1,nr=16,kc=8", Source::Ansor, Some(1e-9)))
            .unwrap();
    }
    let out = patched(&src, &p).unwrap();
    assert!(
        out.contains(
            "ftuner.schedule = \"mr=10,nr=32,kc=512,k_blocking=0,pack_b=0,max_ukernels=4\""
        ),
        "{out}"
    );
    assert!(out.contains("tiles [10x32,"), "{out}");
    assert!(out.contains("cache(kc = 512,"), "{out}");
}

#[test]
fn workloads_without_records_keep_the_analytic_default() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.db");
    let src = dense();
    let mut other = key_of(&src);
    other.sizes = "M=? N=768 K=768".into();
    {
        let db = Db::open(&p).unwrap();
        db.insert(&rec(&other, "mr=4,nr=32,kc=64", Source::Tune, Some(1e-3)))
            .unwrap();
    }
    let out = patched(&src, &p).unwrap();
    assert!(!out.contains("ftuner.schedule"), "{out}");
    assert!(out.contains("tiles [6x64,"), "{out}");
}

#[test]
fn a_bad_database_is_an_error_not_a_default() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("junk.db");
    std::fs::write(&p, vec![7u8; 4096]).unwrap();
    let e = patched(&dense(), &p).unwrap_err();
    assert!(e.contains("junk.db: not an SQLite database"), "{e}");
}

#[test]
fn recorded_schedules_the_target_cannot_take_are_skipped() {
    // Records from an older search space: three vectors per row (48 columns) were legal
    // then; the faster of them is passed over for the best legal one.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("old.db");
    let src = dense();
    let key = key_of(&src);
    {
        let db = Db::open(&p).unwrap();
        db.insert(&rec(&key, "mr=8,nr=48,kc=256", Source::Tune, Some(1.0e-3)))
            .unwrap();
        db.insert(&rec(&key, "mr=10,nr=32,kc=256", Source::Tune, Some(1.5e-3)))
            .unwrap();
        let (best, skipped) = db.best_where(&key, &|r| r.schedule.nr != 48).unwrap();
        assert_eq!((best.map(|r| r.schedule.mr), skipped), (Some(10), 1));
    }
    let out = patched(&src, &p).unwrap();
    assert!(out.contains("tiles [10x32,"), "{out}");
    // Only illegal records: the analytic default, not an error.
    let q = dir.path().join("only-old.db");
    {
        let db = Db::open(&q).unwrap();
        db.insert(&rec(&key, "mr=8,nr=48,kc=256", Source::Tune, Some(1.0e-3)))
            .unwrap();
    }
    let out = patched(&src, &q).unwrap();
    assert!(!out.contains("ftuner.schedule"), "{out}");
    assert!(out.contains("tiles [6x64,"), "{out}");
}

#[test]
fn an_unreadable_record_is_skipped_not_fatal() {
    // The fastest record of the workload is damaged (a schedule that does not parse):
    // patch-ukernels takes the best readable one; before, the database was unusable.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("damaged-row.db");
    let src = dense();
    let key = key_of(&src);
    {
        let db = Db::open(&p).unwrap();
        db.insert(&rec(&key, "mr=10,nr=32,kc=256", Source::Tune, Some(1.5e-3)))
            .unwrap();
        db.insert(&rec(&key, "mr=8,nr=32,kc=128", Source::Tune, Some(1.0e-3)))
            .unwrap();
    }
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch("UPDATE records SET schedule = 'mr=8,nr=32,kc=??' WHERE id = 2;")
        .unwrap();
    drop(c);
    let out = patched(&src, &p).unwrap();
    assert!(out.contains("tiles [10x32,"), "{out}");
}
