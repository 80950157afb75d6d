#!/usr/bin/env bash
# The GPU check, one command for a machine with an NVIDIA GPU:
#
#   bash tools/gpu/check.sh            # OUT=<folder> to choose where the results go
#
# With a GPU it runs, each step under a time limit, its log in $OUT:
#  1. tests:     every GPU test — the CUDA driver tests of crates/ftuner-runtime/tests/
#                gpu_cuda.rs (the PTX lower-ukernels-to-gpu makes for a dynamic matmul, a
#                batch-matmul and a whole BERT encoder layer, loaded through the driver and
#                run with the reference interpreter as the host program, compared with the
#                interpreter). A test that skips because the driver cannot be opened fails.
#  2. memcheck:  the same tests under compute-sanitizer's memcheck (where it is installed):
#                no kernel reads or writes memory it does not own, at any tested shape.
#  3. bench:     ftuner-gpu-bench — our PTX against cuBLAS (loaded at run time) over W1 and
#                W2 with their dynamic dims, alternated rounds, CUDA events; JSON lines and
#                a markdown summary (gpu-bench.jsonl, gpu-bench.md).
#  4. ptxas:     registers and spills of the W1 kernels (`ptxas -v`, where CUDA has it).
# and writes $OUT/gpu-check.json (device, steps, seconds, exit codes).
#
# Where cargo is missing (the lent GPU machines have CUDA but no Rust or LLVM) it runs the
# binaries tools/gpu/pack.sh built on a CPU machine (.gpu/bin.tar.xz); with cargo it builds
# them. Without a GPU (CI): one line, exit 0.
set -uo pipefail
cd "$(dirname "$0")/../.."

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu check: skipped (no NVIDIA GPU or driver on this machine)"
    exit 0
fi

OUT=${OUT:-target/gpu-check}
mkdir -p "$OUT"
device=$(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | head -1)
echo "gpu check: $device"

steps=()
failed=0
run_step() { # name, seconds, command...
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    steps+=("{\"step\": \"$name\", \"rc\": $rc, \"seconds\": $((SECONDS - t0))}")
    printf 'gpu check: %-9s rc=%d  %3ds  (%s)\n' "$name" "$rc" "$((SECONDS - t0))" "$OUT/$name.log"
    [ $rc = 0 ] || failed=1
    return $rc
}

# The binaries: built here, or unpacked from pack.sh's tarball.
if command -v cargo >/dev/null 2>&1; then
    [ -d /usr/lib/llvm-22 ] || run_step setup 1800 bash tools/setup.sh
    run_step build 1800 bash tools/gpu/pack.sh
fi
if [ ! -f .gpu/bin.tar.xz ]; then
    echo "gpu check: no cargo and no .gpu/bin.tar.xz (run tools/gpu/pack.sh on a CPU machine and carry .gpu)"
    exit 1
fi
bin=$(mktemp -d)
tar -C "$bin" -xJf .gpu/bin.tar.xz
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
tests="$bin/bin/ftuner-runtime-integration"
bench="$bin/bin/ftuner-gpu-bench"

# cuBLAS: the CUDA toolkit's, or the one PyTorch's wheels carry.
if [ -z "${FTUNER_CUBLAS:-}" ]; then
    FTUNER_CUBLAS=$(find /usr/local/cuda*/lib64 /usr/local/cuda*/targets /opt /usr/lib /usr/local/lib \
        -name 'libcublas.so.1[0-9]*' 2>/dev/null | sort -V | tail -1)
    export FTUNER_CUBLAS
fi
echo "gpu check: cuBLAS ${FTUNER_CUBLAS:-not found}"

run_step tests 120 "$tests" gpu_cuda --nocapture --test-threads 1
if grep -q "skipped: no CUDA driver" "$OUT/tests.log" 2>/dev/null; then
    echo "gpu check: the driver tests skipped although a GPU is present"
    failed=1
fi
if command -v compute-sanitizer >/dev/null 2>&1; then
    run_step memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$tests" gpu_cuda --test-threads 1
else
    echo "gpu check: memcheck skipped (no compute-sanitizer)"
fi
ptx=$(mktemp -d)
run_step bench 240 "$bench" --json "$OUT/gpu-bench.jsonl" --summary "$OUT/gpu-bench.md" --ptx-dir "$ptx"
if command -v ptxas >/dev/null 2>&1 && [ -f "$ptx/w1-768x2304.ptx" ]; then
    run_step ptxas 30 ptxas -arch=sm_90 -v "$ptx/w1-768x2304.ptx" -o /dev/null
fi

{
    printf '{"device": "%s", "steps": [' "$device"
    (IFS=,; printf '%s' "${steps[*]}")
    printf '], "ok": %s}\n' "$([ $failed = 0 ] && echo true || echo false)"
} > "$OUT/gpu-check.json"
[ -f "$OUT/gpu-bench.md" ] && sed -n '1,12p' "$OUT/gpu-bench.md"
echo "gpu check: $([ $failed = 0 ] && echo passed || echo FAILED); $OUT/gpu-check.json"
exit $failed
