//! # ftuner-tune
//!
//! Measured tuning on top of the analytic uKernels, and the reuse of tuned schedules
//! across models (Transfer-Tuning: Gibson and Cano, "Transfer-Tuning: Reusing
//! Auto-Schedules for Efficient Tensor Program Code Generation", PACT 2022).
//!
//! * [`Schedule`](ftuner_ukernel::Schedule), [`KernelClass`](ftuner_ukernel::KernelClass)
//!   and [`WorkloadKey`](ftuner_ukernel::WorkloadKey) live in `ftuner-ukernel`, whose
//!   `patch-ukernels` pass applies them;
//! * [`db`]: the SQLite tuning database (WAL; crash- and concurrency-safe);
//! * [`kernels`]: a model's contractions, each as a module of its own;
//! * [`ansor`]: import of TVM auto-scheduler logs;
//! * with the `measure` feature (default): [`measure`] (compile a kernel with a schedule
//!   through the JIT and time it), [`search`] (the search tuner, the baseline) and
//!   [`transfer`] (transfer-tuning).
//!
//! [`register`] lets `patch-ukernels{tuning-db=FILE}` read a database.

pub mod ansor;
pub mod db;
pub mod kernels;
#[cfg(feature = "measure")]
pub mod measure;
#[cfg(feature = "measure")]
pub mod search;
#[cfg(feature = "measure")]
pub mod transfer;

pub use db::{Db, DbError, Record, Source};

use ftuner_ukernel::{Schedule, ScheduleSource, WorkloadKey};
use std::sync::{Arc, Mutex};

/// A database as `patch-ukernels`' source of schedules.
pub struct DbSource(Mutex<Db>);

impl ScheduleSource for DbSource {
    fn best(
        &self,
        key: &WorkloadKey,
        valid: &dyn Fn(&Schedule) -> bool,
    ) -> Result<(Option<Schedule>, usize), String> {
        let db = self
            .0
            .lock()
            .map_err(|_| "tuning database lock poisoned".to_string())?;
        db.best_where(key, &|r| valid(&r.schedule))
            .map(|(r, skipped)| (r.map(|r| r.schedule), skipped))
            .map_err(|e| e.to_string())
    }
}

fn open_source(path: &str) -> Result<Arc<dyn ScheduleSource>, String> {
    let db = Db::open_read_only(path).map_err(|e| e.to_string())?;
    Ok(Arc::new(DbSource(Mutex::new(db))))
}

/// Let `patch-ukernels{tuning-db=FILE}` of the pass managers built from `reg` open
/// tuning databases.
pub fn register(reg: &mut ftuner_pass::PassRegistry) {
    reg.add_extension(ftuner_ukernel::schedule::TuningDbOpener(open_source));
}
