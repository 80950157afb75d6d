#!/usr/bin/env python3
"""Compile time of two ftuner-opt binaries, side by side: each input through the same
pipeline, the binaries alternated (the order flipped every round), medians, and whether
their outputs are byte-identical.

    python3 tools/bench/opt_ab.py OLD_FTUNER_OPT NEW_FTUNER_OPT examples/bert_layer_dynamic.mlir ...

The default pipeline is the CPU pipeline down to the llvm dialect (what the JIT and the
AOT libraries compile, with AVX-512's 64-byte transposes: they pass their host's
`vector-bytes`).
"""
import argparse
import statistics
import subprocess
import time

CPU_TO_LLVM = (
    "builtin.module(ftuner-cpu-pipeline{target=host},bufferize,approximate-math,lower-affine,"
    "convert-linalg-to-loops,prefetch-tile-updates,canonicalize,cse,canonicalize,"
    "outline-loop-nests,convert-parallel-loops-to-runtime,convert-to-llvm)"
)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--pipeline", default=CPU_TO_LLVM)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    bins = [("old", a.old), ("new", a.new)]
    for f in a.inputs:
        times = {k: [] for k, _ in bins}
        outs = {}
        for r in range(a.rounds):
            for k, b in bins if r % 2 == 0 else bins[::-1]:
                t = time.perf_counter()
                p = subprocess.run([b, "--pass-pipeline=" + a.pipeline, f], capture_output=True)
                times[k].append(time.perf_counter() - t)
                if p.returncode != 0:
                    raise SystemExit(f"{b} {f}: exit {p.returncode}: {p.stderr.decode()[-500:]}")
                outs[k] = p.stdout
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        same = "identical output" if outs["old"] == outs["new"] else "DIFFERENT output"
        print(f"{f}: old {old:.3f} s, new {new:.3f} s, new/old {new / old:.3f}, {same}")


if __name__ == "__main__":
    main()
