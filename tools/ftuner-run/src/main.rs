fn main() {
    // Modules in frontend dialects (TOSA) are read, and lowered to linalg, by upstream MLIR.
    ftuner_opt::set_importer(ftuner_mlir::import_for_opt);
    let args: Vec<String> = std::env::args().collect();
    std::process::exit(ftuner_run::run_main(args));
}
