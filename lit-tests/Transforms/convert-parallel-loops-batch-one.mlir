// A marked loop of one iteration by its constant bounds (the batch of one of a 1x?x768
// generic, which convert-linalg-to-loops marks together with the loop inside it) is not
// outlined: it stays a loop in the function and the marked loop inside it goes to the
// thread pool. Outlined, the one-iteration loop took the pool and the rows ran serially
// in its body (GPT-2 small's elementwise ops at two threads; seq 75: 72.7 -> 65.2 ms).
// RUN: ftuner-opt %s --convert-parallel-loops-to-runtime | FileCheck %s
// RUN: ftuner-opt %s --convert-parallel-loops-to-runtime --convert-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: ftuner-run %s --shape 0=1x37x5 --check --threads 1 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=1x37x5 --check --threads 3 | FileCheck %s --check-prefix=JIT

// CHECK-LABEL: func.func @batch_one
// The one-iteration loop, in the function, around the call.
// CHECK: scf.for %[[B:.*]] = %c0 to %c1 step %c1 {
// CHECK: rt.parallel_for @batch_one_par0(%{{.*}}) args(%arg0, %[[B]], %arg1, %alloc :
// CHECK-NEXT: } {ftuner.parallel}
// The outlined body: the chunk of rows and the columns inside, not the batch.
// CHECK: func.func private @batch_one_par0(
// CHECK-COUNT-2: scf.for
// CHECK-NOT: scf.for
// CHECK: return
// LLVM: "llvm.call"(%{{.*}}) <{callee = @ftuner_rt_parallel_for,
// JIT: check: ok

func.func @batch_one(%a: memref<1x?x5xf32>, %s: f32) -> memref<1x?x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %n = memref.dim %a, %c1 : memref<1x?x5xf32>
  %out = memref.alloc(%n) : memref<1x?x5xf32>
  scf.for %b = %c0 to %c1 step %c1 {
    scf.for %i = %c0 to %n step %c1 {
      %fi = arith.index_cast %i : index to i64
      %f = arith.sitofp %fi : i64 to f32
      scf.for %j = %c0 to %c5 step %c1 {
        %x = memref.load %a[%b, %i, %j] : memref<1x?x5xf32>
        %y = arith.mulf %x, %s : f32
        %z = arith.addf %y, %f : f32
        memref.store %z, %out[%b, %i, %j] : memref<1x?x5xf32>
      }
    } {ftuner.parallel}
  } {ftuner.parallel}
  return %out : memref<1x?x5xf32>
}
