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
