"""Fit the polynomial `approximate-math` uses for f32 `math.exp`.

    python tools/approx/fit_exp.py

`exp(x) = 2^n * exp(r)` with `n = round(x / ln 2)` and `r = x - n ln 2` in
`[-ln2/2, ln2/2]`; there `exp(r) = 1 + r + r^2 q(r)` with `q` of degree 5, fitted by
weighted least squares on Chebyshev nodes with Lawson reweighting toward the minimax
relative error. The script prints q's coefficients (constant term first) and the worst
relative error of the whole approximation evaluated in f32 as the pass emits it (fused
multiply-adds, the Cody-Waite split of ln 2) against the f64 exponential over
[-87, 88]; crates/ftuner-transforms/src/math_approx.rs holds the printed coefficients
and its unit test checks the same bound.
"""

import math

import numpy as np

HALF = math.log(2) / 2
LN2_HI, LN2_LO = 0.693359375, math.log(2) - 0.693359375


def fit(deg=5, n=4000, iters=300):
    r = HALF * np.cos(np.linspace(0, np.pi, n))
    r = r[np.abs(r) > 1e-6]
    y = (np.expm1(r) - r) / (r * r)
    # relative error of exp: |r^2 (q - y)| / exp(r)
    scale = r * r / np.exp(r)
    a = np.stack([r**i for i in range(deg + 1)], 1)
    w = np.ones_like(r)
    for _ in range(iters):
        sol, *_ = np.linalg.lstsq(a * (w * scale)[:, None], y * w * scale, rcond=None)
        err = np.abs(a @ sol - y) * scale
        w = w * np.sqrt(err / err.max()) + 1e-12
        w /= w.max()
    return sol


def fma32(a, b, c):
    # The product of two f32 is exact in f64; the sum rounds to f64 then to f32 (a true
    # fused multiply-add rounds once: this differs from it in rare last-bit cases).
    return np.float32(np.float64(a) * np.float64(b) + np.float64(c))


def exp_f32(x, q):
    f = np.float32
    x = f(min(max(f(x), f(-104.0)), f(88.8)))
    magic = f(12582912.0)
    t = fma32(x, f(1.4426950408889634), magic)
    nf = f(t - magic)
    n = int(nf)
    r = fma32(nf, f(-LN2_HI), x)
    r = fma32(nf, f(-LN2_LO), r)
    acc = f(q[-1])
    for c in q[-2::-1]:
        acc = fma32(acc, r, f(c))
    y = fma32(f(r * r), acc, r)
    y = f(y + f(1.0))
    n1 = n >> 1
    n2 = n - n1
    return f(f(y * f(2.0**n1)) * f(2.0**n2))


def main():
    q = fit()
    print("q =", [float(c) for c in q])
    qs = [np.float32(c) for c in q]
    worst = 0.0
    for x in np.linspace(-87.0, 88.0, 400001):
        x32 = np.float32(x)
        exact = math.exp(float(x32))
        worst = max(worst, abs(float(exp_f32(x32, qs)) - exact) / exact)
    print(f"worst relative error over [-87, 88]: {worst:.3e}")


if __name__ == "__main__":
    main()
