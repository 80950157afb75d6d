// The DCGAN generator as torch-mlir exports it (examples/dcgan_generator.mlir, batch
// dynamic): ollie-derive{target=auto} rewrites all five transposed convolutions into a
// matmul over the real input plus col2im eOperators (the hardware model prices the
// zero-inserted implicit-GEMM convs 1.2-4x higher), every derivation checked on the
// interpreter (verify=true). docs/ollie.md has the timings. The model is pinned (zen4): the first layer is a near tie
// that the host model, whose clock is measured per process, decides either way under load.
// The verification has a work budget (verify-budget, 2e8 points by default): at batch 3
// the checks of layers 2-4 would take about 5.1e8 each, so they run at batch 1 (a remark
// each); layers 1 and 5 at batch 3. 113 s of one core (Xeon, 2026-12-03); all at batch 3,
// before the budget, it took 284 s.
// RUN: ftuner-opt %S/../../examples/dcgan_generator.mlir --pass-pipeline='builtin.module(ollie-derive{verify=true hw-target=zen4})' --mlir-pass-statistics 2>&1 | FileCheck %s --implicit-check-not=warning
// CHECK: dcgan_generator.mlir:90:11: remark: ollie-derive: derivation verified with its dynamic dims 1 instead of 3: at 3 the check would take 5.084e8 operations, over the budget 2.000e8
// CHECK: dcgan_generator.mlir:151:11: remark: ollie-derive: derivation verified with its dynamic dims 1 instead of 3: at 3 the check would take 5.061e8 operations, over the budget 2.000e8
// CHECK: dcgan_generator.mlir:212:11: remark: ollie-derive: derivation verified with its dynamic dims 1 instead of 3: at 3 the check would take 5.069e8 operations, over the budget 2.000e8
// CHECK-NOT: linalg.conv_2d
// CHECK: OllieDerive
// CHECK-DAG: 5 num-derived
// CHECK-DAG: 5 num-matched-matmuls
// CHECK-DAG: 10 num-eoperators
// CHECK-DAG: 0 num-rejected
// CHECK-DAG: 3 num-verified-reduced
// CHECK-DAG: 0 num-unverified
