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

// -----

// Constant and identical-successor conditional branches become branches, a branch to a
// block only it reaches merges it, and blocks nothing reaches go.
// CHECK-LABEL: func.func @branches
// CHECK-NEXT: return %arg1 : i32
func.func @branches(%cond: i1, %a: i32) -> i32 {
  %true = arith.constant true
  %false = arith.constant false
  cf.cond_br %cond, ^bb1(%a : i32), ^bb1(%a : i32)
^bb1(%x: i32):
  cf.cond_br %true, ^bb2, ^bb3(%x : i32)
^bb2:
  cf.cond_br %false, ^bb3(%x : i32), ^bb4
^bb3(%y: i32):
  cf.br ^bb3(%y : i32)
^bb4:
  return %x : i32
}
