//! Upstream -> ftuner -> upstream: the module upstream MLIR prints after the round trip is
//! the one it prints for the file itself, for every file of ../shared/inputs, every valid
//! case of the lit Dialect tests, and the upstream conformance corpus.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn clip(s: &str) -> &str {
    &s[..s.len().min(3000)]
}

/// Round trip `src`; `Ok(unmodeled op count)`. The reference is printed from a context of
/// its own: in one context, upstream renames a second module's resources (`name_1`).
fn round_trip(up: &ftuner_mlir::Upstream, src: &str, file: &str) -> Result<usize, String> {
    let reference = ftuner_mlir::Upstream::new();
    let want = reference.print(&reference.parse(src, file)?);
    let mut ctx = ftuner_transforms::context();
    ctx.allow_unregistered = true;
    // Imported through a context of its own too: re-parsing resources into the context
    // that already holds them renames them (`name_1`), the same module under new names.
    let source = ftuner_mlir::Upstream::new();
    let ours = ftuner_mlir::import(&mut ctx, &source, src, file)?;
    let back = ftuner_mlir::export(&ctx, &ours.module.ir, ours.module.top, up)?;
    let got = up.print(&back);
    if got != want {
        return Err(format!(
            "{file}: round trip differs\n--- upstream\n{}\n--- after ftuner\n{}",
            clip(&want),
            clip(&got)
        ));
    }
    // And with locations: ours keep upstream's file:line:col.
    let with_locs = up.print_generic(&back, true);
    if !with_locs.contains(&format!("loc(\"{file}\":")) && src.lines().count() > 1 {
        return Err(format!("{file}: locations lost\n{with_locs}"));
    }
    Ok(ours.unmodeled.iter().map(|x| x.1).sum())
}

fn mlir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            mlir_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "mlir") {
            out.push(p);
        }
    }
}

#[test]
fn shared_inputs_round_trip() {
    let dir = root().join("../shared/inputs");
    let mut files = vec![];
    mlir_files(&dir, &mut files);
    if files.is_empty() {
        eprintln!("skipped: {} not found", dir.display());
        return;
    }
    let up = ftuner_mlir::Upstream::new();
    let mut done = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".torch.mlir") {
            // torch-mlir's own dialect: upstream MLIR does not know it, and says so.
            let mut ctx = ftuner_transforms::context();
            let e = ftuner_mlir::import(&mut ctx, &up, &src, &name)
                .err()
                .unwrap();
            assert!(e.contains("torch"), "{e}");
            assert!(
                e.contains(&format!("{name}:")),
                "error without location: {e}"
            );
            continue;
        }
        // A context per file: upstream renames resources a context has seen (`name_1`).
        let fresh = ftuner_mlir::Upstream::new();
        assert_eq!(
            round_trip(&fresh, &src, &name).unwrap(),
            0,
            "{name}: all ops modeled"
        );
        done += 1;
    }
    assert!(done >= 6, "{done} files");
}

fn cases(src: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for l in src.lines() {
        if l.trim_start().starts_with("// -----") {
            out.push(String::new());
        } else {
            out.last_mut().unwrap().push_str(l);
            out.last_mut().unwrap().push('\n');
        }
    }
    out
}

#[test]
fn lit_dialect_tests_round_trip() {
    let mut files = vec![];
    mlir_files(&root().join("lit-tests/Dialect"), &mut files);
    assert!(!files.is_empty());
    let up = ftuner_mlir::Upstream::new();
    let (mut done, mut rejected) = (0, 0);
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let name = f.strip_prefix(root()).unwrap_or(f).display().to_string();
        for (i, c) in cases(&src).iter().enumerate() {
            if c.contains("expected-error") || c.trim().is_empty() {
                continue;
            }
            let file = format!("{name}#{i}");
            if up.parse(c, &file).is_err() {
                // Our own dialect (ukernel) and cases only our tools take.
                rejected += 1;
                continue;
            }
            round_trip(&up, c, &file).unwrap();
            done += 1;
        }
    }
    eprintln!("{done} lit Dialect cases round-tripped; {rejected} not upstream MLIR");
    assert!(done >= 20, "{done}");
}

#[test]
fn upstream_corpus_round_trips() {
    let dir = root().join("../shared/data/mlir-tests");
    let mut files = vec![];
    mlir_files(&dir, &mut files);
    files.retain(|f| !f.to_string_lossy().ends_with(".generic.mlir"));
    if files.is_empty() {
        eprintln!("skipped: {} not found", dir.display());
        return;
    }
    let up = ftuner_mlir::Upstream::new();
    let (mut done, mut generic_ops, mut skipped) = (0, 0, 0);
    let mut failures = vec![];
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let name = f.strip_prefix(&dir).unwrap_or(f).display().to_string();
        if ftuner_mlir::Upstream::new().parse(&src, &name).is_err() {
            // Needs upstream's `test` dialect, which libMLIR does not register.
            skipped += 1;
            continue;
        }
        match round_trip(&up, &src, &name) {
            Ok(n) => {
                done += 1;
                generic_ops += n;
            }
            Err(e) => failures.push(e),
        }
    }
    eprintln!(
        "{done} corpus cases round-tripped ({generic_ops} ops kept generic), {skipped} use the test dialect, {} failed",
        failures.len()
    );
    // The README: 58 units use the `test` dialect.
    assert!(skipped <= 58, "{skipped} cases upstream rejects");
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
