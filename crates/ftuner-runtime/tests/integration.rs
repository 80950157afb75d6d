//! The runtime's integration tests (JIT, ops of an embedding compiler through their
//! attached models, random shapes against the interpreter, the JIT
//! against the interpreter and the folder op by op, dynamic sizes in and out of range
//! against the interpreter, CUDA, the shared libraries' thread pool) in
//! one binary (each test binary links LLVM statically); run one group with
//! `cargo test --release -p ftuner-runtime --test integration MODULE::`.

/// Random contractions shared with ftuner-interp's tests.
#[path = "../../ftuner-interp/tests/support/random_contractions.rs"]
mod support;

mod aot_threads;
mod differential;
mod embedder_ops;
mod gpu_cuda;
mod jit;
mod jit_random;
mod math_ops;
mod oob_random;
