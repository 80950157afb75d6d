#!/usr/bin/env python3
"""Random mutations of the ukernel.patch ops of a patched module (tiles, plans, maps,
cache sizes) fed to lower-ukernels: every run must end in output or a clean error,
never a crash. Usage (from the repository root, after a release build):

    target/release/ftuner-opt examples/dense_dynamic.mlir --patch-ukernels=target=zen4 -o /tmp/p.mlir
    python3 tools/robustness/mutate_patches.py /tmp/p.mlir --seed 1 --runs 300
"""
import argparse
import random
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("patched")
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--runs", type=int, default=300)
ap.add_argument("--bin", default="target/release/ftuner-opt")
args = ap.parse_args()

lines = open(args.patched).read().split("\n")
targets = [i for i, l in enumerate(lines) if "ukernel.patch" in l]
if not targets:
    sys.exit("no ukernel.patch in " + args.patched)
random.seed(args.seed)
pipelines = [
    "builtin.module(lower-ukernels)",
    "builtin.module(lower-ukernels{vector-bodies=0 k-blocking=false})",
]
crashes = outputs = errors = 0
for _ in range(args.runs):
    idx = random.choice(targets)
    line = list(lines[idx])
    for _ in range(random.randint(1, 3)):
        pos = random.randrange(len(line))
        if line[pos].isdigit():
            line[pos] = random.choice("0123456789")
        elif random.random() < 0.3:
            line[pos] = random.choice("0123456789+-:|,x ")
    mutated = list(lines)
    mutated[idx] = "".join(line)
    text = "\n".join(mutated).encode()
    for p in pipelines:
        r = subprocess.run([args.bin, "-", "--pass-pipeline=" + p, "-o", "/dev/null"],
                           input=text, capture_output=True, timeout=120)
        if r.returncode not in (0, 1) or b"panicked" in r.stderr:
            crashes += 1
            path = f"/tmp/lower-crash-{crashes}.mlir"
            open(path, "wb").write(text)
            print(f"CRASH (exit {r.returncode}), input saved to {path}")
            print(r.stderr.decode()[-600:])
        elif r.returncode == 0:
            outputs += 1
        else:
            errors += 1
print(f"{args.runs} mutations x {len(pipelines)} pipelines: {outputs} lowered, "
      f"{errors} clean errors, {crashes} crashes")
sys.exit(1 if crashes else 0)
