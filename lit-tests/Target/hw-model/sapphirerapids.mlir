// RUN: ftuner-opt --print-hw-model --target=sapphirerapids | FileCheck %s
// CHECK: target: sapphirerapids
// CHECK: fma: 2 units x 512 bits
// CHECK: L1d: 48 KiB, 12-way
// CHECK: L2: 2 MiB, 16-way
// CHECK: derived: 64 f32 FLOP/cycle/core
