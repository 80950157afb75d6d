//! Kernels as `patch-ukernels` meets them in the compiled model: taken after the passes
//! before it, with the accumulator's fill and the epilogue the pass fuses, weights marked;
//! their workload keys are the ones `patch-ukernels{tuning-db=...}` looks up; they measure
//! with the weights prepared once; dynamic image sizes are sized through the window.

use ftuner_tune::db::{Db, Record, Source};
use ftuner_tune::kernels::{self, ArgDim, Kernel};
use ftuner_tune::measure::Bench;
use ftuner_ukernel::Schedule;

/// A dense layer as torch-mlir writes one (the weight transposed in the body), then a
/// bias-add and a ReLU: `%x` is the input, `%w` and `%b` the weights.
const DENSE_RELU: &str = r#"
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @forward(%x: tensor<?x48xf32>, %w: tensor<40x48xf32>, %b: tensor<40xf32>) -> tensor<?x40xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x48xf32>
  %e0 = tensor.empty() : tensor<48x40xf32>
  %wt = linalg.transpose ins(%w : tensor<40x48xf32>) outs(%e0 : tensor<48x40xf32>) permutation = [1, 0]
  %e = tensor.empty(%m) : tensor<?x40xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x40xf32>) -> tensor<?x40xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<?x48xf32>, tensor<48x40xf32>) outs(%acc : tensor<?x40xf32>) -> tensor<?x40xf32>
  %e2 = tensor.empty(%m) : tensor<?x40xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<?x40xf32>, tensor<40xf32>) outs(%e2 : tensor<?x40xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<?x40xf32>
  return %r : tensor<?x40xf32>
}
"#;

fn model_kernels(src: &str, weights: &str) -> Vec<Kernel> {
    let ctx = ftuner_transforms::context();
    let mut m = kernels::load(&ctx, src, "model.mlir").unwrap();
    if !weights.is_empty() {
        kernels::mark_weights(&mut m.ir, m.top, weights).unwrap();
    }
    kernels::prepare_model(&ctx, &mut m.ir, m.top, "host").unwrap();
    let model = ftuner_hw::HardwareModel::load("host").unwrap();
    kernels::extract(&ctx, &mut m.ir, m.top, &model)
}

#[test]
fn a_kernel_carries_its_fill_epilogue_and_weights() {
    let ks = model_kernels(DENSE_RELU, "1..");
    assert_eq!(ks.len(), 1);
    let k = &ks[0];
    assert!(
        k.key.class.0.contains("epilogue=arith.addf+arith.maximumf"),
        "{}",
        k.key
    );
    assert_eq!(k.key.sizes, "M=? N=40 K=48");
    // x, the prepared (transposed) weight, the fill's destination, the bias.
    assert!(k.module.contains("linalg.fill"), "{}", k.module);
    assert!(k.module.contains("linalg.generic"), "{}", k.module);
    assert_eq!(k.module.matches("ftuner.weight").count(), 2, "{}", k.module);
    // In block order: the fill's destination, x, the prepared weight, the bias.
    assert_eq!(
        k.args,
        vec![
            vec![ArgDim::Dynamic, ArgDim::Static(40)],
            vec![ArgDim::Dynamic, ArgDim::Static(48)],
            vec![ArgDim::Static(48), ArgDim::Static(40)],
            vec![ArgDim::Static(40)],
        ]
    );
    // Without weights nothing is prepared: the transpose is not part of the kernel and
    // the weight is an argument like the input.
    let plain = model_kernels(DENSE_RELU, "");
    assert_eq!(plain[0].key, k.key);
    assert!(!plain[0].module.contains("ftuner.weight"));
}

#[test]
fn kernels_measure_with_weights_prepared_once() {
    let ks = model_kernels(DENSE_RELU, "1..");
    let k = &ks[0];
    let mut bench = Bench::new(k, &[3, 29], 2, "host").unwrap();
    let d = bench.measure(k, None).unwrap();
    assert_eq!(d.per_point.len(), 2);
    // Another schedule must compute the same (checked against the default's results).
    let s: Schedule = "mr=4,nr=16,kc=16,k_blocking=1,pack_b=1,max_ukernels=3"
        .parse()
        .unwrap();
    bench.measure(k, Some(&s)).unwrap();
    let (c, noise) = bench.compare_noise(k, &[None, Some(s)], 2).unwrap();
    assert_eq!(c.len(), 2);
    assert!(noise >= 0.01 && noise.is_finite(), "{noise}");
}

#[test]
fn the_key_tuned_is_the_key_the_model_compiles_with() {
    let ks = model_kernels(DENSE_RELU, "1..");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.db");
    let db = Db::open(&p).unwrap();
    let s = "mr=3,nr=16,kc=48,k_blocking=0,pack_b=0,max_ukernels=2";
    let mut r = Record::new(
        ks[0].key.clone(),
        "M=64".into(),
        s.parse::<Schedule>().unwrap(),
        Source::Tune,
    );
    r.cost = Some(1e-6);
    db.insert(&r).unwrap();
    drop(db);
    // The model compiled as the Python package compiles it (weights marked, the named
    // pipeline up to the patched contractions, the database's schedules).
    let ctx = ftuner_transforms::context();
    let mut m = kernels::load(&ctx, DENSE_RELU, "model.mlir").unwrap();
    kernels::mark_weights(&mut m.ir, m.top, "1..").unwrap();
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_tune::register(&mut reg);
    ftuner_transforms::register_passes(&mut reg);
    ftuner_ukernel::register_passes(&mut reg);
    ftuner_transforms::pipelines::register(&mut reg);
    let text = format!(
        "builtin.module(ftuner-cpu-patch{{target=host tuning-db={}}})",
        p.display()
    );
    let mut pm = ftuner_pass::PassManager::from_pipeline(&reg, &text).unwrap();
    pm.run(&ctx, &mut m.ir, m.top).unwrap();
    let out = ftuner_ir::print_module(&m.ir, &ctx, m.top, Default::default());
    assert!(out.contains(&format!("ftuner.schedule = \"{s}\"")), "{out}");
}

#[test]
fn dynamic_image_sizes_are_sized_through_the_window() {
    let src = r#"
func.func @f(%x: tensor<1x3x?x?xf32>, %w: tensor<8x3x3x3xf32>, %o: tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<[2, 1]> : vector<2xi64>, strides = dense<[1, 2]> : vector<2xi64>} ins(%x, %w : tensor<1x3x?x?xf32>, tensor<8x3x3x3xf32>) outs(%o : tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  return %r : tensor<1x8x?x?xf32>
}
"#;
    let ks = model_kernels(src, "1");
    assert_eq!(ks.len(), 1);
    // Output 9 x 9: input rows (9 - 1) + 2 * (3 - 1) + 1 = 13, columns 2 * (9 - 1) + 3 - 1 + 1 = 19.
    let shapes = ks[0].shapes_at(9).unwrap();
    assert_eq!(shapes[0], vec![1, 3, 13, 19]);
    assert_eq!(shapes[2], vec![1, 8, 9, 9]);
    let mut bench = Bench::new(&ks[0], &[4, 9], 2, "host").unwrap();
    bench.measure(&ks[0], None).unwrap();
}

#[test]
fn an_epilogue_read_through_a_unit_view_is_rebuilt_from_its_source() {
    // torch-mlir's `1 x T x F` view of a `T x F` matmul, then a ReLU on the view: the
    // view's dynamic size is rebuilt in the kernel from its copied source.
    let src = r#"
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @f(%x: tensor<?x48xf32>, %w: tensor<48x40xf32>) -> tensor<1x?x40xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x48xf32>
  %e = tensor.empty(%m) : tensor<?x40xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x40xf32>) -> tensor<?x40xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x48xf32>, tensor<48x40xf32>) outs(%acc : tensor<?x40xf32>) -> tensor<?x40xf32>
  %v = tensor.expand_shape %mm [[0, 1], [2]] output_shape [1, %m, 40] : tensor<?x40xf32> into tensor<1x?x40xf32>
  %e3 = tensor.empty(%m) : tensor<1x?x40xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v : tensor<1x?x40xf32>) outs(%e3 : tensor<1x?x40xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %zero : f32
    linalg.yield %t : f32
  } -> tensor<1x?x40xf32>
  return %r : tensor<1x?x40xf32>
}
"#;
    let ks = model_kernels(src, "1");
    assert_eq!(ks.len(), 1);
    let k = &ks[0];
    assert!(
        k.key.class.0.contains("epilogue=arith.maximumf"),
        "{}",
        k.key
    );
    assert!(k.module.contains("tensor.expand_shape"), "{}", k.module);
    assert!(k.module.contains("tensor.dim"), "{}", k.module);
    let mut bench = Bench::new(k, &[5, 33], 2, "host").unwrap();
    bench.measure(k, None).unwrap();
}
