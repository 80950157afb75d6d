// RUN: ftuner-opt %examples/dense_dynamic.mlir --print-ukernels --target=skylake-avx512 | FileCheck %s --check-prefix=CPU
// CPU: // uKernels for target skylake-avx512
// CPU: dense_dynamic.mlir:{{[0-9]+}}:{{[0-9]+}}: linalg.matmul f32 M=? N=2304 K=768
// CPU: cpu uKernels (f32, 16 lanes): main 6x64
// CPU: 6x64    29
// CPU: 1x16

// RUN: ftuner-opt %examples/bmm_nt_dynamic.mlir --print-ukernels --target=a100 | FileCheck %s --check-prefix=GPU
// GPU: linalg.batch_matmul f32 B=192 M=? N=? K=64
// GPU: gpu uKernels (f32): main block

// The pass form attaches the family to each contraction.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --annotate-ukernels=target=zen4 | FileCheck %s --check-prefix=PASS
// PASS: linalg.matmul {ftuner.ukernels = "cpu main=6x64 kc=672 mc={{[0-9]+}} nc={{[0-9]+}} edges=[6x32,6x16,6x8,6x4,6x2,6x1,4x64,{{.*}},1x1]"}
// RUN: ftuner-opt %examples/dense_dynamic.mlir --target=h100 --pass-pipeline='builtin.module(annotate-ukernels)' | FileCheck %s --check-prefix=MODTARGET
// MODTARGET: module attributes {ftuner.target = "h100"}
// MODTARGET: ftuner.ukernels = "gpu main=
