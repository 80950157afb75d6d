// ftuner-run lowers the TOSA op with upstream's conversion, and names what it still cannot run.
// RUN: not ftuner-run %s 2>&1 | FileCheck %s --check-prefix=RUNERR
// RUNERR: ftuner-opt-import.mlir:[[# @LINE + 26]]:8: error: operations ftuner does not model (and upstream MLIR does not lower to linalg): complex.create (1), complex.abs (1)
// RUNERR-NOT: panicked
// A module with upstream ops ftuner does not model (tosa, complex) is read through
// upstream MLIR: those ops stay generic, ftuner says which, and its passes run around them.
// RUN: ftuner-opt %s --canonicalize 2>&1 | FileCheck %s
// CHECK: ftuner-opt-import.mlir: note: read through upstream MLIR; operations ftuner does not model, kept as generic operations: tosa.add (1), complex.create (1), complex.abs (1)
// CHECK-LABEL: func.func @f
// CHECK: %[[T:.*]] = "tosa.add"(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: arith.addf %arg0, %arg0
// CHECK: arith.addf %[[T]], %[[T]] : tensor<4xf32>
// CHECK: "complex.create"
// CHECK: "complex.abs"

// The output, generic ops included, is accepted by upstream MLIR again.
// RUN: ftuner-opt %s --canonicalize 2>/dev/null | %mlir-opt | FileCheck %s --check-prefix=UP
// UP: tosa.add

// Without the import path's help (our parser alone), the same file is an error naming the op.
// RUN: not ftuner-opt %s --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=OURS
// OURS: ftuner-opt-import.mlir:[[@LINE+4]]:8: error: unexpected error: Dialect `tosa' not found for custom op 'tosa.add'
// REQUIRES: mlir-opt

func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>, %re: f32) -> (tensor<4xf32>, f32) {
  %t = tosa.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %dead = arith.addf %a, %a : tensor<4xf32>
  %v = arith.addf %t, %t : tensor<4xf32>
  %c = complex.create %re, %re : complex<f32>
  %m = complex.abs %c : complex<f32>
  return %v, %m : tensor<4xf32>, f32
}
