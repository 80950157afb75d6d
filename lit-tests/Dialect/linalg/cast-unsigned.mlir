// A named op's `cast = #linalg.type_fn<cast_unsigned>` reads integers as unsigned where
// its body converts them (MLIR's region builders): an i8 of bits 0xC8 is 200, not -56.
// The body is built with arith.extui (upstream's generalization of the same op,
// ../shared/data/mlir-tests-wide/upstream/Dialect/Linalg/generalize-named-polymorphic-ops/
// case-002), and the interpreter and the JIT both compute 200; without the attribute, -56.
// RUN: ftuner-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=BODY
// RUN: ftuner-run %s --entry unsigned_matmul | FileCheck %s --check-prefix=UNSIGNED
// RUN: ftuner-run %s --entry unsigned_matmul --backend=interp | FileCheck %s --check-prefix=UNSIGNED
// RUN: ftuner-run %s --entry signed_matmul | FileCheck %s --check-prefix=SIGNED
// RUN: ftuner-run %s --entry signed_matmul --backend=interp | FileCheck %s --check-prefix=SIGNED

// BODY-LABEL: sym_name = "unsigned_matmul"
// BODY: "arith.extui"(%{{.*}}) : (i8) -> i32
// BODY-LABEL: sym_name = "signed_matmul"
// BODY: "arith.extsi"(%{{.*}}) : (i8) -> i32
// UNSIGNED: first [200.000000]
// SIGNED: first [-56.000000]
func.func @unsigned_matmul() -> tensor<1x1xi32> {
  %a = arith.constant dense<-56> : tensor<1x1xi8>
  %b = arith.constant dense<1> : tensor<1x1xi8>
  %z = arith.constant dense<0> : tensor<1x1xi32>
  %0 = linalg.matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%a, %b : tensor<1x1xi8>, tensor<1x1xi8>) outs(%z : tensor<1x1xi32>) -> tensor<1x1xi32>
  return %0 : tensor<1x1xi32>
}
func.func @signed_matmul() -> tensor<1x1xi32> {
  %a = arith.constant dense<-56> : tensor<1x1xi8>
  %b = arith.constant dense<1> : tensor<1x1xi8>
  %z = arith.constant dense<0> : tensor<1x1xi32>
  %0 = linalg.matmul ins(%a, %b : tensor<1x1xi8>, tensor<1x1xi8>) outs(%z : tensor<1x1xi32>) -> tensor<1x1xi32>
  return %0 : tensor<1x1xi32>
}
