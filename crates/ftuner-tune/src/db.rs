//! The tuning database: one SQLite file in WAL mode.
//!
//! Every measurement is one row of `records`, written in its own transaction, so a process
//! killed at any moment (even `kill -9`) loses at most the trial it was measuring: SQLite's
//! write-ahead log makes each committed transaction survive the process, and an
//! uncommitted one vanishes without a trace. Writers from several processes wait for each
//! other (`busy_timeout`) instead of failing.
//!
//! The file is marked as ours with `PRAGMA application_id` (`FTUD`) and a schema version
//! (`PRAGMA user_version`); opening a file that is not SQLite, is damaged, belongs to
//! another application or to a newer ftuner, or carries our mark over other tables or
//! columns, is a [`DbError`] naming the file, never a panic, and the file is left
//! untouched.
//!
//! A database in a read-only directory (where SQLite cannot create the `-wal` and `-shm`
//! files beside it) is read as an immutable file when no writer left a log there; a log
//! left without its `-shm` is a clear error (reading around it would miss records).
//! Opening such a database for writing is a [`DbError::ReadOnly`], before anything runs.
//!
//! A row that does not parse (a damaged or hand-edited schedule, costs, source or number)
//! is skipped with a warning on stderr, once per record ([`Db::skipped`] lists them); the
//! other records stay usable, and `prune` never deletes an unreadable row.
//!
//! Measured times are only comparable with each other on the same target: `best` looks at
//! records measured by ftuner (`source` `tune`, `transfer`, `default`) for one workload key,
//! which includes the target's fingerprint. Imported records (`ansor`) carry another
//! tool's times on another machine; they are schedule candidates, never "best".

mod files;

use files::{check_schema, header, open_immutable, unwritable};
use ftuner_ukernel::{Schedule, WorkloadKey};
use rusqlite::{params, Connection, OpenFlags};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `FTUD` as a big-endian integer.
pub const APPLICATION_ID: i32 = 0x4654_5544;
pub const SCHEMA_VERSION: i32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{path}: not an SQLite database, or it is damaged ({detail})")]
    NotSqlite { path: String, detail: String },
    #[error("{path}: the database is damaged: {detail}")]
    Corrupt { path: String, detail: String },
    #[error("{path}: not an ftuner tuning database (application_id {found:#x}{tables})")]
    Foreign {
        path: String,
        found: i32,
        tables: String,
    },
    #[error("{path}: written by a newer ftuner (schema {found}, this one reads {SCHEMA_VERSION})")]
    TooNew { path: String, found: i32 },
    #[error("{path}: not a tuning database of this ftuner's schema (version {SCHEMA_VERSION}): {detail}")]
    Schema { path: String, detail: String },
    #[error("{path}: cannot write the tuning database: {detail}")]
    ReadOnly { path: String, detail: String },
    #[error("{path}: {detail}")]
    Sql { path: String, detail: String },
}

/// Where a record came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The analytic default, measured.
    Default,
    /// A search-tuner trial.
    Tune,
    /// A schedule transferred from another workload, measured here.
    Transfer,
    /// Imported from a TVM auto-scheduler log (times from TVM, another machine).
    Ansor,
    /// A side-by-side confirmation: the default and the chosen schedule timed in turn for
    /// several rounds at the end of a search or a transfer.
    Confirm,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::Tune => "tune",
            Source::Transfer => "transfer",
            Source::Ansor => "ansor",
            Source::Confirm => "confirm",
        }
    }
    pub fn parse(s: &str) -> Option<Source> {
        Some(match s {
            "default" => Source::Default,
            "tune" => Source::Tune,
            "transfer" => Source::Transfer,
            "ansor" => Source::Ansor,
            "confirm" => Source::Confirm,
            _ => return None,
        })
    }
}

/// One measurement (or one imported record).
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub id: i64,
    pub key: WorkloadKey,
    /// The concrete sizes it was measured at (`M=16,128,512` for a dynamic M).
    pub shape: String,
    pub schedule: Schedule,
    pub source: Source,
    /// Seconds per measured run (for a dynamic kernel: per shape, the median of its runs).
    pub costs: Vec<f64>,
    /// The figure compared between schedules (seconds): the geometric mean of `costs`;
    /// `None` when the trial failed.
    pub cost: Option<f64>,
    pub error: Option<String>,
    /// Search time spent on this trial (compile and measure), seconds.
    pub trial_s: f64,
    pub timestamp: i64,
    pub tool_version: String,
    /// Free text: where an imported record came from.
    pub origin: String,
}

impl Record {
    pub fn new(key: WorkloadKey, shape: String, schedule: Schedule, source: Source) -> Record {
        Record {
            id: 0,
            key,
            shape,
            schedule,
            source,
            costs: vec![],
            cost: None,
            error: None,
            trial_s: 0.0,
            timestamp: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            origin: String::new(),
        }
    }
}

/// Counts for `ftuner-tune db stats`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub records: u64,
    pub failed: u64,
    pub workloads: u64,
    pub classes: u64,
    pub by_source: Vec<(String, u64)>,
}

pub struct Db {
    conn: Connection,
    path: String,
    /// Records that could not be read (id, why), each warned about once.
    skipped: RefCell<BTreeMap<i64, String>>,
}

/// The columns of `records`, in the order [`Db`] reads them.
const COLUMNS: [&str; 14] = [
    "id",
    "class",
    "sizes",
    "target",
    "shape",
    "schedule",
    "source",
    "costs",
    "cost",
    "error",
    "trial_s",
    "timestamp",
    "tool_version",
    "origin",
];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS records (
    id           INTEGER PRIMARY KEY,
    class        TEXT NOT NULL,
    sizes        TEXT NOT NULL,
    target       TEXT NOT NULL,
    shape        TEXT NOT NULL,
    schedule     TEXT NOT NULL,
    source       TEXT NOT NULL,
    costs        TEXT NOT NULL,
    cost         REAL,
    error        TEXT,
    trial_s      REAL NOT NULL,
    timestamp    INTEGER NOT NULL,
    tool_version TEXT NOT NULL,
    origin       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_workload ON records(class, sizes, target);
";

fn sql(path: &str) -> impl Fn(rusqlite::Error) -> DbError + '_ {
    move |e| classify(path, e)
}

fn classify(path: &str, e: rusqlite::Error) -> DbError {
    let detail = e.to_string();
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => DbError::NotSqlite {
            path: path.into(),
            detail,
        },
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => DbError::Corrupt {
            path: path.into(),
            detail,
        },
        _ => DbError::Sql {
            path: path.into(),
            detail,
        },
    }
}

impl Db {
    /// Open (creating if absent) a tuning database for reading and writing.
    pub fn open(path: impl AsRef<Path>) -> Result<Db, DbError> {
        Db::open_with(path.as_ref(), false)
    }

    /// Open an existing database read-only (what `patch-ukernels{tuning-db=...}` does).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Db, DbError> {
        Db::open_with(path.as_ref(), true)
    }

    fn open_with(path: &Path, read_only: bool) -> Result<Db, DbError> {
        let p = path.display().to_string();
        if read_only && !path.exists() {
            return Err(DbError::Sql {
                path: p,
                detail: "no such file".into(),
            });
        }
        if !read_only {
            if let Some(why) = unwritable(path) {
                return Err(DbError::ReadOnly {
                    path: p,
                    detail: why,
                });
            }
        }
        let flags = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
        };
        let conn = Connection::open_with_flags(path, flags).map_err(sql(&p))?;
        if !read_only && conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Err(DbError::ReadOnly {
                path: p,
                detail: "SQLite could only open it read-only".into(),
            });
        }
        let (conn, app) = match header(&conn) {
            Ok(app) => (conn, app),
            Err(e) if read_only => {
                // A WAL database in a directory where SQLite cannot create the `-shm` file.
                let conn = open_immutable(path, &p, e)?;
                let app = header(&conn).map_err(sql(&p))?;
                (conn, app)
            }
            Err(e) => {
                return Err(match unwritable(path) {
                    Some(why) => DbError::ReadOnly {
                        path: p,
                        detail: why,
                    },
                    None => classify(&p, e),
                })
            }
        };
        let version: i32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql(&p))?;
        let tables: Vec<String> = {
            let mut st = conn
                .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .map_err(sql(&p))?;
            let rows = st.query_map([], |r| r.get(0)).map_err(sql(&p))?;
            rows.collect::<Result<_, _>>().map_err(sql(&p))?
        };
        if app != APPLICATION_ID && !(app == 0 && tables.is_empty()) {
            return Err(DbError::Foreign {
                path: p,
                found: app,
                tables: if tables.is_empty() {
                    String::new()
                } else {
                    format!("; tables {}", tables.join(", "))
                },
            });
        }
        if version > SCHEMA_VERSION {
            return Err(DbError::TooNew {
                path: p,
                found: version,
            });
        }
        if app == APPLICATION_ID {
            check_schema(&conn, &p, version, &tables)?;
        }
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(sql(&p))?;
        if check != "ok" {
            return Err(DbError::Corrupt {
                path: p,
                detail: check,
            });
        }
        if !read_only {
            let mode: String = conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
                .map_err(sql(&p))?;
            if mode.to_lowercase() != "wal" {
                return Err(DbError::Sql {
                    path: p,
                    detail: format!("cannot switch to WAL mode (journal_mode is {mode})"),
                });
            }
            // WAL + NORMAL: a committed transaction survives the process being killed; only
            // a power loss may roll back the last ones.
            conn.execute_batch("PRAGMA synchronous = NORMAL")
                .map_err(sql(&p))?;
            if app == 0 {
                conn.execute_batch(&format!(
                    "BEGIN IMMEDIATE; {SCHEMA} PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
                ))
                .map_err(sql(&p))?;
            }
        } else if app == 0 {
            return Err(DbError::Foreign {
                path: p,
                found: 0,
                tables: "; empty file".into(),
            });
        }
        Ok(Db {
            conn,
            path: p,
            skipped: RefCell::new(BTreeMap::new()),
        })
    }

    /// The records skipped so far because they could not be read: (id, why).
    pub fn skipped(&self) -> Vec<(i64, String)> {
        self.skipped
            .borrow()
            .iter()
            .map(|(i, d)| (*i, d.clone()))
            .collect()
    }

    /// Note an unreadable record (a warning on stderr the first time).
    fn skip(&self, id: i64, detail: String) {
        if let std::collections::btree_map::Entry::Vacant(v) = self.skipped.borrow_mut().entry(id) {
            eprintln!(
                "warning: {}: record {id} skipped, it cannot be read: {detail}",
                self.path
            );
            v.insert(detail);
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// Append a record (its own transaction); returns its id.
    pub fn insert(&self, r: &Record) -> Result<i64, DbError> {
        insert_on(&self.conn, r).map_err(sql(&self.path))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Insert many records in one transaction (an import: all or nothing).
    pub fn insert_all(&mut self, rs: &[Record]) -> Result<(), DbError> {
        let p = self.path.clone();
        let tx = self.conn.transaction().map_err(sql(&p))?;
        for r in rs {
            insert_on(&tx, r).map_err(sql(&p))?;
        }
        tx.commit().map_err(sql(&p))
    }

    /// The readable records `where_` selects, oldest first; unreadable ones are skipped
    /// (and warned about once).
    fn query(&self, where_: &str, args: &[&dyn rusqlite::ToSql]) -> Result<Vec<Record>, DbError> {
        let q = format!(
            "SELECT {} FROM records {where_} ORDER BY id",
            COLUMNS.join(", ")
        );
        let mut st = self.conn.prepare(&q).map_err(sql(&self.path))?;
        let rows = st
            .query_map(args, |r| Ok(read_row(r)))
            .map_err(sql(&self.path))?;
        let mut out = vec![];
        for row in rows {
            match row.map_err(sql(&self.path))? {
                Ok(rec) => out.push(rec),
                Err((id, detail)) => self.skip(id, detail),
            }
        }
        Ok(out)
    }

    /// Every record, oldest first.
    pub fn all(&self) -> Result<Vec<Record>, DbError> {
        self.query("", &[])
    }

    /// The records of one workload (any source).
    pub fn workload(&self, key: &WorkloadKey) -> Result<Vec<Record>, DbError> {
        self.query(
            "WHERE class = ?1 AND sizes = ?2 AND target = ?3",
            &[&key.class.0, &key.sizes, &key.target],
        )
    }

    /// The records of a class (any sizes, any target, any source).
    pub fn class(&self, class: &ftuner_ukernel::KernelClass) -> Result<Vec<Record>, DbError> {
        self.query("WHERE class = ?1", &[&class.0])
    }

    /// The records of the classes that differ from `class` only in the fused epilogue:
    /// the same contraction (kind, element type, layout, dynamic dims) with other
    /// elementwise ops after it, `class` itself excluded.
    pub fn related(&self, class: &ftuner_ukernel::KernelClass) -> Result<Vec<Record>, DbError> {
        let Some(core) = class.contraction() else {
            return Ok(vec![]);
        };
        // LIKE narrows the scan (`_` and `%` in the class text only widen it); the exact
        // comparison is the filter.
        let (head, tail) = core;
        let pattern = format!("{head} epilogue=% {tail}");
        Ok(self
            .query("WHERE class LIKE ?1 AND class <> ?2", &[&pattern, &class.0])?
            .into_iter()
            .filter(|r| r.key.class.contraction() == Some(core))
            .collect())
    }

    /// The records of the classes of the same op kind and element type as `class` whose
    /// contraction differs (other indexing maps — strides, dilations, a filter size, a
    /// transposed operand — or other dynamic dims): neither `class` nor its
    /// [`Db::related`] classes.
    pub fn same_kind(&self, class: &ftuner_ukernel::KernelClass) -> Result<Vec<Record>, DbError> {
        let (Some(kind), Some(core)) = (class.kind(), class.contraction()) else {
            return Ok(vec![]);
        };
        let pattern = format!("{kind} maps=%");
        Ok(self
            .query("WHERE class LIKE ?1 AND class <> ?2", &[&pattern, &class.0])?
            .into_iter()
            .filter(|r| r.key.class.kind() == Some(kind) && r.key.class.contraction() != Some(core))
            .collect())
    }

    /// The fastest schedule measured by ftuner for this workload on this target. Side-by-
    /// side confirmations (`confirm` records, the default among them) take precedence over
    /// single measurements: a trial that was fast once by luck and lost to the default when
    /// timed beside it is not chosen. Imported times never count.
    pub fn best(&self, key: &WorkloadKey) -> Result<Option<Record>, DbError> {
        self.best_where(key, &|_| true).map(|r| r.0)
    }

    /// [`Db::best`] among the records `keep` accepts, and how many records that would have
    /// been chosen before it were rejected.
    pub fn best_where(
        &self,
        key: &WorkloadKey,
        keep: &dyn Fn(&Record) -> bool,
    ) -> Result<(Option<Record>, usize), DbError> {
        let rs = self.workload(key)?;
        // Confirmations first, then single measurements; imported times never count.
        let mut ranked: Vec<(u8, f64, &Record)> = rs
            .iter()
            .filter_map(|r| {
                let tier = match r.source {
                    Source::Confirm => 0,
                    Source::Ansor => return None,
                    _ => 1,
                };
                r.cost.map(|c| (tier, c, r))
            })
            .collect();
        ranked.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let skipped = ranked.iter().take_while(|x| !keep(x.2)).count();
        Ok((ranked.get(skipped).map(|x| x.2.clone()), skipped))
    }

    pub fn stats(&self) -> Result<Stats, DbError> {
        let one = |q: &str| -> Result<u64, DbError> {
            self.conn
                .query_row(q, [], |r| r.get::<_, i64>(0))
                .map(|v| v as u64)
                .map_err(sql(&self.path))
        };
        let mut st = self
            .conn
            .prepare("SELECT source, COUNT(*) FROM records GROUP BY source ORDER BY source")
            .map_err(sql(&self.path))?;
        let by_source = st
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .map_err(sql(&self.path))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql(&self.path))?;
        Ok(Stats {
            records: one("SELECT COUNT(*) FROM records")?,
            failed: one("SELECT COUNT(*) FROM records WHERE cost IS NULL")?,
            workloads: one(
                "SELECT COUNT(*) FROM (SELECT DISTINCT class, sizes, target FROM records)",
            )?,
            classes: one("SELECT COUNT(DISTINCT class) FROM records")?,
            by_source,
        })
    }

    /// Keep, per workload and source, the `keep` fastest successful records; drop the rest
    /// (and failed trials). Unreadable records are never deleted. Returns how many rows
    /// were deleted.
    pub fn prune(&self, keep: usize) -> Result<usize, DbError> {
        // (class, sizes, target, source) -> (cost, id) of its successful records.
        type Group = (String, String, String, &'static str);
        let mut groups: BTreeMap<Group, Vec<(f64, i64)>> = BTreeMap::new();
        let mut doomed = vec![];
        for r in self.all()? {
            match r.cost {
                None => doomed.push(r.id),
                Some(c) => groups
                    .entry((r.key.class.0, r.key.sizes, r.key.target, r.source.name()))
                    .or_default()
                    .push((c, r.id)),
            }
        }
        for (_, mut v) in groups {
            v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            doomed.extend(v.iter().skip(keep).map(|x| x.1));
        }
        let p = &self.path;
        let tx = self.conn.unchecked_transaction().map_err(sql(p))?;
        let mut n = 0;
        {
            let mut del = tx
                .prepare("DELETE FROM records WHERE id = ?1")
                .map_err(sql(p))?;
            for id in &doomed {
                n += del.execute(params![id]).map_err(sql(p))?;
            }
        }
        tx.commit().map_err(sql(p))?;
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .map_err(sql(p))?;
        Ok(n)
    }
}

/// One row as a record, or (its id, why it cannot be read).
fn read_row(r: &rusqlite::Row<'_>) -> Result<Record, (i64, String)> {
    let id: i64 = r.get(0).map_err(|e| (-1, format!("id: {e}")))?;
    let bad = |detail: String| (id, detail);
    macro_rules! col {
        ($i:expr, $t:ty) => {
            r.get::<_, $t>($i)
                .map_err(|e| bad(format!("column {}: {e}", COLUMNS[$i])))?
        };
    }
    let class = col!(1, String);
    let sizes = col!(2, String);
    let target = col!(3, String);
    let shape = col!(4, String);
    let sched = col!(5, String);
    let source = col!(6, String);
    let costs = col!(7, String);
    let cost = col!(8, Option<f64>);
    let error = col!(9, Option<String>);
    let trial_s = col!(10, f64);
    let timestamp = col!(11, i64);
    let tool_version = col!(12, String);
    let origin = col!(13, String);
    let schedule: Schedule = sched
        .parse()
        .map_err(|e| bad(format!("schedule '{sched}': {e}")))?;
    let source = Source::parse(&source).ok_or_else(|| bad(format!("unknown source '{source}'")))?;
    let costs: Vec<f64> =
        serde_json::from_str(&costs).map_err(|e| bad(format!("costs '{costs}': {e}")))?;
    Ok(Record {
        id,
        key: WorkloadKey {
            class: ftuner_ukernel::KernelClass(class),
            sizes,
            target,
        },
        shape,
        schedule,
        source,
        costs,
        cost,
        error,
        trial_s,
        timestamp,
        tool_version,
        origin,
    })
}

fn insert_on(conn: &Connection, r: &Record) -> rusqlite::Result<usize> {
    let costs = serde_json::to_string(&r.costs).unwrap_or_else(|_| "[]".into());
    conn.execute(
        "INSERT INTO records (class, sizes, target, shape, schedule, source, costs, cost, error, trial_s, timestamp, tool_version, origin)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            r.key.class.0,
            r.key.sizes,
            r.key.target,
            r.shape,
            r.schedule.to_string(),
            r.source.name(),
            costs,
            r.cost.filter(|c| c.is_finite()),
            r.error,
            r.trial_s,
            r.timestamp,
            r.tool_version,
            r.origin,
        ],
    )
}

/// One record as a JSON object (`ftuner-tune db export`).
pub fn record_json(r: &Record) -> String {
    serde_json::json!({
        "id": r.id,
        "class": r.key.class.0,
        "sizes": r.key.sizes,
        "target": r.key.target,
        "shape": r.shape,
        "schedule": r.schedule.to_string(),
        "source": r.source.name(),
        "costs": r.costs,
        "cost": r.cost,
        "error": r.error,
        "trial_s": r.trial_s,
        "timestamp": r.timestamp,
        "tool_version": r.tool_version,
        "origin": r.origin,
    })
    .to_string()
}

/// The default database file: `$FTUNER_TUNING_DB`, else `ftuner-tuning.db` here.
pub fn default_path() -> PathBuf {
    std::env::var_os("FTUNER_TUNING_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("ftuner-tuning.db"))
}

pub use serde_json::Value as JsonValue;

/// A flat JSON object from (name, value) pairs, in order.
pub fn json_object(fields: &[(&str, JsonValue)]) -> String {
    let mut m = serde_json::Map::new();
    for (k, v) in fields {
        m.insert((*k).to_string(), v.clone());
    }
    JsonValue::Object(m).to_string()
}
