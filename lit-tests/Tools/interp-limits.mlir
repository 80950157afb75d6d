// The interpreter's element budget holds for pads too (found by the driver fuzzer: a
// padding of 2^63 - 8 verifies — the padded size does not overflow — and the
// interpreter panicked allocating it, "capacity overflow").
// RUN: not ftuner-run %s --backend=interp --shape 0=4 2>&1 | FileCheck %s
// CHECK: ftuner-run: error: {{.*}}interp-limits.mlir:8:8: error: 'tensor.pad' op a tensor of sizes [9223372036854775804] is larger than the interpreter's budget of 1073741824 elements

func.func @huge_pad(%t: tensor<4xf32>, %v: f32) -> tensor<?xf32> {
  %0 = tensor.pad %t low[9223372036854775800] high[0] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<?xf32>
  return %0 : tensor<?xf32>
}
// The JIT refuses the allocation (a failed run-time check, exit 1).
// RUN: not ftuner-run %s --shape 0=4 2>&1 | FileCheck %s --check-prefix=JIT
// JIT: ftuner-run: error: run-time check failed: {{.*}}interp-limits.mlir:8:8: 'memref.alloc' op a size is negative or the memref<?xf32> is too large

// A static allocation too large for any byte count (after canonicalization the empty
// tensor of 2^63 - 1 elements is static): a failed check in the JIT (before: the byte
// count wrapped, the buffer was too small, and ftuner-run panicked reading it).
// RUN: not ftuner-run %s --entry huge_static --pass-pipeline='builtin.module(canonicalize,cse)' 2>&1 | FileCheck %s --check-prefix=STATIC
// STATIC: ftuner-run: error: run-time check failed: {{.*}}interp-limits.mlir:[[@LINE+3]]:8: 'memref.alloc' op a size is negative or the memref<9223372036854775807xf32> is too large
func.func @huge_static() -> tensor<?xf32> {
  %c = arith.constant 9223372036854775807 : index
  %e = tensor.empty(%c) : tensor<?xf32>
  return %e : tensor<?xf32>
}
