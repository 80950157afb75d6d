// RUN: ftuner-opt %s --split-input-file --verify-diagnostics

"llvm.func"() <{function_type = !llvm.func<void ()>, sym_name = "f"}> ({
  %0 = "llvm.mlir.constant"() <{value = 1 : i32}> : () -> i32
  // expected-error@+1 {{'llvm.cond_br' op operand #0 must be 1-bit signless integer, but got 'i32'}}
  "llvm.cond_br"(%0)[^bb1, ^bb1] <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (i32) -> ()
^bb1:
  "llvm.return"() : () -> ()
}) : () -> ()

// -----

// expected-error@+1 {{'llvm.func' op requires attribute 'sym_name'}}
"llvm.func"() <{function_type = !llvm.func<void ()>}> ({
  "llvm.return"() : () -> ()
}) : () -> ()
