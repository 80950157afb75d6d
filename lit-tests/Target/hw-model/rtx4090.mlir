// RUN: ftuner-opt --print-hw-model --target=rtx4090 | FileCheck %s
// CHECK: target: rtx4090
// CHECK: kind: gpu sm_89, 128 SMs
// CHECK: L2: 72 MiB
