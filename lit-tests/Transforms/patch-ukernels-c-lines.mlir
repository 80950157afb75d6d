// A conv's register tile writes one output line per channel, the NCHW channel stride
// (H x W elements) apart. When those lines fall into too few L1 sets to stay while the
// tile's rows fill them, the main tile is narrowed along N (nr halved, mr kept): a
// 112x112 output (50,176 bytes, 784 lines, between channels: 4 of the 64 sets of a 48 KiB
// 12-way L1, 40 lines with two ways left to A and B) takes 6x32 on Sapphire Rapids, not
// 6x64 (ResNet-50's stem: 71 -> 120 GFLOP/s on an Emerald Rapids); a 56x56 output
// (196 lines apart: 16 sets) keeps 6x64; Zen 4's 32 KiB 8-way L1 (6 ways left) goes down
// to one vector (6 rows: its 512-bit FMAs, one a cycle on 256-bit pipes, need 4 in flight).
// RUN: ftuner-opt %s --split-input-file --patch-ukernels=target=sapphirerapids | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --patch-ukernels=target=zen4 | FileCheck %s --check-prefix=ZEN4
// RUN: ftuner-opt %s --split-input-file --patch-ukernels='target=sapphirerapids fit-output-lines=false' | FileCheck %s --check-prefix=OFF
// RUN: ftuner-opt %s --split-input-file --patch-ukernels='target=sapphirerapids schedule=mr=6,nr=64,kc=256' | FileCheck %s --check-prefix=OFF
// RUN: ftuner-opt %s --split-input-file --print-ukernels --target=sapphirerapids | FileCheck %s --check-prefix=REPORT
// A tuning database's record of the analytic default (ftuner-tune with no trials: the
// default alone, recorded as the per-dtype 6x64) is the default, narrowing included: no
// schedule attribute, not counted as scheduled.
// RUN: rm -f %t.db && awk '/^\/\/ -----/{exit} {print}' %s > %t.stem.mlir
// RUN: ftuner-tune tune --db %t.db --trials 0 --points 1 --reps 1 --rounds 1 --quiet --target sapphirerapids --weights 1 %t.stem.mlir | FileCheck %s --check-prefix=TUNE
// RUN: ftuner-opt %t.stem.mlir --patch-ukernels='target=sapphirerapids tuning-db=%t.db' --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=DB
// TUNE: mr=6,nr=64,kc={{[0-9]+}},k_blocking=1,pack_b=0,max_ukernels=8
// DB: ukernel.patch "conv2d" target("sapphirerapids") tiles [6x32,
// DB-NOT: ftuner.schedule
// DB: 0 num-scheduled
// RUN: ftuner-run %s --entry=stem --shape 0=2x3x229x229 --check --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=sapphirerapids})' 2>&1 | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @stem(
// CHECK: ukernel.patch "conv2d" target("sapphirerapids") tiles [6x32,
// OFF-LABEL: func.func @stem(
// OFF: ukernel.patch "conv2d" target("sapphirerapids") tiles [6x64,
// REPORT: linalg.conv_2d_nchw_fchw f32
// REPORT-NEXT: main 6x32
// ZEN4-LABEL: func.func @stem(
// ZEN4: ukernel.patch "conv2d" target("zen4") tiles [6x16,
// EXEC: check: ok
func.func @stem(%x: tensor<?x3x229x229xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<?x64x112x112xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x229x229xf32>
  %e = tensor.empty(%n) : tensor<?x64x112x112xf32>
  %z = arith.constant 0.0 : f32
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x64x112x112xf32>) -> tensor<?x64x112x112xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<?x3x229x229xf32>, tensor<64x3x7x7xf32>) outs(%i : tensor<?x64x112x112xf32>) -> tensor<?x64x112x112xf32>
  return %r : tensor<?x64x112x112xf32>
}

// -----

// CHECK-LABEL: func.func @stage1(
// CHECK: ukernel.patch "conv2d" target("sapphirerapids") tiles [6x64,
func.func @stage1(%x: tensor<?x64x58x58xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<?x64x56x56xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64x58x58xf32>
  %e = tensor.empty(%n) : tensor<?x64x56x56xf32>
  %z = arith.constant 0.0 : f32
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<?x64x56x56xf32>) -> tensor<?x64x56x56xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x64x58x58xf32>, tensor<64x64x3x3xf32>) outs(%i : tensor<?x64x56x56xf32>) -> tensor<?x64x56x56xf32>
  return %r : tensor<?x64x56x56xf32>
}

// -----

// 64x64 planes (16 KiB apart: every channel in one set): down to one vector, whose 6 rows
// would leave the 2-pipe, 4-cycle FMAs idle: 8 rows.
// CHECK-LABEL: func.func @one_set(
// CHECK: ukernel.patch "conv2d" target("sapphirerapids") tiles [8x16,
func.func @one_set(%x: tensor<?x32x66x66xf32>, %w: tensor<64x32x3x3xf32>, %o: tensor<?x64x64x64xf32>) -> tensor<?x64x64x64xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x32x66x66xf32>, tensor<64x32x3x3xf32>) outs(%o : tensor<?x64x64x64xf32>) -> tensor<?x64x64x64xf32>
  return %r : tensor<?x64x64x64xf32>
}

// -----

// Three output channels write three lines a tile, which fit: the analytic tile stays.
// CHECK-LABEL: func.func @three_channels(
// CHECK: ukernel.patch "conv2d" target("sapphirerapids") tiles [6x64,
func.func @three_channels(%x: tensor<?x32x66x66xf32>, %w: tensor<3x32x3x3xf32>, %o: tensor<?x3x64x64xf32>) -> tensor<?x3x64x64xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x32x66x66xf32>, tensor<3x32x3x3xf32>) outs(%o : tensor<?x3x64x64xf32>) -> tensor<?x3x64x64xf32>
  return %r : tensor<?x3x64x64xf32>
}
