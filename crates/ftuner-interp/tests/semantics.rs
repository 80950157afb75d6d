//! The interpreter against direct computation, and rewrites against the interpreter:
//! canonicalize+cse and patch-ukernels must not change what a real layer computes.

use ftuner_interp::{run, RtVal, Tensor, Word};
use ftuner_ir::{parse_module, Type};
use std::rc::Rc;

fn rand_tensor(seed: &mut u64, shape: Vec<usize>) -> Tensor {
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0) as f32 as f64
        })
        .collect();
    Tensor::from_f64(shape, Type::f32(), data)
}

fn example(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name),
    )
    .unwrap()
}

#[test]
fn dense_layer_matches_direct_computation() {
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, &example("dense_dynamic.mlir"), "dense.mlir").unwrap();
    let mut seed = 7u64;
    let (rows, k, n) = (3usize, 768usize, 2304usize);
    let x = rand_tensor(&mut seed, vec![rows, k]);
    let w = rand_tensor(&mut seed, vec![n, k]);
    let b = rand_tensor(&mut seed, vec![n]);
    let out = run(
        &ctx,
        &m.ir,
        m.top,
        "dense_dynamic",
        vec![
            RtVal::Tensor(Rc::new(x.clone())),
            RtVal::Tensor(Rc::new(w.clone())),
            RtVal::Tensor(Rc::new(b.clone())),
        ],
    )
    .unwrap();
    let y = out[0].tensor().unwrap();
    assert_eq!(y.shape, vec![rows, n]);
    for i in 0..rows {
        for j in (0..n).step_by(97) {
            let mut acc = 0f32;
            for kk in 0..k {
                acc += x.data[i * k + kk].f() as f32 * w.data[j * k + kk].f() as f32;
            }
            let expect = acc + b.data[j].f() as f32;
            assert!(
                (y.data[i * n + j].f() as f32 - expect).abs() <= 1e-4,
                "({i},{j}): {} vs {expect}",
                y.data[i * n + j].f()
            );
        }
    }
}

#[test]
fn shape_errors_are_reported_not_panics() {
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, &example("dense_dynamic.mlir"), "dense.mlir").unwrap();
    let mut seed = 1u64;
    let bad = run(
        &ctx,
        &m.ir,
        m.top,
        "dense_dynamic",
        vec![
            RtVal::Tensor(Rc::new(rand_tensor(&mut seed, vec![2, 700]))),
            RtVal::Tensor(Rc::new(rand_tensor(&mut seed, vec![2304, 768]))),
            RtVal::Tensor(Rc::new(rand_tensor(&mut seed, vec![2304]))),
        ],
    );
    let e = bad.unwrap_err();
    assert!(
        e.message.contains("argument #0 has shape [2, 700]"),
        "{}",
        e.message
    );
}

fn run_after(pipeline: &str, file: &str, func: &str, args: &[Tensor]) -> Vec<Tensor> {
    let ctx = ftuner_transforms::context();
    let mut m = parse_module(&ctx, &example(file), file).unwrap();
    ftuner_dialects::after_parse(&mut m.ir, m.top);
    if !pipeline.is_empty() {
        let mut reg = ftuner_pass::PassRegistry::default();
        ftuner_transforms::register_passes(&mut reg);
        reg.register(|| Box::new(ftuner_ukernel::PatchUkernelsPass::default()));
        reg.register(|| Box::new(ftuner_ukernel::LowerUkernelsPass::default()));
        let mut pm = ftuner_pass::PassManager::from_pipeline(&reg, pipeline).unwrap();
        pm.run(&ctx, &mut m.ir, m.top).unwrap();
    }
    let out = run(
        &ctx,
        &m.ir,
        m.top,
        func,
        args.iter()
            .map(|t| RtVal::Tensor(Rc::new(t.clone())))
            .collect(),
    )
    .unwrap();
    out.iter().map(|v| v.tensor().unwrap().clone()).collect()
}

#[test]
fn rewrites_preserve_semantics() {
    let mut seed = 42u64;
    // bmm: q, k of 192 x T x 64.
    let t = 5;
    let q = rand_tensor(&mut seed, vec![192, t, 64]);
    let kk = rand_tensor(&mut seed, vec![192, t, 64]);
    let base = run_after(
        "",
        "bmm_nt_dynamic.mlir",
        "bmm_nt_dynamic",
        &[q.clone(), kk.clone()],
    );
    for p in [
        "builtin.module(canonicalize,cse)",
        "builtin.module(patch-ukernels{target=zen4})",
        "builtin.module(patch-ukernels{target=a100},canonicalize,cse)",
    ] {
        let got = run_after(
            p,
            "bmm_nt_dynamic.mlir",
            "bmm_nt_dynamic",
            &[q.clone(), kk.clone()],
        );
        assert_eq!(got, base, "{p}");
    }
}

#[test]
fn bert_layer_runs_and_rewrites_preserve_it() {
    let mut seed = 3u64;
    let t = 3;
    let mut args = vec![rand_tensor(&mut seed, vec![1, t, 768])];
    for shape in bert_weight_shapes() {
        let mut x = rand_tensor(&mut seed, shape);
        x.data
            .iter_mut()
            .for_each(|v| *v = Word::float(v.f() * 0.05));
        args.push(x);
    }
    let base = run_after("", "bert_layer_dynamic.mlir", "bert_layer_dynamic", &args);
    assert_eq!(base[0].shape, vec![1, t, 768]);
    assert!(base[0].to_f64().iter().all(|v| v.is_finite()));
    // LayerNorm output: each row has mean ~0.
    let row: f64 = base[0].to_f64()[..768].iter().sum::<f64>() / 768.0;
    assert!(row.abs() < 0.2, "mean {row}");
    let got = run_after(
        "builtin.module(canonicalize,cse,patch-ukernels{target=zen4})",
        "bert_layer_dynamic.mlir",
        "bert_layer_dynamic",
        &args,
    );
    for (a, b) in got[0].to_f64().iter().zip(&base[0].to_f64()) {
        assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{a} vs {b}");
    }
    // The whole layer lowered: every contraction (dense and batched) in register tiles.
    let lowered = run_after(
        "builtin.module(canonicalize,cse,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)",
        "bert_layer_dynamic.mlir",
        "bert_layer_dynamic",
        &args,
    );
    assert_close(&lowered, &base, "bert lowered");
}

/// Results of a contraction computed with fused multiply-adds: within a few ulps of the
/// reference per reduction step.
fn assert_close(got: &[Tensor], want: &[Tensor], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.shape, w.shape, "{what}");
        for (a, b) in g.to_f64().iter().zip(&w.to_f64()) {
            assert!(
                (a - b).abs() <= 1e-4 * (1.0 + b.abs()),
                "{what}: {a} vs {b}"
            );
        }
    }
}

/// `lower-ukernels` turns each patch into loops over statically shaped tiles: full tiles,
/// then the residue's tiles read from the plan table. The loops must compute what the patch
/// does, for extents that exercise every kind of residue: bit for bit with `linalg.generic`
/// tiles, within rounding with the vector bodies (`vector.fma` rounds once per step).
#[test]
fn lowered_patches_compute_the_same() {
    let mut seed = 11u64;
    let w = rand_tensor(&mut seed, vec![2304, 768]);
    let b = rand_tensor(&mut seed, vec![2304]);
    for rows in [1usize, 13, 17] {
        let x = rand_tensor(&mut seed, vec![rows, 768]);
        let args = [x, w.clone(), b.clone()];
        let base = run_after("", "dense_dynamic.mlir", "dense_dynamic", &args);
        for p in [
            "builtin.module(patch-ukernels{target=zen4},lower-ukernels{vector-bodies=0})",
            "builtin.module(patch-ukernels{target=skylake-avx512},lower-ukernels{vector-bodies=0},canonicalize,cse)",
        ] {
            let got = run_after(p, "dense_dynamic.mlir", "dense_dynamic", &args);
            assert_eq!(got, base, "{p} rows={rows}");
        }
        for p in [
            "builtin.module(patch-ukernels{target=zen4},lower-ukernels)",
            "builtin.module(patch-ukernels{target=skylake-avx512},lower-ukernels,canonicalize,cse)",
        ] {
            let got = run_after(p, "dense_dynamic.mlir", "dense_dynamic", &args);
            assert_close(&got, &base, &format!("{p} rows={rows}"));
        }
    }
    for t in [5usize, 17] {
        let q = rand_tensor(&mut seed, vec![192, t, 64]);
        let k = rand_tensor(&mut seed, vec![192, t, 64]);
        let args = [q, k];
        let base = run_after("", "bmm_nt_dynamic.mlir", "bmm_nt_dynamic", &args);
        let p = "builtin.module(patch-ukernels{target=zen4},lower-ukernels{vector-bodies=0})";
        let got = run_after(p, "bmm_nt_dynamic.mlir", "bmm_nt_dynamic", &args);
        assert_eq!(got, base, "{p} t={t}");
        for p in [
            "builtin.module(patch-ukernels{target=zen4},lower-ukernels)",
            "builtin.module(patch-ukernels{target=a100},lower-ukernels,canonicalize,cse)",
        ] {
            let got = run_after(p, "bmm_nt_dynamic.mlir", "bmm_nt_dynamic", &args);
            assert_close(&got, &base, &format!("{p} t={t}"));
        }
    }
}

/// Vector transfers the interpreter does not model (masks) are errors at the op.
#[test]
fn masked_transfer_is_an_error() {
    let src = r#"func.func @f(%t: tensor<4xf32>, %m: vector<4xi1>) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %p = arith.constant 0.0 : f32
  %v = "vector.transfer_read"(%t, %c0, %p, %m) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 1, 1>, permutation_map = affine_map<(d0) -> (d0)>}> : (tensor<4xf32>, index, f32, vector<4xi1>) -> vector<4xf32>
  return %v : vector<4xf32>
}"#;
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, src, "t.mlir").unwrap();
    let t = Tensor::from_f64(vec![4], Type::f32(), vec![1.0; 4]);
    let mask = Tensor::from_f64(vec![4], Type::i1(), vec![1.0; 4]);
    let e = run(
        &ctx,
        &m.ir,
        m.top,
        "f",
        vec![RtVal::Tensor(Rc::new(t)), RtVal::Tensor(Rc::new(mask))],
    )
    .unwrap_err();
    assert!(
        e.message.contains("masked transfers are not supported"),
        "{}",
        e.message
    );
}

/// The static parameters of the BERT layer (all but the activations), from its signature.
fn bert_weight_shapes() -> Vec<Vec<usize>> {
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, &example("bert_layer_dynamic.mlir"), "b.mlir").unwrap();
    ftuner_interp::param_shapes(&m.ir, m.top, "bert_layer_dynamic").unwrap()[1..]
        .iter()
        .map(|s| s.iter().map(|d| *d as usize).collect())
        .collect()
}

/// `f`'s one result on a tensor argument `t` of four ones: the value or the error message.
fn transfer_on(src: &str, n: usize) -> Result<Vec<f64>, String> {
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, src, "t.mlir").unwrap();
    let t = Tensor::from_f64(vec![n], Type::f32(), vec![1.0; n]);
    run(&ctx, &m.ir, m.top, "f", vec![RtVal::Tensor(Rc::new(t))])
        .map(|r| match &r[0] {
            RtVal::Tensor(t) => t.to_f64(),
            _ => vec![],
        })
        .map_err(|e| e.message)
}

/// A transfer declared in bounds whose lanes leave its source is an error (convert-to-llvm
/// accesses them unchecked: the oracle must not pass an overread by handing back the
/// padding); declared out of bounds, those lanes read the padding.
#[test]
fn transfers_declared_in_bounds_stay_in_bounds() {
    let read = |in_bounds: &str| {
        format!(
            r#"func.func @f(%t: tensor<4xf32>) -> vector<4xf32> {{
  %c1 = arith.constant 1 : index
  %p = arith.constant 7.5 : f32
  %v = "vector.transfer_read"(%t, %c1, %p) <{{in_bounds = [{in_bounds}], operandSegmentSizes = array<i32: 1, 1, 1, 0>, permutation_map = affine_map<(d0) -> (d0)>}}> : (tensor<4xf32>, index, f32) -> vector<4xf32>
  return %v : vector<4xf32>
}}"#
        )
    };
    let e = transfer_on(&read("true"), 4).unwrap_err();
    assert!(
        e.contains("declared in bounds, but a lane's index [4] is outside its source of shape [4]"),
        "{e}"
    );
    assert_eq!(
        transfer_on(&read("false"), 4).unwrap(),
        vec![1.0, 1.0, 1.0, 7.5]
    );
    // A write into a tensor, and into a buffer (the other path of each).
    let write = r#"func.func @f(%t: tensor<4xf32>) -> tensor<4xf32> {
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  %v = vector.broadcast %z : f32 to vector<4xf32>
  %w = "vector.transfer_write"(%v, %t, %c2) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 1, 0>, permutation_map = affine_map<(d0) -> (d0)>}> : (vector<4xf32>, tensor<4xf32>, index) -> tensor<4xf32>
  return %w : tensor<4xf32>
}"#;
    let e = transfer_on(write, 4).unwrap_err();
    assert!(
        e.contains("index [4] is outside its source of shape [4]"),
        "{e}"
    );
    let buffer = r#"func.func @f(%t: tensor<4xf32>) -> vector<2xf32> {
  %m = memref.alloc() : memref<2x3xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %p = arith.constant 0.0 : f32
  %v = "vector.transfer_read"(%m, %c1, %c2, %p) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<2x3xf32>, index, index, f32) -> vector<2xf32>
  "vector.transfer_write"(%v, %m, %c1, %c2) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (vector<2xf32>, memref<2x3xf32>, index, index) -> ()
  return %v : vector<2xf32>
}"#;
    let e = transfer_on(buffer, 4).unwrap_err();
    assert!(
        e.contains("'vector.transfer_read' op")
            && e.contains("index [1, 3] is outside its source of shape [2, 3]"),
        "{e}"
    );
}

/// `f`'s one scalar result on no arguments.
fn scalar_of(src: &str) -> Word {
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, src, "t.mlir").unwrap();
    let r = run(&ctx, &m.ir, m.top, "f", vec![]).unwrap();
    r[0].scalar().unwrap()
}

/// A loop whose next induction value would pass i64's maximum ends (it wrapped, or
/// overflowed, when the bound became exact).
#[test]
fn a_loop_to_the_largest_index_ends() {
    let src = "func.func @f() -> index {
  %lb = arith.constant 9223372036854775806 : index
  %ub = arith.constant 9223372036854775807 : index
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %r = scf.for %i = %lb to %ub step %c2 iter_args(%a = %c0) -> (index) {
    %c1 = arith.constant 1 : index
    %n = arith.addi %a, %c1 : index
    scf.yield %n : index
  }
  return %r : index
}";
    assert_eq!(scalar_of(src), Word::int(1));
}

/// `vector.fma` rounds once, as `math.fma` and the JIT's `llvm.fma`: (1 + e)(1 - e) - 1
/// is -e^2 in f64 (0 computed unfused).
#[test]
fn vector_fma_is_fused() {
    let src = "func.func @f() -> vector<2xf64> {
  %a = arith.constant dense<1.0000000000000002> : vector<2xf64>
  %b = arith.constant dense<0.9999999999999998> : vector<2xf64>
  %c = arith.constant dense<-1.0> : vector<2xf64>
  %r = vector.fma %a, %b, %c : vector<2xf64>
  return %r : vector<2xf64>
}";
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, src, "t.mlir").unwrap();
    let r = run(&ctx, &m.ir, m.top, "f", vec![]).unwrap();
    let e = 2f64.powi(-52);
    assert_eq!(r[0].tensor().unwrap().to_f64(), vec![-e * e; 2]);
}
