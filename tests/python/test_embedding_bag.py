"""F.embedding_bag / nn.EmbeddingBag, scale_grad_by_freq (embedding and
embedding_bag), F.linear_cross_entropy and F.max_pool*d_with_indices,
against torch: values and gradients, the bag edge cases (empty bags,
padding-only bags, include_last_offset, 2-D input) and the errors."""
import pytest
import torch

import fastt
import fastt.nn.functional as F
from torch_ref import Fz


def T(f):
    return torch.from_dlpack(f.detach())


def close(f, t, tol=1e-6):
    assert tuple(f.shape) == tuple(t.shape), (f.shape, t.shape)
    torch.testing.assert_close(T(f), t.detach(), rtol=tol, atol=tol)


W = torch.randn(10, 4, dtype=torch.float64)
IDX = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets,last", [
    ([0, 3, 3, 7], False),       # an empty bag in the middle
    ([0, 4, 10], True),          # the last offset ends the last bag
    # (a last offset short of the input's length is ill-defined in torch:
    # its float32 kernel drops the rest, its float64 one keeps it)
    ([0], False)])
@pytest.mark.parametrize("padding_idx", [None, 4, -1])
def test_embedding_bag_1d_against_torch(mode, offsets, last, padding_idx):
    off = torch.tensor(offsets)
    w = W.clone().requires_grad_(True)
    fw = Fz(W, grad=True)
    t = torch.nn.functional.embedding_bag(
        IDX, w, off, mode=mode, include_last_offset=last,
        padding_idx=padding_idx)
    f = F.embedding_bag(Fz(IDX), fw, Fz(off), mode=mode,
                        include_last_offset=last, padding_idx=padding_idx)
    close(f, t)
    g = torch.randn(t.shape, dtype=torch.float64)
    t.backward(g)
    f.backward(Fz(g))
    close(fw.grad, w.grad)


def test_embedding_bag_2d_weights_and_freq():
    idx = torch.tensor([[1, 2, 2], [3, 2, 0]])
    psw = torch.rand(2, 3, dtype=torch.float64)
    w = W.clone().requires_grad_(True)
    fw = Fz(W, grad=True)
    t = torch.nn.functional.embedding_bag(idx, w, mode="sum",
                                          per_sample_weights=psw,
                                          scale_grad_by_freq=True)
    f = F.embedding_bag(Fz(idx), fw, mode="sum", per_sample_weights=Fz(psw),
                        scale_grad_by_freq=True)
    close(f, t)
    t.sum().backward()
    f.sum().backward()
    # each row's gradient over its count in the batch (row 2: / 3). Not
    # torch's embedding_bag gradient: its CPU backward gives the row after
    # a repeated one that row's count too (row 3 gets / 3 here), where
    # torch's own F.embedding(scale_grad_by_freq=True) is right
    w0 = W.clone().requires_grad_(True)
    torch.nn.functional.embedding_bag(idx, w0, mode="sum",
                                      per_sample_weights=psw).sum().backward()
    counts = torch.bincount(idx.reshape(-1), minlength=10).clamp(min=1)
    close(fw.grad, w0.grad / counts.unsqueeze(1))


def test_embedding_scale_grad_by_freq_module_and_function():
    idx = torch.tensor([[1, 1, 1, 3], [3, 0, 1, 7]])
    tm = torch.nn.Embedding(10, 4, scale_grad_by_freq=True).double()
    fm = fastt.nn.Embedding(10, 4, scale_grad_by_freq=True,
                            dtype=fastt.float64)
    with fastt.no_grad():
        fm.weight.copy_(Fz(tm.weight))
    tout, fout = tm(idx), fm(Fz(idx))
    close(fout, tout)  # the forward is unchanged
    tout.pow(2).sum().backward()
    fout.pow(2).sum().backward()
    close(fm.weight.grad, tm.weight.grad)
    # the function form, with padding
    w = W.clone().requires_grad_(True)
    fw = Fz(W, grad=True)
    torch.nn.functional.embedding(idx, w, padding_idx=3,
                                  scale_grad_by_freq=True).sum().backward()
    F.embedding(Fz(idx), fw, padding_idx=3,
                scale_grad_by_freq=True).sum().backward()
    close(fw.grad, w.grad)


def test_embedding_bag_module_and_16bit():
    tm = torch.nn.EmbeddingBag(10, 4, mode="max", padding_idx=0)
    fm = fastt.nn.EmbeddingBag(10, 4, mode="max", padding_idx=0)
    with fastt.no_grad():
        fm.weight.copy_(Fz(tm.weight))
    off = torch.tensor([0, 2, 2, 6])
    close(fm(Fz(IDX), Fz(off)), tm(IDX, off))
    assert "mode='max'" in repr(fm)
    for dt in (torch.float16, torch.bfloat16):
        w = W.to(dt)
        t = torch.nn.functional.embedding_bag(IDX, w, off, mode="mean")
        f = F.embedding_bag(Fz(IDX), Fz(w), Fz(off), mode="mean")
        assert f.dtype == Fz(w).dtype
        torch.testing.assert_close(T(f), t)  # float32 accumulation, as torch
    pre = fastt.nn.EmbeddingBag.from_pretrained(Fz(W.float()))
    assert not pre.weight.requires_grad


@pytest.mark.parametrize("call,err", [
    (lambda: F.embedding_bag(Fz(IDX), Fz(W)), ValueError),  # no offsets
    (lambda: F.embedding_bag(Fz(IDX.reshape(2, 5)), Fz(W),
                             Fz(torch.tensor([0]))), ValueError),
    (lambda: F.embedding_bag(Fz(IDX), Fz(W), Fz(torch.tensor([0])),
                             mode="median"), ValueError),
    (lambda: F.embedding_bag(Fz(IDX), Fz(W), Fz(torch.tensor([0])),
                             mode="mean",
                             per_sample_weights=Fz(torch.ones(10, dtype=torch.float64))),
     NotImplementedError),
    (lambda: F.embedding_bag(Fz(IDX), Fz(W), Fz(torch.tensor([1, 3]))),
     RuntimeError),  # offsets[0] != 0
    (lambda: F.embedding_bag(Fz(IDX), Fz(W), Fz(torch.tensor([0, 11]))),
     RuntimeError),
    (lambda: F.embedding_bag(Fz(IDX.double()), Fz(W), Fz(torch.tensor([0]))),
     RuntimeError),
    (lambda: F.embedding_bag(Fz(IDX), Fz(W[0]), Fz(torch.tensor([0]))),
     ValueError),
])
def test_embedding_bag_errors(call, err):
    with pytest.raises(err):
        call()


@pytest.mark.parametrize("shapes", [
    ((3,), (4, 3), ()), ((8, 3), (4, 3), (8,)), ((4, 3), (2, 3, 3), (4, 3)),
    ((8, 3), (4, 3), (8, 4))])  # the last: class-probability targets
@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"},
                                {"reduction": "none", "ignore_index": 1},
                                {"label_smoothing": 0.1}])
def test_linear_cross_entropy_against_torch(shapes, kw):
    xs, ws, ts = shapes
    x = torch.randn(xs, dtype=torch.float64, requires_grad=True)
    w = torch.randn(ws, dtype=torch.float64, requires_grad=True)
    b = torch.randn(ws[:-1], dtype=torch.float64, requires_grad=True)
    if len(ts) == len(xs) and ts and ts[-1] == ws[0] and len(ws) == 2:
        tgt = torch.softmax(torch.randn(ts, dtype=torch.float64), -1)
        kw = {k: v for k, v in kw.items() if k != "ignore_index"}
    else:
        tgt = torch.randint(0, ws[0], ts)
    fx, fw, fb = Fz(x, True), Fz(w, True), Fz(b, True)
    t = torch.nn.functional.linear_cross_entropy(x, w, tgt, linear_bias=b,
                                                 **kw)
    f = F.linear_cross_entropy(fx, fw, Fz(tgt), linear_bias=fb, **kw)
    close(f, t)
    t.sum().backward()
    f.sum().backward()
    for a, c in ((fx, x), (fw, w), (fb, b)):
        close(a.grad, c.grad)


def test_linear_cross_entropy_errors():
    x, w = fastt.ones(2, 3), fastt.ones(4, 3)
    t = fastt.tensor([0, 1])
    for call in (lambda: F.linear_cross_entropy(fastt.ones(2, 2, 3), w, t),
                 lambda: F.linear_cross_entropy(x, fastt.ones(3), t),
                 lambda: F.linear_cross_entropy(x, fastt.ones(4, 2), t),
                 lambda: F.linear_cross_entropy(
                     x, w, t, linear_bias=fastt.ones(3)),
                 lambda: F.linear_cross_entropy(
                     x, w, fastt.ones(2, 4), ignore_index=0),
                 lambda: F.linear_cross_entropy(
                     fastt.ones(3), fastt.ones(2, 4, 3), t)):
        with pytest.raises(RuntimeError, match="linear_cross_entropy"):
            call()


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_pool_with_indices_always_returns_both(nd):
    x = torch.randn((1, 2) + (6,) * nd, dtype=torch.float64)
    tf = getattr(torch.nn.functional, f"max_pool{nd}d_with_indices")
    ff = getattr(F, f"max_pool{nd}d_with_indices")
    tv, ti = tf(x, 2)
    fv, fi = ff(Fz(x), 2)
    close(fv, tv)
    assert T(fi).equal(ti)
