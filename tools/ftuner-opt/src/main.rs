fn main() {
    // Modules with upstream ops ftuner does not model are read through upstream MLIR.
    ftuner_opt::serve_import_child(ftuner_mlir::import_for_opt);
    let reg = ftuner_opt::registry_with_upstream(ftuner_mlir::import_for_opt);
    let code = ftuner_opt::opt_main(std::env::args().collect(), reg);
    std::process::exit(code);
}
