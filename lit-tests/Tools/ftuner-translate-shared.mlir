// ftuner-translate --emit=shared: the shipped dense layer as a shared library with a
// generated C header, linked by the C example (examples/c/dense_main.c), which checks
// every output element against a plain C loop at batches 1, 7, 37, 64, on one thread and
// on three (the library's thread pool), and makes a call with a wrong shape (error code 1
// and a message, nothing runs).
// RUN: rm -rf %t && mkdir -p %t
// RUN: ftuner-translate %examples/dense_dynamic.mlir --emit=shared -o %t/libdense.so
// RUN: FileCheck %s --check-prefix=HEADER < %t/dense.h
// RUN: cc %examples/c/dense_main.c -I%t -L%t -ldense -Wl,-rpath,%t -lm -o %t/dense_main
// RUN: %t/dense_main | FileCheck %s
// RUN: not ftuner-translate %examples/dense_dynamic.mlir --emit=shared 2>&1 | FileCheck %s --check-prefix=ERR
// A library named `lib.so` (nothing after "lib"): header lib.h, functions lib_run...; the
// wrapper once included "_h.h" and did not compile.
// RUN: ftuner-translate %examples/dense_dynamic.mlir --emit=shared -o %t/lib.so
// RUN: FileCheck %s --check-prefix=LIB < %t/lib.h
// And --name apart from the file name: the wrapper finds its header all the same.
// RUN: ftuner-translate %examples/dense_dynamic.mlir --emit=shared --name=other -o %t/libdense2.so
// RUN: FileCheck %s --check-prefix=OTHER < %t/dense2.h
// REQUIRES: cc
// HEADER: #0: memref<?x768xf32>
// HEADER: int dense_run(const ftuner_tensor *inputs, int32_t num_inputs, ftuner_tensor *outputs, int32_t num_outputs, char *err, size_t err_len);
// HEADER: void dense_set_num_threads(int32_t n);
// CHECK: 1 thread, batch 1: output 1x2304, max error
// CHECK: 1 thread, batch 37: output 37x2304
// CHECK: 1 thread, batch 64: output 64x2304
// CHECK: 3 threads, batch 1: output 1x2304, max error
// CHECK: 3 threads, batch 37: output 37x2304
// CHECK: 3 threads, batch 64: output 64x2304
// CHECK: wrong shape: error 1: input 0 dim 1 is 767, the model takes 768
// CHECK: signature: {"inputs": [{"dtype": "float32", "dims": {{\[\["}}arg0.0", 0, null], 768]}
// ERR: error: --emit=shared needs -o FILE.so
// LIB: int lib_run(
// OTHER: int other_run(
