"""ftuner.save / ftuner.load: a compiled model as a shared library with a C header,
used from Python again and from a C program (no Python, no ftuner)."""

import os
import pathlib
import shutil
import subprocess
import sys

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
        return {"y": self.b(torch.tanh(self.a(x))), "rows": x.sum(1)}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    torch.manual_seed(0)
    m = MLP().eval()
    cm = ftuner.compile(m, (torch.randn(4, 32),), dynamic_shapes=({0: Dim("rows", min=1, max=1000)},))
    d = tmp_path_factory.mktemp("lib")
    path = ftuner.save(cm, d / "libmlp.so")
    return m, path


@pytest.mark.parametrize("rows", [1, 13, 64, 1000])
def test_loaded_matches_eager(saved, rows):
    m, path = saved
    lm = ftuner.load(path)
    x = torch.randn(rows, 32)
    with torch.no_grad():
        ref = m(x)
    out = lm(x)
    assert set(out) == {"y", "rows"}
    assert (out["y"] - ref["y"]).abs().max().item() < 1e-5
    assert (out["rows"] - ref["rows"]).abs().max().item() < 1e-4
    out_np = lm(x.numpy())
    assert isinstance(out_np["y"], np.ndarray)


def test_loaded_checks_shapes(saved):
    _, path = saved
    lm = ftuner.load(path)
    with pytest.raises(ftuner.ShapeError, match=r"outside the range \[1, 1000\] of dim 'rows'"):
        lm(torch.randn(1001, 32))
    with pytest.raises(ftuner.ShapeError, match="dim 1 is 31"):
        lm(torch.randn(3, 31))


def test_header_and_signature(saved):
    _, path = saved
    h = pathlib.Path(path).with_name("mlp.h").read_text()
    assert "int mlp_run(const ftuner_tensor *inputs" in h
    assert "void mlp_free(ftuner_tensor *t);" in h
    lm = ftuner.load(path)
    assert lm.signature["inputs"] == [{"dtype": "float32", "dims": [["rows", 1, 1000], 32]}]


C_MAIN = r"""
#include "mlp.h"
#include <stdio.h>
int main(void) {
  float x[3 * 32];
  for (int i = 0; i < 3 * 32; i++) x[i] = (float)(i % 7) * 0.25f - 0.5f;
  ftuner_tensor in[1] = {{x, 0, FTUNER_F32, 2, {3, 32}}};
  ftuner_tensor out[MLP_NUM_OUTPUTS];
  char err[256];
  int rc = mlp_run(in, 1, out, MLP_NUM_OUTPUTS, err, sizeof err);
  if (rc) { printf("error %d: %s\n", rc, err); return 1; }
  for (int i = 0; i < 3 * 16; i++) printf("%.6f\n", ((float *)out[0].data)[i]);
  for (int k = 0; k < MLP_NUM_OUTPUTS; k++) mlp_free(&out[k]);
  ftuner_tensor bad[1] = {{x, 0, FTUNER_F32, 2, {3, 31}}};
  rc = mlp_run(bad, 1, out, MLP_NUM_OUTPUTS, err, sizeof err);
  printf("rc %d: %s\n", rc, err);
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_c_program_links_the_library(saved, tmp_path):
    m, path = saved
    src = tmp_path / "main.c"
    src.write_text(C_MAIN)
    exe = tmp_path / "main"
    d = pathlib.Path(path).parent
    subprocess.run(["cc", str(src), f"-I{d}", f"-L{d}", "-lmlp", f"-Wl,-rpath,{d}", "-o", str(exe)], check=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    x = torch.tensor([(i % 7) * 0.25 - 0.5 for i in range(3 * 32)], dtype=torch.float32).reshape(3, 32)
    with torch.no_grad():
        ref = m(x)["y"].reshape(-1)
    got = torch.tensor([float(v) for v in lines[:48]])
    assert (got - ref).abs().max().item() < 1e-5
    assert lines[48] == "rc 1: input 0 dim 1 is 31, the model takes 32"


OUTPUT_MODULE = '''
import dataclasses
import torch


@dataclasses.dataclass
class Out:
    y: torch.Tensor


torch.export.register_dataclass(Out, serialized_type_name="ftuner_test_outputs.Out")
'''


def test_load_imports_the_output_class(tmp_path):
    """A model returning its own output class (as Hugging Face models do) loads in a
    process that has not imported the class's module: `load` imports it."""
    (tmp_path / "ftuner_test_outputs.py").write_text(OUTPUT_MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        import ftuner_test_outputs

        class M(torch.nn.Module):
            def forward(self, x):
                return ftuner_test_outputs.Out(y=x * 2)

        cm = ftuner.compile(M(), (torch.randn(3, 4),), dynamic_shapes=({0: Dim("n", min=1, max=64)},))
        path = ftuner.save(cm, tmp_path / "libout.so")
    finally:
        sys.path.remove(str(tmp_path))
    script = (
        "import sys, torch, ftuner\n"
        f"m = ftuner.load({str(path)!r})\n"
        "out = m(torch.ones(5, 4))\n"
        "print(type(out).__name__, float(out.y.sum()))\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tmp_path) + ":" + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["Out", "40.0"]


class Big(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 2.0 + 1.0, x.sum(1)


def test_large_blocks_are_reused_without_overwriting_live_outputs(tmp_path):
    # Outputs of 12 MiB come from the library's caching allocator: a freed output's block
    # is reused by the next call, one still alive is not.
    cm = ftuner.compile(Big(), (torch.randn(4, 1024),), dynamic_shapes=({0: Dim("rows", min=1, max=8192)},))
    lib = ftuner.load(ftuner.save(cm, tmp_path / "libbig.so"))
    xs = [torch.randn(3072, 1024) for _ in range(4)]
    kept = [lib(xs[0]), lib(xs[1])]
    for _ in range(3):
        lib(xs[2])  # freed at once: its block goes back to the cache and comes out again
    last = lib(xs[3])
    for x, (y, s) in zip(xs[:2] + xs[3:], kept + [last]):
        torch.testing.assert_close(y, torch.tanh(x) * 2.0 + 1.0, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(s, x.sum(1), rtol=1e-4, atol=1e-3)


def _aot_workers():
    """Threads of this process named ftuner-aot (a saved library's pool workers)."""
    n = 0
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/comm") as f:
                n += f.read().strip() == "ftuner-aot"
        except OSError:
            pass
    return n


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="no /proc")
def test_loaded_library_runs_its_parallel_loops_on_its_own_threads(tmp_path):
    """The library's parallel loops run on its own thread pool, as many threads as
    ftuner.set_num_threads says (workers started at the first parallel call; a library
    compiled serially starts none), with the same results on one thread and several."""
    torch.manual_seed(1)
    m = MLP().eval()
    cm = ftuner.compile(m, (torch.randn(4, 32),), dynamic_shapes=({0: Dim("rows", min=1, max=1000)},))
    lib = ftuner.load(ftuner.save(cm, tmp_path / "libthreads.so"))
    x = torch.randn(1000, 32)
    before = ftuner.num_threads()
    try:
        ftuner.set_num_threads(1)
        one = lib(x)
        workers = _aot_workers()
        ftuner.set_num_threads(3)
        three = lib(x)
        assert _aot_workers() - workers == 2, "the library started no workers: its loops ran serially"
        assert getattr(lib._lib, f"{lib.name}_num_threads")() == 3
        torch.testing.assert_close(three["y"], one["y"], rtol=0, atol=0)
        torch.testing.assert_close(three["rows"], one["rows"], rtol=0, atol=0)
    finally:
        ftuner.set_num_threads(before)
