// lower-ukernels: a static contraction whose B fits in half the target's L2 runs its row
// strips outside its N tiles, so that C is written row by row (MobileNetV2's expansions,
// the 1x1 convs of ResNet-50 whose image fits); otherwise N tiles outside, M strips inside
// (BLIS's jr/ir). zen4: 1 MiB L2, kc = 672.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)' | FileCheck %s
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)' --mlir-print-op-generic | %mlir-opt > /dev/null
// REQUIRES: mlir-opt
// Against the interpreter, with the same target as the structure checks (residue rows and
// columns, a zero init, an accumulated one), on one thread and on two:
// RUN: ftuner-run %s --entry=short_k --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=short_k_acc --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=short_k_acc --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=long_k --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=k_blocks_epilogue --pass-pipeline='builtin.module(linalg-fuse-elementwise-ops,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(linalg-fuse-elementwise-ops,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=BLOCKS
// RUNOK: check: ok

// CHECK-LABEL: func.func @short_k
// CHECK: scf.for %{{.*}} = %c0 to %c30 step %c6
// CHECK: scf.for %{{.*}} = %c0 to %c192 step %c64
func.func @short_k(%w: tensor<30x16xf32>, %x: tensor<16x200xf32>) -> tensor<30x200xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<30x200xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<30x200xf32>) -> tensor<30x200xf32>
  %r = linalg.matmul ins(%w, %x : tensor<30x16xf32>, tensor<16x200xf32>) outs(%f : tensor<30x200xf32>) -> tensor<30x200xf32>
  return %r : tensor<30x200xf32>
}

// An init that is read (accumulated into), K = 32.
// CHECK-LABEL: func.func @short_k_acc
// CHECK: scf.for %{{.*}} = %c0 to %c30 step %c6
// CHECK: scf.for %{{.*}} = %c0 to %c192 step %c64
func.func @short_k_acc(%w: tensor<31x32xf32>, %x: tensor<32x200xf32>, %c: tensor<31x200xf32>) -> tensor<31x200xf32> {
  %r = linalg.matmul ins(%w, %x : tensor<31x32xf32>, tensor<32x200xf32>) outs(%c : tensor<31x200xf32>) -> tensor<31x200xf32>
  return %r : tensor<31x200xf32>
}

// K = 512 (B of 512 x 200, 400 KiB, in half zen4's 1 MiB L2): strips outside too.
// CHECK-LABEL: func.func @long_k
// CHECK: scf.for %{{.*}} = %c0 to %c30 step %c6
// CHECK: scf.for %{{.*}} = %c0 to %c192 step %c64
func.func @long_k(%w: tensor<30x512xf32>, %x: tensor<512x200xf32>) -> tensor<30x200xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<30x200xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<30x200xf32>) -> tensor<30x200xf32>
  %r = linalg.matmul ins(%w, %x : tensor<30x512xf32>, tensor<512x200xf32>) outs(%f : tensor<30x200xf32>) -> tensor<30x200xf32>
  return %r : tensor<30x200xf32>
}

// B of 16 x 32768 (2 MiB) is more than half zen4's 1 MiB L2: N tiles outside.
// CHECK-LABEL: func.func @wide_b
// CHECK: scf.for %{{.*}} = %c0 to %c32768 step %c64
// CHECK: scf.for %{{.*}} = %c0 to %c30 step %c6
func.func @wide_b(%w: tensor<30x16xf32>, %x: tensor<16x32768xf32>) -> tensor<30x32768xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<30x32768xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<30x32768xf32>) -> tensor<30x32768xf32>
  %r = linalg.matmul ins(%w, %x : tensor<30x16xf32>, tensor<16x32768xf32>) outs(%f : tensor<30x32768xf32>) -> tensor<30x32768xf32>
  return %r : tensor<30x32768xf32>
}

// So is B of 768 x 200 (600 KiB).
// CHECK-LABEL: func.func @b_past_half_l2
// CHECK: scf.for %{{.*}} = %c0 to %c192 step %c64
// CHECK: scf.for %{{.*}} = %c0 to %c30 step %c6
func.func @b_past_half_l2(%w: tensor<30x768xf32>, %x: tensor<768x200xf32>) -> tensor<30x200xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<30x200xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<30x200xf32>) -> tensor<30x200xf32>
  %r = linalg.matmul ins(%w, %x : tensor<30x768xf32>, tensor<768x200xf32>) outs(%f : tensor<30x200xf32>) -> tensor<30x200xf32>
  return %r : tensor<30x200xf32>
}

// K = 704 > kc: two k blocks of 352, each running its strips outside its N tiles, the
// epilogue (bias, ReLU) applied by the tiles of the last block. B is 440 KiB.
// BLOCKS-LABEL: func.func @k_blocks_epilogue
// BLOCKS: scf.for %{{.*}} = %c0 to %c704 step %c352
// BLOCKS: scf.for %{{.*}} = %c0 to %c30 step %c6
// BLOCKS: scf.for %{{.*}} = %c0 to %c128 step %c64
// BLOCKS-NOT: linalg.generic
// BLOCKS: return
func.func @k_blocks_epilogue(%w: tensor<30x704xf32>, %x: tensor<704x160xf32>, %bias: tensor<30xf32>) -> tensor<30x160xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<30x160xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<30x160xf32>) -> tensor<30x160xf32>
  %r = linalg.matmul ins(%w, %x : tensor<30x704xf32>, tensor<704x160xf32>) outs(%f : tensor<30x160xf32>) -> tensor<30x160xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%r, %bias : tensor<30x160xf32>, tensor<30xf32>) outs(%e : tensor<30x160xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<30x160xf32>
  return %o : tensor<30x160xf32>
}

// The order as a knob (issue 26's schedule space): `lower-ukernels{loop-order=...}` for every
// patch, a schedule's `order` for its own patch, `k_unroll` beside it. cols: short_k's N
// tiles outside its strips; a schedule's rows: wide_b's strips outside its N tiles, four k
// steps per iteration of the register tile's k loop (K = 16).
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels{loop-order=cols},canonicalize,cse)' | FileCheck %s --check-prefix=COLS
// COLS-LABEL: func.func @short_k
// COLS: scf.for %{{.*}} = %c0 to %c192 step %c64
// COLS: scf.for %{{.*}} = %c0 to %c30{{.*}} step %c6
// COLS-LABEL: func.func @short_k_acc
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen4 schedule=mr=6,nr=64,kc=672,order=rows,k_unroll=4},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=ROWS
// ROWS-LABEL: func.func @wide_b
// ROWS: scf.for %{{.*}} = %c0 to %c30 step %c6
// ROWS: scf.for %{{.*}} = %c0 to %c32768 step %c64
// ROWS: scf.for %{{.*}} = %c0 to %c16 step %c4 iter_args
// The patch carries the loop knobs for lower-ukernels, in the schedule's text:
// RUN: ftuner-opt %s --patch-ukernels='target=zen4 schedule=mr=6,nr=64,kc=672,order=rows,k_unroll=4,pack_a=0' | FileCheck %s --check-prefix=SCHED
// SCHED: ftuner.schedule = "mr=6,nr=64,kc=672,k_blocking=1,pack_b=0,max_ukernels=8,k_unroll=4,order=rows,pack_a=0"
// Forced orders compute what the module as read computes:
// RUN: ftuner-run %s --entry=wide_b --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels{loop-order=rows},canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=short_k_acc --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels{loop-order=cols},canonicalize,cse)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=k_blocks_epilogue --pass-pipeline='builtin.module(linalg-fuse-elementwise-ops,patch-ukernels{target=zen4 schedule=mr=5,nr=32,kc=200,k_unroll=3,order=cols},lower-ukernels,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// Bad knobs are errors at the pass.
// RUN: not ftuner-opt %s --pass-pipeline='builtin.module(lower-ukernels{loop-order=diagonal})' 2>&1 | FileCheck %s --check-prefix=BADORDER
// BADORDER: error: loop-order: order must be auto, rows or cols, got 'diagonal'
// RUN: not ftuner-opt %s --pass-pipeline='builtin.module(lower-ukernels{k-unroll=9})' 2>&1 | FileCheck %s --check-prefix=BADUNROLL
// BADUNROLL: error: k-unroll must be 0 to 8, got 9
