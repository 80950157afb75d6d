// fastmath flags survive the conversion to the llvm dialect (as upstream's ArithToLLVM and
// MathToLLVM carry them: #arith.fastmath<...> -> fastmathFlags = #llvm.fastmath<...>) and
// reach LLVM IR as instruction flags; ops without flags get none. (The exp is f64: the
// runtime's lowering expands an f32 math.exp into arith ops, approximate-math.)
// RUN: ftuner-opt %s --convert-to-llvm | FileCheck %s --check-prefix=DIALECT
// RUN: ftuner-opt %s --convert-to-llvm | mlir-opt-22 > /dev/null
// RUN: ftuner-translate %s -O 0 | FileCheck %s --check-prefix=IR

// DIALECT: "llvm.fadd"(%{{.*}}, %{{.*}}) <{fastmathFlags = #llvm.fastmath<fast>}>
// DIALECT: "llvm.intr.exp"(%{{.*}}) <{fastmathFlags = #llvm.fastmath<nnan, ninf>}>
// DIALECT: "llvm.fmul"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// DIALECT: "llvm.fdiv"(%{{.*}}, %{{.*}}) <{fastmathFlags = #llvm.fastmath<contract>}>

// IR: fadd fast float
// IR: call nnan ninf double @llvm.exp.f64
// IR: fmul float
// IR: fdiv contract float
func.func @f(%a: f32, %b: f32) -> f32 {
  %r = arith.addf %a, %b fastmath<fast> : f32
  %r64 = arith.extf %r : f32 to f64
  %s64 = math.exp %r64 fastmath<nnan,ninf> : f64
  %s = arith.truncf %s64 : f64 to f32
  %t = arith.mulf %s, %a : f32
  %u = arith.divf %t, %b fastmath<contract> : f32
  return %u : f32
}
