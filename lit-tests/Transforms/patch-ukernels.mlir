// RUN: ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels=target=zen4 | FileCheck %s --check-prefix=CPU
// CPU-LABEL: func.func @dense_dynamic
// CPU: %[[R:.*]] = ukernel.patch "matmul" target("zen4") tiles [6x64, 6x32,
// CPU-SAME: cache(kc = 672, mc = 240, nc = 10880)
// CPU-SAME: m_plan(6 | 0:- 1:1 2:2 3:2+1 4:4 5:4+1)
// CPU-SAME: n_plan(64 static 2304 | 0:-)
// CPU-SAME: iterators ["parallel", "parallel", "reduction"]
// CPU-SAME: ins(%{{.*}}, %transposed : tensor<?x768xf32>, tensor<768x2304xf32>) outs(%{{.*}} : tensor<?x2304xf32>) {
// CPU: arith.mulf
// CPU: arith.addf
// CPU: ukernel.yield %{{.*}} : f32
// CPU: } -> tensor<?x2304xf32>
// CPU-NOT: linalg.matmul

// RUN: ftuner-opt %examples/bmm_nt_dynamic.mlir --patch-ukernels=target=a100 | FileCheck %s --check-prefix=GPU
// GPU: ukernel.patch "batch_matmul" target("a100") tiles [256x128,
// GPU-SAME: m_plan(256 | 0:- 1:1 2:2 3:2+1
// GPU-SAME: n_plan(128 | 0:- 1:1

// The output parses again, verifies, and upstream accepts its generic form.
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --patch-ukernels=target=zen4 | ftuner-opt --mlir-print-op-generic | FileCheck %s --check-prefix=BERT
// BERT-COUNT-8: "ukernel.patch"
// RUN: ftuner-opt %examples/dcgan_generator.mlir --patch-ukernels=target=skylake-avx512 --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: PatchUkernels
// STATS-NEXT: (S) 5 num-patched - Contractions patched

// Options: element types and padding.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels="target=zen4 dtypes=f16" | FileCheck %s --check-prefix=NODT
// NODT: linalg.matmul
// NODT-NOT: ukernel.patch
// RUN: ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels="target=zen4 max-ukernels=3 max-padding=0.5" | FileCheck %s --check-prefix=PAD
// With only {6, 2, 1} the exact covers stay cheaper than padding to 6.
// PAD: m_plan(6 | 0:- 1:1 2:2 3:2+1 4:2+2 5:2+2+1)
// RUN: not ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels="max-padding=2" 2>&1 | FileCheck %s --check-prefix=BADPAD
// BADPAD: error: max-padding must be within [0, 1], got 2

// A picture of the plan for one run-time shape.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels=target=zen4 --dump-patch-plan=M=100,N=2304:%t.svg -o /dev/null
// RUN: FileCheck %s --check-prefix=SVG < %t.svg
// SVG: <svg
// SVG: M=100 x N=2304: 17 x 36 uKernel calls
// SVG: 6x64
// RUN: not ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels=target=zen4 --dump-patch-plan=M=100,N=99:%t.svg 2>&1 | FileCheck %s --check-prefix=STATIC
// STATIC: error: --dump-patch-plan: N is static (2304) in this contraction, not 99
