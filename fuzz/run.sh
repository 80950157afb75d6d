#!/usr/bin/env bash
# Coverage-guided fuzzing on the stable toolchain (docs/robustness.md, "Coverage-guided
# fuzzing"): seeds the corpora (seeds.py), builds the cargo-fuzz targets with
# RUSTC_BOOTSTRAP=1 (no nightly needed) and runs each in turn; a crash, a panic, a timeout
# or running out of memory fails, with the reproducer printed.
#
#   bash fuzz/run.sh [SECONDS] [TARGET...]      # default: 30 s each of parse canonicalize npy
#   FUZZ_ARGS=-runs=10000000 bash fuzz/run.sh 0 parse    # SECONDS=0: until the runs are done
#   FUZZ_ARGS="-seed=1 -runs=200000" bash fuzz/run.sh 300  # what `make test` runs
#
# The canonicalize target prints how many inputs parsed and verified (so reached the
# passes) every 2^20 inputs when FTUNER_FUZZ_STATS is set.
#
# FUZZ_SANITIZER (default none; `address` builds with ASan into fuzz/target/asan),
# FUZZ_ARGS: more libFuzzer flags (-runs=N, -jobs=N, -seed=N, ...).
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_EACH=${1:-30}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(parse canonicalize npy)
SAN=${FUZZ_SANITIZER:-none}
TDIR=target
[ "$SAN" = none ] || TDIR=target/$SAN
export RUSTC_BOOTSTRAP=1

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.2 --locked
python3 seeds.py
for t in "${TARGETS[@]}"; do
    cargo fuzz build -s "$SAN" --target-dir "$TDIR" "$t"
done
for t in "${TARGETS[@]}"; do
    dict=()
    [ "$t" = npy ] || dict=(-dict=mlir.dict)
    mkdir -p "artifacts/$t"
    echo "== fuzz $t: ${SECONDS_EACH}s ${FUZZ_ARGS:-}" >&2
    start=$(date +%s)
    touch "artifacts/$t/.start"
    if ! cargo fuzz run -s "$SAN" --target-dir "$TDIR" "$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_EACH" -timeout=30 -rss_limit_mb=4096 \
        -print_final_stats=1 "${dict[@]}" ${FUZZ_ARGS:-}; then
        echo "fuzz target '$t' failed; reproducers (base64):" >&2
        find "artifacts/$t" -type f -newer "artifacts/$t/.start" ! -name .start | while read -r f; do
            echo "$f:" >&2
            base64 -w 0 "$f" >&2
            echo >&2
        done
        exit 1
    fi
    echo "== fuzz $t: done in $(( $(date +%s) - start ))s" >&2
done
