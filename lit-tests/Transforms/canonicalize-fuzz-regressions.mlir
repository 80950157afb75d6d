// RUN: ftuner-opt %s --split-input-file --canonicalize | FileCheck %s
// Modules on which the coverage-guided canonicalize target (fuzz/, docs/robustness.md)
// found a panic or IR that no longer verified after canonicalization.

// The i128 unsigned ops read their operands as unsigned (a zero-extended i128 was still
// negative): -1 / 2 is 2^127 - 1.
// CHECK-LABEL: func.func @divui_i128
// CHECK-NEXT: arith.constant 170141183460469231731687303715884105727 : i128
// CHECK-NEXT: return
func.func @divui_i128() -> i128 {
  %m = arith.constant -1 : i128
  %c2 = arith.constant 2 : i128
  %r = arith.divui %m, %c2 : i128
  return %r : i128
}

// -----

// A shift by -2, read unsigned, is by 2^128 - 2 (undefined): not folded (it panicked).
// CHECK-LABEL: func.func @shrsi_i128_negative_amount
// CHECK: arith.shrsi
func.func @shrsi_i128_negative_amount() -> i128 {
  %c4 = arith.constant 4 : i128
  %m2 = arith.constant -2 : i128
  %r = arith.shrsi %c4, %m2 : i128
  return %r : i128
}

// -----

// Wider than the i128 constants: not folded (a shift by 128 or more panicked).
// CHECK-LABEL: func.func @shrsi_i200
// CHECK: arith.shrsi
// CHECK: arith.maxsi
func.func @shrsi_i200(%x: i200) -> (i200, i200) {
  %m = arith.constant -1 : i200
  %c150 = arith.constant 150 : i200
  %r = arith.shrsi %m, %c150 : i200
  %s = arith.maxsi %x, %m : i200
  return %r, %s : i200, i200
}

// -----

// i127 wraps at 127 bits: -2^126 + -2^126 is 0 (the mask overflowed at w = 127).
// CHECK-LABEL: func.func @addi_i127
// CHECK-NEXT: arith.constant 0 : i127
// CHECK-NEXT: return
func.func @addi_i127() -> i127 {
  %a = arith.constant -85070591730234615865843651857942052864 : i127
  %r = arith.addi %a, %a : i127
  return %r : i127
}

// -----

// i0 bounds (0 - 1 underflowed) and i128's smallest (|MIN| overflowed).
// CHECK-LABEL: func.func @i0_and_abs
// CHECK-DAG: %[[MIN:.*]] = arith.constant -170141183460469231731687303715884105728 : i128
// CHECK-DAG: %[[FALSE:.*]] = arith.constant false
// CHECK: return %{{.*}}, %[[MIN]], %[[FALSE]]
func.func @i0_and_abs(%x: i0) -> (i0, i128, i1) {
  %z = arith.constant 0 : i0
  %r = arith.maxsi %x, %z : i0
  %min = arith.constant -170141183460469231731687303715884105728 : i128
  %a = math.absi %min : i128
  %one = arith.constant 1 : i128
  %m = arith.constant -1 : i128
  %u = arith.cmpi ult, %m, %one : i128
  return %r, %a, %u : i0, i128, i1
}

// -----

// mulsi_extended(x, 1) on index keeps the op: its high half would be an arith.extsi to
// index, which does not verify (upstream's pattern makes it).
// CHECK-LABEL: func.func @mulsi_extended_index_one
// CHECK: arith.mulsi_extended %{{.*}}, %{{.*}} : index
func.func @mulsi_extended_index_one(%x: index) -> (index, index) {
  %one = arith.constant 1 : index
  %l, %h = arith.mulsi_extended %x, %one : index
  return %l, %h : index, index
}

// -----

// A unit-batch batch_matmul with a dynamic N: the expand_shape got no size for N.
// CHECK-LABEL: func.func @bmm_unit_batch_dynamic_n
// CHECK: %[[M:.*]] = linalg.matmul
// CHECK-DAG: %[[ROWS:.*]] = tensor.dim %arg0, %c1
// CHECK-DAG: %[[N:.*]] = tensor.dim %arg2, %c2
// CHECK: tensor.expand_shape %[[M]] {{\[\[}}0, 1], [2]] output_shape [1, %[[ROWS]], %[[N]]]
func.func @bmm_unit_batch_dynamic_n(%a: tensor<1x?x8xf32>, %b: tensor<1x8x?xf32>, %c: tensor<1x?x?xf32>) -> tensor<1x?x?xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<1x?x8xf32>, tensor<1x8x?xf32>) outs(%c : tensor<1x?x?xf32>) -> tensor<1x?x?xf32>
  return %r : tensor<1x?x?xf32>
}

// -----

// i64::MIN by -1 in an affine map (mlir-opt-22 dies of SIGFPE here): wrapping, as index
// arithmetic (`%` and `/` overflowed).
// CHECK-LABEL: func.func @affine_min_by_minus_one
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[MIN:.*]] = arith.constant -9223372036854775808 : index
// CHECK: return %[[Z]], %[[MIN]], %[[MIN]]
func.func @affine_min_by_minus_one() -> (index, index, index) {
  %min = arith.constant -9223372036854775808 : index
  %m1 = arith.constant -1 : index
  %a = affine.apply affine_map<(d0)[s0] -> (d0 mod s0)>(%min)[%m1]
  %b = affine.apply affine_map<(d0)[s0] -> (d0 floordiv s0)>(%min)[%m1]
  %c = affine.apply affine_map<(d0)[s0] -> (d0 ceildiv s0)>(%min)[%m1]
  return %a, %b, %c : index, index, index
}

// -----

// On i0, where 1 is 0, select(c, 0, 0) matched select(c, 1, 0) and became an arith.extui
// to i0, which does not verify.
// CHECK-LABEL: func.func @select_i0
// CHECK-NOT: arith.extui
// CHECK: return
func.func @select_i0(%c: i1) -> i0 {
  %one = arith.constant 0 : i0
  %zero = arith.constant 0 : i0
  %0 = arith.select %c, %one, %zero : i0
  return %0 : i0
}
