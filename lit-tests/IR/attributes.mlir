// RUN: ftuner-opt %s --allow-unregistered-dialect | ftuner-opt --allow-unregistered-dialect | FileCheck %s
// Hex data is read; more than 100 non-splat elements print as hex again (as mlir-opt).
// RUN: ftuner-opt %S/Inputs/big-dense.mlir --allow-unregistered-dialect | FileCheck %s --check-prefix=HEX
// HEX: a = dense<"0x000000000000803F00000040
// HEX-SAME: b = dense<[0.000000e+00, 1.000000e+00
// CHECK: "test.attrs"() {a = dense<1.000000e+00> : tensor<4xf32>, b = dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi32>, c = array<i64: 1, 0>, d = [1, 2.000000e+00, "s", unit], e = 0x7FC00000 : f32, f = 9.9999999999999998E-13 : f64, g = -7 : i8, h = @sym::@nested, i = #arith.fastmath<fast>, j = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, k = strided<[?, 1], offset: ?>, l = {x = true}, m = i32, n = 1.41421354 : f32}
"test.attrs"() {
  a = dense<[1.0, 1.0, 1.0, 1.0]> : tensor<4xf32>,
  b = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>,
  c = array<i64: 1, 0>,
  d = [1, 2.0, "s", unit],
  e = 0x7FC00000 : f32,
  f = 1.0e-12 : f64,
  g = -7 : i8,
  h = @sym::@nested,
  i = #arith.fastmath<fast>,
  j = dense<"0x0000803F00000040"> : tensor<2xf32>,
  k = strided<[?, 1], offset: ?>,
  l = {x = true},
  m = i32,
  n = 1.41421354 : f32
} : () -> ()
