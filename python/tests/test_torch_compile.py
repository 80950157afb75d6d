"""torch.compile(model, backend="ftuner", dynamic=True)."""

import warnings

import pytest
import torch

import ftuner  # noqa: F401 - registers the backend (the entry point does too)
from ftuner import zoo

from conftest import compare, double_model, to_double


def test_backend_is_registered():
    from torch._dynamo import list_backends

    assert "ftuner" in list_backends(exclude_tags=())


def test_mlp_every_size_and_weight_updates():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4)).eval()
    c = torch.compile(m, backend="ftuner", dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no fallback to PyTorch
        with torch.no_grad():
            for n in [3, 5, 17, 64, 1]:
                x = torch.randn(n, 8)
                assert (c(x) - m(x)).abs().max().item() < 1e-5
            # Weights written in place are prepared again before the next call.
            m[0].weight.mul_(2)
            x = torch.randn(6, 8)
            assert (c(x) - m(x)).abs().max().item() < 1e-5


@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_transformer(name):
    case = zoo.get(name, reduced=True)
    c = torch.compile(case.model, backend="ftuner", dynamic=True)
    m64 = double_model(case.model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        for p in [{k: v[1] for k, v in case.dims.items()}, {k: 5 for k in case.dims}]:
            x = case.make(**p)
            with torch.no_grad():
                out, ref32, ref64 = c(*x), case.model(*x), m64(*to_double(x))
            ratio, worst = compare(out, ref32, ref64)
            assert ratio <= 1.0, f"{name} at {p}: {worst}"
