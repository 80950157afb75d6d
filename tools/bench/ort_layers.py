"""ONNX Runtime's time per node for a zoo model, from its profiler: where ONNX Runtime
spends a call, to set beside ftuner's per-nest profile of the same model.

    python tools/bench/ort_layers.py resnet50 1 [--threads 1] [--calls 30] [--top 40]

The model (`ftuner.zoo`, random weights) is exported with `torch.onnx.export` (a dynamic
batch, as tools/bench/models.py does), run `--calls` times after 5 warm-up calls with
profiling on, and each node's mean kernel time is printed, largest first, with the totals
per op type. Node names are ONNX Runtime's after its graph optimizations (fused Conv +
activation nodes are named after their output, e.g. `/layer1/layer1.0/relu/Relu_output_0_nchwc`
is conv1 of that block with its ReLU).
"""

import argparse
import collections
import copy
import json
import os
import tempfile
import time

import torch

from ftuner import zoo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(zoo.MODELS))
    ap.add_argument("size", type=int, help="batch size (image models) or sequence length")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    import onnxruntime as ort

    case = zoo.get(args.model)
    x = case.make(1, args.size) if args.model == "bert" else case.make(args.size)
    names = [f"in{i}" for i in range(len(x))]
    axes = {}
    for i, spec in enumerate(case.dynamic_shapes):
        if spec:
            axes[names[i]] = {d: getattr(dim, "__name__", f"d{d}") for d, dim in spec.items()}
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "model.onnx")
        with torch.no_grad():
            torch.onnx.export(copy.deepcopy(case.model).eval(), tuple(x), f, input_names=names,
                              dynamic_axes=axes, opset_version=17, dynamo=False)
        o = ort.SessionOptions()
        o.intra_op_num_threads = args.threads
        o.inter_op_num_threads = 1
        o.enable_profiling = True
        o.profile_file_prefix = os.path.join(tmp, "ort_profile")
        s = ort.InferenceSession(f, o, providers=["CPUExecutionProvider"])
        feed = {n: a.numpy() for n, a in zip(names, x)}
        for _ in range(5):
            s.run(None, feed)
        t = time.perf_counter()
        for _ in range(args.calls):
            s.run(None, feed)
        wall = (time.perf_counter() - t) / args.calls * 1e3
        with open(s.end_profiling()) as pf:
            events = json.load(pf)
    total = collections.defaultdict(float)
    count = collections.Counter()
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            key = (e.get("args", {}).get("op_name", "?"), e["name"][: -len("_kernel_time")])
            total[key] += e["dur"]
            count[key] += 1
    # Warm-up calls are profiled too: the mean per call over all of them.
    per_call = {k: v / count[k] / 1e3 for k, v in total.items()}
    print(f"{args.model} {args.size}: {wall:.2f} ms per call ({args.threads} thread(s), profiling on)")
    for k, ms in sorted(per_call.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{ms:8.3f} ms  {k[0]:20s} {k[1]}")
    by_op = collections.defaultdict(float)
    for k, ms in per_call.items():
        by_op[k[0]] += ms
    for op, ms in sorted(by_op.items(), key=lambda kv: -kv[1]):
        print(f"{op:30s} {ms:8.3f} ms")


if __name__ == "__main__":
    main()
