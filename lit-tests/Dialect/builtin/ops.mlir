// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// RUN: ftuner-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK: module @named attributes {foo.bar = 1 : i32} {
// GENERIC: "builtin.module"() <{sym_name = "named"}> ({
module @named attributes {foo.bar = 1 : i32} {
  // CHECK-LABEL: func.func @casts
  func.func @casts(%arg0: i64) -> index {
    // CHECK: %[[C:.*]] = builtin.unrealized_conversion_cast %{{.*}} : i64 to index
    // GENERIC: "builtin.unrealized_conversion_cast"(%{{.*}}) : (i64) -> index
    %0 = builtin.unrealized_conversion_cast %arg0 : i64 to index
    // CHECK: return %[[C]] : index
    return %0 : index
  }
}
