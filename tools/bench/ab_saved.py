"""Saved models side by side: each library (`ftuner.save` output, e.g. one built before a
change and one after) timed in alternated rounds in one process, medians.

    python tools/bench/ab_saved.py mobilenet_v2 8 before.so after.so [--rounds 7] [--calls 3] [--threads 1]

`--threads` (default 1) sets the libraries' thread pools (`ftuner.set_num_threads`);
libraries saved before 2026-12-05 (7d61ef2 and older) were compiled serial and run on one
thread whatever it says.

The input is the zoo model's (`ftuner.zoo`) at that batch size (or sequence length for
BERT and GPT-2); each round times `--calls` calls of every library in turn. To make the
libraries: `python -c "import ftuner; from ftuner import zoo; c = zoo.get('mobilenet_v2');
ftuner.save(ftuner.compile(c.model, c.example, dynamic_shapes=c.dynamic_shapes,
threads=1), 'after.so')"` with each build of the package.
"""

import argparse
import statistics
import time

import torch

import ftuner
from ftuner import zoo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(zoo.MODELS))
    ap.add_argument("size", type=int, help="batch size (image models) or sequence length")
    ap.add_argument("libs", nargs="+", help="saved libraries of the model")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ftuner.set_num_threads(args.threads)
    case = zoo.get(args.model)
    x = case.make(1, args.size) if args.model == "bert" else case.make(args.size)
    models = [ftuner.load(p) for p in args.libs]
    for m in models:
        m(*x)
    times = {p: [] for p in args.libs}
    for _ in range(args.rounds):
        for p, m in zip(args.libs, models):
            t = time.perf_counter()
            for _ in range(args.calls):
                m(*x)
            times[p].append((time.perf_counter() - t) / args.calls * 1e3)
    for p in args.libs:
        print(f"{p}: median {statistics.median(times[p]):.2f} ms over {args.rounds} rounds")


if __name__ == "__main__":
    main()
