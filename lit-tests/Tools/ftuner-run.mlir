// ftuner-run: a function of the file runs at the shape given on the command line.
// RUN: ftuner-run %s --shape 0=2x3 --shape 1=3x2 | FileCheck %s
// CHECK: result #0: tensor 2x2xf32

// A lowered pipeline is checked against the function as read.
// RUN: ftuner-run %s --shape 0=31x5 --shape 1=5x45 --pass-pipeline='builtin.module(patch-ukernels{target=skylake-avx512},lower-ukernels,canonicalize,cse)' --check --json | FileCheck %s --check-prefix=CHECKED
// CHECKED: "entry": "mm"
// CHECKED-SAME: "backend": "jit", "compile_s": {{[0-9.e+-]+}}, "peak_bytes": {{[1-9][0-9]*}}
// CHECKED-SAME: "shape": "31x45"
// CHECKED-SAME: "check": {"ok": true}

// Errors name the argument and exit 1. Shapes that disagree with each other stop the
// compiled code at a run-time check naming the op (an abort, as MLIR's asserts), and the
// interpreter reports them too; neither reads out of bounds.
// RUN: not --crash ftuner-run %s --shape 0=2x3 --shape 1=4x2 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: assertion failed: operand shapes of 'linalg.matmul' at {{.*}}ftuner-run.mlir:{{[0-9]+}}:8 do not agree with its iteration space
// RUN: not --crash ftuner-run %s --shape 0=2x3 --shape 1=4x2 --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels)' 2>&1 | FileCheck %s --check-prefix=PATCHED
// PATCHED: assertion failed: operand shapes of the contraction at {{.*}} do not agree
// RUN: not ftuner-run %s --shape 0=2x3 --shape 1=4x2 --backend=interp 2>&1 | FileCheck %s --check-prefix=INTERP
// INTERP: linalg.matmul
// RUN: not ftuner-run %s 2>&1 | FileCheck %s --check-prefix=NOSHAPE
// NOSHAPE: ftuner-run: error: argument #0 (tensor<?x?xf32>) has dynamic dimensions: give --shape 0=...

func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
