// math.fpowi (torch-mlir's pow with an integral exponent, e.g. GPT-2's GELU x^3): a
// constant exponent becomes multiplications by squaring (a negative one a division
// after them), any other `pow` on the exponent as a float; the JIT agrees with the
// interpreter on all three.
// RUN: ftuner-translate %S/Inputs/fpowi.mlir -O 0 -o %t.ll
// RUN: FileCheck %s --check-prefix=CUBE < %t.ll
// RUN: FileCheck %s --check-prefix=INV < %t.ll
// RUN: FileCheck %s --check-prefix=DYN < %t.ll
// (The x^-2 body comes first in the output.)
// CUBE: fdiv float 1.000000e+00
// CUBE: %[[X2:.*]] = fmul float %[[X:.*]], %[[X]]
// CUBE-NEXT: %{{.*}} = fmul float %[[X]], %[[X2]]
// INV: %[[Y2:.*]] = fmul float %[[Y:.*]], %[[Y]]
// INV-NEXT: %{{.*}} = fdiv float 1.000000e+00, %[[Y2]]
// DYN: %[[N:.*]] = sitofp i64 %{{.*}} to float
// DYN-NEXT: call float @llvm.pow.f32(float %{{.*}}, float %[[N]])
// RUN: ftuner-run %S/Inputs/fpowi.mlir --shape 0=7 --check | FileCheck %s --check-prefix=RUNS
// RUN: ftuner-run %S/Inputs/fpowi.mlir --shape 0=0 --check | FileCheck %s --check-prefix=RUNS
// RUNS: check: ok
