// Compiled code has no bound on its stack, so convert-to-llvm refuses a recursive call
// (directly, through another function, or through the thread pool's rt.parallel_for)
// with an error at the call, instead of code that runs until the stack overflows and
// the process dies. The interpreter runs recursion to a depth of 64 and then fails too.
// RUN: not ftuner-opt %s --split-input-file --convert-to-llvm 2>&1 | FileCheck %s
// RUN: not ftuner-run %s --entry self 2>&1 | FileCheck %s --check-prefix=JITERR
// RUN: not ftuner-run %s --entry self --backend interp 2>&1 | FileCheck %s --check-prefix=INTERP

// CHECK: :[[@LINE+3]]:{{[0-9]+}}: error: 'func.call' op is a recursive call (a cycle of calls): compiled code does not support recursion
// JITERR: compiled code does not support recursion
func.func @self(%x: index) -> index {
  %r = func.call @self(%x) : (index) -> index
  return %r : index
}
// INTERP: call depth exceeds 64

// -----

// CHECK: :[[@LINE+6]]:{{[0-9]+}}: error: 'func.call' op is a recursive call
func.func @ping(%x: index) -> index {
  %r = func.call @pong(%x) : (index) -> index
  return %r : index
}
func.func private @pong(%x: index) -> index {
  %r = func.call @ping(%x) : (index) -> index
  return %r : index
}

// -----

// CHECK: :[[@LINE+3]]:{{[0-9]+}}: error: 'rt.parallel_for' op is a recursive call
func.func @pool(%lo: index, %hi: index) {
  %c4 = arith.constant 4 : index
  rt.parallel_for @pool(%c4)
  return
}

// -----

// A chain of calls without a cycle converts.
// CHECK-NOT: error
func.func @a(%x: index) -> index {
  %r = func.call @b(%x) : (index) -> index
  return %r : index
}
func.func private @b(%x: index) -> index {
  return %x : index
}
