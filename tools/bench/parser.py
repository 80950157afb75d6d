#!/usr/bin/env python3
"""Parse + verify + print (generic form) of a generated module of N ops, ftuner-opt
against mlir-opt-22 on the same file in the same run. Reports the median wall time of
each over R runs, their ratio, and peak memory (max RSS).

  python3 tools/bench/parser.py [--ops 1000000] [--runs 5] [--ftuner target/release/ftuner-opt]
"""
import argparse, os, random, resource, statistics, subprocess, sys, tempfile, time

def generate(path, n_ops, seed=1):
    rng = random.Random(seed)
    per_func = 1000
    with open(path, "w") as f:
        f.write("#map = affine_map<(d0, d1) -> (d0, d1)>\n")
        written = 0
        fi = 0
        while written < n_ops:
            f.write(f"func.func @f{fi}(%a: f32, %b: f32, %i: i64, %t: tensor<?x768xf32>) -> f32 {{\n")
            fvals = ["%a", "%b"]
            ivals = ["%i"]
            f.write("  %c0 = arith.constant 0 : index\n")
            written += 2  # func + constant
            k = 0
            while k < per_func - 4 and written < n_ops:
                r = rng.random()
                if r < 0.35:
                    x, y = rng.choice(fvals), rng.choice(fvals)
                    op = rng.choice(["addf", "mulf", "subf", "maximumf"])
                    f.write(f"  %v{k} = arith.{op} {x}, {y} : f32\n")
                    fvals.append(f"%v{k}")
                elif r < 0.55:
                    x, y = rng.choice(ivals), rng.choice(ivals)
                    op = rng.choice(["addi", "muli", "xori"])
                    f.write(f"  %v{k} = arith.{op} {x}, {y} : i64\n")
                    ivals.append(f"%v{k}")
                elif r < 0.7:
                    f.write(f"  %v{k} = arith.constant {rng.uniform(-4, 4):.6e} : f32\n")
                    fvals.append(f"%v{k}")
                elif r < 0.8:
                    x, y = rng.choice(fvals), rng.choice(fvals)
                    f.write(f"  %p{k} = arith.cmpf ogt, {x}, {y} : f32\n")
                    f.write(f"  %v{k} = arith.select %p{k}, {x}, {y} : f32\n")
                    fvals.append(f"%v{k}")
                    written += 1
                    k += 1
                elif r < 0.9:
                    f.write(f"  %v{k} = tensor.dim %t, %c0 : tensor<?x768xf32>\n")
                else:
                    x = rng.choice(fvals)
                    f.write(f"  %v{k} = math.exp {x} : f32\n")
                    fvals.append(f"%v{k}")
                written += 1
                k += 1
            f.write(f"  return {fvals[-1]} : f32\n}}\n")
            written += 1
            fi += 1
    return written

RUNNER = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
dt = time.perf_counter() - t
print(p.returncode, dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""

def measure(cmd):
    out = subprocess.run([sys.executable, "-c", RUNNER] + cmd, capture_output=True, text=True, check=True).stdout.split()
    rc, dt, rss_kb = int(out[0]), float(out[1]), int(out[2])
    if rc != 0:
        sys.exit(f"command failed ({rc}): {' '.join(cmd)}")
    return dt, rss_kb / 1024.0

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ftuner", default="target/release/ftuner-opt")
    ap.add_argument("--mlir-opt", default="mlir-opt-22")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.mlir")
        n = generate(path, args.ops)
        size = os.path.getsize(path) / 1e6
        print(f"module: {n} ops, {size:.1f} MB")
        ours = [args.ftuner, "--mlir-print-op-generic", path, "-o", "/dev/null"]
        theirs = [args.mlir_opt, "--mlir-disable-threading", "--mlir-print-op-generic", path, "-o", "/dev/null"]
        t_o, t_t, m_o, m_t = [], [], [], []
        for _ in range(args.runs):  # alternate so drift hits both
            a, ma = measure(ours)
            b, mb = measure(theirs)
            t_o.append(a); m_o.append(ma); t_t.append(b); m_t.append(mb)
        mo, mt = statistics.median(t_o), statistics.median(t_t)
        print(f"ftuner-opt : median {mo:.3f} s, peak {max(m_o):.0f} MB")
        print(f"mlir-opt-22: median {mt:.3f} s, peak {max(m_t):.0f} MB")
        print(f"time ratio ftuner/mlir-opt = {mo / mt:.2f}, memory ratio = {max(m_o) / max(m_t):.2f}")

if __name__ == "__main__":
    main()
