//! ftuner-run end to end: shapes, .npy in and out, --check across lowering pipelines, and
//! clear errors (exit 1, no panic) on bad input.

use ftuner_interp::Tensor;
use ftuner_ir::Type;
use ftuner_run::npy;
use proptest::prelude::*;
use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ftuner-run"))
}

fn example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    d.join(name)
}

fn run(args: &[&str]) -> (i32, String, String) {
    let o = bin().args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn lowered_pipeline_checks_against_the_module_as_read() {
    for (file, shapes) in [
        ("dense_dynamic.mlir", vec!["0=29x768"]),
        ("bmm_nt_dynamic.mlir", vec!["0=192x17x64", "1=192x17x64"]),
    ] {
        for target in ["host", "a100"] {
            let p = format!(
                "--pass-pipeline=builtin.module(patch-ukernels{{target={target}}},lower-ukernels,canonicalize,cse)"
            );
            let mut args = vec![example(file), p, "--check".into(), "--seed=3".into()];
            for s in &shapes {
                args.push(format!("--shape={s}"));
            }
            let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            let (rc, out, err) = run(&a);
            assert_eq!(rc, 0, "{file} {target}: {err}");
            assert!(out.contains("check: ok"), "{out}");
        }
    }
}

#[test]
fn npy_input_and_output_round_trip() {
    // x: 2x768 of known values; weights random (seeded); the output file holds result #0.
    let x = Tensor::from_f64(
        vec![2, 768],
        Type::f32(),
        (0..1536).map(|i| ((i % 7) as f64 - 3.0) * 0.5).collect(),
    );
    let xin = tmp("x.npy");
    std::fs::write(&xin, npy::write(&x).unwrap()).unwrap();
    let out = tmp("y.npy");
    let (rc, stdout, err) = run(&[
        &example("dense_dynamic.mlir"),
        &format!("--input=0={}", xin.display()),
        &format!("--output={}", out.display()),
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(stdout.contains("\"shape\": \"2x2304\""), "{stdout}");
    let y = npy::read(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(y.shape, vec![2, 2304]);
    assert_eq!(y.elem, Type::f32());
    // The same seed gives the same weights, hence the same file.
    let out2 = tmp("y2.npy");
    let (rc, _, _) = run(&[
        &example("dense_dynamic.mlir"),
        &format!("--input=0={}", xin.display()),
        &format!("--output={}", out2.display()),
    ]);
    assert_eq!(rc, 0);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&out2).unwrap());
}

#[test]
fn bad_input_is_a_clear_error() {
    let bad = tmp("bad.mlir");
    std::fs::write(
        &bad,
        "func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {\n  %b = arith.addf %a, %q : tensor<?xf32>\n  return %b : tensor<?xf32>\n}\n",
    )
    .unwrap();
    let junk = tmp("junk.npy");
    std::fs::write(&junk, b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'").unwrap();
    let dense = example("dense_dynamic.mlir");
    let b = bad.display().to_string();
    let j = format!("--input=0={}", junk.display());
    for (args, want) in [
        (
            vec![b.as_str(), "--shape=0=3"],
            "bad.mlir:2:23: error: use of undeclared SSA value name '%q'",
        ),
        (
            vec![dense.as_str()],
            "argument #0 (tensor<?x768xf32>) has dynamic dimensions: give --shape 0=...",
        ),
        (
            vec![dense.as_str(), "--shape=0=3x767"],
            "argument #0: shape 3x767 does not match tensor<?x768xf32>",
        ),
        (
            vec![dense.as_str(), "--shape=0=3x768", "--entry=nope"],
            "no function @nope",
        ),
        (
            vec![dense.as_str(), "--shape=7=3"],
            "the function has 3 arguments",
        ),
        (
            vec![dense.as_str(), "--shape=0=3xq"],
            "'q' in '3xq' is not a dimension",
        ),
        (vec![dense.as_str(), j.as_str()], "truncated header"),
        (
            vec![
                dense.as_str(),
                "--shape=0=3x768",
                "--pass-pipeline=builtin.module(nope)",
            ],
            "--pass-pipeline",
        ),
        (vec!["/nonexistent.mlir"], "cannot read /nonexistent.mlir"),
    ] {
        let (rc, _, err) = run(&args);
        assert_eq!(rc, 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn npy_reads_numpy_headers() {
    // The header numpy 1.x writes for np.arange(6, dtype='<i8').reshape(2, 3).
    let mut f = b"\x93NUMPY\x01\x00".to_vec();
    let mut h = "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }".to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    f.extend_from_slice(&(h.len() as u16).to_le_bytes());
    f.extend_from_slice(h.as_bytes());
    for i in 0..6i64 {
        f.extend_from_slice(&(i - 2).to_le_bytes());
    }
    let t = npy::read(&f).unwrap();
    assert_eq!(t.shape, vec![2, 3]);
    assert_eq!(t.to_f64(), vec![-2.0, -1.0, 0.0, 1.0, 2.0, 3.0]);
    assert_eq!(npy::write(&t).unwrap(), f);
    // Integers exactly past 2^53, and numpy's bool (any non-zero byte is true).
    let big = Tensor::from_i64(vec![2], Type::i64(), vec![i64::MAX, (1 << 53) + 1]);
    assert_eq!(
        npy::read(&npy::write(&big).unwrap()).unwrap().to_i64(),
        big.to_i64()
    );
    let mut b1 = npy::write(&Tensor::from_i64(vec![3], Type::i1(), vec![0, 1, 1])).unwrap();
    let n = b1.len();
    b1[n - 1] = 2;
    assert_eq!(npy::read(&b1).unwrap().to_i64(), vec![0, 1, 1]);
    // Scalars (shape ()) and 1-d shapes with the trailing comma.
    let s = npy::write(&Tensor::from_f64(vec![], Type::f64(), vec![2.5])).unwrap();
    assert_eq!(npy::read(&s).unwrap().to_f64(), vec![2.5]);
    let v = npy::write(&Tensor::from_f64(vec![3], Type::f32(), vec![1.0, 2.0, 3.0])).unwrap();
    assert!(String::from_utf8_lossy(&v).contains("'shape': (3,)"));
    // Fortran order and big-endian data are refused, not misread.
    let fo = replace(&f, b"False", b"True ");
    let e = npy::read(&fo).unwrap_err();
    assert!(e.contains("Fortran"), "{e}");
    let be = replace(&f, b"<i8", b">i8");
    assert!(npy::read(&be).unwrap_err().contains("big-endian"));
}

fn replace(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = hay.windows(from.len()).position(|w| w == from).unwrap();
    let mut v = hay.to_vec();
    v[at..at + from.len()].copy_from_slice(to);
    v
}

proptest! {
    #[test]
    fn npy_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200), cut in 0usize..200) {
        let _ = npy::read(&bytes);
        let good = npy::write(&Tensor::from_f64(vec![2, 2], Type::f32(), vec![1.0, 2.0, 3.0, 4.0])).unwrap();
        let _ = npy::read(&good[..cut.min(good.len())]);
        let mut flipped = good.clone();
        let i = cut % flipped.len();
        flipped[i] = bytes.first().copied().unwrap_or(0);
        let _ = npy::read(&flipped);
    }
}
