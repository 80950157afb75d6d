// reassociate-reductions: the float sum of a linalg.generic reduction may be
// reassociated (fastmath<reassoc>), so LLVM vectorizes it; a contraction's mul-add, a
// maximum, an add whose addend reads the accumulator and elementwise ops are left alone.
// The sums are checked against the module as read (the interpreter sums in order) on the
// JIT, at a row length that is no multiple of the vector width: the vector sums stay within
// the f32 bound (the run passes without the flag too; FileCheck and the statistics are what
// see the flag).
// RUN: ftuner-opt %s --reassociate-reductions | FileCheck %s
// RUN: ftuner-opt %s --reassociate-reductions --mlir-print-op-generic | %mlir-opt --verify-roundtrip -o /dev/null
// RUN: ftuner-run %s --entry row_sum --shape 0=5x1037 --pass-pipeline='builtin.module(reassociate-reductions)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-opt %s --reassociate-reductions --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// REQUIRES: mlir-opt
// JIT: check: ok
// STATS: 2 num-reassociated

#in = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @row_sum
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
func.func @row_sum(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?xf32>
  %s0 = linalg.fill ins(%z : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#in, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%s0 : tensor<?xf32>) {
  ^bb0(%a: f32, %s: f32):
    %ex = math.exp %a : f32
    %t = arith.addf %ex, %s : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// A sum of squares in f64 (torch-mlir's LayerNorm variance), with other flags kept.
// CHECK-LABEL: func.func @sum_sq
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<nnan,reassoc> : f64
func.func @sum_sq(%x: tensor<4x768xf64>, %o: tensor<4xf64>) -> tensor<4xf64> {
  %r = linalg.generic {indexing_maps = [#in, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x768xf64>) outs(%o : tensor<4xf64>) {
  ^bb0(%a: f64, %s: f64):
    %q = arith.mulf %a, %a : f64
    %t = arith.addf %s, %q fastmath<nnan> : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  return %r : tensor<4xf64>
}

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: reassoc
// CHECK: return
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @left_alone(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %c: tensor<4x3xf32>, %x: tensor<4x8xf32>, %o: tensor<4xf32>) -> (tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  // A contraction: its k stays in order.
  %mm = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%c : tensor<4x3xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %t = arith.addf %s, %m : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  // A maximum, and a sum whose addend reads the accumulator.
  %mx = linalg.generic {indexing_maps = [#in, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%p: f32, %s: f32):
    %t = arith.maximumf %p, %s : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %dep = linalg.generic {indexing_maps = [#in, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%p: f32, %s: f32):
    %h = arith.mulf %p, %s : f32
    %t = arith.addf %h, %s : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  // Elementwise: no reduction.
  %ew = linalg.generic {indexing_maps = [#in, #in], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%x : tensor<4x8xf32>) {
  ^bb0(%p: f32, %s: f32):
    %t = arith.addf %p, %s : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %mm, %mx, %dep, %ew : tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>
}

// A mixed-precision contraction (f16 operands summed in f32): its k stays in order too.
// CHECK-LABEL: func.func @mixed_contraction
// CHECK-NOT: reassoc
// CHECK: return
func.func @mixed_contraction(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>, %c: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %mm = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x8xf16>, tensor<8x3xf16>) outs(%c : tensor<4x3xf32>) {
  ^bb0(%p: f16, %q: f16, %s: f32):
    %pe = arith.extf %p : f16 to f32
    %qe = arith.extf %q : f16 to f32
    %m = arith.mulf %pe, %qe : f32
    %t = arith.addf %s, %m : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  return %mm : tensor<4x3xf32>
}
