// lower-ukernels-to-gpu, on buffers for a GPU target: each patch becomes thread-block kernels in
// `gpu.module @ftuner_kernels` and `gpu.launch_func`s over the patch plan.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=a100},bufferize,lower-ukernels-to-gpu,canonicalize,cse)" --mlir-pass-statistics -o %t.mlir 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: FileCheck %s < %t.mlir
// STATS: LowerUkernelsToGpu
// STATS: (S) 1 num-lowered
// STATS: (S) 0 num-skipped

// CHECK: module attributes {gpu.container_module}
// The M plan's residue table (main tile 256; up to 9 tiles per residue).
// CHECK: "memref.global"() <{constant, initial_value = dense<{{.*}}> : tensor<256x9xindex>, sym_name = "__dense_dynamic_p0_m_plan", sym_visibility = "private", type = memref<256x9xindex>}>
// CHECK-LABEL: func.func @dense_dynamic
// CHECK-NOT: ukernel.patch
// Run-time shape checks stay on the host.
// CHECK: cf.assert %{{.*}}, "operand shapes of the contraction at {{.*}}dense_dynamic.mlir:{{.*}} do not agree"
// All full 256x128 tiles are one grid: 2304/128 = 18 columns, M/256 rows, 512 threads.
// The kernels take A, B, C and the fused bias (the epilogue's operand), then the offsets.
// CHECK: %[[Q:.*]] = arith.divui %[[M:.*]], %c256 : index
// CHECK: scf.if
// CHECK: "gpu.launch_func"(%c18, %[[Q]], %c1, %c512, %c1, %c1, %arg0, %{{.*}}, %{{.*}}, %arg2, %c0, %c0) <{kernel = @ftuner_kernels::@dense_dynamic_p0_256x128, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 6, 0>}>
// The residue's tiles from the table, each selecting its kernel on 1000*m + n.
// CHECK: %[[T:.*]] = memref.get_global @__dense_dynamic_p0_m_plan : memref<256x9xindex>
// CHECK: scf.for %{{.*}} = %c0 to %c9 step %c1 iter_args(%[[OFF:.*]] = %{{.*}}) -> (index)
// CHECK: %[[SZ:.*]] = memref.load %[[T]][%{{.*}}, %{{.*}}] : memref<256x9xindex>
// CHECK: scf.index_switch %{{.*}}
// CHECK-NEXT: case 256128 {
// CHECK: case 64128 {
// CHECK: "gpu.launch_func"(%c18, %c1, %c1, %c256, %c1, %c1, %arg0, %{{.*}}, %{{.*}}, %arg2, %[[OFF]], %c0) <{kernel = @ftuner_kernels::@dense_dynamic_p0_64x128
// CHECK: "gpu.launch_func"(%c18, %c1, %c1, %c128, %c1, %c1, %arg0, %{{.*}}, %{{.*}}, %arg2, %[[OFF]], %c0) <{kernel = @ftuner_kernels::@dense_dynamic_p0_1x128
// The kernels: a block of (256/8) x (128/8) threads, each with 8x8 accumulators in
// registers across the K loop, fused multiply-adds, strided rows and columns.
// CHECK: "gpu.module"() <{sym_name = "ftuner_kernels"}> ({
// CHECK: "gpu.func"() ({
// CHECK: "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK: "gpu.block_id"() <{dimension = #gpu<dim y>}>
// CHECK: arith.remui %{{.*}}, %c16 : index
// CHECK: %{{.*}}:64 = scf.for %{{.*}} = %c0 to %c768 step %c1 iter_args(
// CHECK-COUNT-64: math.fma
// CHECK: scf.yield
// Each finished element gets the fused bias (one load of the bias per column) and is
// stored.
// CHECK: memref.load %arg3[%{{.*}}] : memref<2304xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: memref.store
// CHECK: gpu.return
// CHECK: }) {function_type = (memref<?x768xf32>, memref<768x2304xf32>, memref<?x2304xf32>, memref<2304xf32>, index, index) -> (), gpu.kernel, sym_name = "dense_dynamic_p0_256x128"}
// CHECK: sym_name = "dense_dynamic_p0_1x128"

// Upstream MLIR accepts the result.
// RUN: mlir-opt-22 %t.mlir -o /dev/null

// Batched (blockIdx.z is the batch) and windowed contractions (implicit GEMM on the GPU:
// flattened output positions delinearized, one loop per reduction dim).
// RUN: ftuner-opt %examples/bmm_nt_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=h100},bufferize,lower-ukernels-to-gpu,canonicalize,cse)" | FileCheck %s --check-prefix=BMM
// BMM: "gpu.launch_func"(%{{.*}}, %{{.*}}, %c192, %c512, %c1, %c1, {{.*}}@ftuner_kernels::@bmm_nt_dynamic_p0_256x128
// BMM: "gpu.block_id"() <{dimension = #gpu<dim z>}>
// RUN: ftuner-opt %examples/dcgan_generator.mlir --pass-pipeline="builtin.module(patch-ukernels{target=a100},bufferize,lower-ukernels-to-gpu,canonicalize,cse)" --mlir-pass-statistics -o %t.conv.mlir 2>&1 | FileCheck %s --check-prefix=CONV
// RUN: mlir-opt-22 %t.conv.mlir -o /dev/null
// CONV: (S) 5 num-lowered
// CONV: (S) 0 num-skipped

// The whole BERT layer: its 8 contractions become kernels; upstream accepts the module.
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --pass-pipeline="builtin.module(canonicalize,cse,patch-ukernels{target=a100},bufferize,lower-ukernels-to-gpu,canonicalize,cse)" --mlir-pass-statistics -o %t.bert.mlir 2>&1 | FileCheck %s --check-prefix=BERT
// RUN: mlir-opt-22 %t.bert.mlir -o /dev/null
// BERT: (S) 8 num-lowered
// BERT: (S) 0 num-skipped

// For a cuda target, ftuner-translate runs the same pipeline and emits the kernels.
// RUN: ftuner-translate %examples/dense_dynamic.mlir --emit=ptx --target=cuda:sm_80 | FileCheck %s --check-prefix=PTX
// RUN: ftuner-translate %examples/bmm_nt_dynamic.mlir --emit=llvm --target=cuda:sm_90 | llc-22 -march=nvptx64 -mcpu=sm_90 -o /dev/null
// PTX: .target sm_80
// PTX: .visible .entry dense_dynamic_p0_256x128(
// PTX: fma.rn.f32
// PTX: .visible .entry dense_dynamic_p0_1x128(

// A CPU patch on buffers is left alone, with the reason.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=zen4},bufferize,lower-ukernels-to-gpu)" 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: remark: not lowered: 'zen4' is a CPU target: CPU patches are lowered on tensors, by lower-ukernels before bufferize
// A patch on buffers writes its output: canonicalize and cse keep it (MemoryEffects of a
// destination-style op; it has no results, and was erased as dead before).
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=a100},bufferize,canonicalize,cse)" | FileCheck %s --check-prefix=KEEP
// KEEP: ukernel.patch
// KEEP-SAME: outs(
// And lower-ukernels leaves a patch on buffers to lower-ukernels-to-gpu, with the reason;
// lower-ukernels-to-gpu one on tensors.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=a100},bufferize,lower-ukernels)" 2>&1 | FileCheck %s --check-prefix=BUF
// BUF: remark: not lowered: a patch on buffers (GPU patches are lowered by lower-ukernels-to-gpu after bufferize; CPU patches here, before bufferize)
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(patch-ukernels{target=a100},lower-ukernels-to-gpu)" 2>&1 | FileCheck %s --check-prefix=TENSOR
// TENSOR: remark: not lowered: a patch on tensors: GPU kernels are built on buffers (run bufferize first)

// The whole BERT layer lowered for a GPU (fused bias, GELU and residual epilogues
// included), run on the reference interpreter — each launch block by block, thread by
// thread — against the layer as read.
// RUN: ftuner-run %examples/bert_layer_dynamic.mlir --shape 0=1x2x768 --backend interp --pass-pipeline="builtin.module(canonicalize,cse,patch-ukernels{target=h100},bufferize,lower-ukernels-to-gpu,canonicalize,cse)" --check | FileCheck %s --check-prefix=RUNBERT
// RUNBERT: check: ok
