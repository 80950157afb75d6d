// RUN: ftuner-opt --print-hw-model --target=v100 | FileCheck %s
// CHECK: target: v100
// CHECK: kind: gpu sm_70, 80 SMs
// CHECK: tensor cores f16: 125000 GFLOP/s, mma m8n8k4
