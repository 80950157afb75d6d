// RUN: ftuner-opt %s --cse --canonicalize --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s
// CHECK: // -----// IR Dump After CSE (cse) //----- //
// CHECK: module {
// CHECK: // -----// IR Dump After Canonicalizer (canonicalize) //----- //

// RUN: ftuner-opt %s --pass-pipeline='builtin.module(func.func(cse))' --mlir-print-ir-before=cse -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE
// BEFORE: // -----// IR Dump Before CSE (cse) //----- //
// BEFORE-NEXT: func.func @f

// RUN: ftuner-opt %s --pass-pipeline='builtin.module(func.func(cse))' --mlir-print-ir-before=cse --mlir-print-ir-module-scope -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCOPE
// SCOPE: // -----// IR Dump Before CSE (cse) //----- //
// SCOPE-NEXT: module {

// Only passes that change the IR are printed with -after-change.
// RUN: ftuner-opt %s --symbol-dce --cse --mlir-print-ir-after-change -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHANGE
// CHANGE-NOT: SymbolDCE
// CHANGE: IR Dump After CSE (cse)

func.func @f(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  %1 = arith.addf %a, %a : f32
  %2 = arith.mulf %0, %1 : f32
  return %2 : f32
}
