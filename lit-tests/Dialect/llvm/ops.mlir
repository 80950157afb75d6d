// RUN: ftuner-opt %s | ftuner-opt | FileCheck %s
// The LLVM dialect as the conversion to LLVM produces it (generic syntax).
// CHECK: "llvm.func"() <{function_type = !llvm.func<i64 (ptr)>, sym_name = "f"}> ({
// CHECK: "llvm.mlir.constant"() <{value = 1 : i64}> : () -> i64
// CHECK: "llvm.getelementptr"
// CHECK: "llvm.return"
"llvm.func"() <{function_type = !llvm.func<i64 (ptr)>, sym_name = "f"}> ({
^bb0(%arg0: !llvm.ptr):
  %0 = "llvm.mlir.constant"() <{value = 1 : i64}> : () -> i64
  %1 = "llvm.getelementptr"(%arg0, %0) <{elem_type = f32, rawConstantIndices = array<i32: -2147483648>}> : (!llvm.ptr, i64) -> !llvm.ptr
  %2 = "llvm.load"(%1) : (!llvm.ptr) -> i64
  "llvm.return"(%2) : (i64) -> ()
}) : () -> ()
