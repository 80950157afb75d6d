// Named structured ops computed from their specs' `structured` maps and bodies (MLIR's
// OpDSL as data): each op below, run by the interpreter, gives the bits upstream's own
// generalization (mlir-opt-22 --linalg-generalize-named-ops) gives there, and the JIT
// (the optimising pipeline) agrees with the interpreter (--check). The convolutions of one
// spatial dim, of grouped channels and conv_2d_nhwc_fhwc had no maps before;
// conv_2d_ngchw_gfchw was not an op of ours.
// REQUIRES: mlir-opt
// RUN: %mlir-opt --linalg-generalize-named-ops %s -o %t.generic.mlir
// RUN: ftuner-run %s --entry conv_1d_nwc_wcf --backend interp --output %t.conv_1d_nwc_wcf.named.npy
// RUN: ftuner-run %s --entry conv_1d_nwc_wcf --check
// RUN: ftuner-run %t.generic.mlir --entry conv_1d_nwc_wcf --backend interp --output %t.conv_1d_nwc_wcf.upstream.npy
// RUN: cmp %t.conv_1d_nwc_wcf.named.npy %t.conv_1d_nwc_wcf.upstream.npy
// RUN: ftuner-run %s --entry conv_1d_ncw_fcw --backend interp --output %t.conv_1d_ncw_fcw.named.npy
// RUN: ftuner-run %s --entry conv_1d_ncw_fcw --check
// RUN: ftuner-run %t.generic.mlir --entry conv_1d_ncw_fcw --backend interp --output %t.conv_1d_ncw_fcw.upstream.npy
// RUN: cmp %t.conv_1d_ncw_fcw.named.npy %t.conv_1d_ncw_fcw.upstream.npy
// RUN: ftuner-run %s --entry conv_2d_nhwc_fhwc --backend interp --output %t.conv_2d_nhwc_fhwc.named.npy
// RUN: ftuner-run %s --entry conv_2d_nhwc_fhwc --check
// RUN: ftuner-run %t.generic.mlir --entry conv_2d_nhwc_fhwc --backend interp --output %t.conv_2d_nhwc_fhwc.upstream.npy
// RUN: cmp %t.conv_2d_nhwc_fhwc.named.npy %t.conv_2d_nhwc_fhwc.upstream.npy
// RUN: ftuner-run %s --entry conv_2d_ngchw_fgchw --backend interp --output %t.conv_2d_ngchw_fgchw.named.npy
// RUN: ftuner-run %s --entry conv_2d_ngchw_fgchw --check
// RUN: ftuner-run %t.generic.mlir --entry conv_2d_ngchw_fgchw --backend interp --output %t.conv_2d_ngchw_fgchw.upstream.npy
// RUN: cmp %t.conv_2d_ngchw_fgchw.named.npy %t.conv_2d_ngchw_fgchw.upstream.npy
// RUN: ftuner-run %s --entry conv_2d_nchw_fchw --backend interp --output %t.conv_2d_nchw_fchw.named.npy
// RUN: ftuner-run %s --entry conv_2d_nchw_fchw --check
// RUN: ftuner-run %t.generic.mlir --entry conv_2d_nchw_fchw --backend interp --output %t.conv_2d_nchw_fchw.upstream.npy
// RUN: cmp %t.conv_2d_nchw_fchw.named.npy %t.conv_2d_nchw_fchw.upstream.npy
// RUN: ftuner-run %s --entry pooling_nhwc_min --backend interp --output %t.pooling_nhwc_min.named.npy
// RUN: ftuner-run %s --entry pooling_nhwc_min --check
// RUN: ftuner-run %t.generic.mlir --entry pooling_nhwc_min --backend interp --output %t.pooling_nhwc_min.upstream.npy
// RUN: cmp %t.pooling_nhwc_min.named.npy %t.pooling_nhwc_min.upstream.npy
// RUN: ftuner-run %s --entry matmul_i8_unsigned --backend interp --output %t.matmul_i8_unsigned.named.npy
// RUN: ftuner-run %s --entry matmul_i8_unsigned --check
// RUN: ftuner-run %t.generic.mlir --entry matmul_i8_unsigned --backend interp --output %t.matmul_i8_unsigned.upstream.npy
// RUN: cmp %t.matmul_i8_unsigned.named.npy %t.matmul_i8_unsigned.upstream.npy
// RUN: ftuner-run %s --entry matvec_i8_signed --backend interp --output %t.matvec_i8_signed.named.npy
// RUN: ftuner-run %s --entry matvec_i8_signed --check
// RUN: ftuner-run %t.generic.mlir --entry matvec_i8_signed --backend interp --output %t.matvec_i8_signed.upstream.npy
// RUN: cmp %t.matvec_i8_signed.named.npy %t.matvec_i8_signed.upstream.npy
// RUN: ftuner-run %s --entry conv_2d_ngchw_gfchw --backend interp --output %t.conv_2d_ngchw_gfchw.named.npy
// RUN: ftuner-run %s --entry conv_2d_ngchw_gfchw --check
// RUN: ftuner-run %t.generic.mlir --entry conv_2d_ngchw_gfchw --backend interp --output %t.conv_2d_ngchw_gfchw.upstream.npy
// RUN: cmp %t.conv_2d_ngchw_gfchw.named.npy %t.conv_2d_ngchw_gfchw.upstream.npy

// conv_1d_nwc_wcf
func.func @conv_1d_nwc_wcf(%i: tensor<2x13x3xf32>, %k: tensor<3x3x4xf32>) -> tensor<2x5x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x5x4xf32>
  %o = linalg.fill ins(%z : f32) outs(%e : tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  %r = linalg.conv_1d_nwc_wcf {strides = dense<2> : tensor<1xi64>, dilations = dense<2> : tensor<1xi64>} ins(%i, %k : tensor<2x13x3xf32>, tensor<3x3x4xf32>) outs(%o : tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  return %r : tensor<2x5x4xf32>
}

// conv_1d_ncw_fcw
func.func @conv_1d_ncw_fcw(%i: tensor<2x3x11xf32>, %k: tensor<4x3x3xf32>, %o: tensor<2x4x9xf32>) -> tensor<2x4x9xf32> {
  %r = linalg.conv_1d_ncw_fcw {strides = dense<1> : tensor<1xi64>, dilations = dense<1> : tensor<1xi64>} ins(%i, %k : tensor<2x3x11xf32>, tensor<4x3x3xf32>) outs(%o : tensor<2x4x9xf32>) -> tensor<2x4x9xf32>
  return %r : tensor<2x4x9xf32>
}

// conv_2d_nhwc_fhwc
func.func @conv_2d_nhwc_fhwc(%i: tensor<1x9x10x3xf32>, %k: tensor<5x3x2x3xf32>, %o: tensor<1x4x3x5xf32>) -> tensor<1x4x3x5xf32> {
  %r = linalg.conv_2d_nhwc_fhwc {strides = dense<[2, 3]> : tensor<2xi64>, dilations = dense<[1, 2]> : tensor<2xi64>} ins(%i, %k : tensor<1x9x10x3xf32>, tensor<5x3x2x3xf32>) outs(%o : tensor<1x4x3x5xf32>) -> tensor<1x4x3x5xf32>
  return %r : tensor<1x4x3x5xf32>
}

// conv_2d_ngchw_fgchw
func.func @conv_2d_ngchw_fgchw(%i: tensor<1x2x3x7x7xf32>, %k: tensor<4x2x3x3x3xf32>, %o: tensor<1x2x4x5x5xf32>) -> tensor<1x2x4x5x5xf32> {
  %r = linalg.conv_2d_ngchw_fgchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%i, %k : tensor<1x2x3x7x7xf32>, tensor<4x2x3x3x3xf32>) outs(%o : tensor<1x2x4x5x5xf32>) -> tensor<1x2x4x5x5xf32>
  return %r : tensor<1x2x4x5x5xf32>
}

// conv_2d_nchw_fchw
func.func @conv_2d_nchw_fchw(%i: tensor<1x3x11x9xf32>, %k: tensor<4x3x3x2xf32>, %o: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %r = linalg.conv_2d_nchw_fchw {strides = dense<[3, 2]> : tensor<2xi64>, dilations = dense<[2, 3]> : tensor<2xi64>} ins(%i, %k : tensor<1x3x11x9xf32>, tensor<4x3x3x2xf32>) outs(%o : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %r : tensor<1x4x3x3xf32>
}

// pooling_nhwc_min
func.func @pooling_nhwc_min(%i: tensor<2x8x8x3xf32>, %o: tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32> {
  %w = tensor.empty() : tensor<3x2xf32>
  %r = linalg.pooling_nhwc_min {strides = dense<2> : tensor<2xi64>, dilations = dense<[1, 2]> : tensor<2xi64>} ins(%i, %w : tensor<2x8x8x3xf32>, tensor<3x2xf32>) outs(%o : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  return %r : tensor<2x3x3x3xf32>
}

// matmul_i8_unsigned (upstream: arith.extui of elements of 128 and more)
func.func @matmul_i8_unsigned() -> tensor<2x2xi32> {
  %a = arith.constant dense<[[200, 130], [-1, 7]]> : tensor<2x2xi8>
  %b = arith.constant dense<[[3, -128], [255, 1]]> : tensor<2x2xi8>
  %z = arith.constant dense<0> : tensor<2x2xi32>
  %r = linalg.matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%a, %b : tensor<2x2xi8>, tensor<2x2xi8>) outs(%z : tensor<2x2xi32>) -> tensor<2x2xi32>
  return %r : tensor<2x2xi32>
}

// matvec_i8_signed
func.func @matvec_i8_signed() -> tensor<2xi32> {
  %a = arith.constant dense<[[200, 130, -5], [-1, 7, 127]]> : tensor<2x3xi8>
  %x = arith.constant dense<[-128, 255, 9]> : tensor<3xi8>
  %z = arith.constant dense<1> : tensor<2xi32>
  %r = linalg.matvec ins(%a, %x : tensor<2x3xi8>, tensor<3xi8>) outs(%z : tensor<2xi32>) -> tensor<2xi32>
  return %r : tensor<2xi32>
}

// conv_2d_ngchw_gfchw, as torch-mlir writes a grouped convolution (strides and dilations as
// vectors; a Conv1d's width 1 elsewhere), every stride and dilation distinct and groups
// unequal to their filters; one spec entry was all it took
func.func @conv_2d_ngchw_gfchw(%i: tensor<2x4x3x11x12xf32>, %k: tensor<4x2x3x3x2xf32>, %o: tensor<2x4x2x3x4xf32>) -> tensor<2x4x2x3x4xf32> {
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<[3, 2]> : vector<2xi64>, strides = dense<[2, 3]> : vector<2xi64>} ins(%i, %k : tensor<2x4x3x11x12xf32>, tensor<4x2x3x3x2xf32>) outs(%o : tensor<2x4x2x3x4xf32>) -> tensor<2x4x2x3x4xf32>
  return %r : tensor<2x4x2x3x4xf32>
}
