// The BERT layer exported by torch-mlir simplifies and stays valid.
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --canonicalize --cse | ftuner-opt | FileCheck %s

// CHECK-LABEL: func.func @bert_layer_dynamic
// Every shape assert of this layer is decided by its sizes: the broadcast ones are
// trivially true, and the others (negative sizes, inferred dims, the contracting dim)
// hold because a size (`tensor.dim`, here the sequence length) is never negative.
// CHECK-NOT: cf.assert
// CHECK: linalg.batch_matmul
// CHECK-NOT: cf.assert
// CHECK: math.erf
// CHECK-NOT: cf.assert
// CHECK: return
