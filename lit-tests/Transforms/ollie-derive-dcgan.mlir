// The DCGAN generator as torch-mlir exports it (examples/dcgan_generator.mlir, batch
// dynamic): ollie-derive{target=auto} rewrites all five transposed convolutions into a
// matmul over the real input plus col2im eOperators (the hardware model prices the
// zero-inserted implicit-GEMM convs 1.2-4x higher), every derivation checked on the
// interpreter (verify=true). docs/ollie.md has the timings. The model is pinned (zen4): the first layer is a near tie
// that the host model, whose clock is measured per process, decides either way under load.
// RUN: ftuner-opt %S/../../examples/dcgan_generator.mlir --pass-pipeline='builtin.module(ollie-derive{verify=true hw-target=zen4})' --mlir-pass-statistics 2>&1 | FileCheck %s
// CHECK-NOT: warning
// CHECK-NOT: linalg.conv_2d
// CHECK: OllieDerive
// CHECK-DAG: 5 num-derived
// CHECK-DAG: 5 num-matched-matmuls
// CHECK-DAG: 10 num-eoperators
// CHECK-DAG: 0 num-rejected
