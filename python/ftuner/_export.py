"""PyTorch model -> linalg-on-tensors MLIR, with the weights as function arguments.

`torch.export` (non-strict) traces the model with `torch.export.Dim` dynamic dims;
torch-mlir's FX importer lowers the program to linalg on tensors. Around them:

* Parameters and buffers are lifted into arguments through a wrapper that calls the
  model with `torch.func.functional_call`, so the exported function takes
  `(*inputs, *weights)`: the weights stay out of the IR text, and torch-mlir's
  "Could not find state mapping for buffer" on non-persistent buffers (Hugging Face
  BERT's `position_ids`) cannot happen.
* No decomposition pass runs between torch.export and the importer where the traced
  program holds only ops known to import as they are (`_IMPORTED_AS_IS`): torch's
  `run_decompositions` traces the whole program a second time (BERT-base: 515 -> 1316
  nodes, 3.3-5.5 s of a ~11 s compile on an AMD EPYC Zen 5), while torch-mlir's own
  lowering to linalg decomposes the ops it meets in C++ (layer_norm, gelu, linear,
  batch_norm, convolutions: 0.2-0.3 s). The in-place ops such a trace keeps (`relu_`,
  `add_`) are rewritten into their functional forms first (`_functionalize_inplace`).
  Two calls are written out while torch.export traces the model (`_trace_forms`, a
  `TorchFunctionMode`), because torch-mlir lowers them to its `tm_tensor` dialect, which
  ftuner does not read:
  - `scaled_dot_product_attention` as its math (`softmax(q kᵀ * scale + mask) v`, the
    causal and boolean masks as -inf, grouped heads repeated, a row whose every key is
    masked zero as torch's `_safe_softmax` gives it; f32 without dropout only, else the
    call is left to torch);
  - `cumsum` as a masked sum (`out[i] = sum_j (j <= i) * x[j]`), quadratic in the
    scanned dim, which is cheap where models use it (masks and position ids of a
    sequence).
* Any other program (an op outside the list, an in-place op on an input or a view, a
  lowering that fails or still holds `tm_tensor` ops) is imported after torch-mlir's
  decomposition table (`decomposition_table`), to which ftuner adds `aten.linear` on a
  3-d input as a batched matmul against the broadcast weight: torch's reshape to 2-d
  there merges two dynamic dims, and torch-mlir then emits a `tensor.cast` to `?x1xN`,
  wrong unless the sequence is 1 (../shared/inputs/README.md; torch-mlir's own lowering
  of `aten.linear` emits the batched form).
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import time
from typing import Any, Optional, Sequence

log = logging.getLogger("ftuner")


@dataclasses.dataclass
class DimSpec:
    """A dimension of an input: `size` when static, else a symbol with its range."""

    size: Optional[int] = None
    symbol: Optional[str] = None
    name: Optional[str] = None  # the user's torch.export.Dim name
    lo: int = 0
    hi: Optional[int] = None


@dataclasses.dataclass
class InputSpec:
    name: str
    dtype: Any  # torch.dtype
    dims: list


@dataclasses.dataclass
class Exported:
    text: str
    func: str
    inputs: list  # InputSpec per user input
    weights: list  # tensors, in argument order after the inputs
    weight_names: list
    out_spec: Any  # pytree spec of the outputs
    seconds: dict
    # Why the program was imported after torch's decompositions; None: as traced.
    decomposed: Optional[str] = None


def _decompositions():
    import torch

    aten = torch.ops.aten

    def linear(x, w, b=None):
        if x.dim() == 3:
            wt = aten.t.default(w)
            wt = aten.expand.default(
                aten.unsqueeze.default(wt, 0), [x.shape[0], w.shape[1], w.shape[0]]
            )
            y = aten.bmm.default(x, wt)
        elif x.dim() == 2:
            y = aten.mm.default(x, aten.t.default(w))
        else:
            return NotImplemented
        return y if b is None else aten.add.Tensor(y, b)

    def cumsum(x, dim, dtype=None):
        return _masked_cumsum(x, dim, dtype)

    return {aten.linear.default: linear, aten.cumsum.default: cumsum}


def decomposition_table():
    """torch-mlir's default decompositions plus ftuner's `aten.linear`."""
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    table = dict(get_decomposition_table())
    table.update(_decompositions())
    return table


def _masked_cumsum(input, dim, dtype=None):
    """`cumsum` as a masked sum: `out[i] = sum_j (j <= i) * x[j]` along `dim`."""
    import torch

    x = input
    d = dim % x.dim() if x.dim() else 0
    n = x.shape[d]
    i = torch.arange(n, dtype=torch.int64, device=x.device)
    # mask[j, i] = j <= i, laid out so the scanned dim j sits at `d` and i after it.
    mask = i.unsqueeze(1) <= i.unsqueeze(0)
    shape = [1] * (d + 2) + [1] * (x.dim() - d - 1)
    shape[d], shape[d + 1] = n, n
    mask = mask.view(shape)
    src = x if dtype is None else x.to(dtype)
    return (src.unsqueeze(d + 1) * mask.to(src.dtype)).sum(d)


def _sdpa_math(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """`scaled_dot_product_attention` in plain ops, as torch's math reference computes it
    (f32, no dropout: `_trace_forms` calls it for those only); a row whose every key is
    masked gives zeros, as torch's `_safe_softmax` does, not NaN."""
    import math

    import torch

    q, k, v = query, key, value
    s = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    if enable_gqa and q.size(-3) != k.size(-3):
        rep = q.size(-3) // k.size(-3)
        k = k.repeat_interleave(rep, dim=-3)
        v = v.repeat_interleave(rep, dim=-3)
    a = torch.matmul(q, k.transpose(-2, -1)) * s
    masked = is_causal or attn_mask is not None
    if is_causal:
        keep = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool, device=q.device).tril()
        a = a.masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            a = a.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            a = a + attn_mask
    p = torch.softmax(a, dim=-1)
    if masked:
        p = p.masked_fill(a.amax(dim=-1, keepdim=True) == float("-inf"), 0.0)
    return torch.matmul(p, v)


def _sdpa_written_out(args, kwargs) -> bool:
    """Whether `_sdpa_math` computes this call as torch would: f32 operands, no dropout,
    a static head size (or a given scale), not both a mask and `is_causal` (torch refuses
    those: the call is left to it, and to the decomposed import)."""
    import torch

    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
    got = dict(zip(names, args))
    if len(args) > len(names) or set(kwargs) - set(names) or set(got) & set(kwargs):
        return False
    got.update(kwargs)
    q = got.get("query")
    if not isinstance(q, torch.Tensor) or q.dtype != torch.float32:
        return False
    if got.get("dropout_p", 0.0) != 0.0:
        return False
    if got.get("is_causal", False) and got.get("attn_mask") is not None:
        return False
    return got.get("scale") is not None or isinstance(q.size(-1), int)


# The ATen ops a program may hold to be imported as torch.export traced it, without
# torch's decompositions: those of the zoo's BERT, ResNet-50, MobileNetV2 and DCGAN
# generator, each checked to lower through torch-mlir's own (C++) decompositions to linalg
# that ftuner compiles to code as fast as the decomposed program's (docs/python.md, the
# zoo's tests against PyTorch, python/tests/test_export.py). Anything else takes the
# decomposed import, torch-mlir's well-trodden path: without decompositions its lowering
# failed on GPT-2's causal mask (`aten.diff`, then a 0-d boolean literal) and crashed (a
# segmentation fault, which no fallback could catch) on another form of it.
_IMPORTED_AS_IS = frozenset(
    "aten." + op for op in """
    adaptive_avg_pool2d.default add.Tensor add_.Tensor amax.default arange.default batch_norm.default
    contiguous.default conv2d.default conv_transpose2d.input dropout.default embedding.default
    eq.Scalar expand.default flatten.using_ints gather.default ge.Scalar gelu.default hardtanh_.default
    layer_norm.default linear.default logical_not.default masked_fill.Scalar matmul.default
    max_pool2d.default mul.Tensor relu_.default reshape.default select.int slice.Tensor
    softmax.int sym_size.int tanh.default transpose.int unsqueeze.default view.default
    """.split()
)


def _not_imported_as_is(graph) -> Optional[str]:
    """Why the traced program must be decomposed before it is imported, or None."""
    for node in graph.nodes:
        if node.op == "call_function" and str(node.target) not in _IMPORTED_AS_IS:
            return f"{node.target} is not among the ops imported as traced"
    return None


def _functionalize_inplace(graph) -> Optional[str]:
    """Rewrite the graph's in-place ATen ops (`relu_`, `add_`, ...: what a non-strict
    export keeps of `nn.ReLU(inplace=True)` or `out += identity`) into their functional
    overloads, the mutated value's later users reading the result instead, where that is
    the same program: the mutated value is made by a non-view op of the graph and nothing
    views it. Returns why an op could not be rewritten (the graph is then partly
    rewritten: the caller exports again), else None."""
    import torch

    def views(node):
        t = node.target
        return (isinstance(t, torch._ops.OpOverload) and t._schema.returns
                and t._schema.returns[0].alias_info is not None
                and not t._schema.returns[0].alias_info.is_write)

    nodes = list(graph.nodes)
    pos = {n: i for i, n in enumerate(nodes)}
    # In graph order, so that a value mutated twice is read from the first rewrite by
    # the second (its users already redirected).
    for node in nodes:
        t = node.target
        if node.op != "call_function" or not isinstance(t, torch._ops.OpOverload):
            continue
        schema = t._schema
        if not schema.is_mutable:
            continue
        a = schema.arguments[0] if schema.arguments else None
        name = schema.name.split("::")[-1]
        if (a is None or a.alias_info is None or not a.alias_info.is_write or not name.endswith("_")
                or any(b.alias_info is not None and b.alias_info.is_write for b in schema.arguments[1:])):
            return f"{t} mutates what it cannot be rewritten for"
        packet = getattr(torch.ops.aten, name[:-1], None)
        functional = getattr(packet, t._overloadname, None) if packet is not None else None
        x = node.args[0] if node.args else None
        if functional is None or not isinstance(x, torch.fx.Node):
            return f"{t} has no functional overload"
        if x.op != "call_function" or views(x) or any(views(u) for u in x.users):
            return f"{t} mutates a graph input or a view"
        # The functional op's result type is its promotion of the operands': the in-place
        # op kept x's (`y_f16.add_(z_f32)`).
        dtypes = {a.meta["val"].dtype for a in node.args
                  if isinstance(a, torch.fx.Node) and isinstance(a.meta.get("val"), torch.Tensor)}
        if len(dtypes) > 1:
            return f"{t} mixes element types"
        later = [u for u in x.users if u is not node and pos[u] > pos[node]]
        # The program's outputs are named by its signature, not read from the output node.
        if any(u.op == "output" for u in later):
            return f"{t} mutates a value the program returns"
        for u in later:
            u.replace_input_with(x, node)
        node.target = functional
    return None


def _trace_forms():
    """A `TorchFunctionMode` that, while torch.export traces, writes out the calls
    torch-mlir would lower to `tm_tensor` (attention, cumsum) in plain ops."""
    import torch
    from torch.overrides import TorchFunctionMode

    F = torch.nn.functional

    class TraceForms(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is F.scaled_dot_product_attention:
                if _sdpa_written_out(args, kwargs):
                    return _sdpa_math(*args, **kwargs)
            elif func is torch.cumsum or func is torch.Tensor.cumsum:
                x = args[0] if args else kwargs.get("input")
                if "out" not in kwargs and isinstance(x, torch.Tensor) and x.dim() > 0:
                    return _masked_cumsum(*args, **kwargs)
            return func(*args, **kwargs)

    return TraceForms()


def _as_tuple_dynamic_shapes(model, example_args, dynamic_shapes):
    """The user's dynamic_shapes (tuple, list or dict by parameter name) as a tuple."""
    if dynamic_shapes is None:
        return tuple(None for _ in example_args)
    if isinstance(dynamic_shapes, dict):
        params = list(inspect.signature(model.forward).parameters)
        names = params[: len(example_args)]
        unknown = set(dynamic_shapes) - set(names)
        if unknown:
            raise ValueError(
                f"dynamic_shapes names {sorted(unknown)}, which are not among the "
                f"forward arguments {names}"
            )
        return tuple(dynamic_shapes.get(n) for n in names)
    ds = tuple(dynamic_shapes)
    if len(ds) != len(example_args):
        raise ValueError(
            f"dynamic_shapes has {len(ds)} entries for {len(example_args)} example arguments"
        )
    return ds


def _input_names(model, n):
    try:
        params = [
            p.name
            for p in inspect.signature(model.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


def _dim_names(ds):
    """(input index, dim) -> the user's Dim name."""
    out = {}
    for i, spec in enumerate(ds):
        if spec is None:
            continue
        items = spec.items() if isinstance(spec, dict) else enumerate(spec)
        for d, dim in items:
            name = getattr(dim, "__name__", None)
            if name is not None:
                out[(i, d)] = name
    return out


def _finite(bound):
    """A range bound as an int, or None for an unbounded one (a `Dim` without `max`:
    sympy's or torch's infinity, which `int()` does not always reject with a TypeError)."""
    if getattr(bound, "is_finite", True) is False:
        return None
    try:
        return int(bound)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None


def export(model, example_args: Sequence, dynamic_shapes=None, func_name: str = "forward") -> Exported:
    """Export `model` at `example_args` to linalg-on-tensors MLIR text."""
    import torch
    import torch.utils._pytree as pytree
    from torch_mlir import fx

    example_args = tuple(example_args)
    for i, a in enumerate(example_args):
        if not isinstance(a, torch.Tensor):
            raise TypeError(
                f"example argument {i} is a {type(a).__name__}; ftuner.compile takes tensors"
            )
    ds = _as_tuple_dynamic_shapes(model, example_args, dynamic_shapes)
    named = {}
    for n, t in model.named_parameters(remove_duplicate=True):
        named[n] = t
    for n, t in model.named_buffers(remove_duplicate=True):
        named.setdefault(n, t)
    names = list(named)
    weights = [named[n].detach() for n in names]
    out_spec_box = {}

    class Lifted(torch.nn.Module):
        def __init__(self):
            super().__init__()
            # Not a submodule: its parameters and buffers must not be the program's state.
            object.__setattr__(self, "_model", model)

        def forward(self, inputs, ws):
            out = torch.func.functional_call(self._model, dict(zip(names, ws)), tuple(inputs))
            flat, spec = pytree.tree_flatten(out)
            out_spec_box["spec"] = spec
            return tuple(flat)

    lifted = Lifted()

    def trace():
        with _trace_forms():
            return torch.export.export(lifted, (tuple(example_args), tuple(weights)),
                                       dynamic_shapes=(ds, tuple(None for _ in weights)), strict=False)

    def imported(prog, table):
        return str(fx.export_and_import(prog, output_type="linalg-on-tensors", func_name=func_name,
                                        decomposition_table=table))

    seconds = {}
    t0 = time.perf_counter()
    # Exported in eval mode; every submodule's own mode is restored after (model.train(m)
    # would set them all alike: a wrapper in training mode around an eval-mode model).
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.no_grad():
            prog = trace()
            seconds["torch.export"] = time.perf_counter() - t0
            log.info("torch.export: %.2f s", seconds["torch.export"])
            t1 = time.perf_counter()
            text = None
            why = _not_imported_as_is(prog.graph)
            if why is None:
                why = _functionalize_inplace(prog.graph)
                try:
                    if why is None:
                        prog.graph_module.recompile()
                        text = imported(prog, {})
                        if "tm_tensor." in text:
                            why, text = "its lowering holds tm_tensor ops", None
                except Exception as e:  # noqa: BLE001 - imported again below; that error is the user's
                    why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                if text is None:
                    # The graph may have been rewritten (in place ops, the importer's own
                    # edits): traced again.
                    prog = trace()
            if text is None:
                log.info("torch-mlir: imported after torch's decompositions (%s)", why)
                text = imported(prog, decomposition_table())
    finally:
        for m, training in modes:
            m.training = training
    seconds["torch-mlir"] = time.perf_counter() - t1
    log.info("torch-mlir import to linalg: %.2f s (%d bytes of MLIR)", seconds["torch-mlir"], len(text))

    # The inputs' dims: static sizes, or symbols with their ranges.
    ranges = {}
    for sym, vr in prog.range_constraints.items():
        ranges[str(sym)] = (int(vr.lower), _finite(vr.upper))
    user = [n for n in prog.graph.nodes if n.op == "placeholder"][: len(example_args)]
    dim_names = _dim_names(ds)
    inputs = []
    for i, (node, arg_name) in enumerate(zip(user, _input_names(model, len(example_args)))):
        val = node.meta["val"]
        dims = []
        for d, s in enumerate(val.shape):
            if isinstance(s, torch.SymInt):
                sym = str(s.node.expr)
                lo, hi = ranges.get(sym, (0, None))
                dims.append(DimSpec(symbol=sym, name=dim_names.get((i, d), sym), lo=lo, hi=hi))
            else:
                dims.append(DimSpec(size=int(s)))
        inputs.append(InputSpec(name=arg_name, dtype=val.dtype, dims=dims))
    return Exported(
        text=text,
        func=func_name,
        inputs=inputs,
        weights=weights,
        weight_names=names,
        out_spec=out_spec_box.get("spec"),
        seconds=seconds,
        decomposed=why,
    )
