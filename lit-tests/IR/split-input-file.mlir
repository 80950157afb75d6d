// RUN: ftuner-opt %s --split-input-file | FileCheck %s
// CHECK: func.func @first
// CHECK: // -----
// CHECK: func.func @second
func.func @first() {
  return
}

// -----

func.func @second() {
  return
}

// RUN: not ftuner-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=NOTPRODUCED
// NOTPRODUCED: expected error "never happens" was not produced
// expected-error@+1 {{never happens}}
func.func @third() {
  return
}
