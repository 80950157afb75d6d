// convert-parallel-loops-to-runtime: an outlined parallel loop takes the buffers it reads
// from outside as `llvm.noalias` arguments when nothing else it reaches can touch them —
// each the one argument rooted in a fresh allocation of the enclosing function. Two
// arguments viewing the same allocation, and function arguments (which may alias each
// other), stay plain; convert-to-llvm makes the noalias ones `noalias` pointers.
// RUN: ftuner-opt %s --split-input-file --convert-parallel-loops-to-runtime | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --convert-parallel-loops-to-runtime --convert-to-llvm | %mlir-translate --split-input-file --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// RUN: ftuner-run %s --entry halves --shape 0=6x8 --check --threads 2 | FileCheck %s --check-prefix=JIT
// The interpreter selects whole buffers too (the driver fuzzer found --check refused @chosen).
// RUN: ftuner-run %s --entry chosen --shape 0=8 --check | FileCheck %s --check-prefix=JIT
// REQUIRES: mlir-translate
// JIT: check: ok

// Two halves of one allocation written in one loop: no noalias (each half's pointer
// reaches the other's memory through the shared allocation).
// CHECK-LABEL: func.func @halves
// CHECK: rt.parallel_for @halves_par0
// CHECK-NOT: llvm.noalias
// CHECK: func.func private @halves_par0(%arg0: index, %arg1: index, %arg2: memref<?x8xf32>, %arg3: memref<?x4xf32, strided<[8, 1]>>, %arg4: memref<?x4xf32, strided<[8, 1], offset: 4>>)
// IR-LABEL: define private void @halves_par0(i64 %0, i64 %1, ptr %2, ptr %3, i64 %4, i64 %5, i64 %6, i64 %7, i64 %8, ptr %9, ptr %10,
func.func @halves(%a: memref<?x8xf32>) -> memref<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  %out = memref.alloc(%n) : memref<?x8xf32>
  %lo = memref.subview %out[0, 0] [%n, 4] [1, 1] : memref<?x8xf32> to memref<?x4xf32, strided<[8, 1]>>
  %hi = memref.subview %out[0, 4] [%n, 4] [1, 1] : memref<?x8xf32> to memref<?x4xf32, strided<[8, 1], offset: 4>>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x8xf32>
      %j4 = arith.addi %j, %c4 : index
      %y = memref.load %a[%i, %j4] : memref<?x8xf32>
      memref.store %y, %lo[%i, %j] : memref<?x4xf32, strided<[8, 1]>>
      memref.store %x, %hi[%i, %j] : memref<?x4xf32, strided<[8, 1], offset: 4>>
    }
  } {ftuner.parallel}
  return %out : memref<?x8xf32>
}

// -----

// A function argument and two allocations: the allocations come in noalias, the argument
// does not.
// CHECK-LABEL: func.func @two_outputs
// CHECK: rt.parallel_for @two_outputs_par0(%{{.*}}) args(%arg0, %alloc, %alloc_0 :
// CHECK: func.func private @two_outputs_par0(%arg0: index, %arg1: index, %arg2: memref<?xf32>, %arg3: memref<?xf32> {llvm.noalias}, %arg4: memref<?xf32> {llvm.noalias})
// IR: define private void @two_outputs_par0(i64 %0, i64 %1, ptr %2, ptr %3, i64 %4, i64 %5, i64 %6, ptr noalias %7, ptr noalias %8, i64 %9, i64 %10, i64 %11, ptr noalias %12, ptr noalias %13,
func.func @two_outputs(%a: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %p = memref.alloc(%n) : memref<?xf32>
  %q = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %x, %p[%i] : memref<?xf32>
    memref.store %y, %q[%i] : memref<?xf32>
  } {ftuner.parallel}
  return %p, %q : memref<?xf32>, memref<?xf32>
}

// -----

// A buffer of unknown origin (here chosen by a select, which may be %p itself): nothing
// is noalias.
// CHECK-LABEL: func.func @chosen
// CHECK: rt.parallel_for @chosen_par0
// CHECK-NOT: llvm.noalias
// CHECK: func.func private @chosen_par0(
// CHECK-NOT: llvm.noalias
func.func @chosen(%a: memref<?xf32>, %c: i1) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %p = memref.alloc(%n) : memref<?xf32>
  %q = memref.alloc(%n) : memref<?xf32>
  %m = arith.select %c, %p, %q : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %p[%i] : memref<?xf32>
    %y = memref.load %m[%i] : memref<?xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %q[%i] : memref<?xf32>
  } {ftuner.parallel}
  return %q : memref<?xf32>
}
