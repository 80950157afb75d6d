// A depthwise conv whose phase planes exceed 32 KiB is written in the vector form in
// bands of output rows, each band's phases within 32 KiB: the first band (the padding
// above), the bands between (no padding, one scf.for when there are several), the last
// (the padding below). Each against the interpreter, alone and through the CPU pipeline
// on two threads.
// RUN: ftuner-opt %s --peel-padded-windows --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: ftuner-opt %s --peel-padded-windows | FileCheck %s
// RUN: ftuner-opt %s --peel-padded-windows --mlir-print-op-generic | %mlir-opt > /dev/null
// RUN: ftuner-run %s --entry=band_s2 --shape 0=2x2x112x112 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=band_s2 --shape 0=3x2x112x112 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=band_s1 --shape 0=2x2x100x100 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=band_loop --shape 0=1x2x400x64 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse)' --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=band_loop --shape 0=2x2x400x64 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --threads 2 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %s --entry=band_dil --shape 0=2x1x150x90 --pass-pipeline='builtin.module(peel-padded-windows,canonicalize,cse,ftuner-cpu-pipeline)' --check | FileCheck %s --check-prefix=RUNOK
// RUNOK: check: ok
// STATS: 4 num-vector

// MobileNetV2's stride-2 depthwise at 112x112 (four phases of 58 rows of 57: 51.7 KiB): two bands
// of 28 output rows, image rows [0, 56) with one padding row above, and [55, 112) with
// none below (the last window ends at row 111).
// CHECK-LABEL: func.func @band_s2
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 1, 56, 112] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 1, 28, 56] [1, 1, 1, 1]
// CHECK: vector.fma
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 0] [1, 1, 28, 56] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 55, 0] [1, 1, 57, 112] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 28, 0] [1, 1, 28, 56] [1, 1, 1, 1]
// CHECK: vector.fma
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 28, 0] [1, 1, 28, 56] [1, 1, 1, 1]
func.func @band_s2(%x: tensor<?x2x112x112xf32>, %k: tensor<2x3x3xf32>, %s: tensor<2x1x1xf32>, %t: tensor<2x1x1xf32>) -> tensor<?x2x56x56xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x112x112xf32>
  %z = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x2x112x112xf32> to tensor<?x2x114x114xf32>
  %e = tensor.empty(%n) : tensor<?x2x56x56xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x56x56xf32>) -> tensor<?x2x56x56xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %k : tensor<?x2x114x114xf32>, tensor<2x3x3xf32>) outs(%f : tensor<?x2x56x56xf32>) -> tensor<?x2x56x56xf32>
  %e2 = tensor.empty(%n) : tensor<?x2x56x56xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %s, %t : tensor<?x2x56x56xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) outs(%e2 : tensor<?x2x56x56xf32>) {
  ^bb0(%a: f32, %sc: f32, %sh: f32, %o: f32):
    %m = arith.mulf %a, %sc : f32
    %b = arith.addf %m, %sh : f32
    %c = arith.cmpf ogt, %b, %z : f32
    %lo = arith.select %c, %b, %z : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<?x2x56x56xf32>
  return %g : tensor<?x2x56x56xf32>
}

// Stride 1 at 100x100 (102x102 padded: 40.6 KiB): two bands of 50 rows, padding above the
// first and below the last.
// CHECK-LABEL: func.func @band_s1
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 1, 51, 100] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 49, 0] [1, 1, 51, 100] [1, 1, 1, 1]
// CHECK: vector.fma
// CHECK: return
func.func @band_s1(%x: tensor<?x2x100x100xf32>, %k: tensor<2x3x3xf32>) -> tensor<?x2x100x100xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x100x100xf32>
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x2x100x100xf32> to tensor<?x2x102x102xf32>
  %e = tensor.empty(%n) : tensor<?x2x100x100xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x100x100xf32>) -> tensor<?x2x100x100xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x2x102x102xf32>, tensor<2x3x3xf32>) outs(%f : tensor<?x2x100x100xf32>) -> tensor<?x2x100x100xf32>
  return %r : tensor<?x2x100x100xf32>
}

// 400 rows of 66 padded columns (103.9 KiB): four bands of 100 rows; the two between the
// first and the last read alike and run as one loop, at image rows 99 + 100 * t.
// CHECK-LABEL: func.func @band_loop
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 1, 101, 64] [1, 1, 1, 1]
// CHECK: scf.for %[[T:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %c2{{[_0-9]*}} step %{{[a-z0-9_]+}} iter_args(%{{.*}}) -> (tensor<1x1x400x64xf32>)
// CHECK-NEXT: arith.constant 100 : index
// CHECK-NEXT: %[[M:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK-NEXT: arith.constant 99 : index
// CHECK-NEXT: %[[I0:.*]] = arith.addi %[[M]], %{{.*}} : index
// CHECK: tensor.extract_slice %{{.*}}[0, 0, %[[I0]], 0] [1, 1, 102, 64] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 299, 0] [1, 1, 101, 64] [1, 1, 1, 1]
func.func @band_loop(%x: tensor<?x2x400x64xf32>, %k: tensor<2x3x3xf32>) -> tensor<?x2x400x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x400x64xf32>
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x2x400x64xf32> to tensor<?x2x402x66xf32>
  %e = tensor.empty(%n) : tensor<?x2x400x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x400x64xf32>) -> tensor<?x2x400x64xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<?x2x402x66xf32>, tensor<2x3x3xf32>) outs(%f : tensor<?x2x400x64xf32>) -> tensor<?x2x400x64xf32>
  return %r : tensor<?x2x400x64xf32>
}

// A 5x3 filter, stride 3 x 2, dilation 2 x 1, asymmetric padding (4 above, 1 below):
// bands whose first reads more padding than one row.
// CHECK-LABEL: func.func @band_dil
func.func @band_dil(%x: tensor<?x1x150x90xf32>, %k: tensor<1x5x3xf32>) -> tensor<?x1x49x45xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x1x150x90xf32>
  %z = arith.constant 0.0 : f32
  %pv = arith.constant -1.5 : f32
  %p = tensor.pad %x low[0, 0, 4, 1] high[0, 0, 1, 0] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %pv : f32
  } : tensor<?x1x150x90xf32> to tensor<?x1x155x91xf32>
  %e = tensor.empty(%n) : tensor<?x1x49x45xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x1x49x45xf32>) -> tensor<?x1x49x45xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<[2, 1]> : vector<2xi64>, strides = dense<[3, 2]> : vector<2xi64>} ins(%p, %k : tensor<?x1x155x91xf32>, tensor<1x5x3xf32>) outs(%f : tensor<?x1x49x45xf32>) -> tensor<?x1x49x45xf32>
  return %r : tensor<?x1x49x45xf32>
}
