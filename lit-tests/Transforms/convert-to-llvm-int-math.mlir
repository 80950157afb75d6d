// The integer math ops lower by their spec's LLVM form: abs/ctlz/cttz with the poison flag
// false (math.ctlz(0) is the width, math.absi(INT_MIN) is INT_MIN: defined, where LLVM's
// would be poison with the flag set), ctpop as is; the immediate flag becomes the trailing
// i1 argument in LLVM IR. They fold by the same definition the interpreter runs.
// (canonicalize first: @folds's ipowi has no conversion, it folds.)
// RUN: ftuner-opt %s --canonicalize --convert-to-llvm | FileCheck %s --check-prefix=DIALECT
// RUN: ftuner-opt %s --canonicalize --convert-to-llvm | mlir-opt-22 > /dev/null
// RUN: ftuner-opt %s --canonicalize | ftuner-translate - -O 0 | FileCheck %s --check-prefix=IR
// RUN: ftuner-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD

// DIALECT: "llvm.intr.ctlz"(%{{.*}}) <{is_zero_poison = false}> : (i32) -> i32
// DIALECT: "llvm.intr.abs"(%{{.*}}) <{is_int_min_poison = false}> : (i32) -> i32
// DIALECT: "llvm.intr.ctpop"(%{{.*}}) : (i32) -> i32
// DIALECT: "llvm.intr.cttz"(%{{.*}}) <{is_zero_poison = false}> : (i32) -> i32

// IR: call i32 @llvm.ctlz.i32(i32 %{{.*}}, i1 false)
// IR: call i32 @llvm.abs.i32(i32 %{{.*}}, i1 false)
// IR: call i32 @llvm.ctpop.i32(i32 %{{.*}})
// IR: call i32 @llvm.cttz.i32(i32 %{{.*}}, i1 false)
func.func @f(%a: i32) -> i32 {
  %r = math.ctlz %a : i32
  %s = math.absi %r : i32
  %t = math.ctpop %s : i32
  %u = math.cttz %t : i32
  return %u : i32
}

// ctlz(0) = 8 at i8, absi(-128) = -128, ctpop(-1) = 8, 3^5 = 243 wraps to -13 at i8.
// FOLD-LABEL: func.func @folds
// FOLD-DAG: arith.constant 8 : i8
// FOLD-DAG: arith.constant -128 : i8
// FOLD-DAG: arith.constant -13 : i8
// FOLD-NOT: math.
func.func @folds() -> (i8, i8, i8, i8) {
  %z = arith.constant 0 : i8
  %m = arith.constant -128 : i8
  %o = arith.constant -1 : i8
  %b = arith.constant 3 : i8
  %e = arith.constant 5 : i8
  %0 = math.ctlz %z : i8
  %1 = math.absi %m : i8
  %2 = math.ctpop %o : i8
  %3 = math.ipowi %b, %e : i8
  return %0, %1, %2, %3 : i8, i8, i8, i8
}
