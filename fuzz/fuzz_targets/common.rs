//! What the MLIR targets share: reading the input as a module.

/// Parse `data` (UTF-8, else None) with every dialect; the first byte's low bit allows
/// unregistered ops. Returns the context and the module, `after_parse` applied.
pub fn parse(data: &[u8]) -> Option<(ftuner_ir::Context, ftuner_ir::ParsedModule)> {
    let src = std::str::from_utf8(data).ok()?;
    let mut ctx = ftuner_dialects::context();
    ctx.allow_unregistered = data.first().is_some_and(|b| b & 1 == 1);
    let mut m = ftuner_ir::parse_module(&ctx, src, "fuzz.mlir").ok()?;
    ftuner_dialects::after_parse(&mut m.ir, m.top);
    Some((ctx, m))
}

/// Print `m` in the generic form with locations (any module, verified or not).
pub fn print_generic(ctx: &ftuner_ir::Context, m: &ftuner_ir::ParsedModule) -> String {
    let opts = ftuner_ir::PrintOptions {
        generic: true,
        debuginfo: true,
    };
    ftuner_ir::print_module(&m.ir, ctx, m.top, opts)
}
