"""scalar_tensor, fill and logspace against torch."""
import numpy as np
import pytest

import fastt

torch = pytest.importorskip("torch")


def _same(got, ref):
    assert str(got.dtype)[6:] == str(ref.dtype)[6:]
    assert tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_allclose(np.asarray(got.detach()).astype(np.float64),
                               ref.detach().double().numpy(), rtol=1e-6)


@pytest.mark.parametrize("s", [True, -5, 0, 2.5])
@pytest.mark.parametrize("dtype", [None, "int64", "bool", "float64"])
def test_scalar_tensor(s, dtype):
    fd = getattr(fastt, dtype) if dtype else None
    td = getattr(torch, dtype) if dtype else None
    _same(fastt.scalar_tensor(s, dtype=fd), torch.scalar_tensor(s, dtype=td))
    assert fastt.scalar_tensor(1.0, requires_grad=True).requires_grad


def test_fill_copies_and_gives_zero_grad():
    x = fastt.ones(2, 3, requires_grad=True)
    y = fastt.fill(x, 7)
    assert (np.asarray(x.detach()) == 1).all()
    assert (np.asarray(y.detach()) == 7).all() and y.dtype == x.dtype
    y.sum().backward()
    assert (np.asarray(x.grad) == 0).all()
    v = fastt.tensor(2.0, requires_grad=True)
    fastt.fill(fastt.zeros(2, 2), v).sum().backward()
    assert v.grad.item() == 4.0
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        fastt.fill(x, fastt.ones(2))
    b = fastt.fill(fastt.zeros(3, dtype=fastt.int64), 2.9)
    _same(b, torch.fill(torch.zeros(3, dtype=torch.int64), 2.9))


@pytest.mark.parametrize("args", [(0, 1.2, 4), (2, 1.2, 4, 5.0),
                                  (4.3, -3, 5, 2.0), (-1, 1, 1), (0, 3, 0)])
# (not uint8: torch's uint8 logspace wraps a descending step)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16"])
def test_logspace(args, dtype):
    got = fastt.logspace(*args, dtype=getattr(fastt, dtype))
    ref = torch.logspace(*args, dtype=getattr(torch, dtype))
    _same(got, ref)


def test_logspace_errors_and_defaults():
    assert fastt.logspace(0, 1, 3).dtype == fastt.get_default_dtype()
    with pytest.raises(RuntimeError, match="number of steps must be "
                       "non-negative"):
        fastt.logspace(0, 1, -1)
