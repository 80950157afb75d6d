// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @if_no_else(%c: i1, %x: f32) {
  // expected-error@+1 {{'scf.if' op must have an else block if defining values}}
  %0 = scf.if %c -> (f32) {
    scf.yield %x : f32
  }
  return
}

// -----

func.func @for_yield(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'scf.for' op expected 1 yield operands, got 0}}
  %0 = scf.for %i = %c0 to %n step %n iter_args(%a = %x) -> (f32) {
    scf.yield
  }
  return
}

// -----

func.func @while_before_terminator(%x: i32) {
  // expected-error@+1 {{'scf.while' op expects the 'before' region to terminate with 'scf.condition'}}
  %0 = scf.while (%a = %x) : (i32) -> i32 {
    scf.yield %a : i32
  } do {
  ^bb0(%b: i32):
    scf.yield %b : i32
  }
  return
}

// -----

func.func @while_after_types(%x: i32, %c: i1) {
  // expected-error@+1 {{'scf.while' op 'scf.condition' must forward values of the 'after' region's argument types: (i32) vs (f32)}}
  %0 = scf.while (%a = %x) : (i32) -> i32 {
    scf.condition(%c) %a : i32
  } do {
  ^bb0(%b: f32):
    scf.yield %x : i32
  }
  return
}

// -----

func.func @while_yield_types(%x: i32, %c: i1, %f: f32) {
  // expected-error@+1 {{'scf.while' op the 'after' region must yield values of the 'before' region's argument types: (f32) vs (i32)}}
  %0 = scf.while (%a = %x) : (i32) -> i32 {
    scf.condition(%c) %a : i32
  } do {
  ^bb0(%b: i32):
    scf.yield %f : f32
  }
  return
}

// -----

func.func @while_input_count(%x: i32) {
  // expected-error@+1 {{expected as many input types as operands (expected 1 got 0)}}
  %0 = scf.while (%a = %x) : () -> i32 {
  } do {
  }
  return
}

// -----

func.func @condition_outside(%c: i1) {
  // expected-error@+1 {{'scf.condition' op expects parent op 'scf.while'}}
  scf.condition(%c)
}

// -----

func.func @switch_duplicate(%i: index) {
  scf.index_switch %i
  case 1 {
    scf.yield
  }
  // expected-error@+1 {{duplicate case value: 1}}
  case 1 {
    scf.yield
  }
  default {
  }
  return
}

// -----

func.func @switch_types(%i: index, %a: f32, %b: i32) -> f32 {
  // expected-error@+1 {{'scf.index_switch' op expected result #0 of each region to be f32}}
  %0 = scf.index_switch %i -> f32
  case 1 {
    scf.yield %b : i32
  }
  default {
    scf.yield %a : f32
  }
  return %0 : f32
}

// -----

func.func @switch_count(%i: index, %a: f32) -> f32 {
  // expected-error@+1 {{'scf.index_switch' op expected each region to return 1 values, but default region returns 0}}
  %0 = scf.index_switch %i -> f32
  default {
  }
  return %0 : f32
}

// -----

func.func @parallel_step(%n: index) {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'scf.parallel' op constant step operand must be positive}}
  scf.parallel (%i) = (%c0) to (%n) step (%c0) {
    scf.reduce
  }
  return
}

// -----

func.func @parallel_reductions(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{'scf.parallel' op expects number of results: 1 to be the same as number of reductions: 0}}
  %0 = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%x) -> f32 {
    scf.reduce
  }
  return
}

// -----

func.func @parallel_bounds(%n: index) {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{expected 1 operands, one per induction variable, got 2}}
  scf.parallel (%i) = (%c0, %c0) to (%n) step (%n) {
    scf.reduce
  }
  return
}

// -----

func.func @reduce_region(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%x) -> f32 {
    // expected-error@+1 {{'scf.reduce' op expected two block arguments with type f32 in the 0-th reduction region}}
    scf.reduce(%x : f32) {
    ^bb0(%l: f32):
      scf.reduce.return %l : f32
    }
  }
  return
}

// -----

func.func @forall_bounds(%n: index) {
  // expected-error@+1 {{expected 2 bounds in each list, one per induction variable}}
  scf.forall (%i, %j) in (%n) {
  }
  return
}

// -----

func.func @forall_output_type(%t: tensor<4xf32>) {
  // expected-error@+1 {{'scf.forall' op type mismatch between the 0-th output, its block argument and its result}}
  %0 = "scf.forall"(%t) <{operandSegmentSizes = array<i32: 0, 0, 0, 1>, staticLowerBound = array<i64: 0>, staticUpperBound = array<i64: 4>, staticStep = array<i64: 1>}> ({
  ^bb0(%i: index, %o: tensor<4xf32>):
    scf.forall.in_parallel {
    }
  }) : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @forall_mapping(%n: index) {
  // expected-error@+1 {{'scf.forall' op mapping attribute size must match op rank}}
  scf.forall (%i) in (%n) {
  } {mapping = [#gpu.thread<x>, #gpu.thread<y>]}
  return
}

// -----

func.func @parallel_insert_outside(%v: tensor<1xf32>, %t: tensor<4xf32>) {
  // expected-error@+1 {{'tensor.parallel_insert_slice' op expected 'scf.forall.in_parallel' parent}}
  tensor.parallel_insert_slice %v into %t[0] [1] [1] : tensor<1xf32> into tensor<4xf32>
  return
}

// -----

func.func @parallel_insert_not_output(%v: tensor<1xf32>, %t: tensor<4xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  %0 = scf.forall (%i) in (4) shared_outs(%o = %t) -> (tensor<4xf32>) {
    scf.forall.in_parallel {
      // expected-error@+1 {{'tensor.parallel_insert_slice' op may only insert into a shared output block argument of the loop}}
      tensor.parallel_insert_slice %v into %u[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @in_parallel_ops(%t: tensor<4xf32>) -> tensor<4xf32> {
  %0 = scf.forall (%i) in (4) shared_outs(%o = %t) -> (tensor<4xf32>) {
    // expected-error@+1 {{'scf.forall.in_parallel' op expected only tensor.parallel_insert_slice ops, got 'arith.constant'}}
    scf.forall.in_parallel {
      %c = arith.constant 0 : index
    }
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @execute_region_args() {
  // expected-error@+1 {{'scf.execute_region' op region cannot have any arguments}}
  scf.execute_region {
  ^bb0(%x: i32):
    scf.yield
  }
  return
}

// -----

func.func @execute_region_yield(%x: i32) -> i64 {
  // expected-error@+1 {{'scf.execute_region' op expects 'scf.yield' to yield the result types (1 values), got 1 values of other types}}
  %0 = scf.execute_region -> i64 {
    scf.yield %x : i32
  }
  return %0 : i64
}

// -----

func.func @forall_static_min(%t: tensor<4xf32>) {
  // expected-error@+1 {{-2^63 cannot be a static entry (it marks a dynamic one)}}
  scf.forall (%i) in (-9223372036854775808) {
  }
  return
}

// -----

// Found by the canonicalize fuzz target: a yield of another type verified, and folding the
// scf.if made an arith.select that does not.
func.func @if_yield_type(%c: i1, %x: f32) -> bf16 {
  // expected-error@+1 {{'scf.if' op along control flow edge from Operation scf.yield to parent: successor operand type #0 'f32' should match successor input type #0 'bf16'}}
  %v = scf.if %c -> (bf16) {
    scf.yield %x : f32
  } else {
    scf.yield %x : f32
  }
  return %v : bf16
}

// -----

func.func @for_yield_type(%n: index, %x: f32, %y: bf16) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'scf.for' op along control flow edge from Operation scf.yield to parent: successor operand type #0 'bf16' should match successor input type #0 'f32'}}
  %0 = scf.for %i = %c0 to %n step %n iter_args(%a = %x) -> (f32) {
    scf.yield %y : bf16
  }
  return %0 : f32
}

// -----

func.func @for_region_arg_type(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'scf.for' op types mismatch between 0th iter region arg and defined value}}
  %0 = "scf.for"(%c0, %n, %n, %x) ({
  ^bb0(%i: index, %a: bf16):
    "scf.yield"(%x) : (f32) -> ()
  }) : (index, index, index, f32) -> f32
  return %0 : f32
}
