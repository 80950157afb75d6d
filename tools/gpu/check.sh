#!/usr/bin/env bash
# The GPU check, one command for the day a machine with an NVIDIA GPU is lent:
#
#   bash tools/gpu/check.sh            # OUT=<folder> to choose where the results go
#
# With a GPU: installs what is missing (tools/setup.sh), emits PTX for the device's
# compute capability with ftuner-translate, and runs every GPU test — the CUDA driver
# tests of crates/ftuner-runtime/tests/gpu_cuda.rs (the PTX lower-ukernels-to-gpu makes
# for a dynamic matmul and a batch-matmul, loaded through the driver and run with the
# reference interpreter as the host program, compared exactly with the contraction on
# the interpreter). A test that skips because the driver cannot be opened fails here. It
# writes $OUT/gpu-check.json (device, steps, seconds, exit codes) and prints a summary.
# Not built yet: timing our PTX against cuBLAS (issue 24, item 5); the summary says so.
#
# Without a GPU (CI): one line, exit 0.
set -uo pipefail
cd "$(dirname "$0")/../.."

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu check: skipped (no NVIDIA GPU or driver on this machine)"
    exit 0
fi

OUT=${OUT:-target/gpu-check}
mkdir -p "$OUT"
device=$(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | head -1)
cap=$(echo "$device" | cut -d, -f2 | tr -d ' .')
# LLVM 22 emits PTX up to sm_90; newer devices JIT it (as the driver tests do).
[ "${cap:-0}" -gt 90 ] && cap=90
echo "gpu check: $device (PTX for sm_$cap)"

steps=()
run_step() { # name, command...
    local name=$1; shift
    local t0=$SECONDS
    "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    steps+=("{\"step\": \"$name\", \"rc\": $rc, \"seconds\": $((SECONDS - t0))}")
    printf 'gpu check: %-10s rc=%d  %3ds  (%s)\n' "$name" "$rc" "$((SECONDS - t0))" "$OUT/$name.log"
    return $rc
}

failed=0
[ -d /usr/lib/llvm-22 ] || run_step setup bash tools/setup.sh || failed=1
run_step build cargo build --release --bin ftuner-translate || failed=1
run_step ptx target/release/ftuner-translate examples/dense_dynamic.mlir --emit=ptx \
    --target="cuda:sm_$cap" -o "$OUT/dense_dynamic.ptx" || failed=1
run_step tests cargo test --release -p ftuner-runtime --test integration gpu_cuda -- --nocapture \
    || failed=1
if grep -q "skipped: no CUDA driver" "$OUT/tests.log" 2>/dev/null; then
    echo "gpu check: the driver tests skipped although a GPU is present"
    failed=1
fi

{
    printf '{"device": "%s", "ptx_target": "sm_%s", "steps": [' "$device" "$cap"
    (IFS=,; printf '%s' "${steps[*]}")
    printf '], "cublas_comparison": "not built", "ok": %s}\n' "$([ $failed = 0 ] && echo true || echo false)"
} > "$OUT/gpu-check.json"
echo "gpu check: cuBLAS comparison not built yet (issue 24, item 5)"
echo "gpu check: $([ $failed = 0 ] && echo passed || echo FAILED); $OUT/gpu-check.json"
exit $failed
