// The host is detected: cpuid features, /sys caches, a measured clock.
// RUN: ftuner-opt --print-hw-model | FileCheck %s
// RUN: ftuner-opt --print-hw-model --target=host | FileCheck %s
// CHECK: target: host (this machine
// CHECK: kind: cpu
// CHECK: vector: {{[0-9]+}} bits, {{[0-9]+}} registers
// CHECK: L1d:
// CHECK: cores: {{[0-9]+}}, clock {{[0-9.]+}} GHz
// CHECK: derived: peak FP32 {{[0-9.]+}} GFLOP/s per core
