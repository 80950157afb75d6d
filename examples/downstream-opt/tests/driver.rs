//! The downstream driver: our pass next to ftuner's, from flags and from pipelines; and the
//! same pass registry inside an upstream MLIR PassManager through ftuner-mlir.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_downstream-opt");

fn example(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn own_pass_in_the_driver() {
    let out = Command::new(BIN)
        .args([
            &example("bmm_nt_dynamic.mlir"),
            "--tag-contractions",
            "--mlir-pass-statistics",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("downstream.macs = \"dynamic\""), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 num-tagged"));
    // In a pipeline with ftuner's own passes, options included.
    let out = Command::new(BIN)
        .arg(example("dense_dynamic.mlir"))
        .arg("--pass-pipeline=builtin.module(tag-contractions,patch-ukernels{target=skylake-avx512})")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ukernel.patch"), "{text}");
    // --help lists it beside ftuner's passes.
    let help = Command::new(BIN).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--tag-contractions") && help.contains("--patch-ukernels"),
        "{help}"
    );
}

#[test]
fn own_pass_errors_are_located() {
    let dir = std::env::temp_dir().join(format!("downstream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("mm.mlir");
    std::fs::write(
        &f,
        "func.func @mm(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {\n  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>\n  return %r : tensor<64x64xf32>\n}\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .arg(&f)
        .arg("--tag-contractions=max-macs=1000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "mm.mlir:2:8: error: contraction of 262144 multiply-adds exceeds max-macs=1000"
        ),
        "{err}"
    );
}

#[test]
fn own_pass_in_an_upstream_pass_manager() {
    use melior::ir::operation::OperationLike;
    let up = ftuner_mlir::Upstream::new();
    let src = std::fs::read_to_string(example("dense_dynamic.mlir")).unwrap();
    let mut m = up.parse(&src, "dense_dynamic.mlir").unwrap();
    let pm = melior::pass::PassManager::new(up.context());
    pm.add_pass(ftuner_mlir::create_pass(
        "builtin.module(tag-contractions)",
        downstream_opt::registry,
        ftuner_transforms::context,
    ));
    pm.run(&mut m).unwrap();
    assert!(m.as_operation().verify());
    assert!(up.print(&m).contains("downstream.macs = \"dynamic\""));
}
