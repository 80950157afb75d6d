//! Where a tuning database may be read and written: the first read of the header, a
//! read-only directory (the file opened immutable when no writer left a log there), who
//! may write it, and the schema our mark promises.

use super::{classify, sql, DbError, COLUMNS};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Read the application id: the first thing that touches the file (a file that is not
/// SQLite fails here, before anything is written to it).
pub(super) fn header(conn: &Connection) -> rusqlite::Result<i32> {
    conn.busy_timeout(Duration::from_secs(30))?;
    conn.query_row("PRAGMA application_id", [], |r| r.get(0))
}

/// `path`'s `-wal` or `-shm` file.
fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Reading failed with `e`. A WAL database whose directory is read-only cannot get the
/// `-shm` file SQLite needs: when no writer left a log (no `-shm`, no or an empty `-wal`),
/// the file alone is the database and is opened immutable. Otherwise the error, clearly.
pub(super) fn open_immutable(
    path: &Path,
    p: &str,
    e: rusqlite::Error,
) -> Result<Connection, DbError> {
    use rusqlite::ErrorCode::{CannotOpen, ReadOnly};
    let shm = side_file(path, "-shm");
    let wal = side_file(path, "-wal");
    let io = matches!(e.sqlite_error_code(), Some(CannotOpen | ReadOnly));
    if !io || shm.exists() {
        return Err(classify(p, e));
    }
    if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
        return Err(DbError::Sql {
            path: p.into(),
            detail: format!(
                "cannot be read here ({e}): its write-ahead log {} holds records not yet in the file, and SQLite cannot create {} beside it to read them{}; open it once where the directory is writable (or copy the file and its -wal elsewhere)",
                wal.display(),
                shm.display(),
                match unwritable_dir(path) {
                    Some(d) => format!(" (the directory {d} is not writable)"),
                    None => String::new(),
                }
            ),
        });
    }
    let uri = format!("file:{}?mode=ro&immutable=1", uri_path(path));
    Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )
    .map_err(sql(p))
}

/// `path` as the path of an SQLite URI (`%`, `?`, `#` and everything outside printable
/// ASCII escaped).
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether this process may write `p` (`access(2)`, which knows about root, read-only
/// mounts and ACLs).
fn may_write(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    extern "C" {
        fn access(path: *const std::ffi::c_char, mode: std::ffi::c_int) -> std::ffi::c_int;
    }
    const W_OK: std::ffi::c_int = 2;
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path; access only reads it.
    unsafe { access(c.as_ptr(), W_OK) == 0 }
}

/// The directory of `path` when this process cannot create files in it.
fn unwritable_dir(path: &Path) -> Option<String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    (!may_write(&dir)).then(|| dir.display().to_string())
}

/// Why this process cannot write the database at `path`, if it cannot: the file is
/// read-only, or its directory is (SQLite writes through `-wal` and `-shm` files beside
/// it, and creates the file itself when it is missing).
pub(super) fn unwritable(path: &Path) -> Option<String> {
    let exists = path.exists();
    if exists && !may_write(path) {
        return Some(
            "the file is read-only for this user; it can still be read (db stats, db export, patch-ukernels{tuning-db=...})".into(),
        );
    }
    let dir = unwritable_dir(path)?;
    Some(if exists {
        format!(
            "its directory {dir} is not writable (read-only), and SQLite writes through {} and {} beside the file; it can still be read (db stats, db export, patch-ukernels{{tuning-db=...}})",
            side_file(path, "-wal").display(),
            side_file(path, "-shm").display()
        )
    } else {
        format!("cannot create it: its directory {dir} is not writable (read-only)")
    })
}

/// Our mark on another schema: `records` missing, or with other columns, or an older
/// version number than any ftuner wrote.
pub(super) fn check_schema(
    conn: &Connection,
    p: &str,
    version: i32,
    tables: &[String],
) -> Result<(), DbError> {
    let bad = |detail: String| DbError::Schema {
        path: p.into(),
        detail,
    };
    if version < 1 {
        return Err(bad(format!("schema version {version}")));
    }
    if !tables.iter().any(|t| t == "records") {
        return Err(bad(format!(
            "it has no table 'records' (tables: {})",
            if tables.is_empty() {
                "none".to_string()
            } else {
                tables.join(", ")
            }
        )));
    }
    let cols: Vec<String> = {
        let mut st = conn
            .prepare("SELECT name FROM pragma_table_info('records')")
            .map_err(sql(p))?;
        let rows = st.query_map([], |r| r.get(0)).map_err(sql(p))?;
        rows.collect::<Result<_, _>>().map_err(sql(p))?
    };
    let missing: Vec<&str> = COLUMNS
        .iter()
        .copied()
        .filter(|c| !cols.iter().any(|x| x == c))
        .collect();
    let extra: Vec<&str> = cols
        .iter()
        .map(|c| c.as_str())
        .filter(|c| !COLUMNS.contains(c))
        .collect();
    let mut why = vec![];
    if !missing.is_empty() {
        why.push(format!(
            "table 'records' lacks column {}",
            missing.join(", ")
        ));
    }
    if !extra.is_empty() {
        why.push(format!(
            "table 'records' has column {} that this version does not know",
            extra.join(", ")
        ));
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(bad(why.join("; ")))
    }
}
