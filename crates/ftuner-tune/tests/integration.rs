//! The tuner's integration tests (Ansor logs, the database, patch plans, tuning) in
//! one binary (each test binary links LLVM statically); run one group with
//! `cargo test --release -p ftuner-tune --test integration MODULE::`.

mod ansor;
mod db;
mod model_kernels;
mod patch_db;
mod tune;
