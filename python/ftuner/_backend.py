"""`torch.compile(model, backend="ftuner", dynamic=True)`.

Dynamo hands the backend an FX graph whose inputs are the parameters and buffers it
lifted, the activations, and the symbolic sizes of dynamic dims (as ints). AOTAutograd
(with ftuner's decompositions) turns it into an ATen graph, torch-mlir's stateless FX
importer into linalg on tensors, and `ftuner.compile_mlir` into machine code: the
parameters and buffers are the compiled model's weights (prepared once, from the values
Dynamo saw), the activations and sizes its inputs. A graph ftuner cannot compile runs as it
is (PyTorch), with a warning naming the reason.

When a weight changes between calls (another tensor, or the same one written in place),
it is prepared again before the call. Backward graphs, if any, run in PyTorch.
"""

from __future__ import annotations

import logging
import warnings

log = logging.getLogger("ftuner")


def _symbolic(s):
    """A size that is a free symbol (not a SymInt Dynamo has specialized to a number)."""
    import torch

    return isinstance(s, torch.SymInt) and not s.node.expr.is_number


def _is_weight(name, ex):
    import torch

    return isinstance(ex, torch.nn.Parameter) or "_buffers_" in name or "_parameters_" in name


def _specs(gm, weights):
    """(name, dtype, dims) of each non-weight input of the ATen graph; dims None for a
    size argument. A symbolic dim is (symbol, 2, None): Dynamo specializes sizes 0 and 1."""
    import torch

    specs = []
    for i, n in enumerate(p for p in gm.graph.nodes if p.op == "placeholder"):
        if i in weights:
            continue
        v = n.meta.get("val")
        if isinstance(v, torch.Tensor):
            dims = [(str(s.node.expr), 2, None) if _symbolic(s) else int(s) for s in v.shape]
            specs.append((n.name, str(v.dtype)[len("torch."):], dims))
        elif isinstance(v, (int, torch.SymInt)):
            specs.append((n.name, "int64", None))
        else:
            raise NotImplementedError(f"an input of type {type(v).__name__}")
    return specs


def batched_linear(x, w, b=None):
    """`linear` on a 3-d input as a batched matmul against the broadcast weight (no reshape
    merging the two leading dims; see `_export`)."""
    import torch

    if x.dim() != 3:
        return torch.nn.functional.linear(x, w, b)
    y = torch.bmm(x, w.t().unsqueeze(0).expand(x.shape[0], w.shape[1], w.shape[0]))
    return y if b is None else y + b


def _keep_linear_batched(gm):
    """Route the graph's `linear` calls through `batched_linear` (AOTAutograd decomposes
    `linear` before any decomposition table sees it)."""
    import torch

    targets = {torch._C._nn.linear, torch.nn.functional.linear}
    changed = False
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target in targets:
            n.target = batched_linear
            changed = True
    if changed:
        gm.recompile()


def _rename_aliases(agm):
    """ATen aliases torch-mlir has no lowering for, replaced by the op they alias."""
    import torch

    aten = torch.ops.aten
    aliases = {aten.true_divide.Tensor: aten.div.Tensor}
    changed = False
    for n in agm.graph.nodes:
        if n.op == "call_function" and n.target in aliases:
            n.target = aliases[n.target]
            changed = True
    if changed:
        agm.recompile()


def ftuner_backend(gm, example_inputs, **kwargs):
    import torch
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd
    from torch_mlir import fx

    import ftuner

    from . import _export

    _keep_linear_batched(gm)
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    weights = [i for i, (n, ex) in enumerate(zip(names, example_inputs)) if _is_weight(n, ex)]
    values = [example_inputs[i].detach() for i in weights]

    def forward_compiler(agm, fake_inputs):
        try:
            if len(fake_inputs) != len(example_inputs):
                raise NotImplementedError("AOTAutograd changed the inputs")
            _rename_aliases(agm)
            module = fx.stateless_fx_import(agm, output_type="linalg-on-tensors", model_name="forward")
            cm = ftuner.compile_mlir(
                str(module),
                weights=values,
                weight_args=weights,
                inputs=_specs(agm, set(weights)),
                file=f"<torch.compile graph {gm.__class__.__name__}>",
            )
        except Exception as e:  # noqa: BLE001 - any failure falls back to PyTorch, said once
            warnings.warn(f"ftuner: running this graph with PyTorch: {type(e).__name__}: {e}")
            return make_boxed_func(agm.forward)
        log.info("torch.compile backend: %d weights, %d inputs", len(weights), len(fake_inputs) - len(weights))
        seen = [(w.data_ptr(), w._version) for w in values]
        wset = set(weights)

        def run(args):
            ws = [args[i] for i in weights]
            now = [(w.data_ptr(), w._version) for w in ws]
            if now != seen:
                cm.reprepare(ws)
                seen[:] = now
            out = cm(*[a for i, a in enumerate(args) if i not in wset])
            args.clear()
            return list(out) if isinstance(out, (tuple, list)) else [out]

        run._boxed_call = True
        run.compiled = cm
        return run

    def backward_compiler(agm, _inputs):
        return make_boxed_func(agm.forward)

    return aot_autograd(
        fw_compiler=forward_compiler,
        bw_compiler=backward_compiler,
        decompositions=_export.decomposition_table(),
    )(gm, example_inputs)


def register():
    """Make `backend="ftuner"` known to torch.compile (also found through the package's
    `torch_dynamo_backends` entry point)."""
    try:
        from torch._dynamo import list_backends, register_backend
    except ImportError:  # torch without dynamo
        return
    if "ftuner" not in list_backends(exclude_tags=()):
        register_backend(name="ftuner")(ftuner_backend)
