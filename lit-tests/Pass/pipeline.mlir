// Pipelines parse, print back, and the flag form nests like mlir-opt's.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=3},cse),symbol-dce)' --dump-pass-pipeline 2>&1 -o /dev/null | FileCheck %s
// CHECK: Pass Manager with 3 passes:
// CHECK-NEXT: builtin.module(func.func(canonicalize{max-iterations=3 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},cse),symbol-dce)

// RUN: ftuner-opt %s --cse --canonicalize=top-down=false --dump-pass-pipeline 2>&1 -o /dev/null | FileCheck %s --check-prefix=FLAGS
// FLAGS: builtin.module(cse,canonicalize{max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=false})

// The dumped pipeline is accepted again.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=3 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},cse),symbol-dce)' | FileCheck %s --check-prefix=RUN2
// RUN2: func.func @f

func.func @f() {
  return
}
