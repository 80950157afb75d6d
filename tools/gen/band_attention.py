#!/usr/bin/env python3
"""Write the attention scores of Longformer-style sliding-window attention as linalg on
tensors: query row i against the key rows i + d*(w - W), w in [0, 2W + 1), for a
batch (dynamic), heads, a sequence length and a head dim:

    scores[b, h, i, w] = sum_k Q[b, h, i, k] * K[b, h, i + d*(w - W), k]

(keys outside the sequence read as 0). Two functions: `@band_scores` (d = 1, one-sided
window W) and `@dilated_band_scores` (d = --dilation, window W / 2: Longformer's dilated
sliding window, which sees d times farther with half the keys).

The form is the one a frontend writes for a banded product with zero padding: a
`tensor.pad` of the keys by d*W rows on each side, then a `linalg.generic` reading the
padded keys at `i + d*w`. (Hugging Face's Longformer computes the same band as
overlapping chunks with `as_strided`, which torch-mlir does not export as linalg; its
sequence is padded to a multiple of the window, so the length is static per call.)
ollie-derive matches this product to a G2BMM (docs/ollie.md).

    python3 tools/gen/band_attention.py > examples/longformer_band_attention.mlir
    python3 tools/gen/band_attention.py --dynamic-seq > examples/longformer_band_attention_dynamic.mlir
"""

import argparse


def scores(name, heads, seq, dim, w, d):
    """`seq` None: a dynamic sequence length."""
    pad = d * w
    band = 2 * w + 1
    t = "?" if seq is None else seq
    tp = "?" if seq is None else seq + 2 * pad
    qt = f"tensor<?x{heads}x{t}x{dim}xf32>"
    pt = f"tensor<?x{heads}x{tp}x{dim}xf32>"
    ot = f"tensor<?x{heads}x{t}x{band}xf32>"
    sizes = "%b" if seq is not None else "%b, %t"
    seq_dim = "" if seq is not None else f"""
  %c2 = arith.constant 2 : index
  %t = tensor.dim %q, %c2 : {qt}"""
    wi = "w" if d == 1 else f"w * {d}"
    what = "sliding-window" if d == 1 else f"dilated ({d}) sliding-window"
    return f"""
// Scores of {what} attention: query i against keys i + {d}*(w - {w}), w in [0, {band}).
func.func @{name}(%q: {qt}, %k: {qt}) -> {ot} {{
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %b = tensor.dim %q, %c0 : {qt}{seq_dim}
  %kp = tensor.pad %k low[0, 0, {pad}, 0] high[0, 0, {pad}, 0] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %cst : f32
  }} : {qt} to {pt}
  %e = tensor.empty({sizes}) : {ot}
  %z = linalg.fill ins(%cst : f32) outs(%e : {ot}) -> {ot}
  %s = linalg.generic {{indexing_maps = [affine_map<(b, h, i, w, k) -> (b, h, i, k)>, affine_map<(b, h, i, w, k) -> (b, h, i + {wi}, k)>, affine_map<(b, h, i, w, k) -> (b, h, i, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}} ins(%q, %kp : {qt}, {pt}) outs(%z : {ot}) {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  }} -> {ot}
  return %s : {ot}
}}"""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--window", type=int, default=64, help="one-sided window W")
    p.add_argument("--dilation", type=int, default=4)
    p.add_argument("--dynamic-seq", action="store_true",
                   help="a dynamic sequence length (ollie-derive chunks it at run time)")
    a = p.parse_args()
    if min(a.heads, a.seq, a.dim, a.window, a.dilation) < 1 or a.window < 2:
        p.error("sizes must be positive and the window at least 2")
    seq_flag = " --dynamic-seq" if a.dynamic_seq else f" --seq {a.seq}"
    print("// Longformer-style banded attention scores (tools/gen/band_attention.py"
          f" --heads {a.heads}{seq_flag} --dim {a.dim} --window {a.window}"
          f" --dilation {a.dilation}).", end="")
    seq = None if a.dynamic_seq else a.seq
    print(scores("band_scores", a.heads, seq, a.dim, a.window, 1))
    print(scores("dilated_band_scores", a.heads, seq, a.dim, a.window // 2, a.dilation))


if __name__ == "__main__":
    main()
