"""CUDA factory and random kernels (kernels/cuda/factory.cu) against the
CPU: arange/linspace/eye/full, and the Philox samplers. The same seed must
give the same numbers on both backends (element i reads counter block
offset + i / K on each), bit for bit for rand/uniform_/randint/random_/
randperm/bernoulli/dropout and to a few ulps for randn/normal_ (the device's
log/sin/cos)."""
import numpy as np
import pytest

import fastt
import fastt.nn.functional as F
from cuda_util import (DEVICE, FLOAT_DTYPES, assert_close, check,
                       requires_device, to_dev, to_numpy)

pytestmark = requires_device

SMALL_INTS = [fastt.uint8, fastt.int8, fastt.int16, fastt.int32, fastt.int64]
ALL10 = FLOAT_DTYPES + SMALL_INTS + [fastt.bool]
NUMERIC = FLOAT_DTYPES + SMALL_INTS
BIG = 2 ** 20 + 3
SHAPES = [(), (1,), (3,), (5, 7), (45, 65), (4, 3, 5), (0, 3), (BIG,)]
SHAPE_IDS = [str(s) for s in SHAPES]

EXACT = dict(rtol=0, atol=0)
NORMAL_TOL = {fastt.float32: (2e-6, 2e-6), fastt.float64: (1e-13, 1e-13),
              fastt.float16: (1e-3, 1e-3), fastt.bfloat16: (8e-3, 8e-3)}


def seeded(fn, seed=1234, **tol):
    """fn(device) after manual_seed(seed) on CPU and on the device under
    test; compares and returns (dev, cpu)."""
    fastt.manual_seed(seed)
    cpu = fn("cpu")
    fastt.manual_seed(seed)
    dev = fn(DEVICE)
    assert_close(dev, cpu, what=getattr(fn, "__name__", ""), **tol)
    return dev, cpu


# ------------------------------------------------------------ factories --
@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
def test_arange(dtype):
    def run(dev):
        return [fastt.arange(17, dtype=dtype, device=dev),
                fastt.arange(-5, 40, 3, dtype=dtype, device=dev),
                fastt.arange(30, -2, -4, dtype=dtype, device=dev),
                fastt.arange(0, dtype=dtype, device=dev)]
    seeded(run, **EXACT)
    if dtype in FLOAT_DTYPES:
        seeded(lambda d: fastt.arange(-3.2, 5.7, 0.3, dtype=dtype, device=d),
               **EXACT)
        seeded(lambda d: fastt.arange(0.0, 1.0, 1e-3, dtype=dtype, device=d),
               **EXACT)


def test_arange_default_and_big():
    seeded(lambda d: fastt.arange(BIG, device=d), **EXACT)
    seeded(lambda d: fastt.arange(0.5, BIG * 0.25, 0.25, device=d), **EXACT)
    seeded(lambda d: fastt.arange(1e12, 1e12 + 50, 1, device=d), **EXACT)


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
def test_linspace(dtype):
    # uint8 stays non-negative: a negative double -> uint8 cast is UB
    # (x86 wraps, the GPU saturates), in torch as well.
    lo = 2 if dtype == fastt.uint8 else -7

    def run(dev):
        out = [fastt.linspace(lo, 13, steps, dtype=dtype, device=dev)
               for steps in (0, 1, 2, 3, 11, 64, 257)]
        out.append(fastt.linspace(13, lo, 9, dtype=dtype, device=dev))
        if dtype in FLOAT_DTYPES:
            out.append(fastt.linspace(-1.3, 2.9, 101, dtype=dtype,
                                      device=dev))
        return out
    seeded(run, **EXACT)


def test_linspace_big():
    seeded(lambda d: fastt.linspace(-1.0, 3.0, BIG, device=d), **EXACT)
    seeded(lambda d: fastt.linspace(0, 1, BIG, dtype=fastt.float64,
                                    device=d), **EXACT)


@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_eye_full(dtype):
    def run(dev):
        return [fastt.eye(5, dtype=dtype, device=dev),
                fastt.eye(3, 7, dtype=dtype, device=dev),
                fastt.eye(9, 2, dtype=dtype, device=dev),
                fastt.eye(0, 4, dtype=dtype, device=dev),
                fastt.eye(1, dtype=dtype, device=dev),
                fastt.zeros(4, 5, dtype=dtype, device=dev),
                fastt.ones(3, dtype=dtype, device=dev),
                fastt.full((2, 3), True if dtype == fastt.bool else 5,
                           dtype=dtype, device=dev)]
    seeded(run, **EXACT)


def test_eye_big():
    seeded(lambda d: fastt.eye(1500, 1100, device=d), **EXACT)


# -------------------------------------------------------------- uniform --
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_rand_same_seed(dtype, shape):
    dev, _ = seeded(lambda d: fastt.rand(*shape, dtype=dtype, device=d),
                    **EXACT)
    a = to_numpy(dev)
    assert ((a >= 0) & (a < 1)).all()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_uniform_ranges(dtype):
    def run(dev):
        out = []
        for lo, hi in [(-3.0, 5.0), (2.0, 2.0), (-1e-3, 1e-3), (0.5, 1.0),
                       (-100.0, -99.0)]:
            t = fastt.empty(257, dtype=dtype, device=dev)
            out.append(t.uniform_(lo, hi))
        # A transposed (non-contiguous) target walks the same loop order.
        t = fastt.empty(13, 9, dtype=dtype, device=dev).t()
        out.append(t.uniform_(-2.0, 2.0))
        out.append(fastt.rand_like(fastt.empty(6, 5, dtype=dtype,
                                               device=dev)))
        return out
    dev, _ = seeded(run, **EXACT)
    a = to_numpy(dev[0])
    assert ((a >= -3.0) & (a < 5.0)).all()


def test_uniform_upper_bound_never_reached():
    # Many float16 draws in [0, 1): rounding to 1.0 must clamp below it.
    dev, _ = seeded(lambda d: fastt.rand(BIG, dtype=fastt.float16,
                                         device=d), **EXACT)
    assert to_numpy(dev).max() < 1.0


def test_draw_sequence_same_offsets():
    # Counter offsets advance identically, so interleaved draws agree.
    def run(dev):
        return [fastt.rand(7, device=dev), fastt.randn(5, 3, device=dev),
                fastt.randint(0, 100, (9,), device=dev),
                fastt.rand(3, dtype=fastt.float64, device=dev),
                fastt.randperm(11, device=dev),
                fastt.rand(2, 2, device=dev)]
    dev, cpu = seeded(run, rtol=2e-6, atol=2e-6)
    assert_close(dev[-1], cpu[-1], **EXACT)


# --------------------------------------------------------------- normal --
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_randn_same_seed(dtype, shape):
    r, a = NORMAL_TOL[dtype]
    seeded(lambda d: fastt.randn(*shape, dtype=dtype, device=d), rtol=r,
           atol=a)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_normal_params(dtype):
    r, a = NORMAL_TOL[dtype]

    def run(dev):
        out = [fastt.empty(333, dtype=dtype, device=dev).normal_(2.5, 0.5),
               fastt.empty(10, dtype=dtype, device=dev).normal_(-1.0, 0.0),
               fastt.empty(11, 6, dtype=dtype, device=dev).t().normal_(),
               fastt.randn_like(fastt.empty(4, 4, dtype=dtype, device=dev))]
        return out
    seeded(run, rtol=r * 4, atol=a * 4)


def test_randn_statistics():
    fastt.manual_seed(5)
    z = to_numpy(fastt.randn(BIG, device=DEVICE)).astype(np.float64)
    assert abs(z.mean()) < 0.005
    assert abs(z.std() - 1.0) < 0.005


# -------------------------------------------------------------- randint --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_randint_same_seed(dtype, shape):
    lo, hi = (0, 2) if dtype == fastt.bool else (
        (0, 200) if dtype == fastt.uint8 else (-50, 100))
    seeded(lambda d: fastt.randint(lo, hi, shape, dtype=dtype, device=d),
           **EXACT)


@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_random_(dtype):
    lo, hi = (0, 2) if dtype == fastt.bool else (0, 7)

    def run(dev):
        return [fastt.empty(101, dtype=dtype, device=dev).random_(lo, hi),
                fastt.empty(9, 8, dtype=dtype, device=dev).t().random_(lo,
                                                                      hi),
                fastt.randint_like(fastt.empty(5, dtype=dtype, device=dev),
                                   lo, hi)]
    seeded(run, **EXACT)


def test_randint_extremes():
    def run(dev):
        return [fastt.randint(-2 ** 63, 2 ** 63 - 1, (1000,), device=dev),
                fastt.randint(-2 ** 31, 2 ** 31, (1000,), device=dev)]
    seeded(run, **EXACT)


# ------------------------------------------------------------- randperm --
@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 50, 128])
def test_randperm(dtype, n):
    dev, _ = seeded(lambda d: fastt.randperm(n, dtype=dtype, device=d),
                    **EXACT)
    assert sorted(to_numpy(dev).tolist()) == list(range(n))


def test_randperm_big():
    dev, _ = seeded(lambda d: fastt.randperm(BIG, device=d), **EXACT)
    assert (np.sort(to_numpy(dev)) == np.arange(BIG)).all()


# ------------------------------------------------------------ bernoulli --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_bernoulli_scalar(dtype):
    def run(dev):
        return [fastt.empty(BIG, dtype=dtype, device=dev).bernoulli_(0.3),
                fastt.empty(7, 5, dtype=dtype, device=dev).t().bernoulli_(
                    0.5),
                fastt.empty(9, dtype=dtype, device=dev).bernoulli_(0.0),
                fastt.empty(9, dtype=dtype, device=dev).bernoulli_(1.0)]
    dev, _ = seeded(run, **EXACT)
    frac = to_numpy(dev[0]).astype(np.float64).mean()
    assert abs(frac - 0.3) < 0.003


@pytest.mark.parametrize("pdtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("dtype", [fastt.float32, fastt.int64, fastt.bool,
                                   fastt.float16], ids=str)
def test_bernoulli_tensor(pdtype, dtype):
    def run(dev):
        p = fastt.linspace(0, 1, 45 * 65, device=dev).reshape(45, 65)
        p = p.to(pdtype)
        out = [fastt.bernoulli(p),
               fastt.empty(45, 65, dtype=dtype, device=dev).bernoulli_(p),
               fastt.empty(45, 65, dtype=dtype, device=dev).bernoulli_(
                   p[0]),  # broadcast p
               fastt.empty(65, 45, dtype=dtype, device=dev).t().bernoulli_(
                   p.t().contiguous().t())]
        return out
    seeded(run, **EXACT)


def test_bernoulli_bad_p_raises():
    # On a device the kernel reports it and the next synchronizing call
    # (.cpu() here) raises; the CPU raises at once.
    p = to_dev(fastt.tensor([0.2, 1.5, 0.3]))
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        fastt.empty(3, device=p.device).bernoulli_(p).cpu()
    p = to_dev(fastt.tensor([0.2, float("nan")]))
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        fastt.bernoulli(p).cpu()
    # Reported once, then cleared: the device stays usable.
    fastt.bernoulli(to_dev(fastt.tensor([0.2, 0.7]))).cpu()
    check(lambda t: t + 1, fastt.ones(3))


# -------------------------------------------------------------- dropout --
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_matches_cpu_and_statistics(dtype, p):
    def run(dev):
        x = fastt.ones(BIG, dtype=dtype, device=dev)
        return F.dropout(x, p, training=True)
    dev, _ = seeded(run, **EXACT)
    a = to_numpy(dev).astype(np.float64)
    zero = (a == 0).mean()
    assert abs(zero - p) < 0.004
    kept = a[a != 0]
    scale = float(fastt.tensor(1.0 / (1.0 - p)).to(dtype).float())
    assert np.allclose(kept, scale, rtol=1e-2)


def test_dropout_eval_and_edges():
    x = fastt.ones(10)
    check(lambda t: F.dropout(t, 0.5, training=False), x)
    check(lambda t: F.dropout(t, 0.0), x)
    check(lambda t: F.dropout(t, 1.0), x)
    seeded(lambda d: F.dropout2d(fastt.ones(4, 6, 5, 5, device=d), 0.4),
           **EXACT)
