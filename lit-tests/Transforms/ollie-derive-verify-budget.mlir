// ollie-derive{verify=true} has a work budget (verify-budget, default 2e8): the work of a
// verification — the iteration points of the original expression and of the derived
// operators, plus the random inputs' elements — is estimated from the loop bounds before
// anything runs. Over the budget, dynamic dims are verified smaller (1 or 2 instead of
// 3); where that does not fit either (or nothing is dynamic), the derivation is kept
// unverified. Both are a remark at the op, never silent; the statistics count them.
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=matmul verify=true})' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT --implicit-check-not=remark
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=matmul verify=true verify-budget=30000})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=MID --implicit-check-not=remark
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=matmul verify=true verify-budget=1000})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOW --implicit-check-not=remark
// The statistics count them (the last input's):
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=matmul verify=true verify-budget=1000})' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// The derived IR is the same whether verified or not:
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=matmul verify=true verify-budget=1000})' > %t.low
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=matmul verify=true})' > %t.default
// RUN: diff %t.low %t.default

// DEFAULT: 1 num-derived
// DEFAULT: 0 num-verified-reduced
// DEFAULT: 0 num-unverified
// STATS: 1 num-derived
// STATS: 0 num-verified-reduced
// STATS: 1 num-unverified

// A transposed convolution with a dynamic batch: 6.0e4 points at batch 3, 2.1e4 at 1.
// MID: verify-budget.mlir:[[@LINE+11]]:8: remark: ollie-derive: derivation verified with its dynamic dims 1 instead of 3: at 3 the check would take 6.028e4 operations, over the budget 3.000e4 (verify-budget=... raises it)
// LOW: verify-budget.mlir:[[@LINE+10]]:8: remark: ollie-derive: derivation not verified: the check would take 2.060e4 operations even with its dynamic dims 1, over the budget 1.000e3 (verify-budget=... raises it); it passed the sampled numeric check
func.func @transposed(%x: tensor<?x6x3x3xf32>, %k: tensor<4x6x4x4xf32>) -> tensor<?x4x6x6xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x6x3x3xf32>
  %e = tensor.empty(%n) : tensor<?x6x9x9xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?x6x9x9xf32>) -> tensor<?x6x9x9xf32>
  %p = tensor.insert_slice %x into %z[0, 0, 2, 2] [%n, 6, 3, 3] [1, 1, 2, 2] : tensor<?x6x3x3xf32> into tensor<?x6x9x9xf32>
  %oe = tensor.empty(%n) : tensor<?x4x6x6xf32>
  %o = linalg.fill ins(%cst : f32) outs(%oe : tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x6x9x9xf32>, tensor<4x6x4x4xf32>) outs(%o : tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  return %r : tensor<?x4x6x6xf32>
}

// -----

// A static conv 3x3: nothing to make smaller; within 3e4, over 1e3.
// LOW: verify-budget.mlir:[[@LINE+2]]:8: remark: ollie-derive: derivation not verified: the check would take 2.477e4 operations, over the budget 1.000e3 (verify-budget=... raises it); it passed the sampled numeric check
func.func @conv3x3(%x: tensor<1x4x6x6xf32>, %k: tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %0 = ta.expr L<n:0:1, f:0:8, h:0:6, w:0:6> Sum<c:0:4, r:0:3, s:0:3> {
    %x[n, c, h + r - 1, w + s - 1] * %k[f, c, r, s]
  } ins(%x, %k : tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %0 : tensor<1x8x6x6xf32>
}
