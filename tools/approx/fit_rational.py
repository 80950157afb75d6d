"""Fit the rational approximations `approximate-math` uses for f32 `math.tanh` and `math.erf`.

    python tools/approx/fit_rational.py

Both functions are odd and saturate, so each is approximated on [0, c] as
`x * P(x^2) / Q(x^2)` (Q(0) = 1) with x clamped to [-c, c], where c is where the function
is within half an f32 ulp of 1 (tanh: 7.90, erf: 3.92). The fit is a linearized least
squares problem (Sanathanan-Koerner: weights 1 / |Q| of the previous iterate), then
Lawson reweighting toward the minimax error. The script prints the coefficients and the
maximum error of the approximation evaluated in f32 (Horner, as the pass emits it)
against the f64 functions, over [-10, 10]; crates/ftuner-transforms/src/math_approx.rs
holds the printed coefficients and its unit test checks the same bound.
"""

import math

import numpy as np


def fit(f, c, n_p, n_q, sk_iters=30, lawson_iters=200, n=20000):
    x = np.unique(np.concatenate([c * (1 - np.cos(np.linspace(0, np.pi / 2, n))), np.linspace(0, c, n)]))[1:]
    y, t = f(x), x * x
    q_prev, w = np.ones_like(x), np.ones_like(x)
    for it in range(sk_iters + lawson_iters):
        a = np.concatenate(
            [np.stack([x * t**i for i in range(n_p)], 1), np.stack([-y * t**j for j in range(1, n_q + 1)], 1)], 1
        )
        ww = w / np.abs(q_prev)
        sol, *_ = np.linalg.lstsq(a * ww[:, None], y * ww, rcond=None)
        p, q = sol[:n_p], np.concatenate([[1.0], sol[n_p:]])
        q_prev = sum(q[j] * t**j for j in range(n_q + 1))
        err = np.abs(x * sum(p[i] * t**i for i in range(n_p)) / q_prev - y)
        if it >= sk_iters:
            w = w * np.sqrt(err / err.max()) + 1e-12
            w /= w.max()
    return p, q


def eval_f32(p, q, xs, c):
    x = np.clip(xs.astype(np.float32), -c, c).astype(np.float32)
    t = x * x
    num, den = np.float32(p[-1]), np.float32(q[-1])
    for k in p[-2::-1]:
        num = (num * t + np.float32(k)).astype(np.float32)
    for k in q[-2::-1]:
        den = (den * t + np.float32(k)).astype(np.float32)
    return np.clip(x * num / den, -1, 1).astype(np.float32)


def main():
    erf = np.vectorize(math.erf)
    for name, f, c, (n_p, n_q) in [("tanh", np.tanh, 7.90, (5, 4)), ("erf", erf, 3.92, (6, 5))]:
        p, q = fit(f, c, n_p, n_q)
        xs = np.linspace(-10, 10, 400001)
        ref = f(xs.astype(np.float32).astype(np.float64))
        err = np.abs(eval_f32(p, q, xs, c).astype(np.float64) - ref).max()
        print(f"{name}: clamp {c}, f32 max abs error {err:.2e}")
        print("  P:", ", ".join(repr(float(v)) for v in p))
        print("  Q:", ", ".join(repr(float(v)) for v in q))


if __name__ == "__main__":
    main()
