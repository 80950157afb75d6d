// A copy between buffers whose shapes are known only at run time checks that they agree
// before copying (issue 25; found by the driver fuzzer: a dim taken from the wrong axis
// made an insert_slice's source larger than its slice, and the copy bufferization makes
// of it wrote past the destination — "corrupted size vs. prev_size" in glibc).
// RUN: not ftuner-run %s --entry insert --shape 0=5x6 --shape 1=3 2>&1 | FileCheck %s
// CHECK: ftuner-run: error: run-time check failed: {{.*}}copy-shape-checks.mlir:23:8: memref.copy between buffers of different shapes
// RUN: not ftuner-run %s --entry insert --shape 0=5x6 --shape 1=3 --backend=interp 2>&1 | FileCheck %s --check-prefix=INTERP
// INTERP: 'tensor.insert_slice' op source of shape [5, 6] does not fit the slice of sizes [3, 6]
// RUN: ftuner-run %s --entry insert --shape 0=3x6 --shape 1=3 --check | FileCheck %s --check-prefix=OK
// OK: check: ok
// Static shapes are the verifier's: no check emitted.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(bufferize,convert-linalg-to-loops,convert-to-llvm)' | FileCheck %s --check-prefix=STATIC
// STATIC: sym_name = "copy_static"
// STATIC-NOT: @ftuner_rt_fail
// STATIC: llvm.return

func.func @insert(%x: tensor<?x6xf32>, %y: tensor<?xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = tensor.insert_slice %x into %z[0, 1] [%n, 6] [1, 1] : tensor<?x6xf32> into tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

func.func @copy_static(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  return
}
