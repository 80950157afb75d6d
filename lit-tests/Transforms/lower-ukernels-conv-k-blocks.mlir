// A flat-form convolution whose K (C x KH x KW) is longer than its patch's kc runs its
// tile nest inside a loop over even k blocks of at most kc, as a matmul's does: each
// register tile sums its block from zero, stores it in the first block (the zero init is
// not read) and adds it to C after, and the epilogue (bias, ReLU) runs in the last block
// only. Before, each tile of rows streamed the whole K x nr panel of B (1.2 MB for a
// 512-channel 3x3 conv), from L2 at best. A full-width tile reads its panel's row at
// column 0 (a constant), so prefetch-tile-updates fetches the next panel's row into L2.
// sapphirerapids: kc = 984; K = 160 x 3 x 3 = 1440 -> two blocks of 720. (Its analytic
// default runs a K this short as one block — the whole panel fits half of L2,
// cpu::conv_whole_k, patch-ukernels-conv-kc.mlir — so these runs give the model's tile
// and kc as a schedule, which the patch takes as it is.)
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels,canonicalize,cse)' | FileCheck %s
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels,canonicalize,cse,bufferize,prefetch-tile-updates)' | FileCheck %s --check-prefix=PF
// Without k blocks, one loop over all of K per tile (with k-unroll=1, one step at a time).
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=sapphirerapids},lower-ukernels{k-blocking=false},canonicalize,cse)' | FileCheck %s --check-prefix=NOKB
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=sapphirerapids},lower-ukernels{k-blocking=false k-unroll=1},canonicalize,cse)' | FileCheck %s --check-prefix=NOKB1
// Each block's sums land where the conv's do: batch 1, 3 (rows across images), 0.
// RUN: ftuner-run %s --shape 0=1x160x9x9 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=sapphirerapids derive=false})' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --shape 0=3x160x9x9 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=sapphirerapids derive=false})' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --shape 0=0x160x9x9 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=sapphirerapids derive=false})' 2>&1 | FileCheck %s --check-prefix=EXEC
// The same in two blocks of 720 (the pipeline's default is one block of 1440):
// RUN: ftuner-run %s --shape 0=1x160x9x9 --check --pass-pipeline='builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels,canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --shape 0=3x160x9x9 --check --pass-pipeline='builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels,canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --shape 0=0x160x9x9 --check --pass-pipeline='builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels,canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=EXEC
// EXEC: check: ok

// CHECK-LABEL: func.func @conv_bias_relu(
// CHECK-DAG: %[[K:.*]] = arith.constant 1440 : index
// CHECK-DAG: %[[STEP:.*]] = arith.constant 720 : index
// The blocks divide K: each whole, its size the step (no min with what is left).
// CHECK: scf.for %[[K0:.*]] = %{{.*}} to %[[K]] step %[[STEP]] iter_args
// CHECK-NOT: arith.minsi
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K0]], %{{.*}} : index
// CHECK: %[[KEND:.*]] = arith.addi %[[K0]], %[[STEP]] : index
// CHECK: %[[LAST:.*]] = arith.cmpi sge, %[[KEND]], %[[K]] : index
// The full 6-row tiles: the block's k steps, two per iteration (K is even; k-unroll's
// default for convs), B's panel row at column 0.
// CHECK: scf.for %[[J:.*]] = %[[K0]] to %[[KEND]] step %[[TWO:c2[_0-9]*]] iter_args({{.*}}) -> (vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>)
// CHECK-NEXT: "vector.transfer_read"(%{{.*}}, %{{.*}}, %[[J]], %c0,
// CHECK-COUNT-6: vector.fma
// CHECK: %[[J1:.*]] = arith.addi %[[J]], %c1
// CHECK-NEXT: "vector.transfer_read"(%{{.*}}, %{{.*}}, %[[J1]], %c0,
// CHECK-COUNT-6: vector.fma
// CHECK-NEXT: scf.yield
// First block: the sums are C's first values, through the epilogue in the last block.
// CHECK: scf.if %[[FIRST]] -> (tensor<?x128x7x7xf32>) {
// CHECK-NEXT: scf.if %[[LAST]]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: } else {
// CHECK-NEXT: scf.yield
// CHECK-COUNT-6: "vector.transfer_write"
// CHECK-NEXT: scf.yield
// Later blocks: C's rows read and added to, then the epilogue in the last block.
// CHECK-NEXT: } else {
// CHECK-NEXT: "vector.transfer_read"(%[[C:[a-z0-9_]+]],
// CHECK-NEXT: "vector.transfer_read"(%[[C]],
// CHECK-NEXT: "vector.transfer_read"(%[[C]],
// CHECK-NEXT: "vector.transfer_read"(%[[C]],
// CHECK-NEXT: "vector.transfer_read"(%[[C]],
// CHECK-NEXT: "vector.transfer_read"(%[[C]],
// CHECK-COUNT-6: arith.addf
// CHECK-NEXT: scf.if %[[LAST]]

// PF-LABEL: func.func @conv_bias_relu(
// PF: memref<2x1440x64xf32>
// PF: scf.for
// PF: "memref.prefetch"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{isDataCache = true, isWrite = false, localityHint = 2 : i32}> : (memref<2x1440x64xf32>, index, index, index) -> ()

// NOKB-LABEL: func.func @conv_bias_relu(
// NOKB-NOT: step %c720
// NOKB: scf.for %{{.*}} = %c0 to %c1440 step %c2
// NOKB1-LABEL: func.func @conv_bias_relu(
// NOKB1: scf.for %{{.*}} = %c0 to %c1440 step %c1

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#mapc = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_bias_relu(%x: tensor<?x160x9x9xf32>, %w: tensor<128x160x3x3xf32>, %bias: tensor<128xf32>) -> tensor<?x128x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x160x9x9xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x128x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x160x9x9xf32>, tensor<128x160x3x3xf32>) outs(%f : tensor<?x128x7x7xf32>) -> tensor<?x128x7x7xf32>
  %r = linalg.generic {indexing_maps = [#map, #mapc, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %bias : tensor<?x128x7x7xf32>, tensor<128xf32>) outs(%e : tensor<?x128x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<?x128x7x7xf32>
  return %r : tensor<?x128x7x7xf32>
}

// Blocks of rows outside the panels (a small image, a large filter: block_rows), each
// block's A rows packed [mc][K] once: the k blocks run inside the row block, over the
// packed rows. K = 1000 -> two blocks of 504 and 496. (Run without the CPU pipeline's
// convert-1x1-conv-to-matmul, which would make it a matmul.)
// RUN: ftuner-run %s --entry=row_blocks --shape 0=2x1000x14x14 --check --pass-pipeline='builtin.module(canonicalize,cse,patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels,canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=EXEC
// CHECK-LABEL: func.func @row_blocks(
// CHECK: scf.for %[[M0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: tensor.empty() : tensor<{{[0-9]+}}x1000xf32>
// CHECK: tensor.insert
// CHECK: scf.for %[[K0:.*]] = %{{.*}} to %c1000 step %c504 iter_args
// CHECK: scf.for %{{.*}} = %[[K0]] to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>)
// The order as a knob: loop-order=cols keeps the panels outside (no packed row blocks),
// loop-order=rows makes a conv the rule leaves panels-outside (@accumulate) run blocks
// of 72 packed rows; both compute what the module as read computes.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(canonicalize,cse,patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels{loop-order=cols},canonicalize,cse)' | FileCheck %s --check-prefix=COLS
// COLS-LABEL: func.func @row_blocks(
// COLS-NOT: x1000xf32>
// COLS: return
// RUN: ftuner-run %s --entry=row_blocks --shape 0=2x1000x14x14 --check --pass-pipeline='builtin.module(canonicalize,cse,patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels{loop-order=cols},canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(canonicalize,cse,patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels{loop-order=rows},canonicalize,cse)' | FileCheck %s --check-prefix=ROWS
// ROWS-LABEL: func.func @accumulate(
// ROWS: scf.for %{{.*}} = %c0 to %{{.*}} step %c72 iter_args
// ROWS: tensor.empty() : tensor<72x1440xf32>
// RUN: ftuner-run %s --entry=accumulate --shape 0=3x160x9x9 --shape 2=3x64x7x7 --check --pass-pipeline='builtin.module(canonicalize,cse,patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels{loop-order=rows},canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=EXEC
func.func @row_blocks(%x: tensor<?x1000x14x14xf32>, %w: tensor<256x1000x1x1xf32>) -> tensor<?x256x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x1000x14x14xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x256x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x256x7x7xf32>) -> tensor<?x256x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<?x1000x14x14xf32>, tensor<256x1000x1x1xf32>) outs(%f : tensor<?x256x7x7xf32>) -> tensor<?x256x7x7xf32>
  return %c : tensor<?x256x7x7xf32>
}

// An odd K (3 channels, 7x7: 147) keeps one k step per iteration.
// RUN: ftuner-run %s --entry=odd_k --shape 0=2x3x20x20 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=sapphirerapids derive=false})' 2>&1 | FileCheck %s --check-prefix=EXEC
// CHECK-LABEL: func.func @odd_k(
// CHECK: scf.for %{{.*}} = %c0 to %c147 step %c1{{[_0-9]*}} iter_args({{.*}}) -> (vector<64xf32>
func.func @odd_k(%x: tensor<?x3x20x20xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<?x64x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x20x20xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x64x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x64x7x7xf32>) -> tensor<?x64x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<?x3x20x20xf32>, tensor<64x3x7x7xf32>) outs(%f : tensor<?x64x7x7xf32>) -> tensor<?x64x7x7xf32>
  return %c : tensor<?x64x7x7xf32>
}

// An init that is not a zero fill (C read as the accumulator): every k block adds to C.
// RUN: ftuner-run %s --entry=accumulate --shape 0=2x160x9x9 --shape 2=2x64x7x7 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=sapphirerapids derive=false})' 2>&1 | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry=accumulate --shape 0=2x160x9x9 --shape 2=2x64x7x7 --check --pass-pipeline='builtin.module(patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=984},lower-ukernels,canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=EXEC
// CHECK-LABEL: func.func @accumulate(
// CHECK: scf.for %{{.*}} = %c0 to %c1440 step %c720 iter_args
// CHECK-NOT: arith.cmpi eq
// CHECK: "vector.transfer_read"(%{{.*}}) {{.*}}(tensor<?x64x7x7xf32>
func.func @accumulate(%x: tensor<?x160x9x9xf32>, %w: tensor<64x160x3x3xf32>, %acc: tensor<?x64x7x7xf32>) -> tensor<?x64x7x7xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x160x9x9xf32>, tensor<64x160x3x3xf32>) outs(%acc : tensor<?x64x7x7xf32>) -> tensor<?x64x7x7xf32>
  return %c : tensor<?x64x7x7xf32>
}

// A kc that is not a multiple of 8 (a schedule's): blocks of 75, odd, so one k step per
// iteration (two would sum step 75 twice and read past K).
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=75},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=KC75
// RUN: ftuner-run %s --entry=odd_kc --shape 0=2x6x12x12 --check --pass-pipeline='builtin.module(patch-ukernels{target=sapphirerapids schedule=mr=6,nr=64,kc=75},lower-ukernels,canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=EXEC
// KC75-LABEL: func.func @odd_kc(
// KC75: scf.for %[[K0:.*]] = %c0 to %c150 step %c75 iter_args
// KC75: scf.for %{{.*}} = %[[K0]] to %{{.*}} step %c1{{[_0-9]*}} iter_args({{.*}}) -> (vector<64xf32>
func.func @odd_kc(%x: tensor<?x6x12x12xf32>, %w: tensor<64x6x5x5xf32>) -> tensor<?x64x8x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6x12x12xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x64x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x64x8x8xf32>) -> tensor<?x64x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<?x6x12x12xf32>, tensor<64x6x5x5xf32>) outs(%f : tensor<?x64x8x8xf32>) -> tensor<?x64x8x8xf32>
  return %c : tensor<?x64x8x8xf32>
}
