// A contraction indexed through `d0 mod 3` is not one lower-ukernels can tile: it is left
// to the loops (issue 25: patch-ukernels took it and lower-ukernels then panicked), and
// runs, equal to the interpreter (which gathers an input read through div/mod first).
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels)' | FileCheck %s
// CHECK-NOT: ukernel.patch
// CHECK: linalg.generic
// RUN: ftuner-run %s --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels)' --check | FileCheck %s --check-prefix=RAN
// RAN: result #0: tensor 12x16xf32
// RAN: check: ok

func.func @f(%a: tensor<3x8xf32>, %b: tensor<8x16xf32>, %c: tensor<12x16xf32>) -> tensor<12x16xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0 mod 3, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<3x8xf32>, tensor<8x16xf32>) outs(%c : tensor<12x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}
