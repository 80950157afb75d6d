"""FTuner's claim against a search tuner: compile time and latency (issue 26, item 4).

    python tools/bench/tuning_time.py [--trials 64] [--kernels dense,conv3x3,conv1x1] (ffn: one more)
        [--models bert,gpt2,resnet50,mobilenet_v2,dcgan] [--reps 7] [--out OUT.jsonl]

Needs `apache-tvm` (`pip install -r tools/bench/requirements.txt`).

1. Representative kernels of the five models, each at one shape: TVM MetaSchedule
   (`tvm.s_tir.meta_schedule.tune_tir`, evolutionary search with its XGBoost cost model,
   `--trials` measured candidates, one core) tunes it; the wall time of the tuning is its
   cost. ftuner compiles the same computation as a PyTorch module with the dynamic dim kept
   (`ftuner.compile`: no search); its cost is its compile time (ftuner's own phases; the
   export through torch.export and torch-mlir is reported beside it).
2. Both results are timed in the same process, alternated, `--reps` rounds, one thread,
   medians: the latency ratio says whether compiling without search gives up speed.
3. Whole models: ftuner compiles each model of `ftuner.zoo` once for every shape
   (measured: `ftuner.compile`, seconds). A search tuner tunes per shape and per distinct
   kernel; its tuning time for the model is extrapolated as (measured seconds per trial)
   x trials per kernel x distinct kernels (`ftuner-tune kernels`) x shapes to cover (5
   sequence buckets 32..512 for the sequence models, 6 batch buckets 1..32 for the image
   models: what a user pads to when every shape cannot be tuned). The trial count is the
   one measured here (64 by default; MetaSchedule's own examples use 1,000-20,000 per
   model), so the extrapolation is a lower bound.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

# name -> (what, kind, shape)
KERNELS = {
    "dense": ("BERT/GPT-2 attention projection, 128 tokens", "matmul", (128, 768, 768)),
    "ffn": ("BERT/GPT-2 MLP up-projection, 128 tokens", "matmul", (128, 3072, 768)),
    "conv3x3": ("ResNet-50 stage-1 3x3 convolution, batch 1", "conv", (1, 64, 56, 56, 64, 3, 1)),
    "conv1x1": ("ResNet-50 1x1 convolution (a matmul per image), batch 1", "conv", (1, 64, 56, 56, 256, 1, 0)),
}
SHAPES = {"bert": 5, "gpt2": 5, "resnet50": 6, "mobilenet_v2": 6, "dcgan": 6}


def cpu_name():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        f = {l.split(":")[0].strip(): l.split(":", 1)[1].strip() for l in out.splitlines() if ":" in l}
        return f"{f.get('Model name')} (family {f.get('CPU family')}, model {f.get('Model')})"
    except OSError:
        return platform.processor()


def llvm_cpu():
    import tvm

    try:
        return tvm.target.codegen.llvm_get_system_cpu()
    except Exception:  # noqa: BLE001 - older/newer TVM: fall back to the generic x86-64 target
        return "x86-64"


def tvm_kernel(kind, shape):
    from tvm import te, topi

    if kind == "matmul":
        m, n, k = shape
        a = te.placeholder((m, k), name="A")
        b = te.placeholder((k, n), name="B")
        r = te.reduce_axis((0, k), name="k")
        c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
        return te.create_prim_func([a, b, c]), [(m, k), (k, n)], (m, n)
    nb, ci, h, w, co, ks, pad = shape
    x = te.placeholder((nb, ci, h, w), name="X")
    f = te.placeholder((co, ci, ks, ks), name="W")
    y = topi.nn.conv2d_nchw(x, f, 1, pad, 1)
    return te.create_prim_func([x, f, y]), [(nb, ci, h, w), (co, ci, ks, ks)], tuple(int(d) for d in y.shape)


def tvm_worker(kind, shape, trials, work):
    """The TVM side, in a process of its own (TVM's LLVM and the one linked into ftuner's
    extension do not share a process): tune, build, save the inputs, then time calls on
    request (`time N` -> seconds per call) until `quit`."""
    import numpy as np
    import tvm
    from tvm.s_tir import meta_schedule as ms

    func, ins, out = tvm_kernel(kind, shape)
    target = tvm.target.Target({"kind": "llvm", "mcpu": llvm_cpu(), "num-cores": 1})
    mod = tvm.IRModule({"main": func})
    t0 = time.perf_counter()
    db = ms.tune_tir(mod=mod, target=target, work_dir=work, max_trials_global=trials,
                     num_trials_per_iter=min(trials, 32), num_tuning_cores=1, seed=1)
    sch = ms.tir_integration.compile_tir(db, mod, target)
    tune_s = time.perf_counter() - t0
    lib = tvm.compile(sch.mod, target=target)
    dev = tvm.cpu(0)
    rng = np.random.default_rng(0)
    host = [rng.standard_normal(s).astype("float32") for s in ins]
    args = [tvm.runtime.tensor(h, dev) for h in host]
    args.append(tvm.runtime.tensor(np.zeros(out, dtype="float32"), dev))
    fn = lib["main"]
    fn(*args)
    paths = []
    for i, h in enumerate(host + [args[-1].numpy()]):
        paths.append(os.path.join(work, f"arg{i}.npy"))
        np.save(paths[-1], h)
    print(json.dumps({"tune_s": tune_s, "paths": paths}), flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] == "quit":
            break
        n = int(cmd[1])
        print(timed(lambda: fn(*args), n), flush=True)


class TvmProcess:
    def __init__(self, name, trials, work):
        env = dict(os.environ, TVM_NUM_THREADS="1")
        self.p = subprocess.Popen([sys.executable, __file__, "--tvm-worker", name, "--trials", str(trials),
                                   "--work", work], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit(f"the TVM worker for {name} failed (exit {self.p.wait()})")
            if line.startswith("{"):
                self.info = json.loads(line)
                break

    def time(self, n):
        self.p.stdin.write(f"time {n}\n")
        self.p.stdin.flush()
        return float(self.p.stdout.readline())

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait()


def ftuner_kernel(kind, shape, host_inputs):
    import torch
    from torch.export import Dim

    import ftuner

    if kind == "matmul":
        m, n, k = shape
        w = torch.from_numpy(host_inputs[1])

        class Mm(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(w.clone())

            def forward(self, x):
                return x @ self.w

        mod, x = Mm().eval(), torch.from_numpy(host_inputs[0])
        ds = ({0: Dim("m", min=1, max=4096)},)
    else:
        nb, ci, h, w_, co, ks, pad = shape
        mod = torch.nn.Conv2d(ci, co, ks, padding=pad, bias=False).eval()
        with torch.no_grad():
            mod.weight.copy_(torch.from_numpy(host_inputs[1]))
        x = torch.from_numpy(host_inputs[0])
        ds = ({0: Dim("batch", min=1, max=64)},)
    # The example has 2 rows or images: torch.export specializes a dim of size 1.
    cm = ftuner.compile(mod, (torch.cat([x, x]),), dynamic_shapes=ds)
    cm(x)
    return cm.compile_seconds, (lambda: cm(x)), cm(x).numpy(), mod(x).detach().numpy()


def timed(f, n):
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t0) / n


def model_compile_seconds(names):
    import ftuner
    from ftuner import zoo

    out = {}
    for n in names:
        c = zoo.get(n)
        cm = ftuner.compile(c.model, c.example, dynamic_shapes=c.dynamic_shapes)
        out[n] = {"total": cm.compile_seconds.get("total"), "ftuner": cm.compile_seconds.get("ftuner")}
        print(f"compiled {n}: {out[n]['total']:.1f} s in all, {out[n]['ftuner']:.1f} s in ftuner", flush=True)
    return out


def distinct_kernels(name, mlir_dir):
    p = Path(mlir_dir) / f"{name}.mlir"
    if not p.exists():
        return None
    r = subprocess.run([str(ROOT / "target/release/ftuner-tune"), "kernels", str(p), "--weights", "1.."],
                       capture_output=True, text=True)
    return len([l for l in r.stdout.splitlines() if l.strip()]) if r.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--kernels", default="dense,conv3x3,conv1x1")
    ap.add_argument("--models", default="bert,gpt2,resnet50,mobilenet_v2,dcgan")
    ap.add_argument("--mlir-dir", default="", help="the models' MLIR (tools/bench/transfer_models.py writes them)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out", default="")
    ap.add_argument("--append", action="store_true", help="add to --out (after a run of other kernels)")
    ap.add_argument("--tvm-worker", default="", help=argparse.SUPPRESS)
    ap.add_argument("--work", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.tvm_worker:
        _, kind, shape = KERNELS[a.tvm_worker]
        return tvm_worker(kind, shape, a.trials, a.work)
    os.environ.setdefault("TVM_NUM_THREADS", "1")
    import numpy as np
    import torch

    import ftuner

    torch.set_num_threads(1)
    ftuner.set_num_threads(1)
    print(f"CPU: {cpu_name()}; LLVM cpu {llvm_cpu()}", flush=True)
    rows = []
    for name in a.kernels.split(","):
        what, kind, shape = KERNELS[name]
        with tempfile.TemporaryDirectory() as work:
            tvm = TvmProcess(name, a.trials, work)
            host = [np.load(p) for p in tvm.info["paths"]]
            secs, ft_call, ft_out, ref = ftuner_kernel(kind, shape, host)
            err = float(np.max(np.abs(ft_out - ref)))
            tvm_err = float(np.max(np.abs(host[-1] - ref)))
            n = max(3, int(0.2 / max(timed(ft_call, 3), 1e-6)))
            tt, tf = [], []
            for _ in range(a.reps):
                tt.append(tvm.time(n))
                tf.append(timed(ft_call, n))
            tvm.close()
        tt.sort()
        tf.sort()
        row = {
            "kernel": name, "what": what, "shape": shape, "trials": a.trials,
            "tvm_tune_s": tvm.info["tune_s"], "tvm_s_per_trial": tvm.info["tune_s"] / a.trials,
            "ftuner_compile_s": secs.get("ftuner"), "ftuner_total_s": secs.get("total"),
            "tvm_ms": tt[len(tt) // 2] * 1e3, "ftuner_ms": tf[len(tf) // 2] * 1e3,
            "ftuner_max_abs_err_vs_torch": err, "tvm_max_abs_err_vs_torch": tvm_err,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    per_trial = sum(r["tvm_s_per_trial"] for r in rows) / max(len(rows), 1)
    models = a.models.split(",") if a.models else []
    comp = model_compile_seconds(models) if models else {}
    mrows = []
    for m in models:
        k = distinct_kernels(m, a.mlir_dir) if a.mlir_dir else None
        est = per_trial * a.trials * k * SHAPES[m] if k else None
        mrows.append({"model": m, "ftuner_compile_total_s": comp[m]["total"], "ftuner_compile_s": comp[m]["ftuner"],
                      "distinct_kernels": k, "shapes": SHAPES[m], "search_tuner_estimate_s": est})
        print(json.dumps(mrows[-1]), flush=True)
    if a.out:
        with open(a.out, "a" if a.append else "w") as f:
            if not a.append:
                f.write(json.dumps({"cpu": cpu_name(), "trials": a.trials}) + "\n")
            for r in rows + mrows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
