"""CUDA reductions and scans (kernels/cuda/reduce*.cu) against the CPU:
sum/mean/prod, amax/amin, max/min over a dim, argmax/argmin, var/std,
norm, all/any, logsumexp, cumsum/cumprod; every registered dtype, the
row / column / multi-block launch shapes, strided inputs, NaN and ties."""
import math

import numpy as np
import pytest

import fastt
from cuda_util import (FLOAT_DTYPES, assert_close, check, check_grad,
                       noncontig, rand, requires_device, to_dev)

pytestmark = requires_device

SMALL_INTS = [fastt.uint8, fastt.int8, fastt.int16, fastt.int32, fastt.int64]
ALL10 = FLOAT_DTYPES + SMALL_INTS + [fastt.bool]
NUMERIC = FLOAT_DTYPES + SMALL_INTS

# (shape, dim): dim None reduces everything. Covers the row path (reduced
# dim innermost), the column path (a kept dim innermost), multiple dims,
# size-1 dims and odd sizes.
CASES = [
    ((45, 65), 0),
    ((45, 65), 1),
    ((45, 65), -1),
    ((45, 65), None),
    ((7, 9, 11), 1),
    ((7, 9, 11), (0, 2)),
    ((7, 9, 11), (2, 0, 1)),
    ((5, 1, 3), 1),
    ((1,), 0),
    ((3,), 0),
    ((3,), None),
    ((2, 40), 1),
]
IDS = [f"{s}-{d}" for s, d in CASES]


def sample(shape, dtype, seed=0, positive=False):
    if dtype == fastt.bool:
        return rand(*shape, dtype=dtype, seed=seed)
    if dtype == fastt.uint8:
        return rand(*shape, dtype=dtype, seed=seed, low=0, high=5)
    low = 0.0 if positive else -2.0
    if dtype in SMALL_INTS:
        low = 0 if positive else -3
        return rand(*shape, dtype=dtype, seed=seed, low=low, high=4)
    return rand(*shape, dtype=dtype, seed=seed, low=low, high=2.0)


def dims_kw(dim):
    return {} if dim is None else {"dim": dim}


def single_dim(dim):
    return dim if isinstance(dim, int) else None


# ----------------------------------------------------------- sum family --
@pytest.mark.parametrize("shape,dim", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum(shape, dim, dtype, keepdim):
    x = sample(shape, dtype)
    kw = dims_kw(dim)
    if kw or keepdim:
        kw["keepdim"] = keepdim
    check(lambda t: fastt.sum(t, **kw), x)
    check(lambda t: fastt.sum(noncontig(t), **kw), x)


ONE_DIM = [(c, i) for c, i in zip(CASES, IDS, strict=True)
           if c[1] is None or isinstance(c[1], int)]


@pytest.mark.parametrize("shape,dim", [c for c, _ in ONE_DIM],
                         ids=[i for _, i in ONE_DIM])
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_prod(shape, dim, dtype, keepdim):
    d = single_dim(dim)
    if dtype in FLOAT_DTYPES:
        x = rand(*shape, dtype=dtype, low=0.8, high=1.2)
    else:
        x = sample(shape, dtype)
    if d is None:
        check(lambda t: fastt.prod(t), x)
        check(lambda t: fastt.prod(noncontig(t)), x)
    else:
        check(lambda t: fastt.prod(t, d, keepdim=keepdim), x)
        check(lambda t: fastt.prod(noncontig(t), d, keepdim=keepdim), x)


@pytest.mark.parametrize("shape,dim", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean(shape, dim, dtype, keepdim):
    x = sample(shape, dtype)
    kw = dims_kw(dim)
    if kw or keepdim:
        kw["keepdim"] = keepdim
    check(lambda t: fastt.mean(t, **kw), x)
    check(lambda t: fastt.mean(noncontig(t), **kw), x)


@pytest.mark.parametrize("dtype", [fastt.int32, fastt.uint8, fastt.bool,
                                   fastt.float16], ids=str)
def test_sum_prod_mean_dtype_arg(dtype):
    x = sample((45, 65), dtype, positive=True)
    check(lambda t: fastt.sum(t, dtype=fastt.float64), x)
    check(lambda t: fastt.sum(t, 1, dtype=fastt.float32), x)
    check(lambda t: fastt.sum(t, 0, dtype=fastt.int16), x)
    check(lambda t: fastt.prod(t, 0, dtype=fastt.float64), x)
    check(lambda t: fastt.mean(t, dtype=fastt.float64), x)
    check(lambda t: fastt.mean(t, 0, dtype=fastt.float32), x)


def test_int_sum_wraps_like_cpu():
    x = fastt.full((1000,), 2 ** 62, dtype=fastt.int64)
    check(lambda t: fastt.sum(t), x)
    check(lambda t: fastt.prod(t[:5]), x)
    y = fastt.full((3, 70), 127, dtype=fastt.int8)
    check(lambda t: fastt.sum(t, 1), y)
    check(lambda t: fastt.prod(t, 1), y)


# ------------------------------------------------------------ extremes --
@pytest.mark.parametrize("shape,dim", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin(shape, dim, dtype, keepdim):
    x = sample(shape, dtype)
    kw = {"keepdim": keepdim}
    if dim is not None:
        kw["dim"] = dim
    for fn in (fastt.amax, fastt.amin):
        check(lambda t: fn(t, **kw), x, what=fn.__name__)
        check(lambda t: fn(noncontig(t), **kw), x, what=fn.__name__)
    check(lambda t: fastt.max(t), x)
    check(lambda t: fastt.min(t), x)


@pytest.mark.parametrize("shape,dim", [c for c in CASES
                                       if isinstance(c[1], int)],
                         ids=[i for c, i in zip(CASES, IDS, strict=True)
                              if isinstance(c[1], int)])
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim(shape, dim, dtype, keepdim):
    # small integer ranges make many ties: the first index must win
    x = sample(shape, dtype)
    for fn in (fastt.max, fastt.min):
        check(lambda t: tuple(fn(t, dim, keepdim=keepdim)), x,
              what=fn.__name__)
        check(lambda t: tuple(fn(noncontig(t), dim, keepdim=keepdim)), x,
              what=fn.__name__)


@pytest.mark.parametrize("shape,dim", [c for c, _ in ONE_DIM],
                         ids=[i for _, i in ONE_DIM])
@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(shape, dim, dtype, keepdim):
    x = sample(shape, dtype)
    for fn in (fastt.argmax, fastt.argmin):
        if dim is None:
            check(lambda t: fn(t), x, what=fn.__name__)
            check(lambda t: fn(noncontig(t)), x, what=fn.__name__)
        else:
            check(lambda t: fn(t, dim, keepdim=keepdim), x, what=fn.__name__)
            check(lambda t: fn(noncontig(t), dim, keepdim=keepdim), x,
                  what=fn.__name__)


@pytest.mark.parametrize("n", [5, 300, 100003])
@pytest.mark.parametrize("dtype", [fastt.float32, fastt.int32,
                                   fastt.float16], ids=str)
def test_arg_ties_first_index(n, dtype):
    # all equal: index 0 everywhere; two maxima: the first one
    x = fastt.zeros((3, n), dtype=dtype)
    check(lambda t: fastt.argmax(t, 1), x)
    check(lambda t: fastt.argmin(t, 0), x)
    check(lambda t: fastt.argmax(t), x)
    check(lambda t: tuple(fastt.max(t, 1)), x)
    y = fastt.zeros((n,), dtype=dtype)
    y[n // 2] = 7
    y[n - 1] = 7
    y[n // 3] = -7
    y[n - 2] = -7
    dev, _ = check(lambda t: fastt.argmax(t), y)
    assert int(dev.cpu().item()) == n // 2
    dev, _ = check(lambda t: fastt.argmin(t), y)
    assert int(dev.cpu().item()) == n // 3
    check(lambda t: tuple(fastt.min(t, 0)), y)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64,
                                   fastt.float16, fastt.bfloat16], ids=str)
@pytest.mark.parametrize("n", [7, 65, 100003])
def test_nan_propagates(dtype, n):
    x = rand(4, n, dtype=dtype)
    x[1, n // 2] = float("nan")
    x[1, n - 1] = float("nan")  # second NaN: the first index is reported
    x[2, 0] = float("inf")
    x[3, n - 1] = float("nan")
    for fn in (fastt.amax, fastt.amin):
        check(lambda t: fn(t, 1), x)
        check(lambda t: fn(t, 0), x)
        check(lambda t: fn(t), x)
    for fn in (fastt.max, fastt.min):
        check(lambda t: tuple(fn(t, 1)), x)
        check(lambda t: tuple(fn(t, 0)), x)
    for fn in (fastt.argmax, fastt.argmin):
        check(lambda t: fn(t, 1), x)
        check(lambda t: fn(t), x)
    check(lambda t: fastt.sum(t, 1), x)
    check(lambda t: fastt.logsumexp(t, 1), x)
    check(lambda t: fastt.var(t, 1), x)
    check(lambda t: fastt.norm(t, 2, dim=1), x)
    check(lambda t: fastt.norm(t, float("inf"), dim=1), x)
    check(lambda t: fastt.cumsum(t, 1), x)


# -------------------------------------------------------------- moments --
@pytest.mark.parametrize("shape,dim", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("correction", [1, 0, 2.5])
def test_var_std(shape, dim, dtype, correction):
    x = sample(shape, dtype)
    kw = dims_kw(dim)
    kw["correction"] = correction
    check(lambda t: fastt.var(t, **kw), x)
    check(lambda t: fastt.std(noncontig(t), **kw), x)
    check(lambda t: fastt.var(t, **kw, keepdim=True), x)
    check(lambda t: tuple(fastt.var_mean(t, **kw)), x)
    check(lambda t: tuple(fastt.std_mean(noncontig(t), **kw)), x)


@pytest.mark.parametrize("shape,dim", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("p", [2, 1, 0, 3, 0.5, -1, math.inf, -math.inf])
def test_norm(shape, dim, dtype, p):
    x = sample(shape, dtype)
    kw = dims_kw(dim)
    check(lambda t: fastt.norm(t, p, **kw), x)
    check(lambda t: fastt.norm(noncontig(t), p, **kw, keepdim=True), x)


def test_norm_dtype_arg_and_zeros():
    x = sample((45, 65), fastt.float16)
    check(lambda t: fastt.norm(t, 2, dtype=fastt.float32), x)
    check(lambda t: fastt.norm(t, 3, dim=1, dtype=fastt.float64), x)
    z = fastt.zeros((4, 33))
    z[1, 3] = 2.0
    for p in (0, 1, 2, -1, -math.inf, math.inf, 0.5):
        check(lambda t: fastt.norm(t, p, dim=1), z)


@pytest.mark.parametrize("shape,dim", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_logsumexp(shape, dim, dtype):
    x = rand(*shape, dtype=dtype, low=-20, high=20)
    d = tuple(range(len(shape))) if dim is None else dim
    check(lambda t: fastt.logsumexp(t, d), x)
    check(lambda t: fastt.logsumexp(noncontig(t), d, keepdim=True), x)


def test_logsumexp_infinities_and_ints():
    x = fastt.tensor([[-math.inf, -math.inf, -math.inf],
                      [math.inf, 1.0, 2.0],
                      [-math.inf, 0.0, 1.0],
                      [math.inf, math.inf, 0.0]])
    check(lambda t: fastt.logsumexp(t, 1), x)
    check(lambda t: fastt.logsumexp(t, 0), x)
    check(lambda t: fastt.logsumexp(t, 1), sample((5, 40), fastt.int32))


# -------------------------------------------------------------- logical --
@pytest.mark.parametrize("shape,dim", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_all_any(shape, dim, dtype, keepdim):
    # sparse nonzeros so both all and any see both answers
    x = sample(shape, dtype)
    for v in (x, x * 0, fastt.ones_like(x), (x == x.amax()).to(dtype)):
        for fn in (fastt.all, fastt.any):
            if dim is None and not keepdim:
                check(lambda t: fn(t), v, what=fn.__name__)
            else:
                kw = dims_kw(dim)
                check(lambda t: fn(t, **kw, keepdim=keepdim), v,
                      what=fn.__name__)
                check(lambda t: fn(noncontig(t), **kw, keepdim=keepdim), v,
                      what=fn.__name__)


def test_all_any_nan_is_true():
    x = fastt.tensor([[float("nan"), 1.0], [0.0, float("nan")]])
    check(lambda t: fastt.all(t, 1), x)
    check(lambda t: fastt.any(t, 0), x)


# ---------------------------------------------------------------- scans --
SCAN_CASES = [((45, 65), 0), ((45, 65), 1), ((45, 65), -1), ((7, 9, 11), 1),
              ((3,), 0), ((1,), 0), ((2, 300), 1), ((3, 5000), 1),
              ((1, 2049), 1)]


@pytest.mark.parametrize("shape,dim", SCAN_CASES,
                         ids=[f"{s}-{d}" for s, d in SCAN_CASES])
@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_cumsum_cumprod(shape, dim, dtype):
    x = sample(shape, dtype)
    s = 10.0 if dtype in (fastt.float16, fastt.bfloat16) else 1.0
    r = {fastt.float16: 1e-2, fastt.bfloat16: 3e-2}.get(dtype)
    # long half rows: both sides round every output to 16 bits from
    # accumulators that differ, so compare loosely there
    check(lambda t: fastt.cumsum(t, dim), x, rtol=r, atol=r and r * s)
    check(lambda t: fastt.cumsum(noncontig(t), dim), x, rtol=r,
          atol=r and r * s)
    if dtype in FLOAT_DTYPES:
        y = rand(*shape, dtype=dtype, low=0.99, high=1.01)
    else:
        y = sample(shape, dtype)
    check(lambda t: fastt.cumprod(t, dim), y, rtol=r, atol=r)
    check(lambda t: fastt.cumprod(noncontig(t), dim), y, rtol=r, atol=r)


@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("shape,dim", [((45, 65), 0), ((45, 65), 1),
                                       ((3, 130, 2), 1), ((1,), 0)])
def test_cummax_cummin(shape, dim, dtype):
    """The running extremes' index kernel (ties to the later element, NaN
    sticks), with the values and gradients gathered at it."""
    x = sample(shape, dtype)
    if dtype in FLOAT_DTYPES and x.numel() > 4:
        x = x.clone()
        x.view(-1)[3] = float("nan")
    for fn in (fastt.cummax, fastt.cummin):
        check(lambda t: tuple(fn(t, dim)), x)
        check(lambda t: tuple(fn(noncontig(t), dim)), x)
    if dtype in (fastt.float32, fastt.float64):
        y = rand(*shape, dtype=dtype).requires_grad_(True)
        check_grad(lambda t: fastt.cummax(t, dim).values, y)


def test_scan_dtype_arg():
    x = sample((5, 70), fastt.int32)
    check(lambda t: fastt.cumsum(t, 1, dtype=fastt.float64), x)
    check(lambda t: fastt.cumsum(t, 0, dtype=fastt.int16), x)
    check(lambda t: fastt.cumprod(t, 1, dtype=fastt.float32), x)
    b = sample((4, 100), fastt.bool)
    check(lambda t: fastt.cumsum(t, 1), b)


# ------------------------------------------------- large / multi-block --
BIG = 1000003


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64,
                                   fastt.int32, fastt.int64], ids=str)
def test_big_full_reductions(dtype):
    x = sample((BIG,), dtype, seed=3, positive=True)
    tol = {"rtol": 1e-4, "atol": 1e-3} if dtype == fastt.float32 else {}
    check(lambda t: fastt.sum(t), x, **tol)
    check(lambda t: fastt.amax(t), x)
    check(lambda t: fastt.amin(t), x)
    check(lambda t: fastt.argmax(t), x)
    check(lambda t: fastt.argmin(t), x)
    check(lambda t: fastt.any(t), x)
    check(lambda t: fastt.all(t), x)
    if dtype in FLOAT_DTYPES:
        check(lambda t: fastt.mean(t), x, **tol)
        check(lambda t: fastt.var(t), x, **tol)
        check(lambda t: fastt.norm(t), x, **tol)
        check(lambda t: fastt.norm(t, 3), x, **tol)
        check(lambda t: fastt.logsumexp(t, 0), x, **tol)
        # a strided view takes the non-dense path of the same kernels
        check(lambda t: fastt.sum(t[::3]), x, **tol)
        check(lambda t: fastt.amax(t[1::2]), x)
    else:
        check(lambda t: fastt.sum(t[::3]), x)


@pytest.mark.parametrize("dtype", [fastt.float16, fastt.bfloat16], ids=str)
def test_big_half_mean(dtype):
    x = sample((BIG,), dtype, seed=4, positive=True)
    check(lambda t: fastt.mean(t), x)
    check(lambda t: fastt.amax(t), x)
    check(lambda t: fastt.argmax(t), x)
    check(lambda t: fastt.var(t), x)


@pytest.mark.parametrize("shape,dim", [((4, 250007), 1), ((100003, 3), 0),
                                       ((64, 4099), 0), ((3, 3, 111113), 2),
                                       ((111113, 3, 3), (0, 2)),
                                       ((100003, 10), 1)],
                         ids=str)
def test_big_partial_reductions(shape, dim):
    x = sample(shape, fastt.float32, seed=5, positive=True)
    tol = {"rtol": 1e-4, "atol": 1e-3}
    check(lambda t: fastt.sum(t, dim), x, **tol)
    check(lambda t: fastt.var(t, dim), x, **tol)
    check(lambda t: fastt.amax(t, dim), x)
    if isinstance(dim, int):
        check(lambda t: tuple(fastt.max(t, dim)), x)
        check(lambda t: fastt.argmin(t, dim), x)
        check(lambda t: fastt.cumsum(t, dim), x, **tol)
    xi = sample(shape, fastt.int32, seed=6)
    check(lambda t: fastt.sum(t, dim), xi)
    if isinstance(dim, int):
        check(lambda t: fastt.argmax(t, dim), xi)
        check(lambda t: fastt.cumsum(t, dim), xi)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64,
                                   fastt.int64], ids=str)
def test_big_scans(dtype):
    x = sample((BIG,), dtype, seed=7)
    # The device scans in chunks, the CPU sequentially: float64 sums that
    # pass near 0 differ by a few 1e-12.
    tol = ({"rtol": 1e-3, "atol": 1e-2} if dtype == fastt.float32 else
           {"rtol": 1e-9, "atol": 1e-9} if dtype == fastt.float64 else {})
    check(lambda t: fastt.cumsum(t, 0), x, **tol)
    y = sample((2, BIG // 2), dtype, seed=8)
    check(lambda t: fastt.cumsum(t, 1), y, **tol)
    check(lambda t: fastt.cumsum(t, 0), y, **tol)
    if dtype in FLOAT_DTYPES:
        p = rand(BIG, dtype=dtype, low=0.9999, high=1.0001)
        check(lambda t: fastt.cumprod(t, 0), p, rtol=1e-3, atol=1e-3)
    else:
        check(lambda t: fastt.cumprod(t, 0), sample((BIG,), dtype))


# ------------------------------------------------------- empty and 0-d --
@pytest.mark.parametrize("dtype", [fastt.float32, fastt.int32, fastt.bool,
                                   fastt.float16], ids=str)
def test_empty(dtype):
    e = fastt.zeros((0, 5), dtype=dtype)
    check(lambda t: fastt.sum(t), e)
    check(lambda t: fastt.sum(t, 0), e)
    check(lambda t: fastt.sum(t, 1), e)
    check(lambda t: fastt.sum(t, 0, keepdim=True), e)
    check(lambda t: fastt.prod(t, 0), e)
    check(lambda t: fastt.all(t, 0), e)
    check(lambda t: fastt.any(t, 0), e)
    check(lambda t: fastt.all(t), e)
    check(lambda t: fastt.any(t), e)
    check(lambda t: fastt.amax(t, 1), e)
    check(lambda t: tuple(fastt.max(t, 1)), e)
    check(lambda t: fastt.cumsum(t, 0), e)
    check(lambda t: fastt.cumprod(t, 1), e)
    if dtype != fastt.bool:
        check(lambda t: fastt.argmax(t, 1), e)
    if dtype in FLOAT_DTYPES:
        check(lambda t: fastt.mean(t, 0), e)
        check(lambda t: fastt.mean(t), e)
        check(lambda t: fastt.var(t, 0), e)
        check(lambda t: fastt.norm(t, 2, dim=0), e)
        check(lambda t: fastt.norm(t), e)
        check(lambda t: fastt.logsumexp(t, 0), e)


@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_zero_dim(dtype):
    x = sample((), dtype) if dtype == fastt.bool else fastt.tensor(3).to(dtype)
    check(lambda t: fastt.sum(t), x)
    check(lambda t: fastt.sum(t, 0), x)
    check(lambda t: fastt.sum(t, 0, keepdim=True), x)
    check(lambda t: fastt.prod(t), x)
    check(lambda t: fastt.amax(t), x)
    check(lambda t: tuple(fastt.max(t, 0)), x)
    check(lambda t: fastt.all(t), x)
    check(lambda t: fastt.any(t), x)
    check(lambda t: fastt.cumsum(t, 0), x)
    check(lambda t: fastt.cumprod(t, 0), x)
    if dtype != fastt.bool:
        check(lambda t: fastt.argmax(t), x)
        check(lambda t: fastt.argmin(t, 0), x)
    if dtype in FLOAT_DTYPES:
        check(lambda t: fastt.mean(t), x)
        check(lambda t: fastt.var(t, correction=0), x)
        check(lambda t: fastt.var(t), x)  # n - 1 == 0: nan
        check(lambda t: fastt.norm(t, 3), x)
        check(lambda t: fastt.logsumexp(t, 0), x)


def test_strided_views():
    # permuted, sliced and expanded inputs (kernels handle strides directly)
    x = rand(6, 7, 8)
    views = [lambda t: t.permute(2, 0, 1), lambda t: t[:, 1:6:2, ::3],
             lambda t: t.transpose(0, 2)[1:], lambda t: t[2].expand(5, 7, 8)]
    for v in views:
        for dims in ((0,), (1,), (2,), (0, 2), (1, 2), None):
            kw = dims_kw(dims)
            check(lambda t: fastt.sum(v(t), **kw), x)
            check(lambda t: fastt.amax(v(t), **kw), x)
            check(lambda t: fastt.var(v(t), **kw), x)
            check(lambda t: fastt.norm(v(t), 1, **kw), x)
        for d in (0, 1, 2):
            check(lambda t: tuple(fastt.max(v(t), d)), x)
            check(lambda t: fastt.argmin(v(t), d), x)
            check(lambda t: fastt.cumsum(v(t), d), x)
        check(lambda t: fastt.argmax(v(t)), x)


def test_result_is_on_device_and_reusable():
    x = rand(45, 65)
    dev = to_dev(x)
    s = fastt.sum(dev, 1)
    assert_close(s * 2, fastt.sum(x, 1) * 2)


# ------------------------------------------------------------- autograd --
GRAD_FNS = {
    "sum": lambda t: fastt.sum(t, 1),
    "sum_all": lambda t: fastt.sum(t),
    "mean": lambda t: fastt.mean(t, 0, keepdim=True),
    "amax": lambda t: fastt.amax(t, 1),
    "max_dim": lambda t: fastt.max(t, 0)[0],
    "var": lambda t: fastt.var(t, 1),
    "std": lambda t: fastt.std(t, 0),
    "norm2": lambda t: fastt.norm(t, 2, dim=1),
    "norm3": lambda t: fastt.norm(t, 3),
    "logsumexp": lambda t: fastt.logsumexp(t, 1),
    "cumsum": lambda t: fastt.cumsum(t, 1),
    "cumprod": lambda t: fastt.cumprod(t, 0),
    "prod": lambda t: fastt.prod(t, 1),
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64], ids=str)
def test_grad(name, dtype):
    x = rand(9, 37, dtype=dtype, low=0.5, high=1.5).requires_grad_(True)
    check_grad(GRAD_FNS[name], x, rtol=1e-4 if dtype == fastt.float32
               else None, atol=1e-5 if dtype == fastt.float32 else None,
               what=name)


def test_grad_noncontig():
    x = rand(37, 9, low=0.5, high=1.5).requires_grad_(True)
    check_grad(lambda t: fastt.sum(t.transpose(0, 1), 1), x)
    check_grad(lambda t: fastt.var(t.transpose(0, 1), 1), x, rtol=1e-4,
               atol=1e-5)
    check_grad(lambda t: fastt.cumsum(t.transpose(0, 1), 1), x)


def test_sum_matches_numpy_big_ints():
    # exact int64 accumulation of uint8 (the CPU is checked too)
    x = fastt.tensor(np.full(BIG, 255, dtype=np.uint8))
    dev, cpu = check(lambda t: fastt.sum(t), x)
    assert int(cpu.item()) == 255 * BIG
