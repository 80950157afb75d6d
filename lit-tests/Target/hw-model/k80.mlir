// RUN: ftuner-opt --print-hw-model --target=k80 | FileCheck %s
// CHECK: target: k80
// CHECK: kind: gpu sm_37, 13 SMs, warp 32
// CHECK: DRAM 162 GB/s
