fn main() {
    let args: Vec<String> = std::env::args().collect();
    std::process::exit(ftuner_run::run_main(args));
}
