fn main() {
    let f = std::env::args().nth(1).unwrap();
    let src = std::fs::read_to_string(&f).unwrap();
    let mut ctx = ftuner_ir::Context::new();
    ctx.allow_unregistered = true;
    match ftuner_ir::parse_module(&ctx, &src, &f) {
        Ok(m) => print!(
            "{}",
            ftuner_ir::print_module(
                &m.ir,
                &ctx,
                m.top,
                ftuner_ir::PrintOptions {
                    generic: true,
                    debuginfo: false
                }
            )
        ),
        Err(e) => eprintln!("{e}"),
    }
}
