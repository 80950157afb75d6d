#!/usr/bin/env bash
# ftuner's lowered matmul (patch-ukernels + lower-ukernels) vs OpenBLAS sgemm, one thread.
# Machine code comes from upstream MLIR 22 + llc-22 (ftuner's own inkwell code generation
# is not written yet), so this measures the uKernel structure, not our backend.
#   bash tools/bench/lowered_gemm.sh [TARGET=host] [RUNS=7]
# BUFFERIZE=upstream uses MLIR's one-shot-bufferize instead of ftuner's `bufferize`.
# OpenBLAS 0.3.21 runs its Haswell (AVX2) kernel on Zen 5; OPENBLAS_CORETYPE=SKYLAKEX in
# the environment makes it use its AVX-512 kernel, the fair baseline on AVX-512 hosts.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${1:-host}
runs=${2:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The fully dynamic matmul of the tests, with MLIR's C interface for the driver.
sed 's/-> tensor<?x?xf32> {/-> tensor<?x?xf32> attributes {llvm.emit_c_interface} {/' \
  "$root/examples/kernels/matmul_dynamic.mlir" > "$work/mm.mlir"
if [ "${BUFFERIZE:-ftuner}" = upstream ]; then
  ours="" upstream_bufferize=(--one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map")
else
  ours=",bufferize,canonicalize,cse" upstream_bufferize=()
fi
"$root/target/release/ftuner-opt" "$work/mm.mlir" \
  --pass-pipeline="builtin.module(patch-ukernels{target=$target},lower-ukernels${LOWER_OPTS:-},canonicalize,cse$ours)" -o "$work/lowered.mlir"
mlir-opt-22 "$work/lowered.mlir" \
  "${upstream_bufferize[@]}" \
  --cse --canonicalize \
  --convert-linalg-to-loops --convert-vector-to-scf --expand-strided-metadata --lower-affine \
  --convert-scf-to-cf --convert-vector-to-llvm --finalize-memref-to-llvm --convert-math-to-llvm \
  --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
  -o "$work/llvm.mlir"
mlir-translate-22 --mlir-to-llvmir "$work/llvm.mlir" -o "$work/mm.ll"
llc-22 -O3 -mcpu=native -relocation-model=pic -filetype=obj "$work/mm.ll" -o "$work/mm.o"
cc -O2 -o "$work/bench" "$root/tools/bench/lowered_gemm.c" "$work/mm.o" \
  -I/usr/include/x86_64-linux-gnu -lopenblas -lm \
  -L/usr/lib/llvm-22/lib -lmlir_c_runner_utils -Wl,-rpath,/usr/lib/llvm-22/lib
OPENBLAS_NUM_THREADS=1 "$work/bench" "$runs"
