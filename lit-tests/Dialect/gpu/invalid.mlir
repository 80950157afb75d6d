// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @thread_id_type() {
  // expected-error@+1 {{'gpu.thread_id' op result #0 must be index, but got 'i32'}}
  %0 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> i32
  return
}

// -----

func.func @missing_dimension() {
  // expected-error@+1 {{'gpu.block_dim' op requires attribute 'dimension'}}
  %0 = "gpu.block_dim"() : () -> index
  return
}
