#!/usr/bin/env python3
"""Write a transformer layer with a dynamic sequence length (and optionally a dynamic batch)
as linalg on tensors, in the form torch-mlir exports (`output_type="linalg-on-tensors"`):
one op per PyTorch op, no fusion, layer norms with f64 variance, weights as function
arguments.

* `gpt2`: a GPT-2 (small) block (below).
* `bert --batch dynamic`: a BERT-base encoder layer (post-LN, erf GELU, `Linear`
  weights [out, in] transposed before each matmul, 1/8 scaling, no mask) whose hidden
  state is `?x?x768` — what torch-mlir cannot export correctly today (it casts the
  merged `B*T` dim to `?x1x768`; ../shared/inputs/README.md), written as a correct
  export would be: the two dims collapsed into one.

torch-mlir is not available on these machines, so this is written by hand after the
structure of ../shared/inputs/bert_layer_dynamic.mlir and Hugging Face's `GPT2Block` in
eval mode, batch 1, no past key/values:

    h   = x + c_proj(attn(ln_1(x)))           # attn: causal, 12 heads of 64
    out = h + mlp_c_proj(gelu_new(c_fc(ln_2(h))))

`Conv1D` weights are [in, out] (`addmm(bias, x, W)`: a matmul without a transpose, the
bias added by a broadcasting generic). The causal mask is built from T with
`linalg.index` (as `torch.ones(T, T).tril()` / `is_causal` exports do) and applied with a
select against the dtype's lowest value; GELU is the tanh form with `math.fpowi`.

    python3 tools/gen/transformer.py gpt2 > examples/gpt2_block_dynamic.mlir
    python3 tools/gen/transformer.py bert --batch dynamic > examples/bert_layer_batch_seq_dynamic.mlir
"""

import argparse
import sys

H, HEADS, D, FF = 768, 12, 64, 3072
out = []
n = [0]

def fresh(prefix="v"):
    n[0] += 1
    return f"%{prefix}{n[0]}"


def emit(line):
    out.append("    " + line)


def generic(ins, in_types, out_init, out_type, maps, iters, body, res_type=None):
    """A linalg.generic; `body(args)` returns (lines, yielded value)."""
    r = fresh()
    args = [f"%in{i}" for i in range(len(ins))] + ["%out"]
    elem_types = [t.split("x")[-1].rstrip(">") for t in in_types] + [out_type.split("x")[-1].rstrip(">")]
    ins_part = f"ins({', '.join(ins)} : {', '.join(in_types)}) " if ins else ""
    emit(f"{r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{', '.join(repr(i).replace(chr(39), chr(34)) for i in iters)}]}} {ins_part}outs({out_init} : {out_type}) {{")
    emit(f"^bb0({', '.join(f'{a}: {t}' for a, t in zip(args, elem_types))}):")
    lines, y = body(args)
    for l in lines:
        emit("  " + l)
    emit(f"  linalg.yield {y} : {elem_types[-1]}")
    emit(f"}} -> {res_type or out_type}")
    return r


# A [1, T, W] activation (batch_dynamic makes the 1 a `?` in the finished text).
T3 = "tensor<1x?x{}xf32>"


def empty(ty, sizes="%dim"):
    """A tensor.empty of `ty` with the dynamic `sizes`."""
    e = fresh("e")
    emit(f"{e} = tensor.empty({sizes}) : {ty}")
    return e


def fill(e, ty, value, elem="f32"):
    """`e` (of `ty`) filled with `value` (an SSA constant of `elem`)."""
    f = fresh()
    emit(f"{f} = linalg.fill ins({value} : {elem}) outs({e} : {ty}) -> {ty}")
    return f


def ew3(a, b, op, width=H, b_map="#map5"):
    """Elementwise a (1x?xW) op b on 1x?xW, b through b_map."""
    e = empty(T3.format(width))
    btype = {"#map5": T3.format(width), "#map6": "tensor<1x?x1xf32>", "#map7": f"tensor<{width}xf32>"}[b_map]
    return generic([a, b], [T3.format(width), btype], e, T3.format(width), ["#map5", b_map, "#map5"],
                   ["parallel"] * 3, lambda g: ([f"%r = {op} {g[0]}, {g[1]} : f32"], "%r"))


def layer_norm(x, w, b):
    """torch-mlir's aten.native_layer_norm: mean in f32, variance in f64, eps 1e-5."""
    e64 = empty("tensor<1x?x768xf64>")
    x64 = generic([x], [T3.format(H)], e64, "tensor<1x?x768xf64>", ["#map5", "#map5"], ["parallel"] * 3,
                  lambda g: ([f"%r = arith.extf {g[0]} : f32 to f64"], "%r"))
    s64e = empty("tensor<1x?x1xf64>")
    s64 = fill(s64e, "tensor<1x?x1xf64>", "%cst_f64_0", "f64")
    sum64 = generic([x64], ["tensor<1x?x768xf64>"], s64, "tensor<1x?x1xf64>", ["#map5", "#map6"],
                    ["parallel", "parallel", "reduction"], lambda g: ([f"%r = arith.addf {g[0]}, {g[1]} : f64"], "%r"))
    mean64 = generic([sum64], ["tensor<1x?x1xf64>"], s64e, "tensor<1x?x1xf64>", ["#map5", "#map5"], ["parallel"] * 3,
                     lambda g: ([f"%r = arith.divf {g[0]}, %cst_f64_768 : f64"], "%r"))
    cen = generic([x64, mean64], ["tensor<1x?x768xf64>", "tensor<1x?x1xf64>"], e64, "tensor<1x?x768xf64>",
                  ["#map5", "#map6", "#map5"], ["parallel"] * 3, lambda g: ([f"%r = arith.subf {g[0]}, {g[1]} : f64"], "%r"))
    sq = generic([cen, cen], ["tensor<1x?x768xf64>", "tensor<1x?x768xf64>"], e64, "tensor<1x?x768xf64>",
                 ["#map5", "#map5", "#map5"], ["parallel"] * 3, lambda g: ([f"%r = arith.mulf {g[0]}, {g[1]} : f64"], "%r"))
    vs = generic([sq], ["tensor<1x?x768xf64>"], s64, "tensor<1x?x1xf64>", ["#map5", "#map6"],
                 ["parallel", "parallel", "reduction"], lambda g: ([f"%r = arith.addf {g[0]}, {g[1]} : f64"], "%r"))
    var64 = generic([vs], ["tensor<1x?x1xf64>"], s64e, "tensor<1x?x1xf64>", ["#map5", "#map5"], ["parallel"] * 3,
                    lambda g: ([f"%r = arith.divf {g[0]}, %cst_f64_768 : f64"], "%r"))
    e1 = empty("tensor<1x?x1xf32>")
    var = generic([var64], ["tensor<1x?x1xf64>"], e1, "tensor<1x?x1xf32>", ["#map5", "#map5"], ["parallel"] * 3,
                  lambda g: ([f"%r = arith.truncf {g[0]} : f64 to f32"], "%r"))
    z1 = fill(e1, "tensor<1x?x1xf32>", "%cst_0")
    s32 = generic([x], [T3.format(H)], z1, "tensor<1x?x1xf32>", ["#map5", "#map6"],
                  ["parallel", "parallel", "reduction"], lambda g: ([f"%r = arith.addf {g[0]}, {g[1]} : f32"], "%r"))
    mean = generic([s32], ["tensor<1x?x1xf32>"], e1, "tensor<1x?x1xf32>", ["#map5", "#map5"], ["parallel"] * 3,
                   lambda g: ([f"%r = arith.divf {g[0]}, %cst_768 : f32"], "%r"))
    rstd = generic([var], ["tensor<1x?x1xf32>"], e1, "tensor<1x?x1xf32>", ["#map5", "#map5"], ["parallel"] * 3,
                   lambda g: (["%eps = arith.truncf %cst_eps : f64 to f32", f"%a = arith.addf {g[0]}, %eps : f32",
                               "%r = math.rsqrt %a : f32"], "%r"))
    c = ew3(x, mean, "arith.subf", b_map="#map6")
    nrm = ew3(c, rstd, "arith.mulf", b_map="#map6")
    sc = ew3(nrm, w, "arith.mulf", b_map="#map7")
    return ew3(sc, b, "arith.addf", b_map="#map7")


def linear(x, width_in, w, b, width_out):
    """x (1x?xIN) . W (INxOUT) + b through a 2-d matmul: GPT-2's Conv1D (W an argument),
    BERT's Linear (W its weight transposed)."""
    c = fresh("collapsed")
    emit(f"{c} = tensor.collapse_shape {x} [[0, 1], [2]] : {T3.format(width_in)} into tensor<?x{width_in}xf32>")
    e = empty(f"tensor<?x{width_out}xf32>")
    f = fill(e, f"tensor<?x{width_out}xf32>", "%cst_0")
    mm = fresh()
    emit(f"{mm} = linalg.matmul ins({c}, {w} : tensor<?x{width_in}xf32>, tensor<{width_in}x{width_out}xf32>) outs({f} : tensor<?x{width_out}xf32>) -> tensor<?x{width_out}xf32>")
    bb = generic([b], [f"tensor<{width_out}xf32>"], e, f"tensor<?x{width_out}xf32>", ["#map", "#map1"],
                 ["parallel"] * 2, lambda g: ([], g[0]))
    emit('cf.assert %true, "mismatched size for broadcast"')
    s = generic([mm, bb], [f"tensor<?x{width_out}xf32>"] * 2, e, f"tensor<?x{width_out}xf32>", ["#map1"] * 3,
                ["parallel"] * 2, lambda g: ([f"%r = arith.addf {g[0]}, {g[1]} : f32"], "%r"))
    x3 = fresh("expanded")
    emit(f"{x3} = tensor.expand_shape {s} [[0, 1], [2]] output_shape [1, %dim, {width_out}] : tensor<?x{width_out}xf32> into {T3.format(width_out)}")
    return x3


def heads(x, via_reshape):
    """1x?x768 -> 1x12x?x64 (view, then permute(0, 2, 1, 3))."""
    v = fresh("view")
    if via_reshape:
        emit(f"{v} = tensor.reshape {x}(%from_elements_heads) : ({T3.format(H)}, tensor<4xi64>) -> tensor<1x?x12x64xf32>")
    else:
        emit(f"{v} = tensor.expand_shape {x} [[0], [1], [2, 3]] output_shape [1, %dim, 12, 64] : {T3.format(H)} into tensor<1x?x12x64xf32>")
    e = empty("tensor<1x12x?x64xf32>")
    t = fresh("transposed")
    emit(f"{t} = linalg.transpose ins({v} : tensor<1x?x12x64xf32>) outs({e} : tensor<1x12x?x64xf32>) permutation = [0, 2, 1, 3] ")
    return t


def attention(qh, kh, vh, causal):
    """softmax(q k^T scaled [+ causal mask]) v over 12 heads; returns 1x?x768."""
    ek = empty("tensor<1x12x64x?xf32>")
    kt = fresh("transposed")
    emit(f"{kt} = linalg.transpose ins({kh} : tensor<1x12x?x64xf32>) outs({ek} : tensor<1x12x64x?xf32>) permutation = [0, 1, 3, 2] ")
    qc, ktc = fresh("collapsed"), fresh("collapsed")
    emit(f"{qc} = tensor.collapse_shape {qh} [[0, 1], [2], [3]] : tensor<1x12x?x64xf32> into tensor<12x?x64xf32>")
    emit(f"{ktc} = tensor.collapse_shape {kt} [[0, 1], [2], [3]] : tensor<1x12x64x?xf32> into tensor<12x64x?xf32>")
    es = empty("tensor<12x?x?xf32>", "%dim, %dim")
    fs = fill(es, "tensor<12x?x?xf32>", "%cst_0")
    sc = fresh()
    emit(f"{sc} = linalg.batch_matmul ins({qc}, {ktc} : tensor<12x?x64xf32>, tensor<12x64x?xf32>) outs({fs} : tensor<12x?x?xf32>) -> tensor<12x?x?xf32>")
    s4 = fresh("expanded")
    emit(f"{s4} = tensor.expand_shape {sc} [[0, 1], [2], [3]] output_shape [1, 12, %dim, %dim] : tensor<12x?x?xf32> into tensor<1x12x?x?xf32>")
    e4 = empty("tensor<1x12x?x?xf32>", "%dim, %dim")
    T4 = "tensor<1x12x?x?xf32>"
    # GPT-2 divides by sqrt(64); BERT multiplies by 1/8.
    scale = "arith.divf {}, %cst_8" if causal else "arith.mulf {}, %cst_eighth"
    scaled = generic([s4], [T4], e4, T4, ["#map2", "#map2"], ["parallel"] * 4,
                     lambda g: (["%r = " + scale.format(g[0]) + " : f32"], "%r"))
    masked = scaled
    if causal:
        # where(tril(ones(T, T)), w, finfo.min)
        masked = generic([scaled], [T4], e4, T4, ["#map2", "#map2"], ["parallel"] * 4,
                         lambda g: (["%i = linalg.index 2 : index", "%j = linalg.index 3 : index",
                                     "%keep = arith.cmpi sle, %j, %i : index",
                                     f"%r = arith.select %keep, {g[0]}, %cst_min : f32"], "%r"))
    # softmax(dim=-1), as torch-mlir decomposes it: max (with its index), x - max, exp, sum, divide.
    em = empty("tensor<1x12x?xf32>")
    fm = fill(em, "tensor<1x12x?xf32>", "%cst_ninf")
    ei = empty("tensor<1x12x?xi64>")
    fi = fill(ei, "tensor<1x12x?xi64>", "%c0_i64", "i64")
    mx = fresh()
    emit(f"{mx}:2 = linalg.generic {{indexing_maps = [#map2, #map4, #map4], iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"reduction\"]}} ins({masked} : {T4}) outs({fm}, {fi} : tensor<1x12x?xf32>, tensor<1x12x?xi64>) {{")
    emit("^bb0(%in: f32, %out: f32, %out_1: i64):")
    emit("  %i = linalg.index 3 : index")
    emit("  %ii = arith.index_cast %i : index to i64")
    emit("  %m = arith.maximumf %in, %out : f32")
    emit("  %gt = arith.cmpf ogt, %in, %out : f32")
    emit("  %s = arith.select %gt, %ii, %out_1 : i64")
    emit("  linalg.yield %m, %s : f32, i64")
    emit("} -> (tensor<1x12x?xf32>, tensor<1x12x?xi64>)")
    mxe = fresh("expanded")
    emit(f"{mxe} = tensor.expand_shape {mx}#0 [[0], [1], [2, 3]] output_shape [1, 12, %dim, 1] : tensor<1x12x?xf32> into tensor<1x12x?x1xf32>")
    sub = generic([masked, mxe], [T4, "tensor<1x12x?x1xf32>"], e4, T4, ["#map2", "#map3", "#map2"], ["parallel"] * 4,
                  lambda g: ([f"%r = arith.subf {g[0]}, {g[1]} : f32"], "%r"))
    ex = generic([sub], [T4], e4, T4, ["#map2", "#map2"], ["parallel"] * 4,
                 lambda g: ([f"%r = math.exp {g[0]} : f32"], "%r"))
    e41 = empty("tensor<1x12x?x1xf32>")
    f41 = fill(e41, "tensor<1x12x?x1xf32>", "%cst_0")
    sm = generic([ex], [T4], f41, "tensor<1x12x?x1xf32>", ["#map2", "#map3"],
                 ["parallel", "parallel", "parallel", "reduction"], lambda g: ([f"%r = arith.addf {g[0]}, {g[1]} : f32"], "%r"))
    probs = generic([ex, sm], [T4, "tensor<1x12x?x1xf32>"], e4, T4, ["#map2", "#map3", "#map2"], ["parallel"] * 4,
                    lambda g: ([f"%r = arith.divf {g[0]}, {g[1]} : f32"], "%r"))
    pc, vc = fresh("collapsed"), fresh("collapsed")
    emit(f"{pc} = tensor.collapse_shape {probs} [[0, 1], [2], [3]] : {T4} into tensor<12x?x?xf32>")
    emit(f"{vc} = tensor.collapse_shape {vh} [[0, 1], [2], [3]] : tensor<1x12x?x64xf32> into tensor<12x?x64xf32>")
    ea = empty("tensor<12x?x64xf32>")
    fa = fill(ea, "tensor<12x?x64xf32>", "%cst_0")
    av = fresh()
    emit(f"{av} = linalg.batch_matmul ins({pc}, {vc} : tensor<12x?x?xf32>, tensor<12x?x64xf32>) outs({fa} : tensor<12x?x64xf32>) -> tensor<12x?x64xf32>")
    av4 = fresh("expanded")
    emit(f"{av4} = tensor.expand_shape {av} [[0, 1], [2], [3]] output_shape [1, 12, %dim, 64] : tensor<12x?x64xf32> into tensor<1x12x?x64xf32>")
    et = empty("tensor<1x?x12x64xf32>")
    avt = fresh("transposed")
    emit(f"{avt} = linalg.transpose ins({av4} : tensor<1x12x?x64xf32>) outs({et} : tensor<1x?x12x64xf32>) permutation = [0, 2, 1, 3] ")
    merged = fresh("collapsed")
    emit(f"{merged} = tensor.collapse_shape {avt} [[0], [1], [2, 3]] : tensor<1x?x12x64xf32> into {T3.format(H)}")
    return merged


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=["gpt2", "bert"])
    ap.add_argument("--batch", choices=["1", "dynamic"], default="1")
    a = ap.parse_args()
    model, batch = a.model, a.batch
    emit("%true = arith.constant true")
    emit("%c0 = arith.constant 0 : index")
    emit("%c1 = arith.constant 1 : index")
    emit("%c0_i64 = arith.constant 0 : i64")
    emit("%c1_i64 = arith.constant 1 : i64")
    emit("%c3_i64 = arith.constant 3 : i64")
    emit("%c12_i64 = arith.constant 12 : i64")
    emit("%c64_i64 = arith.constant 64 : i64")
    emit("%cst_0 = arith.constant 0.000000e+00 : f32")
    emit("%cst_f64_0 = arith.constant 0.000000e+00 : f64")
    emit("%cst_f64_768 = arith.constant 7.680000e+02 : f64")
    emit("%cst_768 = arith.constant 7.680000e+02 : f32")
    emit("%cst_8 = arith.constant 8.000000e+00 : f32")
    emit("%cst_eighth = arith.constant 1.250000e-01 : f32")
    emit("%cst_sqrt2 = arith.constant 1.41421354 : f32")
    emit("%cst_min = arith.constant -3.40282347E+38 : f32")
    emit("%cst_ninf = arith.constant 0xFF800000 : f32")
    emit("%cst_half = arith.constant 5.000000e-01 : f32")
    emit("%cst_one = arith.constant 1.000000e+00 : f32")
    emit("%cst_k = arith.constant 4.471500e-02 : f32")
    emit("%cst_s = arith.constant 0.797884583 : f32")
    emit("%dim = tensor.dim %arg0, %c1 : tensor<1x?x768xf32>")
    emit("%T_i64 = arith.index_cast %dim : index to i64")
    emit("%from_elements_heads = tensor.from_elements %c1_i64, %T_i64, %c12_i64, %c64_i64 : tensor<4xi64>")
    if model == "gpt2":
        emit("%cst_eps = arith.constant 1.0000000000000001E-5 : f64")
        gpt2_body()
        args = [("1x?x768", "hidden"), ("768", "ln_1.weight"), ("768", "ln_1.bias"), ("768x2304", "attn.c_attn.weight"),
                ("2304", "attn.c_attn.bias"), ("768x768", "attn.c_proj.weight"), ("768", "attn.c_proj.bias"),
                ("768", "ln_2.weight"), ("768", "ln_2.bias"), ("768x3072", "mlp.c_fc.weight"), ("3072", "mlp.c_fc.bias"),
                ("3072x768", "mlp.c_proj.weight"), ("768", "mlp.c_proj.bias")]
        what, name = "A GPT-2 (small) block", "gpt2_block_dynamic"
    else:
        emit("%cst_eps = arith.constant 9.9999999999999998E-13 : f64")
        bert_body()
        args = [("1x?x768", "hidden"), ("768x768", "attention.self.query.weight"), ("768", "attention.self.query.bias"),
                ("768x768", "attention.self.key.weight"), ("768", "attention.self.key.bias"),
                ("768x768", "attention.self.value.weight"), ("768", "attention.self.value.bias"),
                ("768x768", "attention.output.dense.weight"), ("768", "attention.output.dense.bias"),
                ("768", "attention.output.LayerNorm.weight"), ("768", "attention.output.LayerNorm.bias"),
                ("3072x768", "intermediate.dense.weight"), ("3072", "intermediate.dense.bias"),
                ("768x3072", "output.dense.weight"), ("768", "output.dense.bias"),
                ("768", "output.LayerNorm.weight"), ("768", "output.LayerNorm.bias")]
        what, name = "A BERT-base encoder layer", "bert_layer_dynamic"
    dims = "sequence length dynamic"
    if batch == "dynamic":
        dims = "batch and sequence length dynamic"
        name = name.replace("_dynamic", "_batch_seq_dynamic")
    sig = ", ".join(f"%arg{i}: tensor<{s}xf32>" for i, (s, _) in enumerate(args))
    text = [
        "#map = affine_map<(d0, d1) -> (d1)>",
        "#map1 = affine_map<(d0, d1) -> (d0, d1)>",
        "#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>",
        "#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>",
        "#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>",
        "#map5 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>",
        "#map6 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>",
        "#map7 = affine_map<(d0, d1, d2) -> (d2)>",
        "module {",
        f"  func.func @{name}({sig}) -> tensor<1x?x768xf32> {{",
    ] + out + ["  }", "}"]
    if batch == "dynamic":
        text = batch_dynamic(text)
    print(f"// {what}, {dims}, written as torch-mlir exports it (generated by")
    print(f"// `python3 tools/gen/transformer.py {model}{' --batch dynamic' if batch == 'dynamic' else ''}`; not an export: see that script).")
    print("// Arguments: " + ", ".join(f"%arg{k} {a}" for k, (_, a) in enumerate(args)) + ".")
    print("\n".join(text))


def gpt2_body():
    """Pre-LN: h = x + c_proj(attn(ln_1(x))); out = h + c_proj(gelu_new(c_fc(ln_2(h))))."""
    h1 = layer_norm("%arg0", "%arg1", "%arg2")
    qkv = linear(h1, H, "%arg3", "%arg4", 3 * H)
    q, k, v = (fresh("extracted_slice") for _ in range(3))
    for name, off in ((q, 0), (k, H), (v, 2 * H)):
        emit(f"{name} = tensor.extract_slice {qkv}[0, 0, {off}] [1, %dim, 768] [1, 1, 1] : {T3.format(3 * H)} to {T3.format(H)}")
    qh = heads(q, False)
    kh = heads(k, True)
    vh = heads(v, True)
    merged = attention(qh, kh, vh, causal=True)
    attn = linear(merged, H, "%arg5", "%arg6", H)
    h = ew3(attn, "%arg0", "arith.addf")
    h2 = layer_norm(h, "%arg7", "%arg8")
    fc = linear(h2, H, "%arg9", "%arg10", FF)
    # gelu_new: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), op by op.
    cube = unary(fc, FF, lambda g: ([f"%r = math.fpowi {g[0]}, %c3_i64 : f32, i64"], "%r"))
    kc = unary(cube, FF, lambda g: ([f"%r = arith.mulf {g[0]}, %cst_k : f32"], "%r"))
    inner = ew3(fc, kc, "arith.addf", width=FF)
    sc2 = unary(inner, FF, lambda g: ([f"%r = arith.mulf {g[0]}, %cst_s : f32"], "%r"))
    th = unary(sc2, FF, lambda g: ([f"%r = math.tanh {g[0]} : f32"], "%r"))
    one = unary(th, FF, lambda g: ([f"%r = arith.addf {g[0]}, %cst_one : f32"], "%r"))
    half = unary(fc, FF, lambda g: ([f"%r = arith.mulf {g[0]}, %cst_half : f32"], "%r"))
    gelu = ew3(half, one, "arith.mulf", width=FF)
    mp = linear(gelu, FF, "%arg11", "%arg12", H)
    res = ew3(mp, h, "arith.addf")
    emit(f"return {res} : {T3.format(H)}")


def bert_body():
    """Post-LN: h = LN(x + dense(attn(x))); out = LN(h + dense(gelu(dense(h))))."""
    q = linear("%arg0", H, transpose_weight("%arg1", H, H), "%arg2", H)
    k = linear("%arg0", H, transpose_weight("%arg3", H, H), "%arg4", H)
    v = linear("%arg0", H, transpose_weight("%arg5", H, H), "%arg6", H)
    merged = attention(heads(q, False), heads(k, True), heads(v, True), causal=False)
    o = linear(merged, H, transpose_weight("%arg7", H, H), "%arg8", H)
    h = layer_norm(ew3(o, "%arg0", "arith.addf"), "%arg9", "%arg10")
    f1 = linear(h, H, transpose_weight("%arg11", FF, H), "%arg12", FF)
    # GELU (erf): x * 0.5 * (1 + erf(x / sqrt(2))), one generic as the export has it.
    gelu = unary(f1, FF, lambda g: ([f"%ga = arith.divf {g[0]}, %cst_sqrt2 : f32", "%gb = math.erf %ga : f32",
                                     "%gc = arith.addf %gb, %cst_one : f32", "%gd = arith.mulf %gc, %cst_half : f32",
                                     f"%r = arith.mulf {g[0]}, %gd : f32"], "%r"))
    f2 = linear(gelu, FF, transpose_weight("%arg13", H, FF), "%arg14", H)
    out = layer_norm(ew3(f2, h, "arith.addf"), "%arg15", "%arg16")
    emit(f"return {out} : {T3.format(H)}")


def transpose_weight(w, rows, cols):
    """A `Linear` weight [rows = out, cols = in] transposed to [in, out] (linalg.transpose)."""
    e = empty(f"tensor<{cols}x{rows}xf32>", "")
    t = fresh("transposed")
    emit(f"{t} = linalg.transpose ins({w} : tensor<{rows}x{cols}xf32>) outs({e} : tensor<{cols}x{rows}xf32>) permutation = [1, 0] ")
    return t


def unary(x, width, body):
    e = empty(T3.format(width))
    return generic([x], [T3.format(width)], e, T3.format(width), ["#map5", "#map5"], ["parallel"] * 3, body)


def batch_dynamic(lines):
    """The batch dim made dynamic in the generated text: every [1, T, ...] activation
    becomes [B, T, ...], the flattened [T, W] ones [B*T, W], the 12 head batches B*12;
    each tensor.empty gets the sizes of its `?`s and each static 1 of a batch position
    (reshape vectors, expand_shape sizes, slices) becomes B."""
    import re
    out = []
    for l in lines:
        if l.startswith("  func.func @"):
            l = l.replace("%arg0: tensor<1x?x768xf32>", "%arg0: tensor<?x?x768xf32>").replace(
                "-> tensor<1x?x768xf32> {", "-> tensor<?x?x768xf32> {")
            out.append(l)
            continue
        l = l.replace("tensor<1x?x", "tensor<?x?x").replace("tensor<1x12x", "tensor<?x12x")
        l = l.replace("tensor<12x?x", "tensor<?x?x").replace("tensor<12x64x?", "tensor<?x64x?")
        l = l.replace("output_shape [1, ", "output_shape [%b, ").replace("[1, %dim, 768] [1, 1, 1]", "[%b, %dim, 768] [1, 1, 1]")
        l = l.replace("tensor.from_elements %c1_i64, %T_i64", "tensor.from_elements %B_i64, %T_i64")
        l = l.replace("%dim = tensor.dim %arg0, %c1 : tensor<?x?x768xf32>",
                      "%b = tensor.dim %arg0, %c0 : tensor<?x?x768xf32>\n    %dim = tensor.dim %arg0, %c1 : tensor<?x?x768xf32>\n"
                      "    %bt = arith.muli %b, %dim : index\n    %c12 = arith.constant 12 : index\n"
                      "    %bh = arith.muli %b, %c12 : index\n    %B_i64 = arith.index_cast %b : index to i64")
        m = re.search(r"tensor\.empty\(([^)]*)\) : tensor<([^>]*)>", l)
        if m:
            dims = m.group(2).split("x")[:-1]
            sizes = []
            for pos, d in enumerate(dims):
                if d != "?":
                    continue
                if pos > 0:
                    sizes.append("%dim")
                elif len(dims) == 2:
                    sizes.append("%bt")
                elif dims[1] == "12":
                    sizes.append("%b")
                elif len(dims) == 3 and (dims[2] in ("64", "?") or dims[1] == "64"):
                    sizes.append("%bh")
                else:
                    sizes.append("%b")
            l = l[:m.start(1)] + ", ".join(sizes) + l[m.end(1):]
        out.append(l)
    return out


if __name__ == "__main__":
    sys.exit(main())
