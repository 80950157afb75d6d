//! The melior bridge's integration tests (the pass inside an MLIR PassManager, round trips) in
//! one binary (each test binary links LLVM statically); run one group with
//! `cargo test --release -p ftuner-mlir --test integration MODULE::`.

mod pass;
mod roundtrip;
