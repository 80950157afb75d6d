// ftuner-translate lowers a module (here the shipped dense layer, on tensors) and emits
// LLVM IR that LLVM's verifier accepts, assembly for a named CPU, objects that C links
// against through the _mlir_ciface_ interface, and PTX.
// RUN: ftuner-translate %examples/dense_dynamic.mlir --emit=llvm | opt-22 -passes=verify -disable-output
// RUN: ftuner-translate %examples/dense_dynamic.mlir --emit=llvm -O0 | FileCheck %s --check-prefix=LLVM
// RUN: ftuner-translate %examples/dense_dynamic.mlir --emit=asm --target=znver4 | FileCheck %s --check-prefix=ASM
// RUN: ftuner-translate %S/Inputs/saxpy.mlir --emit=ptx --target=cuda:sm_80 --kernel saxpy | FileCheck %s --check-prefix=PTX
// RUN: ftuner-translate %S/Inputs/saxpy.mlir --emit=llvm --target=cuda:sm_90 --kernel saxpy | llc-22 -march=nvptx64 -mcpu=sm_90 -o /dev/null
// RUN: not ftuner-translate %S/Inputs/saxpy.mlir --emit=ptx 2>&1 | FileCheck %s --check-prefix=ERR1
// RUN: not ftuner-translate %S/Inputs/saxpy.mlir --target='bad target' 2>&1 | FileCheck %s --check-prefix=ERR2
// LLVM: define { ptr, ptr, i64, [2 x i64], [2 x i64] } @dense_dynamic(ptr
// LLVM: call ptr @aligned_alloc(i64 64,
// LLVM: define void @_mlir_ciface_dense_dynamic(ptr
// ASM: vfmadd231ps {{.*}}%zmm
// PTX: .target sm_80
// PTX: .entry saxpy(
// Serial by default (the output needs nothing beyond libc); --parallel keeps the
// parallel loops, calling the thread pool the linking program provides.
// RUN: ftuner-translate %examples/dense_dynamic.mlir --emit=llvm -O0 | FileCheck %s --check-prefix=SERIAL
// RUN: ftuner-translate %examples/dense_dynamic.mlir --emit=llvm -O0 --parallel | FileCheck %s --check-prefix=PARALLEL
// SERIAL-NOT: ftuner_rt_parallel_for
// PARALLEL: call void @ftuner_rt_parallel_for(ptr @dense_dynamic_nest{{[0-9]+}}_par0_pool,
// PARALLEL: declare void @ftuner_rt_parallel_for(ptr, ptr, i64)
// ERR1: error: --emit=ptx needs a cuda:sm_XX target
// ERR2: error: unknown target 'bad target'

// A gpu.module's kernels: gpu.func -> llvm.func with the PTX kernel calling convention,
// thread and block indices from NVVM's special registers, barriers.
// RUN: ftuner-translate %S/Inputs/scale-kernel.mlir --emit=ptx --target=cuda:sm_90 | FileCheck %s --check-prefix=KERNEL
// RUN: ftuner-translate %S/Inputs/scale-kernel.mlir --emit=llvm --target=cuda:sm_70 | llc-22 -march=nvptx64 -mcpu=sm_70 -o /dev/null
// RUN: not ftuner-translate %S/Inputs/scale-kernel.mlir --no-lower --target=cuda:sm_90 2>&1 | FileCheck %s --check-prefix=NOLOWER
// KERNEL: .target sm_90
// KERNEL: .visible .entry scale(
// KERNEL: %tid.x
// KERNEL: %ctaid.x
// KERNEL: %ntid.x
// KERNEL: ld.global
// KERNEL: bar.sync 0
// NOLOWER: 'gpu.func' op is not in the llvm dialect: run convert-to-llvm first
