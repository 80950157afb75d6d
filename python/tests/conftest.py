import copy
import functools

import pytest


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", help="whole models at their full sizes (not the reduced CI configurations)")


@pytest.fixture(scope="session")
def full(request):
    return request.config.getoption("--full")


def f32_tolerance(t32, t64):
    """The tolerance of one output: a small multiple of the error PyTorch's own f32
    computation makes against an f64 evaluation of the same model (its rounding error,
    measured), with a floor of a few f32 ulps of the output's magnitude."""
    import torch

    eps = torch.finfo(torch.float32).eps
    scale = t64.abs().max().item() if t64.numel() else 0.0
    return 8.0 * (t32.double() - t64).abs().max().item() + 32.0 * eps * scale


def compare(out, ref32, ref64):
    """Max |out - ref64| / tolerance over all output leaves (<= 1 passes), and the worst
    absolute error."""
    import torch.utils._pytree as pytree

    ratios, worst = [], 0.0
    for o, a, b in zip(pytree.tree_leaves(out), pytree.tree_leaves(ref32), pytree.tree_leaves(ref64)):
        err = (o.double() - b.double()).abs().max().item() if o.numel() else 0.0
        tol = f32_tolerance(a, b.double())
        ratios.append(err / tol if tol > 0 else (0.0 if err == 0 else float("inf")))
        worst = max(worst, err)
    return max(ratios), worst


def double_model(model):
    m = copy.deepcopy(model).double()
    return m


def to_double(args):
    import torch

    return tuple(a.double() if torch.is_floating_point(a) else a for a in args)
