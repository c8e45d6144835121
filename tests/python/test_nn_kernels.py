"""The fused nn kernels (csrc/ops/nn.h) from Python: forward values against
torch.nn.functional and every backward against torch autograd gradients.
Add a parametrized case per new layout, option or dtype."""
import pytest

import fastt

torch = pytest.importorskip("torch")
F = torch.nn.functional
_C = fastt._C

DTYPES = {
    "float32": (fastt.float32, torch.float32, 2e-5),
    "float64": (fastt.float64, torch.float64, 1e-10),
    "float16": (fastt.float16, torch.float16, 4e-3),
    "bfloat16": (fastt.bfloat16, torch.bfloat16, 3e-2),
}


def to_fastt(t, dtype=None):
    """A torch tensor as a fastt tensor of the same (or given) dtype."""
    ft = fastt.tensor(t.detach().to(torch.float64).numpy())
    if t.dtype == torch.int64:
        ft = fastt.tensor(t.numpy())
    return ft.to(dtype) if dtype is not None else ft.to(
        {torch.float32: fastt.float32, torch.float64: fastt.float64,
         torch.float16: fastt.float16, torch.bfloat16: fastt.bfloat16,
         torch.int64: fastt.int64}[t.dtype])


def to_torch(f):
    if f is None:
        return None
    if f.dtype == fastt.int64:
        return torch.from_numpy(f.numpy())
    return torch.from_numpy(f.to(fastt.float64).numpy())


def close(got, want, tol):
    got = to_torch(got)
    want = want.detach().to(torch.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    torch.testing.assert_close(got, want, rtol=tol, atol=tol, equal_nan=True)


def rounded(shape, dtype, seed, lo=-2.0, hi=2.0):
    """Random torch float64 values already rounded to `dtype`."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo
    return x.to(DTYPES[dtype][1]).to(torch.float64)


# ---------------------------------------------------------------------------
# layer norm
# ---------------------------------------------------------------------------
LN_CASES = [
    ((45, 65), (65,)),
    ((2, 3, 4, 5), (4, 5)),
    ((9,), (9,)),
    ((0, 7), (7,)),
    ((3, 1), (1,)),
]


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape,nshape", LN_CASES)
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm_forward_backward(dtype, shape, nshape, affine):
    fdt, _, tol = DTYPES[dtype]
    x = rounded(shape, dtype, 1).requires_grad_()
    w = rounded(nshape, dtype, 2).requires_grad_() if affine != "none" else None
    b = rounded(nshape, dtype, 3).requires_grad_() if affine == "both" else None
    g = rounded(shape, dtype, 4)
    out = F.layer_norm(x, nshape, w, b, 1e-5)
    out.backward(g)
    fx = to_fastt(x, fdt)
    fw = to_fastt(w, fdt) if w is not None else None
    fb = to_fastt(b, fdt) if b is not None else None
    close(fastt.layer_norm(fx, nshape, fw, fb), out, tol * 10)
    o, mean, rstd = _C._layer_norm(fx, list(nshape), fw, fb, 1e-5)
    _, tmean, trstd = torch.ops.aten.native_layer_norm(x, nshape, w, b, 1e-5)
    assert tuple(mean.shape) == tuple(tmean.shape)
    assert mean.dtype == fdt and rstd.dtype == fdt
    close(mean, tmean, tol * 10)
    close(rstd, trstd, tol * 10)
    dx, dw, db = _C._layer_norm_backward(to_fastt(g, fdt), fx, nshape, mean,
                                         rstd, fw, fb, (True, True, True))
    gtol = 0.15 if dtype == "bfloat16" else tol * 100
    close(dx, x.grad, gtol)
    if w is None:
        assert dw is None
    else:
        close(dw, w.grad, gtol * 4)
    if b is None:
        assert db is None
    else:
        close(db, b.grad, gtol * 4)


def test_layer_norm_non_contiguous_and_masks():
    base = torch.randn(65, 45, dtype=torch.float64)
    x = base.t().requires_grad_()
    w = torch.randn(65, dtype=torch.float64, requires_grad=True)
    out = F.layer_norm(x, (65,), w, None)
    g = torch.randn(45, 65, dtype=torch.float64)
    out.backward(g)
    fx = to_fastt(base).t()
    assert not fx.is_contiguous()
    fw = to_fastt(w)
    o, mean, rstd = _C._layer_norm(fx, (65,), weight=fw)
    close(o, out, 1e-12)
    fg = to_fastt(g.t().contiguous()).t()
    dx, dw, db = _C._layer_norm_backward(fg, fx, (65,), mean, rstd, fw,
                                         output_mask=[False, True, True])
    assert dx is None and db is None
    close(dw, w.grad, 1e-10)
    # normalized_shape given as an int, keyword names like torch.
    close(fastt.layer_norm(input=fx, normalized_shape=65, weight=fw, eps=1e-5),
          out, 1e-12)


def test_layer_norm_errors():
    x = fastt.randn(4, 3)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        fastt.layer_norm(x, [4])
    with pytest.raises(RuntimeError, match="weight"):
        fastt.layer_norm(x, [3], fastt.randn(4))
    with pytest.raises(NotImplementedError, match="layer_norm: not "
                       "implemented for dtype 'int64' on device 'cpu'"):
        fastt.layer_norm(x.to(fastt.int64), [3])
    with pytest.raises(TypeError, match=r"layer_norm\(\) missing required "
                                        r"argument 'normalized_shape'"):
        fastt.layer_norm(x)


# ---------------------------------------------------------------------------
# RMS norm
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape,nshape", LN_CASES[:4])
@pytest.mark.parametrize("eps", [None, 1e-3])
@pytest.mark.parametrize("weighted", [False, True])
def test_rms_norm_forward_backward(dtype, shape, nshape, eps, weighted):
    fdt, tdt, tol = DTYPES[dtype]
    x = rounded(shape, dtype, 11).requires_grad_()
    w = rounded(nshape, dtype, 12).requires_grad_() if weighted else None
    g = rounded(shape, dtype, 13)
    # torch's default eps is finfo(input.dtype).eps: use the real dtype's.
    e = torch.finfo(tdt).eps if eps is None else eps
    out = F.rms_norm(x, nshape, w, e)
    out.backward(g)
    fx = to_fastt(x, fdt)
    fw = to_fastt(w, fdt) if weighted else None
    close(fastt.rms_norm(fx, nshape, fw, eps), out, tol * 10)
    o, rstd = _C._rms_norm(fx, nshape, fw, eps)
    assert rstd.dtype == (fastt.float64 if dtype == "float64"
                          else fastt.float32)
    assert tuple(rstd.shape) == tuple(shape[:len(shape) - len(nshape)]) + (
        1,) * len(nshape)
    dx, dw = _C._rms_norm_backward(to_fastt(g, fdt), fx, nshape, rstd, fw)
    gtol = 0.15 if dtype == "bfloat16" else tol * 100
    close(dx, x.grad, gtol)
    if weighted:
        close(dw, w.grad, gtol * 4)
    else:
        assert dw is None


# ---------------------------------------------------------------------------
# softmax backward
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape,dim", [((45, 65), 1), ((45, 65), 0),
                                       ((3, 5, 70), -2), ((7,), 0),
                                       ((0, 4), 1), ((), 0)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_backward(dtype, shape, dim, log):
    fdt, tdt, tol = DTYPES[dtype]
    x = rounded(shape, dtype, 21, -5, 5).to(tdt).requires_grad_()
    fn = torch.log_softmax if log else torch.softmax
    y = fn(x, dim)
    g = rounded(shape, dtype, 22).to(tdt)
    y.backward(g)
    backward = _C._log_softmax_backward if log else _C._softmax_backward
    fy = to_fastt(y, fdt)
    fg = to_fastt(g, fdt)
    if len(shape) == 2:  # a transposed grad gives the same result
        fg = to_fastt(g.t().contiguous(), fdt).t()
    got = backward(fg, fy, dim)
    close(got, x.grad.to(torch.float64), 0.05 if dtype == "bfloat16"
          else tol * 10)


def test_softmax_backward_errors():
    y = fastt.randn(3, 4)
    with pytest.raises(IndexError, match=r"softmax_backward: Dimension out "
                       r"of range \(expected to be in range of \[-2, 1\], "
                       r"but got 2\)"):
        _C._softmax_backward(y, y, 2)
    with pytest.raises(RuntimeError, match=r"log_softmax_backward: "
                       r"grad_output of shape \[3, 4\] does not match "
                       r"output of shape \[2, 4\]"):
        _C._log_softmax_backward(y, y[:2], 1)


# ---------------------------------------------------------------------------
# cross-entropy and NLL
# ---------------------------------------------------------------------------
CE_SHAPES = [(45, 65), (7, 10), (3, 5, 4, 2), (2, 6, 70), (9,), (0, 5)]


def make_targets(shape, classes, seed, ignore_index, ignore_some):
    g = torch.Generator().manual_seed(seed)
    tshape = () if len(shape) == 1 else (shape[0],) + tuple(shape[2:])
    t = torch.randint(0, classes, tshape, generator=g)
    if ignore_some and t.numel() > 1:
        t.view(-1)[::3] = ignore_index
    return t


@pytest.mark.parametrize("shape", CE_SHAPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("ignore", [None, 1])
def test_cross_entropy(shape, reduction, weighted, smoothing, ignore):
    C = shape[0] if len(shape) == 1 else shape[1]
    x = (torch.randn(shape, dtype=torch.float64) * 3).requires_grad_()
    ii = -100 if ignore is None else ignore
    t = make_targets(shape, C, 5, ii, ignore is not None)
    w = torch.rand(C, dtype=torch.float64) + 0.1 if weighted else None
    loss = F.cross_entropy(x, t, w, ignore_index=ii, reduction=reduction,
                           label_smoothing=smoothing)
    g = torch.randn(loss.shape, dtype=torch.float64)
    loss.backward(g)
    fx, ft = to_fastt(x), to_fastt(t)
    fw = to_fastt(w) if weighted else None
    kw = dict(reduction=reduction, label_smoothing=smoothing)
    if ignore is not None:
        kw["ignore_index"] = ii
    floss, lse = _C._cross_entropy(fx, ft, fw, **kw)
    close(floss, loss, 1e-10)
    close(lse, torch.logsumexp(x, 0 if len(shape) == 1 else 1), 1e-10)
    dx = _C._cross_entropy_backward(to_fastt(g), fx, ft, fw, lse=lse, **kw)
    close(dx, x.grad, 1e-10)
    # float32 agrees too.
    fx32 = fx.to(fastt.float32)
    fw32 = fw.to(fastt.float32) if weighted else None
    l32, lse32 = _C._cross_entropy(fx32, ft, fw32, **kw)
    close(l32, loss, 1e-4)
    dx32 = _C._cross_entropy_backward(to_fastt(g).to(fastt.float32), fx32,
                                      ft, fw32, lse=lse32, **kw)
    close(dx32, x.grad, 1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_cross_entropy_low_precision(dtype):
    fdt, tdt, tol = DTYPES[dtype]
    x = rounded((45, 65), dtype, 31, -4, 4).requires_grad_()
    t = make_targets((45, 65), 65, 32, -100, True)
    loss = F.cross_entropy(x, t, label_smoothing=0.1)
    loss.backward()
    floss, lse = _C._cross_entropy(to_fastt(x, fdt), to_fastt(t),
                                   label_smoothing=0.1)
    assert floss.dtype == fdt
    close(floss, loss, tol * 4)
    dx = _C._cross_entropy_backward(fastt.tensor(1.0).to(fdt),
                                    to_fastt(x, fdt), to_fastt(t),
                                    label_smoothing=0.1, lse=lse)
    close(dx, x.grad, tol)


def test_cross_entropy_large_logits_and_layouts():
    x = torch.tensor([[1e4, -1e4, 1e4 - 1], [-1e4, -1e4, -1e4 + 3]],
                     dtype=torch.float32, requires_grad=True)
    t = torch.tensor([0, 2])
    loss = F.cross_entropy(x, t, reduction="sum", label_smoothing=0.1)
    loss.backward()
    floss, lse = _C._cross_entropy(to_fastt(x), to_fastt(t), None, "sum",
                                   -100, 0.1)
    close(floss, loss, 1e-5)
    dx = _C._cross_entropy_backward(fastt.tensor(1.0), to_fastt(x),
                                    to_fastt(t), None, "sum", -100, 0.1, lse)
    close(dx, x.grad, 1e-6)
    # Non-contiguous logits and uint8 targets.
    base = torch.randn(10, 6, dtype=torch.float64)
    xt = base.t()
    tt = torch.tensor([1, 0, 9, 3, 3, 2])
    want = F.cross_entropy(xt, tt)
    got, _ = _C._cross_entropy(to_fastt(base).t(), to_fastt(tt).to(
        fastt.uint8))
    close(got, want, 1e-12)


def test_cross_entropy_errors():
    x = fastt.randn(4, 3)
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        _C._cross_entropy(x, fastt.tensor([0, 7, 1, 1]))
    with pytest.raises(ValueError, match="batch_size"):
        _C._cross_entropy(x, fastt.tensor([0, 1, 1]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        _C._cross_entropy(x, fastt.tensor([0, 1, 1, 1]), reduction="avg")
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        _C._cross_entropy(x, fastt.tensor([0, 1, 1, 1]), fastt.ones(4))
    with pytest.raises(RuntimeError, match="Long or Byte"):
        _C._cross_entropy(x, fastt.tensor([0, 1, 1, 1]).to(fastt.int32))
    with pytest.raises(RuntimeError, match="label_smoothing"):
        _C._cross_entropy(x, fastt.tensor([0, 1, 1, 1]),
                          label_smoothing=-0.5)
    with pytest.raises(TypeError, match="lse"):
        _C._cross_entropy_backward(fastt.tensor(1.0), x,
                                   fastt.tensor([0, 1, 1, 1]))


@pytest.mark.parametrize("shape", [(45, 65), (3, 5, 4, 2), (9,), (0, 4)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [None, 2])
def test_nll_loss(shape, reduction, weighted, ignore):
    C = shape[0] if len(shape) == 1 else shape[1]
    x = torch.randn(shape, dtype=torch.float64).requires_grad_()
    ii = -100 if ignore is None else ignore
    t = make_targets(shape, C, 7, ii, ignore is not None)
    w = torch.rand(C, dtype=torch.float64) + 0.1 if weighted else None
    loss = F.nll_loss(x, t, w, ignore_index=ii, reduction=reduction)
    g = torch.randn(loss.shape, dtype=torch.float64)
    loss.backward(g)
    fx, ft = to_fastt(x), to_fastt(t)
    fw = to_fastt(w) if weighted else None
    floss, tw = _C._nll_loss(fx, ft, fw, reduction, ii)
    close(floss, loss, 1e-10)
    keep = t != ii
    wt = (w[t.clamp(0)] if weighted else torch.ones(t.shape,
                                                     dtype=torch.float64))
    ttw = (wt * keep).sum() if reduction != "none" else torch.tensor(0.0)
    close(tw, ttw, 1e-10)
    dx = _C._nll_loss_backward(to_fastt(g), fx, ft, fw, reduction, ii, tw)
    close(dx, x.grad, 1e-10)


# ---------------------------------------------------------------------------
# embedding backward
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("padding_idx", [None, 3])
@pytest.mark.parametrize("ishape", [(5, 9), (40,), (0,)])
def test_embedding_backward(dtype, padding_idx, ishape):
    fdt, tdt, tol = DTYPES[dtype]
    weight = torch.randn(7, 6, dtype=torch.float64, requires_grad=True)
    idx = torch.randint(0, 7, ishape)
    out = F.embedding(idx, weight, padding_idx=padding_idx)
    g = rounded(out.shape, dtype, 41)
    out.backward(g)
    got = _C._embedding_backward(to_fastt(g, fdt), to_fastt(idx), 7,
                                 -1 if padding_idx is None else padding_idx)
    assert got.dtype == fdt
    close(got, weight.grad, tol * 10)


def test_embedding_backward_errors():
    with pytest.raises(IndexError, match=r"embedding_backward: index out of "
                       r"range in self \(index 5, num_weights 4\)"):
        _C._embedding_backward(fastt.randn(2, 3), fastt.tensor([0, 5]), 4)
    with pytest.raises(RuntimeError, match=r"embedding_backward: expected "
                       r"grad of shape indices.shape \+ \[embedding_dim\] "
                       r"\(indices \[2\]\), but got \[3, 3\]"):
        _C._embedding_backward(fastt.randn(3, 3), fastt.tensor([0, 1]), 4)
