//! `bufferize` against the interpreter: the buffer program must compute exactly what the
//! tensor program computes (bit for bit: bufferization changes no arithmetic), on real
//! lowered layers and on small programs built to catch wrong in-place decisions. The
//! interpreter checks every buffer access for bounds and use after `memref.dealloc`, so
//! an early free or a clobbered input fails here too.

use ftuner_interp::{run, RtVal, Tensor, Word};
use ftuner_ir::{parse_module, Type};
use std::rc::Rc;

fn rand_tensor(seed: &mut u64, shape: Vec<usize>, elem: Type) -> Tensor {
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            let u = (*seed >> 11) as f64 / (1u64 << 53) as f64;
            if elem.is_float() {
                (u * 2.0 - 1.0) as f32 as f64
            } else {
                (u * 8.0).floor()
            }
        })
        .collect();
    Tensor::from_f64(shape, elem, data)
}

fn registry() -> ftuner_pass::PassRegistry {
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    reg.register(|| Box::new(ftuner_ukernel::PatchUkernelsPass::default()));
    reg.register(|| Box::new(ftuner_ukernel::LowerUkernelsPass::default()));
    reg
}

/// Run `func` of `src` after `pipeline`; also returns the printed IR.
fn run_src(src: &str, pipeline: &str, func: &str, args: &[Tensor]) -> (Vec<Tensor>, String) {
    let ctx = ftuner_transforms::context();
    let mut m = parse_module(&ctx, src, "t.mlir").unwrap();
    ftuner_dialects::after_parse(&mut m.ir, m.top);
    if !pipeline.is_empty() {
        let reg = registry();
        let mut pm = ftuner_pass::PassManager::from_pipeline(&reg, pipeline).unwrap();
        pm.run(&ctx, &mut m.ir, m.top)
            .unwrap_or_else(|_| panic!("{pipeline} failed"));
        let errs = ftuner_ir::verify::verify(&ctx, &m.ir, m.top);
        assert!(errs.is_empty(), "{pipeline}: {errs:?}");
    }
    let text = ftuner_ir::print_module(&m.ir, &ctx, m.top, Default::default());
    let out = run(
        &ctx,
        &m.ir,
        m.top,
        func,
        args.iter()
            .map(|t| RtVal::Tensor(Rc::new(t.clone())))
            .collect(),
    )
    .unwrap_or_else(|e| panic!("{pipeline}: {e}\n{text}"));
    // Scalars compare as 0-d tensors (the functions here return floats).
    let out = out
        .iter()
        .map(|v| match v.scalar() {
            Some(x) => Tensor::new(vec![], Type::f64(), vec![x]),
            None => v.tensor().unwrap().clone(),
        })
        .collect();
    (out, text)
}

fn example(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name),
    )
    .unwrap()
}

/// Tensor program vs its bufferized form, same arithmetic; returns the buffer IR.
fn same(src: &str, prefix: &str, func: &str, args: &[Tensor]) -> String {
    same_after(src, prefix, "bufferize", func, args)
}

/// `prefix` then `suffix` (on buffers) computes bit for bit what `prefix` computes.
fn same_after(src: &str, prefix: &str, suffix: &str, func: &str, args: &[Tensor]) -> String {
    let tensor = if prefix.is_empty() {
        "".to_string()
    } else {
        format!("builtin.module({prefix})")
    };
    let buffer = if prefix.is_empty() {
        format!("builtin.module({suffix})")
    } else {
        format!("builtin.module({prefix},{suffix})")
    };
    let (want, _) = run_src(src, &tensor, func, args);
    let (got, text) = run_src(src, &buffer, func, args);
    assert_eq!(got, want, "{buffer}\n{text}");
    // Nothing is left on tensors but constants' values.
    for line in text.lines() {
        if line.contains("tensor<") {
            assert!(
                line.contains("memref.global") || line.contains("dense<"),
                "tensor left after bufferize: {line}"
            );
        }
    }
    text
}

const LOWER: &str = "canonicalize,cse,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse";

/// No structured op is left (the run-time checks' messages name them; that is fine).
fn assert_no_linalg(text: &str) {
    assert!(
        !text
            .lines()
            .any(|l| l.contains("linalg.") && !l.contains("cf.assert")),
        "{text}"
    );
}

#[test]
fn lowered_layers_bufferize_exactly() {
    let mut seed = 5u64;
    let f32t = Type::f32();
    let w = rand_tensor(&mut seed, vec![2304, 768], f32t);
    let b = rand_tensor(&mut seed, vec![2304], f32t);
    for rows in [1usize, 15, 37] {
        let x = rand_tensor(&mut seed, vec![rows, 768], f32t);
        let text = same(
            &example("dense_dynamic.mlir"),
            LOWER,
            "dense_dynamic",
            &[x, w.clone(), b.clone()],
        );
        // The accumulator is updated in place: no copies in the loop nest.
        assert!(!text.contains("memref.copy"), "{text}");
    }
    for t in [3usize, 17] {
        let q = rand_tensor(&mut seed, vec![192, t, 64], f32t);
        let k = rand_tensor(&mut seed, vec![192, t, 64], f32t);
        let text = same(
            &example("bmm_nt_dynamic.mlir"),
            LOWER,
            "bmm_nt_dynamic",
            &[q, k],
        );
        assert!(!text.contains("memref.copy"), "{text}");
    }
}

#[test]
fn bert_layer_bufferizes_exactly() {
    let mut seed = 9u64;
    let f32t = Type::f32();
    let mut args = vec![rand_tensor(&mut seed, vec![1, 5, 768], f32t)];
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, &example("bert_layer_dynamic.mlir"), "b.mlir").unwrap();
    let shapes = ftuner_interp::param_shapes(&m.ir, m.top, "bert_layer_dynamic").unwrap();
    for shape in shapes[1..]
        .iter()
        .map(|s| s.iter().map(|d| *d as usize).collect())
    {
        let mut x = rand_tensor(&mut seed, shape, f32t);
        x.data
            .iter_mut()
            .for_each(|v| *v = Word::float(v.f() * 0.05));
        args.push(x);
    }
    same(
        &example("bert_layer_dynamic.mlir"),
        LOWER,
        "bert_layer_dynamic",
        &args,
    );
    // And the layer as exported, unlowered (linalg on buffers throughout), then as loops:
    // `convert-linalg-to-loops` keeps every op's iteration order, so still bit for bit.
    same(
        &example("bert_layer_dynamic.mlir"),
        "",
        "bert_layer_dynamic",
        &args,
    );
    let text = same_after(
        &example("bert_layer_dynamic.mlir"),
        LOWER,
        "bufferize,convert-linalg-to-loops,canonicalize,cse",
        "bert_layer_dynamic",
        &args,
    );
    assert_no_linalg(&text);
}

#[test]
fn structured_ops_become_loops_exactly() {
    let mut seed = 21u64;
    let f32t = Type::f32();
    let x = rand_tensor(&mut seed, vec![3, 768], f32t);
    let w = rand_tensor(&mut seed, vec![2304, 768], f32t);
    let b = rand_tensor(&mut seed, vec![2304], f32t);
    same_after(
        &example("dense_dynamic.mlir"),
        "canonicalize",
        "bufferize,convert-linalg-to-loops",
        "dense_dynamic",
        &[x, w, b],
    );
    // Windows (d0 + d2), reductions not innermost, linalg.index and a scalar input.
    let src = r#"func.func @f(%a: tensor<6x5xf32>, %k: tensor<3xf32>) -> (tensor<4x5xf32>, tensor<5xf32>, tensor<4x5xf32>) {
  %e = tensor.empty() : tensor<4x5xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0 + d2, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %k : tensor<6x5xf32>, tensor<3xf32>) outs(%f : tensor<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %e1 = tensor.empty() : tensor<5xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<5xf32>) -> tensor<5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<6x5xf32>) outs(%f1 : tensor<5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<5xf32>
  %i = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x5xf32>) {
  ^bb0(%o: f32):
    %p = linalg.index 0 : index
    %q = linalg.index 1 : index
    %t = arith.muli %p, %q : index
    %u = arith.index_cast %t : index to i64
    %v = arith.sitofp %u : i64 to f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  return %c, %r, %i : tensor<4x5xf32>, tensor<5xf32>, tensor<4x5xf32>
}"#;
    let a = rand_tensor(&mut seed, vec![6, 5], f32t);
    let k = rand_tensor(&mut seed, vec![3], f32t);
    let text = same_after(src, "", "bufferize,convert-linalg-to-loops", "f", &[a, k]);
    assert_no_linalg(&text);
}

/// The permuted copies' in-register blocks at every register width (`vector-bytes`: 4 x 4
/// f32 blocks for SSE, 8 x 8 for AVX2, 16 x 16 for AVX-512, down to one element: the plain
/// nest; f64 and i32 too), with whole blocks, both edges and the corner, against the
/// tensor program.
#[test]
fn transposes_at_every_register_width() {
    let src = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../lit-tests/Transforms/Inputs/transposes.mlir"),
    )
    .unwrap();
    let mut seed = 77u64;
    let args = [
        rand_tensor(&mut seed, vec![1, 37, 12, 64], Type::f32()),
        rand_tensor(&mut seed, vec![19, 9], Type::f64()),
        rand_tensor(&mut seed, vec![33, 5, 17], Type::i32()),
    ];
    for bytes in [4, 8, 16, 32, 64] {
        let text = same_after(
            &src,
            "",
            &format!("bufferize,convert-linalg-to-loops{{vector-bytes={bytes}}}"),
            "t",
            &args,
        );
        assert_no_linalg(&text);
        // The f32 blocks are rows of bytes / 4 lanes (none for one lane).
        let lanes = bytes / 4;
        assert_eq!(
            text.contains(&format!("vector<{lanes}xf32>")),
            lanes >= 2,
            "{bytes}: {text}"
        );
        assert!(
            !text.contains(&format!("vector<{}xf32>", 2 * lanes)),
            "{bytes}"
        );
    }
}

/// Small programs where writing in place would be wrong (or is the point).
#[test]
fn in_place_decisions_are_sound() {
    let f32t = Type::f32();
    let cases: &[(&str, &str, Vec<Vec<usize>>, usize)] = &[
        (
            "read after write: the old tensor is read after an insert into it",
            r#"func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32>, f32) {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %x = arith.constant 7.0 : f32
  %w = tensor.insert %x into %t[%c0] : tensor<4xf32>
  %r = tensor.extract %t[%c0] : tensor<4xf32>
  return %w, %r : tensor<4xf32>, f32
}"#,
            vec![vec![4]],
            2,
        ),
        (
            "a function argument is never written",
            r#"func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : index
  %x = arith.constant 7.0 : f32
  %w = tensor.insert %x into %a[%c1] : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.add ins(%w, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}"#,
            vec![vec![4]],
            2,
        ),
        (
            "a tensor from outside a loop written in every iteration",
            r#"func.func @f(%a: tensor<4xf32>, %n: tensor<1xindex>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f32) {
    %w = tensor.insert %acc into %t[%i] : tensor<4xf32>
    %v = tensor.extract %w[%c3] : tensor<4xf32>
    %u = tensor.extract %t[%i] : tensor<4xf32>
    %s = arith.addf %v, %u : f32
    %s2 = arith.addf %s, %acc : f32
    scf.yield %s2 : f32
  }
  %o = tensor.insert %r into %t[%c0] : tensor<4xf32>
  return %o : tensor<4xf32>
}"#,
            vec![vec![4], vec![1]],
            2,
        ),
        (
            "two slices of one tensor: the second is read after the first is written",
            r#"func.func @f(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.copy ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s1 = tensor.extract_slice %t[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %s2 = tensor.extract_slice %t[2] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %x = arith.constant 5.0 : f32
  %f = linalg.fill ins(%x : f32) outs(%s1 : tensor<4xf32>) -> tensor<4xf32>
  %i = tensor.insert_slice %f into %t[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %c = linalg.copy ins(%s2 : tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  return %i, %c : tensor<8xf32>, tensor<4xf32>
}"#,
            vec![vec![8]],
            3,
        ),
        (
            "a transpose into a buffer it reads",
            r#"func.func @f(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %e = tensor.empty() : tensor<3x3xf32>
  %t = linalg.copy ins(%a : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<3x3xf32>) outs(%t : tensor<3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x3xf32>
  return %r : tensor<3x3xf32>
}"#,
            vec![vec![3, 3]],
            2,
        ),
        (
            "branches yielding different tensors",
            r#"func.func @f(%a: tensor<4xf32>, %p: tensor<1xindex>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %u = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %k = tensor.extract %p[%c0] : tensor<1xindex>
  %c = arith.cmpi ult, %k, %c2 : index
  %r = scf.if %c -> (tensor<4xf32>) {
    scf.yield %t : tensor<4xf32>
  } else {
    scf.yield %u : tensor<4xf32>
  }
  %x = arith.constant 1.0 : f32
  %w = tensor.insert %x into %r[%c0] : tensor<4xf32>
  %s = linalg.add ins(%w, %t : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}"#,
            vec![vec![4], vec![1]],
            4,
        ),
        (
            "an elementwise op in place over its own input, and a constant table",
            r#"func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %k = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %t = linalg.add ins(%a, %k : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = linalg.mul ins(%t, %t : tensor<2x3xf32>, tensor<2x3xf32>) outs(%t : tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = tensor.collapse_shape %r [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %x = tensor.expand_shape %c [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  return %x : tensor<2x3xf32>
}"#,
            vec![vec![2, 3]],
            1,
        ),
    ];
    let mut seed = 77u64;
    for (what, src, shapes, min_allocs) in cases {
        let args: Vec<Tensor> = shapes
            .iter()
            .map(|s| {
                if s == &vec![1] {
                    Tensor::from_f64(vec![1], Type::index(), vec![(seed % 4) as f64])
                } else {
                    rand_tensor(&mut seed, s.clone(), f32t)
                }
            })
            .collect();
        let text = same(src, "", "f", &args);
        let allocs = text.matches("memref.alloc(").count();
        eprintln!("{what}: {allocs} allocations");
        assert!(
            allocs >= *min_allocs,
            "{what}: expected at least {min_allocs} buffers\n{text}"
        );
    }
}

#[test]
fn unsupported_ops_are_errors_with_locations() {
    // A padding value that depends on the position has no bufferization yet.
    let src = r#"func.func @f(%a: tensor<4xf32>) -> tensor<6xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %a low[1] high[1] {
  ^bb0(%i: index):
    %v = arith.index_cast %i : index to i64
    %f = arith.sitofp %v : i64 to f32
    tensor.yield %f : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}"#;
    let ctx = ftuner_transforms::context();
    let mut m = parse_module(&ctx, src, "t.mlir").unwrap();
    let reg = registry();
    let mut pm =
        ftuner_pass::PassManager::from_pipeline(&reg, "builtin.module(bufferize)").unwrap();
    let err = pm.run(&ctx, &mut m.ir, m.top).unwrap_err();
    let text = format!("{err:?}");
    assert!(text.contains("\"t.mlir\":3:8"), "{text}");
    assert!(text.contains("tensor.pad"), "{text}");
    assert!(text.contains("depends on the position"), "{text}");
}
