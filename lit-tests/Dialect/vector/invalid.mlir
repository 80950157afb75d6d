// RUN: ftuner-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

func.func @fma_types(%a: vector<4xf32>, %b: vector<8xf32>) {
  // expected-error@+1 {{'vector.fma' op requires the same type for all operands and results}}
  %0 = "vector.fma"(%a, %b, %a) : (vector<4xf32>, vector<8xf32>, vector<4xf32>) -> vector<4xf32>
  return
}

// -----

func.func @zero_dim() {
  // expected-error@+1 {{vector types must have positive constant sizes}}
  %0 = "test.op"() : () -> vector<0xf32>
  return
}

// -----

func.func @shuffle_mask_length(%a: vector<4xf32>) {
  // expected-error@+1 {{'vector.shuffle' op result must have 3 leading rows (the mask's length) and the operands' trailing dims}}
  %0 = "vector.shuffle"(%a, %a) <{mask = array<i64: 0, 1, 2>}> : (vector<4xf32>, vector<4xf32>) -> vector<4xf32>
  return
}

// -----

func.func @shuffle_mask_range(%a: vector<4xf32>) {
  // expected-error@+1 {{'vector.shuffle' op mask entry 8 is out of range for operands of 4 and 4 rows}}
  %0 = "vector.shuffle"(%a, %a) <{mask = array<i64: 0, 1, 2, 8>}> : (vector<4xf32>, vector<4xf32>) -> vector<4xf32>
  return
}

// -----

func.func @shuffle_types(%a: vector<4xf32>, %b: vector<4xf64>) {
  // expected-error@+1 {{'vector.shuffle' op operands and result must have the same element type}}
  %0 = "vector.shuffle"(%a, %b) <{mask = array<i64: 0, 1, 2, 3>}> : (vector<4xf32>, vector<4xf64>) -> vector<4xf32>
  return
}
