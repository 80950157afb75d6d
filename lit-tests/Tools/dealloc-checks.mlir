// The input program's own deallocations (issue 25): the tools that run IR they read
// check each `memref.dealloc` of the input against the blocks the program allocated
// (ftuner_rt_release). A second dealloc of a block, or a dealloc of an argument's buffer,
// is a failed run-time check — before: glibc's "double free or corruption" abort, found
// by the driver fuzzer — and a returned buffer the program deallocated is an error, not a
// dangling buffer. A deallocated block stays allocated until the call ends, and in a
// function that deallocates buffers itself every access checks first that its buffer was
// not deallocated (ftuner_rt_released): a load after the dealloc — directly or in a
// structured op's loops — is a failed check, as in the interpreter (before: it read the
// stale block, a silent failure of --check). ftuner's own lowerings' deallocs are not
// checked.

// RUN: not ftuner-run %s --entry twice --shape 0=3 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: ftuner-run: error: run-time check failed: {{.*}}dealloc-checks.mlir:38:3: memref.dealloc of a buffer that is not live (deallocated before, or not allocated by the program)
// RUN: not ftuner-run %s --entry twice --shape 0=3 --backend=interp 2>&1 | FileCheck %s --check-prefix=TWICE-INTERP
// TWICE-INTERP: dealloc-checks.mlir:38:3: error: 'memref.dealloc' op accesses a buffer after memref.dealloc
// RUN: not ftuner-run %s --entry argument --shape 0=3 2>&1 | FileCheck %s --check-prefix=ARG
// ARG: run-time check failed: {{.*}}dealloc-checks.mlir:43:3: memref.dealloc of a buffer that is not live
// RUN: not ftuner-run %s --entry returned --shape 0=3 2>&1 | FileCheck %s --check-prefix=RET
// RET: ftuner-run: error: the compiled function returned a buffer its program deallocated (memref.dealloc)
// RUN: ftuner-run %s --entry fine --shape 0=1000 --check | FileCheck %s --check-prefix=FINE
// RUN: not ftuner-run %s --entry load_after --shape 0=3 2>&1 | FileCheck %s --check-prefix=AFTER
// AFTER: ftuner-run: error: run-time check failed: {{.*}}dealloc-checks.mlir:{{[0-9]+}}:8: 'memref.load' op accesses a buffer after memref.dealloc
// RUN: not ftuner-run %s --entry generic_after --shape 0=3 2>&1 | FileCheck %s --check-prefix=GENERIC
// GENERIC: ftuner-run: error: run-time check failed: {{.*}}dealloc-checks.mlir:{{[0-9]+}}:3: 'memref.load' op accesses a buffer after memref.dealloc
// FINE: check: ok
// What ftuner-opt (a compiler, not a runner) writes: the deallocs are the program's.
// RUN: ftuner-opt %s --convert-linalg-to-loops --convert-to-llvm | FileCheck %s --check-prefix=LLVM
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

func.func @load_after(%x: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %x, %a : memref<?xf32> to memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  %v = memref.load %a[%c0] : memref<?xf32>
  return %v : f32
}

func.func @generic_after(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %x, %a : memref<?xf32> to memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  %o = memref.alloc(%n) : memref<?xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<?xf32>) outs(%o : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.negf %in : f32
    linalg.yield %y : f32
  }
  return %o : memref<?xf32>
}
