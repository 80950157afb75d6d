// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// GPU ops in generic form round-trip; gpu.barrier and gpu.return have custom forms.
// CHECK: "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK: "gpu.func"() ({
// CHECK: "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK: gpu.barrier
// CHECK: gpu.return
// CHECK: }) {function_type = (memref<?xf32>) -> (), gpu.kernel, sym_name = "k"} : () -> ()
"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() ({
  ^bb0(%arg0: memref<?xf32>):
    %0 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %1 = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    gpu.barrier
    gpu.return
  }) {function_type = (memref<?xf32>) -> (), gpu.kernel, sym_name = "k"} : () -> ()
}) : () -> ()
