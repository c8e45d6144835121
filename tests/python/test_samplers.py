"""The samplers' distributions (the OpInfo suite checks only their dtype
and shape): moments and frequencies from large draws, with bounds many
standard errors wide so a seeded run never flakes, and tight enough that a
wrong transform (a swapped parameter, an off-by-one category) fails."""
import math

import pytest

import fastt

N = 200_000


@pytest.fixture(autouse=True)
def _seed():
    fastt.manual_seed(1234)


def _mean(t):
    return t.double().mean().item()


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64])
def test_exponential(dtype):
    x = fastt.empty(N, dtype=dtype).exponential_(2.5)
    assert x.dtype == dtype and x.min().item() >= 0
    assert abs(_mean(x) - 0.4) < 0.01


def test_cauchy_median_and_quartiles():
    x = fastt.empty(N, dtype=fastt.float64).cauchy_(3.0, 2.0)
    s = x.sort().values
    q1, med, q3 = (s[int(N * f)].item() for f in (0.25, 0.5, 0.75))
    assert abs(med - 3.0) < 0.05
    assert abs(q1 - 1.0) < 0.06 and abs(q3 - 5.0) < 0.06  # median -+ sigma


def test_log_normal():
    x = fastt.empty(N, dtype=fastt.float64).log_normal_(0.5, 0.25)
    lx = x.log()
    assert abs(_mean(lx) - 0.5) < 0.005
    assert abs(lx.std().item() - 0.25) < 0.005


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.int64])
def test_geometric(dtype):
    x = fastt.empty(N, dtype=dtype).geometric_(0.25)
    assert x.dtype == dtype and x.min().item() >= 1
    assert abs(_mean(x) - 4.0) < 0.05
    assert abs((x == 1).double().mean().item() - 0.25) < 0.005


def test_normal_tensor_parameters_broadcast():
    mean = fastt.tensor([[-3.0], [5.0]])
    std = fastt.tensor([0.5, 2.0, 4.0])
    x = fastt.stack([fastt.normal(mean, std) for _ in range(20000)])
    assert tuple(x.shape) == (20000, 2, 3)
    m = x.mean(0)
    s = x.std(0)
    for i, mu in enumerate((-3.0, 5.0)):
        for j, sd in enumerate((0.5, 2.0, 4.0)):
            assert abs(m[i, j].item() - mu) < 5 * sd / math.sqrt(20000)
            assert abs(s[i, j].item() - sd) < 0.05 * sd
    y = fastt.normal(2.0, 3.0, size=(N,))
    assert abs(_mean(y) - 2.0) < 0.05 and abs(y.std().item() - 3.0) < 0.05
    with pytest.raises(RuntimeError, match="std >= 0"):
        fastt.normal(fastt.zeros(3), fastt.tensor([1.0, -1.0, 1.0]))


def test_multinomial_with_replacement_frequencies():
    p = fastt.tensor([0.1, 0.0, 0.6, 0.3, 0.0])
    x = fastt.multinomial(p, N, replacement=True)
    assert x.dtype == fastt.int64 and tuple(x.shape) == (N,)
    counts = fastt.bincount(x, minlength=5) if hasattr(fastt, "bincount") \
        else fastt.stack([(x == k).sum() for k in range(5)])
    f = [c / N for c in counts.tolist()]
    assert f[1] == 0 and f[4] == 0   # zero-probability categories never
    for k, want in ((0, 0.1), (2, 0.6), (3, 0.3)):
        assert abs(f[k] - want) < 0.005


def test_multinomial_without_replacement():
    w = fastt.tensor([[1.0, 2.0, 3.0, 4.0, 0.0]]).repeat(40000, 1)
    x = fastt.multinomial(w, 4)           # unnormalised weights
    assert tuple(x.shape) == (40000, 4)
    srt = x.sort(1).values
    assert (srt == fastt.tensor([0, 1, 2, 3])).all().item()  # no repeats,
    first = x[:, 0]                                          # never cat 4
    for k, want in enumerate((0.1, 0.2, 0.3, 0.4)):
        assert abs((first == k).double().mean().item() - want) < 0.01
    # the second draw, given the first: P(second = 0 | first = 3) = 1/6
    sel = x[first == 3][:, 1]
    assert abs((sel == 0).double().mean().item() - 1 / 6) < 0.015
    with pytest.raises(RuntimeError, match="not enough"):
        fastt.multinomial(fastt.tensor([1.0, 0.0, 0.0]), 2)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        fastt.multinomial(fastt.zeros(3), 1, True)


@pytest.mark.parametrize("lam", [0.3, 3.0, 9.5, 10.0, 37.0, 2500.0])
def test_poisson_frequencies(lam):
    """Both samplers (inversion below 10, PTRS from 10): the frequency of
    each count near the mean against the pmf, within 5 standard errors."""
    x = fastt.poisson(fastt.full((N,), lam, dtype=fastt.float64))
    assert x.dtype == fastt.float64
    vals = x.long()
    assert bool((x == vals.double()).all()) and vals.min().item() >= 0
    lo = max(0, int(lam - 2 * math.sqrt(lam)))
    for k in range(lo, int(lam + 2 * math.sqrt(lam)) + 1):
        pmf = math.exp(k * math.log(lam) - lam - math.lgamma(k + 1))
        freq = (vals == k).double().mean().item()
        assert abs(freq - pmf) < 5 * math.sqrt(pmf * (1 - pmf) / N) + 1e-6, k


def test_poisson_mixed_rates_errors_and_gradient():
    rates = fastt.tensor([0.0, 0.5, 12.0, 1e5], dtype=fastt.float32,
                         requires_grad=True)
    x = fastt.poisson(rates.expand(50000, 4))
    assert x.dtype == fastt.float32 and x.requires_grad
    means = x.double().mean(0)
    assert means[0].item() == 0.0
    for got, lam in zip(means.tolist()[1:], [0.5, 12.0, 1e5]):
        assert abs(got - lam) < 6 * math.sqrt(lam / 50000)
    x.sum().backward()
    assert rates.grad.abs().sum().item() == 0.0
    with pytest.raises(RuntimeError, match="non-negative"):
        fastt.poisson(fastt.tensor([1.0, -1.0]))
    with pytest.raises(RuntimeError, match="non-negative"):
        fastt.poisson(fastt.tensor([float("nan")]))
    with pytest.raises(NotImplementedError, match="Long"):
        fastt.poisson(fastt.tensor([1, 2]))
