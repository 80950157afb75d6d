"""Median latency of one model compiled by ftuner, at a few sizes, one thread: for A/B runs
of what a process-wide setting changes (run it once per setting, alternated).

    FTUNER_ALLOC_CACHE=0 python tools/bench/latency.py mobilenet_v2 1,8 [--reps 9]

Sizes are batch sizes of the image models and sequence lengths of BERT and GPT-2
(batch 1).
"""

import argparse
import time

import torch

import ftuner
from ftuner import zoo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(zoo.MODELS))
    ap.add_argument("sizes", help="comma-separated batch sizes (image models) or lengths")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    case = zoo.get(args.model)
    cm = ftuner.compile(case.model, case.example, dynamic_shapes=case.dynamic_shapes, threads=args.threads)
    for n in [int(x) for x in args.sizes.split(",")]:
        x = case.make(1, n) if args.model == "bert" else case.make(n)
        cm(*x)
        ts = []
        for _ in range(args.reps):
            t = time.perf_counter()
            cm(*x)
            ts.append(time.perf_counter() - t)
        ts.sort()
        print(f"{args.model} {n}: {ts[len(ts) // 2] * 1e3:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
