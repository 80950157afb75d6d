// RUN: ftuner-opt --print-hw-model --target=rtx3090 | FileCheck %s
// CHECK: target: rtx3090
// CHECK: kind: gpu sm_86, 82 SMs
// CHECK: threads: 1536 per SM
