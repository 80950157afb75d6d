// A failing pass writes a reproducer: the IR before it, with the pipeline.
// RUN: rm -f %t.repro.mlir
// RUN: not ftuner-opt %s --pass-pipeline='builtin.module(cse,canonicalize{test-convergence=true max-iterations=1})' --mlir-pass-pipeline-crash-reproducer=%t.repro.mlir --mlir-print-ir-after-failure 2>&1 | FileCheck %s
// CHECK: IR Dump After Canonicalizer Failed (canonicalize)
// CHECK: error: pattern rewriting did not converge
// RUN: FileCheck %s --check-prefix=REPRO < %t.repro.mlir
// REPRO: // configuration: --pass-pipeline='builtin.module(cse,canonicalize{max-iterations=1 max-num-rewrites=-1 region-simplify=normal test-convergence=true top-down=true})'
// REPRO: "func.func"
// The reproducer is valid input again.
// RUN: ftuner-opt %t.repro.mlir | FileCheck %s --check-prefix=REPARSE
// REPARSE: func.func @f

func.func @f() -> i64 {
  %a = arith.constant 6 : i64
  %b = arith.constant 7 : i64
  %c = arith.muli %a, %b : i64
  %d = arith.addi %c, %a : i64
  return %d : i64
}
