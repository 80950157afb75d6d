"""The whole models ftuner is tested and benchmarked on, built from configs with random
weights (nothing is downloaded): BERT-base, GPT-2 small, ResNet-50, MobileNetV2 and the
DCGAN generator, each with its dynamic dims.

`get(name, reduced=False)` returns a `Case`: the model (eval mode, fixed seed), example
inputs, the `dynamic_shapes` to export with, and a function making inputs at given sizes
of the dynamic dims. `reduced=True` gives the smaller configurations CI runs (fewer layers
or narrower), with the same ops and the same dynamic dims.
"""

from __future__ import annotations

import dataclasses
from typing import Callable


@dataclasses.dataclass
class Case:
    name: str
    model: object
    example: tuple
    dynamic_shapes: object
    # dim name -> (min, max) of each dynamic dim
    dims: dict
    # sizes of the dynamic dims -> the inputs
    make: Callable


def _seed():
    import torch

    torch.manual_seed(0)


def bert(reduced=False):
    import torch
    from torch.export import Dim
    from transformers import BertConfig, BertModel

    _seed()
    cfg = BertConfig(num_hidden_layers=2 if reduced else 12)
    m = BertModel(cfg).eval()
    dims = {"batch": (1, 8), "seq": (2, 64)} if reduced else {"batch": (1, 64), "seq": (2, 512)}
    ds = ({0: Dim("batch", min=dims["batch"][0], max=dims["batch"][1]),
           1: Dim("seq", min=dims["seq"][0], max=dims["seq"][1])},)

    def make(batch=1, seq=16):
        g = torch.Generator().manual_seed(batch * 1000 + seq)
        return (torch.randint(0, cfg.vocab_size, (batch, seq), generator=g),)

    return Case("bert", m, make(2, 16), ds, dims, make)


def sizes_to_test(lo, hi):
    """1 (or the minimum), a prime, a power of two and the maximum of a dynamic dim."""
    primes = [p for p in (3, 5, 7, 11, 13, 17, 23, 31, 37, 53, 61, 97, 127, 251, 509) if lo < p < hi]
    pow2 = [1 << k for k in range(1, 20) if lo < (1 << k) < hi]
    out = [lo]
    if primes:
        out.append(primes[len(primes) // 2])
    if pow2:
        out.append(pow2[len(pow2) // 2])
    out.append(hi)
    return sorted(set(out))


def gpt2(reduced=False):
    import torch
    from torch.export import Dim
    from transformers import GPT2Config, GPT2Model

    _seed()
    cfg = GPT2Config(n_layer=2 if reduced else 12, use_cache=False)
    m = GPT2Model(cfg).eval()
    dims = {"seq": (2, 64)} if reduced else {"seq": (2, 1024)}
    ds = ({1: Dim("seq", min=dims["seq"][0], max=dims["seq"][1])},)

    def make(seq=16):
        g = torch.Generator().manual_seed(seq)
        return (torch.randint(0, cfg.vocab_size, (1, seq), generator=g),)

    return Case("gpt2", m, make(16), ds, dims, make)


def resnet50(reduced=False):
    import torch
    import torchvision
    from torch.export import Dim

    _seed()
    if reduced:
        m = torchvision.models.resnet.ResNet(torchvision.models.resnet.Bottleneck, [1, 1, 1, 1])
    else:
        m = torchvision.models.resnet50()
    m = m.eval()
    dims = {"batch": (1, 8)} if reduced else {"batch": (1, 64)}
    ds = ({0: Dim("batch", min=1, max=dims["batch"][1])},)

    def make(batch=1):
        g = torch.Generator().manual_seed(batch)
        return (torch.randn(batch, 3, 224 if not reduced else 64, 224 if not reduced else 64, generator=g),)

    return Case("resnet50", m, make(2), ds, dims, make)


def mobilenet_v2(reduced=False):
    import torch
    import torchvision
    from torch.export import Dim

    _seed()
    m = torchvision.models.mobilenet_v2(width_mult=0.5 if reduced else 1.0).eval()
    dims = {"batch": (1, 8)} if reduced else {"batch": (1, 64)}
    ds = ({0: Dim("batch", min=1, max=dims["batch"][1])},)

    def make(batch=1):
        g = torch.Generator().manual_seed(batch)
        side = 64 if reduced else 224
        return (torch.randn(batch, 3, side, side, generator=g),)

    return Case("mobilenet_v2", m, make(2), ds, dims, make)


class DCGANGenerator:
    """The DCGAN generator (Radford et al.): z (nz x 1 x 1) to a 3 x 64 x 64 image."""

    @staticmethod
    def build(nz=100, ngf=64):
        import torch.nn as nn

        return nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 8),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False),
            nn.Tanh(),
        )


def dcgan(reduced=False):
    import torch
    from torch.export import Dim

    _seed()
    m = DCGANGenerator.build(ngf=16 if reduced else 64).eval()
    dims = {"batch": (1, 16)} if reduced else {"batch": (1, 256)}
    ds = ({0: Dim("batch", min=1, max=dims["batch"][1])},)

    def make(batch=1):
        g = torch.Generator().manual_seed(batch)
        return (torch.randn(batch, 100, 1, 1, generator=g),)

    return Case("dcgan", m, make(2), ds, dims, make)


MODELS = {
    "bert": bert,
    "gpt2": gpt2,
    "resnet50": resnet50,
    "mobilenet_v2": mobilenet_v2,
    "dcgan": dcgan,
}


def get(name, reduced=False) -> Case:
    try:
        return MODELS[name](reduced)
    except KeyError:
        raise KeyError(f"no model '{name}': one of {sorted(MODELS)}") from None
