#![no_main]
//! Parse, verify, then `canonicalize,cse` (as `ftuner-opt --canonicalize --cse`, the
//! verifier after each pass), verify again and print. Any panic is a crash (libfuzzer-sys
//! aborts on a panic, even inside the pass manager's `catch_unwind`); so is a module that
//! verified before the pipeline and fails it or fails to verify after it.
use libfuzzer_sys::{fuzz_mutator, fuzz_target, Corpus};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

const PIPELINE: &str = "builtin.module(canonicalize,cse)";

fn registry() -> &'static ftuner_pass::PassRegistry {
    static REG: OnceLock<ftuner_pass::PassRegistry> = OnceLock::new();
    REG.get_or_init(|| {
        let mut r = ftuner_pass::PassRegistry::default();
        ftuner_transforms::register_passes(&mut r);
        r
    })
}

mod common;
mod mutate;

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    mutate::mutate(data, size, max_size, seed)
});

/// Inputs run, parsed, verified (so canonicalized); printed every 2^20 inputs when
/// `FTUNER_FUZZ_STATS` is set.
static COUNTS: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

fn count(i: usize) {
    let n = COUNTS[i].fetch_add(1, Relaxed) + 1;
    if i == 0 && n.is_multiple_of(1 << 20) && std::env::var_os("FTUNER_FUZZ_STATS").is_some() {
        let [a, b, c] = COUNTS.each_ref().map(|c| c.load(Relaxed));
        eprintln!("canonicalize: {a} inputs, {b} parsed, {c} verified and canonicalized");
    }
}

// Inputs that do not verify are not kept: the corpus holds modules the passes run on, the
// mutations start from them (the parse target covers the parser's errors).
fuzz_target!(|data: &[u8]| -> Corpus {
    count(0);
    let Some((ctx, mut m)) = common::parse(data) else {
        return Corpus::Reject;
    };
    count(1);
    if !ftuner_ir::verify::verify(&ctx, &m.ir, m.top).is_empty() {
        return Corpus::Reject;
    }
    count(2);
    let mut pm = ftuner_pass::PassManager::from_pipeline(registry(), PIPELINE)
        .expect("canonicalize,cse pipeline");
    pm.verify_each = true;
    if let Err(e) = pm.run(&ctx, &mut m.ir, m.top) {
        panic!("{PIPELINE} failed on a verified module: {e}");
    }
    let errs = ftuner_ir::verify::verify(&ctx, &m.ir, m.top);
    if let Some(d) = errs.first() {
        panic!("module does not verify after {PIPELINE}: {d}");
    }
    let _ = ftuner_ir::print_module(&m.ir, &ctx, m.top, Default::default());
    let _ = common::print_generic(&ctx, &m);
    Corpus::Keep
});
