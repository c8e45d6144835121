"""fastt.masked and fastt.linalg.vector_norm against torch on what the
OpInfo samples leave out: broadcast masks, fully masked slices, integer
inputs, gradients on masked elements, and the errors."""
import math

import numpy as np
import pytest

import fastt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4, 5))
# row 1 of dim 0 fully masked out: identities and nan counts show there
MASK = RNG.random((3, 4, 5)) < 0.6
MASK[1] = False


def _pair(a, dtype="float64", grad=False):
    f = fastt.tensor(a).to(getattr(fastt, dtype))
    t = torch.tensor(a).to(getattr(torch, dtype))
    if grad:
        f.requires_grad_(True)
        t.requires_grad_(True)
    return f, t


def _close(got, ref):
    assert str(got.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(ref.shape)
    tol = 1e-10 if ref.dtype == torch.float64 else 1e-6
    np.testing.assert_allclose(np.asarray(got.detach()),
                               ref.detach().numpy(), rtol=tol, atol=tol,
                               equal_nan=True)


REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "norm",
              "var", "std"]


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("dim", [None, 0, (1, 2), -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduction_fully_masked_rows_and_grad(op, dim, keepdim):
    f, t = _pair(X, grad=True)
    fm, tm = fastt.tensor(MASK), torch.tensor(MASK)
    got = getattr(fastt.masked, op)(f, dim=dim, keepdim=keepdim, mask=fm)
    ref = getattr(torch.masked, op)(t, dim=dim, keepdim=keepdim, mask=tm)
    _close(got, ref)
    # gradients: zero on masked-out elements (where finite in torch)
    if not ref.requires_grad or not torch.isfinite(ref).all():
        return
    g = np.ones(tuple(ref.shape))
    ref.backward(torch.tensor(g))
    got.backward(fastt.tensor(g))
    _close(f.grad, t.grad)


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "softmin",
                                "cumsum", "cumprod"])
def test_normalizations_broadcast_mask(op):
    f, t = _pair(X)
    m = MASK[0, :, :1]  # (4, 1): broadcasts over the input's last dims
    got = getattr(fastt.masked, op)(f, 2, mask=fastt.tensor(m))
    ref = getattr(torch.masked, op)(t, 2, mask=torch.tensor(m))
    _close(got, ref)


@pytest.mark.parametrize("dtype", ["int64", "int16", "uint8", "bool"])
def test_integer_inputs(dtype):
    a = RNG.integers(0, 5, (4, 6))
    f, t = _pair(a, dtype)
    fm, tm = fastt.tensor(MASK[0, :, :]), torch.tensor(MASK[0, :, :])
    fm, tm = fm[:, :1], tm[:, :1]
    for op in ("sum", "prod"):
        _close(getattr(fastt.masked, op)(f, 1, mask=fm),
               getattr(torch.masked, op)(t, 1, mask=tm))
    if dtype != "bool":
        for op in ("amax", "amin", "argmax", "argmin"):
            _close(getattr(fastt.masked, op)(f, 1, mask=fm),
                   getattr(torch.masked, op)(t, 1, mask=tm))
        _close(fastt.masked.var(f, 1, mask=fm), torch.masked.var(t, 1,
                                                                 mask=tm))


def test_logaddexp_and_normalize():
    f, t = _pair(X)
    g, u = _pair(X[::-1].copy())
    m = MASK[:, :, 0:1]
    _close(fastt.masked.logaddexp(f, g, input_mask=fastt.tensor(m),
                                  other_mask=fastt.tensor(~m)),
           torch.masked.logaddexp(t, u, input_mask=torch.tensor(m),
                                  other_mask=torch.tensor(~m)))
    for ord in (1.0, 2.0, math.inf, -math.inf):
        _close(fastt.masked.normalize(f, ord, 1, mask=fastt.tensor(MASK)),
               torch.masked.normalize(t, ord, 1, mask=torch.tensor(MASK)))


def test_errors_as_torch():
    f = fastt.ones(3, 4)
    with pytest.raises(IndexError, match="broadcastable mask"):
        fastt.masked.sum(f, mask=fastt.ones(2, 3, 4, dtype=fastt.bool))
    with pytest.raises(RuntimeError, match="appears multiple times"):
        fastt.masked.sum(f, (1, 1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        fastt.masked.amax(f, 2)
    with pytest.raises(ValueError, match="Could not infer output dtype"):
        fastt.masked.mean(fastt.ones(3, dtype=fastt.int64))


@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, -1, math.inf, -math.inf])
@pytest.mark.parametrize("dim", [None, (), 0, (0, 1), -1])
def test_vector_norm_matches_torch(ord, dim):
    a = X.copy()
    a[0, 0] = 0.0  # a zero vector: the p-norm's gradient is 0 there
    f, t = _pair(a, grad=True)
    got = fastt.linalg.vector_norm(f, ord, dim)
    ref = torch.linalg.vector_norm(t, ord, dim)
    _close(got, ref)
    if ord > 0 and not math.isinf(ord):
        ref.sum().backward()
        got.sum().backward()
        _close(f.grad, t.grad)


def test_vector_norm_dtype_and_errors():
    f32 = fastt.ones(3)
    out = fastt.linalg.vector_norm(f32, dtype=fastt.float64)
    assert out.dtype == fastt.float64 and abs(out.item() - 3 ** .5) < 1e-12
    with pytest.raises(RuntimeError, match="Expected a floating point or "
                       "complex tensor as input. Got Long"):
        fastt.linalg.vector_norm(fastt.ones(3, dtype=fastt.int64))
    with pytest.raises(RuntimeError, match=r"\(Double\) should be "
                       r"convertible without narrowing to the specified "
                       r"dtype \(Float\)"):
        fastt.linalg.vector_norm(fastt.ones(3, dtype=fastt.float64),
                                 dtype=fastt.float32)
    with pytest.raises(RuntimeError, match="does not have an identity"):
        fastt.linalg.vector_norm(fastt.ones(0, 3), math.inf, 0)
    assert tuple(fastt.linalg.vector_norm(fastt.ones(0, 3), math.inf,
                                          1).shape) == (0,)
    with pytest.raises(TypeError, match="must be Number"):
        fastt.linalg.vector_norm(f32, "fro")
