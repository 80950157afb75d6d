//! `downstream-opt`: ftuner-opt's whole interface, plus `--tag-contractions`.
fn main() {
    let code = ftuner_opt::opt_main(std::env::args().collect(), downstream_opt::registry());
    std::process::exit(code);
}
