"""Whole models against PyTorch eager: BERT, GPT-2, ResNet-50, MobileNetV2, the DCGAN
generator, each compiled once with its dynamic dims and run at several sizes of each
(the minimum, a prime, a power of two, the maximum), with a tolerance derived from the
f32 error of each output; one past the range is a ShapeError.

CI runs the reduced configurations (ftuner.zoo, reduced=True); `pytest --full` the real
sizes.
"""

import itertools

import pytest
import torch

import ftuner
from ftuner import zoo

from conftest import compare, double_model, to_double

WORST = {}


@pytest.fixture(scope="module", params=sorted(zoo.MODELS))
def compiled(request, full):
    case = zoo.get(request.param, reduced=not full)
    cm = ftuner.compile(case.model, case.example, dynamic_shapes=case.dynamic_shapes)
    return case, cm, double_model(case.model)


def points(case):
    """Each dim at each of its test sizes, the others at their smallest."""
    names = list(case.dims)
    base = {n: case.dims[n][0] for n in names}
    out = []
    for n in names:
        for s in zoo.sizes_to_test(*case.dims[n]):
            p = dict(base)
            p[n] = s
            out.append(p)
    return out


def test_model_matches_eager(compiled):
    case, cm, m64 = compiled
    for p in points(case):
        x = case.make(**p)
        with torch.no_grad():
            ref32 = case.model(*x)
            ref64 = m64(*to_double(x))
        out = cm(*x)
        ratio, worst = compare(out, ref32, ref64)
        WORST[case.name] = max(WORST.get(case.name, 0.0), worst)
        assert ratio <= 1.0, f"{case.name} at {p}: error {worst:.3g} is {ratio:.2f}x the f32 tolerance"
    assert cm.calls == len(points(case))


def test_one_compilation_serves_every_size(compiled):
    case, cm, _ = compiled
    before = cm.calls
    n = 0
    for p in points(case)[:3]:
        cm(*case.make(**p))
        n += 1
    assert cm.calls == before + n
    assert cm.program is compiled[1].program


def test_outside_the_range_is_a_shape_error(compiled):
    case, cm, _ = compiled
    for name, (lo, hi) in case.dims.items():
        p = {n: case.dims[n][0] for n in case.dims}
        p[name] = hi + 1
        with pytest.raises(ftuner.ShapeError, match=f"outside the range \\[{lo}, {hi}\\] of dim '{name}'"):
            cm(*case.make(**p))
