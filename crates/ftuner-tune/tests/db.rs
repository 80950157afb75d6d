//! The tuning database: records round-trip; bad files are clear errors and stay untouched;
//! a writer killed with SIGKILL loses nothing committed; concurrent writers lose nothing.

use ftuner_tune::db::{Db, DbError, Record, Source};
use ftuner_ukernel::{KernelClass, Schedule, WorkloadKey};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn key(sizes: &str) -> WorkloadKey {
    WorkloadKey {
        class: KernelClass("matmul f32 maps=[...] epilogue=none dynamic=[M]".into()),
        sizes: sizes.into(),
        target: "test-target".into(),
    }
}

fn sched(mr: u32, kc: u32) -> Schedule {
    format!("mr={mr},nr=32,kc={kc}").parse().unwrap()
}

fn rec(sizes: &str, s: Schedule, source: Source, cost: Option<f64>) -> Record {
    let mut r = Record::new(key(sizes), "M=64,256".into(), s, source);
    r.cost = cost;
    r.costs = cost.into_iter().collect();
    r.trial_s = 0.25;
    r
}

#[test]
fn records_round_trip_and_best_ignores_imports_and_failures() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.db");
    let db = Db::open(&p).unwrap();
    db.insert(&rec(
        "M=? N=768 K=768",
        sched(14, 144),
        Source::Default,
        Some(2e-3),
    ))
    .unwrap();
    db.insert(&rec(
        "M=? N=768 K=768",
        sched(8, 256),
        Source::Tune,
        Some(1.5e-3),
    ))
    .unwrap();
    let mut failed = rec("M=? N=768 K=768", sched(4, 64), Source::Tune, None);
    failed.error = Some("wrong results".into());
    db.insert(&failed).unwrap();
    // Faster, but another tool's time on another machine: never "best".
    db.insert(&rec(
        "M=? N=768 K=768",
        sched(6, 64),
        Source::Ansor,
        Some(1e-6),
    ))
    .unwrap();
    db.insert(&rec(
        "M=? N=3072 K=768",
        sched(12, 128),
        Source::Tune,
        Some(1e-3),
    ))
    .unwrap();
    drop(db);
    let db = Db::open_read_only(&p).unwrap();
    let all = db.all().unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(all[2].error.as_deref(), Some("wrong results"));
    assert_eq!(all[1].schedule, sched(8, 256));
    assert_eq!(all[1].costs, vec![1.5e-3]);
    let best = db.best(&key("M=? N=768 K=768")).unwrap().unwrap();
    assert_eq!(best.schedule, sched(8, 256));
    assert!(db.best(&key("M=? N=1 K=1")).unwrap().is_none());
    assert_eq!(db.class(&key("x").class).unwrap().len(), 5);
    let st = db.stats().unwrap();
    assert_eq!(
        (st.records, st.failed, st.workloads, st.classes),
        (5, 1, 2, 1)
    );
    drop(db);
    let db = Db::open(&p).unwrap();
    // Side by side, the tuned schedule lost to the default: the confirmation decides.
    db.insert(&rec(
        "M=? N=768 K=768",
        sched(14, 144),
        Source::Confirm,
        Some(1.7e-3),
    ))
    .unwrap();
    db.insert(&rec(
        "M=? N=768 K=768",
        sched(8, 256),
        Source::Confirm,
        Some(1.8e-3),
    ))
    .unwrap();
    let best = db.best(&key("M=? N=768 K=768")).unwrap().unwrap();
    assert_eq!(
        (best.schedule, best.source),
        (sched(14, 144), Source::Confirm)
    );
    assert_eq!(
        db.prune(1).unwrap(),
        2,
        "the failed trial and the slower confirmation"
    );
    assert_eq!(db.all().unwrap().len(), 5);
    // Exported lines are JSON with every field.
    let line = ftuner_tune::db::record_json(&db.all().unwrap()[0]);
    for f in [
        "\"class\"",
        "\"schedule\"",
        "\"costs\"",
        "\"timestamp\"",
        "\"tool_version\"",
    ] {
        assert!(line.contains(f), "{line}");
    }
}

fn assert_untouched(path: &std::path::Path, before: &[u8]) {
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "the file was modified"
    );
}

#[test]
fn bad_files_are_clear_errors_and_stay_untouched() {
    let dir = tempfile::tempdir().unwrap();
    // Not SQLite at all.
    let p = dir.path().join("text.db");
    let junk: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&p, &junk).unwrap();
    for e in [
        Db::open(&p).err().unwrap(),
        Db::open_read_only(&p).err().unwrap(),
    ] {
        assert!(matches!(e, DbError::NotSqlite { .. }), "{e}");
        assert!(e.to_string().contains("text.db"), "{e}");
    }
    assert_untouched(&p, &junk);
    // Another application's SQLite file.
    let p = dir.path().join("foreign.db");
    run_sql(
        &p,
        "PRAGMA application_id = 12345; CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);",
    );
    let before = std::fs::read(&p).unwrap();
    let e = Db::open(&p).err().unwrap();
    assert!(matches!(e, DbError::Foreign { .. }), "{e}");
    assert!(
        e.to_string().contains("not an ftuner tuning database"),
        "{e}"
    );
    assert!(e.to_string().contains("notes"), "{e}");
    assert_untouched(&p, &before);
    // A damaged database: ours, with a page overwritten.
    let p = dir.path().join("damaged.db");
    {
        let db = Db::open(&p).unwrap();
        for i in 0..300 {
            db.insert(&rec(
                &format!("M=? N={i} K=768"),
                sched(14, 144),
                Source::Tune,
                Some(1e-3),
            ))
            .unwrap();
        }
        db.prune(1000).unwrap(); // checkpoint the WAL into the main file
    }
    let mut bytes = std::fs::read(&p).unwrap();
    assert!(bytes.len() > 3 * 4096);
    for b in &mut bytes[4096 + 100..3 * 4096] {
        *b = 0xA5;
    }
    std::fs::write(&p, &bytes).unwrap();
    let e = Db::open(&p).err().unwrap();
    assert!(
        matches!(e, DbError::Corrupt { .. } | DbError::NotSqlite { .. }),
        "{e}"
    );
    assert_untouched(&p, &bytes);
    // A truncated header.
    let p = dir.path().join("truncated.db");
    std::fs::write(&p, &bytes[..50]).unwrap();
    assert!(Db::open(&p).is_err());
    // A database from a newer ftuner.
    let p = dir.path().join("newer.db");
    drop(Db::open(&p).unwrap());
    set_user_version(&p, 99);
    let e = Db::open(&p).err().unwrap();
    assert!(matches!(e, DbError::TooNew { found: 99, .. }), "{e}");
    // Read-only opening of a missing file does not create it.
    let p = dir.path().join("missing.db");
    assert!(Db::open_read_only(&p).is_err());
    assert!(!p.exists());
}

fn run_sql(p: &std::path::Path, sql: &str) {
    let c = rusqlite::Connection::open(p).unwrap();
    c.execute_batch(sql).unwrap();
}

fn set_user_version(p: &std::path::Path, v: i32) {
    run_sql(p, &format!("PRAGMA user_version = {v};"));
}

/// Child mode: write records forever, printing each committed id.
#[test]
fn writer_child() {
    let Ok(path) = std::env::var("FTUNER_TEST_WRITER_DB") else {
        return;
    };
    let tag = std::env::var("FTUNER_TEST_WRITER_TAG").unwrap_or_default();
    let limit: usize = std::env::var("FTUNER_TEST_WRITER_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let db = Db::open(&path).unwrap();
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for i in 0..limit {
        let mut r = rec(
            &format!("M=? N={i} K=768"),
            sched(14, 144),
            Source::Tune,
            Some(1e-3),
        );
        r.origin = format!("{tag}{i}");
        let id = db.insert(&r).unwrap();
        writeln!(out, "committed {id}").unwrap();
        out.flush().unwrap();
    }
}

fn spawn_writer(db: &std::path::Path, tag: &str, n: Option<usize>) -> std::process::Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        "db::writer_child",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("FTUNER_TEST_WRITER_DB", db)
    .env("FTUNER_TEST_WRITER_TAG", tag)
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    if let Some(n) = n {
        c.env("FTUNER_TEST_WRITER_N", n.to_string());
    }
    c.spawn().unwrap()
}

#[test]
fn sigkill_loses_nothing_committed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("kill.db");
    drop(Db::open(&p).unwrap());
    let mut child = spawn_writer(&p, "k", None);
    let stdout = child.stdout.take().unwrap();
    let mut last = 0i64;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(id) = line.strip_prefix("committed ") {
            last = id.parse().unwrap();
            if last >= 150 {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    let db = Db::open(&p).unwrap();
    let n = db.all().unwrap().len() as i64;
    // Everything reported committed is there; at most the trial in flight (and the ones
    // the child committed after our last read) beyond it.
    assert!(n >= last, "{n} records after a kill, {last} were committed");
    let ids: Vec<i64> = db.all().unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, (1..=n).collect::<Vec<_>>(), "no gaps, no damage");
    // And the file takes new writes.
    db.insert(&rec("M=? N=1 K=1", sched(1, 8), Source::Tune, Some(1.0)))
        .unwrap();
}

#[test]
fn concurrent_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("two.db");
    drop(Db::open(&p).unwrap());
    let a = spawn_writer(&p, "a", Some(200));
    let b = spawn_writer(&p, "b", Some(200));
    // This process writes too.
    let db = Db::open(&p).unwrap();
    for i in 0..100 {
        let mut r = rec(
            &format!("M=? N={i} K=1"),
            sched(2, 16),
            Source::Tune,
            Some(1e-3),
        );
        r.origin = format!("c{i}");
        db.insert(&r).unwrap();
    }
    for c in [a, b] {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success());
    }
    let all = db.all().unwrap();
    assert_eq!(all.len(), 500);
    for (tag, n) in [("a", 200), ("b", 200), ("c", 100)] {
        let mut got: Vec<usize> = all
            .iter()
            .filter_map(|r| r.origin.strip_prefix(tag).and_then(|x| x.parse().ok()))
            .collect();
        got.sort_unstable();
        assert_eq!(got, (0..n).collect::<Vec<_>>(), "writer {tag}");
    }
}
