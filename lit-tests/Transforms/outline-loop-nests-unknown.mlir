// outline-loop-nests marks no argument llvm.noalias when some buffer passed to the nest
// is of unknown origin: here %m, chosen by a select, is %p or %q, so neither allocation
// may be noalias (marked, LLVM could keep %p's values in registers across stores through
// %m). The pool's outlining after it sees plain arguments and marks nothing either. The
// JIT agrees with the interpreter (random choices).
// RUN: ftuner-opt %s --outline-loop-nests | FileCheck %s
// RUN: ftuner-opt %s --outline-loop-nests --convert-parallel-loops-to-runtime | FileCheck %s --check-prefix=POOL
// RUN: ftuner-run %s --shape 0=9 --seed 1 --check --threads 2 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=9 --seed 2 --check --threads 2 | FileCheck %s --check-prefix=JIT
// JIT: check: ok

// CHECK-LABEL: func.func @chosen(
// CHECK: call @chosen_nest0(
// CHECK: func.func private @chosen_nest0(
// CHECK-NOT: llvm.noalias
// CHECK-SAME: attributes {ftuner.noinline}
// POOL: func.func private @chosen_nest0_par0(
// POOL-NOT: llvm.noalias
// POOL-SAME: {
func.func @chosen(%x: memref<?xf32>, %c: i1) -> (memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %p = memref.alloc(%n) : memref<?xf32>
  %q = memref.alloc(%n) : memref<?xf32>
  %m = arith.select %c, %p, %q : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %p[%i] : memref<?xf32>
    memref.store %v, %q[%i] : memref<?xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %m[%i] : memref<?xf32>
    %u = memref.load %p[%i] : memref<?xf32>
    %s = arith.addf %u, %w : f32
    memref.store %s, %q[%i] : memref<?xf32>
  } {ftuner.parallel}
  return %p, %q : memref<?xf32>, memref<?xf32>
}
