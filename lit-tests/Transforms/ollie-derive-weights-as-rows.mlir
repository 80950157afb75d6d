// A transposed conv as torch-mlir exports it (kernel 4, stride 2, padding 1: the image
// inserted into zeros, the weight flipped, a dense conv), with its weight marked
// {ftuner.weight}. ollie-derive rewrites it to a matmul and col2im eOperators; the
// matmul takes its rows from the weight (fixed when loaded: its transpose is hoisted out
// of the call) and reads the NCHW image as a channels x (n, i, j) matrix, planes moved
// whole, so its result lies along the image width as the col2im reads it.
// weights-as-rows=false: rows from the image, transposed to NHWC per call.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ollie-derive{target=matmul hw-target=zen4})' | FileCheck %s --check-prefix=ROWS
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ollie-derive{target=matmul hw-target=zen4 weights-as-rows=false})' | FileCheck %s --check-prefix=IMAGE
// The same layer with the weight an ordinary argument (not fixed): rows from the image.
// RUN: sed 's/ {ftuner.weight}//' %s | ftuner-opt - --pass-pipeline='builtin.module(ollie-derive{target=matmul hw-target=zen4})' | FileCheck %s --check-prefix=IMAGE
// Numerics through the whole CPU pipeline (derivation, patched uKernels, JIT) against
// the module as read, at batch 1 and 3.
// RUN: ftuner-run %s --pass-pipeline='builtin.module(ollie-derive{target=matmul hw-target=host},convert-ta-to-linalg,ftuner-cpu-pipeline)' --shape 0=3x16x8x8 --check | FileCheck %s --check-prefix=NUM
// RUN: ftuner-run %s --pass-pipeline='builtin.module(ollie-derive{target=matmul hw-target=host},convert-ta-to-linalg,ftuner-cpu-pipeline)' --shape 0=1x16x8x8 --check --threads 2 | FileCheck %s --check-prefix=NUM

// ROWS-LABEL: func.func @tconv
// ROWS: linalg.transpose ins(%{{.*}} : tensor<8x16x4x4xf32>) outs(%{{.*}} : tensor<8x4x4x16xf32>) permutation = [0, 2, 3, 1]
// ROWS: linalg.transpose ins(%arg0 : tensor<?x16x8x8xf32>) outs(%{{.*}} : tensor<16x?x8x8xf32>) permutation = [1, 0, 2, 3]
// ROWS: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<128x16xf32>, tensor<16x?xf32>)
// ROWS-SAME: -> tensor<128x?xf32>
// ROWS: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2], [3, 4, 5]] {{.*}} : tensor<128x?xf32> into tensor<8x4x4x?x8x8xf32>
// The col2im's first eOperator (an intermediate: its layout is free) walks the output
// width (i3) innermost, the dim its input lies along; the second reads it so.
// ROWS: ta.expr L<i0:0:dim(%{{.*}}, 3), i1:0:8, i2:0:8, i4:0:4, i3:0:16> Sum<k0:0:4> { %{{.*}}[i1, i4, k0, i0, i2, (i3 + k0 - 2) / 2] }
// ROWS-SAME: -> tensor<?x8x8x4x16xf32>
// ROWS: ta.expr L<i0:0:dim(%{{.*}}, 0), i1:0:8, i2:0:16, i3:0:16> Sum<k0:0:4> { %{{.*}}[i0, i1, (i2 + k0 - 2) / 2, k0, i3] }
// ROWS-SAME: -> tensor<?x8x16x16xf32>

// IMAGE-LABEL: func.func @tconv
// IMAGE: linalg.transpose ins(%arg0 : tensor<?x16x8x8xf32>) outs(%{{.*}} : tensor<?x8x8x16xf32>) permutation = [0, 2, 3, 1]
// IMAGE: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x16xf32>, tensor<16x128xf32>)
// IMAGE-SAME: -> tensor<?x128xf32>

// NUM: check: ok (every result matches the module as read)

func.func @tconv(%arg0: tensor<?x16x8x8xf32>, %arg1: tensor<16x8x4x4xf32> {ftuner.weight}) -> tensor<?x8x16x16xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %cst = arith.constant 0.000000e+00 : f32
  %dim = tensor.dim %arg0, %c0 : tensor<?x16x8x8xf32>
  %0 = tensor.empty() : tensor<8x16x4x4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%0 : tensor<8x16x4x4xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %r = arith.subi %c3, %i2 : index
    %s = arith.subi %c3, %i3 : index
    %w = tensor.extract %arg1[%i1, %i0, %r, %s] : tensor<16x8x4x4xf32>
    linalg.yield %w : f32
  } -> tensor<8x16x4x4xf32>
  %2 = tensor.empty(%dim) : tensor<?x16x19x19xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<?x16x19x19xf32>) -> tensor<?x16x19x19xf32>
  %4 = tensor.insert_slice %arg0 into %3[0, 0, 2, 2] [%dim, 16, 8, 8] [1, 1, 2, 2] : tensor<?x16x8x8xf32> into tensor<?x16x19x19xf32>
  %5 = tensor.empty(%dim) : tensor<?x8x16x16xf32>
  %6 = linalg.fill ins(%cst : f32) outs(%5 : tensor<?x8x16x16xf32>) -> tensor<?x8x16x16xf32>
  %7 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%4, %1 : tensor<?x16x19x19xf32>, tensor<8x16x4x4xf32>) outs(%6 : tensor<?x8x16x16xf32>) -> tensor<?x8x16x16xf32>
  return %7 : tensor<?x8x16x16xf32>
}
