"""MobileNetV2's depthwise convolutions one at a time, each with its BatchNorm and ReLU6
(or, with `--maxpool`, ResNet-50's max pooling): ftuner's pass pipelines side by side (by
default `peel-padded-windows` with and without its vector form, or its separable form for
the pooling), optionally ONNX Runtime, in alternated rounds in one process (each round
starting at the next system), medians.

    python tools/bench/depthwise_layers.py [--batch 8] [--rounds 15] [--ort] [--layers 0,4]
        [--maxpool] [--pipeline NAME=PIPELINE ...]

Each layer (channels, image size, stride) is exported once (`torch.export` with a dynamic
batch, random weights) and compiled with every pipeline (`ftuner.compile_mlir`, one
thread). A pipeline runs up to bufferization, as in tools/bench/ab_pipeline.py; the
default ones are `ftuner-cpu-patch` and its lowering spelled out, with
`peel-padded-windows{vector=true}` and `{vector=false}`.
"""

import argparse
import copy
import os
import statistics
import tempfile
import time

import torch

import ftuner
from ftuner import _export

# (channels, image size, stride) of MobileNetV2's 17 depthwise convs, each once.
LAYERS = [(32, 112, 1), (96, 112, 2), (144, 56, 1), (144, 56, 2), (192, 28, 1), (192, 28, 2),
          (384, 14, 1), (576, 14, 1), (576, 14, 2), (960, 7, 1)]

# ResNet-50's max pooling (channels, image size, stride; a 3x3 window, padding 1).
POOLS = [(64, 112, 2)]

PIPELINE = ("builtin.module(outline-weight-preparation,canonicalize,cse,linalg-fuse-elementwise-ops,"
            "convert-1x1-conv-to-matmul,peel-padded-windows{{{opt}={v}}},patch-ukernels{{target=host}},"
            "lower-ukernels,canonicalize,cse,outline-weight-preparation)")


class Layer(torch.nn.Module):
    def __init__(self, c, stride):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, c, 3, stride, 1, groups=c, bias=False)
        self.bn = torch.nn.BatchNorm2d(c)
        self.bn.running_mean.uniform_(-1, 1)
        self.bn.running_var.uniform_(0.5, 2)

    def forward(self, x):
        return torch.nn.functional.relu6(self.bn(self.conv(x)))


class Pool(torch.nn.Module):
    def __init__(self, c, stride):
        super().__init__()
        self.pool = torch.nn.MaxPool2d(3, stride, 1)

    def forward(self, x):
        return self.pool(x)


def ort_session(model, x):
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "layer.onnx")
        with torch.no_grad():
            torch.onnx.export(copy.deepcopy(model), (x,), f, input_names=["x"], dynamic_axes={"x": {0: "b"}},
                              opset_version=17, dynamo=False)
        o = ort.SessionOptions()
        o.intra_op_num_threads = 1
        o.inter_op_num_threads = 1
        return ort.InferenceSession(f, o, providers=["CPUExecutionProvider"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=3, help="calls per system per round")
    ap.add_argument("--layers", default=None, help="comma-separated indices into LAYERS")
    ap.add_argument("--ort", action="store_true", help="time ONNX Runtime on the same layer too")
    ap.add_argument("--maxpool", action="store_true", help="ResNet-50's max pooling instead")
    ap.add_argument("--pipeline", action="append",
                    help="NAME=PIPELINE (default: vector=true and false, or separable=true and false)")
    args = ap.parse_args()
    ftuner.set_num_threads(1)
    torch.set_num_threads(1)
    opt, names = ("separable", ("separable", "pieces")) if args.maxpool else ("vector", ("vector", "generic"))
    pipes = [p.partition("=")[::2] for p in args.pipeline] if args.pipeline else [
        (names[0], PIPELINE.format(opt=opt, v="true")), (names[1], PIPELINE.format(opt=opt, v="false"))]
    table, kind = (POOLS, Pool) if args.maxpool else (LAYERS, Layer)
    layers = table if args.layers is None else [table[int(i)] for i in args.layers.split(",")]
    print(f"batch {args.batch}, one thread, {args.rounds} rounds of {args.calls} calls, medians (ms)")
    for c, hw, stride in layers:
        torch.manual_seed(0)
        model = kind(c, stride).eval()
        x = torch.randn(args.batch, c, hw, hw)
        ex = _export.export(model, (x,), ({0: torch.export.Dim("b", max=64)},))
        n_in = len(ex.inputs)
        inputs = [(i.name, str(i.dtype).removeprefix("torch."),
                   [d.size if d.size is not None else (d.symbol, d.lo, d.hi) for d in i.dims]) for i in ex.inputs]
        systems = {name: ftuner.compile_mlir(ex.text, weights=ex.weights,
                                             weight_args=range(n_in, n_in + len(ex.weights)), inputs=inputs,
                                             entry=ex.func, pipeline=pipe, threads=1)
                   for name, pipe in pipes}
        with torch.no_grad():
            ref = model(x)
        errs = {name: (cm(x) - ref).abs().max().item() for name, cm in systems.items()}
        runs = dict(systems)
        if args.ort:
            s = ort_session(model, x)
            feed = {"x": x.numpy()}
            runs["ort"] = lambda _x, s=s, feed=feed: s.run(None, feed)
        times = {k: [] for k in runs}
        order = list(runs.items())
        for r in range(args.rounds):
            # Each round starts at the next system: the one after ONNX Runtime (whose
            # NCHWc reorder of the image evicts the caches) is not always the same.
            for k, f in order[r % len(order):] + order[:r % len(order)]:
                t = time.perf_counter()
                for _ in range(args.calls):
                    f(x)
                times[k].append((time.perf_counter() - t) / args.calls * 1e3)
        med = "  ".join(f"{k} {statistics.median(v):.3f}" for k, v in times.items())
        err = ", ".join(f"{k} {v:.1e}" for k, v in errs.items())
        print(f"{c:4d} channels {hw:3d}x{hw:<3d} stride {stride}: {med}   (max |diff| from eager: {err})",
              flush=True)


if __name__ == "__main__":
    main()
