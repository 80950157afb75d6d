"""Serve BERT-base with ftuner: compile once from PyTorch, answer requests of any length.

    python examples/serve_bert.py [--layers 12] [--requests 8] [--threads N]

Builds BERT-base from its config with random weights (nothing is downloaded), compiles it
with `ftuner.compile` with the batch and the sequence length dynamic, then serves requests
whose lengths are drawn from the GLUE distribution (../shared/data/ftuner), each one
checked against PyTorch eager and timed beside it (median of alternated runs). One
compilation serves them all: the count of compilations is printed at the end.
"""

import argparse
import csv
import logging
import os
import pathlib
import random
import statistics
import sys
import time

import torch
from torch.export import Dim
from transformers import BertConfig, BertModel

import ftuner

ROOT = pathlib.Path(__file__).resolve().parents[1]
GLUE = ROOT.parent / "shared" / "data" / "ftuner" / "glue_seq_lengths.csv"


def glue_lengths(n, seed=0, lo=2, hi=512):
    """`n` sequence lengths drawn from the GLUE tasks' length distribution (pooled)."""
    rng = random.Random(seed)
    if not GLUE.exists():
        return [rng.randint(8, 128) for _ in range(n)]
    lens, weights = [], []
    with open(GLUE) as f:
        for row in csv.DictReader(f):
            w = float(row["fraction"])
            if w > 0 and lo <= int(row["seq_len"]) <= hi:
                lens.append(int(row["seq_len"]))
                weights.append(w)
    return rng.choices(lens, weights, k=n)


def timed(f, x, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(x)
        ts.append(time.perf_counter() - t0)
    return ts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--requests", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    torch.set_num_threads(args.threads)
    ftuner.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = BertModel(BertConfig(num_hidden_layers=args.layers)).eval()
    example = torch.randint(0, 30522, (2, 16))
    dims = ({0: Dim("batch", min=1, max=64), 1: Dim("seq", min=2, max=512)},)
    t0 = time.perf_counter()
    cm = ftuner.compile(model, (example,), dynamic_shapes=dims)
    print(f"compiled BERT-base ({args.layers} layers) in {time.perf_counter() - t0:.1f} s: "
          + ", ".join(f"{k} {v:.2f} s" for k, v in cm.compile_seconds.items()))
    print(f"{'request':>8} {'batch':>5} {'seq':>4} {'eager ms':>9} {'ftuner ms':>9} {'speedup':>7} {'max err':>9}")
    speedups = []
    rng = random.Random(1)
    for i, seq in enumerate(glue_lengths(args.requests)):
        batch = rng.choice([1, 1, 1, 2, 4])
        x = torch.randint(0, 30522, (batch, seq))
        with torch.no_grad():
            ref = model(x).last_hidden_state
            out = cm(x).last_hidden_state
            err = (out - ref).abs().max().item()
            te, tf = [], []
            for _ in range(args.reps):  # alternated
                te += timed(model, x, 1)
                tf += timed(cm, x, 1)
        e, f = statistics.median(te) * 1e3, statistics.median(tf) * 1e3
        speedups.append(e / f)
        print(f"{i:>8} {batch:>5} {seq:>4} {e:>9.2f} {f:>9.2f} {e / f:>7.2f} {err:>9.2e}")
        if not err < 1e-3:
            print(f"error {err} against PyTorch eager", file=sys.stderr)
            return 1
    print(f"median speedup over PyTorch eager ({args.threads} threads): {statistics.median(speedups):.2f}x; "
          f"{len(speedups)} requests, {cm.calls} calls, one compilation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
