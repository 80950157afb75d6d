// convert-ta-to-linalg: one linalg.generic per ta.expr; accesses by iterators covering a
// tensor exactly are indexing maps, others guarded tensor.extracts (out of bounds reads 0);
// summation iterators no mapped operand spans take their range from an extents operand.
// RUN: ftuner-opt %s --split-input-file --convert-ta-to-linalg | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --convert-ta-to-linalg --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// REQUIRES: mlir-opt
// RUN: ftuner-run %s --entry pad_conv --check --pass-pipeline='builtin.module(convert-ta-to-linalg)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry divmod --check --pass-pipeline='builtin.module(convert-ta-to-linalg)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry nested --check --pass-pipeline='builtin.module(convert-ta-to-linalg)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry matmul --check --pass-pipeline='builtin.module(convert-ta-to-linalg)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry exact_div --check --pass-pipeline='builtin.module(convert-ta-to-linalg)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry col2im --shape 0=3x5x6x4 --check --pass-pipeline='builtin.module(convert-ta-to-linalg)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry col2im_odd --check --pass-pipeline='builtin.module(convert-ta-to-linalg)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry col2im_stride3 --check --pass-pipeline='builtin.module(convert-ta-to-linalg)' | FileCheck %s --check-prefix=JIT
// JIT: check: ok (every result matches the module as read)

// A 1-d convolution with implicit zero padding: the kernel is mapped, the input is read
// at h + r - 1 with a bounds guard.
// CHECK-LABEL: func.func @pad_conv
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%arg1 : tensor<3xf32>)
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: tensor.extract %arg0
// CHECK: arith.select
func.func @pad_conv(%x: tensor<8xf32>, %k: tensor<3xf32>) -> tensor<8xf32> {
  %0 = ta.expr L<h:0:8> Sum<r:0:3> { %x[h + r - 1] * %k[r] } ins(%x, %k : tensor<8xf32>, tensor<3xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// floordiv / mod indices and an offset traversal (i from 2): no map, only extracts; the
// summation's range comes from an extents operand.
// CHECK-LABEL: func.func @divmod
// CHECK: %[[EXT:.*]] = tensor.empty() : tensor<2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[EXT]] : tensor<2xf32>)
// CHECK: arith.floordivsi
func.func @divmod(%x: tensor<4x3xf32>) -> tensor<10xf32> {
  %0 = ta.expr L<i:2:12> Sum<k:0:2> { %x[i floordiv 3, (i + k) mod 3] - 0.5 } ins(%x : tensor<4x3xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// A matmul is all maps.
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x5xf32>, tensor<5x6xf32>)
// CHECK-NOT: tensor.extract
// CHECK: arith.mulf
func.func @matmul(%a: tensor<4x5xf32>, %b: tensor<5x6xf32>) -> tensor<4x6xf32> {
  %0 = ta.expr L<m:0:4, n:0:6> Sum<k:0:5> { %a[m, k] * %b[k, n] } ins(%a, %b : tensor<4x5xf32>, tensor<5x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// Nested scopes are split into their own ops first (an eOperator per scope), then lowered;
// the outer one reads the inner at iterator values shifted by the inner's lower bound.
// CHECK-LABEL: func.func @nested
// CHECK: %[[IN:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: tensor.extract %[[IN]]
// CHECK-NOT: ta.expr
func.func @nested(%x: tensor<3x2xf32>) -> tensor<6xf32> {
  %0 = ta.expr L<i:0:6> Sum<k:0:2> { (L<a:-1:7, b:0:2> { %x[a floordiv 2, a mod 2] + 1.0 })[i - 1, k] * 2.0 } ins(%x : tensor<3x2xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// An exact division is computed as a floordiv, and the floordiv of a value that is not a
// multiple can fall outside the tensor even when every exact quotient is inside:
// (y - 1) / 2 over y in [0, 4) has exact quotients 0 and 1, but y = 0 computes -1. The
// index is clamped and the read guarded (the JIT run asserted out of bounds before).
// CHECK-LABEL: func.func @exact_div
// CHECK: %[[Q:.*]] = arith.floordivsi
// CHECK: %[[LO:.*]] = arith.cmpi sge, %[[Q]]
// CHECK: %[[IDX:.*]] = arith.select {{.*}}, %[[Q]],
// CHECK: tensor.extract %arg0[%[[IDX]]]
func.func @exact_div(%x: tensor<2xf32>) -> tensor<4xf32> {
  %0 = ta.expr L<y:0:4> { %x[(y - 1) / 2] } ins(%x : tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A strided summation (a transposed conv's col2im: kernel 4, stride 2, padding 1) is split
// into phases: y = 2q + p, k = 2t + p, so each output position sums its 2 taps that read
// (not 4 with a divisibility test), at affine positions q + p + t - 1; the [.., 6, 2]
// result is the [.., 12] one (collapse_shape).
// CHECK-LABEL: func.func @col2im
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-NOT: floordivsi
// CHECK: } -> tensor<?x5x6x2xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<?x5x6x2xf32> into tensor<?x5x12xf32>
func.func @col2im(%x: tensor<?x5x6x4xf32>) -> tensor<?x5x12xf32> {
  %0 = ta.expr L<n:0:dim(%x, 0), h:0:5, w:0:12> Sum<k:0:4> { %x[n, h, (w + k - 2) / 2, k] } ins(%x : tensor<?x5x6x4xf32>) -> tensor<?x5x12xf32>
  return %0 : tensor<?x5x12xf32>
}

// -----

// An odd offset: the phase's taps are 1 - p and 3 - p.
// CHECK-LABEL: func.func @col2im_odd
// CHECK-NOT: floordivsi
// CHECK: tensor.collapse_shape
func.func @col2im_odd(%x: tensor<5x4xf32>) -> tensor<8xf32> {
  %0 = ta.expr L<w:0:8> Sum<k:0:4> { %x[(w + k - 1) / 2, k] } ins(%x : tensor<5x4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Stride 3: the phase's tap is (m - p) mod 3, its quotient computed (still exact).
// CHECK-LABEL: func.func @col2im_stride3
// CHECK: } -> tensor<3x3xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<3x3xf32> into tensor<9xf32>
func.func @col2im_stride3(%x: tensor<4x6xf32>) -> tensor<9xf32> {
  %0 = ta.expr L<w:0:9> Sum<k:0:6> { %x[(w + k - 4) / 3, k] } ins(%x : tensor<4x6xf32>) -> tensor<9xf32>
  return %0 : tensor<9xf32>
}
