// RUN: ftuner-opt --print-hw-model --target=h100 | FileCheck %s
// CHECK: target: h100
// CHECK: kind: gpu sm_90, 132 SMs
// CHECK: DRAM 3350 GB/s
// CHECK: tensor cores bf16: 989400 GFLOP/s
