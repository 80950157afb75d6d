// ollie-derive: contractions read as tensor-algebra expressions and derived by equality
// saturation; target=matmul asks for matched matmuls plus eOperators (OLLIE's
// conv-to-GEMM derivations), target=auto keeps what the hardware model prices cheaper.
// Every emitted derivation passed the numeric check; verify=true also interprets it.
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=matmul verify=true},canonicalize)' | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=auto},canonicalize)' | FileCheck %s --check-prefix=AUTO
// Guided derivation (summation splitting along the iterator table only) finds the same
// matmuls in a smaller e-graph; the transposed conv's col2im stays one eOperator (the
// explorative search also splits it per spatial dim, which runs faster):
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=matmul guided=true verify=true},canonicalize)' | FileCheck %s --check-prefix=GUIDED
// GUIDED-LABEL: func.func @conv3x3
// GUIDED: linalg.matmul ins({{.*}} : tensor<36x4xf32>, tensor<4x72xf32>)
// GUIDED-LABEL: func.func @conv1x1
// GUIDED: linalg.matmul ins({{.*}} : tensor<70x16xf32>, tensor<16x24xf32>)
// GUIDED-LABEL: func.func @dilated
// GUIDED: linalg.matmul ins({{.*}} : tensor<100x8xf32>, tensor<8x36xf32>)
// GUIDED-LABEL: func.func @strided
// GUIDED: linalg.matmul ins({{.*}} : tensor<81x8xf32>, tensor<8x36xf32>)
// GUIDED-LABEL: func.func @transposed
// GUIDED: linalg.matmul ins({{.*}} : tensor<?x6xf32>, tensor<6x64xf32>)
// GUIDED: ta.expr L<i0:0:dim(%{{.*}}, 0), i1:0:4, i2:0:6, i3:0:6> Sum<k0:0:4, k1:0:4> { %{{.*}}[i0, (i2 + k0 - 2) / 2, (i3 + k1 - 2) / 2, i1, k0, k1] }
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=matmul},convert-ta-to-linalg,canonicalize)' --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// REQUIRES: mlir-opt
// The derived programs compute what the convolutions compute (JIT against the interpreter):
// RUN: ftuner-run %s --entry conv3x3 --check --pass-pipeline='builtin.module(ollie-derive{target=matmul},convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry conv1x1 --check --pass-pipeline='builtin.module(ollie-derive{target=matmul},convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry dilated --check --pass-pipeline='builtin.module(ollie-derive{target=matmul},convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// Expression splitting (opt-in) adds gather eOperators (im2col) to the forms; the
// extraction then mixes them with the substitution forms:
// RUN: ftuner-opt %s --split-input-file --pass-pipeline='builtin.module(ollie-derive{target=matmul split-expressions=true verify=true},canonicalize)' | FileCheck %s --check-prefix=SPLIT
// RUN: ftuner-run %s --entry conv3x3 --check --pass-pipeline='builtin.module(ollie-derive{target=matmul split-expressions=true},convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry transposed --shape 0=2x6x3x3 --check --pass-pipeline='builtin.module(ollie-derive{target=matmul split-expressions=true},convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// SPLIT-LABEL: func.func @conv3x3
// SPLIT: ta.expr L<i0:0:1, i1:0:6, i2:0:6, i3:0:4, i4:0:3> { %arg0[i0, i3, i1 + i4 - 1, i2] }
// SPLIT: linalg.matmul ins({{.*}} : tensor<36x12xf32>, tensor<12x24xf32>)
// SPLIT-LABEL: func.func @transposed
// SPLIT: linalg.matmul
// RUN: ftuner-run %s --entry strided --check --pass-pipeline='builtin.module(ollie-derive{target=matmul},convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry transposed --shape 0=3x6x3x3 --check --pass-pipeline='builtin.module(ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// JIT: check: ok (every result matches the module as read)

// conv 3x3 (padding 1 in the expression: reads outside the input are 0) -> a matmul of
// the input (M = n*h*w) by all 9 kernel taps at once (N = f*r*s), and an eOperator that
// sums the shifted taps (summation splitting, variable substitution h + r -> t, boundary
// tightening, traversal shift).
// CHECK-LABEL: func.func @conv3x3
// CHECK: linalg.transpose ins(%arg0 : tensor<1x4x6x6xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK: tensor.collapse_shape {{.*}} into tensor<36x4xf32>
// CHECK: linalg.transpose ins(%arg1 : tensor<8x4x3x3xf32>) {{.*}} permutation = [1, 0, 2, 3]
// CHECK: tensor.collapse_shape {{.*}} into tensor<4x72xf32>
// CHECK: %[[MM:.*]] = linalg.matmul ins({{.*}} : tensor<36x4xf32>, tensor<4x72xf32>)
// CHECK: %[[T:.*]] = tensor.expand_shape %[[MM]] {{.*}} into tensor<1x6x6x8x3x3xf32>
// CHECK: ta.expr L<i0:0:1, i1:0:8, i2:0:6, i3:0:6> Sum<k0:0:3, k1:0:3> { %[[T]][i0, i2 + k0 - 1, i3 + k1 - 1, i1, k0, k1] } ins(%[[T]] : tensor<1x6x6x8x3x3xf32>) -> tensor<1x8x6x6xf32>
// CHECK-NOT: linalg.conv_2d
// AUTO-LABEL: func.func @conv3x3
// AUTO: linalg.conv_2d_nchw_fchw
// AUTO-NOT: ta.expr
func.func @conv3x3(%x: tensor<1x4x6x6xf32>, %k: tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %0 = ta.expr L<n:0:1, f:0:8, h:0:6, w:0:6> Sum<c:0:4, r:0:3, s:0:3> {
    %x[n, c, h + r - 1, w + s - 1] * %k[f, c, r, s]
  } ins(%x, %k : tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %0 : tensor<1x8x6x6xf32>
}

// -----

// conv 1x1 -> one matmul: the unit summations become constants (a slice of the kernel),
// no eOperator; the bias the conv accumulated into is added back.
// CHECK-LABEL: func.func @conv1x1
// CHECK: tensor.extract_slice %arg1[0, 0, 0, 0] [24, 16, 1, 1] [1, 1, 1, 1] : tensor<24x16x1x1xf32> to tensor<24x16xf32>
// CHECK: linalg.matmul ins({{.*}} : tensor<70x16xf32>, tensor<16x24xf32>)
// CHECK: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
// CHECK: arith.addf
// CHECK-NOT: ta.expr
// CHECK-NOT: linalg.conv_2d
func.func @conv1x1(%x: tensor<2x16x5x7xf32>, %k: tensor<24x16x1x1xf32>, %b: tensor<2x24x5x7xf32>) -> tensor<2x24x5x7xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : tensor<2x16x5x7xf32>, tensor<24x16x1x1xf32>) outs(%b : tensor<2x24x5x7xf32>) -> tensor<2x24x5x7xf32>
  return %r : tensor<2x24x5x7xf32>
}

// -----

// Dilated conv (dilation 2, padded input) -> matmul over the whole padded input and an
// eOperator reading the taps 2 apart.
// CHECK-LABEL: func.func @dilated
// CHECK: linalg.matmul ins({{.*}} : tensor<100x8xf32>, tensor<8x36xf32>)
// CHECK: ta.expr L<i0:0:1, i1:0:4, i2:0:6, i3:0:6> Sum<k0:0:3, k1:0:3> { %{{.*}}[i0, i2 + 2 * k0, i3 + 2 * k1, i1, k0, k1] }
func.func @dilated(%x: tensor<1x8x10x10xf32>, %k: tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : tensor<1x8x10x10xf32>, tensor<4x8x3x3xf32>) outs(%f : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// -----

// A strided conv: variable substitution with a coefficient (t = 2h + r): a matmul over
// every input position, an eOperator reading it at 2h + r. A plain matmul is already a
// matched operator and stays as it is.
// CHECK-LABEL: func.func @strided
// CHECK: linalg.matmul ins({{.*}} : tensor<81x8xf32>, tensor<8x36xf32>)
// CHECK: ta.expr L<i0:0:1, i1:0:4, i2:0:4, i3:0:4> Sum<k0:0:3, k1:0:3> { %{{.*}}[i0, 2 * i2 + k0, 2 * i3 + k1, i1, k0, k1] }
// CHECK-NOT: linalg.conv_2d
// CHECK: linalg.matmul ins(%arg2, %arg3
func.func @strided(%x: tensor<1x8x9x9xf32>, %k: tensor<4x8x3x3xf32>, %a: tensor<4x5xf32>, %b: tensor<5x6xf32>, %o: tensor<4x6xf32>) -> (tensor<1x4x4x4xf32>, tensor<4x6xf32>) {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %k : tensor<1x8x9x9xf32>, tensor<4x8x3x3xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x5xf32>, tensor<5x6xf32>) outs(%o : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %r, %m : tensor<1x4x4x4xf32>, tensor<4x6xf32>
}

// -----

// A transposed convolution (kernel 4, stride 2, padding 1) as torch-mlir exports it: the
// input zero-inserted by a strided insert_slice, then a dense conv over it, batch dynamic.
// The padding is fused into the expression (the input read at (y + r - 2) / 2, exact
// division), the zero-inserted positions dropped by division substitution, and what is
// left is a matmul over the real input (N = f*r*s, 4x fewer products than the conv) and
// two col2im eOperators summing the taps, one per spatial dim. (target=auto chooses it
// at the DCGAN generator's sizes, not at these.) The batch stays dynamic; a cf.assert
// checks the fused input's batch against the conv's.
// CHECK-LABEL: func.func @transposed
// CHECK: cf.assert
// CHECK: linalg.matmul ins({{.*}} : tensor<?x6xf32>, tensor<6x64xf32>)
// CHECK: %[[E:.*]] = ta.expr L<i0:0:dim(%{{.*}}, 0), i1:0:4, i2:0:3, i3:0:6, i4:0:4> Sum<k0:0:4> { %{{.*}}[i0, i2, (i3 + k0 - 2) / 2, i1, i4, k0] }
// CHECK: ta.expr L<i0:0:dim(%[[E]], 0), i1:0:4, i2:0:6, i3:0:6> Sum<k0:0:4> { %[[E]][i0, i1, (i2 + k0 - 2) / 2, i3, k0] }
// CHECK-NOT: linalg.conv_2d
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
