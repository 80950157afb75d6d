fn main() {
    let code = ftuner_opt::opt_main(std::env::args().collect(), ftuner_opt::default_registry());
    std::process::exit(code);
}
