// The BERT layer exported by torch-mlir simplifies and stays valid.
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --canonicalize --cse | ftuner-opt | FileCheck %s

// CHECK-LABEL: func.func @bert_layer_dynamic
// The trivially true shape asserts are gone, the real ones stay.
// CHECK-NOT: "mismatched size for broadcast"
// CHECK: cf.assert %{{.*}}, "negative values not allowed in new dimensions"
// CHECK: linalg.batch_matmul
// CHECK: math.erf
// CHECK: return
