// A register tile with fewer accumulators than the core keeps FMAs in flight splits its k
// loop over several sets of accumulators, as many as the register file holds with one
// register to spare (each set with a row of B and an A broadcast in flight).
//
// Zen 3 (AVX2, 16 ymm, 8 FMAs in flight): the 6x8 tile keeps one set of six accumulators;
// two sets (12 accumulators, 2 B rows, 2 broadcasts) made LLVM spill six of them every k
// step. The 4x8 edge tile takes two sets of four.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen3},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=ZEN3
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen3},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=ZEN3-NOT12
// ZEN3-LABEL: func.func @edge8
// ZEN3: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// ZEN3: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// ZEN3-NOT12-NOT: -> ({{(vector<8xf32>, ){9,}v}}
//
// Zen 5 (AVX-512, 32 zmm): the same tile takes two sets of six.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(patch-ukernels{target=zen5},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=ZEN5
// ZEN5-LABEL: func.func @edge8
// ZEN5: scf.for {{.*}} -> ({{(vector<8xf32>, ){11}v}}ector<8xf32>) {
//
// The answers are the module's, on the host (whatever its register file).
// RUN: ftuner-run %s --shape 0=29x64 --pass-pipeline='builtin.module(patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' --check | FileCheck %s --check-prefix=EXEC
// EXEC: check: ok
func.func @edge8(%a: tensor<?x64xf32>, %b: tensor<64x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%m) : tensor<?x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
