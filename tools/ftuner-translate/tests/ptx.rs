//! PTX snapshots: `ftuner-translate FILE --emit=ptx --target=cuda:sm_XX` on the dense and
//! batch-matmul examples (patch-ukernels for that GPU, bufferize, lower-ukernels-to-gpu, then
//! NVPTX). Each snapshot holds the module header, one line per kernel entry (parameters,
//! registers, FMAs, global loads and stores), and the full PTX of the main-tile kernel —
//! the whole text of 8 (dense) or 64 (bmm) kernels would bury the review.

use std::process::Command;

fn ptx(file: &str, sm: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_ftuner-translate"))
        .arg(&path)
        .args(["--emit=ptx", &format!("--target=cuda:{sm}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{file} {sm}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Header, per-entry statistics, then the first entry's full text.
fn summary(ptx: &str) -> String {
    let mut s = String::new();
    for l in ptx.lines() {
        if l.starts_with(".version") || l.starts_with(".target") || l.starts_with(".address_size") {
            s.push_str(l);
            s.push('\n');
        }
    }
    // Entries: from `.visible .entry NAME(` to the closing `}` at column 0.
    let mut entries: Vec<(String, Vec<&str>)> = vec![];
    let mut cur: Option<(String, Vec<&str>)> = None;
    for l in ptx.lines() {
        if let Some(rest) = l.strip_prefix(".visible .entry ") {
            let name = rest.trim_end_matches('(').to_string();
            cur = Some((name, vec![l]));
            continue;
        }
        if let Some((_, body)) = cur.as_mut() {
            body.push(l);
            if l == "}" {
                entries.push(cur.take().unwrap());
            }
        }
    }
    s.push_str(&format!("\n{} kernels\n", entries.len()));
    let count = |body: &[&str], pat: &str| body.iter().filter(|l| l.contains(pat)).count();
    for (name, body) in &entries {
        let regs: Vec<String> = body
            .iter()
            .filter(|l| l.trim_start().starts_with(".reg"))
            .map(|l| l.trim().trim_end_matches(';').to_string())
            .collect();
        s.push_str(&format!(
            "{name}: params={} fma={} ld.global={} st.global={} [{}]\n",
            body.iter()
                .filter(|l| l.trim_start().starts_with(".param"))
                .count(),
            count(body, "fma.rn.f32"),
            count(body, "ld.global"),
            count(body, "st.global"),
            regs.join("; ")
        ));
    }
    if let Some((name, body)) = entries.first() {
        s.push_str(&format!("\n// ---- {name} ----\n"));
        for l in body {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

#[test]
fn ptx_snapshots() {
    for file in ["dense_dynamic.mlir", "bmm_nt_dynamic.mlir"] {
        for sm in ["sm_80", "sm_90"] {
            let text = ptx(file, sm);
            assert!(text.contains(&format!(".target {sm}")));
            assert!(text.contains("fma.rn.f32"), "{file} {sm}: no FMAs");
            insta::assert_snapshot!(format!("ptx_{sm}_{file}"), summary(&text));
        }
    }
}
