fn main() {
    // Modules in frontend dialects (TOSA) are read, and lowered to linalg, by upstream MLIR.
    ftuner_opt::serve_import_child(ftuner_mlir::import_for_opt);
    let reg = ftuner_opt::registry_with_upstream(ftuner_mlir::import_for_opt);
    let args: Vec<String> = std::env::args().collect();
    std::process::exit(ftuner_run::run_main(args, reg));
}
