// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// GPU ops in generic form round-trip; gpu.barrier and gpu.return have custom forms.
// CHECK: "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK: "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK: gpu.barrier
// CHECK: gpu.return
"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() <{function_type = (memref<?xf32>) -> (), sym_name = "k"}> ({
  ^bb0(%arg0: memref<?xf32>):
    %0 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %1 = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    gpu.barrier
    gpu.return
  }) {gpu.kernel} : () -> ()
}) : () -> ()
