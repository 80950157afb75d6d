//! One target vocabulary: every hardware model's name (`targets/*.toml`) is a target
//! `ftuner-translate` compiles for, or refuses with an error naming why — never an abort
//! inside LLVM (`--target=zen4` was "64-bit code requested on a subtarget that doesn't
//! support it", SIGABRT). Unknown names are refused the same way.

use std::process::Command;

fn translate(target: &str, emit: &str) -> std::process::Output {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/dense_dynamic.mlir");
    Command::new(env!("CARGO_BIN_EXE_ftuner-translate"))
        .arg(&path)
        .args([&format!("--emit={emit}"), &format!("--target={target}")])
        .output()
        .unwrap()
}

#[test]
fn every_hardware_model_name_compiles_or_is_refused_cleanly() {
    let names: Vec<&str> = ftuner_hw::BUILTIN_TARGETS.iter().map(|(n, _)| *n).collect();
    let mapped: Vec<&str> = ftuner_codegen::HW_MODEL_TARGETS
        .iter()
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(
        names, mapped,
        "ftuner_codegen::HW_MODEL_TARGETS lists every hardware model"
    );
    for (name, llvm) in ftuner_codegen::HW_MODEL_TARGETS {
        let emit = if llvm.starts_with("cuda:") {
            "ptx"
        } else {
            "asm"
        };
        let out = translate(name, emit);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("LLVM ERROR"), "{name}: {err}");
        assert!(!err.contains("not a recognized processor"), "{name}: {err}");
        if llvm.starts_with("error:") {
            assert_eq!(out.status.code(), Some(1), "{name}: {err}");
            assert!(err.contains(&format!("target '{name}'")), "{name}: {err}");
        } else {
            assert!(out.status.success(), "{name}: {err}");
            let text = String::from_utf8_lossy(&out.stdout);
            let fma = if emit == "ptx" {
                "fma.rn.f32"
            } else {
                "vfmadd"
            };
            assert!(text.contains(fma), "{name}: no {fma} in the code");
        }
    }
}

#[test]
fn unknown_and_32_bit_targets_are_errors() {
    for t in ["zen9", "i686", "pentium4", "cuda:sm_20", "x86:"] {
        let out = translate(t, "asm");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{t}: {err}");
        assert!(!err.contains("LLVM ERROR"), "{t}: {err}");
    }
}
