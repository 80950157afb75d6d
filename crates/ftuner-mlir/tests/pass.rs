//! ftuner's pipeline inside an upstream MLIR PassManager (melior), between upstream passes.

use melior::ir::operation::OperationLike;
use melior::pass::PassManager;

fn registry() -> ftuner_pass::PassRegistry {
    let mut r = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut r);
    ftuner_ukernel::register_passes(&mut r);
    r
}

fn dense() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/dense_dynamic.mlir"),
    )
    .unwrap()
}

#[test]
fn patch_ukernels_runs_in_an_upstream_pass_manager() {
    let up = ftuner_mlir::Upstream::new();
    let mut module = up.parse(&dense(), "dense_dynamic.mlir").unwrap();
    let pm = PassManager::new(up.context());
    pm.add_pass(melior::pass::transform::create_canonicalizer());
    pm.add_pass(ftuner_mlir::create_pass(
        "builtin.module(patch-ukernels{target=skylake-avx512},lower-ukernels,canonicalize,cse)",
        registry,
        ftuner_transforms::context,
    ));
    pm.add_pass(melior::pass::transform::create_cse());
    pm.run(&mut module).unwrap();
    assert!(module.as_operation().verify());
    let text = up.print(&module);
    // The matmul is now loops over 6x64 register tiles written with vector FMAs.
    assert!(!text.contains("linalg.matmul"), "{text}");
    assert!(text.contains("vector.fma"), "{text}");
    assert!(text.contains("scf.for"), "{text}");
    assert!(text.contains("vector<64xf32>"), "{text}");
    // Upstream passes keep working on what we handed back.
    let pm2 = PassManager::new(up.context());
    pm2.add_pass(melior::pass::transform::create_canonicalizer());
    pm2.run(&mut module).unwrap();
}

#[test]
fn a_failing_pipeline_fails_the_pass_manager() {
    let up = ftuner_mlir::Upstream::new();
    let mut module = up.parse(&dense(), "dense_dynamic.mlir").unwrap();
    let before = up.print(&module);
    // Left as ukernel.patch, which upstream MLIR does not know: an error, not a crash.
    let pm = PassManager::new(up.context());
    pm.add_pass(ftuner_mlir::create_pass(
        "builtin.module(patch-ukernels{target=skylake-avx512})",
        registry,
        ftuner_transforms::context,
    ));
    assert!(pm.run(&mut module).is_err());
    // A pipeline that does not parse.
    let pm = PassManager::new(up.context());
    pm.add_pass(ftuner_mlir::create_pass(
        "builtin.module(no-such-pass)",
        registry,
        ftuner_transforms::context,
    ));
    assert!(pm.run(&mut module).is_err());
    assert_eq!(
        up.print(&module),
        before,
        "a failed pass leaves the module as it was"
    );
}
