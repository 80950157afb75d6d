"""The export to linalg: programs imported as torch.export traced them (no decomposition
pass), in-place ops rewritten into functional ones, and the decomposed import for the rest."""

import torch
from torch.export import Dim

import ftuner
from ftuner import _export


def _check(model, x, dynamic_shapes):
    with torch.no_grad():
        ref = model(x.clone())
    ex = _export.export(model, (x,), dynamic_shapes)
    out = ftuner.compile(model, (x,), dynamic_shapes=dynamic_shapes)(x.clone())
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    return ex


class Mutating(torch.nn.Module):
    """A conv's output mutated twice in place, then read through its first name."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.skip = torch.nn.Conv2d(3, 8, 1)

    def forward(self, x):
        y = self.conv(x)
        torch.relu_(y)
        y += self.skip(x)
        return y * 2


def test_inplace_ops_become_functional():
    torch.manual_seed(0)
    m = Mutating().eval()
    ds = ({0: Dim("b", min=1, max=8)},)
    ex = _check(m, torch.randn(2, 3, 10, 10), ds)
    assert ex.decomposed is None, ex.decomposed
    # Both in-place ops were rewritten: the ReLU's result feeds the add, the add's the mul.
    assert "torch.aten" not in ex.text and "linalg.conv_2d_nchw_fchw" in ex.text


class ViewThenMutate(torch.nn.Module):
    """A view taken before an in-place op sees the mutation: not rewritten."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 1)

    def forward(self, x):
        y = self.conv(x)
        v = y.view(y.shape[0], -1)
        torch.relu_(y)
        return v * 1.0


def test_mutated_view_takes_the_decomposed_import():
    torch.manual_seed(0)
    m = ViewThenMutate().eval()
    ex = _check(m, torch.randn(2, 3, 5, 5), ({0: Dim("b", min=1, max=8)},))
    assert ex.decomposed is not None and "view" in ex.decomposed, ex.decomposed


class Cumulative(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, 1) + x.sum(1, keepdim=True)


def test_other_ops_take_the_decomposed_import():
    x = torch.randn(3, 17)
    ex = _check(Cumulative(), x, ({1: Dim("n", min=2, max=64)},))
    # The masked sum cumsum was written out as while tracing (aten.le, aten.sum) is not
    # among the ops imported as traced; no tm_tensor.scan reaches ftuner either way. (Its
    # 1 x K x N mask, read at a constant index, was patched and never lowered before.)
    assert ex.decomposed is not None and "not among the ops imported" in ex.decomposed, ex.decomposed
    assert "tm_tensor" not in ex.text


def test_cumsum_is_written_out_while_tracing():
    with torch.no_grad(), _export._trace_forms():
        prog = torch.export.export(Cumulative(), (torch.randn(3, 17),), strict=False)
    targets = {str(n.target) for n in prog.graph.nodes if n.op == "call_function"}
    assert not any("cumsum" in t for t in targets), targets


class Attention(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, q, k, v, mask):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, **self.kw)


class Causal(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(query=q, key=k, value=v, is_causal=True,
                                                                scale=0.3)


def _attention_inputs(float_mask=False):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 9, 16) for _ in range(3))
    mask = torch.rand(2, 1, 9, 9) > 0.3
    mask[0, 0, 3] = False  # a row with every key masked: zeros, as torch gives it
    if float_mask:
        mask = torch.where(mask, 0.0, -1e4)
    return q, k, v, mask


def test_attention_is_written_out_while_tracing():
    s = Dim("s", min=2, max=64)
    ds = tuple({2: s} for _ in range(3)) + ({2: s, 3: s},)
    for float_mask in (False, True):
        args = _attention_inputs(float_mask)
        m = Attention()
        with torch.no_grad():
            ref = m(*args)
        ex = _export.export(m, args, ds)
        # Imported as traced: the mode wrote attention out (torch-mlir would emit
        # tm_tensor.attention, and the decomposed import would not be taken).
        assert ex.decomposed is None, ex.decomposed
        assert "tm_tensor" not in ex.text
        out = ftuner.compile(m, args, dynamic_shapes=ds)(*args)
        assert not out.isnan().any()
        torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


def test_causal_attention_by_keywords():
    q, k, v, _ = _attention_inputs()
    s = Dim("s", min=2, max=64)
    ds = tuple({2: s} for _ in range(3))
    m = Causal()
    ex = _export.export(m, (q, k, v), ds)
    # Written out (keywords and all): its causal mask (aten.ones, aten.tril) then takes the
    # decomposed import.
    assert "tm_tensor" not in ex.text and "aten.ones" in (ex.decomposed or ""), ex.decomposed
    out = ftuner.compile(m, (q, k, v), dynamic_shapes=ds)(q, k, v)
    with torch.no_grad():
        torch.testing.assert_close(out, m(q, k, v), rtol=1e-5, atol=1e-5)
