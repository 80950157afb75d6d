// affine.apply: syntax (mlir-opt-22 reads what we print), folding, lower-affine (floordiv
// and ceildiv round toward -inf / +inf, mod is non-negative), and the JIT against the
// interpreter (which evaluates the map directly) at sizes where the remainders are
// negative.
// RUN: ftuner-opt %s | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | %mlir-opt --verify-roundtrip -o /dev/null
// RUN: ftuner-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD
// RUN: ftuner-opt %s --lower-affine | FileCheck %s --check-prefix=LOWER
// RUN: ftuner-run %s --entry f --shape 0=5 --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry f --shape 0=1 --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry f --shape 0=12 --check | FileCheck %s --check-prefix=JIT
// REQUIRES: mlir-opt
// JIT: check: ok

// CHECK: #[[M:.*]] = affine_map<()[s0] -> (s0 + 1)>
// CHECK-LABEL: func.func @f
// CHECK: affine.apply #[[M]]()[%dim]
// FOLD-LABEL: func.func @f
// FOLD-COUNT-2: affine.apply
// FOLD-NOT: affine.apply
// FOLD: return %{{.*}}, %{{.*}}, %dim, %c8
// LOWER-LABEL: func.func @f
// LOWER-NOT: affine.apply
// LOWER: arith.remsi
// LOWER: arith.floordivsi
// LOWER: arith.ceildivsi
func.func @f(%a: tensor<?xf32>) -> (index, index, index, index) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %d = tensor.dim %a, %c0 : tensor<?xf32>
  %r = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%d]
  %m = affine.apply affine_map<(d0)[s0] -> ((d0 - 7) mod s0 + d0 floordiv 3 - (d0 - 8) ceildiv 3)>(%d)[%r]
  %k = affine.apply affine_map<(d0) -> (d0)>(%d)
  %c = affine.apply affine_map<(d0)[s0] -> (d0 * s0 - 1)>(%c3)[%c3]
  return %r, %m, %k, %c : index, index, index, index
}
