"""`ftuner.save(compiled, "model.so")` and `ftuner.load("model.so")`.

`save` compiles the model again, ahead of time, into a shared library with a C header
(`model.h` beside it): the code, a C interface (`<name>_run`, `<name>_free`,
`<name>_signature`; ftuner_runtime::aot) and the weights, embedded, prepared once on the
first call. The library needs neither Python nor ftuner: a C program links it (see
examples/c). `load` opens such a library with ctypes and returns a model that takes and
returns tensors like the compiled one (the outputs' memory is the library's, freed with
`<name>_free` when the last array viewing it goes).
"""

from __future__ import annotations

import ctypes
import json
import os
import pathlib
import re
import tempfile

_DTYPE_CODES = {"float32": 0, "float64": 1, "int64": 2, "int32": 3, "bool": 4, "int8": 5, "float16": 6, "bfloat16": 7}
_CODE_DTYPES = {v: k for k, v in _DTYPE_CODES.items()}


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("owner", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * 8),
    ]


def _load_spec(text):
    """The outputs' pytree spec. A model's own output class (a Hugging Face
    `ModelOutput`, ...) is registered by importing the module that defines it; the spec
    names it, so a process that has not imported it yet does so here."""
    import importlib

    import torch.utils._pytree as pytree

    try:
        return pytree.treespec_loads(text)
    except NotImplementedError:
        modules = set()
        for m in re.finditer(r'"([A-Za-z_][\w.]*)\.[A-Za-z_]\w*"', text):
            modules.add(m.group(1))
        for name in sorted(modules):
            try:
                importlib.import_module(name)
            except ImportError:
                pass
        return pytree.treespec_loads(text)


def _c_name(path):
    stem = pathlib.Path(path).name.split(".")[0]
    if stem.startswith("lib"):
        stem = stem[3:]
    name = re.sub(r"[^A-Za-z0-9_]", "_", stem) or "model"
    return name if not name[0].isdigit() else "model_" + name


def _header_path(path):
    p = pathlib.Path(path)
    return p.with_name(_c_name(p) + ".h")


def save(compiled, path, name=None):
    """Write `compiled` (from `ftuner.compile`/`compile_mlir`) as a shared library."""
    import numpy as np

    from . import _ftuner

    src = getattr(compiled, "_source", None)
    if src is None:
        raise ValueError("this model was not compiled from MLIR ftuner kept (a loaded library cannot be saved again)")
    path = pathlib.Path(path)
    name = name or _c_name(path)
    header = _header_path(path) if name == _c_name(path) else path.with_name(name + ".h")
    # The weights, each 64-byte aligned, in argument order.
    offsets, off = [], 0
    with tempfile.NamedTemporaryFile("wb", suffix=".weights", delete=False) as f:
        blob = f.name
        for w in compiled._weights:
            a = w.detach().contiguous().numpy() if hasattr(w, "detach") else np.ascontiguousarray(w)
            pad = (-off) % 64
            f.write(b"\0" * pad)
            off += pad
            offsets.append(off)
            f.write(a.tobytes())
            off += a.nbytes
    ranges = []
    for _, _, dims in compiled._inputs:
        ranges.append([None if d.size is not None else (d.name or d.symbol, int(d.lo), d.hi) for d in (dims or [])])
    extra = {"names": [n for n, _, _ in compiled._inputs]}
    if compiled._out_spec is not None:
        try:
            import torch.utils._pytree as pytree

            extra["out_spec"] = pytree.treespec_dumps(compiled._out_spec)
        except Exception:  # noqa: BLE001 - a structure pytree cannot write: flat outputs
            pass
    extra_json = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in extra.items())
    try:
        _ftuner.build_shared(
            src["text"],
            str(path),
            str(header),
            name,
            file=src["file"],
            entry=src["entry"],
            weights=list(src["weight_args"]),
            blob=blob if compiled._weights else None,
            offsets=offsets,
            ranges=ranges,
            extra_json=extra_json,
            target=src["target"],
            tuning_db=src["tuning_db"],
            derive=src.get("derive", True),
        )
    finally:
        os.unlink(blob)
    return path


class _Freed:
    """Frees an output of the library when garbage collected."""

    def __init__(self, free, t):
        self._free, self._t = free, t

    def __del__(self):
        self._free(ctypes.byref(self._t))


class LoadedModel:
    """A model from a shared library `ftuner.save` wrote."""

    def __init__(self, path):
        from . import CompiledModel, _Dim

        self.path = str(path)
        self._lib = ctypes.CDLL(os.path.abspath(self.path))
        try:
            self.name = self._lib.ftuner_model_name
        except AttributeError:
            raise ValueError(f"{path} is not a model library ftuner wrote (no ftuner_model_name)") from None
        self.name.restype = ctypes.c_char_p
        self.name = self.name().decode()
        self._run = getattr(self._lib, f"{self.name}_run")
        self._run.restype = ctypes.c_int
        self._run.argtypes = [
            ctypes.POINTER(_Tensor), ctypes.c_int32, ctypes.POINTER(_Tensor), ctypes.c_int32,
            ctypes.c_char_p, ctypes.c_size_t,
        ]
        self._free = getattr(self._lib, f"{self.name}_free")
        self._free.argtypes = [ctypes.POINTER(_Tensor)]
        sig = getattr(self._lib, f"{self.name}_signature")
        sig.restype = ctypes.c_char_p
        self.signature = json.loads(sig().decode())
        names = self.signature.get("names") or [f"arg{i}" for i in range(len(self.signature["inputs"]))]
        self._inputs = []
        for n, spec in zip(names, self.signature["inputs"]):
            dims = [
                _Dim(size=d) if isinstance(d, int) else _Dim(symbol=d[0], name=d[0], lo=d[1], hi=d[2])
                for d in spec["dims"]
            ]
            self._inputs.append((n, spec["dtype"], dims))
        self._out_spec = None
        if "out_spec" in self.signature:
            self._out_spec = _load_spec(self.signature["out_spec"])
        self._check = CompiledModel._check.__get__(self)
        self.calls = 0
        # The library's parallel loops run on its own thread pool; ftuner.set_num_threads
        # (or FTUNER_NUM_THREADS) sets how many threads, as for compiled models.
        from . import _ftuner

        self._num_threads = _ftuner.num_threads
        self._set_threads = getattr(self._lib, f"{self.name}_set_num_threads", None)
        if self._set_threads is not None:
            self._set_threads.argtypes = [ctypes.c_int32]
            self._set_threads.restype = None
        self._threads = None

    def __call__(self, *args):
        import numpy as np

        from . import _contiguous, _is_torch

        self._check(args)
        torch_in = any(_is_torch(a) for a in args)
        keep = [_contiguous(a) for a in args]
        ins = (_Tensor * max(len(keep), 1))()
        for t, a in zip(ins, keep):
            arr = a.numpy() if _is_torch(a) else a
            t.data = arr.ctypes.data
            t.dtype = _DTYPE_CODES[str(arr.dtype)]
            t.rank = arr.ndim
            for d, x in enumerate(arr.shape):
                t.shape[d] = x
        if self._set_threads is not None:
            threads = self._num_threads()
            if threads != self._threads:
                self._set_threads(threads)
                self._threads = threads
        n_out = len(self.signature["outputs"])
        outs = (_Tensor * max(n_out, 1))()
        err = ctypes.create_string_buffer(512)
        rc = self._run(ins, len(keep), outs, n_out, err, len(err))
        if rc:
            raise RuntimeError(f"{self.name}_run failed ({rc}): {err.value.decode()}")
        self.calls += 1
        res = []
        for k in range(n_out):
            t = _Tensor()
            ctypes.pointer(t)[0] = outs[k]
            shape = tuple(t.shape[: t.rank])
            dtype = np.dtype(_CODE_DTYPES[t.dtype])
            count = int(np.prod(shape)) if shape else 1
            if count == 0:
                arr = np.zeros(shape, dtype)
                self._free(ctypes.byref(t))
            else:
                buf = (ctypes.c_byte * (count * dtype.itemsize)).from_address(t.data)
                buf._ftuner_owner = _Freed(self._free, t)
                arr = np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)
            res.append(arr)
        if torch_in:
            import torch

            res = [torch.from_numpy(r) for r in res]
        if self._out_spec is not None:
            import torch.utils._pytree as pytree

            return pytree.tree_unflatten(res, self._out_spec)
        return res[0] if len(res) == 1 else tuple(res)


def load(path):
    """Open a model library written by `ftuner.save`."""
    return LoadedModel(path)
