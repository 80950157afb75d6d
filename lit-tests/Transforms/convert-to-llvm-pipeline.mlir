// The whole pipeline on the shipped layers: patch, lower, bufferize, loops, llvm; the
// result translates to LLVM IR and llc makes FMA code of it.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(canonicalize,cse,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse,bufferize,convert-linalg-to-loops,canonicalize,cse,convert-parallel-loops-to-runtime,convert-to-llvm)" -o %t.mlir
// RUN: %mlir-translate --mlir-to-llvmir %t.mlir -o %t.ll
// RUN: llc-22 -O2 -mcpu=znver4 %t.ll -o - | FileCheck %s
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --pass-pipeline="builtin.module(canonicalize,cse,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse,bufferize,convert-linalg-to-loops,canonicalize,cse,convert-parallel-loops-to-runtime,convert-to-llvm)" -o %t.bert.mlir
// RUN: %mlir-translate --mlir-to-llvmir %t.bert.mlir -o /dev/null
// REQUIRES: mlir-translate
// The function allocates and hands its tile loops to the thread pool; the outlined
// bodies hold the FMAs.
// CHECK-LABEL: dense_dynamic:
// CHECK-DAG: aligned_alloc
// CHECK-DAG: ftuner_rt_parallel_for
// CHECK-LABEL: _mlir_ciface_dense_dynamic:
// CHECK-LABEL: dense_dynamic_par{{[0-9]+}}:
// CHECK: vfmadd231ps {{.*}}zmm
