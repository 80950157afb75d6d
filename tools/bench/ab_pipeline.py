"""A/B of pass pipelines on a whole model, in one process: the model is exported once and
compiled with each pipeline given (`ftuner.compile_mlir(pipeline=...)`), then each batch
(image models) or length is timed in alternated rounds beside PyTorch eager (medians),
with the largest difference from eager.

    python tools/bench/ab_pipeline.py resnet50 1,8 \
        --pipeline 'A=builtin.module(ftuner-cpu-pipeline)' \
        --pipeline 'B=builtin.module(ftuner-cpu-pipeline{derive=true})' [--rounds 5] [--calls 2] [--threads 1]

Each round runs every system (the pipelines and eager) in a rotated order, each one call
untimed and then `--calls` timed; the medians over rounds are printed.

A pipeline runs up to bufferization (the runtime bufferizes and lowers the rest).
"""

import argparse
import time

import torch
from torch.utils import _pytree as pytree

import ftuner
from ftuner import _export, zoo


def max_err(out, ref):
    """Largest difference over the outputs' tensors (a model may return a dataclass)."""
    leaves = [[t for t in pytree.tree_leaves(v) if isinstance(t, torch.Tensor)] for v in (out, ref)]
    return max(((a.float() - b.float()).abs().max().item() for a, b in zip(*leaves) if a.numel()), default=0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(zoo.MODELS))
    ap.add_argument("batches", help="comma-separated batch sizes (image models) or lengths (BERT, at batch 1; GPT-2)")
    ap.add_argument("--pipeline", action="append", required=True, help="NAME=PIPELINE")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2, help="timed calls per system and round (after one untimed)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    case = zoo.get(args.model)
    ex = _export.export(case.model, case.example, case.dynamic_shapes)
    n_in = len(ex.inputs)
    inputs = [(i.name, str(i.dtype).removeprefix("torch."), [d.size if d.size is not None else (d.symbol, d.lo, d.hi) for d in i.dims])
              for i in ex.inputs]
    cms = {}
    for spec in args.pipeline:
        name, _, pipe = spec.partition("=")
        t = time.perf_counter()
        cms[name] = ftuner.compile_mlir(ex.text, weights=ex.weights, weight_args=range(n_in, n_in + len(ex.weights)),
                                        inputs=inputs, entry=ex.func, pipeline=pipe, threads=args.threads)
        print(f"{name}: compiled in {time.perf_counter() - t:.1f} s", flush=True)
    for b in [int(x) for x in args.batches.split(",")]:
        x = case.make(1, b) if args.model == "bert" else case.make(b)
        with torch.no_grad():
            ref = case.model(*x)
        systems = [*cms.items(), ("eager", case.model)]
        times = {k: [] for k, _ in systems}
        for r in range(args.rounds):
            # Each round in another order, each system warmed by one untimed call before
            # its timed ones: timed alone after eager, the first pipeline ran on caches
            # eager had just emptied (two copies of one pipeline measured 8.0 and 7.2 ms,
            # first and last, on MobileNetV2 batch 1).
            for k, fn in systems[r % len(systems):] + systems[:r % len(systems)]:
                with torch.no_grad():
                    fn(*x)
                    t = time.perf_counter()
                    for _ in range(args.calls):
                        fn(*x)
                times[k].append((time.perf_counter() - t) / args.calls)
        med = {k: sorted(v)[len(v) // 2] * 1e3 for k, v in times.items()}
        err = {k: max_err(cm(*x), ref) for k, cm in cms.items()}
        print(f"{args.model} {b}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in med.items())
              + "; max |diff| " + ", ".join(f"{k} {v:.2e}" for k, v in err.items()), flush=True)


if __name__ == "__main__":
    main()
