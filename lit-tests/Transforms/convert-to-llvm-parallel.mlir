// convert-to-llvm outlines the outermost scf.for marked 'ftuner.parallel': its body
// becomes a private function over an iteration range, the values it uses from outside
// travel in a struct on the stack, and the loop becomes a call of the runtime's thread
// pool. A marked loop holding marked loops (here rows over columns; in models a batch of
// GEMMs over their tile loops) calls the runtime's nested entry, and the marked loops of
// its outlined body are outlined in turn (one level): the runtime splits the outer loop
// when its iterations divide evenly among the threads or are many, else runs it on the
// calling thread and lets the inner loops use the pool. parallel=false keeps every loop
// serial. Upstream's translation to LLVM IR accepts the result, and the JIT runs it on one,
// two and three threads, the rows split or not, with the interpreter's results.
// RUN: ftuner-opt %s --convert-to-llvm --mlir-pass-statistics 2>%t.stats | FileCheck %s
// RUN: FileCheck %s --check-prefix=STATS < %t.stats
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(convert-to-llvm{parallel=false})' | FileCheck %s --check-prefix=SERIAL
// RUN: ftuner-opt %s --convert-to-llvm | %mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// Rows split by the pool (37 on two and three threads: at least 8 per thread; 38: even)
// and rows run by the caller with the columns on the pool (5 on two threads).
// RUN: ftuner-run %s --shape 0=37x5 --check --threads 1 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=37x5 --check --threads 2 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=38x5 --check --threads 2 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=5x5 --check --threads 2 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=37x5 --check --threads 3 | FileCheck %s --check-prefix=JIT
// RUN: not ftuner-run %s --shape 0=37x5 --threads 0 2>&1 | FileCheck %s --check-prefix=BADTHREADS
// REQUIRES: mlir-translate

// CHECK-LABEL: sym_name = "scale_rows"
// The context: a stack slot taken in the entry block (once per call, wherever the loop
// is), the captured values in a struct stored in it.
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: "llvm.mlir.constant"
// CHECK-NEXT: "llvm.alloca"(%{{.*}}) <{alignment = 8 : i64, elem_type = !llvm.struct<(
// CHECK: "llvm.insertvalue"
// CHECK: "llvm.store"
// CHECK: %[[F:.*]] = "llvm.mlir.addressof"() <{global_name = @scale_rows_par0}> : () -> !llvm.ptr
// The trip count, then the call: the nested entry (the loop holds a marked loop).
// CHECK: "llvm.sdiv"
// CHECK: %[[N:.*]] = "llvm.select"
// CHECK: "llvm.call"(%[[F]], %{{.*}}, %[[N]]) <{callee = @ftuner_rt_parallel_for_nested,
// CHECK: sym_name = "_mlir_ciface_scale_rows"
// The body: iterations lo .. hi; the context loaded and taken apart. The output, a fresh
// allocation that no other captured value reaches, comes in as a noalias pointer (the
// input, a function argument, does not), so the loop runs in a function of its own.
// CHECK: arg_attrs = [{}, {}, {}, {llvm.noalias}], function_type = !llvm.func<void (ptr, i64, i64, ptr)>, linkage = #llvm.linkage<private>, sym_name = "scale_rows_par0_noalias"
// CHECK: ^bb0(%[[CTX:.*]]: !llvm.ptr, %[[LO:.*]]: i64, %[[HI:.*]]: i64, %[[OUT:.*]]: !llvm.ptr):
// CHECK: "llvm.load"(%[[CTX]])
// CHECK: "llvm.extractvalue"
// CHECK: "llvm.insertvalue"(%{{.*}}, %[[OUT]]) <{position = array<i64: 1>}>
// CHECK: "llvm.br"(%[[LO]])
// CHECK: "llvm.icmp"(%{{.*}}, %[[HI]]) <{predicate = 2 : i64}>
// The inner marked loop, outlined in turn, goes through the plain entry (which runs it
// serially inside a pool job).
// CHECK: "llvm.mlir.addressof"() <{global_name = @scale_rows_par1}>
// CHECK: <{callee = @ftuner_rt_parallel_for,
// CHECK: "llvm.return"
// What the pool calls: the output's aligned pointer out of the context, then the loop.
// CHECK: linkage = #llvm.linkage<private>, sym_name = "scale_rows_par0"
// CHECK: ^bb0(%[[C2:.*]]: !llvm.ptr, %[[LO2:.*]]: i64, %[[HI2:.*]]: i64):
// CHECK: %[[P:.*]] = "llvm.extractvalue"(%{{.*}}) <{position = array<i64: 2, 1>}>
// CHECK: "llvm.call"(%[[C2]], %[[LO2]], %[[HI2]], %[[P]]) <{callee = @scale_rows_par0_noalias
// One level only: the inner body outlines nothing.
// CHECK: sym_name = "scale_rows_par1_noalias"
// CHECK-NOT: ftuner_rt_parallel_for
// CHECK: sym_name = "scale_rows_par1"
// CHECK: sym_name = "ftuner_rt_parallel_for"
// CHECK: sym_name = "ftuner_rt_parallel_for_nested"
// STATS: 2 num-parallel-loops
// SERIAL-NOT: ftuner_rt_parallel_for
// SERIAL-NOT: _par0
// IR: call void @ftuner_rt_parallel_for_nested(ptr @scale_rows_par0, ptr %{{.*}}, i64 %{{.*}})
// IR: define private void @scale_rows_par0_noalias(ptr %0, i64 %1, i64 %2, ptr noalias %3)
// IR: call void @ftuner_rt_parallel_for(ptr @scale_rows_par1, ptr %{{.*}}, i64 5)
// IR: define private void @scale_rows_par0(ptr %0, i64 %1, i64 %2)
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
