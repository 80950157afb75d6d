"""The package's API on small models: calls, shape checks, zero-copy outputs, numpy,
threads, explain, errors."""

import logging
import threading

import numpy as np
import pytest
import torch
from torch.export import Dim

import ftuner


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(32, 64)
        self.b = torch.nn.Linear(64, 16)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    m = MLP().eval()
    cm = ftuner.compile(m, (torch.randn(4, 32),), dynamic_shapes=({0: Dim("rows", min=1, max=1000)},))
    return m, cm


@pytest.mark.parametrize("rows", [1, 7, 64, 97, 1000])
def test_matches_eager(mlp, rows):
    m, cm = mlp
    x = torch.randn(rows, 32)
    with torch.no_grad():
        ref = m(x)
    out = cm(x)
    assert isinstance(out, torch.Tensor) and out.shape == ref.shape and out.dtype == torch.float32
    assert (out - ref).abs().max().item() < 1e-4


def test_numpy_in_numpy_out(mlp):
    m, cm = mlp
    x = np.random.default_rng(0).standard_normal((5, 32), dtype=np.float32)
    out = cm(x)
    assert isinstance(out, np.ndarray) and out.shape == (5, 16)
    with torch.no_grad():
        ref = m(torch.from_numpy(x)).numpy()
    assert np.abs(out - ref).max() < 1e-4


def test_output_owns_its_memory(mlp):
    _, cm = mlp
    before = ftuner._ftuner.live_bytes()
    outs = [cm(torch.randn(100, 32)) for _ in range(5)]
    assert ftuner._ftuner.live_bytes() >= before + 5 * 100 * 16 * 4
    assert all(o.data_ptr() % 64 == 0 for o in outs)
    del outs
    import gc

    gc.collect()
    assert ftuner._ftuner.live_bytes() <= before


def test_non_contiguous_input(mlp):
    m, cm = mlp
    x = torch.randn(32, 10).t()
    with torch.no_grad():
        assert (cm(x) - m(x)).abs().max().item() < 1e-4


@pytest.mark.parametrize(
    "x, message",
    [
        (torch.randn(1001, 32), "dim 0 is 1001, outside the range [1, 1000] of dim 'rows'"),
        (torch.randn(0, 32), "dim 0 is 0, outside the range [1, 1000]"),
        (torch.randn(4, 31), "dim 1 is 31, the model was exported with 32"),
        (torch.randn(4, 32, 1), "has rank 3"),
        (torch.randn(4, 32, dtype=torch.float64), "has dtype float64, the model takes float32"),
    ],
)
def test_shape_errors(mlp, x, message):
    _, cm = mlp
    with pytest.raises(ftuner.ShapeError) as e:
        cm(x)
    assert str(e.value).startswith("input 0 ('x')") and message in str(e.value)
    assert isinstance(e.value, ValueError)


def test_argument_count(mlp):
    _, cm = mlp
    with pytest.raises(ftuner.ShapeError, match="takes 1 inputs, got 2"):
        cm(torch.randn(2, 32), torch.randn(2, 32))


def test_tied_dims_checked():
    class Add(torch.nn.Module):
        def forward(self, a, b):
            return a * 2 + b

    n = Dim("n", min=1, max=100)
    cm = ftuner.compile(Add(), (torch.randn(3, 4), torch.randn(3, 4)), dynamic_shapes=({0: n}, {0: n}))
    assert (cm(torch.ones(5, 4), torch.ones(5, 4)) == 3).all()
    with pytest.raises(ftuner.ShapeError, match="dim 0 is 6, but dim 'n' is 5 in input 0"):
        cm(torch.ones(5, 4), torch.ones(6, 4))


def test_concurrent_calls(mlp):
    m, cm = mlp
    xs = [torch.randn(17 + i, 32) for i in range(8)]
    with torch.no_grad():
        refs = [m(x) for x in xs]
    results = [None] * len(xs)

    def work(i):
        for _ in range(5):
            results[i] = cm(xs[i])

    ts = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for r, ref in zip(results, refs):
        assert (r - ref).abs().max().item() < 1e-4


def test_gil_released_during_call(mlp):
    """Another Python thread keeps running while a long call is in compiled code."""
    _, cm = mlp
    x = torch.randn(1000, 32)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=ticker)
    t.start()
    for _ in range(20):
        cm(x)
    stop.set()
    t.join()
    assert len(ticks) > 0


def test_weights_prepared_once(mlp):
    _, cm = mlp
    # Both dense weights are transposed at compile time: the program takes them prepared.
    # The first, 64 wide, is also packed into the [N / nr][K][nr] panels its register
    # tiles read (nr from the host's model); the unpacked form is not kept.
    assert cm.program.has_prepare
    shapes = [tuple(s) for s, _ in cm.program.prepared]
    assert any(len(s) == 3 and s[1] == 32 and s[0] * s[2] == 64 for s in shapes), shapes
    assert (32, 64) not in shapes
    assert (64, 16) in shapes or any(len(s) == 3 and s[1] == 64 and s[0] * s[2] == 16 for s in shapes)


def test_explain(mlp):
    _, cm = mlp
    plans = ftuner.explain(cm)
    assert len(plans) == 2
    for p in plans:
        assert p["kind"] == "matmul"
        assert p["ukernels"] and p["m_plan"] and p["n_plan"]
        assert p["padding"] >= 0.0
        assert p["loc"].startswith("<MLP>:")


def test_unbounded_dim():
    # `Dim` without `max`: torch.export's range ends at infinity, which is no size limit
    # (it raised an AttributeError from sympy before the bound was read as None).
    m = torch.nn.Linear(8, 4).eval()
    cm = ftuner.compile(m, (torch.randn(3, 8),), dynamic_shapes=({0: Dim("n")},))
    x = torch.randn(5000, 8)
    with torch.no_grad():
        ref = m(x)
    assert (cm(x) - ref).abs().max().item() < 1e-4
    with pytest.raises(ValueError, match="dim 1"):
        cm(torch.randn(3, 9))


def test_compile_logs_phases(caplog):
    caplog.set_level(logging.INFO, logger="ftuner")
    cm = ftuner.compile(torch.nn.Linear(8, 8), (torch.randn(2, 8),), dynamic_shapes=({0: Dim("n", max=64)},))
    text = caplog.text
    for phase in ["torch.export", "torch-mlir import", "ftuner passes", "ftuner codegen", "compiled Linear"]:
        assert phase in text
    # The codegen split into its phases (bufferize ... LLVM on every core).
    for phase in ["bufferize", "to llvm dialect", "llvm ir", "llvm optimization and machine code", "link"]:
        assert f"ftuner codegen: {phase}" in cm.compile_seconds


def test_pass_remarks_go_to_logging_not_stderr(caplog, capfd):
    # ollie-derive says why it keeps a convolution (a remark at the op); the package hands
    # that to the `ftuner` logger instead of printing it on the process's stderr.
    caplog.set_level(logging.INFO, logger="ftuner")
    m = torch.nn.Conv2d(16, 16, 3, padding=1).eval()
    ftuner.compile(m, (torch.randn(2, 16, 20, 20),), dynamic_shapes=({0: Dim("b", max=8)},))
    assert "remark: ollie-derive: kept" in caplog.text
    assert "remark" not in capfd.readouterr().err


def test_compile_error_has_location():
    bad = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = \"test.unknown\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"
    with pytest.raises(ftuner.CompileError, match=r"bad\.mlir:2:8: error: .*test\.unknown"):
        ftuner.compile_mlir(bad, file="bad.mlir")


def test_compile_mlir_example():
    import pathlib

    src = (pathlib.Path(__file__).parents[2] / "examples" / "dense_dynamic.mlir").read_text()
    torch.manual_seed(1)
    w, b = torch.randn(2304, 768) * 0.02, torch.randn(2304)
    cm = ftuner.compile_mlir(src, weights=[w, b], weight_args=[1, 2], file="dense_dynamic.mlir")
    x = torch.randn(37, 768)
    ref = x @ w.t() + b
    assert (cm(x) - ref).abs().max().item() < 1e-3


def test_compile_leaves_module_modes_alone():
    # A wrapper in training mode around a model in eval mode (dropout off): compiling must
    # not turn the inner model's dropout on.
    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5)).eval()

        def forward(self, x):
            return self.inner(x)

    w = Wrap()
    assert w.training and not w.inner.training
    ftuner.compile(w, (torch.randn(2, 8),))
    assert w.training and not w.inner.training and not w.inner[1].training


def test_derivations_on_by_default():
    # OLLIE's derivations turn the DCGAN generator's transposed convolutions into matmuls
    # (and col2im eOperators); derive=False keeps them convolutions. Both match eager.
    from ftuner import zoo

    case = zoo.get("dcgan", reduced=True)
    x = case.make(batch=3)
    kinds = {}
    for derive in (True, False):
        cm = ftuner.compile(case.model, case.example, dynamic_shapes=case.dynamic_shapes, derive=derive)
        kinds[derive] = [p["kind"] for p in ftuner.explain(cm)]
        assert torch.allclose(cm(*x), case.model(*x), rtol=1e-4, atol=1e-7)
    assert "matmul" in kinds[True]
    assert "matmul" not in kinds[False]


_SLICE = """func.func @f(%t: tensor<?x64xf32>, %u: tensor<?xf32>) -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : index
  %o = tensor.dim %u, %c0 : tensor<?xf32>
  %r = tensor.extract_slice %t[%o, 0] [16, 64] [1, 1] : tensor<?x64xf32> to tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}
"""


def test_failed_run_time_check_is_an_exception(tmp_path):
    # A slice at an offset known only at run time: out of bounds it is a Python exception
    # naming the op and its location (before: an abort of the process, or a read past the
    # buffer), and the model keeps working after it; the same through a saved library.
    cm = ftuner.compile_mlir(_SLICE, file="slice.mlir")
    t = torch.randn(20, 64)
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"run-time check failed: 'tensor.extract_slice' op at slice\.mlir:4:8"):
            cm(t, torch.zeros(5))
        assert torch.equal(cm(t, torch.zeros(4)), t[4:20])
    lm = ftuner.load(ftuner.save(cm, tmp_path / "libslice.so"))
    with pytest.raises(RuntimeError, match=r"failed \(3\): run-time check failed: 'tensor.extract_slice' op at slice\.mlir:4:8"):
        lm(t, torch.zeros(5))
    assert torch.equal(lm(t, torch.zeros(4)), t[4:20])


def test_grouped_and_1d_convolutions():
    # torch-mlir writes a Conv1d as a 2-D convolution of width 1 and a grouped one as
    # linalg.conv_2d_ngchw_gfchw: an op that is one spec entry (its maps and body as
    # data). Strided and dilated, grouped 2-D too, against eager at lengths around the
    # dynamic dim's range.
    from conftest import compare, double_model, to_double

    class Convs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv1d(8, 16, 3, stride=2, dilation=2)
            self.g1 = torch.nn.Conv1d(16, 8, 3, groups=4, padding=1, stride=2, dilation=2)
            self.g2 = torch.nn.Conv2d(4, 8, (3, 2), groups=2, padding=1, stride=(1, 2), dilation=(2, 1))

        def forward(self, x, y):
            return torch.relu(self.g1(torch.relu(self.c1(x)))), self.g2(y)

    torch.manual_seed(0)
    m = Convs().eval()
    L = Dim("L", min=16, max=200)
    ex = (torch.randn(2, 8, 37), torch.randn(1, 4, 9, 9))
    cm = ftuner.compile(m, ex, dynamic_shapes={"x": {2: L}, "y": None})
    m64 = double_model(m)
    for n in (16, 17, 64, 199, 200):
        args = (torch.randn(2, 8, n), torch.randn(1, 4, 9, 9))
        with torch.no_grad():
            ratio, worst = compare(cm(*args), m(*args), m64(*to_double(args)))
        assert ratio <= 1.0, (n, ratio, worst)
