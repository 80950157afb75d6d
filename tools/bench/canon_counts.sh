#!/usr/bin/env bash
# Op counts after `--canonicalize --cse`: ftuner-opt vs mlir-opt-22, per input file.
# usage: tools/bench/canon_counts.sh [FTUNER_OPT] FILE...
set -euo pipefail
FT=${FTUNER_OPT:-target/release/ftuner-opt}
count() { grep -cE '^ *(%[^=]+= )?"[a-z_]+\.[a-z_0-9.]+"\(' || true; }
printf '%-40s %8s %8s %8s\n' file ftuner mlir-opt ratio
for f in "$@"; do
  a=$("$FT" "$f" --canonicalize --cse --mlir-print-op-generic | count)
  b=$(mlir-opt-22 "$f" --canonicalize --cse --mlir-print-op-generic | count)
  # our output must be accepted by mlir-opt
  "$FT" "$f" --canonicalize --cse --mlir-print-op-generic | mlir-opt-22 > /dev/null
  printf '%-40s %8d %8d %8.3f\n' "$(basename "$f")" "$a" "$b" "$(echo "$a / $b" | bc -l)"
done
