#![no_main]
//! Parse, verify and print arbitrary bytes: must never panic.
use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    if let Some((ctx, m)) = common::parse(data) {
        if ftuner_ir::verify::verify(&ctx, &m.ir, m.top).is_empty() {
            let _ = ftuner_ir::print_module(&m.ir, &ctx, m.top, Default::default());
        }
        let _ = common::print_generic(&ctx, &m);
    }
});
