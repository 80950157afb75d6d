// A GPU kernel (generic form: our gpu dialect has no custom syntax yet): x[i] *= a.
"builtin.module"() ({
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() ({
    ^bb0(%arg0: memref<?xf32>, %arg1: f32):
      %0 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %1 = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %2 = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
      %3 = "arith.muli"(%1, %2) <{overflowFlags = #arith.overflow<none>}> : (index, index) -> index
      %4 = "arith.addi"(%3, %0) <{overflowFlags = #arith.overflow<none>}> : (index, index) -> index
      %5 = "arith.constant"() <{value = 0 : index}> : () -> index
      %6 = "memref.dim"(%arg0, %5) : (memref<?xf32>, index) -> index
      %7 = "arith.cmpi"(%4, %6) <{predicate = 6 : i64}> : (index, index) -> i1
      "scf.if"(%7) ({
        %8 = "memref.load"(%arg0, %4) : (memref<?xf32>, index) -> f32
        %9 = "arith.mulf"(%8, %arg1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
        "memref.store"(%9, %arg0, %4) : (f32, memref<?xf32>, index) -> ()
        "scf.yield"() : () -> ()
      }, {
      }) : (i1) -> ()
      "gpu.barrier"() : () -> ()
      "gpu.return"() : () -> ()
    }) {function_type = (memref<?xf32>, f32) -> (), gpu.kernel, sym_name = "scale", workgroup_attributions = 0 : i64} : () -> ()
  }) : () -> ()
}) {gpu.container_module} : () -> ()

