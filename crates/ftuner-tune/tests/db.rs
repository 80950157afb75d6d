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

/// Transfer's wider circles: `related` is the same contraction with another epilogue,
/// `same_kind` the same op kind with another layout or other dynamic dims; neither holds
/// the class itself, and no other op kind is in either.
#[test]
fn related_and_same_kind_classes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("k.db")).unwrap();
    let classes = [
        "matmul f32 maps=[A] epilogue=none dynamic=[M]",
        "matmul f32 maps=[A] epilogue=arith.maximumf dynamic=[M]",
        "matmul f32 maps=[A] epilogue=none dynamic=[]",
        "matmul f32 maps=[At] epilogue=arith.addf dynamic=[M]",
        "matmul f64 maps=[A] epilogue=none dynamic=[M]",
        "conv2d f32 maps=[A] epilogue=none dynamic=[M]",
    ];
    for c in classes {
        let k = WorkloadKey {
            class: KernelClass(c.into()),
            sizes: "M=? N=64 K=32".into(),
            target: "t".into(),
        };
        db.insert(&Record::new(k, "M=8".into(), sched(6, 64), Source::Tune))
            .unwrap();
    }
    let names = |rs: Vec<Record>| -> Vec<String> {
        let mut v: Vec<String> = rs.into_iter().map(|r| r.key.class.0).collect();
        v.sort();
        v
    };
    let me = KernelClass(classes[0].into());
    assert_eq!(
        names(db.related(&me).unwrap()),
        vec![classes[1].to_string()]
    );
    assert_eq!(
        names(db.same_kind(&me).unwrap()),
        vec![classes[2].to_string(), classes[3].to_string()]
    );
    assert_eq!(me.kind(), Some("matmul f32"));
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

/// A file with our application id and schema version whose tables are not ours: a clear
/// error naming the file (not a raw SQL error at the first query), the file untouched.
#[test]
fn our_id_with_another_schema_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let head = format!(
        "PRAGMA application_id = {APP}; PRAGMA user_version = 1;",
        APP = ftuner_tune::db::APPLICATION_ID
    );
    let cases = [
        // Other tables only.
        ("other-tables.db", "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);", "records"),
        // Our table, other columns.
        (
            "other-columns.db",
            "CREATE TABLE records (id INTEGER PRIMARY KEY, class TEXT, payload BLOB);",
            "sizes",
        ),
        // Our columns and one more.
        (
            "extra-column.db",
            "CREATE TABLE records (id INTEGER PRIMARY KEY, class TEXT NOT NULL, sizes TEXT NOT NULL, target TEXT NOT NULL, shape TEXT NOT NULL, schedule TEXT NOT NULL, source TEXT NOT NULL, costs TEXT NOT NULL, cost REAL, error TEXT, trial_s REAL NOT NULL, timestamp INTEGER NOT NULL, tool_version TEXT NOT NULL, origin TEXT NOT NULL, owner TEXT NOT NULL);",
            "owner",
        ),
    ];
    for (name, ddl, mentions) in cases {
        let p = dir.path().join(name);
        run_sql(&p, &format!("{head} {ddl}"));
        let before = std::fs::read(&p).unwrap();
        let opened = [
            Db::open(&p).map(|_| ()),
            Db::open_read_only(&p).map(|_| ()),
            // What a reader does next, had the open succeeded.
            Db::open_read_only(&p).and_then(|d| d.all().map(|_| ())),
        ];
        for r in opened {
            let e = r.expect_err(name);
            let msg = e.to_string();
            assert!(msg.contains(name), "{msg}");
            assert!(msg.contains("schema"), "{msg}");
            assert!(msg.contains(mentions), "{msg}");
        }
        // Nothing written: no WAL switch, no table created.
        assert_untouched(&p, &before);
    }
}

/// Set one column of one row with raw SQL (what a damaged or hand-edited row looks like).
fn set_raw(p: &std::path::Path, id: i64, col: &str, value: &str) {
    run_sql(
        p,
        &format!("UPDATE records SET {col} = {value} WHERE id = {id};"),
    );
}

fn raw_count(p: &std::path::Path) -> i64 {
    let c = rusqlite::Connection::open_with_flags(p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    c.query_row("SELECT COUNT(*) FROM records", [], |r| r.get(0))
        .unwrap()
}

/// Rows that do not parse (a schedule, the costs' JSON, the source, a number stored as
/// text) are skipped, each with a warning; the other records stay usable, `best` takes
/// the best readable one, and `prune` deletes none of them.
#[test]
fn bad_records_are_skipped_and_the_rest_stay_usable() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad-rows.db");
    {
        let db = Db::open(&p).unwrap();
        let k = "M=? N=768 K=768";
        db.insert(&rec(k, sched(14, 144), Source::Default, Some(2e-3)))
            .unwrap(); // 1
        db.insert(&rec(k, sched(8, 256), Source::Tune, Some(1.5e-3)))
            .unwrap(); // 2: the best readable
        for _ in 0..4 {
            // 3..=6: faster, then damaged below
            db.insert(&rec(k, sched(6, 64), Source::Tune, Some(1e-4)))
                .unwrap();
        }
        db.insert(&rec(k, sched(4, 32), Source::Tune, Some(1.8e-3)))
            .unwrap(); // 7
    }
    set_raw(&p, 3, "schedule", "'mr=banana'");
    set_raw(&p, 4, "costs", "'[0.0001, '");
    set_raw(&p, 5, "source", "'alien'");
    set_raw(&p, 6, "trial_s", "'not a number'");
    let db = Db::open_read_only(&p).unwrap();
    let all = db.all().expect("the readable records");
    assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), vec![1, 2, 7]);
    let best = db.best(&key("M=? N=768 K=768")).unwrap().unwrap();
    assert_eq!(best.id, 2);
    assert_eq!(db.class(&key("x").class).unwrap().len(), 3);
    assert_eq!(db.stats().unwrap().records, 7);
    let skipped = db.skipped();
    assert_eq!(
        skipped.iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![3, 4, 5, 6]
    );
    assert!(skipped[0].1.contains("mr=banana"), "{skipped:?}");
    assert!(skipped[1].1.contains("costs"), "{skipped:?}");
    assert!(skipped[2].1.contains("alien"), "{skipped:?}");
    assert!(skipped[3].1.contains("trial_s"), "{skipped:?}");
    drop(db);
    // Writing still works, and pruning keeps the best readable record per source and
    // every unreadable one (nothing is lost that a repair could bring back).
    let db = Db::open(&p).unwrap();
    db.insert(&rec("M=? N=1 K=1", sched(1, 8), Source::Tune, Some(1.0)))
        .unwrap();
    db.prune(1).unwrap();
    let ids: Vec<i64> = db.all().unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![1, 2, 8], "the best of each source and workload");
    assert_eq!(raw_count(&p), 7, "the four unreadable rows are kept");
}

/// A database cut short after its first pages (a copy that stopped half-way): a clear
/// error naming the file, the file untouched.
#[test]
fn a_truncated_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.db");
    {
        let db = Db::open(&p).unwrap();
        for i in 0..400 {
            db.insert(&rec(
                &format!("M=? N={i} K=768"),
                sched(14, 144),
                Source::Tune,
                Some(1e-3),
            ))
            .unwrap();
        }
        db.prune(1000).unwrap(); // checkpoint: everything in the main file
    }
    let full = std::fs::read(&p).unwrap();
    assert!(full.len() >= 8 * 4096, "{}", full.len());
    for cut in [3 * 4096, full.len() / 2 + 1000] {
        let bytes = full[..cut].to_vec();
        std::fs::write(&p, &bytes).unwrap();
        for r in [
            Db::open(&p).and_then(|d| d.all().map(|_| ())),
            Db::open_read_only(&p).and_then(|d| d.all().map(|_| ())),
        ] {
            let e = r.expect_err("a truncated file");
            assert!(e.to_string().contains("cut.db"), "{e}");
            assert!(
                matches!(e, DbError::Corrupt { .. } | DbError::NotSqlite { .. }),
                "{e}"
            );
        }
        assert_untouched(&p, &bytes);
        // SQLite may leave an empty log beside a file it could not read; nothing in it.
        for side in ["cut.db-wal", "cut.db-journal"] {
            let f = dir.path().join(side);
            assert!(
                !f.exists() || std::fs::metadata(&f).unwrap().len() == 0,
                "{side}"
            );
        }
    }
}

/// The directory of a database is read-only (a shared, mounted or installed database):
/// reading works — also with a write-ahead log left by a killed writer —, writing is a
/// clear error naming the file, nothing panics and no byte changes. As root, directory
/// permissions bind nobody: the checks then run in a child process as user `nobody`.
#[test]
fn read_only_directory() {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean.db");
    {
        let db = Db::open(&clean).unwrap();
        for i in 0..20 {
            db.insert(&rec(
                &format!("M=? N={i} K=768"),
                sched(14, 144),
                Source::Tune,
                Some(1e-3 + i as f64 * 1e-5),
            ))
            .unwrap();
        }
    }
    assert!(!dir.path().join("clean.db-wal").exists());
    // A database whose writer was killed: its -wal and -shm hold committed records.
    let killed = dir.path().join("killed.db");
    drop(Db::open(&killed).unwrap());
    let mut child = spawn_writer(&killed, "k", None);
    let stdout = child.stdout.take().unwrap();
    for line in BufReader::new(stdout).lines() {
        if line
            .unwrap()
            .strip_prefix("committed ")
            .and_then(|i| i.parse::<i64>().ok())
            >= Some(30)
        {
            break;
        }
    }
    child.kill().unwrap();
    let _ = child.wait();
    let killed_n = {
        let c = rusqlite::Connection::open(&killed).unwrap();
        // Leave the WAL as the killed writer left it (no checkpoint when this closes).
        c.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .unwrap();
        c.query_row("SELECT COUNT(*) FROM records", [], |r| r.get::<_, i64>(0))
            .unwrap()
    };
    assert!(killed_n >= 30);
    assert!(dir.path().join("killed.db-wal").exists());
    assert!(dir.path().join("killed.db-shm").exists());
    // The same log without its -shm: SQLite cannot read it in a read-only directory.
    std::fs::copy(&killed, dir.path().join("walonly.db")).unwrap();
    std::fs::copy(
        dir.path().join("killed.db-wal"),
        dir.path().join("walonly.db-wal"),
    )
    .unwrap();
    let snapshot = |p: &std::path::Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    use std::os::unix::fs::PermissionsExt;
    let root = unsafe { libc_geteuid() } == 0;
    for f in [
        "clean.db",
        "killed.db",
        "killed.db-wal",
        "killed.db-shm",
        "walonly.db",
        "walonly.db-wal",
    ] {
        let p = dir.path().join(f);
        if p.exists() {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = snapshot(dir.path());
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        "db::read_only_child",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("FTUNER_TEST_RO_DIR", dir.path())
    .env("FTUNER_TEST_RO_KILLED_N", killed_n.to_string());
    if root {
        use std::os::unix::process::CommandExt;
        c.uid(65534).gid(65534);
    }
    let out = c.output().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("read-only checks passed"), "{text}");
    assert_eq!(
        snapshot(dir.path()),
        before,
        "a file in the directory changed"
    );
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

/// Child mode of `read_only_directory`.
#[test]
fn read_only_child() {
    let Ok(dir) = std::env::var("FTUNER_TEST_RO_DIR") else {
        return;
    };
    let dir = std::path::Path::new(&dir);
    let killed_n: usize = std::env::var("FTUNER_TEST_RO_KILLED_N")
        .unwrap()
        .parse()
        .unwrap();
    // The directory really is read-only for this process.
    assert!(std::fs::write(dir.join("probe"), b"x").is_err());
    let clean = dir.join("clean.db");
    let db = Db::open_read_only(&clean).unwrap_or_else(|e| panic!("reading: {e}"));
    assert_eq!(db.all().unwrap().len(), 20);
    assert_eq!(db.stats().unwrap().records, 20);
    assert_eq!(db.best(&key("M=? N=3 K=768")).unwrap().unwrap().id, 4);
    drop(db);
    let db = Db::open_read_only(dir.join("killed.db")).unwrap_or_else(|e| panic!("reading: {e}"));
    assert_eq!(
        db.all().unwrap().len(),
        killed_n,
        "records in the WAL are read"
    );
    drop(db);
    // Reading the file alone would miss the log's records: an error that says so.
    let walonly = dir.join("walonly.db");
    let e = Db::open_read_only(&walonly)
        .err()
        .expect("a log without -shm");
    let msg = e.to_string();
    assert!(msg.contains("walonly.db-wal"), "{msg}");
    assert!(msg.contains("not writable"), "{msg}");
    for p in [clean.clone(), dir.join("killed.db"), dir.join("new.db")] {
        let e = Db::open(&p)
            .err()
            .unwrap_or_else(|| panic!("{} opened for writing", p.display()));
        let msg = e.to_string();
        assert!(msg.contains(&p.display().to_string()), "{msg}");
        assert!(
            msg.contains("read-only") || msg.contains("not writable"),
            "{msg}"
        );
    }
    println!("read-only checks passed");
}
