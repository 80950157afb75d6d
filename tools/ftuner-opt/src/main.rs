fn main() {
    // Modules with upstream ops ftuner does not model are read through upstream MLIR.
    ftuner_opt::set_importer(ftuner_mlir::import_for_opt);
    let code = ftuner_opt::opt_main(std::env::args().collect(), ftuner_opt::default_registry());
    std::process::exit(code);
}
