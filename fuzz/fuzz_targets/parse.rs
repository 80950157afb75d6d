#![no_main]
//! Parse, verify and print arbitrary bytes: must never panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    let mut ctx = ftuner_dialects::context();
    ctx.allow_unregistered = data.first().is_some_and(|b| b & 1 == 1);
    if let Ok(mut m) = ftuner_ir::parse_module(&ctx, src, "fuzz.mlir") {
        ftuner_dialects::after_parse(&mut m.ir, m.top);
        if ftuner_ir::verify::verify(&ctx, &m.ir, m.top).is_empty() {
            let _ = ftuner_ir::print_module(&m.ir, &ctx, m.top, Default::default());
        }
        let _ = ftuner_ir::print_module(&m.ir, &ctx, m.top, ftuner_ir::PrintOptions { generic: true, debuginfo: true });
    }
});
