// Weights stored as dense_resource blobs (as torch-mlir exports them) become LLVM
// constants with the blob's values, and the compiled function returns them.
// RUN: ftuner-translate %s --emit=llvm -O0 | FileCheck %s
// RUN: ftuner-run %s --check | FileCheck %s --check-prefix=EXEC
// CHECK: = private constant [2 x [2 x float]] {{\[}}[2 x float] [float 1.000000e+00, float 2.000000e+00], [2 x float] [float -5.000000e-01, float 4.000000e+00]]
// EXEC: tensor 2x2xf32 min -0.500000 max 4.000000
// EXEC: check: ok
func.func @weights() -> tensor<2x2xf32> {
  %w = arith.constant dense_resource<blob> : tensor<2x2xf32>
  return %w : tensor<2x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F00000040000000BF00008040"
    }
  }
#-}
