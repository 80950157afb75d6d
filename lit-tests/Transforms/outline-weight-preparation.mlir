// outline-weight-preparation: what derives only from {ftuner.weight} arguments moves into
// @<f>_prepare, run once; @f takes its other arguments, then the prepared values.
// RUN: ftuner-opt %s --split-input-file --outline-weight-preparation | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --outline-weight-preparation --mlir-print-op-generic | %mlir-opt --split-input-file --verify-roundtrip -o /dev/null
// ftuner-run names the arguments of the function as read (before: those of the split
// function its default pipeline made, and --check compared different signatures): the
// weights are prepared once by @dense_prepare, then @dense runs on what it kept.
// RUN: ftuner-run %s --entry dense --shape 0=4x768 --check | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %s --entry dense --shape 0=4x768 --backend=interp --pass-pipeline='builtin.module(outline-weight-preparation)' --check | FileCheck %s --check-prefix=EXEC
// EXEC-LABEL: result #0: tensor 4x2304xf32
// EXEC: check: ok
// REQUIRES: mlir-opt

// The transposed weight is prepared; the bias is read as it is (a prepared value that
// is the weight itself); the activation stays first.
// CHECK-LABEL: func.func @dense_prepare(%arg0: tensor<2304x768xf32>, %arg1: tensor<2304xf32>) -> (tensor<2304xf32>, tensor<768x2304xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg0
// CHECK: return %arg1, %[[T]]
// CHECK-LABEL: func.func @dense(%arg0: tensor<?x768xf32>, %arg1: tensor<2304xf32>, %arg2: tensor<768x2304xf32>)
// CHECK-SAME: ftuner.prepared = {inputs = array<i64: 0>, prepare = @dense_prepare}
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul ins(%arg0, %arg2
func.func @dense(%x: tensor<?x768xf32>, %w: tensor<2304x768xf32> {ftuner.weight}, %b: tensor<2304xf32> {ftuner.weight}) -> tensor<?x2304xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?x768xf32>
  %e = tensor.empty() : tensor<768x2304xf32>
  %t = linalg.transpose ins(%w : tensor<2304x768xf32>) outs(%e : tensor<768x2304xf32>) permutation = [1, 0]
  %o = tensor.empty(%d) : tensor<?x2304xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  %m = linalg.matmul ins(%x, %t : tensor<?x768xf32>, tensor<768x2304xf32>) outs(%f : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<?x2304xf32>, tensor<2304xf32>) outs(%o : tensor<?x2304xf32>) {
  ^bb0(%a: f32, %bb: f32, %out: f32):
    %s = arith.addf %a, %bb : f32
    linalg.yield %s : f32
  } -> tensor<?x2304xf32>
  return %r : tensor<?x2304xf32>
}

// -----

// A weight between two activations keeps their order; a view (the reshape) at the
// boundary stays in @f, reading the prepared transpose; a broadcast that grows the
// weight along a dynamic dim stays too.
// CHECK-LABEL: func.func @mixed_prepare(%arg0: tensor<4x8xf32>) -> tensor<8x4xf32>
// CHECK-LABEL: func.func @mixed(%arg0: tensor<?x8xf32>, %arg1: tensor<?x32xf32>, %arg2: tensor<8x4xf32>)
// CHECK-SAME: inputs = array<i64: 0, 2>
// CHECK: tensor.collapse_shape %arg2
// CHECK: linalg.broadcast ins(%arg2
func.func @mixed(%x: tensor<?x8xf32>, %w: tensor<4x8xf32> {ftuner.weight}, %y: tensor<?x32xf32>) -> (tensor<32xf32>, tensor<?x8x4xf32>) {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  %flat = tensor.collapse_shape %t [[0, 1]] : tensor<8x4xf32> into tensor<32xf32>
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %eb = tensor.empty(%n) : tensor<?x8x4xf32>
  %bc = linalg.broadcast ins(%t : tensor<8x4xf32>) outs(%eb : tensor<?x8x4xf32>) dimensions = [0]
  return %flat, %bc : tensor<32xf32>, tensor<?x8x4xf32>
}

// -----

// Nothing derives from weights alone: the function is left as it is.
// CHECK-LABEL: func.func @none(
// CHECK-NOT: _prepare
func.func @none(%x: tensor<4xf32>, %w: tensor<4xf32> {ftuner.weight}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
