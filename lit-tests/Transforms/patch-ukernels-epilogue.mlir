// patch-ukernels absorbs the elementwise tail of a contraction into the patch's epilogue:
// the bias broadcast is read at its source, the add and the activation run on each
// finished output element.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels=target=zen4 --mlir-pass-statistics 2>&1 | FileCheck %s
// CHECK: #[[BIAS:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @dense_dynamic
// CHECK-NOT: linalg.generic
// CHECK: ukernel.patch "matmul"
// CHECK: } epilogue(ins(%arg2 : tensor<2304xf32>) maps [#[[BIAS]]]) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[B]] : f32
// CHECK-NEXT: ukernel.yield %[[S]] : f32
// CHECK-NEXT: } -> tensor<?x2304xf32>
// CHECK-NOT: linalg.generic
// CHECK: (S) 1 num-epilogue-ops

// The printed form parses back.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels=target=zen4 | ftuner-opt | FileCheck %s --check-prefix=RT
// RT: } epilogue(ins(%arg2 : tensor<2304xf32>) maps [#{{.*}}]) {

// The BERT layer: six bias-adds, two residual adds (through the `1 x T x 768` views) and
// the GELU (erf, with its constants cloned in) — 9 elementwise ops in 6 epilogues.
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --pass-pipeline="builtin.module(canonicalize,cse,patch-ukernels{target=zen4})" --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=BERT
// BERT-COUNT-6: } epilogue(
// BERT: (S) 9 num-epilogue-ops
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --pass-pipeline="builtin.module(canonicalize,cse,patch-ukernels{target=zen4})" | FileCheck %s --check-prefix=GELU
// GELU: epilogue(ins(%arg12 : tensor<3072xf32>)
// GELU: arith.addf
// GELU: math.erf
// GELU: ukernel.yield

// Off: the consumers stay.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --patch-ukernels="target=zen4 fuse-epilogues=false" | FileCheck %s --check-prefix=OFF
// OFF-NOT: epilogue(
// OFF: linalg.generic

// Lowered, the epilogue runs on each register tile's rows in the last k block, in
// registers before the one store (lower/vector_epilogue.rs: the bias read once per tile
// as a vector, added to each row), and the layer computes what it computed before.
// RUN: ftuner-opt %examples/dense_dynamic.mlir --pass-pipeline="builtin.module(canonicalize,cse,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" | FileCheck %s --check-prefix=LOW
// LOW: %[[LAST:.*]] = arith.cmpi sge, %{{.*}}, %c768 : index
// LOW: scf.if %[[LAST]] -> (vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>) {
// LOW-NEXT: %[[BIAS:.*]] = "vector.transfer_read"({{.*}}) {{.*}} : (tensor<64xf32>, index, f32) -> vector<64xf32>
// LOW-NEXT: arith.addf %{{.*}}, %[[BIAS]] : vector<64xf32>
// RUN: ftuner-run %examples/dense_dynamic.mlir --shape 0=37x768 --pass-pipeline="builtin.module(canonicalize,cse,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=RAN
// RUN: ftuner-run %examples/bert_layer_dynamic.mlir --shape 0=1x19x768 --pass-pipeline="builtin.module(canonicalize,cse,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)" --check | FileCheck %s --check-prefix=RAN
// RAN: check: ok
