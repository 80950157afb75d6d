// tensor.concat: custom syntax (its verifier: invalid.mlir), and the JIT (bufferization decomposes it into
// tensor.empty + insert_slice) against the interpreter (which concatenates directly).
// RUN: ftuner-opt %s | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | %mlir-opt --verify-roundtrip -o /dev/null
// RUN: ftuner-run %s --entry cols --shape 1=2x5 --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry cols --shape 1=2x0 --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry rows --shape 0=4x3 --check | FileCheck %s --check-prefix=JIT
// REQUIRES: mlir-opt
// JIT: check: ok

// CHECK-LABEL: func.func @cols
// CHECK: %concat = tensor.concat dim(1) %arg0, %arg1, %arg2 : (tensor<2x3xf32>, tensor<2x?xf32>, tensor<2x4xf32>) -> tensor<2x?xf32>
func.func @cols(%a: tensor<2x3xf32>, %b: tensor<2x?xf32>, %c: tensor<2x4xf32>) -> tensor<2x?xf32> {
  %r = tensor.concat dim(1) %a, %b, %c : (tensor<2x3xf32>, tensor<2x?xf32>, tensor<2x4xf32>) -> tensor<2x?xf32>
  return %r : tensor<2x?xf32>
}
// CHECK-LABEL: func.func @rows
func.func @rows(%a: tensor<?x3xf32>, %b: tensor<5x3xf32>) -> tensor<?x3xf32> {
  %r = tensor.concat dim(0) %a, %b : (tensor<?x3xf32>, tensor<5x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}
