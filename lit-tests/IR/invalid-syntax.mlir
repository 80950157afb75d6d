// RUN: ftuner-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

// expected-error@+1 {{expected non-function type}}
"test.op"() : () -> (tensor<4x>)

// -----

// expected-error@+1 {{unbalanced '<' character in pretty dialect name}}
"test.op"() {a = #foo.bar<1, 2} : () -> ()

// -----

// expected-error@+1 {{expected attribute value}}
"test.op"() {a = } : () -> ()

// -----

// expected-error@+1 {{inferred shape of elements literal ([3]) does not match type ([4])}}
"test.op"() {a = dense<[1, 2, 3]> : tensor<4xi32>} : () -> ()

// -----

// expected-error@+1 {{integer constant out of range for attribute}}
"test.op"() {a = 300 : i8} : () -> ()

// -----

// expected-error@+1 {{use of undeclared identifier 'd9'}}
"test.op"() {m = affine_map<(d0) -> (d9)>} : () -> ()

// -----

// expected-error@+1 {{undefined symbol alias id 'nope'}}
"test.op"() {a = #nope} : () -> ()
