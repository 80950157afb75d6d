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
// compiled code at a run-time check naming the op: the function returns at once, the
// failure comes back as an error (exit 1, not an abort), and the interpreter reports it
// too; neither reads out of bounds.
// RUN: not ftuner-run %s --shape 0=2x3 --shape 1=4x2 --pass-pipeline='builtin.module()' 2>&1 | FileCheck %s --check-prefix=MISMATCH
// RUN: not ftuner-run %s --shape 0=2x3 --shape 1=4x2 2>&1 | FileCheck %s --check-prefix=PATCHED
// MISMATCH: ftuner-run: error: run-time check failed: operand shapes of 'linalg.matmul' at {{.*}}ftuner-run.mlir:{{[0-9]+}}:8 do not agree with its iteration space
// RUN: not ftuner-run %s --shape 0=2x3 --shape 1=4x2 --threads 2 --pass-pipeline='builtin.module(patch-ukernels{target=zen4},lower-ukernels)' 2>&1 | FileCheck %s --check-prefix=PATCHED
// PATCHED: ftuner-run: error: run-time check failed: operand shapes of the contraction at {{.*}} do not agree
// RUN: not ftuner-run %s --shape 0=2x3 --shape 1=4x2 --backend=interp 2>&1 | FileCheck %s --check-prefix=INTERP
// INTERP: linalg.matmul
// RUN: not ftuner-run %s --shape 0=2x3 --shape 0=4x3 --shape 1=3x2 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: ftuner-run: error: --shape 0=4x3: argument #0 has a --shape already
// A pipeline that fails says why.
// RUN: not ftuner-run %s --shape 0=2x3 --shape 1=3x2 --pass-pipeline='builtin.module(patch-ukernels{target=pdp11})' 2>&1 | FileCheck %s --check-prefix=WHY
// WHY: ftuner-run: error: the pass pipeline failed: pass 'patch-ukernels' failed: {{.*}}unknown target 'pdp11'
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

// A reference that is NaN everywhere checks nothing: --check fails (it said "ok").
// RUN: not ftuner-run %s --entry nan --shape 0=4 --check 2>&1 | FileCheck %s --check-prefix=NAN
// NAN: result #0 of the reference is NaN everywhere: the check compares nothing
func.func @nan(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.subf %a, %a : f32
    %q = arith.divf %z, %z : f32
    linalg.yield %q : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
