// A contraction that reads B (or its output) at a constant index — a unit dim the
// frontend kept, here a cumsum torch-mlir wrote as a masked sum over a 1 x K x N B — is
// not one lower-ukernels can tile (it reads B and C by plain dims): it is left to the
// loops, and runs, equal to the interpreter. Before, patch-ukernels took it, lower-ukernels
// left the patch with a remark, and convert-to-llvm failed on it.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=zen5})' | FileCheck %s --implicit-check-not=ukernel.patch
// CHECK: linalg.generic
// RUN: ftuner-run %s --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=host})' --check | FileCheck %s --check-prefix=RAN
// RAN: result #0: tensor 3x17xf32
// RAN: check: ok

func.func @f(%a: tensor<3x17x1xf32>, %b: tensor<1x17x17xf32>) -> tensor<3x17xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x17xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<3x17xf32>) -> tensor<3x17xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : tensor<3x17x1xf32>, tensor<1x17x17xf32>) outs(%c : tensor<3x17xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<3x17xf32>
  return %r : tensor<3x17xf32>
}
