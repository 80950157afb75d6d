// lower-ukernels realizes a patch plan as loops over statically shaped tiles.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels{pack-a=false pack-b=false},canonicalize,cse)" | FileCheck %s
// CHECK-LABEL: func.func @dense_dynamic
// CHECK-NOT: ukernel.patch
// B read in place here (pack-b=false; by default a contiguous B is packed into panels
// from M = mc, below). The kc loop (kc = 672 from the cache model: K = 768 is split
// evenly, two blocks of 384, each whole: the tiles' slices are 384 deep, static), the mc loop (blocks of 240 = 40 x 6 rows), then 64-wide column tiles of the
// static 2304 columns, then full 6-row strips.
// CHECK: %[[M:.*]] = tensor.dim %arg0, %c0 : tensor<?x768xf32>
// CHECK: scf.for %[[K0:.*]] = %c0 to %c768 step %c384
// CHECK-NOT: arith.minsi
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K0]], %c0 : index
// CHECK: scf.for %[[I0:.*]] = %c0 to %[[M]] step %c240
// CHECK: %[[MB:.*]] = arith.minsi %{{.*}}, %c240 : index
// CHECK: scf.for %[[J:.*]] = %c0 to %c2304 step %c64
// CHECK: %[[Q:.*]] = arith.divui %[[MB]], %c6 : index
// CHECK: %[[FULL:.*]] = arith.muli %[[Q]], %c6 : index
// CHECK: %[[REM:.*]] = arith.subi %[[MB]], %[[FULL]] : index
// CHECK: scf.for %[[I1:.*]] = %c0 to %[[FULL]] step %c6
// CHECK: %[[I:.*]] = arith.addi %[[I0]], %[[I1]] : index
// CHECK: %[[A:.*]] = tensor.extract_slice %arg0[%[[I]], %[[K0]]] [6, 384] [1, 1] {ftuner.in_bounds} : tensor<?x768xf32> to tensor<6x384xf32>
// CHECK: %[[B:.*]] = tensor.extract_slice %transposed[%[[K0]], %[[J]]] [384, 64] [1, 1] {ftuner.in_bounds} : tensor<768x2304xf32> to tensor<384x64xf32>
// CHECK: %[[C:.*]] = tensor.extract_slice %{{.*}}[%[[I]], %[[J]]] [6, 64] [1, 1] {ftuner.in_bounds} : tensor<?x2304xf32> to tensor<6x64xf32>
// The register tile: 6 accumulators of vector<64xf32> from zero across the k loop, one
// row of B and 6 broadcasts of A per step, two steps per iteration (the block's 384 is
// static and even: k-unroll's default for a matmul, no remainder); after it, C (whose
// init was a zero fill) is written in the first k block, read, added and written in the
// others.
// CHECK: %[[Z:.*]] = vector.broadcast %{{.*}} : f32 to vector<64xf32>
// CHECK: %{{.*}}:6 = scf.for %[[K:.*]] = %c0 to %c384 step %{{c2.*}} iter_args(%{{.*}} = %[[Z]], %{{.*}} = %[[Z]],
// CHECK: "vector.transfer_read"(%[[B]], %[[K]], %c0, %{{.*}})
// CHECK-COUNT-6: vector.fma %{{.*}} : vector<64xf32>
// CHECK: "vector.transfer_read"(%[[B]], %{{.*}}, %c0, %{{.*}})
// CHECK-COUNT-6: vector.fma %{{.*}} : vector<64xf32>
// CHECK: scf.yield
// CHECK-NOT: scf.for
// CHECK: scf.if %[[FIRST]] -> (tensor<6x64xf32>) {
// CHECK-COUNT-6: "vector.transfer_write"
// CHECK: } else {
// CHECK-COUNT-6: "vector.transfer_read"(%[[C]],
// CHECK-COUNT-6: arith.addf %{{.*}} : vector<64xf32>
// CHECK-COUNT-6: "vector.transfer_write"
// CHECK: tensor.insert_slice {{.*}}[%[[I]], %[[J]]] [6, 64] [1, 1] {ftuner.in_bounds} : tensor<6x64xf32> into tensor<?x2304xf32>
// The residue's tiles come from the plan table, one row per residue.
// CHECK: arith.constant dense<{{\[\[}}0, 0], [1, 0], [2, 0], [2, 1], [4, 0], [4, 1]]> : tensor<6x2xindex>
// CHECK: tensor.extract %{{.*}}[%[[REM]], %{{.*}}] : tensor<6x2xindex>
// CHECK: scf.index_switch %{{.*}} -> tensor<?x2304xf32>
// CHECK-NEXT: case 1 {
// CHECK: case 2 {
// CHECK: case 4 {
// CHECK: case 6 {
// CHECK: vector.fma %{{.*}} : vector<64xf32>

// k-unroll=2 over a dynamic K: two k steps per iteration into the same accumulators, the
// odd step after. By default a dynamic k extent takes one step per iteration (ONE).
// RUN: ftuner-opt %S/Inputs/matmul_dynamic_k.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels{pack-a=false pack-b=false k-unroll=2},canonicalize,cse)" | FileCheck %s --check-prefix=TWO
// RUN: ftuner-opt %S/Inputs/matmul_dynamic_k.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels{pack-a=false pack-b=false},canonicalize,cse)" | FileCheck %s --check-prefix=ONE
// ONE: %[[STEP:.*]] = arith.minsi %{{.*}}, %c672 : index
// ONE: %[[KS:.*]] = arith.minsi %[[STEP]], %{{.*}} : index
// ONE: %{{.*}}:6 = scf.for %[[K:.*]] = %c0 to %[[KS]] step %{{c1.*}} iter_args
// ONE-COUNT-6: vector.fma %{{.*}} : vector<64xf32>
// ONE-NEXT: scf.yield
// TWO: %[[STEP:.*]] = arith.minsi %{{.*}}, %c672 : index
// TWO: %[[KS:.*]] = arith.minsi %[[STEP]], %{{.*}} : index
// TWO: %[[B:.*]] = tensor.extract_slice %arg1[%{{.*}}, %{{.*}}] [%[[KS]], 64]
// TWO: %[[Z:.*]] = vector.broadcast %{{.*}} : f32 to vector<64xf32>
// TWO: %[[HALF:.*]] = arith.divui %[[KS]], %[[TWO:c2[_0-9]*]] : index
// TWO: %[[KMAIN:.*]] = arith.muli %[[HALF]], %[[TWO]] : index
// TWO: %[[MAIN:.*]]:6 = scf.for %[[K:.*]] = %c0 to %[[KMAIN]] step %[[TWO]] iter_args(%{{.*}} = %[[Z]], %{{.*}} = %[[Z]],
// TWO: "vector.transfer_read"(%[[B]], %[[K]], %c0, %{{.*}})
// TWO-COUNT-6: vector.fma %{{.*}} : vector<64xf32>
// TWO: %[[K1:.*]] = arith.addi %[[K]], %c1
// TWO: "vector.transfer_read"(%[[B]], %[[K1]], %c0, %{{.*}})
// TWO-COUNT-6: vector.fma %{{.*}} : vector<64xf32>
// TWO: scf.yield
// TWO: scf.for %[[KR:.*]] = %[[KMAIN]] to %[[KS]] step %{{c1.*}} iter_args(%{{.*}} = %[[MAIN]]#0,
// TWO: "vector.transfer_read"(%[[B]], %[[KR]], %c0, %{{.*}})
// TWO-COUNT-6: vector.fma %{{.*}} : vector<64xf32>
// TWO: scf.yield

// pack-b (default): a contiguous B is packed into [N/nr][K][nr] panels when at least one
// whole mc block of rows will read it (M >= 240), decided at run time.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=PACKB
// PACKB: %[[M:.*]] = tensor.dim %arg0, %c0
// PACKB: %[[MANY:.*]] = arith.cmpi sge, %[[M]], %c240 : index
// PACKB-NEXT: scf.if %[[MANY]]
// PACKB: tensor.empty() : tensor<36x768x64xf32>
// PACKB: } else {
// PACKB: tensor.extract_slice %transposed[

// pack-a (default): in the mc loop, A's block is copied contiguous (16-lane rows, the k
// remainder element by element) when it has at least mc/2 = 120 rows and at least 8 N
// tiles (512 columns) read it, decided at run time; the tiles then slice the copy.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=PACKA
// PACKA: scf.for %[[I0:.*]] = %c0 to %{{.*}} step %c240
// PACKA: %[[MB:.*]] = arith.minsi %{{.*}}, %c240 : index
// PACKA: %[[BIG:.*]] = arith.cmpi sge, %[[MB]], %c120 : index
// (N = 2304 is static: the width test folds away.)
// PACKA: scf.if %[[BIG]]
// PACKA: %[[AP0:.*]] = tensor.empty(%[[MB]]) : tensor<?x384xf32>
// (The block's 384 columns are 24 copies of 16 lanes: no remainder copied element by
// element.)
// PACKA: "vector.transfer_read"(%arg0,
// PACKA: "vector.transfer_write"
// PACKA-NOT: tensor.extract %arg0
// PACKA: tensor.extract_slice %{{.*}}[%{{.*}}, 0] [6, 384] [1, 1] {ftuner.in_bounds} : tensor<?x?xf32> to tensor<6x384xf32>
// PACKA: } else {
// PACKA: tensor.extract_slice %arg0[
// Whole k blocks of a static K (two of 384) through the packed A block: at M = 130 (one
// mc block of 130 rows, A packed, B read in place) and 250 (B packed; a block of 240
// rows packed and one of 10 not), against the interpreter.
// RUN: ftuner-run %examples/dense_dynamic.mlir --shape 0=130x768 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=PADOK
// RUN: ftuner-run %examples/dense_dynamic.mlir --shape 0=250x768 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=PADOK
// The packed and unpacked nests agree with the interpreter at M = 1100 (packed; N = 530
// is 8 full tiles and a residue, K = 40 two 16-lane copies and a remainder).
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=1100x40 --shape 1=40x530 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=PADOK

// vector-bodies=0 keeps a linalg.generic per tile.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels{vector-bodies=0 k-blocking=false mc-blocking=false},canonicalize,cse)" | FileCheck %s --check-prefix=GENERIC
// GENERIC-NOT: vector.fma
// GENERIC-NOT: arith.minsi
// GENERIC: linalg.generic {{.*}} outs(%{{.*}} : tensor<6x64xf32>)
// GENERIC: } -> tensor<6x64xf32>

// Upstream MLIR takes the vector bodies down to LLVM (bufferization included).
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | mlir-opt-22 --one-shot-bufferize=bufferize-function-boundaries --convert-linalg-to-loops --convert-vector-to-scf --expand-strided-metadata --lower-affine --convert-scf-to-cf --convert-vector-to-llvm --finalize-memref-to-llvm --convert-math-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM
// LLVM: llvm.intr.fmuladd

// Upstream accepts the result.
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=a100},lower-ukernels)" --mlir-pass-statistics -o %t.mlir 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: (S) 8 num-lowered
// STATS: (S) 0 num-skipped
// RUN: mlir-opt-22 %t.mlir -o /dev/null

// Convolutions (implicit GEMM) lower too: rows of a tile are delinearized output
// positions, the window is index arithmetic on A, the k dims are nested loops.
// RUN: ftuner-opt %examples/dcgan_generator.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --mlir-pass-statistics -o %t.conv.mlir 2>&1 | FileCheck %s --check-prefix=CONV
// CONV: (S) 5 num-lowered
// CONV: (S) 0 num-skipped
// The FCHW filter is first copied channels-last (CHWF), so B's rows load as vectors:
// RUN: FileCheck %s --check-prefix=CONVIR < %t.conv.mlir
// CONVIR: #[[CHWF:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d3, d0, d1, d2)>
// CONVIR-NOT: ukernel.patch
// CONVIR: %[[E:.*]] = tensor.empty() : tensor<100x4x4x512xf32>
// CONVIR: linalg.generic {indexing_maps = [#[[CHWF]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<512x100x4x4xf32>) outs(%[[E]] : tensor<100x4x4x512xf32>)
// CONVIR: arith.remui
// CONVIR: arith.divui
// CONVIR: vector.fma
// RUN: mlir-opt-22 %t.conv.mlir -o /dev/null

// Padded plans (residue 5 covered by one 6-row tile): A and C grow by the padding
// of the run-time residue (a table), the loops run over the padded tensors, and the result
// is cut back to M rows.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels="target=zen4 max-ukernels=1 max-padding=1" --lower-ukernels 2>&1 | FileCheck %s --check-prefix=PAD
// PAD-NOT: remark
// PAD: %[[PADS:.*]] = arith.constant dense<[0, 0, 0, 0, 0, 1]> : tensor<6xindex>
// PAD: %[[P:.*]] = tensor.extract %[[PADS]][%{{.*}}] : tensor<6xindex>
// PAD: tensor.pad %arg0 low[0, 0] high[%[[P]], 0]
// PAD: tensor.pad %{{.*}} low[0, 0] high[%[[P]], 0]
// PAD-NOT: ukernel.patch
// PAD: tensor.extract_slice %{{.*}}[0, 0] [%{{.*}}, %{{.*}}] [1, 1] {ftuner.in_bounds} : tensor<?x2304xf32> to tensor<?x2304xf32>
// M = 5 and 41 (residue 5) are padded, 28 is not.
// RUN: ftuner-run %examples/dense_dynamic.mlir --shape 0=5x768 --pass-pipeline="builtin.module(patch-ukernels{target=zen4 max-ukernels=1 max-padding=1},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=PADOK
// RUN: ftuner-run %examples/dense_dynamic.mlir --shape 0=41x768 --pass-pipeline="builtin.module(patch-ukernels{target=zen4 max-ukernels=1 max-padding=1},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=PADOK
// RUN: ftuner-run %examples/dense_dynamic.mlir --shape 0=28x768 --pass-pipeline="builtin.module(patch-ukernels{target=zen4 max-ukernels=1 max-padding=1},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=PADOK
// PADOK: check: ok

// pack-b takes auto, true or false.
// RUN: not ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels{pack-b=maybe})" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADPACK
// BADPACK: error: pack-b must be auto, true or false, got 'maybe'
// A strided B (an NT batch-matmul with dynamic dims: B is [n][k]) is transposed into
// [k][n], per batch, when a full row strip (M >= 6), at least K rows (A is contiguous
// along k too, so B read in place takes the dot-product form, which wins below M = K)
// and a full block (N >= 16) exist, decided at run time; the patch then reads it as an
// NN contraction. Otherwise B is read in place. The transposition is a permuted copy
// (convert-linalg-to-loops turns it into 16 x 16 blocks transposed in registers; its
// test checks that).
// RUN: ftuner-opt %S/Inputs/bmm-nt-generic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=AUTOPACK
// AUTOPACK-DAG: #[[SWAP:map[0-9]*]] = affine_map<(d0, d1) -> (d1, d0)>
// AUTOPACK: %[[STRIP0:.*]] = arith.cmpi sge, %[[M:.*]], %c6 : index
// AUTOPACK: %[[LONG:.*]] = arith.cmpi sge, %[[M]], %{{.*}} : index
// AUTOPACK: %[[STRIP:.*]] = arith.andi %[[STRIP0]], %[[LONG]] : i1
// AUTOPACK: %[[BLOCK:.*]] = arith.cmpi sge, %{{.*}}, %c16 : index
// AUTOPACK: %[[BOTH:.*]] = arith.andi %[[STRIP]], %[[BLOCK]] : i1
// AUTOPACK: scf.if %[[BOTH]] -> (tensor<?x?xf32>) {
// AUTOPACK: %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf32>
// AUTOPACK: %[[BT:.*]] = linalg.generic {indexing_maps = [#[[SWAP]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<?x?xf32>) outs(%[[E]] : tensor<?x?xf32>)
// AUTOPACK: linalg.yield %in : f32
// AUTOPACK: tensor.extract_slice %[[BT]][
// AUTOPACK: } else {
// AUTOPACK-NOT: linalg.generic
// AUTOPACK: scf.yield
// With 8 lanes (Zen 3, AVX2) the dot products lose to the transposition's 8 x 8 blocks
// from N = 16 whatever K: no M >= K condition (docs/patch-ukernels.md).
// RUN: ftuner-opt %S/Inputs/bmm-nt-generic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen3},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=AUTOPACK8
// AUTOPACK8: %[[STRIP:.*]] = arith.cmpi sge, %[[M:.*]], %c6 : index
// AUTOPACK8-NOT: arith.cmpi sge, %[[M]]
// AUTOPACK8: %[[BLOCK:.*]] = arith.cmpi sge, %{{.*}}, %c16 : index
// AUTOPACK8: %[[BOTH:.*]] = arith.andi %[[STRIP]], %[[BLOCK]] : i1
// AUTOPACK8: scf.if %[[BOTH]] -> (tensor<?x?xf32>) {
// The transposition's blocks, edges and corner, and both branches, against the
// interpreter (N < 16, M < K, and both with every edge).
// RUN: ftuner-run %S/Inputs/bmm-nt-generic.mlir --shape 0=3x13x40 --shape 1=3x15x40 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=TRANSOK
// RUN: ftuner-run %S/Inputs/bmm-nt-generic.mlir --shape 0=2x37x35 --shape 1=2x35x35 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=TRANSOK
// RUN: ftuner-run %S/Inputs/bmm-nt-generic.mlir --shape 0=2x30x35 --shape 1=2x35x35 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=TRANSOK
// TRANSOK: check: ok

// Loops whose iterations write disjoint tiles are marked 'ftuner.parallel': full N
// tiles, full M strips, A's packed rows, batches. convert-to-llvm runs the outermost on
// the thread pool; on three threads the results still match the interpreter (a
// transposition buffer per batch, not one hoisted out of the parallel batch loop).
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=PAR
// PAR: scf.for %{{.*}} step %c64{{(_[0-9]+)?}} iter_args(
// PAR: } {ftuner.parallel}
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels{parallel=false},canonicalize,cse)" | FileCheck %s --check-prefix=NOPAR
// NOPAR-NOT: ftuner.parallel
// RUN: ftuner-opt %S/Inputs/bmm-nt-generic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse,bufferize)" | FileCheck %s --check-prefix=PARBATCH
// PARBATCH: scf.for %[[B:.*]] = %c0 to %{{.*}} step %c1 {
// PARBATCH-NEXT: memref.subview %arg0[%[[B]], 0, 0]
// PARBATCH: memref.alloc(
// The batch loop is the last op before the return, and it is marked.
// RUN: ftuner-opt %S/Inputs/bmm-nt-generic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse,bufferize)" | grep -B1 "return %alloc" | FileCheck %s --check-prefix=PARBATCHEND
// PARBATCHEND: } {ftuner.parallel}
// PARBATCHEND-NEXT: return
// RUN: ftuner-run %S/Inputs/bmm-nt-generic.mlir --shape 0=7x37x35 --shape 1=7x35x35 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check --threads 3 | FileCheck %s --check-prefix=TRANSOK
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=1100x40 --shape 1=40x530 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check --threads 3 | FileCheck %s --check-prefix=PADOK

// A zero-filled init is never read: the register tiles store their sums in the first k
// block (scf.if on k0 == 0) and add them to C in the others; the fill is gone. An empty
// reduction still writes the zeros.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=ZEROINIT
// ZEROINIT-NOT: linalg.fill
// ZEROINIT: %[[FIRST:.*]] = arith.cmpi eq, %[[K0:.*]], %c0 : index
// ZEROINIT: scf.if %[[FIRST]] -> (tensor<6x64xf32>) {
// (the bias epilogue on the rows, in registers, in the last k block; then the store)
// ZEROINIT-NEXT: scf.if %{{.*}} -> (vector<64xf32>,
// ZEROINIT: } else {
// ZEROINIT: }
// ZEROINIT-NEXT: "vector.transfer_write"
// ZEROINIT: } else {
// ZEROINIT-NEXT: "vector.transfer_read"
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=5x0 --shape 1=0x7 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=EMPTYK
// EMPTYK: result #0: tensor 5x7xf32 min 0.000000 max 0.000000
// EMPTYK: check: ok

// Small tiles: a 1 x 32 tile (an edge of a dynamic N) has two accumulator registers,
// fewer than the FMA pipeline holds (zen4's model: latency 4 x one 512-bit FMA per cycle
// on 256-bit units): its k loop runs two sets of accumulators (k step 2), a remainder
// loop, and the sets are summed.
// RUN: ftuner-opt %examples/kernels/matmul_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=CHAINS
// CHAINS: scf.for %{{.*}} = %c0 to %[[KMAIN:.*]] step %c2 iter_args({{.*}}) -> (vector<32xf32>, vector<32xf32>) {
// CHAINS: scf.for %{{.*}} = %[[KMAIN]] to %{{.*}} step %c1 iter_args({{.*}}) -> (vector<32xf32>) {
// CHAINS: arith.addf %{{.*}}, %{{.*}} : vector<32xf32>
// RUN: ftuner-run %examples/dense_dynamic.mlir --shape 0=3x768 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=PADOK
// RUN: ftuner-run %examples/kernels/matmul_dynamic.mlir --shape 0=3x7 --shape 1=7x33 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=PADOK

// NT tiles narrower than a vector (no transposition: M < K here): dot products along
// k (rows of A and of B read whole), reduced by a shuffle network to C's row, then the
// k remainder (K = 40: two blocks of 16 and 8 left).
// RUN: ftuner-opt %S/Inputs/bmm-nt-generic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=DOT
// DOT: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// DOT: "vector.shuffle"({{.*}}) <{mask = array<i64: 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23>}>
// DOT: "vector.shuffle"({{.*}}) <{mask = array<i64: 0, 8>}> : (vector<16xf32>, vector<16xf32>) -> vector<2xf32>
// RUN: ftuner-run %S/Inputs/bmm-nt-generic.mlir --shape 0=3x5x40 --shape 1=3x7x40 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=TRANSOK
// RUN: ftuner-run %S/Inputs/bmm-nt-generic.mlir --shape 0=2x13x3 --shape 1=2x9x3 --pass-pipeline="builtin.module(patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=TRANSOK
