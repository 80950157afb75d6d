"""Where a compiled zoo model's time goes, per outlined loop nest: the model compiled by the
package (one thread) with its module dumped, `perf record` over `--calls` calls of it, the
samples of each nest's functions (`forward_nestN`, `_parK`, `_pool`) summed into ms per call,
each nest named by its operands' types (the module the package lowered, dumped with
`FTUNER_DUMP_IR`, through ftuner-opt's buffer passes and `outline-loop-nests`, which
numbers the nests as the package does) and its number of call sites. To set beside ONNX Runtime's per-node profile
(tools/bench/ort_layers.py).

    python tools/bench/nest_profile.py mobilenet_v2 8 [--calls 40] [--top 40]

Needs `perf` and target/release/ftuner-opt. The ms are samples over `perf`'s nominal rate:
the ratios between nests hold, the absolute figures within the sampling's accuracy.
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FREQ = 4000
# The runtime's lowering after the package's own passes (convert-linalg-to-loops at the
# host's register width, as the package compiles: the width shapes the transposes' nests
# and so the numbering), run on the module the package lowered (`forward.lowered.mlir`:
# derivations, tuning and weight preparation as the package applied them).
OUTLINE = (
    "builtin.module(bufferize,approximate-math,lower-affine,"
    "convert-linalg-to-loops{{vector-bytes={vb}}},prefetch-tile-updates,canonicalize,cse,canonicalize,"
    "outline-loop-nests,convert-parallel-loops-to-runtime)"
)


def host_vector_bytes(opt):
    """The host's vector register width in bytes, from `ftuner-opt --print-hw-model`."""
    out = subprocess.run([opt, "--print-hw-model", "--target=host"], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"vector: (\d+) bits", out)
    return int(m.group(1)) // 8 if m else 64
RUN = """
import sys, torch, ftuner
from ftuner import zoo
torch.set_num_threads(1); ftuner.set_num_threads(1)
name, lib, size, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = zoo.get(name); m = ftuner.load(lib)
x = c.make(1, size) if name == "bert" else c.make(size)
for _ in range(3): m(*x)
for _ in range(calls): m(*x)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("size", type=int, help="batch size (image models) or sequence length")
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, FTUNER_DUMP_IR=tmp)
        lib = os.path.join(tmp, "model.so")
        make = ("import ftuner, sys; from ftuner import zoo; c = zoo.get(sys.argv[1]); "
                "ftuner.save(ftuner.compile(c.model, c.example, dynamic_shapes=c.dynamic_shapes, "
                "threads=1), sys.argv[2])")
        subprocess.run([sys.executable, "-c", make, args.model, lib], env=env, check=True)
        opt = str(ROOT / "target/release/ftuner-opt")
        outline = OUTLINE.format(vb=host_vector_bytes(opt))
        outlined = subprocess.run(
            [opt, f"--pass-pipeline={outline}",
             os.path.join(tmp, "forward.lowered.mlir")],
            check=True, capture_output=True, text=True).stdout
        data = os.path.join(tmp, "perf.data")
        subprocess.run(["perf", "record", "-q", "-F", str(FREQ), "-o", data, "--", sys.executable,
                        "-c", RUN, args.model, lib, str(args.size), str(args.calls)], check=True)
        report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "symbol",
                                 "-g", "none", "--percent-limit", "0", "-F", "sample,dso,symbol"],
                                capture_output=True, text=True, check=True).stdout
    per, other = collections.Counter(), collections.Counter()
    for line in report.splitlines():
        m = re.match(r"\s*(\d+)\s+(\S+)\s+\[.\]\s+(\S+)", line)
        if not m:
            continue
        n = re.match(r"(forward_nest\d+)", m.group(3))
        if n:
            per[n.group(1)] += int(m.group(1))
        elif m.group(2) == "model.so":
            other[m.group(3)] += int(m.group(1))
    ms = 1e3 / FREQ / (args.calls + 3)
    sites = collections.Counter(re.findall(r"call @(forward_nest\d+)\(", outlined))
    sig = {}
    for m in re.finditer(r"call @(forward_nest\d+)\(.*\) : \((.*)\) -> \(\)", outlined):
        types = re.findall(r"memref<([^>]*)>", m.group(2))
        sig.setdefault(m.group(1), " ".join(t.split(",")[0] for t in types if "x" in t)[:100])
    total = sum(per.values()) * ms
    print(f"{args.model} {args.size}: {total:.2f} ms per call in the model's nests, one thread")
    for name, n in per.most_common(args.top):
        print(f"{n * ms:8.2f} ms  x{sites[name]:<2} {name:18} {sig.get(name, '')}")
    print("the library's other functions:")
    for name, n in other.most_common(8):
        print(f"{n * ms:8.2f} ms  {name}")


if __name__ == "__main__":
    main()
