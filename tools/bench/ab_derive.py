"""A/B of OLLIE's derivations on a whole model, in one process: the model compiled with
`derive=True` and with `derive=False`, then each batch timed in alternated rounds beside
PyTorch eager (medians), with the largest difference from eager.

    python tools/bench/ab_derive.py resnet50 1,8 [--rounds 5] [--threads 1]
"""

import argparse
import time

import torch

import ftuner
from ftuner import zoo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(zoo.MODELS))
    ap.add_argument("batches", help="comma-separated batch sizes (image models) or lengths")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    case = zoo.get(args.model)
    cms = {
        d: ftuner.compile(case.model, case.example, dynamic_shapes=case.dynamic_shapes,
                          threads=args.threads, derive=d)
        for d in (True, False)
    }
    for b in [int(x) for x in args.batches.split(",")]:
        x = case.make(b)
        with torch.no_grad():
            ref = case.model(*x)
        times = {"derive": [], "no derive": [], "eager": []}
        for _ in range(args.rounds):
            for d, cm in cms.items():
                t = time.perf_counter()
                cm(*x)
                times["derive" if d else "no derive"].append(time.perf_counter() - t)
            with torch.no_grad():
                t = time.perf_counter()
                case.model(*x)
                times["eager"].append(time.perf_counter() - t)
        med = {k: sorted(v)[len(v) // 2] * 1e3 for k, v in times.items()}
        err = {("derive" if d else "no derive"): (cm(*x) - ref).abs().max().item() for d, cm in cms.items()}
        print(f"{args.model} {b}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in med.items())
              + "; max |diff| " + ", ".join(f"{k} {v:.2e}" for k, v in err.items()), flush=True)


if __name__ == "__main__":
    main()
