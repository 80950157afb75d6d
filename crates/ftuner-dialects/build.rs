//! Generates op definitions and typed wrappers from `ir-specs/*.toml`.
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../ir-specs");
    println!("cargo:rerun-if-changed={}", root.display());
    for e in std::fs::read_dir(&root).expect("ir-specs").flatten() {
        println!("cargo:rerun-if-changed={}", e.path().display());
    }
    let (rust, _docs) = match ftuner_odsgen::generate_all(&root) {
        Ok(x) => x,
        Err(e) => panic!("ftuner-odsgen: {e}"),
    };
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("generated_ops.rs");
    std::fs::write(out, rust).expect("write generated ops");
}
