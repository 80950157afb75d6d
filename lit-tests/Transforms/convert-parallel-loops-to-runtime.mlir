// convert-parallel-loops-to-runtime outlines the outermost scf.for marked
// 'ftuner.parallel': the loop moves into a private function over an iteration range
// [lo, hi) (its body unchanged, the constants it reads cloned in, the rest arguments; a
// fresh allocation no other argument reaches is llvm.noalias), and rt.parallel_for of the
// trip count takes its place. A marked loop of a dynamic trip count holding marked loops
// (here rows over columns; in models a batch of GEMMs over their tile loops) is nested: the
// marked loops of its body are outlined in turn (one level), and the runtime splits the
// outer loop when its iterations divide evenly among the threads or are many, else runs
// it on the calling thread and lets the inner loops use the pool. convert-to-llvm makes
// rt.parallel_for a call of the pool with the arguments in a struct on the stack, which
// the callee's pool entry takes apart; without the outlining pass every loop stays serial.
// Upstream's translation to LLVM IR accepts the result, and the JIT runs it on one, two
// and three threads, the rows split or not, with the interpreter's results.
// RUN: ftuner-opt %s --convert-parallel-loops-to-runtime --mlir-pass-statistics 2>%t.stats | FileCheck %s --check-prefix=OUTLINE
// RUN: FileCheck %s --check-prefix=STATS < %t.stats
// RUN: ftuner-opt %s --convert-parallel-loops-to-runtime | ftuner-opt --convert-parallel-loops-to-runtime | FileCheck %s --check-prefix=OUTLINE
// RUN: ftuner-opt %s --convert-parallel-loops-to-runtime --convert-to-llvm | FileCheck %s
// RUN: ftuner-opt %s --convert-to-llvm | FileCheck %s --check-prefix=SERIAL
// RUN: ftuner-opt %s --convert-parallel-loops-to-runtime --convert-to-llvm | %mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// Rows split by the pool (37 on two and three threads: at least 8 per thread; 38: even)
// and rows run by the caller with the columns on the pool (5 on two threads).
// RUN: ftuner-run %s --shape 0=37x5 --check --threads 1 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=37x5 --check --threads 2 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=38x5 --check --threads 2 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=5x5 --check --threads 2 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=37x5 --check --threads 3 | FileCheck %s --check-prefix=JIT
// RUN: not ftuner-run %s --shape 0=37x5 --threads 0 2>&1 | FileCheck %s --check-prefix=BADTHREADS
// REQUIRES: mlir-translate

// At the loop: the trip count (the dim, never below 0), then the call with what the body
// reads. The second run of the pass finds nothing left to outline.
// OUTLINE-LABEL: func.func @scale_rows(%arg0: memref<?x5xf32>, %arg1: f32)
// OUTLINE: %[[ALLOC:.*]] = memref.alloc
// OUTLINE: %[[N:.*]] = arith.maxsi %dim, %{{.*}} : index
// OUTLINE-NEXT: rt.parallel_for @scale_rows_par0(%[[N]]) args(%arg0, %arg1, %[[ALLOC]] : memref<?x5xf32>, f32, memref<?x5xf32>) {nested}
// OUTLINE-NEXT: return
// The rows: the loop over lo .. hi, its body as it was but for the inner marked loop,
// outlined in turn (not nested: one level). The output, a fresh allocation that no other
// argument reaches, is noalias; the input, an argument of the caller, is not.
// OUTLINE: func.func private @scale_rows_par0(%arg0: index, %arg1: index, %arg2: memref<?x5xf32>, %arg3: f32, %arg4: memref<?x5xf32> {llvm.noalias})
// OUTLINE: scf.for %[[I:.*]] = %arg0 to %arg1 step %c1 {
// OUTLINE-NEXT: arith.index_cast %[[I]]
// OUTLINE-NEXT: %[[F:.*]] = arith.sitofp
// OUTLINE-NEXT: %[[C5:.*]] = arith.constant 5 : index
// OUTLINE-NEXT: rt.parallel_for @scale_rows_par1(%[[C5]]) args(%arg2, %[[I]], %arg3, %[[F]], %arg4 : memref<?x5xf32>, index, f32, f32, memref<?x5xf32>){{$}}
// OUTLINE: func.func private @scale_rows_par1(%arg0: index, %arg1: index, %arg2: memref<?x5xf32>, %arg3: index, %arg4: f32, %arg5: f32, %arg6: memref<?x5xf32> {llvm.noalias})
// OUTLINE: scf.for %[[J:.*]] = %arg0 to %arg1 step %c1 {
// OUTLINE-NEXT: memref.load %arg2[%arg3, %[[J]]]
// OUTLINE-NOT: ftuner.parallel
// OUTLINE-NOT: rt.parallel_for
// STATS: 2 num-parallel-loops
// STATS: 1 num-nested

// CHECK-LABEL: sym_name = "scale_rows"
// The context: a stack slot taken in the entry block (once per call, wherever the loop
// is), the arguments in a struct stored in it (a buffer as its descriptor).
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: "llvm.mlir.constant"
// CHECK-NEXT: "llvm.alloca"(%{{.*}}) <{alignment = 8 : i64, elem_type = !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, f32, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>}>
// CHECK: "llvm.insertvalue"
// CHECK: "llvm.store"
// CHECK: %[[F:.*]] = "llvm.mlir.addressof"() <{global_name = @scale_rows_par0_pool}> : () -> !llvm.ptr
// CHECK: "llvm.call"(%[[F]], %{{.*}}, %{{.*}}) <{callee = @ftuner_rt_parallel_for_nested,
// CHECK: sym_name = "_mlir_ciface_scale_rows"
// What the pool calls: the context taken apart, the buffers' descriptors expanded, then
// the body over lo .. hi.
// CHECK: linkage = #llvm.linkage<private>, sym_name = "scale_rows_par0_pool"
// CHECK: ^bb0(%[[CTX:.*]]: !llvm.ptr, %[[LO:.*]]: i64, %[[HI:.*]]: i64):
// CHECK: "llvm.load"(%[[CTX]])
// CHECK: "llvm.call"(%[[LO]], %[[HI]], {{.*}}) <{callee = @scale_rows_par0,
// The body: the output's pointers noalias, as the function declares the buffer.
// CHECK: arg_attrs = [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {llvm.noalias}, {llvm.noalias}, {}, {}, {}, {}, {}]
// CHECK-SAME: sym_name = "scale_rows_par0"
// CHECK: "llvm.mlir.addressof"() <{global_name = @scale_rows_par1_pool}>
// CHECK: <{callee = @ftuner_rt_parallel_for,
// CHECK: sym_name = "scale_rows_par1_pool"
// CHECK: sym_name = "scale_rows_par1"
// CHECK-NOT: ftuner_rt_parallel_for(
// CHECK: sym_name = "ftuner_rt_parallel_for"
// CHECK: sym_name = "ftuner_rt_parallel_for_nested"
// SERIAL-NOT: ftuner_rt_parallel_for
// SERIAL-NOT: _par0
// IR: call void @ftuner_rt_parallel_for_nested(ptr @scale_rows_par0_pool, ptr %{{.*}}, i64 %{{.*}})
// IR: define private void @scale_rows_par0_pool(ptr %0, i64 %1, i64 %2)
// IR: define private void @scale_rows_par0(i64 %0, i64 %1, ptr %2, ptr %3, i64 %4, i64 %5, i64 %6, i64 %7, i64 %8, float %9, ptr noalias %10, ptr noalias %11,
// IR: call void @ftuner_rt_parallel_for(ptr @scale_rows_par1_pool, ptr %{{.*}}, i64 5)
// JIT: check: ok
// BADTHREADS: error: invalid value '0' for '--threads

func.func @scale_rows(%a: memref<?x5xf32>, %s: f32) -> memref<?x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %n = memref.dim %a, %c0 : memref<?x5xf32>
  %out = memref.alloc(%n) : memref<?x5xf32>
  scf.for %i = %c0 to %n step %c1 {
    %fi = arith.index_cast %i : index to i64
    %f = arith.sitofp %fi : i64 to f32
    scf.for %j = %c0 to %c5 step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x5xf32>
      %y = arith.mulf %x, %s : f32
      %z = arith.addf %y, %f : f32
      memref.store %z, %out[%i, %j] : memref<?x5xf32>
    } {ftuner.parallel}
  } {ftuner.parallel}
  return %out : memref<?x5xf32>
}
