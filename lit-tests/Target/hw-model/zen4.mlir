// RUN: ftuner-opt --print-hw-model --target=zen4 | FileCheck %s
// CHECK: target: zen4
// CHECK: kind: cpu, isa Avx512
// CHECK: fma: 2 units x 256 bits, latency 4 cycles -> 1.00 full-width FMAs/cycle
// CHECK: L1d: 32 KiB, 8-way
// CHECK: derived: peak FP32 118.4 GFLOP/s per core
