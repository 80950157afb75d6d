// ftuner's pipelines are registered by name, like passes: `ftuner-cpu-patch`,
// `ftuner-cpu-pipeline` and `ftuner-gpu-pipeline` expand where they appear, with typed
// options (a misspelled one is an error naming the options), --dump-pass-pipeline shows
// the expansion, --help lists them. ftuner-run's default (JIT) for a module on tensors is the
// CPU pipeline for this machine ('builtin.module()' runs none), checked against the module
// as read.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=zen4})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline='builtin.module(ftuner-cpu-patch{target=zen4 derive=true})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PATCH
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline='builtin.module(ftuner-gpu-pipeline{target=h100})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: not ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline='builtin.module(ftuner-cpu-pipeline{targt=zen4})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: ftuner-opt --help | FileCheck %s --check-prefix=HELP
// RUN: ftuner-run %examples/dense_dynamic.mlir --shape 0=37x768 --check | FileCheck %s --check-prefix=EXEC
// RUN: ftuner-run %examples/dense_dynamic.mlir --shape 0=37x768 --check --pass-pipeline='builtin.module()' | FileCheck %s --check-prefix=EXEC

// CPU: builtin.module(outline-weight-preparation,canonicalize{{.*}},cse,linalg-fuse-elementwise-ops,fold-scale-into-conv,outline-weight-preparation,convert-1x1-conv-to-matmul{{.*}},peel-padded-windows{{.*}},patch-ukernels{{.*}} target=zen4 {{.*}},lower-ukernels{{.*}},canonicalize{{.*}},cse,outline-weight-preparation)
// PATCH: builtin.module(canonicalize{{.*}},cse,ollie-derive{{.*}}hw-target=zen4{{.*}},convert-ta-to-linalg,outline-weight-preparation,{{.*}},linalg-fuse-elementwise-ops,fold-scale-into-conv,outline-weight-preparation,convert-1x1-conv-to-matmul{{.*}},peel-padded-windows{{.*}},patch-ukernels{{.*}} target=zen4 {{.*}})
// PATCH-NOT: lower-ukernels
// GPU: patch-ukernels{{.*}} target=h100 {{.*}},bufferize{{.*}},lower-ukernels
// BAD: pipeline 'ftuner-cpu-pipeline' has no option 'targt' (options: target, tuning-db, derive)
// HELP: Pass Pipelines:
// HELP: --ftuner-cpu-patch
// HELP: --ftuner-cpu-pipeline
// HELP: --ftuner-gpu-pipeline
// EXEC: check: ok
