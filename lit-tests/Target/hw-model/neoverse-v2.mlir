// RUN: ftuner-opt --print-hw-model --target=neoverse-v2 | FileCheck %s
// CHECK: target: neoverse-v2
// CHECK: kind: cpu, isa Neon
// CHECK: vector: 128 bits, 32 registers, 4 f32 lanes
// CHECK: fma: 4 units x 128 bits
