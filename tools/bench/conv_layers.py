"""One NCHW convolution (3x3 unless said) + bias + ReLU at a time: ftuner against ONNX Runtime and PyTorch
eager on the same layer, one thread, alternated rounds, medians — the kernel side of
ResNet-50's gap to ONNX Runtime, without the rest of the model.

    python tools/bench/conv_layers.py [--layers 64x56x64:1,128x28x128:1,256x14x256:1,512x7x512:1]
        [--batch 1] [--rounds 15] [--calls 10] [--systems ftuner,ort,torch]
        [--variant NAME=PIPELINE ...]

A layer is `CxHxF:S[:K]`: C input channels, an HxH image, F filters, stride S, a KxK
kernel (3 unless given) padded by K // 2 (`960x7x160:1:1`: MobileNetV2's 1x1 projection at
7x7).
ftuner compiles the layer from linalg (weights and bias as constants, as `ftuner.compile`
makes them) and is called on the image padded beforehand; ONNX Runtime runs a one-node
model (its NCHW -> NCHWc reorders of input and output included, which inside a whole model
it does once), PyTorch eager `nn.Conv2d` + ReLU. Each `--variant` adds an ftuner build of
the layer compiled with that pipeline (the pipeline on tensors before bufferization, e.g.
`builtin.module(ftuner-cpu-patch{target=host derive=false},lower-ukernels{k-unroll=1},
reassociate-reductions,canonicalize,cse,outline-weight-preparation)`), for A/B runs of one
knob in one process. Every system's output is checked against eager's first.
"""

import argparse
import os
import statistics
import tempfile
import time

import torch

import ftuner

TEMPLATE = """
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#mapc = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @layer(%x: tensor<?x{C}x{Hp}x{Hp}xf32>, %w: tensor<{F}x{C}x{K}x{K}xf32>, %bias: tensor<{F}xf32>) -> tensor<?x{F}x{Ho}x{Ho}xf32> {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x{C}x{Hp}x{Hp}xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x{F}x{Ho}x{Ho}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x{F}x{Ho}x{Ho}xf32>) -> tensor<?x{F}x{Ho}x{Ho}xf32>
  %c = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<{S}> : vector<2xi64>}} ins(%x, %w : tensor<?x{C}x{Hp}x{Hp}xf32>, tensor<{F}x{C}x{K}x{K}xf32>) outs(%f : tensor<?x{F}x{Ho}x{Ho}xf32>) -> tensor<?x{F}x{Ho}x{Ho}xf32>
  %r = linalg.generic {{indexing_maps = [#map, #mapc, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%c, %bias : tensor<?x{F}x{Ho}x{Ho}xf32>, tensor<{F}xf32>) outs(%e : tensor<?x{F}x{Ho}x{Ho}xf32>) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  }} -> tensor<?x{F}x{Ho}x{Ho}xf32>
  return %r : tensor<?x{F}x{Ho}x{Ho}xf32>
}}
"""


def layer(spec, batch, args, tmp):
    shape, stride, *ksize = spec.split(":")
    if len(ksize) > 1:
        raise SystemExit(f"{spec}: a layer is CxHxF:S[:K]")
    c, h, f = (int(v) for v in shape.split("x"))
    s = int(stride)
    kk = int(ksize[0]) if ksize else 3
    pad = kk // 2
    hp = h + 2 * pad
    ho = (hp - kk) // s + 1
    text = TEMPLATE.format(C=c, Hp=hp, F=f, Ho=ho, S=s, K=kk)
    g = torch.Generator().manual_seed(c * 1000 + h)
    w = torch.randn(f, c, kk, kk, generator=g) * (2.0 / (kk * kk * c)) ** 0.5
    b = torch.randn(f, generator=g)
    x = torch.randn(batch, c, h, h, generator=g)
    xp = torch.nn.functional.pad(x, (pad, pad, pad, pad))
    conv = torch.nn.Sequential(torch.nn.Conv2d(c, f, kk, s, pad), torch.nn.ReLU()).eval()
    conv[0].weight.data = w.clone()
    conv[0].bias.data = b.clone()
    with torch.no_grad():
        ref = conv(x)
    calls = {}
    systems = args.systems.split(",")
    if "ftuner" in systems:
        m = ftuner.compile_mlir(text, weights=[w, b], weight_args=[1, 2])
        calls["ftuner"] = lambda: m(xp)
    for v in args.variant:
        name, pipeline = v.split("=", 1)
        mv = ftuner.compile_mlir(text, weights=[w, b], weight_args=[1, 2], pipeline=pipeline)
        calls[name] = lambda mv=mv: mv(xp)
    if "ort" in systems:
        import onnxruntime as ort

        path = os.path.join(tmp, f"conv_{c}_{h}_{f}_{s}_{kk}.onnx")
        with torch.no_grad():
            torch.onnx.export(conv, (x,), path, input_names=["x"], dynamic_axes={"x": {0: "b"}},
                              opset_version=17, dynamo=False)
        o = ort.SessionOptions()
        o.intra_op_num_threads = 1
        o.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
        xn = x.numpy()
        calls["ort"] = lambda: torch.from_numpy(sess.run(None, {"x": xn})[0])
    if "torch" in systems:
        calls["torch"] = lambda: conv(x)
    # A bound on the f32 error of each output: its K products, each within a few ulps.
    k = kk * kk * c
    with torch.no_grad():
        tol = 4 * k * torch.finfo(torch.float32).eps * (conv[0](x).abs().max().item() + 1.0)
        for name, fn in calls.items():
            err = (fn() - ref).abs().max().item()
            if err > tol:
                raise SystemExit(f"{spec}: {name} differs from eager by {err:.3g} (bound {tol:.3g})")
        times = {name: [] for name in calls}
        names = list(calls)
        for r in range(args.rounds):
            for name in names if r % 2 == 0 else reversed(names):
                t = time.perf_counter()
                for _ in range(args.calls):
                    calls[name]()
                times[name].append((time.perf_counter() - t) / args.calls * 1e3)
    flops = 2 * batch * f * k * ho * ho / 1e6
    med = {name: statistics.median(v) for name, v in times.items()}
    return spec, flops, med


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", default="64x56x64:1,128x28x128:1,256x14x256:1,512x7x512:1,128x56x128:2")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--systems", default="ftuner,ort,torch")
    ap.add_argument("--variant", action="append", default=[], help="NAME=PIPELINE: another ftuner build")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ftuner.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [layer(spec, args.batch, args, tmp) for spec in args.layers.split(",")]
    names = list(rows[0][2])
    print(f"batch {args.batch}, one thread, median of {args.rounds} alternated rounds of {args.calls} calls")
    print(f"{'layer':>16s} " + " ".join(f"{n + ' ms':>14s}" for n in names) + "  GFLOP/s " + " / ".join(names))
    for spec, flops, med in rows:
        print(f"{spec:>16s} " + " ".join(f"{med[n]:14.3f}" for n in names) + "  "
              + " / ".join(f"{flops / med[n]:.0f}" for n in names))


if __name__ == "__main__":
    main()
