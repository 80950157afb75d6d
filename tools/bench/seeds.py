"""Write docs/seeds.md: each seed paper's claim beside our measurement of the same kind of
work, from the result files the experiments leave in docs/bench/.

    python tools/bench/seeds.py [--transfer docs/bench/transfer-models-DATE]
        [--tuning-time docs/bench/tuning-time-DATE.jsonl] [--ollie docs/bench/ollie-layers-DATE]
        [--out docs/seeds.md]

Defaults: the newest `docs/bench/transfer-models-*` and `docs/bench/ollie-layers-*`
directories and `docs/bench/tuning-time-*.jsonl` file. Nothing is measured here; the commands that
measure are in the page.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "docs" / "bench"


def newest(pattern):
    c = sorted(BENCH.glob(pattern))
    return c[-1] if c else None


def jsonl(p: Path):
    return [json.loads(l) for l in p.read_text().splitlines() if l.strip()]


def rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(ROOT))
    except ValueError:
        return str(p)


# Per paper: title, claim, the command that measures ours.
PAPERS = {
    "transfer": ("Transfer-Tuning (Gibson and Cano, PACT 2022)",
                 "Schedules Ansor tuned for one model's kernels, reused on another model's kernels of the "
                 "same class, reach up to 88.41% (49.13% on average) of the speedup of tuning each model fully, "
                 "with 6.5x less search (10.8x on an edge CPU), over 11 DNNs.",
                 "python tools/bench/transfer_models.py OUT --e2e"),
    "ollie": ("OLLIE (derivation-based tensor program optimizer, OSDI 2022)",
              "Rewriting tensor-algebra expressions by derivation speeds up 7 DNNs by up to 2.73x (1.46x on "
              "average) over existing optimizers.",
              "python tools/bench/ollie_layers.py --out OUT"),
    "ftuner": ("FTuner (uKernel patching without search)",
               "Dynamic-shape programs built from analytically chosen uKernels, patched to cover any shape, "
               "match vendor libraries end to end while compiling about two orders of magnitude faster than "
               "auto-tuning (../shared/data/ftuner: Table V, Fig. 13).",
               "python tools/bench/tuning_time.py --out FILE"),
}


def heading(paper: str, result) -> list:
    """A paper's section up to our measurement: its title, its claim, or that ours is missing."""
    title, claim, command = PAPERS[paper]
    out = [f"## {title}", "", f"**Claim.** {claim}", ""]
    if result is None:
        out += [f"Not measured yet: `{command}`.", ""]
    return out


def transfer_section(d: Path | None) -> str:
    out = heading("transfer", d)
    if d is None:
        return "\n".join(out)
    meta = json.loads((d / "meta.json").read_text()) if (d / "meta.json").exists() else {}
    out += ["**Ours.** The five whole models of `ftuner.zoo` (random weights), every kernel as `patch-ukernels`",
            "meets it in the compiled model; a full search per model (`ftuner-tune tune`, "
            f"{meta.get('trials', '?')} trials per kernel), then each model tuned from the *other four* models'",
            f"databases only (`ftuner-tune transfer --from`, at most {meta.get('candidates', '?')} candidates per kernel),",
            "both timed side by side with the analytic default; a speedup inside the noise band (the default",
            "against a second build of itself) counts as none. "
            f"CPU: {meta.get('cpu', 'see the run')}; one thread.", "",
            (d / "summary.md").read_text().strip(), ""]
    others = other_runs(d, meta.get("cpu"))
    if others:
        out += ["Other runs of this experiment on the same CPU (the spread one run does not show): "
                + "; ".join(others) + ".", ""]
    out += [f"Reproduce: `{meta.get('command', 'python tools/bench/transfer_models.py OUT --e2e')}` "
            f"(results: `{rel(d)}/`).", ""]
    return "\n".join(out)


def other_runs(d: Path, cpu) -> list:
    """The other transfer-models runs on `cpu`: each one's mean fraction line, by folder."""
    out = []
    for o in sorted(BENCH.glob("transfer-models-*")):
        if o.resolve() == d.resolve() or not (o / "meta.json").exists() or not (o / "summary.md").exists():
            continue
        if json.loads((o / "meta.json").read_text()).get("cpu") != cpu:
            continue
        line = next((l for l in (o / "summary.md").read_text().splitlines() if l.startswith("Mean fraction")), None)
        if line:
            out.append(f"`{rel(o)}`: {line.removeprefix('Mean fraction over the models with a full-search gain beyond noise: ').rstrip('.')}")
    return out


def tuning_section(p: Path | None) -> str:
    out = heading("ftuner", p)
    if p is None:
        return "\n".join(out)
    rows = jsonl(p)
    head = rows[0]
    kernels = [r for r in rows if "kernel" in r]
    models = [r for r in rows if "model" in r]
    out += [f"**Ours.** TVM MetaSchedule ({head.get('trials')} trials per kernel, one core, its XGBoost cost model) "
            "against ftuner's compile (no search) on representative kernels, both results timed in turn, "
            f"one thread, medians. CPU: {head.get('cpu')}.", "",
            "| kernel | TVM tuning s | ftuner compile s (ftuner's passes; with torch.export + torch-mlir) | "
            "tuning / compile | TVM ms | ftuner ms | TVM / ftuner time |",
            "|---|---|---|---|---|---|---|"]
    for r in kernels:
        out.append(f"| {r['what']} | {r['tvm_tune_s']:.0f} | {r['ftuner_compile_s']:.2f} ({r['ftuner_total_s']:.2f}) | "
                   f"{r['tvm_tune_s'] / r['ftuner_total_s']:.0f}x | {r['tvm_ms']:.3f} | {r['ftuner_ms']:.3f} | "
                   f"{r['tvm_ms'] / r['ftuner_ms']:.2f} |")
    if models:
        out += ["", "Whole models: ftuner compiles each once for every shape; a search tuner tunes each distinct kernel",
                "per shape. Its time is extrapolated from the seconds per trial measured above (their mean) x trials x distinct",
                "kernels x shapes (5 sequence buckets for BERT/GPT-2, 6 batch buckets for the image models) — a",
                "lower bound: MetaSchedule's own examples spend 1,000-20,000 trials per model.", "",
                "| model | ftuner compile s (all of it) | distinct kernels | shapes | search tuner, extrapolated s | ratio |",
                "|---|---|---|---|---|---|"]
        per_trial = sum(r["tvm_s_per_trial"] for r in kernels) / max(len(kernels), 1)
        trials = head.get("trials") or 0
        for m in models:
            k = m.get("distinct_kernels")
            est = per_trial * trials * k * m["shapes"] if k else None
            ratio = f"{est / m['ftuner_compile_total_s']:.0f}x" if est else "-"
            out.append(f"| {m['model']} | {m['ftuner_compile_total_s']:.1f} | {m.get('distinct_kernels') or '-'} | "
                       f"{m['shapes']} | {est or 0:.0f} | {ratio} |")
    if kernels:
        ratios = [r["tvm_tune_s"] / r["ftuner_total_s"] for r in kernels]
        lat = [r["tvm_ms"] / r["ftuner_ms"] for r in kernels]
        word = {True: "met", False: "not met"}
        out += ["", f"Issue 26's bar, per kernel: compile >= 100x faster than the search {word[min(ratios) >= 100]} "
                f"({min(ratios):.0f}-{max(ratios):.0f}x, ftuner's whole compile including torch.export and torch-mlir); "
                f"latency within 5% of the tuned result or better {word[min(lat) >= 0.95]} "
                f"(TVM time / ftuner time {min(lat):.2f}-{max(lat):.2f}). TVM tuned the one shape it is timed at; ftuner "
                "compiled the kernel once with its dynamic dim (rows, or batch) and serves every size."]
    out += ["", f"Reproduce: `python tools/bench/tuning_time.py --trials {head.get('trials')} --mlir-dir OUT --out FILE` "
            f"(results: `{rel(p)}`).", ""]
    return "\n".join(out)


OLLIE_SO_FAR = """docs/ollie.md measures `ollie-derive` against our own direct loops and our implicit-GEMM
uKernels on the shipped layers (dilated and transposed convolutions, banded attention)."""


def ollie_section(d: Path | None) -> str:
    """OLLIE's section from a `tools/bench/ollie_layers.py` results directory."""
    out = heading("ollie", d)
    if d is None:
        out += ["**Ours, so far.** " + OLLIE_SO_FAR, ""]
        return "\n".join(out)
    sys.path.insert(0, str(ROOT / "tools" / "bench"))
    import ollie_layers as ol  # its readers import no torch

    meta, recs = ol.load(d)
    rows = ol.conv_rows(recs)
    agg = ol.aggregate(rows)
    timed = [r for r in rows if ol.timed(r)]
    changed = [r for r in timed if r.get("changed")]
    kept = [r for r in timed if not r.get("changed")]
    g_changed = ol.geomean([r["eager_ms"] / r["derived_ms"] for r in changed])
    g_kept = ol.geomean([r["eager_ms"] / r["derived_ms"] for r in kept])
    gain_changed = ol.geomean([r["underived_ms"] / r["derived_ms"] for r in changed])
    out += ["**Ours.** `ftuner.compile(model, ..., derive=True)` (OLLIE's derivations: `ollie-derive`, then the "
            "usual pipeline) against `derive=False` and against PyTorch eager (oneDNN) on every distinct "
            "convolution-family layer of the zoo's image models (ResNet-50; MobileNetV2, depthwise included; the "
            "DCGAN generator's transposed convs, the shapes of examples/dcgan_generator.mlir) and the shipped "
            "dilated conv (../shared/inputs/dilated_conv.mlir), each layer compiled on its own with a dynamic batch, "
            f"random weights, timed at batch {meta.get('batch', '?')}; then the five whole models. The three "
            f"systems run in alternated rounds ({meta.get('rounds', '?')}, each starting at the next system), "
            f"medians; PyTorch and ftuner both on {meta.get('threads', '?')} thread(s). CPU: {meta.get('cpu', '?')}; "
            f"PyTorch {meta.get('torch', '?')}, oneDNN {meta.get('onednn', '?')}. The machine's times drift by "
            "10-15% between runs; only ratios within one run count.", "",
            *ol.group_table(recs), "",
            ol.bar_sentence(agg, meta.get("quick", False)), "",
            f"`ollie-derive` rewrote {len(changed)} of the {len(timed)} timed layers "
            f"({', '.join(sorted({r['group'] for r in changed})) or 'none'}): there derivation itself gains "
            f"{ol.fmt(gain_changed)}x over ftuner's own lowering (geomean underived / derived) and the derived "
            f"layers run {ol.fmt(g_changed)}x eager's speed (geomean). It kept the other {len(kept)} as they were "
            "(its remarks below); their ratio to eager, "
            f"{ol.fmt(g_kept)}x geomean, is ftuner's lowering against oneDNN, not derivation."
            + ("" if not ol.noise_band(rows) else
               " Where no contraction changed, derived / underived ranges {:.2f}-{:.2f}: this run's noise."
               .format(*ol.noise_band(rows)[:2])), ""]
    if ol.silent_sentence(rows):
        out += [ol.silent_sentence(rows), ""]
    rc = ol.remark_counts(rows)
    if rc:
        out += ["What `ollie-derive` said at the conv-family layers it left alone (the `ftuner` logger's remarks, "
                "figures as N):", ""]
        out += [f"- {n} x `{k}`" for k, n in rc]
        out += [""]
    att = [r for r in recs if r.get("kind") == "attention" and ol.timed(r)]
    if att:
        parts = []
        for r in att:
            parts.append(f"{r['models'][0]} L={r['seq']}: eager / derived {r['eager_ms'] / r['derived_ms']:.2f}x, "
                         f"derived / underived {r['derived_ms'] / r['underived_ms']:.2f}"
                         + ("" if not r.get("changed") else " (derived)"))
        out += ["Attention blocks (BERT, GPT-2; not convolutions, outside the bar): " + "; ".join(parts) + ".", ""]
    if any(r.get("kind") == "model" for r in recs):
        out += ["End to end, the five zoo models (gain of derivation = underived / derived, same run):", "",
                *ol.e2e_table(recs), ""]
        if ol.e2e_noise_sentence(recs):
            out += [ol.e2e_noise_sentence(recs), ""]
    fails = [r for r in recs if r.get("error")]
    if fails:
        out += ["Failures: " + "; ".join(f"{r.get('name')}: `{r['error'][:300]}`" for r in fails) + ".", ""]
    earlier = []
    for o in sorted(BENCH.glob("ollie-layers-*")):
        if o.resolve() == d.resolve() or not (o / "results.jsonl").exists():
            continue
        om, orecs = ol.load(o)
        oagg = ol.aggregate(ol.conv_rows(orecs))
        g = oagg["eager_over_derived"]
        if g:
            earlier.append(f"`{rel(o)}` ({om.get('cpu', '?')}, commit {om.get('commit', '?')}): {ol.fmt(g)}x")
    if earlier:
        out += ["Earlier runs (geomean eager / derived over the conv-family layers; other CPUs and builds): "
                + "; ".join(earlier) + ".", ""]
    out += ["Also: " + OLLIE_SO_FAR, "",
            f"Reproduce: `{meta.get('command', 'python tools/bench/ollie_layers.py')}` "
            f"(results: `{rel(d)}/`, the per-layer table in its summary.md).", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transfer", default="")
    ap.add_argument("--tuning-time", default="")
    ap.add_argument("--ollie", default="", help="a tools/bench/ollie_layers.py results directory")
    ap.add_argument("--out", default=str(ROOT / "docs" / "seeds.md"))
    a = ap.parse_args()
    t = Path(a.transfer) if a.transfer else newest("transfer-models-*")
    tt = Path(a.tuning_time) if a.tuning_time else newest("tuning-time-*.jsonl")
    ol = Path(a.ollie) if a.ollie else newest("ollie-layers-*")
    text = "\n".join([
        "# The seed papers' claims, measured on ftuner",
        "",
        "Generated by `python tools/bench/seeds.py` from the result files in docs/bench/; every figure",
        "is a ratio of times taken in the same run. Each section says what was measured, how, and the",
        "command that measures it again.",
        "",
        transfer_section(t),
        tuning_section(tt),
        ollie_section(ol),
    ])
    Path(a.out).write_text(text)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
