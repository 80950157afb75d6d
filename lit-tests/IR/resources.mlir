// dense_resource blobs are kept and printed back byte-exact.
// RUN: ftuner-opt %s | FileCheck %s
// CHECK: arith.constant dense_resource<blob1> : tensor<2xf32>
// CHECK: {-#
// CHECK-NEXT:   dialect_resources: {
// CHECK-NEXT:     builtin: {
// CHECK-NEXT:       blob1: "0x040000000000803F00000040"
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: #-}
func.func @r() -> tensor<2xf32> {
  %0 = arith.constant dense_resource<blob1> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F00000040"
    }
  }
#-}
