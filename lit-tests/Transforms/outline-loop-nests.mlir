// outline-loop-nests: top-level loop nests of a function on buffers move into private
// functions; identical nests (here the same scaling of two different buffers) share one;
// constants are cloned in; an argument viewing a caller allocation nothing else passed
// to the call views is llvm.noalias, one that is a function argument of the caller is not.
// The JIT (which runs the pass before convert-to-llvm) agrees with the interpreter.
// RUN: ftuner-opt %s --outline-loop-nests --mlir-pass-statistics 2>&1 | FileCheck %s
// RUN: ftuner-opt %s --outline-loop-nests --convert-to-llvm | %mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// RUN: ftuner-run %s --shape 0=9 --check | FileCheck %s --check-prefix=JIT
// REQUIRES: mlir-translate
// JIT: check: ok

// CHECK-LABEL: func.func @twice(
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: call @twice_nest0(%[[N:.*]], %arg0, %[[A]])
// CHECK: %[[B:.*]] = memref.alloc
// CHECK: call @twice_nest0(%[[N]], %[[A]], %[[B]])
// CHECK-NOT: scf.for
// CHECK: return %[[B]]
// CHECK: func.func private @twice_nest0(%arg0: index, %arg1: memref<?xf32>, %arg2: memref<?xf32> {llvm.noalias}) attributes {ftuner.noinline}
// CHECK: arith.constant 2.0
// CHECK: scf.for
// CHECK: 1 num-outlined - Loop nests outlined
// CHECK-NEXT: 1 num-deduplicated
// IR: define private void @twice_nest0(i64 %0, ptr %1, ptr %2, i64 %3, i64 %4, i64 %5, ptr noalias %6, ptr noalias %7,
// IR-SAME: #[[ATTRS:[0-9]+]]
// IR: attributes #[[ATTRS]] = { noinline }
func.func @twice(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %a[%i] : memref<?xf32>
  }
  %b = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %b[%i] : memref<?xf32>
  }
  memref.dealloc %a : memref<?xf32>
  return %b : memref<?xf32>
}
