// The prepare function outline-weight-preparation builds runs once per set of weights
// (`ftuner.run_once`). convert-to-llvm compiles it `noinline optnone` when its loops are
// outlined (one block, no op with regions): LLVM's optimizing instruction selection is
// quadratic in the block that builds its results (1.8 s of BERT-base's compile, for code
// that runs once). The outlined nests and the per-call function stay optimized; a prepare
// function that still holds its loops stays optimized too.
// RUN: ftuner-opt %s --outline-weight-preparation | FileCheck %s --check-prefix=ATTR
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(outline-weight-preparation,bufferize,convert-linalg-to-loops,outline-loop-nests,convert-to-llvm)' | FileCheck %s
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(outline-weight-preparation,bufferize,convert-linalg-to-loops,convert-to-llvm)' | FileCheck %s --check-prefix=LOOPS
// RUN: ftuner-run %s --entry dense --shape 0=3x8 --check | FileCheck %s --check-prefix=EXEC

// ATTR-LABEL: func.func @dense_prepare
// ATTR-SAME: attributes {ftuner.run_once}
// ATTR-LABEL: func.func @dense(
// ATTR-NOT: ftuner.run_once
// ATTR: func.func @strided_once

// The prepare function and its C interface are O0; its outlined transpose is not; @dense
// (which calls the matmul nest on every run) is not.
// CHECK: "llvm.func"() <{function_type = {{[^"]*}}, passthrough = ["noinline", "optnone"], sym_name = "dense_prepare"}>
// CHECK: passthrough = ["noinline", "optnone"], sym_name = "_mlir_ciface_dense_prepare"
// CHECK: linkage = #llvm.linkage<private>, passthrough = ["noinline"], sym_name = "dense_prepare_nest0"
// CHECK: "llvm.func"() <{function_type = {{[^"]*}}, sym_name = "dense"}>
// A run-once function whose copy convert-to-llvm turns into loops (a strided source)
// stays optimized; one whose copy is a memcpy is O0.
// CHECK: "llvm.func"() <{function_type = {{[^"]*}}, sym_name = "strided_once"}>
// CHECK: passthrough = ["noinline", "optnone"], sym_name = "flat_once"

// LOOPS: "llvm.func"() <{function_type = {{[^"]*}}, sym_name = "dense_prepare"}>

// EXEC-LABEL: result #0: tensor 3x16xf32
// EXEC: check: ok
func.func @dense(%x: tensor<?x8xf32>, %w: tensor<16x8xf32> {ftuner.weight}) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %t = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %o = tensor.empty(%d) : tensor<?x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<?x16xf32>) -> tensor<?x16xf32>
  %r = linalg.matmul ins(%x, %t : tensor<?x8xf32>, tensor<8x16xf32>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

func.func @strided_once(%a: memref<8x16xf32>, %b: memref<8x8xf32>) attributes {ftuner.run_once} {
  %s = memref.subview %a[0, 0] [8, 8] [1, 1] : memref<8x16xf32> to memref<8x8xf32, strided<[16, 1]>>
  memref.copy %s, %b : memref<8x8xf32, strided<[16, 1]>> to memref<8x8xf32>
  return
}

func.func @flat_once(%a: memref<8x8xf32>, %b: memref<8x8xf32>) attributes {ftuner.run_once} {
  memref.copy %a, %b : memref<8x8xf32> to memref<8x8xf32>
  return
}
