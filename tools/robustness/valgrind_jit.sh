#!/usr/bin/env bash
# valgrind (memcheck) over the JIT runs of every example at its smallest shapes (issue 25:
# "valgrind clean on the JIT runs of the differential suite's smallest shapes"): each
# public function of examples/*.mlir and examples/kernels/*.mlir with every '?' dim 0,
# then 1 (SIZES), run by ftuner-run with its default pipeline for this machine and --check
# (the compiled function, then the interpreter on the module as read); OLLIE's ta.expr
# kernels through convert-ta-to-linalg first.
#
#   tools/robustness/valgrind_jit.sh                 # target/release, SIZES="0 1"
#   SIZES=1 JOBS=4 tools/robustness/valgrind_jit.sh
#   FTUNER_BIN_DIR=target/debug tools/robustness/valgrind_jit.sh examples/dense_dynamic.mlir
#
# Exit 1 when valgrind reports an error in any run (its log is printed) or a run crashes
# (an exit other than 0 or 1); a memory-clean exit 1 (an error, a failed check) is
# reported and counted. Logs and outputs: target/valgrind-jit/. Compiling with LLVM under
# valgrind is slow: 20 s to 5 min a run, ~20 min for the 28 runs on 2 idle cores (JOBS),
# so this is not part of `make test`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${FTUNER_BIN_DIR:-$ROOT/target/release}"
SIZES="${SIZES:-0 1}"
JOBS="${JOBS:-$(nproc)}"
OUT="${OUT:-$ROOT/target/valgrind-jit}"

command -v valgrind >/dev/null || { echo "valgrind not found (apt-get install valgrind)" >&2; exit 1; }
[ -x "$BIN/ftuner-run" ] || { echo "$BIN/ftuner-run not found: cargo build --release --bins" >&2; exit 1; }

if [ "$#" -gt 0 ]; then
    FILES=("$@")
else
    FILES=("$ROOT"/examples/*.mlir "$ROOT"/examples/kernels/*.mlir)
fi
mkdir -p "$OUT"
rm -f "$OUT"/*.log "$OUT"/*.out "$OUT"/*.fail "$OUT"/*.exit1

# One line per run: FILE ENTRY SIZE --shape ARGS... (every '?' of a public function's
# tensor arguments set to SIZE).
runs() {
    python3 - "$SIZES" "${FILES[@]}" <<'EOF'
import re, sys
sizes = sys.argv[1].split()
for path in sys.argv[2:]:
    text = open(path).read()
    for m in re.finditer(r"func\.func\s+(private\s+)?@([\w$.]+)\s*\(", text):
        if m.group(1):
            continue
        # The argument list: up to the parenthesis that closes it.
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        args = re.findall(r"%[\w$.]+\s*:\s*(tensor<[^>]*>|memref<[^>]*>|[\w]+)", text[m.end():i - 1])
        for size in sizes:
            shapes = []
            for k, ty in enumerate(args):
                dims = re.match(r"(?:tensor|memref)<((?:[0-9?]+x)*)", ty)
                if dims and "?" in dims.group(1):
                    ds = [size if d == "?" else d for d in dims.group(1).rstrip("x").split("x")]
                    shapes.append(f"--shape {k}={'x'.join(ds)}")
            # ta.expr (OLLIE's eOperators) is lowered to linalg first, as after ollie-derive.
            if "ta.expr" in text:
                shapes.append("--pass-pipeline=builtin.module(convert-ta-to-linalg,ftuner-cpu-pipeline{target=host})")
            print(path, m.group(2), size, *shapes)
EOF
}

run_one() {
    local file="$1" entry="$2" size="$3"
    shift 3
    local name log
    name="$(basename "$file" .mlir).$entry.$size"
    log="$OUT/$name.log"
    local t0=$SECONDS rc=0
    valgrind --error-exitcode=99 --leak-check=no -q --log-file="$log" \
        "$BIN/ftuner-run" "$file" --entry "$entry" "$@" --check >"$OUT/$name.out" 2>&1 || rc=$?
    if [ "$rc" -eq 99 ]; then
        echo "VALGRIND $name (exit $rc, $((SECONDS - t0)) s): $log"
        cat "$log"
        touch "$OUT/$name.fail"
    elif [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        echo "CRASHED $name (exit $rc, $((SECONDS - t0)) s):"
        tail -n 5 "$OUT/$name.out" "$log"
        touch "$OUT/$name.fail"
    elif [ "$rc" -eq 1 ]; then
        # An error or a failed check, memory-clean: reported, not a valgrind failure (the
        # DCGAN generator's batch norms take random, negative variances: a NaN reference).
        echo "exit 1 (no valgrind error) $name ($((SECONDS - t0)) s):"
        tail -2 "$OUT/$name.out" | sed 's/^/  /'
        touch "$OUT/$name.exit1"
    else
        echo "ok $name ($((SECONDS - t0)) s)"
        # Valgrind's warnings (not errors), if any.
        [ -s "$log" ] && sed 's/^/  note: /' "$log" | head -5
    fi
    return 0
}
export -f run_one
export BIN OUT

start=$SECONDS
runs | xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _
n_fail=$(find "$OUT" -name '*.fail' | wc -l)
echo "valgrind_jit: $(find "$OUT" -name '*.out' | wc -l) runs, $n_fail with valgrind errors or crashes," \
    "$(find "$OUT" -name '*.exit1' | wc -l) memory-clean with exit 1, $((SECONDS - start)) s"
[ "$n_fail" -eq 0 ]
