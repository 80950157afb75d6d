"""Whole models: ftuner against what PyTorch users run, over dynamic sizes.

    python tools/bench/models.py [--models bert,gpt2,resnet50,mobilenet_v2,dcgan] [--reduced]
        [--threads 1,2] [--systems ftuner,eager,inductor,ort,iree,buckets] [--sizes N] [--batches 1,3,8]
        [--reps R] [--gap SECONDS]
        [--out docs/bench/models.jsonl] [--doc docs/models.md] [--svg-dir docs/bench]

Per model (`ftuner.zoo`, random weights): sequence models (BERT, GPT-2) are timed at `--sizes`
sequence lengths drawn from the GLUE distribution (../shared/data/ftuner/glue_seq_lengths.csv,
pooled over the tasks, batch 1), image models (ResNet-50, MobileNetV2, DCGAN) at `--batches`
(1, 3, 8, 17, 32). IREE needs `pip install -r tools/bench/requirements.txt`. Systems, each compiled once for all sizes where it can be:

* `ftuner`: `ftuner.compile` with the model's dynamic dims;
* `eager`: PyTorch (MKL / oneDNN), `torch.no_grad`;
* `inductor`: `torch.compile(dynamic=True)`;
* `ort`: ONNX Runtime on `torch.onnx.export` with dynamic axes;
* `iree`: IREE (`iree-base-compiler`/`-runtime`, llvm-cpu, host CPU) on the same
  linalg-on-tensors module ftuner reads, weights as arguments, dynamic dims kept;
* `buckets`: ftuner compiled once per padded size (sequence 32/64/128/256/512, batch
  powers of two), each input padded up to its bucket (the padding approach FTuner avoids).

Each size runs every system in turn, `--reps` rounds (alternated), and the median is kept;
each timed call starts after `--gap` idle seconds (0.05), so that the previous system's
thread-pool workers, which spin for a while after a call (libgomp under PyTorch, ONNX
Runtime), have parked: at two threads on two cores they took a core from the next system
(MobileNetV2 batch 8, ftuner at two threads: 96-100 ms alternated without a gap, 65 ms
alone, 69 ms with the gap);
thread counts are set for both PyTorch and ftuner (ONNX Runtime and IREE get the same
number). Outputs are compared with eager's (max abs error, recorded). A system that cannot
compile a model is recorded with its error and skipped. Writes JSON lines (one per model,
system, threads and size; plus compile records), an SVG per model and the generated
docs/models.md.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import pathlib
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import torch
import torch.utils._pytree as pytree

import ftuner
from ftuner import zoo

ROOT = pathlib.Path(__file__).resolve().parents[2]
GLUE = ROOT.parent / "shared" / "data" / "ftuner" / "glue_seq_lengths.csv"
SEQ_MODELS = {"bert", "gpt2"}
BUCKETS = [32, 64, 128, 256, 512]
BATCHES = [1, 3, 8, 17, 32]


def cpu_name():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        info = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
        return f"{info.get('Model name', '?').strip()} (family {info.get('CPU family', '?').strip()}, model {info.get('Model', '?').strip()})"
    except OSError:
        return platform.processor()


def glue_lengths(n, lo, hi, seed=0):
    rng = random.Random(seed)
    if not GLUE.exists():
        return sorted(rng.randint(max(lo, 4), min(hi, 128)) for _ in range(n))
    lens, weights = [], []
    with open(GLUE) as f:
        for row in csv.DictReader(f):
            if float(row["fraction"]) > 0 and lo <= int(row["seq_len"]) <= hi:
                lens.append(int(row["seq_len"]))
                weights.append(float(row["fraction"]))
    return sorted(rng.choices(lens, weights, k=n))


def leaves(x):
    return [t for t in pytree.tree_leaves(x) if isinstance(t, torch.Tensor)]


def max_err(out, ref):
    errs = [(a.float() - b.float()).abs().max().item() for a, b in zip(leaves(out), leaves(ref)) if a.numel()]
    return max(errs) if errs else 0.0


def first(x):
    return leaves(x)[0]


class System:
    name = "?"

    def __init__(self, case, args):
        self.case, self.args = case, args
        self.compile_seconds = None
        self.error = None

    def prepare(self):
        pass

    def run(self, x, threads):
        raise NotImplementedError


class Eager(System):
    name = "eager"

    def run(self, x, threads):
        with torch.no_grad():
            return self.case.model(*x)


class Ftuner(System):
    name = "ftuner"

    def prepare(self):
        t0 = time.perf_counter()
        self.cm = ftuner.compile(self.case.model, self.case.example, dynamic_shapes=self.case.dynamic_shapes)
        self.compile_seconds = time.perf_counter() - t0

    def run(self, x, threads):
        return self.cm(*x)


class Inductor(System):
    name = "inductor"

    def prepare(self):
        self.fn = torch.compile(self.case.model, dynamic=True)
        t0 = time.perf_counter()
        with torch.no_grad():
            self.fn(*self.case.example)
        self.compile_seconds = time.perf_counter() - t0

    def run(self, x, threads):
        with torch.no_grad():
            return self.fn(*x)


class _Positional(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *xs):
        return tuple(leaves(self.model(*xs)))


class Ort(System):
    name = "ort"

    def prepare(self):
        import onnxruntime as ort

        case = self.case
        names = [f"in{i}" for i in range(len(case.example))]
        axes = {}
        for i, spec in enumerate(case.dynamic_shapes):
            if spec:
                axes[names[i]] = {d: getattr(dim, "__name__", f"d{d}") for d, dim in spec.items()}
        f = tempfile.NamedTemporaryFile(suffix=".onnx", delete=False).name
        t0 = time.perf_counter()
        model = _Positional(copy.deepcopy(case.model)).eval()
        with torch.no_grad():
            # Positional inputs only, tensors out (the exporter otherwise binds Hugging Face
            # models' keyword defaults: "got multiple values for argument 'use_cache'"), on a
            # copy: the exporter leaves the model it traces changed.
            try:
                torch.onnx.export(model, case.example, f, input_names=names, dynamic_axes=axes, opset_version=17,
                                  dynamo=False)
                self.exporter = "torch.onnx (TorchScript)"
            except Exception:  # noqa: BLE001 - GPT-2: "aten::diff ... is not supported"
                torch.onnx.export(model, case.example, f, input_names=names, dynamo=True,
                                  dynamic_shapes=(tuple(case.dynamic_shapes),))
                self.exporter = "torch.onnx (dynamo)"
        self.names = names
        self.sessions = {}
        self.path = f
        self.ort = ort
        self.session(1)
        self.compile_seconds = time.perf_counter() - t0

    def session(self, threads):
        if threads not in self.sessions:
            o = self.ort.SessionOptions()
            o.intra_op_num_threads = threads
            o.inter_op_num_threads = 1
            self.sessions[threads] = self.ort.InferenceSession(self.path, o, providers=["CPUExecutionProvider"])
        return self.sessions[threads]

    def run(self, x, threads):
        s = self.session(threads)
        outs = s.run(None, {n: a.numpy() for n, a in zip(self.names, x)})
        return [torch.from_numpy(o) for o in outs]


class Iree(System):
    name = "iree"

    def prepare(self):
        import iree.compiler as ic
        import iree.runtime as ir

        from ftuner import _export

        ex = _export.export(self.case.model, self.case.example, self.case.dynamic_shapes)
        t0 = time.perf_counter()
        vmfb = ic.compile_str(ex.text, target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"])
        self.compile_seconds = time.perf_counter() - t0
        self.ir, self.vmfb, self.func = ir, vmfb, ex.func
        self.weights = [w.contiguous().numpy() for w in ex.weights]
        self.modules = {}

    def module(self, threads):
        if threads not in self.modules:
            # The task system's worker count, read when a device is created.
            self.ir.flags.parse_flags(f"--task_topology_max_group_count={threads}")
            ctx = self.ir.SystemContext(config=self.ir.Config("local-task"))
            ctx.add_vm_module(self.ir.VmModule.copy_buffer(ctx.instance, self.vmfb))
            self.modules[threads] = (ctx, ctx.modules.module[self.func])
        return self.modules[threads][1]

    def run(self, x, threads):
        f = self.module(threads)
        out = f(*[a.numpy() for a in x], *self.weights)
        outs = out if isinstance(out, (list, tuple)) else [out]
        return [torch.from_numpy(o.to_host()) for o in outs]


class _Masked(torch.nn.Module):
    """BERT with an attention mask: padded tokens must not be attended to."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, mask):
        return self.model(ids, attention_mask=mask)


class Buckets(System):
    name = "buckets"

    def prepare(self):
        self.compiled = {}
        self.compile_seconds = 0.0
        # BERT attends both ways: its padded buckets take a mask (GPT-2 is causal: padding
        # at the end changes nothing before it).
        self.masked = self.case.name == "bert"
        self.model = _Masked(self.case.model).eval() if self.masked else self.case.model

    def bucket_of(self, n):
        for b in BUCKETS:
            if n <= b:
                return b
        return n

    def run(self, x, threads):
        case = self.case
        if case.name in SEQ_MODELS:
            n = x[0].shape[1]
            b = self.bucket_of(n)
            xp = (torch.nn.functional.pad(x[0], (0, b - n)),)
            if self.masked:
                mask = torch.zeros_like(xp[0])
                mask[:, :n] = 1
                xp = (xp[0], mask)
        else:
            n = x[0].shape[0]
            b = 1 << (n - 1).bit_length()
            xp = (torch.cat([x[0], x[0].new_zeros((b - n, *x[0].shape[1:]))]),)
        if b not in self.compiled:
            t0 = time.perf_counter()
            self.compiled[b] = ftuner.compile(self.model, xp)
            self.compile_seconds += time.perf_counter() - t0
        out = self.compiled[b](*xp)
        # The useful part of the first output (for the error check).
        o = first(out)
        return [o[:, :n] if case.name in SEQ_MODELS else o[:n]]


SYSTEMS = {s.name: s for s in [Ftuner, Eager, Inductor, Ort, Iree, Buckets]}


def sizes(case, n):
    if case.name in SEQ_MODELS:
        lo, hi = case.dims["seq"]
        return [{"seq": s} for s in glue_lengths(n, lo, hi)]
    hi = case.dims["batch"][1]
    return [{"batch": b} for b in BATCHES if b <= hi]


def bench_model(name, args, out):
    case = zoo.get(name, reduced=args.reduced)
    systems = []
    for s in args.systems:
        sys_ = SYSTEMS[s](case, args)
        try:
            sys_.prepare()
            systems.append(sys_)
            rec = {"model": name, "system": s, "compile_seconds": sys_.compile_seconds}
            if getattr(sys_, "exporter", None):
                rec["note"] = sys_.exporter
        except Exception as e:  # noqa: BLE001 - reported, the system is skipped
            rec = {"model": name, "system": s, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:500]}
            print(f"{name}: {s} cannot run: {rec['error']}", file=sys.stderr)
            if args.verbose:
                traceback.print_exc()
        out.write(json.dumps(rec) + "\n")
        out.flush()
    for threads in args.threads:
        torch.set_num_threads(threads)
        ftuner.set_num_threads(threads)
        for p in sizes(case, args.sizes):
            x = case.make(**p)
            ref = Eager(case, args).run(x, threads)
            times = {s.name: [] for s in systems}
            errs = {}
            for s in systems:  # warm-up, and the error against eager
                try:
                    errs[s.name] = max_err(s.run(x, threads), ref)
                except Exception as e:  # noqa: BLE001
                    errs[s.name] = f"{type(e).__name__}: {e}"[:300]
            for _ in range(args.reps):
                for s in systems:
                    if isinstance(errs[s.name], str):
                        continue
                    # The previous system's idle workers (libgomp, ONNX Runtime) spin for
                    # a while after each call; at two threads on two cores they took a
                    # core from whichever system ran next.
                    time.sleep(args.gap)
                    t0 = time.perf_counter()
                    s.run(x, threads)
                    times[s.name].append(time.perf_counter() - t0)
            for s in systems:
                rec = {"model": name, "system": s.name, "threads": threads, **p}
                if times[s.name]:
                    rec["ms"] = statistics.median(times[s.name]) * 1e3
                    rec["max_err"] = errs[s.name]
                else:
                    rec["error"] = errs[s.name]
                out.write(json.dumps(rec) + "\n")
            out.flush()
            line = "  ".join(f"{s.name} {statistics.median(times[s.name]) * 1e3:.2f}" for s in systems if times[s.name])
            print(f"{name} {p} threads={threads}: {line} ms", flush=True)
    # Padded buckets compile while they run, one program per bucket: their compile record
    # is written again with the total.
    for s in systems:
        if isinstance(s, Buckets):
            out.write(json.dumps({"model": name, "system": s.name, "compile_seconds": s.compile_seconds,
                                  "note": f"{len(s.compiled)} programs: {sorted(s.compiled)}"}) + "\n")
    out.flush()


def summarize(records):
    """Per model, threads and system: median latency and median speedup of ftuner over it."""
    rows = {}
    for r in records:
        if "ms" in r:
            key = (r["model"], r["threads"])
            size = r.get("seq", r.get("batch"))
            rows.setdefault(key, {}).setdefault(r["system"], {})[size] = r["ms"]
    out = []
    for (model, threads), by in sorted(rows.items()):
        ft = by.get("ftuner", {})
        for s, t in sorted(by.items()):
            common = [k for k in t if k in ft]
            ratio = statistics.median([t[k] / ft[k] for k in common]) if common and s != "ftuner" else None
            out.append((model, threads, s, statistics.median(t.values()), ratio))
    return out


def svg(model, records, path):
    pts = {}
    for r in records:
        if r.get("model") == model and "ms" in r:
            size = r.get("seq", r.get("batch"))
            pts.setdefault((r["system"], r["threads"]), []).append((size, r["ms"]))
    if not pts:
        return
    w, h, m = 640, 360, 50
    xs = [x for v in pts.values() for x, _ in v]
    ys = [y for v in pts.values() for _, y in v]
    x0, x1, y1 = min(xs), max(xs), max(ys) * 1.05
    fx = lambda x: m + (x - x0) / max(x1 - x0, 1) * (w - 2 * m)  # noqa: E731
    fy = lambda y: h - m - y / y1 * (h - 2 * m)  # noqa: E731
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#7f7f7f"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
             f'<text x="{w / 2}" y="16" text-anchor="middle">{model}: latency (ms) by {"sequence length" if model in SEQ_MODELS else "batch"}</text>',
             f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/><line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="black"/>',
             f'<text x="{m}" y="{h - m + 14}">{x0}</text><text x="{w - m}" y="{h - m + 14}" text-anchor="end">{x1}</text>',
             f'<text x="{m - 4}" y="{m}" text-anchor="end">{y1:.0f}</text>']
    for i, ((s, t), v) in enumerate(sorted(pts.items())):
        v.sort()
        c = colors[i % len(colors)]
        dash = "" if t == min(k[1] for k in pts) else ' stroke-dasharray="4 3"'
        parts.append(f'<polyline fill="none" stroke="{c}"{dash} points="{" ".join(f"{fx(x):.1f},{fy(y):.1f}" for x, y in v)}"/>')
        parts.append(f'<text x="{w - m + 4}" y="{m + 14 * i}" fill="{c}">{s} ({t} thr)</text>')
    parts.append("</svg>")
    pathlib.Path(path).write_text("\n".join(parts))


def write_doc(records, path, cmd, cpu):
    lines = ["# Whole models: ftuner against PyTorch eager, Inductor, ONNX Runtime, IREE and padded buckets", "",
             "Generated by `tools/bench/models.py` (do not edit by hand). Measured on "
             f"{cpu}, {time.strftime('%Y-%m-%d')}:", "", f"    {cmd}", "",
             "Latency is the median of alternated rounds; `x ftuner` is the median over the sizes of that "
             "system's time over ftuner's (above 1: ftuner is faster). Sequence models run at lengths drawn "
             "from the GLUE distribution (batch 1), image models at batches " + ", ".join(map(str, BATCHES)) + ".", ""]
    lines += ["## Compile time and failures", "", "| model | system | compile (s) | note |", "|---|---|---|---|"]
    compiles = {}  # the last record of each (model, system)
    for r in records:
        if "threads" not in r:
            compiles[(r["model"], r["system"])] = r
    for r in compiles.values():
        cs = f"{r['compile_seconds']:.1f}" if r.get("compile_seconds") is not None else ""
        lines.append(f"| {r['model']} | {r['system']} | {cs} | {r.get('error', r.get('note', ''))} |")
    lines += ["", "## Latency", "", "| model | threads | system | median ms | x ftuner |", "|---|---|---|---|---|"]
    for model, threads, s, ms, ratio in summarize(records):
        lines.append(f"| {model} | {threads} | {s} | {ms:.2f} | {'' if ratio is None else f'{ratio:.2f}'} |")
    worst = {}
    for r in records:
        if r.get("system") == "ftuner" and isinstance(r.get("max_err"), float):
            worst[r["model"]] = max(worst.get(r["model"], 0.0), r["max_err"])
    lines += ["", "ftuner's largest difference from eager per model: " + ", ".join(f"{k} {v:.2e}" for k, v in sorted(worst.items())), ""]
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="bert,gpt2,resnet50,mobilenet_v2,dcgan")
    ap.add_argument("--systems", default="ftuner,eager,inductor,ort,iree,buckets")
    ap.add_argument("--threads", default=f"1,{os.cpu_count()}")
    ap.add_argument("--sizes", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--gap", type=float, default=0.05,
                    help="idle seconds before each timed call, so the previous system's spinning thread-pool workers park")
    ap.add_argument("--batches", default=",".join(map(str, BATCHES)), help="batches of the image models")
    ap.add_argument("--reduced", action="store_true", help="the reduced configurations of the tests")
    ap.add_argument("--out", default=str(ROOT / "docs" / "bench" / "models.jsonl"))
    ap.add_argument("--doc", default=None, help="write the generated docs/models.md here")
    ap.add_argument("--svg-dir", default=None)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    args.systems = [s for s in args.systems.split(",") if s]
    unknown = [s for s in args.systems if s not in SYSTEMS]
    if unknown:
        ap.error(f"unknown systems {unknown}: {sorted(SYSTEMS)}")
    args.threads = sorted({int(t) for t in args.threads.split(",")})
    BATCHES[:] = [int(b) for b in args.batches.split(",")]
    cpu = cpu_name()
    print(f"CPU: {cpu}", flush=True)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    models = args.models.split(",")
    with open(args.out, "w") as out:
        out.write(json.dumps({"cpu": cpu, "argv": sys.argv[1:], "date": time.strftime("%Y-%m-%d")}) + "\n")
        for name in models:
            bench_model(name, args, out)
            # The report so far (an interrupted run keeps what it measured).
            report(args, models, cpu, final=name == models[-1])


def report(args, models, cpu, final):
    records = [json.loads(line) for line in open(args.out)][1:]
    if final:
        for model, threads, s, ms, ratio in summarize(records):
            print(f"{model:>13} {threads} thr {s:>9}: median {ms:8.2f} ms" + ("" if ratio is None else f"  ({ratio:.2f}x ftuner's time)"))
    if args.svg_dir:
        for name in models:
            svg(name, records, pathlib.Path(args.svg_dir) / f"models-{name}.svg")
    if args.doc:
        write_doc(records, args.doc, "python tools/bench/models.py " + " ".join(sys.argv[1:]), cpu)


if __name__ == "__main__":
    main()
