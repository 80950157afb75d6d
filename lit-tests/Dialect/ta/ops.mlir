// ta.expr round-trips through the custom and the generic form; the expression is kept in
// canonical form (index terms sorted, constants last).
// RUN: ftuner-opt %s | FileCheck %s
// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: ftuner-opt %s --mlir-print-op-generic | ftuner-opt | FileCheck %s

// CHECK-LABEL: func.func @conv
// CHECK: ta.expr L<n:0:dim(%arg0, 0), f:0:8, h:0:4, w:0:4> Sum<c:0:4, r:0:3, s:0:3> { %arg0[n, c, h + r - 1, s + w - 1] * %arg1[f, c, r, s] } ins(%arg0, %arg1 : tensor<?x4x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x4x4xf32>
// GENERIC: "ta.expr"(%{{.*}}, %{{.*}}) <{expr = "L<n:0:dim($0, 0), f:0:8, h:0:4, w:0:4> Sum<c:0:4, r:0:3, s:0:3> { $0[n, c, h + r - 1, s + w - 1] * $1[f, c, r, s] }"}>
func.func @conv(%a: tensor<?x4x4x4xf32>, %k: tensor<8x4x3x3xf32>) -> tensor<?x8x4x4xf32> {
  %0 = ta.expr L<n:0:dim(%a, 0), f:0:8, h:0:4, w:0:4> Sum<c:0:4, r:0:3, s:0:3> {
    %a[n, c, h + r - 1, w + s - 1] * %k[f, c, r, s]
  } ins(%a, %k : tensor<?x4x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x4x4xf32>
  return %0 : tensor<?x8x4x4xf32>
}

// Nested scopes, floordiv / mod, constants and offsets.
// CHECK-LABEL: func.func @nested
// CHECK: ta.expr L<i:0:6> Sum<k:0:2> { (L<a:-1:7, b:0:2> { %arg0[a floordiv 2, a mod 2] + 1.0 })[i - 1, k] * 2.0 } ins(%arg0 : tensor<3x2xf32>) -> tensor<6xf32>
func.func @nested(%x: tensor<3x2xf32>) -> tensor<6xf32> {
  %0 = ta.expr L<i:0:6> Sum<k:0:2> { (L<a:-1:7, b:0:2> { %x[a floordiv 2, a mod 2] + 1.0 })[i - 1, k] * 2.0 } ins(%x : tensor<3x2xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
