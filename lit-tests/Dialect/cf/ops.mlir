// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @branches
func.func @branches(%c: i1, %x: i32) -> i32 {
  // CHECK: cf.assert %{{.*}}, "must hold"
  cf.assert %c, "must hold"
  // CHECK: cf.cond_br %{{.*}}, ^bb1(%{{.*}} : i32), ^bb2
  // GENERIC: "cf.cond_br"(%{{.*}}, %{{.*}})[^bb1, ^bb2] <{operandSegmentSizes = array<i32: 1, 1, 0>}>
  cf.cond_br %c, ^bb1(%x : i32), ^bb2
// CHECK: ^bb1(%{{.*}}: i32):  // pred: ^bb0
^bb1(%y: i32):
  // CHECK: cf.br ^bb2
  cf.br ^bb2
// CHECK: ^bb2:  // 2 preds: ^bb0, ^bb1
^bb2:
  return %x : i32
}
