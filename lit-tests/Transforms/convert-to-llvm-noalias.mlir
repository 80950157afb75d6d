// convert-to-llvm: an outlined parallel loop takes the buffers it captures as `noalias`
// pointers when nothing else it reaches can touch them — each the one capture of a fresh
// allocation of the enclosing function. Two captures viewing the same allocation, and
// function arguments (which may alias each other), stay plain fields of the context.
// RUN: ftuner-opt %s --split-input-file --convert-to-llvm | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --convert-to-llvm | %mlir-translate --split-input-file --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// RUN: ftuner-run %s --entry halves --shape 0=6x8 --check --threads 2 | FileCheck %s --check-prefix=JIT
// The interpreter selects whole buffers too (the driver fuzzer found --check refused @chosen).
// RUN: ftuner-run %s --entry chosen --shape 0=8 --check | FileCheck %s --check-prefix=JIT
// REQUIRES: mlir-translate
// JIT: check: ok

// Two halves of one allocation written in one loop: no noalias (each half's pointer
// reaches the other's memory through the shared allocation).
// CHECK-LABEL: sym_name = "halves"
// CHECK-NOT: llvm.noalias
// CHECK: sym_name = "halves_par0"
// CHECK-NOT: llvm.noalias
// CHECK: sym_name = "ftuner_rt_parallel_for"
// IR-LABEL: define private void @halves_par0(ptr %0, i64 %1, i64 %2)
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

// A function argument and two allocations: the allocations come in noalias (the fourth
// and fifth parameters), the argument does not.
// CHECK-LABEL: sym_name = "two_outputs"
// CHECK: arg_attrs = [{}, {}, {}, {llvm.noalias}, {llvm.noalias}], function_type = !llvm.func<void (ptr, i64, i64, ptr, ptr)>, linkage = #llvm.linkage<private>, sym_name = "two_outputs_par0_noalias"
// CHECK: sym_name = "two_outputs_par0"
// CHECK: "llvm.call"({{.*}}) <{callee = @two_outputs_par0_noalias
// IR: define private void @two_outputs_par0_noalias(ptr %0, i64 %1, i64 %2, ptr noalias %3, ptr noalias %4)
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

// A captured buffer of unknown origin (here chosen by a select, which may be %p itself):
// nothing is noalias.
// CHECK-LABEL: sym_name = "chosen"
// CHECK-NOT: llvm.noalias
// CHECK: sym_name = "ftuner_rt_parallel_for"
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
