// RUN: ftuner-opt %s --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @trivial_assert
func.func @trivial_assert(%c: i1) {
  %true = arith.constant true
  // CHECK-NOT: "always"
  cf.assert %true, "always"
  // CHECK: cf.assert %{{.*}}, "maybe"
  cf.assert %c, "maybe"
  return
}
