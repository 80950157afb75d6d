"""PyTorch model -> linalg-on-tensors MLIR, with the weights as function arguments.

`torch.export` (non-strict) traces the model with `torch.export.Dim` dynamic dims;
torch-mlir's FX importer lowers the program to linalg on tensors. Two things are done
around them:

* Parameters and buffers are lifted into arguments through a wrapper that calls the
  model with `torch.func.functional_call`, so the exported function takes
  `(*inputs, *weights)`: the weights stay out of the IR text, and torch-mlir's
  "Could not find state mapping for buffer" on non-persistent buffers (Hugging Face
  BERT's `position_ids`) cannot happen.
* `aten.cumsum` is decomposed into a masked sum (`out[i] = sum_j (j <= i) * x[j]`):
  torch-mlir lowers it to `tm_tensor.scan`, an op of its own dialect that ftuner does
  not read. The masked sum is quadratic in the scanned dim, which is cheap where models
  use it (masks and position ids of a sequence).
* `aten.linear` on a 3-d input is decomposed into a batched matmul against the broadcast
  weight instead of torch's reshape to 2-d: merging two dynamic dims (batch and
  sequence) makes torch-mlir emit a `tensor.cast` to `?x1xN`, wrong unless the sequence
  is 1 (../shared/inputs/README.md). ftuner turns the batched form back into one matmul
  over batch x sequence rows.
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
        d = dim % x.dim() if x.dim() else 0
        n = x.shape[d]
        i = aten.arange.default(n, dtype=torch.int64, device=x.device)
        # mask[j, i] = j <= i, laid out so the scanned dim j sits at `d` and i after it.
        mask = aten.le.Tensor(aten.unsqueeze.default(i, 1), aten.unsqueeze.default(i, 0))
        shape = [1] * (d + 2) + [1] * (x.dim() - d - 1)
        shape[d], shape[d + 1] = n, n
        mask = aten.view.default(mask, shape)
        src = x if dtype is None else aten._to_copy.default(x, dtype=dtype)
        prod = aten.mul.Tensor(aten.unsqueeze.default(src, d + 1), mask.to(src.dtype))
        return aten.sum.dim_IntList(prod, [d])

    return {aten.linear.default: linear, aten.cumsum.default: cumsum}


def decomposition_table():
    """torch-mlir's default decompositions plus ftuner's `aten.linear`."""
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    table = dict(get_decomposition_table())
    table.update(_decompositions())
    return table


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

    seconds = {}
    t0 = time.perf_counter()
    # Exported in eval mode; every submodule's own mode is restored after (model.train(m)
    # would set them all alike: a wrapper in training mode around an eval-mode model).
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.no_grad():
            prog = torch.export.export(
                Lifted(),
                (tuple(example_args), tuple(weights)),
                dynamic_shapes=(ds, tuple(None for _ in weights)),
                strict=False,
            )
            seconds["torch.export"] = time.perf_counter() - t0
            log.info("torch.export: %.2f s", seconds["torch.export"])
            t1 = time.perf_counter()
            module = fx.export_and_import(
                prog,
                output_type="linalg-on-tensors",
                func_name=func_name,
                decomposition_table=decomposition_table(),
            )
            text = str(module)
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
    )
