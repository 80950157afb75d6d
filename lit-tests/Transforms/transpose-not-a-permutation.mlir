// A copy whose source map repeats a dim (`(d1, d1)`: a diagonal read) into a transposed
// output is not a transpose: convert-linalg-to-loops' transpose blocks took it for one
// (AffineMap::as_permutation_like does not check that the dims are distinct) and wrote
// the wrong elements; now only permutations (AffineMap::as_permutation) are.
// RUN: ftuner-run %s --check | FileCheck %s
// CHECK: result #0: tensor 32x32xf32
// CHECK: check: ok

func.func @f(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %e = tensor.empty() : tensor<32x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}
