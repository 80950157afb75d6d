// RUN: ftuner-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect
// Inputs on which the coverage-guided fuzz targets (fuzz/, docs/robustness.md) found a
// panic: each is now a located error (as mlir-opt-22 reports it) or reads fine.

// An `i0` holds 0 only (the range check shifted by width - 1).
func.func @i0_out_of_range() -> i0 {
  // expected-error@+1 {{integer constant out of range for attribute}}
  %c = arith.constant 1 : i0
  return %c : i0
}

// -----

// The negation of the smallest i128 overflowed.
// expected-error@+1 {{integer constant out of range for attribute}}
"test.op"() {a = -0x80000000000000000000000000000000 : i64} : () -> ()

// -----

func.func @i0_zero() -> i0 {
  %c = arith.constant 0 : i0
  return %c : i0
}

// -----

// A non-ASCII character where a token is expected: the error token ended inside it.
// expected-error@+1 {{unexpected character}}
"test.op"() {a = array<i32: 1, 0, й>} : () -> ()

// -----

// A plan's main tile sized the residue table before anything checked it (11 billion
// entries: an allocation failure, abort).
func.func @huge_main_tile(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{main tile 11110111116 of 'n_plan' is out of range (at most 65536)}}
  %0 = ukernel.patch "matmul" target("zen4") tiles [1x16] cache(kc = 64, mc = 128, nc = 256) m_plan(1 |) n_plan(11110111116 static 16 | 0:-) maps [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] iterators ["parallel", "parallel", "reduction"] ins(%a, %b : tensor<?x8xf32>, tensor<8x16xf32>) outs(%c : tensor<?x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    ukernel.yield %z : f32
  } -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// A forward reference to result #2147483647 made 2^31 placeholders (out of memory).
func.func @forward_result_number() {
  "test.use"(%x#2147483647) : (i32) -> ()
  // expected-error@+1 {{use of undeclared SSA value name '%x#2147483647'}}
  %x = "test.def"() : () -> i32
  return
}

// -----

// Segment sizes whose sum overflows i64.
func.func @segment_sum(%c: memref<?x16xf32>, %i: index, %pad: f32) -> vector<16xf32> {
  // expected-error@+1 {{operand count (4) does not match with the total size (9223372036854775811) specified in attribute 'operandSegmentSizes'}}
  %y = "vector.transfer_read"(%c, %i, %i, %pad) <{in_bounds = [true], operandSegmentSizes = array<i64: 1, 2, 1, 9223372036854775807>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x16xf32>, index, index, f32) -> vector<16xf32>
  return %y : vector<16xf32>
}

// -----

// A window index of i64::MAX: the error message's bound (index + 1) overflowed.
func.func @window_index_max(%a: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{inferred input/output operand #0 has shape's dimension #0 to be greater than or equal to 9223372036854775808, but found 4}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (9223372036854775807)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A traversal whose extent overflows i64 (hi - lo).
func.func @ta_extent_overflow(%a: tensor<4xf32>) -> tensor<9223372036854775807xf32> {
  // expected-error@+1 {{'ta.expr' op the extent of traversal iterator 'i' overflows}}
  %0 = ta.expr L<i:-2:9223372036854775807> { %a[i] } ins(%a : tensor<4xf32>) -> tensor<9223372036854775807xf32>
  return %0 : tensor<9223372036854775807xf32>
}

// -----

// A collapse of 16 x (2^63 - 1): the product of the group overflowed i64 in the verifier
// (found by the canonicalize fuzz target).
func.func @collapse_product_overflow(%t: tensor<16x9223372036854775807xf16>) -> tensor<32xf16> {
  // expected-error@+1 {{expected dimension 0 of collapsed type to be static value of 147573952589676412912}}
  %flat = tensor.collapse_shape %t [[0, 1]] : tensor<16x9223372036854775807xf16> into tensor<32xf16>
  return %flat : tensor<32xf16>
}
