// RUN: ftuner-opt %s --pass-pipeline='builtin.module(func.func(canonicalize,cse))' --mlir-timing -o /dev/null 2>&1 | FileCheck %s
// CHECK: ... Execution time report ...
// CHECK: Total Execution Time: {{[0-9.]+}} seconds
// CHECK: ----Wall Time----  ----Name----
// CHECK: Parser
// CHECK: 'func.func' Pipeline
// CHECK: Canonicalizer
// CHECK: CSE
// CHECK: Output
// CHECK: Rest
// CHECK: Total

// RUN: ftuner-opt %s --cse --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: ... Pass statistics report ...
// STATS: CSE
// STATS-NEXT: (S) 1 num-cse'd - Number of operations CSE'd

func.func @f(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  %1 = arith.addf %a, %a : f32
  %2 = arith.mulf %0, %1 : f32
  return %2 : f32
}
