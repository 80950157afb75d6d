// RUN: ftuner-opt --print-hw-model --target=a100 | FileCheck %s
// CHECK: target: a100
// CHECK: kind: gpu sm_80, 108 SMs, warp 32
// CHECK: shared memory: 163 KiB per block, 164 KiB per SM, 32 banks x 4 B
// CHECK: tensor cores f16: 312000 GFLOP/s, mma m16n8k16
// CHECK: machine balance 12.5 FLOP/byte
