"""F.interpolate's linear modes (linear, bilinear, bicubic, trilinear)
against torch, and the resample kernel under them (csrc/ops/index.h:
each output position a weighted sum of K taps along one dim, its adjoint
the gradient): sizes and scale factors up and down, align_corners both
ways, 1-wide inputs and outputs, strided and channels-last inputs, rows
long enough for the threaded paths, float32 and float64, gradients and
second gradients, the composition other devices run, and bad arguments.
The OpInfo suite (test_opinfo.py) runs torch's own samples on top."""
import math

import pytest
import torch

import fastt
import fastt.nn.functional as F
from fastt import _C
from torch_ref import Fz


def T(f):
    return torch.from_dlpack(f.detach())


CASES = [
    ("linear", (2, 3, 7), {"size": 12}),
    ("linear", (1, 2, 9), {"scale_factor": 0.5}),
    ("linear", (1, 1, 1), {"size": 5}),
    ("linear", (1, 1, 6), {"size": 1}),
    ("bilinear", (2, 3, 5, 7), {"scale_factor": 2}),
    ("bilinear", (1, 2, 9, 16), {"size": (4, 5)}),
    ("bilinear", (1, 1, 5, 6), {"scale_factor": (2.5, 0.5),
                                "recompute_scale_factor": True}),
    ("bilinear", (1, 2, 3, 3), {"scale_factor": 1.7}),
    ("bicubic", (2, 2, 6, 5), {"size": (11, 3)}),
    ("bicubic", (1, 1, 8, 8), {"scale_factor": 0.75}),
    ("bicubic", (1, 1, 1, 4), {"size": (3, 9)}),
    ("trilinear", (1, 2, 3, 4, 5), {"size": (5, 2, 8)}),
    ("trilinear", (2, 1, 4, 4, 4), {"scale_factor": 1.5}),
]


@pytest.mark.parametrize("mode,shape,kw", CASES)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
def test_against_torch(mode, shape, kw, align, dt):
    x = torch.randn(shape, dtype=dt, requires_grad=True)
    fx = Fz(x, True)
    t = torch.nn.functional.interpolate(x, mode=mode, align_corners=align,
                                        **kw)
    f = F.interpolate(fx, mode=mode, align_corners=align, **kw)
    tol = 1e-12 if dt == torch.float64 else 2e-6
    assert f.shape == tuple(t.shape)
    torch.testing.assert_close(T(f), t.detach(), rtol=tol, atol=tol)
    g = torch.randn(t.shape, dtype=dt)
    t.backward(g)
    f.backward(Fz(g))
    torch.testing.assert_close(T(fx.grad), x.grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_large_threaded_and_layouts(mode):
    # rows past the kernels' grain (threads), a transposed input and a
    # channels-last one (made dense first), an upsample and a downsample
    x = torch.randn(2, 3, 160, 230)
    for inp in (x, x.transpose(2, 3),
                x.contiguous(memory_format=torch.channels_last)):
        for kw in ({"scale_factor": 2}, {"size": (71, 333)}):
            xg = inp.detach().clone().requires_grad_(True)
            fx = Fz(xg, True)
            t = torch.nn.functional.interpolate(xg, mode=mode, **kw)
            f = F.interpolate(fx, mode=mode, **kw)
            torch.testing.assert_close(T(f), t.detach(), rtol=1e-5,
                                       atol=1e-5)
            g = torch.randn(t.shape)
            t.backward(g)
            f.backward(Fz(g))
            torch.testing.assert_close(T(fx.grad), xg.grad, rtol=1e-4,
                                       atol=1e-4)


def test_infinities_as_torch():
    # -inf plateaus and a lone +inf: torch's weighted sums give inf where
    # every tap is inf with a nonzero weight and NaN where inf meets 0
    x = torch.zeros(1, 1, 4, 6)
    x[..., :2, :] = -math.inf
    x[..., 3, 4] = math.inf
    for mode in ("bilinear", "bicubic"):
        for align in (False, True):
            t = torch.nn.functional.interpolate(x, size=(7, 9), mode=mode,
                                                align_corners=align)
            f = F.interpolate(Fz(x), size=(7, 9), mode=mode,
                              align_corners=align)
            torch.testing.assert_close(T(f), t, equal_nan=True)


def test_low_precision_and_integers():
    x = torch.randn(1, 2, 5, 7)
    for dt in (torch.float16, torch.bfloat16):
        t = torch.nn.functional.interpolate(x.to(dt), scale_factor=2,
                                            mode="bilinear")
        f = F.interpolate(Fz(x.to(dt)), scale_factor=2, mode="bilinear")
        assert f.dtype == Fz(t).dtype
        torch.testing.assert_close(T(f).float(), t.float(), rtol=1e-2,
                                   atol=1e-2)


def _taps(n, o, scale=0.0, align=False, cubic=False, f64=True):
    return _C._interp_taps(n, o, scale, align, cubic, f64)


def test_taps():
    idx, w = _taps(4, 8)
    assert idx.dtype == fastt.int64 and w.dtype == fastt.float64
    assert tuple(idx.shape) == (8, 2)
    # every row's weights sum to 1 and its indices stay in range
    for n, o, align, cubic in ((4, 8, False, False), (9, 3, True, False),
                               (5, 13, False, True), (1, 4, True, True)):
        idx, w = _taps(n, o, 0.0, align, cubic)
        assert T(idx).min() >= 0 and T(idx).max() < n
        torch.testing.assert_close(T(w).sum(1),
                                   torch.ones(o, dtype=torch.float64))
    _, w32 = _taps(4, 8, f64=False)
    assert w32.dtype == fastt.float32
    with pytest.raises(RuntimeError, match="greater than 0"):
        _taps(0, 3)
    with pytest.raises(RuntimeError, match="greater than 0"):
        _taps(3, 0)


@pytest.mark.parametrize("shape,dim", [((5, 7), 0), ((5, 7), 1),
                                       ((2, 6, 3, 4), 1), ((3, 9), -1),
                                       ((40, 3000), 1), ((3000, 40), 0)])
def test_resample_kernel(shape, dim):
    n = shape[dim]
    for o, cubic in ((2 * n + 1, False), (max(n // 2, 1), True)):
        idx, w = _taps(n, o, 0.0, False, cubic)
        x = torch.randn(shape, dtype=torch.float64)
        got = _C._resample(Fz(x), dim, idx, w)
        # the composition other devices run, and a plain reference
        comp = F._resample_composed(Fz(x), dim % x.dim(), idx, w)
        ti, tw = T(idx), T(w)
        xm = x.movedim(dim, -1)
        ref = (xm[..., ti] * tw).sum(-1).movedim(-1, dim)
        torch.testing.assert_close(T(got), ref)
        torch.testing.assert_close(T(comp), ref)
        # the adjoint is the transpose: <A x, y> = <x, A^T y>
        y = torch.randn(ref.shape, dtype=torch.float64)
        back = _C._resample(Fz(y), dim, idx, w, True, n)
        assert back.shape == tuple(x.shape)
        torch.testing.assert_close((ref * y).sum(), (x * T(back)).sum())


def test_resample_gradients():
    idx, w = _taps(5, 9, 0.0, False, True)
    x = fastt.randn(3, 5, 2, dtype=fastt.float64, requires_grad=True)
    out = _C._resample(x, 1, idx, w)
    assert out.grad_fn.name() == "ResampleBackward0"
    assert fastt.autograd.gradcheck(lambda v: _C._resample(v, 1, idx, w),
                                    (x,))
    assert fastt.autograd.gradgradcheck(
        lambda v: _C._resample(v, 1, idx, w), (x,))
    y = fastt.randn(3, 9, 2, dtype=fastt.float64, requires_grad=True)
    assert fastt.autograd.gradcheck(
        lambda v: _C._resample(v, 1, idx, w, True, 5), (y,))


def test_resample_errors():
    idx, w = _taps(4, 6)
    x = fastt.randn(2, 4, dtype=fastt.float64)
    with pytest.raises(IndexError,
                       match="tap index 3 is out of range for a dim of "
                             "size 3"):
        _C._resample(fastt.randn(2, 4, dtype=fastt.float64)[:, :3], 1,
                     idx, w)
    with pytest.raises(TypeError, match="w must have idx's shape"):
        _C._resample(x, 1, idx, w.float())
    with pytest.raises(TypeError, match="2-D int64"):
        _C._resample(x, 1, idx.int(), w)
    with pytest.raises(RuntimeError, match="adjoint reads 6 positions"):
        _C._resample(x, 1, idx, w, True, 4)
    with pytest.raises(IndexError, match="out of range"):
        _C._resample(x, 2, idx, w)
    with pytest.raises(RuntimeError, match="resample"):
        _C._resample(x.int(), 1, idx, w.int())


def test_compiled_step_replays_like_eager():
    # the taps are written on the host, not by a kernel: a replay must
    # write them again before the resample kernels read them (their memory
    # serves other intermediates of the step in between)
    def f(v):
        y = F.interpolate(v * 2, scale_factor=2, mode="bilinear")
        z = F.interpolate(y + 1, size=(5, 7), mode="bicubic",
                          align_corners=True)
        return (z * z).sum(1)
    c = fastt.compile(f)
    for _ in range(4):
        v = fastt.randn(2, 3, 8, 8)
        torch.testing.assert_close(T(c(v)), T(f(v)))
    assert c.stats["replays"] >= 1
