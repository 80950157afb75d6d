//! `ftuner-tune` as users run it: killed with SIGKILL mid-search and resumed, bad
//! databases, the Ansor import.

use ftuner_tune::db::{Db, Source};
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ftuner-tune");

fn kernel_file(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("k.mlir");
    std::fs::write(
        &p,
        "func.func @f(%a: tensor<?x40xf32>, %b: tensor<40x48xf32>, %c: tensor<?x48xf32>) -> tensor<?x48xf32> {\n  %r = linalg.matmul ins(%a, %b : tensor<?x40xf32>, tensor<40x48xf32>) outs(%c : tensor<?x48xf32>) -> tensor<?x48xf32>\n  return %r : tensor<?x48xf32>\n}\n",
    )
    .unwrap();
    p
}

fn tune_records(db: &std::path::Path) -> Vec<ftuner_tune::Record> {
    match Db::open_read_only(db) {
        Ok(d) => d
            .all()
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.source == Source::Tune)
            .collect(),
        Err(_) => vec![],
    }
}

#[test]
fn sigkill_during_tuning_then_resume() {
    let dir = tempfile::tempdir().unwrap();
    let k = kernel_file(dir.path());
    let db = dir.path().join("t.db");
    let args = |trials: &str| {
        let mut c = Command::new(BIN);
        c.args(["tune", k.to_str().unwrap(), "--db", db.to_str().unwrap()])
            .args([
                "--trials", trials, "--points", "5,37", "--reps", "2", "--quiet",
            ]);
        c
    };
    let mut child = args("100000").spawn().unwrap();
    let t0 = Instant::now();
    while tune_records(&db).len() < 5 {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no trials recorded"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL, mid-trial most likely
    let _ = child.wait();
    let before = tune_records(&db);
    let n = before.len();
    assert!(n >= 5);
    // Everything recorded is intact and readable.
    assert!(before.iter().all(|r| r.cost.is_some() || r.error.is_some()));
    // Resume: a budget of n + 3 measures exactly 3 more, none repeated.
    let out = args(&(n + 3).to_string()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = tune_records(&db);
    assert_eq!(after.len(), n + 3);
    assert_eq!(&after[..n], &before[..], "earlier records unchanged");
    let mut s: Vec<String> = after.iter().map(|r| r.schedule.to_string()).collect();
    s.sort();
    s.dedup();
    assert_eq!(s.len(), n + 3);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("speedup"), "{text}");
}

#[test]
fn bad_databases_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.db");
    std::fs::write(
        &junk,
        b"this is not a database, it is a note to myself\n".repeat(200),
    )
    .unwrap();
    let before = std::fs::read(&junk).unwrap();
    let k = kernel_file(dir.path());
    for args in [
        vec!["db", "stats", "--db", junk.to_str().unwrap()],
        vec![
            "tune",
            k.to_str().unwrap(),
            "--db",
            junk.to_str().unwrap(),
            "--trials",
            "1",
        ],
    ] {
        let out = Command::new(BIN).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("junk.db: not an SQLite database"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(std::fs::read(&junk).unwrap(), before);
    let out = Command::new(BIN)
        .args(["db", "stats", "--db"])
        .arg(dir.path().join("none.db"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn ansor_import_reports_counts() {
    let logs = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/tvm-ansor-logs");
    if !logs.exists() {
        eprintln!("skipped: {} not found", logs.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let out = Command::new(BIN)
        .arg("import-ansor")
        .args(
            [
                "matmul.json",
                "resnet-50-NHWC-B1-llvm.json",
                "resnet-18-NHWC-B1-cuda.json",
            ]
            .map(|f| logs.join(f)),
        )
        .args(["--target", "skylake-avx512", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("parsed 26 records; mapped 23"), "{text}");
    assert!(text.contains("parsed 24 records; mapped 0"), "{text}");
    assert!(text.contains("24 records written"), "{text}");
    let out = Command::new(BIN)
        .args(["db", "stats", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("24 records (0 failed)"));
}

/// Run SQL on a file through Python's sqlite3 (this crate does not link rusqlite itself);
/// false when there is no python3.
fn python_sql(db: &std::path::Path, sql: &str) -> bool {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit(); c.close()",
        ])
        .arg(db)
        .arg(sql)
        .output();
    match out {
        Ok(o) if o.status.success() => true,
        Ok(o) => panic!("python3: {}", String::from_utf8_lossy(&o.stderr)),
        Err(_) => false,
    }
}

fn db_with_records(p: &std::path::Path, n: usize) {
    let db = Db::open(p).unwrap();
    for i in 0..n {
        let mut r = ftuner_tune::Record::new(
            ftuner_ukernel::WorkloadKey {
                class: ftuner_ukernel::KernelClass("matmul f32 test".into()),
                sizes: format!("M=? N={i} K=8"),
                target: "t".into(),
            },
            "M=64".into(),
            "mr=4,nr=16,kc=64".parse().unwrap(),
            Source::Tune,
        );
        r.cost = Some(1e-3);
        r.costs = vec![1e-3];
        db.insert(&r).unwrap();
    }
}

/// Our mark on another schema, an unreadable row, a read-only directory: as the CLI
/// reports them (exit 1 with the file named, or a warning and the other records).
#[test]
fn database_edge_cases_exit_codes_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    // Our application id over other tables.
    let foreign = dir.path().join("wrong-schema.db");
    if !python_sql(
        &foreign,
        "PRAGMA application_id = 1179931972; PRAGMA user_version = 1; CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);",
    ) {
        eprintln!("skipped: no python3");
        return;
    }
    let before = std::fs::read(&foreign).unwrap();
    for cmd in ["stats", "export", "prune"] {
        let out = Command::new(BIN)
            .args(["db", cmd, "--db"])
            .arg(&foreign)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "db {cmd}: {err}");
        assert!(
            err.contains("wrong-schema.db: not a tuning database of this ftuner's schema"),
            "{err}"
        );
        assert!(err.contains("no table 'records'"), "{err}");
    }
    assert_eq!(std::fs::read(&foreign).unwrap(), before);
    // One unreadable row among three.
    let rows = dir.path().join("rows.db");
    db_with_records(&rows, 3);
    assert!(python_sql(
        &rows,
        "UPDATE records SET costs = '[0.001,' WHERE id = 2;"
    ));
    let out = Command::new(BIN)
        .args(["db", "export", "--db"])
        .arg(&rows)
        .output()
        .unwrap();
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        err.contains("warning:") && err.contains("rows.db: record 2 skipped"),
        "{err}"
    );
    // A read-only directory: reading works, writing is exit 1 naming the file. As root,
    // as user nobody (directory permissions do not bind root).
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let db = ro.join("shared.db");
    db_with_records(&db, 4);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = std::fs::read(&db).unwrap();
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false);
    let run = |args: &[&str]| {
        let mut c = Command::new(BIN);
        c.args(args).arg(&db);
        if root {
            use std::os::unix::process::CommandExt;
            c.uid(65534).gid(65534);
        }
        c.output().unwrap()
    };
    let out = run(&["db", "stats", "--db"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("4 records"),
        "{err}"
    );
    let out = run(&["db", "prune", "--db"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("shared.db: cannot write the tuning database"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(
        std::fs::read_dir(&ro).unwrap().count(),
        1,
        "only the database"
    );
}
