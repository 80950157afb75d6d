fn main() {
    let args: Vec<String> = std::env::args().collect();
    let f = &args[1];
    let generic = args.get(2).map(|s| s == "g").unwrap_or(true);
    let src = std::fs::read_to_string(f).unwrap();
    let mut ctx = ftuner_dialects::context();
    ctx.allow_unregistered = args.iter().any(|a| a == "u");
    match ftuner_ir::parse_module(&ctx, &src, f) {
        Ok(mut m) => {
            ftuner_dialects::after_parse(&mut m.ir, m.top);
            for e in ftuner_ir::verify::verify(&ctx, &m.ir, m.top) {
                eprint!("{}", e);
            }
            print!(
                "{}",
                ftuner_ir::print_module(
                    &m.ir,
                    &ctx,
                    m.top,
                    ftuner_ir::PrintOptions {
                        generic,
                        debuginfo: false
                    }
                )
            )
        }
        Err(e) => eprintln!("{e}"),
    }
}
