// A schedule instead of the analytic default: the family is built around its register
// tile and kc, the plans use at most max_ukernels sizes, and the patch carries the
// schedule for lower-ukernels (its k_blocking and pack_b).
// RUN: ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels='target=skylake-avx512 schedule=mr=10,nr=32,kc=256,pack_b=1,max_ukernels=3' --mlir-pass-statistics 2>&1 | FileCheck %s
// CHECK: ukernel.patch "matmul" target("skylake-avx512") tiles [10x32, 10x16, 10x8,
// CHECK-SAME: cache(kc = 256,
// CHECK-SAME: m_plan(10 | 0:- 1:1 2:2 3:2+1 4:2+2 5:2+2+1 6:2+2+2 7:2+2+2+1 8:2+2+2+2 9:2+2+2+2+1)
// CHECK-SAME: n_plan(32 static 2304 | 0:-)
// CHECK-SAME: attrs = {ftuner.schedule = "mr=10,nr=32,kc=256,k_blocking=1,pack_b=1,max_ukernels=3"}
// CHECK: 1 num-scheduled

// Lowered with the schedule's own knobs: B packed into 32-wide panels.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline='builtin.module(patch-ukernels{target=skylake-avx512 schedule=mr=10,nr=32,kc=256,pack_b=1},lower-ukernels)' | FileCheck %s --check-prefix=LOWER
// LOWER: tensor.empty() : tensor<72x768x32xf32>
// LOWER: vector.fma {{.*}} : vector<32xf32>
// LOWER-NOT: ukernel.patch

// The same answers as the module as read (on the host: a 6x16 tile fits every x86 register
// file, AVX2's 16 ymm registers included).
// RUN: ftuner-run %examples/dense_dynamic.mlir --shape 0=29x768 --pass-pipeline='builtin.module(patch-ukernels{schedule=mr=6,nr=16,kc=100,k_blocking=0,max_ukernels=2},lower-ukernels,canonicalize,cse)' --check | FileCheck %s --check-prefix=EXEC
// EXEC: check: ok

// Bad schedules are errors at the op that cannot take them, or at the pass.
// RUN: not ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels='target=skylake-avx512 schedule=mr=16,nr=64,kc=64' 2>&1 | FileCheck %s --check-prefix=BIG
// BIG: dense_dynamic.mlir:15:10: error: schedule mr=16,nr=64,kc=64,k_blocking=1,pack_b=0,max_ukernels=8: register tile 16x64 needs 69 vector registers; the target has 32
// Three vectors per row: LLVM splits such loop-carried vectors into pieces (35x slower).
// RUN: not ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels='target=skylake-avx512 schedule=mr=8,nr=48,kc=64' 2>&1 | FileCheck %s --check-prefix=THREE
// THREE: dense_dynamic.mlir:15:10: error: schedule mr=8,nr=48,kc=64,k_blocking=1,pack_b=0,max_ukernels=8: register tile 8x48: nr must be a power of two
// RUN: not ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels='schedule=mr=8,kc=64' 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: schedule 'mr=8,kc=64': missing nr
// RUN: not ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels='tuning-db=%t.missing.db' 2>&1 | FileCheck %s --check-prefix=NODB
// NODB: error: {{.*}}missing.db: no such file
