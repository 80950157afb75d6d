// convert-parallel-loops-to-runtime on a loop of a lower bound and step known only at
// run time (sizes of two arguments): the call site checks the step and computes the trip
// count ceildiv(ub - lb, step) (at least 0); the body runs lb + lo * step .. lb + hi *
// step. A marked loop of a static count holding a marked loop is not nested: its body's
// loop stays serial, unmarked, so that running the pass again changes nothing. The JIT
// (two and three threads, chunks that divide and not) and the interpreter on the outlined
// form (rt.parallel_for run as one call) agree with the interpreter on the input.
// RUN: ftuner-opt %s --convert-parallel-loops-to-runtime | FileCheck %s
// RUN: ftuner-opt %s --convert-parallel-loops-to-runtime --convert-parallel-loops-to-runtime | FileCheck %s
// RUN: ftuner-run %s --entry strided --shape 0=50 --shape 1=3 --shape 2=2 --check --threads 2 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry strided --shape 0=50 --shape 1=7 --shape 2=5 --check --threads 3 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry strided --shape 0=4 --shape 1=7 --shape 2=5 --check --threads 2 | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry strided --shape 0=50 --shape 1=3 --shape 2=2 --check --backend interp --pass-pipeline='builtin.module(convert-parallel-loops-to-runtime)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry static_outer --shape 0=8x37 --check --threads 2 | FileCheck %s --check-prefix=JIT
// A step of 0 fails the check at the call, as scf.for's own lowering does.
// RUN: not ftuner-run %s --entry strided --shape 0=50 --shape 1=0 --shape 2=2 --threads 2 2>&1 | FileCheck %s --check-prefix=BADSTEP
// JIT: check: ok
// BADSTEP: 'scf.for' op step is not positive

// CHECK-LABEL: func.func @strided(
// CHECK: %[[STEP:.*]] = memref.dim %arg1
// CHECK: %[[LB:.*]] = memref.dim %arg2
// CHECK: %[[POS:.*]] = arith.cmpi sgt, %[[STEP]], %{{.*}} : index
// CHECK-NEXT: cf.assert %[[POS]], "'scf.for' op step is not positive"
// CHECK-NEXT: %[[SPAN:.*]] = arith.subi %{{.*}}, %[[LB]] : index
// CHECK-NEXT: %[[Q:.*]] = arith.ceildivsi %[[SPAN]], %[[STEP]] : index
// CHECK: %[[N:.*]] = arith.maxsi %[[Q]], %{{.*}} : index
// CHECK-NEXT: rt.parallel_for @strided_par0(%[[N]]) args(%arg0, %alloc, %[[LB]], %[[STEP]] : memref<?xf32>, memref<?xf32>, index, index){{$}}
// CHECK: func.func private @strided_par0(%arg0: index, %arg1: index, %arg2: memref<?xf32>, %arg3: memref<?xf32> {llvm.noalias}, %arg4: index, %arg5: index) {
// CHECK-NEXT: arith.constant 2.0
// CHECK-NEXT: %[[O1:.*]] = arith.muli %arg0, %arg5 : index
// CHECK-NEXT: %[[START:.*]] = arith.addi %arg4, %[[O1]] : index
// CHECK-NEXT: %[[O2:.*]] = arith.muli %arg1, %arg5 : index
// CHECK-NEXT: %[[END:.*]] = arith.addi %arg4, %[[O2]] : index
// CHECK-NEXT: scf.for %{{.*}} = %[[START]] to %[[END]] step %arg5 {

// CHECK-LABEL: func.func @static_outer(
// CHECK: rt.parallel_for @static_outer_par0(%{{.*}}) args(
// CHECK: func.func private @static_outer_par0(
// CHECK-NOT: rt.parallel_for
// CHECK-NOT: ftuner.parallel
// CHECK-NOT: func.func private

func.func @strided(%a: memref<?xf32>, %s: memref<?xf32>, %l: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  %step = memref.dim %s, %c0 : memref<?xf32>
  %lb = memref.dim %l, %c0 : memref<?xf32>
  %out = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %zero, %out[%i] : memref<?xf32>
  }
  scf.for %i = %lb to %n step %step {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %out[%i] : memref<?xf32>
  } {ftuner.parallel}
  return %out : memref<?xf32>
}

func.func @static_outer(%a: memref<8x?xf32>) -> memref<8x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %a, %c1 : memref<8x?xf32>
  %out = memref.alloc(%n) : memref<8x?xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %x = memref.load %a[%i, %j] : memref<8x?xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %out[%i, %j] : memref<8x?xf32>
    } {ftuner.parallel}
  } {ftuner.parallel}
  return %out : memref<8x?xf32>
}
