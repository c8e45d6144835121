"""F.fractional_max_pool2d/3d and their modules against torch with the
same _random_samples: values, indices and gradients (to each window's
maximum), output_size and output_ratio, unbatched input; without samples
the windows are fastt's own draw but still valid pools; the errors."""
import pytest
import torch

import fastt
import fastt.nn.functional as F
from torch_ref import Fz


@pytest.mark.parametrize("nd,shape,k,kw", [
    (2, (2, 3, 9, 11), 3, {"output_size": (4, 5)}),
    (2, (3, 9, 9), (2, 3), {"output_size": (5, 2)}),
    (2, (1, 2, 9, 9), 3, {"output_size": 1}),
    (2, (2, 2, 10, 12), 2, {"output_ratio": (0.5, 0.7)}),
    (3, (2, 2, 7, 8, 9), 2, {"output_size": (3, 4, 5)}),
    (3, (2, 5, 5, 5), (2, 1, 2), {"output_ratio": 0.5})])
def test_against_torch(nd, shape, k, kw):
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    nb = shape[0] if len(shape) == nd + 2 else 1
    s = torch.rand(nb, shape[-nd - 1], nd, dtype=torch.float64)
    tf = getattr(torch.nn.functional, f"fractional_max_pool{nd}d")
    ff = getattr(F, f"fractional_max_pool{nd}d")
    to, ti = tf(x, k, return_indices=True, _random_samples=s, **kw)
    fx = Fz(x, True)
    fo, fi = ff(fx, k, return_indices=True, _random_samples=Fz(s), **kw)
    assert torch.equal(torch.from_dlpack(fo.detach()), to.detach())
    assert torch.equal(torch.from_dlpack(fi), ti)
    g = torch.randn(to.shape, dtype=torch.float64)
    to.backward(g)
    fo.backward(Fz(g))
    torch.testing.assert_close(torch.from_dlpack(fx.grad), x.grad)


def test_modules_and_own_samples():
    x = fastt.randn(2, 3, 12, 12)
    m = fastt.nn.FractionalMaxPool2d(3, output_ratio=0.5,
                                     return_indices=True)
    out, idx = m(x)
    assert tuple(out.shape) == (2, 3, 6, 6)
    # every value is the input at its index, and the max of a 3x3 window
    flat = x.reshape(2, 3, -1)
    assert flat.gather(2, idx.reshape(2, 3, -1)).reshape(out.shape).equal(
        out)
    m3 = fastt.nn.FractionalMaxPool3d(2, output_size=(2, 3, 2))
    assert tuple(m3(fastt.randn(1, 2, 5, 6, 5)).shape) == (1, 2, 2, 3, 2)
    with pytest.raises(ValueError):
        fastt.nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError):
        fastt.nn.FractionalMaxPool2d(2, output_ratio=1.5)


def test_errors():
    x = fastt.ones(1, 2, 9, 9)
    with pytest.raises(ValueError):
        F.fractional_max_pool2d(x, 3)
    with pytest.raises(RuntimeError, match="too large"):
        F.fractional_max_pool2d(x, 3, output_size=(8, 3))
    with pytest.raises(RuntimeError):
        F.fractional_max_pool2d(fastt.ones(9, 9), 3, output_size=2)
    with pytest.raises(RuntimeError, match="_random_samples"):
        F.fractional_max_pool2d(x, 3, output_size=2,
                                _random_samples=fastt.rand(1, 2, 3))
