#!/usr/bin/env python3
"""Canonicalization parity with upstream MLIR on ../shared/data/mlir-tests/*/canonicalize.

For every case: ops left (generic form) by `ftuner-opt --canonicalize --cse` against
`mlir-opt-22 --canonicalize --cse` (both with --allow-unregistered-dialect); a case passes
when ftuner leaves no more ops than mlir-opt and mlir-opt-22 accepts ftuner's output.
usage: tools/bench/canon_parity.py [FTUNER_OPT] [--list]   (default target/release/ftuner-opt)
"""
import collections, glob, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
FT = args[0] if args else os.path.join(ROOT, "target/release/ftuner-opt")
CASES = os.path.normpath(os.path.join(ROOT, "..", "shared", "data", "mlir-tests"))
OPLINE = re.compile(r'^\s*(?:%[^\s=]+(?:\s*,\s*%[^\s=]+)*\s*=\s*)?"[^"]+"\(', re.M)
FLAGS = ["--allow-unregistered-dialect", "--canonicalize", "--cse", "--mlir-print-op-generic"]


def run(cmd, inp=None):
    try:
        p = subprocess.run(cmd, input=inp, capture_output=True, timeout=60)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b"timeout"


rows = []
for f in sorted(glob.glob(os.path.join(CASES, "*", "canonicalize", "case-*.mlir"))):
    if f.endswith(".generic.mlir"):
        continue
    name = os.path.relpath(f, CASES)
    rb, ob, _ = run(["mlir-opt-22", f] + FLAGS)
    if rb != 0:
        continue  # upstream rejects it (an expected-error case): not comparable
    ra, oa, ea = run([FT, f] + FLAGS)
    if ra != 0:
        rows.append((name, "ftuner-error", ea.decode("utf-8", "replace").strip().split("\n")[0][:160], 0, 0))
        continue
    rc, _, _ = run(["mlir-opt-22", "--allow-unregistered-dialect"], oa)
    a, b = len(OPLINE.findall(oa.decode("utf-8", "replace"))), len(OPLINE.findall(ob.decode("utf-8", "replace")))
    if rc != 0:
        rows.append((name, "output-rejected-by-mlir-opt", "", a, b))
    elif a > b:
        rows.append((name, "more-ops", "", a, b))
    else:
        rows.append((name, "ok", "", a, b))
by = collections.defaultdict(collections.Counter)
for r in rows:
    by[r[0].split("/")[0]][r[1]] += 1
ok = sum(1 for r in rows if r[1] == "ok")
for d, c in sorted(by.items()):
    print(f"{d:12s} {c['ok']:4d}/{sum(c.values()):4d} ok  " + "  ".join(f"{k}={v}" for k, v in sorted(c.items()) if k != "ok"))
print(f"{ok}/{len(rows)} cases ({100.0 * ok / max(len(rows), 1):.1f}%): ftuner leaves no more ops than mlir-opt-22")
if "--list" in sys.argv:
    for r in rows:
        if r[1] != "ok":
            print(f"{r[0]}\t{r[1]}\t{r[3]} vs {r[4]}\t{r[2]}")
