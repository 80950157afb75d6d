// The input program's own deallocations (issue 25): the tools that run IR they read
// check each `memref.dealloc` of the input against the blocks the program allocated
// (ftuner_rt_release). A second dealloc of a block, or a dealloc of an argument's buffer,
// is a failed run-time check — before: glibc's "double free or corruption" abort, found
// by the driver fuzzer — and a returned buffer the program deallocated is an error, not a
// dangling buffer. A deallocated block stays allocated until the call ends, so a load
// after the dealloc reads memory the process owns (its value is undefined; the
// interpreter rejects it). ftuner's own lowerings' deallocs are not checked.

// RUN: not ftuner-run %s --entry twice --shape 0=3 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: ftuner-run: error: run-time check failed: {{.*}}dealloc-checks.mlir:31:3: memref.dealloc of a buffer that is not live (deallocated before, or not allocated by the program)
// RUN: not ftuner-run %s --entry twice --shape 0=3 --backend=interp 2>&1 | FileCheck %s --check-prefix=TWICE-INTERP
// TWICE-INTERP: dealloc-checks.mlir:31:3: error: 'memref.dealloc' op accesses a buffer after memref.dealloc
// RUN: not ftuner-run %s --entry argument --shape 0=3 2>&1 | FileCheck %s --check-prefix=ARG
// ARG: run-time check failed: {{.*}}dealloc-checks.mlir:36:3: memref.dealloc of a buffer that is not live
// RUN: not ftuner-run %s --entry returned --shape 0=3 2>&1 | FileCheck %s --check-prefix=RET
// RET: ftuner-run: error: the compiled function returned a buffer its program deallocated (memref.dealloc)
// RUN: ftuner-run %s --entry fine --shape 0=1000 --check | FileCheck %s --check-prefix=FINE
// FINE: check: ok
// What ftuner-opt (a compiler, not a runner) writes: the deallocs are the program's.
// RUN: ftuner-opt %s --convert-to-llvm | FileCheck %s --check-prefix=LLVM
// LLVM-NOT: ftuner_rt_release
// LLVM: callee = @free

func.func @twice(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %x, %a : memref<?xf32> to memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  return %x : memref<?xf32>
}

func.func @argument(%x: memref<?xf32>) -> memref<?xf32> {
  memref.dealloc %x : memref<?xf32>
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  return %a : memref<?xf32>
}

func.func @returned(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %x, %a : memref<?xf32> to memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  return %a : memref<?xf32>
}

// A dealloc of a live block, in a loop (every block freed once): fine, the same result
// as the interpreter.
func.func @fine(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %b = memref.alloc(%n) : memref<?xf32>
  memref.copy %x, %b : memref<?xf32> to memref<?xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.alloc(%n) : memref<?xf32>
    memref.copy %b, %a : memref<?xf32> to memref<?xf32>
    memref.copy %a, %b : memref<?xf32> to memref<?xf32>
    memref.dealloc %a : memref<?xf32>
  }
  return %b : memref<?xf32>
}
