// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

func.func @mixed(%a: f32, %b: f64) {
  // expected-error@+1 {{'arith.addf' op requires the same type for all operands and results}}
  %0 = "arith.addf"(%a, %b) : (f32, f64) -> f32
  return
}

// -----

func.func @extf_narrow(%a: f64) {
  // expected-error@+1 {{'arith.extf' op result type 'f32' must be wider than operand type 'f64'}}
  %0 = arith.extf %a : f64 to f32
  return
}

// -----

func.func @bad_predicate(%a: i32) {
  // expected-error@+1 {{invalid predicate 'bigger'}}
  %0 = arith.cmpi bigger, %a, %a : i32
  return
}

// -----

func.func @int_addf(%a: i32) {
  // expected-error@+1 {{'arith.addf' op operand #0 must be floating-point-like, but got 'i32'}}
  %0 = arith.addf %a, %a : i32
  return
}

// -----

func.func @const_type() {
  // expected-error@+1 {{'arith.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "arith.constant"() <{value = 1 : i32}> : () -> i64
  return
}
