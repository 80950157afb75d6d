"""ftuner: compile PyTorch models with dynamic shapes for this CPU.

    import torch, ftuner
    from torch.export import Dim
    cm = ftuner.compile(model, (ids,), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},))
    out = cm(ids2)                 # any batch and sequence length in the exported ranges

One compilation serves every shape in the ranges: contractions are covered by uKernels
of several sizes chosen from an analytic model of this CPU (no per-shape tuning, no
padding to buckets). Weights are laid out once, at compile time, in the form the kernels
read. Calls take and return `torch.Tensor`s (or numpy arrays) without copies, check every
shape against the export, release the GIL and may run concurrently.

`torch.compile(model, backend="ftuner", dynamic=True)` uses the same compiler.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Optional, Sequence

from . import _ftuner
from ._ftuner import CompileError

__all__ = [
    "compile",
    "compile_mlir",
    "CompiledModel",
    "CompileError",
    "ShapeError",
    "explain",
    "set_num_threads",
    "num_threads",
    "save",
    "load",
]

log = logging.getLogger("ftuner")


class ShapeError(ValueError):
    """An argument whose shape or type the compiled model cannot take."""


_DTYPES = {
    "f32": "float32",
    "f64": "float64",
    "f16": "float16",
    "bf16": "bfloat16",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "i1": "bool",
    "index": "int64",
}


def set_num_threads(n: int) -> None:
    """Threads of the compiled code's parallel loops (all models; default: every core)."""
    _ftuner.set_num_threads(int(n))


def num_threads() -> int:
    return _ftuner.num_threads()


class _Dim:
    __slots__ = ("size", "symbol", "name", "lo", "hi")

    def __init__(self, size=None, symbol=None, name=None, lo=0, hi=None):
        self.size, self.symbol, self.name, self.lo, self.hi = size, symbol, name, lo, hi


class CompiledModel:
    """A model compiled by ftuner: call it like the model."""

    def __init__(self, program, inputs, weights, weight_names=(), out_spec=None, seconds=None, threads=None,
                 weight_args=None):
        self._program = program
        self._source = None  # what `save` recompiles (set by compile / compile_mlir)
        self._inputs = inputs  # [(name, dtype name, [_Dim])]
        self._out_spec = out_spec
        self._threads = threads
        self.compile_seconds = dict(seconds or {})
        self.weight_names = list(weight_names)
        self.calls = 0
        self._lock = threading.Lock()
        # Weights: kept alive (prepared values may be views of them), prepared once.
        self._weights = [w.contiguous() if hasattr(w, "contiguous") else w for w in weights]
        self._prepare()
        # Where each argument of the exported function comes from: an input of the call
        # or a weight (by default the weights follow the inputs).
        n_args = len(program.inputs)
        if weight_args is None:
            weight_args = list(range(n_args - len(self._weights), n_args))
        wpos = {a: k for k, a in enumerate(weight_args)}
        self._sources = []
        k_in = 0
        for a in range(n_args):
            if a in wpos:
                self._sources.append(("w", wpos[a]))
            else:
                self._sources.append(("in", k_in))
                k_in += 1

    def _prepare(self):
        self._prepared = []
        if self._program.has_prepare:
            t0 = time.perf_counter()
            self._prepared = self._program.prepare([_arg(w) for w in self._weights])
            self.compile_seconds["prepare weights"] = time.perf_counter() - t0
            log.info("weights prepared: %d values, %.3f s", len(self._prepared), self.compile_seconds["prepare weights"])
        self._prepared_args = [(b.data_ptr, list(b.shape)) for b in self._prepared]
        self._weight_raw = [_arg(w) for w in self._weights]

    def reprepare(self, weights):
        """Take new values of the weights (same shapes and types, in the same order)."""
        weights = [w.detach().contiguous() if hasattr(w, "detach") else w for w in weights]
        if len(weights) != len(self._weights) or any(
            tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype for a, b in zip(weights, self._weights)
        ):
            raise ShapeError("the new weights differ from the compiled ones in number, shape or dtype")
        with self._lock:
            self._weights = weights
            self._prepare()

    # -- introspection -------------------------------------------------------------------
    @property
    def input_specs(self):
        """(name, dtype, dims) of each input; a dim is an int or (name, lo, hi); dims is
        None for a size argument."""
        return [
            (n, dt, None if dims is None else [d.size if d.size is not None else (d.name, d.lo, d.hi) for d in dims])
            for n, dt, dims in self._inputs
        ]

    def explain(self):
        """Per contraction: its location, uKernels, patch plans and expected padding."""
        return json.loads(self._program.explain())

    @property
    def program(self):
        return self._program

    # -- calls ---------------------------------------------------------------------------
    def _check(self, args):
        if len(args) != len(self._inputs):
            raise ShapeError(f"the model takes {len(self._inputs)} inputs, got {len(args)}")
        bound = {}
        for i, (a, (name, dtype, dims)) in enumerate(zip(args, self._inputs)):
            if dims is None:  # a size argument (torch.compile graphs)
                if not isinstance(a, int):
                    raise ShapeError(f"input {i} ('{name}') is a size: an int, not a {type(a).__name__}")
                continue
            if not hasattr(a, "shape"):
                raise ShapeError(f"input {i} ('{name}') is a {type(a).__name__}, not a tensor or array")
            shape = tuple(a.shape)
            got = _dtype_name(a)
            if got != dtype:
                raise ShapeError(f"input {i} ('{name}') has dtype {got}, the model takes {dtype}")
            if len(shape) != len(dims):
                raise ShapeError(
                    f"input {i} ('{name}') has rank {len(shape)} (shape {list(shape)}), the model takes rank {len(dims)}"
                )
            for d, (x, spec) in enumerate(zip(shape, dims)):
                if spec.size is not None:
                    if x != spec.size:
                        raise ShapeError(f"input {i} ('{name}') dim {d} is {x}, the model was exported with {spec.size}")
                    continue
                if x < spec.lo or (spec.hi is not None and x > spec.hi):
                    hi = "inf" if spec.hi is None else spec.hi
                    raise ShapeError(
                        f"input {i} ('{name}') dim {d} is {x}, outside the range [{spec.lo}, {hi}] of dim '{spec.name}'"
                    )
                prev = bound.get(spec.symbol)
                if prev is not None and prev[0] != x:
                    raise ShapeError(
                        f"input {i} ('{name}') dim {d} is {x}, but dim '{spec.name}' is {prev[0]} "
                        f"in input {prev[1]} ('{self._inputs[prev[1]][0]}')"
                    )
                bound[spec.symbol] = (x, i)

    def __call__(self, *args):
        import numpy as np

        self._check(args)
        torch_in = any(_is_torch(a) for a in args) or not any(hasattr(a, "shape") for a in args)
        keep = [a if isinstance(a, int) else _contiguous(a) for a in args]
        raw = [_arg(a) for a in keep]
        call_args = []
        for a in self._program.run_inputs:
            kind, k = self._sources[a]
            call_args.append(raw[k] if kind == "in" else self._weight_raw[k])
        call_args += self._prepared_args
        if self._threads is not None:
            _ftuner.set_num_threads(self._threads)
        outs = self._program.run(call_args)
        with self._lock:
            self.calls += 1
        del keep
        if torch_in:
            import torch

            res = [torch.from_dlpack(o) if isinstance(o, _ftuner.Buffer) else torch.tensor(o) for o in outs]
        else:
            res = [np.from_dlpack(o) if isinstance(o, _ftuner.Buffer) else np.asarray(o) for o in outs]
        if self._out_spec is not None:
            import torch.utils._pytree as pytree

            return pytree.tree_unflatten(res, self._out_spec)
        return res[0] if len(res) == 1 else tuple(res)


def _is_torch(a):
    return type(a).__module__.startswith("torch")


def _dtype_name(a):
    s = str(a.dtype)
    return s[len("torch."):] if s.startswith("torch.") else s


def _contiguous(a):
    if _is_torch(a):
        if a.device.type != "cpu":
            raise ShapeError(f"a tensor on {a.device}: ftuner compiles for the CPU")
        return a.detach().contiguous()
    import numpy as np

    return np.ascontiguousarray(a)


def _arg(a):
    """(data pointer, shape) of a contiguous CPU tensor or array; a size as a number."""
    if isinstance(a, int):
        return float(a)
    if _is_torch(a):
        return (a.data_ptr(), list(a.shape))
    return (a.ctypes.data, list(a.shape))


def compile_mlir(text: str, weights=(), weight_args=(), inputs=None, file="<module>", entry=None,
                 target="host", pipeline=None, threads=None) -> CompiledModel:
    """Compile an MLIR module (linalg on tensors) directly.

    `weight_args` are the indices of the entry function's weight arguments, `weights`
    their values (tensors or arrays, in that order); the other arguments are the inputs
    of each call. `inputs` optionally describes them as (name, dtype, dims) with dims of
    ints and (name, lo, hi) ranges; by default it is read from the signature.
    """
    t0 = time.perf_counter()
    program = _ftuner.compile(text, file=file, entry=entry, weights=list(weight_args), target=target, pipeline=pipeline)
    _log_notes(program)
    seconds = {"ftuner " + k: v for k, v in program.phases}
    seconds["ftuner"] = time.perf_counter() - t0
    if inputs is None:
        wa = set(weight_args)
        specs = []
        for i, (shape, elem) in enumerate(program.inputs):
            if i in wa:
                continue
            dims = [_Dim(size=d) if d >= 0 else _Dim(symbol=f"arg{i}.{k}", name=f"arg{i}.{k}", lo=0) for k, d in enumerate(shape)]
            specs.append((f"arg{i}", _DTYPES.get(elem, elem), dims))
    else:
        specs = [
            (n, dt, None if dims is None else
             [_Dim(size=d) if isinstance(d, int) else _Dim(symbol=d[0], name=d[0], lo=d[1], hi=d[2]) for d in dims])
            for n, dt, dims in inputs
        ]
    cm = CompiledModel(program, specs, list(weights), seconds=seconds, threads=threads,
                       weight_args=list(weight_args))
    if pipeline is None:
        cm._source = dict(text=text, file=file, entry=entry, weight_args=list(weight_args), target=target,
                          tuning_db=None)
    return cm


def _log_notes(program) -> None:
    """The passes' warnings (logging.WARNING) and remarks (logging.INFO), e.g. why
    ollie-derive left a convolution alone, through the `ftuner` logger."""
    for n in program.notes:
        first = n.splitlines()[0] if n else n
        log.log(logging.WARNING if ": warning: " in first else logging.INFO, "%s", n.rstrip())


def compile(model, example_args: Sequence, dynamic_shapes=None, target: str = "host",
            threads: Optional[int] = None, tuning_db: Optional[str] = None, derive: bool = True) -> CompiledModel:
    """Compile a PyTorch module for this CPU.

    `example_args` are tensors the model is traced with; `dynamic_shapes` is what
    `torch.export.export` takes (a tuple or a dict by argument name of `{dim: Dim}`).
    `target` names the hardware model (`host` detects this CPU); `threads` the threads of
    each call (default: every core); `tuning_db` an ftuner-tune database whose tuned
    schedules the contractions use; `derive` runs OLLIE's derivations (`ollie-derive`:
    transposed convolutions as a matmul and col2im, convolutions through reshapes) before the
    uKernels are patched.
    """
    from . import _export

    t0 = time.perf_counter()
    ex = _export.export(model, example_args, dynamic_shapes)
    n_in = len(ex.inputs)
    t1 = time.perf_counter()
    program = _ftuner.compile(
        ex.text,
        file=f"<{type(model).__name__}>",
        entry=ex.func,
        weights=list(range(n_in, n_in + len(ex.weights))),
        target=target,
        tuning_db=tuning_db,
        derive=derive,
    )
    _log_notes(program)
    seconds = dict(ex.seconds)
    for k, v in program.phases:
        seconds["ftuner " + k] = v
        log.info("ftuner %s: %.2f s", k, v)
    seconds["ftuner"] = time.perf_counter() - t1
    specs = [
        (
            s.name,
            str(s.dtype)[len("torch."):],
            [_Dim(size=d.size, symbol=d.symbol, name=d.name, lo=d.lo, hi=d.hi) for d in s.dims],
        )
        for s in ex.inputs
    ]
    cm = CompiledModel(program, specs, ex.weights, ex.weight_names, ex.out_spec, seconds, threads)
    cm._source = dict(text=ex.text, file=f"<{type(model).__name__}>", entry=ex.func,
                      weight_args=list(range(n_in, n_in + len(ex.weights))), target=target, tuning_db=tuning_db,
                      derive=derive)
    cm.compile_seconds["total"] = time.perf_counter() - t0
    log.info("compiled %s in %.2f s", type(model).__name__, cm.compile_seconds["total"])
    return cm


def save(compiled, path, name=None):
    """Write a compiled model as a shared library with a C header (no Python needed to use
    it): the code, a C interface `<name>_run(...)` and the weights. See `ftuner.load`."""
    from . import _aot

    return _aot.save(compiled, path, name)


def load(path):
    """Open a shared library written by `ftuner.save` as a model (tensors in, tensors out)."""
    from . import _aot

    return _aot.load(path)


def _register_backend():
    import sys

    if "torch" in sys.modules:
        from . import _backend

        _backend.register()


_register_backend()


def explain(compiled: CompiledModel):
    """Per contraction of a compiled model: the patch plan, uKernels, expected padding."""
    return compiled.explain()
