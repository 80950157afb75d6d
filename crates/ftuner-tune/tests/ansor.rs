//! Import of the shipped TVM auto-scheduler logs: every record parsed, contractions mapped
//! to our classes and schedules, the rest reported with a reason.

use ftuner_tune::ansor;

fn logs() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/tvm-ansor-logs")
}

fn import(name: &str) -> Option<(usize, ansor::ImportReport, Vec<ftuner_tune::Record>)> {
    let p = logs().join(name);
    let text = std::fs::read_to_string(&p).ok()?;
    let recs = ansor::parse_log(&text, name).unwrap();
    let model = ftuner_hw::HardwareModel::load("skylake-avx512").unwrap();
    let (mapped, rep) = ansor::map_records(&recs, name, &model);
    Some((recs.len(), rep, mapped))
}

#[test]
fn shipped_logs_parse_and_map() {
    let Some((n, rep, mapped)) = import("resnet-50-NHWC-B1-llvm.json") else {
        eprintln!("skipped: ../shared/data/tvm-ansor-logs not found");
        return;
    };
    // The README's table: 26 records.
    assert_eq!(n, 26);
    assert_eq!(rep.parsed, 26);
    // Every NHWC convolution maps; softmax and the two poolings do not.
    assert_eq!(rep.mapped, 23, "{}", rep.text());
    assert_eq!(rep.parsed - rep.mapped, 3);
    assert_eq!(mapped.len(), 23);
    for r in &mapped {
        assert!(r.key.class.0.starts_with("conv2d f32"), "{}", r.key.class);
        assert!(r.key.target.starts_with("ansor: llvm"));
        assert!(r.cost.is_some_and(|c| c > 0.0));
        // Legal on the target the import was made for.
        let m = ftuner_hw::HardwareModel::load("skylake-avx512").unwrap();
        r.schedule.check(&m, ftuner_ukernel::DType::F32).unwrap();
    }
    // Line 17: a 3x3, 64 -> 64 convolution on 56x56 (M = 3136, K = 576).
    assert!(mapped
        .iter()
        .any(|r| r.key.sizes == "M=3136 N=64 K=576" && r.origin.contains(":17 ")));

    let (n, rep, mapped) = import("matmul.json").unwrap();
    assert_eq!((n, rep.mapped), (1, 1));
    assert_eq!(mapped[0].key.sizes, "M=1024 N=1024 K=1024");
    assert!(mapped[0].key.class.0.contains("epilogue=add"));
    // SP lengths [2, 1, 4] and [1, 1, 8], reduction [4]: a 4x8 tile, kc 4 in TVM.
    assert!(
        mapped[0].origin.contains("tile 4x8 kc=4"),
        "{}",
        mapped[0].origin
    );

    let (n, rep, _) = import("resnet-18-NHWC-B1-cuda.json").unwrap();
    assert_eq!((n, rep.mapped), (24, 0));
    assert!(rep.text().contains("GPU schedule"));
    let (_, rep, _) = import("sparse_dense.json").unwrap();
    assert_eq!(rep.mapped, 0);
    assert!(rep.text().contains("sparse_dense"));
    let (_, rep, _) = import("conv2d.json").unwrap();
    assert_eq!((rep.parsed, rep.mapped), (1, 0));
}

#[test]
fn malformed_lines_are_errors_with_their_line() {
    for (text, want) in [
        ("# c\n{not json\n", "x.json:2: not JSON"),
        ("{\"r\": []}\n", "x.json:1: no \"i\""),
        ("{\"i\": [[\"not a list\", \"llvm\"], [[], []]], \"r\": [[1.0], 0, 0, 0]}\n", "x.json:1: workload key"),
        ("{\"i\": [[\"[\\\"matmul_add\\\", 4, 4, 4, \\\"float32\\\"]\", \"llvm\"], [[], []]], \"r\": [[\"x\"], 0, 0, 0]}\n", "is not a number"),
    ] {
        let e = ansor::parse_log(text, "x.json").unwrap_err();
        assert!(e.contains(want), "{e}");
    }
    // A well-formed record without splits parses, and is reported, not mapped.
    let ok = "{\"i\": [[\"[\\\"matmul_add\\\", 4, 4, 4, \\\"float32\\\"]\", \"llvm\"], [[], []]], \"r\": [[1.0], 0, 0, 0], \"v\": \"v0.3\"}\n";
    let recs = ansor::parse_log(ok, "x.json").unwrap();
    let m = ftuner_hw::HardwareModel::load("skylake-avx512").unwrap();
    let (mapped, rep) = ansor::map_records(&recs, "x.json", &m);
    assert!(mapped.is_empty());
    assert!(rep.text().contains("no split steps"), "{}", rep.text());
}
