//! Real frontend exports (../shared/inputs and the copies in examples/): both forms parse
//! and verify, the generic form we print from the custom form is byte-identical to what
//! mlir-opt-22 prints, and printing is stable (print, re-parse, print).

use ftuner_ir::{parse_module, print_module, verify::verify, Context, PrintOptions};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn inputs() -> Vec<PathBuf> {
    let mut v = vec![];
    for dir in [root().join("../shared/inputs"), root().join("examples")] {
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                let p = e.path();
                let n = p.to_string_lossy().to_string();
                if n.ends_with(".mlir")
                    && !n.ends_with(".generic.mlir")
                    && !n.ends_with(".torch.mlir")
                {
                    v.push(p);
                }
            }
        }
    }
    v.sort();
    v
}

fn parse_verified(ctx: &Context, src: &str, name: &str) -> ftuner_ir::ParsedModule {
    let mut m = parse_module(ctx, src, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    ftuner_dialects::after_parse(&mut m.ir, m.top);
    let errs = verify(ctx, &m.ir, m.top);
    assert!(
        errs.is_empty(),
        "{name}: {}",
        errs.iter().map(|e| e.to_string()).collect::<String>()
    );
    m
}

const G: PrintOptions = PrintOptions {
    generic: true,
    debuginfo: false,
};
const P: PrintOptions = PrintOptions {
    generic: false,
    debuginfo: false,
};

#[test]
fn real_inputs_match_mlir_opt_generic_form() {
    let ctx = ftuner_dialects::context();
    let files = inputs();
    assert!(!files.is_empty(), "no inputs found");
    for f in files {
        let name = f.to_string_lossy().to_string();
        let src = std::fs::read_to_string(&f).unwrap();
        let m = parse_verified(&ctx, &src, &name);
        let generic = print_module(&m.ir, &ctx, m.top, G);
        let twin = PathBuf::from(name.replace(".mlir", ".generic.mlir"));
        if let Ok(expected) = std::fs::read_to_string(&twin) {
            assert_eq!(
                generic.trim_end(),
                expected.trim_end(),
                "{name}: generic form differs from mlir-opt's"
            );
            // The generic twin parses to the same module.
            let m2 = parse_verified(&ctx, &expected, &twin.to_string_lossy());
            assert_eq!(print_module(&m2.ir, &ctx, m2.top, G), generic);
        }
        // Stable printing in both forms.
        let pretty = print_module(&m.ir, &ctx, m.top, P);
        let m3 = parse_verified(&ctx, &pretty, "pretty");
        assert_eq!(
            print_module(&m3.ir, &ctx, m3.top, P),
            pretty,
            "{name}: custom form not stable"
        );
        assert_eq!(
            print_module(&m3.ir, &ctx, m3.top, G),
            generic,
            "{name}: custom form changes the module"
        );
    }
}

/// The custom-form cases of the upstream conformance corpus: count how many we parse,
/// verify and print exactly as mlir-opt's generic twin. The floor guards regressions.
#[test]
fn conformance_corpus_custom_forms() {
    let dir = root().join("../shared/data/mlir-tests");
    if !dir.exists() {
        eprintln!("corpus not found; skipping");
        return;
    }
    let mut files = vec![];
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.to_string_lossy().ends_with(".mlir")
                && !p.to_string_lossy().ends_with(".generic.mlir")
            {
                out.push(p);
            }
        }
    }
    walk(&dir, &mut files);
    files.sort();
    let mut ctx = ftuner_dialects::context();
    ctx.allow_unregistered = false;
    let (mut exact, mut verified, mut total) = (0, 0, 0);
    let mut by_dir: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        if src.contains("test.") {
            continue;
        }
        total += 1;
        let key = f
            .parent()
            .unwrap()
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let e = by_dir.entry(key).or_default();
        e.1 += 1;
        let Ok(mut m) = parse_module(&ctx, &src, &f.to_string_lossy()) else {
            continue;
        };
        ftuner_dialects::after_parse(&mut m.ir, m.top);
        if !verify(&ctx, &m.ir, m.top).is_empty() {
            continue;
        }
        verified += 1;
        let twin = std::fs::read_to_string(f.to_string_lossy().replace(".mlir", ".generic.mlir"))
            .unwrap_or_default();
        if print_module(&m.ir, &ctx, m.top, G).trim_end() == twin.trim_end() {
            exact += 1;
            e.0 += 1;
        }
    }
    for (k, (a, b)) in &by_dir {
        eprintln!("{k:40} {a:4} / {b:4}");
    }
    eprintln!("custom-form corpus: {exact} exact, {verified} verified, of {total}");
    assert!(exact >= FLOOR, "regression: {exact} < {FLOOR}");
}

/// Raise when the count rises.
const FLOOR: usize = 643;
