//! Compiled code against the reference interpreter: the whole pipeline (patch, lower,
//! bufferize, loops, llvm, LLVM O3 for this CPU, JIT) on the shipped layers and on
//! fully dynamic matmuls at shapes around every tile boundary.

use ftuner_interp::{RtVal, Tensor, Word};
use ftuner_ir::{parse_module, Type};
use ftuner_runtime::Executable;
use std::rc::Rc;

fn rand_tensor(seed: &mut u64, shape: Vec<usize>, scale: f64) -> Tensor {
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            ((((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0) * scale) as f32 as f64
        })
        .collect();
    Tensor::from_f64(shape, Type::f32(), data)
}

/// The allocation counters are process-wide: tests that call compiled code run one at a
/// time so each sees only its own allocations.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn example(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name),
    )
    .unwrap()
}

fn registry() -> ftuner_pass::PassRegistry {
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    reg.register(|| Box::new(ftuner_ukernel::PatchUkernelsPass::default()));
    reg.register(|| Box::new(ftuner_ukernel::LowerUkernelsPass::default()));
    reg
}

const PIPELINE: &str =
    "builtin.module(canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)";

/// Compile `src` after `PIPELINE`; the interpreter runs `src` as read.
fn both(src: &str) -> (Executable, ftuner_ir::ParsedModule) {
    let ctx = ftuner_transforms::context();
    let mut m = parse_module(&ctx, src, "t.mlir").unwrap();
    ftuner_dialects::after_parse(&mut m.ir, m.top);
    let reference = {
        let mut r = parse_module(&ctx, src, "t.mlir").unwrap();
        ftuner_dialects::after_parse(&mut r.ir, r.top);
        r
    };
    let mut pm = ftuner_pass::PassManager::from_pipeline(&registry(), PIPELINE).unwrap();
    pm.run(&ctx, &mut m.ir, m.top).unwrap();
    let exe = Executable::compile(&ctx, &mut m.ir, m.top).unwrap();
    (exe, reference)
}

fn close(got: &[RtVal], want: &[RtVal], k: usize, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        let (g, w) = (g.tensor().unwrap(), w.tensor().unwrap());
        assert_eq!(g.shape, w.shape, "{what}");
        // f32 accumulation in another order (FMA): a few ulps per reduction step.
        let tol = 4.0 * f32::EPSILON as f64 * (k as f64).sqrt().max(1.0);
        for (i, (a, b)) in g.to_f64().iter().zip(&w.to_f64()).enumerate() {
            assert!(
                (a - b).abs() <= tol * (1.0 + b.abs()) * 8.0,
                "{what}: element {i}: {a} vs {b}"
            );
        }
    }
}

#[test]
fn dense_layer_compiled_matches_the_interpreter() {
    let _serial = serial();
    let src = example("dense_dynamic.mlir");
    let (exe, reference) = both(&src);
    let ctx = ftuner_transforms::context();
    let mut seed = 3u64;
    let w = rand_tensor(&mut seed, vec![2304, 768], 1.0);
    let b = rand_tensor(&mut seed, vec![2304], 1.0);
    for rows in [1usize, 2, 13, 14, 15, 37] {
        let x = rand_tensor(&mut seed, vec![rows, 768], 1.0);
        let args: Vec<RtVal> = [x, w.clone(), b.clone()]
            .into_iter()
            .map(|t| RtVal::Tensor(Rc::new(t)))
            .collect();
        let live = ftuner_codegen::memstats::current();
        let got = exe.call("dense_dynamic", &args).unwrap();
        // Every buffer the compiled code allocated was freed (temporaries by it, the
        // result by the runtime), and its peak held at least the transposed weights and
        // the result.
        assert_eq!(
            ftuner_codegen::memstats::current(),
            live,
            "rows={rows}: leak"
        );
        assert!(exe.last_peak_bytes() >= (768 * 2304 + rows * 2304) * 4);
        let want =
            ftuner_interp::run(&ctx, &reference.ir, reference.top, "dense_dynamic", args).unwrap();
        close(&got, &want, 768, &format!("rows={rows}"));
    }
}

#[test]
fn shape_errors_are_reported_before_running() {
    let _serial = serial();
    let src = example("dense_dynamic.mlir");
    let (exe, _) = both(&src);
    let mut seed = 1u64;
    let args: Vec<RtVal> = [
        rand_tensor(&mut seed, vec![3, 700], 1.0),
        rand_tensor(&mut seed, vec![2304, 768], 1.0),
        rand_tensor(&mut seed, vec![2304], 1.0),
    ]
    .into_iter()
    .map(|t| RtVal::Tensor(Rc::new(t)))
    .collect();
    let err = exe.call("dense_dynamic", &args).unwrap_err();
    assert!(err.0.contains("argument #0 has shape [3, 700]"), "{err}");
    let err = exe.call("dense_dynamic", &args[..2]).unwrap_err();
    assert!(err.0.contains("takes 3 arguments, got 2"), "{err}");
    let err = exe.call("nope", &args).unwrap_err();
    assert!(err.0.contains("no public function @nope"), "{err}");
}

#[test]
fn batched_matmul_compiled_matches_the_interpreter() {
    let _serial = serial();
    let (exe, reference) = both(&example("bmm_nt_dynamic.mlir"));
    let ctx = ftuner_transforms::context();
    let mut seed = 8u64;
    for t in [1usize, 5, 14, 15, 33] {
        let args: Vec<RtVal> = (0..2)
            .map(|_| RtVal::Tensor(Rc::new(rand_tensor(&mut seed, vec![192, t, 64], 1.0))))
            .collect();
        let got = exe.call("bmm_nt_dynamic", &args).unwrap();
        let want =
            ftuner_interp::run(&ctx, &reference.ir, reference.top, "bmm_nt_dynamic", args).unwrap();
        close(&got, &want, 64, &format!("T={t}"));
    }
}

/// The whole BERT layer (8 contractions patched, softmax, layer norms with f64
/// statistics, GELU through erf, reshapes, run-time asserts), compiled once, at two
/// sequence lengths.
#[test]
fn bert_layer_compiled_matches_the_interpreter() {
    let _serial = serial();
    let (exe, reference) = both(&example("bert_layer_dynamic.mlir"));
    let ctx = ftuner_transforms::context();
    let mut seed = 5u64;
    for t in [3usize, 16] {
        let mut args = vec![RtVal::Tensor(Rc::new(rand_tensor(
            &mut seed,
            vec![1, t, 768],
            1.0,
        )))];
        let shapes =
            ftuner_interp::param_shapes(&reference.ir, reference.top, "bert_layer_dynamic")
                .unwrap();
        for shape in shapes[1..]
            .iter()
            .map(|s| s.iter().map(|d| *d as usize).collect())
        {
            args.push(RtVal::Tensor(Rc::new(rand_tensor(&mut seed, shape, 0.05))));
        }
        let live = ftuner_codegen::memstats::current();
        let got = exe.call("bert_layer_dynamic", &args).unwrap();
        assert_eq!(ftuner_codegen::memstats::current(), live, "T={t}: leak");
        let want = ftuner_interp::run(
            &ctx,
            &reference.ir,
            reference.top,
            "bert_layer_dynamic",
            args,
        )
        .unwrap();
        close(&got, &want, 3072, &format!("T={t}"));
    }
}

/// A fully dynamic matmul, compiled once, at shapes that hit every kind of tile residue:
/// 0, 1, primes, main-tile boundaries +-1, and random sizes. Integer-valued data make
/// f32 sums exact, so compiled and interpreted results must be equal bit for bit.
#[test]
fn dynamic_matmul_is_exact_at_every_residue() {
    let _serial = serial();
    let src = example("kernels/matmul_dynamic.mlir");
    let (exe, reference) = both(&src);
    let ctx = ftuner_transforms::context();
    let n_cases: usize = std::env::var("FTUNER_JIT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let mut seed = 99u64;
    let mut next = |hi: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % hi) as usize
    };
    let special = [
        0usize, 1, 2, 3, 7, 13, 14, 15, 16, 17, 31, 32, 33, 47, 48, 49, 97,
    ];
    for case in 0..n_cases {
        let pick = |r: usize, next: &mut dyn FnMut(u64) -> usize| {
            if r.is_multiple_of(2) {
                special[next(special.len() as u64)]
            } else {
                next(120)
            }
        };
        let (m, n, k) = (
            pick(case, &mut next),
            pick(case + 1, &mut next),
            pick(case, &mut next),
        );
        let mut ints = |shape: Vec<usize>| {
            let len: usize = shape.iter().product();
            let data = (0..len).map(|_| next(9) as f64 - 4.0).collect();
            RtVal::Tensor(Rc::new(Tensor::from_f64(shape, Type::f32(), data)))
        };
        let args = vec![ints(vec![m, k]), ints(vec![k, n])];
        let got = exe.call("mm", &args).unwrap();
        let want = ftuner_interp::run(&ctx, &reference.ir, reference.top, "mm", args).unwrap();
        assert_eq!(
            got[0].tensor().unwrap(),
            want[0].tensor().unwrap(),
            "M={m} N={n} K={k}"
        );
    }
}

/// `tensor.pad` (a buffer filled with the padding value, the source copied inside) in front
/// of a patched convolution, with a dynamic batch: the ResNet-style "same" convolution.
#[test]
fn padded_convolution_compiled_matches_the_interpreter() {
    let _serial = serial();
    let src = r#"func.func @f(%x: tensor<?x3x9x7xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x9x7xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<?x3x9x7xf32> to tensor<?x3x11x9xf32>
  %n = tensor.dim %x, %c0 : tensor<?x3x9x7xf32>
  %e = tensor.empty(%n) : tensor<?x8x9x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8x9x7xf32>) -> tensor<?x8x9x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<?x3x11x9xf32>, tensor<8x3x3x3xf32>) outs(%f : tensor<?x8x9x7xf32>) -> tensor<?x8x9x7xf32>
  return %r : tensor<?x8x9x7xf32>
}"#;
    let (exe, reference) = both(src);
    let ctx = ftuner_transforms::context();
    let mut seed = 4u64;
    for n in [1usize, 2, 3] {
        let args = vec![
            RtVal::Tensor(Rc::new(rand_tensor(&mut seed, vec![n, 3, 9, 7], 1.0))),
            RtVal::Tensor(Rc::new(rand_tensor(&mut seed, vec![8, 3, 3, 3], 1.0))),
        ];
        let got = exe.call("f", &args).unwrap();
        let want = ftuner_interp::run(&ctx, &reference.ir, reference.top, "f", args).unwrap();
        close(&got, &want, 27, &format!("N={n}"));
    }
}

/// `arith.ceildivui` lowers to the llvm dialect (convert-to-llvm rejected it): unsigned,
/// rounded up.
#[test]
fn ceildivui_compiles_and_rounds_up_unsigned() {
    let src = "func.func @f(%a: i32, %b: i32) -> i32 {\n  %r = arith.ceildivui %a, %b : i32\n  return %r : i32\n}\n";
    let ctx = ftuner_transforms::context();
    let mut m = parse_module(&ctx, src, "t.mlir").unwrap();
    let exe = Executable::compile(&ctx, &mut m.ir, m.top).unwrap();
    for (a, b, want) in [(7, 2, 4), (6, 3, 2), (0, 5, 0), (-1, 2, -2147483648)] {
        let (a, b) = (Word::int(a), Word::int(b));
        let got = exe
            .call("f", &[RtVal::Scalar(a), RtVal::Scalar(b)])
            .unwrap();
        assert_eq!(
            got[0].scalar(),
            Some(Word::int(want)),
            "ceildivui({a:?}, {b:?})"
        );
    }
}
