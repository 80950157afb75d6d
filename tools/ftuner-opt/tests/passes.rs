//! Pass output snapshots (insta) over the examples, and passes never panic on IR that
//! verifies (random mutations of a real export).

use ftuner_ir::{print_module, PrintOptions};
use ftuner_pass::PassManager;

fn run_pipeline(src: &str, pipeline: &str) -> Result<String, String> {
    let ctx = ftuner_transforms::context();
    let mut m =
        ftuner_opt::parse_and_verify(&ctx, src, "input.mlir").map_err(|e| format!("{e:?}"))?;
    let reg = ftuner_opt::default_registry();
    let mut pm = PassManager::from_pipeline(&reg, pipeline)?;
    pm.run(&ctx, &mut m.ir, m.top).map_err(|e| e.message)?;
    Ok(print_module(&m.ir, &ctx, m.top, PrintOptions::default()))
}

#[test]
fn canonicalize_cse_snapshots() {
    insta::glob!("../../../examples", "*.mlir", |path| {
        let src = std::fs::read_to_string(path).unwrap();
        let out = run_pipeline(&src, "builtin.module(canonicalize,cse)").unwrap();
        insta::assert_snapshot!(out);
    });
}

#[test]
fn passes_survive_mutations() {
    let src = include_str!("../../../examples/bmm_nt_dynamic.mlir");
    let mut s: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let alphabet = b"%0123456789,:()<>x?fi ";
    let mut verified = 0;
    for _ in 0..1500 {
        let mut b = src.as_bytes().to_vec();
        let i = (next() as usize) % b.len();
        b[i] = alphabet[(next() as usize) % alphabet.len()];
        let Ok(t) = String::from_utf8(b) else {
            continue;
        };
        if run_pipeline(&t, "builtin.module(func.func(canonicalize,cse),symbol-dce)").is_ok() {
            verified += 1;
        }
    }
    assert!(verified > 0);
}

#[test]
fn patch_ukernels_snapshots() {
    for target in ["zen4", "a100"] {
        insta::glob!("../../../examples", "*.mlir", |path| {
            let src = std::fs::read_to_string(path).unwrap();
            let out = run_pipeline(
                &src,
                &format!("builtin.module(patch-ukernels{{target={target}}})"),
            )
            .unwrap();
            // Patched IR parses back to the same text.
            let again = run_pipeline(&out, "builtin.module(cse)").unwrap();
            let reparsed = run_pipeline(&out, "builtin.module()").unwrap();
            assert_eq!(reparsed, out);
            let _ = again;
            insta::assert_snapshot!(format!("patch_{target}"), out);
        });
    }
}

/// An example through `pipeline`: no patch left, the output parses back to itself, and its
/// snapshot `name`.
fn lowered_snapshot(file: &str, pipeline: &str, name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(file);
    let src = std::fs::read_to_string(path).unwrap();
    let out = run_pipeline(&src, pipeline).unwrap();
    assert!(!out.contains("ukernel.patch"), "{name}");
    // The lowered IR parses back to the same text.
    assert_eq!(run_pipeline(&out, "builtin.module()").unwrap(), out);
    insta::assert_snapshot!(name.to_string(), out);
    out
}

#[test]
fn lower_ukernels_snapshots() {
    for target in ["zen4", "a100"] {
        for file in ["dense_dynamic.mlir", "bmm_nt_dynamic.mlir"] {
            lowered_snapshot(
                file,
                &format!(
                    "builtin.module(patch-ukernels{{target={target}}},lower-ukernels,canonicalize,cse)"
                ),
                &format!("lower_{target}_{file}"),
            );
        }
    }
}

/// GPU targets on buffers: kernels in `gpu.module @ftuner_kernels`, launches over the plan.
#[test]
fn lower_ukernels_gpu_snapshots() {
    for (target, file) in [
        ("a100", "dense_dynamic.mlir"),
        ("h100", "bmm_nt_dynamic.mlir"),
    ] {
        let out = lowered_snapshot(
            file,
            &format!(
                "builtin.module(patch-ukernels{{target={target}}},bufferize,lower-ukernels-to-gpu,canonicalize,cse)"
            ),
            &format!("lower_gpu_{target}_{file}"),
        );
        assert!(out.contains("gpu.launch_func"), "{target} {file}");
    }
}
