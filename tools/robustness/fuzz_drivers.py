#!/usr/bin/env python3
"""Driver-level mutation fuzzing: seeded mutations of every example and lit input, run
through ftuner-opt (several pass pipelines), ftuner-run (JIT and interpreter, at random
small shapes; and JIT with --check against the reference interpreter) and ftuner-translate.
Every run must end in exit 0 or 1: a signal, an abort, another exit code or a Rust panic
is a crash, and the input that caused it is kept. With --check, a result the oracle
rejects or a program the compiled code ran but the interpreter refuses is a silent
failure, kept and counted the same way (a failure of the run with --fail-on-silent).
Two outcomes of --check are counted apart and are not failures: a check the oracle says it
cannot make (integers of more than 64 bits), and a
program the interpreter refuses only for undefined behaviour (dims that disagree at run
time, a poison value) in ops that canonicalization removes — the interpreter runs the
canonicalized program — so the compiled code had nothing left to check.

    python3 tools/robustness/fuzz_drivers.py --cases 2000 --seed 1       # what CI runs
    python3 tools/robustness/fuzz_drivers.py --cases 100000 --seed 7 --jobs 16 --fail-on-silent
    python3 tools/robustness/fuzz_drivers.py --cases 50000 --start 50000 --seed 7 ...   # in parts

Exit 1 when any case crashed (the inputs are written under --out with the command that
ran them); a case that runs past --timeout is reported as a hang and is a failure too
unless --allow-hangs is given.
"""
import argparse
import concurrent.futures
import os
import pathlib
import random
import re
import shlex
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

PIPELINES = [
    "builtin.module(canonicalize,cse)",
    "builtin.module(canonicalize,cse,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)",
    "builtin.module(linalg-fuse-elementwise-ops,bufferize)",
    "builtin.module(bufferize,convert-linalg-to-loops,convert-parallel-loops-to-runtime,convert-to-llvm)",
    "builtin.module(patch-ukernels{target=skylake-avx512},lower-ukernels,bufferize,convert-linalg-to-loops,convert-parallel-loops-to-runtime,convert-to-llvm)",
]

# Tokens a mutation may insert: syntax, types, numbers at the edges of their ranges.
TOKENS = [
    "{", "}", "(", ")", "[", "]", "<", ">", ":", ",", "=", "->", "%0", "%arg0", "^bb0", "?",
    "index", "i1", "i8", "i64", "f16", "f32", "tensor<?xf32>", "tensor<?x?xf32>",
    "memref<?xf32>", "vector<16xf32>", "0", "-1", "1", "7", "64", "9223372036854775807",
    "-9223372036854775808", "18446744073709551616", "1e308", "nan", "0x7FC00000",
    "affine_map<(d0) -> (d0 mod 3)>", "affine_map<(d0, d1) -> (d1, d0)>", "dense<1.0>",
    "#linalg.iterator_type<parallel>", "\"", "loc(unknown)", "// -----", "\n",
    "linalg.generic", "tensor.extract_slice", "tensor.pad", "scf.for", "arith.divsi",
]
NUMBER = re.compile(r"-?\b\d+\b")


def mutate(text, rng):
    lines = text.split("\n")
    # Half the cases: one change that keeps the syntax (a number, a dim), so that the
    # input gets past the parser into the verifier, the passes and the compiled code.
    gentle = rng.random() < 0.5
    for _ in range(1 if gentle else rng.randint(1, 4)):
        kind = rng.choice([0, 7]) if gentle else rng.randrange(8)
        if not lines:
            lines = [""]
        i = rng.randrange(len(lines))
        if kind == 0:  # a number at an edge
            nums = list(NUMBER.finditer(lines[i]))
            if nums:
                m = rng.choice(nums)
                new = rng.choice(["0", "-1", "1", "3", "64", "100000", "9223372036854775807",
                                  "-9223372036854775808", str(rng.randint(-5, 4096))])
                lines[i] = lines[i][: m.start()] + new + lines[i][m.end():]
        elif kind == 1:  # delete a line
            del lines[i]
        elif kind == 2:  # duplicate a line
            lines.insert(i, lines[i])
        elif kind == 3:  # swap two lines
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 4 and lines[i]:  # flip a character
            p = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:p] + rng.choice("{}()[]<>:,=%?x0123456789 ") + lines[i][p + 1:]
        elif kind == 5:  # insert a token
            p = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:p] + rng.choice(TOKENS) + lines[i][p:]
        elif kind == 6:  # cut the file short
            lines = lines[:i]
        else:  # a type's dims changed
            lines[i] = re.sub(r"(\d+|\?)x", lambda m: rng.choice(["?x", "0x", "1x", "3x", m.group(0)]), lines[i], count=1)
    return "\n".join(lines)


def shapes_for(text, rng):
    """--shape flags for the first function's tensor/memref arguments: random small dims."""
    m = re.search(r"func\.func\s+@[\w.$]+\s*\(([^)]*)\)", text)
    if not m:
        return []
    flags = []
    for k, ty in enumerate(re.findall(r"(?:tensor|memref)<([^>]*)>", m.group(1))):
        dims = ty.split("x")[:-1]
        if not dims:
            continue
        shape = "x".join(d if d.isdigit() else str(rng.choice([0, 1, 2, 3, 5, 8, 17])) for d in dims)
        flags.append(f"--shape={k}={shape}")
    return flags


def seeds():
    files = []
    for d in ["examples", "lit-tests"]:
        for p in sorted((ROOT / d).rglob("*.mlir")):
            try:
                text = p.read_text()
            except (UnicodeDecodeError, OSError):
                continue
            if len(text) > 64_000:
                continue
            # Lit files hold several cases: each chunk is a seed.
            for chunk in text.split("// -----"):
                if "func.func" in chunk or "module" in chunk:
                    files.append((str(p.relative_to(ROOT)), chunk))
    return files


def command(bins, path, text, rng):
    tool = rng.choice(["opt", "opt", "run-jit", "run-interp", "translate", "run-check"])
    if tool == "opt":
        return [str(bins / "ftuner-opt"), path, f"--pass-pipeline={rng.choice(PIPELINES)}", "-o", os.devnull]
    if tool == "translate":
        return [str(bins / "ftuner-translate"), path, "--emit=llvm", "-o", os.devnull]
    backend = "interp" if tool == "run-interp" else "jit"
    cmd = [str(bins / "ftuner-run"), path, f"--backend={backend}", *shapes_for(text, rng)]
    if tool == "run-check":
        cmd.append("--check")
    if rng.random() < 0.5:
        cmd.append(f"--pass-pipeline={rng.choice(PIPELINES[:3])}")
    return cmd


def verdict(proc):
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode < 0:
        return f"signal {-proc.returncode}"
    if proc.returncode not in (0, 1):
        return f"exit {proc.returncode}"
    if "panicked at" in err or "RUST_BACKTRACE" in err:
        return "panic"
    # --check: the compiled code returned a result the oracle disagrees with, or ran
    # where the oracle refuses the program (an out-of-bounds access the JIT did not see).
    # (A reference that compares nothing — undefined contents read, NaN everywhere — is
    # the input's doing, not a wrong result.)
    if "ftuner-run: check failed:" in err and "compares nothing" not in err:
        return "silent: wrong result"
    if "the compiled code ran but the reference interpreter failed" in err:
        return "silent: ran where the interpreter refuses"
    # The program is outside the oracle's model (integers of more than 64 bits): the check
    # failed saying so; counted apart, neither a finding nor a pass.
    if "ftuner-run: error: cannot check:" in err:
        return "unchecked"
    return None


def removed_by_canonicalize(cmd, timeout):
    """Whether the interpreter runs the program once canonicalized: the refusal came from
    undefined behaviour at these shapes (dims that disagree, a poison value) in an op that
    folding or dead-code elimination removed, so the compiled code had nothing to check."""
    interp = [a for a in cmd if a != "--check" and not a.startswith(("--backend=", "--pass-pipeline="))]
    interp += ["--backend=interp", "--pass-pipeline=builtin.module(canonicalize,cse)"]
    try:
        proc = subprocess.run(interp, capture_output=True, timeout=timeout,
                              env=dict(os.environ, RUST_BACKTRACE="0"))
    except subprocess.TimeoutExpired:
        return False
    return proc.returncode == 0


def run_case(args, bins, out, n, seed_files):
    rng = random.Random(args.seed * 1_000_003 + n)
    origin, text = rng.choice(seed_files)
    text = mutate(text, rng)
    path = out / f"case-{n}.mlir"
    path.write_text(text)
    cmd = command(bins, str(path), text, rng)
    env = dict(os.environ, FTUNER_NUM_THREADS="1", RUST_BACKTRACE="0")
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=args.timeout, env=env)
        bad = verdict(proc)
        if bad == "silent: ran where the interpreter refuses" and removed_by_canonicalize(cmd, args.timeout):
            bad = "ub removed"
    except subprocess.TimeoutExpired:
        bad = "hang"
    if bad is None:
        path.unlink()
        return None
    (out / f"case-{n}.cmd").write_text(shlex.join(cmd) + f"\n# from {origin}\n")
    return (n, bad, origin, cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    # Cases are numbered and each is a function of (seed, number): a long run can be done
    # in parts, cases [start, start + cases).
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--allow-hangs", action="store_true")
    # Silent failures are kept and counted, and fail the run only when asked (the long
    # runs of the must-show do).
    ap.add_argument("--fail-on-silent", action="store_true")
    ap.add_argument("--bin-dir", default=str(ROOT / "target" / os.environ.get("FTUNER_PROFILE", "release")))
    ap.add_argument("--out", default=str(ROOT / "target" / "fuzz-drivers"))
    args = ap.parse_args()
    bins = pathlib.Path(args.bin_dir)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seed_files = seeds()
    t0 = time.time()
    found = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        cases = range(args.start, args.start + args.cases)
        for n, r in zip(cases, pool.map(lambda n: run_case(args, bins, out, n, seed_files), cases)):
            if r:
                found.append(r)
                print(f"case {r[0]}: {r[1]} ({r[2]}): {shlex.join(r[3])}", flush=True)
            # Results come in order: every case up to n is done (a stopped run resumes
            # with --start n + 1).
            if (n + 1) % 1000 == 0:
                print(f"progress: cases {args.start}..{n} done, {time.time() - t0:.0f} s", flush=True)
    silent = [f for f in found if f[1].startswith("silent")]
    apart = [f for f in found if f[1] in ("unchecked", "ub removed")]
    hangs = [f for f in found if f[1] == "hang"]
    crashes = [f for f in found if f not in silent and f not in apart and f not in hangs]
    counts = {k: sum(f[1] == k for f in apart) for k in ("unchecked", "ub removed")}
    print(f"fuzz_drivers: {args.cases} cases (from {args.start}) from {len(seed_files)} seeds (seed {args.seed}) in "
          f"{time.time() - t0:.0f} s: {len(crashes)} crashes, {len(silent)} silent failures, "
          f"{len(hangs)} hangs past {args.timeout:.0f} s; not failures: {counts['unchecked']} checks "
          f"the oracle cannot make (integers of more than 64 bits), {counts['ub removed']} inputs "
          f"whose undefined behaviour canonicalization removed"
          + (f"; inputs in {out}" if found else ""))
    failed = crashes or (hangs and not args.allow_hangs) or (silent and args.fail_on_silent)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
