// TOSA in (a dense layer with a dynamic row count, as TOSA frontends emit it): the tools
// read it through upstream MLIR, lower it to linalg on tensors with upstream's own
// TOSA conversions, and treat it as any linalg module: ftuner-opt patches the batched
// matmul with uKernels, ftuner-run compiles and runs it against the interpreter at
// several row counts.
// RUN: ftuner-opt %s --lower-frontends --canonicalize 2>&1 | FileCheck %s
// CHECK: note: read through upstream MLIR; lowered to linalg by upstream's conversions: tosa
// CHECK-LABEL: func.func @dense
// CHECK-NOT: tosa.
// CHECK-NOT: linalg.batch_matmul
// CHECK: linalg.matmul
// CHECK: math.exp
// RUN: ftuner-opt %s --lower-frontends --canonicalize --patch-ukernels=target=zen4 2>/dev/null | FileCheck %s --check-prefix=PATCH
// PATCH: ukernel.patch
// RUN: ftuner-run %s --shape 0=1x37x16 --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=1x1x16 --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=1x256x16 --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=1x0x16 --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --shape 0=1x37x16 --pass-pipeline='builtin.module(canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// JIT: check: ok

// Without the conversion (ftuner-opt reads it, but keeps the TOSA ops generic).
// RUN: ftuner-opt %s 2>&1 | FileCheck %s --check-prefix=KEEP
// KEEP: kept as generic operations: tosa.const (2), tosa.matmul (1), tosa.add (1), tosa.clamp (1), tosa.exp (1)

func.func @dense(%x: tensor<1x?x16xf32>, %w: tensor<1x16x8xf32>, %b: tensor<1x1x8xf32>) -> tensor<1x?x8xf32> {
  %za = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %zb = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %x, %w, %za, %zb : (tensor<1x?x16xf32>, tensor<1x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x8xf32>
  %z = tosa.add %y, %b : (tensor<1x?x8xf32>, tensor<1x1x8xf32>) -> tensor<1x?x8xf32>
  %r = tosa.clamp %z {min_val = 0.0 : f32, max_val = 3.4e38 : f32} : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
  %e = tosa.exp %r : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
  return %e : tensor<1x?x8xf32>
}
