"""F.interpolate(antialias=True) (torch's PIL-style separable resize:
bilinear and bicubic, 4-D input) against torch: down- and up-scaling, by
size and by scale_factor, align_corners both ways, gradients, 16-bit and
uint8 inputs, and the error for other modes."""
import pytest
import torch

import fastt
import fastt.nn.functional as F
from torch_ref import Fz


CASES = [((1, 2, 20, 17), {"size": (7, 5)}),
         ((1, 2, 8, 9), {"size": (13, 20)}),
         ((2, 1, 30, 31), {"scale_factor": 0.3}),
         ((1, 3, 10, 10), {"size": (3, 10)}),
         ((1, 1, 5, 6), {"scale_factor": (2.5, 0.5),
                         "recompute_scale_factor": True})]


@pytest.mark.parametrize("shape,kw", CASES)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align", [False, True])
def test_antialias_against_torch(shape, kw, mode, align):
    x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    fx = Fz(x, True)
    t = torch.nn.functional.interpolate(x, mode=mode, align_corners=align,
                                        antialias=True, **kw)
    f = F.interpolate(fx, mode=mode, align_corners=align, antialias=True,
                      **kw)
    torch.testing.assert_close(torch.from_dlpack(f.detach()), t.detach(),
                               rtol=1e-12, atol=1e-12)
    g = torch.randn(t.shape, dtype=torch.float64)
    t.backward(g)
    f.backward(Fz(g))
    torch.testing.assert_close(torch.from_dlpack(fx.grad), x.grad,
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.uint8])
def test_antialias_dtypes(dt):
    x = (torch.rand(1, 3, 16, 12) * 255).to(dt)
    t = torch.nn.functional.interpolate(x, size=(5, 7), mode="bilinear",
                                        antialias=True)
    f = F.interpolate(Fz(x), size=(5, 7), mode="bilinear", antialias=True)
    assert str(f.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    # uint8: torch rounds its own fixed-point result; within one level
    tol = {torch.float32: 1e-4, torch.float64: 1e-12, torch.uint8: 1.0}[dt]
    assert (torch.from_dlpack(f).double() - t.double()).abs().max() <= tol


def test_antialias_modes_and_rank():
    for call in (lambda: F.interpolate(fastt.ones(1, 1, 4, 4), size=2,
                                       mode="nearest", antialias=True),
                 lambda: F.interpolate(fastt.ones(1, 1, 4), size=2,
                                       mode="linear", antialias=True)):
        with pytest.raises(ValueError, match="Anti-alias"):
            call()
