"""OLLIE's derivations where users would look: `ftuner.compile(..., derive=True)` against
`derive=False` and PyTorch eager (oneDNN) on the zoo models' convolution-family layers,
the shipped dilated conv, BERT/GPT-2 attention, and the whole models (issue 26, item 3).

    python tools/bench/ollie_layers.py [--out docs/bench/ollie-layers-DATE] [--threads 1]
        [--batch 1] [--rounds 11] [--quick] [--no-layers] [--no-e2e] [--report-only]

Layers (random weights, eval mode), each compiled on its own with a dynamic batch (as
`ftuner.zoo` exports the models; exported at batch 2, timed at `--batch`):

* every distinct `Conv2d` / `ConvTranspose2d` of ResNet-50, MobileNetV2 (depthwise
  included) and the DCGAN generator at 224x224 (DCGAN: z of 100x1x1), found by running
  the model once with hooks; identical configurations (channels, kernel, stride,
  padding, dilation, groups, bias, input size) are one row with their count. The DCGAN
  generator is the one examples/dcgan_generator.mlir holds (same shapes); ResNet-50's
  3x3 64-channel conv at 56x56 is the one ../shared/inputs/resnet_block.mlir holds twice;
* the shipped dilated conv (../shared/inputs/dilated_conv.mlir): `Conv2d(64, 64, 3,
  dilation=2, padding=2)` with bias on 64x56x56;
* attention (not a convolution, not in the geomean): `BertAttention` and `GPT2Attention`
  of the zoo configs, compiled once with a dynamic sequence length and timed at
  `--seqs`.

Each layer is compiled twice with ftuner (`derive=True` and `derive=False`, `threads=`
`--threads`); both and the eager module (`torch.no_grad`, `torch.set_num_threads`
the same) are timed in alternated rounds, each round starting at the next system
(rotating), each system's block of calls in a round averaged, the median over `--rounds`
rounds kept, after a warm-up. Outputs are compared with eager's (max abs difference; ok
when it is at most `--tol` x max |eager|, i.e. a relative error). What `ollie-derive` said (the `ftuner`
logger's remarks: why it kept a contraction) is recorded, and whether derivation changed
the compiled program (the contractions `ftuner.explain` lists differ in kind or operands).

End to end: the five zoo models (full configurations) compiled with `derive=True` and
`False`, timed the same way against eager at `--e2e-batches` (image models) and
`--e2e-seq` (BERT, GPT-2, batch 1).

Writes `results.jsonl` (one record per layer and size, per model and size; compile
failures with their message), `meta.json` and `summary.md` to `--out`.
`--report-only` rewrites summary.md from results.jsonl. tools/bench/seeds.py reads the
same files for docs/seeds.md.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import time
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[2]
IMAGE_MODELS = ("resnet50", "mobilenet_v2", "dcgan")
E2E_MODELS = ("bert", "gpt2", "resnet50", "mobilenet_v2", "dcgan")
SYSTEMS = ("eager", "underived", "derived")
# The bar issue 26 sets: derived layers at least this much faster than eager, geomean.
BAR = 1.46
# (family, model) -> the name Intel gives the core; lscpu's model name on a VM is generic.
CPU_NAMES = {("6", "143"): "Sapphire Rapids", ("6", "207"): "Emerald Rapids", ("6", "167"): "Rocket Lake",
             ("25", "17"): "Zen 4", ("26", "2"): "Zen 5"}


# ---------------------------------------------------------------------------------------
# Reading results (no torch needed: tools/bench/seeds.py imports these).


def load(out_dir):
    """(meta, records) of a results directory."""
    d = pathlib.Path(out_dir)
    meta = json.loads((d / "meta.json").read_text()) if (d / "meta.json").exists() else {}
    recs = [json.loads(line) for line in (d / "results.jsonl").read_text().splitlines() if line.strip()]
    return meta, recs


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def timed(r):
    """Whether a record has all three times."""
    return all(isinstance(r.get(f"{s}_ms"), (int, float)) for s in SYSTEMS)


def conv_rows(recs):
    return [r for r in recs if r.get("kind") == "layer" and r.get("family") == "conv"]


def group_of(r):
    """The rows' grouping in the summaries."""
    if r.get("group"):
        return r["group"]
    return r.get("models", ["?"])[0]


GROUPS = [("resnet50", "ResNet-50 convs"), ("mobilenet_v2", "MobileNetV2 convs (dense)"),
          ("mobilenet_v2 depthwise", "MobileNetV2 depthwise convs"), ("dcgan", "DCGAN transposed convs"),
          ("dilated example", "dilated conv example")]


def aggregate(rows):
    """Geomeans of the ratios over rows that have all three times."""
    ok = [r for r in rows if timed(r)]
    w = [(r, r.get("count", 1)) for r in ok]
    return {
        "n": len(rows),
        "timed": len(ok),
        "derived": sum(1 for r in rows if r.get("changed")),
        "eager_over_underived": geomean([r["eager_ms"] / r["underived_ms"] for r in ok]),
        "eager_over_derived": geomean([r["eager_ms"] / r["derived_ms"] for r in ok]),
        "derived_over_underived": geomean([r["derived_ms"] / r["underived_ms"] for r in ok]),
        # Weighted by how often each configuration occurs in its model.
        "eager_over_derived_weighted": (math.exp(sum(c * math.log(r["eager_ms"] / r["derived_ms"]) for r, c in w)
                                        / sum(c for _, c in w)) if w else None),
    }


def fmt(x, spec=".2f", none="-"):
    return none if x is None else format(x, spec)


def normalise_remark(text):
    """A remark without its location and figures, to count alike ones together."""
    m = re.search(r"\b(remark|warning|error): (.*)", text)
    t = text if m is None else m.group(2) if m.group(1) == "remark" else f"{m.group(1)}: {m.group(2)}"
    return re.sub(r"\d+\.\d+(e[-+]?\d+)?|\d+e[-+]?\d+", "N", t)


def remark_counts(recs):
    """ollie-derive's remarks (derive=True) over records, alike ones together; a block compiled
    once and timed at several sizes (attention) counted once."""
    counts = {}
    seen = set()
    for r in recs:
        if r.get("name") in seen:
            continue
        seen.add(r.get("name"))
        for m in r.get("remarks_derived", []):
            k = normalise_remark(m)
            counts[k] = counts.get(k, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def cpu_line(meta):
    return meta.get("cpu", "?")


def noise_band(rows):
    """derived / underived over timed rows whose compiled contractions are the same: what
    two compilations of one program measure apart in this run."""
    same = [r["derived_ms"] / r["underived_ms"] for r in rows if timed(r) and r.get("changed") is False]
    return (min(same), max(same), len(same)) if same else None


def e2e_noise_sentence(recs):
    """The same for whole models: underived / derived where no contraction changed."""
    same = [r["underived_ms"] / r["derived_ms"] for r in recs
            if r.get("kind") == "model" and timed(r) and r.get("changed") is False]
    if not same:
        return ""
    return (f"Where derivation changed no contraction ({len(same)} model rows), the gain column ranges "
            f"{min(same):.2f}-{max(same):.2f}x: the noise of whole-model timings in this run.")


def silent_sentence(rows):
    """The layers ollie-derive said nothing about (neither derived nor a remark)."""
    silent = [r for r in rows if timed(r) and r.get("ollie") == "no remark"]
    if not silent:
        return ""
    dw = [r for r in silent if str(r.get("group", "")).endswith("depthwise")]
    s = f"{len(silent)} layers got no remark from `ollie-derive`"
    if len(dw) == len(silent):
        s += (": all depthwise convs, which torch-mlir exports as `linalg.depthwise_conv_2d_nchw_chw`, not "
              "among the ops ollie-derive reads (conv_2d_nchw_fchw / nhwc_hwcf, matmul, batch_matmul, "
              "mul-add generics, ta.expr): it neither tries them nor says so.")
    else:
        s += ": " + ", ".join(r["name"] for r in silent) + "."
    return s


def bar_sentence(agg, quick=False):
    g = agg["eager_over_derived"]
    if g is None:
        return f"Issue 26's bar (derived layers >= {BAR}x geomean faster than PyTorch eager): not measured."
    if quick:
        return (f"`--quick` measured a subset of the layers (the most work per group, every DCGAN layer): geomean "
                f"eager / derived {g:.2f}x over {agg['timed']} layers, which is not issue 26's bar (all the "
                "convolution-family layers): run without --quick for it.")
    word = "met" if g >= BAR else "not met"
    return (f"Issue 26's bar, derived layers >= {BAR}x geomean faster than PyTorch eager over the "
            f"convolution-family layers: **{word}** (geomean eager / derived {g:.2f}x over {agg['timed']} "
            f"distinct layers; weighted by occurrence {fmt(agg['eager_over_derived_weighted'])}x).")


def group_table(recs):
    rows = conv_rows(recs)
    out = ["| layers | distinct (occurrences) | derived by ollie-derive | eager / underived | eager / derived | "
           "derived / underived |", "|---|---|---|---|---|---|"]
    for key, label in GROUPS:
        g = [r for r in rows if group_of(r) == key]
        if not g:
            continue
        a = aggregate(g)
        out.append(f"| {label} | {a['n']} ({sum(r.get('count', 1) for r in g)}) | {a['derived']} | "
                   f"{fmt(a['eager_over_underived'])}x | {fmt(a['eager_over_derived'])}x | "
                   f"{fmt(a['derived_over_underived'])}x |")
    a = aggregate(rows)
    out.append(f"| **all conv-family layers** | {a['n']} ({sum(r.get('count', 1) for r in rows)}) | {a['derived']} | "
               f"{fmt(a['eager_over_underived'])}x | **{fmt(a['eager_over_derived'])}x** | "
               f"{fmt(a['derived_over_underived'])}x |")
    return out


def e2e_table(recs):
    out = ["| model | size | eager ms | ftuner underived ms | ftuner derived ms | gain of derivation "
           "(underived / derived) | eager / derived | contractions changed | max rel. err (derived) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        if r.get("kind") != "model":
            continue
        size = f"seq {r['seq']}" if "seq" in r else f"batch {r['batch']}"
        if not timed(r):
            out.append(f"| {r['model']} | {size} | {fmt(r.get('eager_ms'))} | {fmt(r.get('underived_ms'))} | "
                       f"{fmt(r.get('derived_ms'))} | - | - | - | {r.get('error', '')[:200]} |")
            continue
        out.append(f"| {r['model']} | {size} | {r['eager_ms']:.2f} | {r['underived_ms']:.2f} | {r['derived_ms']:.2f} | "
                   f"{r['underived_ms'] / r['derived_ms']:.2f}x | {r['eager_ms'] / r['derived_ms']:.2f}x | "
                   f"{r.get('changed_contractions', '?')} of {r.get('contractions', '?')} | "
                   f"{fmt(r.get('derived_rel_err'), '.1e')} |")
    return out


def layer_table(recs, kinds=("layer",)):
    out = ["| layer | where (count) | eager ms | ftuner underived ms | ftuner derived ms | derived / underived | "
           "eager / derived | ollie-derive | max rel. err (underived / derived) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        if r.get("kind") not in kinds:
            continue
        where = "; ".join([", ".join(f"{m} x{c}" for m, c in r.get("uses", {}).items())] + [r.get("also", "")])
        where = where.strip("; ")
        name = r["name"] + (f" (L={r['seq']})" if "seq" in r else "")
        if not timed(r):
            out.append(f"| {name} | {where} | {fmt(r.get('eager_ms'), '.3f')} | {fmt(r.get('underived_ms'), '.3f')} | "
                       f"{fmt(r.get('derived_ms'), '.3f')} | - | - | error: {r.get('error', '?')[:300]} | |")
            continue
        what = ("**derived**: " + ", ".join(r.get("kinds_derived", [])) if r.get("changed")
                else "kept" if r.get("remarks_derived") else "not considered (no remark)")
        out.append(f"| {name} | {where} | {r['eager_ms']:.3f} | {r['underived_ms']:.3f} | {r['derived_ms']:.3f} | "
                   f"{r['derived_ms'] / r['underived_ms']:.2f} | {r['eager_ms'] / r['derived_ms']:.2f} | {what} | "
                   f"{fmt(r.get('underived_rel_err'), '.1e')} / {fmt(r.get('derived_rel_err'), '.1e')} |")
    return out


def write_summary(out_dir):
    meta, recs = load(out_dir)
    rows = conv_rows(recs)
    agg = aggregate(rows)
    fails = [r for r in recs if r.get("error") or r.get("compile_error_derived") or r.get("compile_error_underived")]
    bad = [r for r in recs if r.get("ok") is False]
    lines = [
        "# OLLIE's derivations against PyTorch eager (oneDNN): layers and whole models",
        "",
        f"Written by `tools/bench/ollie_layers.py` on {meta.get('date', '?')}. CPU: {cpu_line(meta)}; "
        f"{meta.get('threads', '?')} thread(s) for PyTorch and ftuner alike; PyTorch {meta.get('torch', '?')} "
        f"(oneDNN {meta.get('onednn', '?')}).",
        "",
        "Reproduce:",
        "",
        f"    {meta.get('command', '?')}",
        "",
        f"Each layer compiled on its own by `ftuner.compile` (dynamic batch, timed at batch {meta.get('batch', '?')}) "
        "with `derive=True` (derived) and `derive=False` (underived); eager is the `torch.nn` module under "
        "`torch.no_grad` (its convolutions run on oneDNN: `ConvBackend` per row in results.jsonl). "
        f"The three are timed in alternated rounds ({meta.get('rounds', '?')} rounds after a warm-up, each round "
        "starting at the next system, a block of calls per system per round), medians. Ratios above 1 in "
        "`eager / derived` mean ftuner's derived compilation is faster than eager.",
        "",
        "This machine has 2 cores, is a VM and was shared with compile jobs during the run: absolute times "
        "drift by 10-15% between runs; only the ratios within one alternated run count. The underived "
        "program is always compiled first, the derived one second (compile order alone can move a whole "
        "model's time by a few percent).",
        "",
        "## Summary",
        "",
        *group_table(recs),
        "",
        bar_sentence(agg, meta.get("quick", False)),
        "",
    ]
    nb = noise_band(rows)
    if nb:
        lines += [f"Noise: on the {nb[2]} layers where derivation changed no contraction (two compilations of the "
                  f"same contractions), derived / underived ranges {nb[0]:.2f}-{nb[1]:.2f}.", ""]
    ss = silent_sentence(rows)
    if ss:
        lines += [ss, ""]
    if any(r.get("kind") == "model" for r in recs):
        lines += ["## End to end", "", *e2e_table(recs), ""]
        if e2e_noise_sentence(recs):
            lines += [e2e_noise_sentence(recs), ""]
    seen = set()
    mr = []
    for r in recs:
        if r.get("kind") == "model" and r["model"] not in seen:
            seen.add(r["model"])
            counts = r.get("remark_counts_derived") or {}
            said = "; ".join(f"{n} x `{k}`" for k, n in sorted(counts.items(), key=lambda kv: -kv[1])) or "nothing"
            mr.append(f"- {r['model']}: {said}")
    if mr:
        lines += ["What ollie-derive said compiling each whole model with `derive=True` (remarks, alike ones "
                  "counted together, figures as N; a contraction it derived has none):", "", *mr, ""]
    rc = remark_counts(rows)
    ra = remark_counts([r for r in recs if r.get("kind") == "attention"])
    if rc or ra:
        lines += ["## What ollie-derive said (layers, derive=True)", "",
                  "Remarks of the `ftuner` logger at compile time, alike ones counted together (figures as N).", ""]
        if rc:
            lines += ["At the conv-family layers:", ""] + [f"- {n} x `{k}`" for k, n in rc] + [""]
        if ra:
            lines += ["At the attention blocks (each compiled once):", ""] + [f"- {n} x `{k}`" for k, n in ra] + [""]
    lines += ["## Layers", "", *layer_table(recs), ""]
    if any(r.get("kind") == "attention" for r in recs):
        lines += ["## Attention (not convolutions; not in the geomean)", "", *layer_table(recs, ("attention",)), ""]
    if fails or bad:
        lines += ["## Failures and mismatches", ""]
        for r in fails:
            for k in ("error", "compile_error_underived", "compile_error_derived"):
                if r.get(k):
                    lines.append(f"- {r.get('name', r.get('model'))}: {k}: `{r[k][:1000]}`")
        for r in bad:
            lines.append(f"- {r.get('name', r.get('model'))}: outputs differ from eager beyond the tolerance "
                         f"(max rel. err underived {fmt(r.get('underived_rel_err'), '.2e')}, "
                         f"derived {fmt(r.get('derived_rel_err'), '.2e')})")
        lines.append("")
    (pathlib.Path(out_dir) / "summary.md").write_text("\n".join(lines))
    return agg


# ---------------------------------------------------------------------------------------
# Measuring.


def cpu_name():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        info = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in out.splitlines() if ":" in line)}
        fam, model = info.get("CPU family", "?"), info.get("Model", "?")
        known = CPU_NAMES.get((fam, model))
        return (f"{info.get('Model name', '?')}" + (f", {known}" if known else "")
                + f" (family {fam}, model {model}), {info.get('CPU(s)', '?')} cores")
    except OSError:
        return platform.processor()


def git_commit():
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "?"
    except OSError:
        return "?"


class Capture:
    """The `ftuner` logger's messages while a compile runs."""

    def __init__(self):
        import logging

        self.lines = []
        outer = self

        class H(logging.Handler):
            def emit(self, rec):
                outer.lines.append(rec.getMessage())

        lg = logging.getLogger("ftuner")
        lg.setLevel(logging.INFO)
        lg.propagate = False
        lg.addHandler(H())

    def take(self):
        out, self.lines = self.lines, []
        return out


def ollie_remarks(lines):
    """ollie-derive's remarks and warnings, first line each."""
    return [m.splitlines()[0] for m in lines if "ollie-derive" in m]


def contractions(cm):
    try:
        return [(e.get("kind"), tuple(e.get("operands", []))) for e in cm.explain()]
    except Exception:  # noqa: BLE001 - explain is optional information
        return []


def conv_backend(mod, x):
    import torch

    names = {int(v): k for k, v in torch._C._ConvBackend.__members__.items()}
    names.setdefault(9, "MkldnnTranspose")  # missing from the enum's members (PyTorch 2.x)
    try:
        transposed = isinstance(mod, torch.nn.ConvTranspose2d)
        b = torch._C._select_conv_backend(x, mod.weight, mod.bias, list(mod.stride), list(mod.padding),
                                          list(mod.dilation), transposed,
                                          list(mod.output_padding) if transposed else [0, 0], mod.groups, None)
        return names.get(int(b), str(b))
    except Exception as e:  # noqa: BLE001
        return f"? ({type(e).__name__})"


def scale(ref):
    """The largest magnitude of the reference outputs (errors are relative to it: MobileNetV2's
    outputs with random weights are ~1e-9)."""
    from models import leaves  # tools/bench/models.py (imports torch and ftuner)

    ls = leaves(ref)
    return max([1e-30] + [t.float().abs().max().item() for t in ls if t.numel()])


def alternate(fns, x, rounds, target_s, gap, warmup=2):
    """Median ms per call of each function, in rotating alternated rounds; also the rounds."""
    names = list(fns)
    est = {}
    for n in names:
        for _ in range(warmup):
            fns[n](*x)
        t = time.perf_counter()
        fns[n](*x)
        est[n] = time.perf_counter() - t
    calls = max(1, min(1000, round(target_s / max(statistics.median(est.values()), 1e-6))))
    per = {n: [] for n in names}
    for r in range(-1, rounds):  # round -1: a warm-up round, not kept
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            if gap:
                time.sleep(gap)
            t = time.perf_counter()
            for _ in range(calls):
                fns[n](*x)
            if r >= 0:
                per[n].append((time.perf_counter() - t) / calls * 1e3)
    return {n: statistics.median(v) for n, v in per.items()}, per, calls


def compile_both(module, example, dynamic_shapes, threads, cap):
    """{derive: CompiledModel or error text}, the remarks and compile seconds of each."""
    import ftuner

    out = {}
    for derive in (False, True):
        cap.take()
        t = time.perf_counter()
        try:
            cm = ftuner.compile(module, example, dynamic_shapes=dynamic_shapes, threads=threads, derive=derive)
            out[derive] = (cm, ollie_remarks(cap.take()), time.perf_counter() - t)
        except Exception as e:  # noqa: BLE001 - a compile error is a finding: recorded, not hidden
            msg = f"{type(e).__name__}: {e}".strip()
            out[derive] = (None, ollie_remarks(cap.take()), msg[:4000])
    return out


def measure(rec, module, x, compiled, args, tol):
    """Time eager and both compilations on input x; fill rec."""
    import torch
    from models import max_err  # tools/bench/models.py

    def eager(*a):
        with torch.no_grad():
            return module(*a)

    with torch.no_grad():
        ref = module(*x)
    s = scale(ref)
    fns = {"eager": eager}
    for derive, key in ((False, "underived"), (True, "derived")):
        cm, remarks, third = compiled[derive]
        rec[f"remarks_{key}"] = remarks
        if cm is None:
            rec[f"compile_error_{key}"] = third
            continue
        rec[f"compile_s_{key}"] = round(third, 3)
        try:
            err = max_err(cm(*x), ref)
        except Exception as e:  # noqa: BLE001
            rec[f"run_error_{key}"] = f"{type(e).__name__}: {e}"[:2000]
            continue
        rec[f"{key}_err"] = err
        rec[f"{key}_rel_err"] = err / s
        fns[key] = cm
    rec["max_abs_eager"] = s
    rec["tolerance"] = tol * s
    rec["ok"] = all(rec.get(f"{k}_err", 0.0) <= tol * s for k in ("underived", "derived"))
    med, per, calls = alternate(fns, x, args.rounds, args.target_ms / 1e3, args.gap)
    for k, v in med.items():
        rec[f"{k}_ms"] = v
        rec[f"{k}_rounds_ms"] = [round(t, 4) for t in per[k]]
    rec["calls_per_round"] = calls
    cu, cd = compiled[False][0], compiled[True][0]
    if cu is not None and cd is not None:
        a, b = contractions(cu), contractions(cd)
        rec["kinds_underived"] = [k for k, _ in a]
        rec["kinds_derived"] = [k for k, _ in b]
        rec["contractions"] = len(a)
        rec["changed"] = a != b
        rec["changed_contractions"] = (sum(1 for p, q in zip(a, b) if p != q) + abs(len(a) - len(b)))
    rec["ollie"] = ("derived" if rec.get("changed") else "kept (remark)" if rec.get("remarks_derived")
                    else "no remark")
    errs = [rec.get(k) for k in ("compile_error_underived", "compile_error_derived", "run_error_underived",
                                 "run_error_derived") if rec.get(k)]
    if errs:
        rec["error"] = errs[0]


def conv_configs(quick):
    """Distinct conv-family layers: {key: dict(config, uses={model: count})}, in model order."""
    import torch

    from ftuner import zoo

    found = {}
    for name in IMAGE_MODELS:
        case = zoo.get(name)

        def hook(m, inp, out, name=name):
            x = inp[0]
            t = isinstance(m, torch.nn.ConvTranspose2d)
            cfg = dict(transposed=t, cin=m.in_channels, cout=m.out_channels, k=tuple(m.kernel_size),
                       stride=tuple(m.stride), padding=tuple(m.padding), dilation=tuple(m.dilation), groups=m.groups,
                       bias=m.bias is not None, hw=tuple(x.shape[2:]),
                       output_padding=tuple(m.output_padding) if t else (0, 0))
            key = json.dumps(cfg, sort_keys=True)
            # Multiply-adds x 2 per image: each output (each input, transposed) times its taps.
            per = (x if t else out)[0].numel() * (m.out_channels if t else m.in_channels) // m.groups
            e = found.setdefault(key, dict(cfg=cfg, uses={}, flops=2 * per * m.kernel_size[0] * m.kernel_size[1]))
            e["uses"][name] = e["uses"].get(name, 0) + 1

        hs = [m.register_forward_hook(hook) for m in case.model.modules()
              if isinstance(m, (torch.nn.Conv2d, torch.nn.ConvTranspose2d))]
        with torch.no_grad():
            case.model(*(case.make(batch=1)))
        for h in hs:
            h.remove()
    layers = list(found.values())
    # The shipped dilated conv (../shared/inputs/dilated_conv.mlir).
    layers.append(dict(cfg=dict(transposed=False, cin=64, cout=64, k=(3, 3), stride=(1, 1), padding=(2, 2),
                                dilation=(2, 2), groups=1, bias=True, hw=(56, 56), output_padding=(0, 0)),
                       uses={}, also="../shared/inputs/dilated_conv.mlir", group="dilated example",
                       flops=2 * 64 * 56 * 56 * 64 * 9))
    for e in layers:
        c = e["cfg"]
        if "group" not in e:
            model = next(iter(e["uses"]))
            e["group"] = model + (" depthwise" if c["groups"] > 1 and c["groups"] == c["cin"] else "")
        if c["transposed"] and "dcgan" in e["uses"]:
            e["also"] = "examples/dcgan_generator.mlir"
        if (not c["transposed"] and c["cin"] == c["cout"] == 64 and c["k"] == (3, 3) and c["hw"] == (56, 56)
                and c["stride"] == (1, 1) and c["dilation"] == (1, 1) and c["groups"] == 1):
            e["also"] = "../shared/inputs/resnet_block.mlir x2"
        e["name"] = layer_name(c)
    if quick:
        keep = []
        for g in ("resnet50", "mobilenet_v2", "mobilenet_v2 depthwise"):
            gl = sorted((e for e in layers if e["group"] == g), key=lambda e: -e["flops"] * sum(e["uses"].values()))
            keep += gl[:3]
        keep += [e for e in layers if e["group"] in ("dcgan", "dilated example")]
        layers = [e for e in layers if any(e is k for k in keep)]
    return layers


def layer_name(c):
    k = "x".join(map(str, c["k"]))
    kind = "convT" if c["transposed"] else ("dwconv" if c["groups"] > 1 and c["groups"] == c["cin"] else "conv")
    parts = [f"{kind} {k}", f"s{c['stride'][0]}", f"p{c['padding'][0]}"]
    if c["dilation"] != (1, 1):
        parts.append(f"d{c['dilation'][0]}")
    parts.append(f"{c['cin']}->{c['cout']}")
    parts.append(f"@{c['hw'][0]}x{c['hw'][1]}")
    if c["bias"]:
        parts.append("bias")
    return " ".join(parts)


def build_conv(c):
    import torch

    if c["transposed"]:
        m = torch.nn.ConvTranspose2d(c["cin"], c["cout"], c["k"], c["stride"], c["padding"],
                                     output_padding=c["output_padding"], groups=c["groups"], bias=c["bias"],
                                     dilation=c["dilation"])
    else:
        m = torch.nn.Conv2d(c["cin"], c["cout"], c["k"], c["stride"], c["padding"], dilation=c["dilation"],
                            groups=c["groups"], bias=c["bias"])
    return m.eval()


def attention_modules():
    import torch

    from ftuner import zoo

    class First(torch.nn.Module):
        """An attention block's first output (the hidden states)."""

        def __init__(self, attn):
            super().__init__()
            self.attn = attn

        def forward(self, h):
            return self.attn(h)[0]

    out = []
    bert = zoo.get("bert").model
    out.append(("bert attention (BertAttention: QKV, softmax, output dense, LayerNorm)",
                First(bert.encoder.layer[0].attention).eval(), "bert"))
    gpt2 = zoo.get("gpt2").model
    out.append(("gpt2 attention (GPT2Attention: QKV, causal softmax, output projection)",
                First(gpt2.h[0].attn).eval(), "gpt2"))
    return out


def run_layers(args, cap, outf):
    import torch
    from torch.export import Dim

    layers = conv_configs(args.quick)
    print(f"{len(layers)} conv-family layers", flush=True)
    for i, e in enumerate(layers):
        c = e["cfg"]
        torch.manual_seed(i)
        mod = build_conv(c)
        x = torch.randn(args.batch, c["cin"], *c["hw"])
        example = (torch.randn(2, c["cin"], *c["hw"]),)
        rec = dict(kind="layer", family="conv", name=e["name"], group=e["group"], uses=e["uses"],
                   models=list(e["uses"]) or [e["group"]], count=sum(e["uses"].values()) or 1,
                   config={k: list(v) if isinstance(v, tuple) else v for k, v in c.items()}, batch=args.batch,
                   flops=e["flops"] * args.batch, eager_backend=conv_backend(mod, x))
        if e.get("also"):
            rec["also"] = e["also"]
        compiled = compile_both(mod, example, ({0: Dim("batch", min=1, max=64)},), args.threads, cap)
        measure_and_write(rec, mod, x, compiled, args, outf, f"[{i + 1}/{len(layers)}] {e['name']}")
        del compiled
    seqs = [128] if args.quick else args.seqs
    for name, mod, model in attention_modules()[: 1 if args.quick else None]:
        compiled = compile_both(mod, (torch.randn(1, 16, 768),), ({1: Dim("seq", min=2, max=512)},), args.threads, cap)
        for L in seqs:
            torch.manual_seed(L)
            x = torch.randn(1, L, 768)
            rec = dict(kind="attention", name=name, models=[model], uses={model: 12}, seq=L, batch=1)
            measure_and_write(rec, mod, x, compiled, args, outf, f"{name.split(' (')[0]} L={L}")
        del compiled


def measure_and_write(rec, mod, x, compiled, args, outf, label):
    """Measure layer `mod` on `x` into `rec` (an error recorded, not raised), write it as a
    JSON line and report it."""
    try:
        measure(rec, mod, (x,), compiled, args, args.tol)
    except Exception as ex:  # noqa: BLE001
        rec["error"] = f"{type(ex).__name__}: {ex}"[:2000]
        traceback.print_exc()
    outf.write(json.dumps(rec) + "\n")
    outf.flush()
    report_line(label, rec)


def report_line(label, rec):
    if timed(rec):
        what = ("derived " + ",".join(rec.get("kinds_derived", []))) if rec.get("changed") else "kept"
        print(f"{label}: eager {rec['eager_ms']:.3f}  underived {rec['underived_ms']:.3f}  derived "
              f"{rec['derived_ms']:.3f} ms  eager/derived {rec['eager_ms'] / rec['derived_ms']:.2f}  "
              f"derived/underived {rec['derived_ms'] / rec['underived_ms']:.2f}  [{what}]  "
              f"rel err {fmt(rec.get('derived_rel_err'), '.1e')}{'' if rec.get('ok', True) else ' MISMATCH'}", flush=True)
    else:
        print(f"{label}: ERROR {rec.get('error', '?')[:500]}", flush=True)


def run_e2e(args, cap, outf):
    from ftuner import zoo

    models = ["dcgan", "mobilenet_v2"] if args.quick else [m for m in args.e2e_models if m]
    for name in models:
        case = zoo.get(name)
        print(f"{name}: compiling (derive=False, True)", flush=True)
        compiled = compile_both(case.model, case.example, case.dynamic_shapes, args.threads, cap)
        if name in ("bert", "gpt2"):
            sizes = [{"seq": args.e2e_seq}]
        else:
            sizes = [{"batch": b} for b in ([1] if args.quick else args.e2e_batches)]
        for p in sizes:
            x = case.make(**p)
            rec = dict(kind="model", model=name, name=name, **p)
            try:
                measure(rec, case.model, x, compiled, args, args.tol_model)
            except Exception as ex:  # noqa: BLE001
                rec["error"] = f"{type(ex).__name__}: {ex}"[:2000]
                traceback.print_exc()
            # Remarks of a whole model are many; keep their counts by kind.
            for key in ("underived", "derived"):
                rs = rec.pop(f"remarks_{key}", [])
                counts = {}
                for m in rs:
                    k = normalise_remark(m)
                    counts[k] = counts.get(k, 0) + 1
                rec[f"remark_counts_{key}"] = counts
            outf.write(json.dumps(rec) + "\n")
            outf.flush()
            report_line(f"{name} {p}", rec)
        del compiled


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "docs" / "bench" / f"ollie-layers-{time.strftime('%Y-%m-%d')}"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1, help="batch the conv layers are timed at")
    ap.add_argument("--rounds", type=int, default=21, help="alternated rounds (at least 9; --quick: 9)")
    ap.add_argument("--target-ms", type=float, default=25.0, help="time of one system's block of calls per round")
    ap.add_argument("--gap", type=float, default=None,
                    help="idle seconds before each block (default 0 at one thread, 0.05 above: the previous "
                         "system's spinning thread-pool workers park)")
    ap.add_argument("--seqs", default="32,128,384", help="sequence lengths of the attention blocks")
    ap.add_argument("--e2e-models", default=",".join(E2E_MODELS))
    ap.add_argument("--e2e-batches", default="1,8", help="batches of the image models end to end")
    ap.add_argument("--e2e-seq", type=int, default=128, help="sequence length of BERT / GPT-2 end to end")
    ap.add_argument("--tol", type=float, default=1e-3, help="layers: largest max abs error / max |eager| that counts as agreeing")
    ap.add_argument("--tol-model", type=float, default=1e-2, help="whole models: the same")
    ap.add_argument("--quick", action="store_true",
                    help="a reduced set: 3 layers per ResNet-50 / MobileNetV2 group (the most work), the DCGAN "
                         "and dilated layers, BERT attention at 128, DCGAN and MobileNetV2 end to end at batch 1, "
                         "9 rounds")
    ap.add_argument("--no-layers", action="store_true")
    ap.add_argument("--no-e2e", action="store_true")
    ap.add_argument("--report-only", action="store_true", help="rewrite summary.md from results.jsonl")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    if args.report_only:
        agg = write_summary(out)
        print(bar_sentence(agg, load(out)[0].get("quick", False)))
        return
    if args.rounds < 9:
        ap.error("--rounds: at least 9")
    if args.quick:
        args.rounds = 9 if "--rounds" not in sys.argv else args.rounds
    args.seqs = [int(s) for s in args.seqs.split(",") if s]
    args.e2e_models = args.e2e_models.split(",")
    args.e2e_batches = [int(b) for b in args.e2e_batches.split(",") if b]
    if args.gap is None:
        args.gap = 0.05 if args.threads > 1 else 0.0

    import torch

    import ftuner

    torch.set_num_threads(args.threads)
    ftuner.set_num_threads(args.threads)
    cap = Capture()
    out.mkdir(parents=True, exist_ok=True)
    try:
        cmd_out = str(out.resolve().relative_to(ROOT))
    except ValueError:
        cmd_out = str(out)
    argv = [a for a in sys.argv[1:]]
    if "--out" not in argv and not any(a.startswith("--out=") for a in argv):
        argv += ["--out", cmd_out]
    cpu = cpu_name()
    onednn = re.search(r"MKL-DNN v([\d.]+)", torch.__config__.show())
    meta = dict(date=time.strftime("%Y-%m-%d"), cpu=cpu, threads=args.threads, batch=args.batch, rounds=args.rounds,
                target_ms=args.target_ms, gap=args.gap, quick=args.quick, torch=torch.__version__,
                onednn=onednn.group(1) if onednn else "?", python=platform.python_version(),
                commit=git_commit(),
                command="python tools/bench/ollie_layers.py " + " ".join(argv))
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"CPU: {cpu}; threads {args.threads}; writing {out}", flush=True)
    t0 = time.perf_counter()
    with open(out / "results.jsonl", "w") as outf:
        if not args.no_layers:
            run_layers(args, cap, outf)
        if not args.no_e2e:
            run_e2e(args, cap, outf)
    meta["seconds"] = round(time.perf_counter() - t0, 1)
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    agg = write_summary(out)
    print(bar_sentence(agg, args.quick))
    print(f"wrote {out / 'results.jsonl'}, {out / 'summary.md'} ({meta['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
