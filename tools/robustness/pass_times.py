#!/usr/bin/env python3
"""Per-pass worst times of ftuner's main pipelines over the shipped models.

Runs `ftuner-opt --mlir-timing` for each pipeline below over every model of
../shared/inputs (the `.mlir` files; `--generic` adds their generic-form twins) and
examples/*.mlir, plus `ftuner-translate --emit=obj` (the whole default lowering and LLVM,
timed as one process), each run under a timeout. Prints, per pass, the worst wall time
and the model and pipeline it was measured on, then every run that failed or timed out.
docs/robustness.md ("Work bounds") states each pass's bound next to these numbers.

    python3 tools/robustness/pass_times.py                    # release binaries, 600 s per run
    python3 tools/robustness/pass_times.py --timeout 120 --json target/pass-times.jsonl
"""

import argparse
import glob
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PIPELINES = [
    "builtin.module(ftuner-cpu-pipeline)",
    "builtin.module(ftuner-cpu-patch{derive=true})",
    "builtin.module(ollie-derive{verify=true})",
    "builtin.module(canonicalize,cse)",
]

# `    0.1766 ( 86.2%)  PatchUkernels`
LINE = re.compile(r"^\s+(\d+\.\d+)\s+\(\s*[\d.]+%\)\s+(.+?)\s*$")


def models(generic):
    shared = os.path.join(ROOT, "..", "shared", "inputs")
    files = sorted(glob.glob(os.path.join(shared, "*.mlir")))
    files = [
        f
        for f in files
        if not f.endswith(".torch.mlir")  # the torch dialect: not a linalg input
        and (generic or not f.endswith(".generic.mlir"))
    ]
    files += sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir")))
    return files


def short(path):
    p = os.path.relpath(path, ROOT)
    return p[len("../shared/") :] if p.startswith("../shared/") else p


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(cmd, timeout):
    """(exit code or None on a timeout, stdout, stderr, wall s, CPU s of the process)."""
    t0, c0 = time.monotonic(), child_cpu()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0, child_cpu() - c0
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return None, "", err, time.monotonic() - t0, child_cpu() - c0


def timing(stderr):
    """Pass name -> seconds from an --mlir-timing report (a name listed twice: the larger)."""
    out = {}
    in_report = False
    for line in stderr.splitlines():
        if "Execution time report" in line:
            in_report = True
            continue
        if not in_report:
            continue
        m = LINE.match(line)
        if m:
            name = m.group(2)
            if name in ("Total", "Rest", "Output", "Parser"):
                name = "(" + name.lower() + ")"
            out[name] = max(out.get(name, 0.0), float(m.group(1)))
    return out


def first_error(stderr):
    for line in stderr.splitlines():
        if "error" in line:
            return line.strip()[:200]
    lines = stderr.strip().splitlines()
    return lines[-1][:200] if lines else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opt", default=os.path.join(ROOT, "target", "release", "ftuner-opt"))
    ap.add_argument("--translate", default=os.path.join(ROOT, "target", "release", "ftuner-translate"))
    ap.add_argument("--timeout", type=float, default=600, help="seconds per run")
    ap.add_argument("--generic", action="store_true", help="also the .generic.mlir twins")
    ap.add_argument("--pipeline", action="append", help="instead of the default pipelines")
    ap.add_argument("--no-translate", action="store_true")
    ap.add_argument("--models", nargs="*", help="instead of the default models")
    ap.add_argument("--json", help="write one JSON object per run to this file")
    a = ap.parse_args()

    files = a.models or models(a.generic)
    pipelines = a.pipeline or PIPELINES
    worst = {}  # pass -> (seconds, model, pipeline)
    runs = []
    problems = []
    tmp = tempfile.mkdtemp(prefix="pass-times-")
    for f in files:
        for pl in pipelines:
            cmd = [a.opt, f, "--pass-pipeline=" + pl, "--mlir-timing", "-o", os.devnull]
            rc, _, err, wall, cpu = run(cmd, a.timeout)
            t = timing(err)
            runs.append({"model": short(f), "tool": "ftuner-opt", "pipeline": pl, "rc": rc, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "passes": t})
            status = "timeout" if rc is None else f"exit {rc}"
            print(f"{short(f):48s} {pl:48s} {wall:8.2f} s wall {cpu:8.2f} s CPU  {status}", flush=True)
            if rc != 0:
                problems.append((short(f), pl, status, first_error(err)))
            for name, s in t.items():
                if s > worst.get(name, (-1,))[0]:
                    worst[name] = (s, short(f), pl)
            key = "ftuner-opt (process, CPU s) " + pl
            if cpu > worst.get(key, (-1,))[0]:
                worst[key] = (cpu, short(f), pl)
        if not a.no_translate:
            obj = os.path.join(tmp, "out.o")
            cmd = [a.translate, f, "--emit=obj", "-o", obj]
            rc, _, err, wall, cpu = run(cmd, a.timeout)
            runs.append({"model": short(f), "tool": "ftuner-translate", "pipeline": "--emit=obj", "rc": rc, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3)})
            status = "timeout" if rc is None else f"exit {rc}"
            print(f"{short(f):48s} {'ftuner-translate --emit=obj':48s} {wall:8.2f} s wall {cpu:8.2f} s CPU  {status}", flush=True)
            if rc != 0:
                problems.append((short(f), "ftuner-translate --emit=obj", status, first_error(err)))
            key = "ftuner-translate --emit=obj (process, CPU s)"
            if cpu > worst.get(key, (-1,))[0]:
                worst[key] = (cpu, short(f), "--emit=obj")
            if os.path.exists(obj):
                os.remove(obj)
    os.rmdir(tmp)

    print()
    print("Per pass: the worst wall time of --mlir-timing; per process: its CPU time.")
    print("| pass | worst s | model | pipeline |")
    print("|---|---|---|---|")
    for name, (s, m, pl) in sorted(worst.items(), key=lambda kv: -kv[1][0]):
        print(f"| {name} | {s:.3f} | {m} | `{pl}` |")
    if problems:
        print()
        print("Runs that did not exit 0:")
        for m, pl, status, e in problems:
            print(f"  {m}  {pl}: {status}: {e}")
    if a.json:
        with open(a.json, "w") as out:
            for r in runs:
                out.write(json.dumps(r) + "\n")
    crashed = [p for p in problems if p[2] not in ("exit 1",)]
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
