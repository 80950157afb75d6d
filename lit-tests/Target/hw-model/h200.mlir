// RUN: ftuner-opt --print-hw-model --target=h200 | FileCheck %s
// CHECK: target: h200
// CHECK: kind: gpu sm_90, 132 SMs
// CHECK: DRAM 4800 GB/s
