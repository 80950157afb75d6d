// RUN: ftuner-opt --print-hw-model --target=skylake-avx512 | FileCheck %s
// CHECK: target: skylake-avx512
// CHECK: fma: 2 units x 512 bits
// CHECK: L2: 1 MiB, 16-way
// CHECK: derived: 64 f32 FLOP/cycle/core
