"""F.grid_sample (and torch.grid_sampler / grid_sampler_2d / _3d) against
torch: every mode x padding x align_corners in 2-D, bilinear/nearest in
3-D, grid points inside, on and far outside the image; gradients to input
and grid; 16-bit; the errors."""
import itertools

import pytest
import torch

import fastt
import fastt.nn.functional as F
from torch_ref import Fz, close


def grid(shape):
    g = torch.rand(shape, dtype=torch.float64) * 3.2 - 1.6  # some outside
    g.view(-1)[:4] = torch.tensor([-1.0, 1.0, 0.0, 2.5], dtype=g.dtype)
    return g


@pytest.mark.parametrize("mode,padding,align", list(itertools.product(
    ["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"],
    [False, True])))
def test_grid_sample_2d(mode, padding, align):
    torch.manual_seed(1)
    x = torch.randn(2, 3, 5, 7, dtype=torch.float64, requires_grad=True)
    g = grid((2, 4, 6, 2)).requires_grad_(True)
    fx, fg = Fz(x, True), Fz(g, True)
    t = torch.nn.functional.grid_sample(x, g, mode, padding, align)
    f = F.grid_sample(fx, fg, mode, padding, align)
    close(f, t)
    gy = torch.randn(t.shape, dtype=torch.float64)
    t.backward(gy)
    f.backward(Fz(gy))
    close(fx.grad, x.grad)
    if mode != "nearest":  # nearest has no grid gradient (torch: zeros)
        close(fg.grad, g.grad)


@pytest.mark.parametrize("mode,padding,align", list(itertools.product(
    ["bilinear", "nearest"], ["zeros", "border", "reflection"],
    [False, True])))
def test_grid_sample_3d_and_int_forms(mode, padding, align):
    torch.manual_seed(2)
    x = torch.randn(2, 2, 3, 4, 5, dtype=torch.float64, requires_grad=True)
    g = grid((2, 3, 2, 4, 3)).requires_grad_(True)
    fx, fg = Fz(x, True), Fz(g, True)
    t = torch.nn.functional.grid_sample(x, g, mode, padding, align)
    f = F.grid_sample(fx, fg, mode, padding, align)
    close(f, t)
    t.sum().backward()
    f.sum().backward()
    close(fx.grad, x.grad)
    if mode == "bilinear":
        close(fg.grad, g.grad)
    m, p = ["bilinear", "nearest"].index(mode), \
        ["zeros", "border", "reflection"].index(padding)
    close(fastt.grid_sampler_3d(Fz(x), Fz(g), m, p, align),
          torch.grid_sampler_3d(x, g, m, p, align))
    close(fastt.grid_sampler(Fz(x), Fz(g), m, p, align),
          torch.grid_sampler(x, g, m, p, align))


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16])
def test_grid_sample_16bit(dt):
    x = torch.randn(1, 2, 4, 4).to(dt)
    g = grid((1, 3, 3, 2)).to(dt)
    t = torch.nn.functional.grid_sample(x, g, align_corners=False)
    f = F.grid_sample(Fz(x), Fz(g), align_corners=False)
    assert f.dtype == Fz(x).dtype
    torch.testing.assert_close(torch.from_dlpack(f), t, atol=1e-2, rtol=1e-2)


def test_grid_sample_errors():
    x, g = fastt.ones(1, 1, 3, 3), fastt.zeros(1, 2, 2, 2)
    for call, err in (
            (lambda: F.grid_sample(x, g, mode="area"), ValueError),
            (lambda: F.grid_sample(x, g, padding_mode="wrap"), ValueError),
            (lambda: F.grid_sample(x, fastt.zeros(1, 2, 2, 3)), RuntimeError),
            (lambda: F.grid_sample(x, fastt.zeros(2, 2, 2, 2)), RuntimeError),
            (lambda: F.grid_sample(x, g.double()), RuntimeError),
            (lambda: F.grid_sample(fastt.ones(1, 1, 2, 2, 2),
                                   fastt.zeros(1, 1, 1, 1, 3),
                                   mode="bicubic"), RuntimeError),
            (lambda: fastt.grid_sampler_2d(fastt.ones(1, 1, 2, 2, 2),
                                           fastt.zeros(1, 1, 1, 1, 3), 0, 0,
                                           False), RuntimeError)):
        with pytest.raises(err):
            call()
