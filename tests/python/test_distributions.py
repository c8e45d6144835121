"""fastt.distributions against torch.distributions: log_prob, entropy,
cdf/icdf, moments and KL values (float64, same parameters, tight
tolerance), their gradients, shapes and expand, argument validation and
its messages, constraints and transforms; samples statistically (fastt's
generator is not torch's stream) with fixed seeds, and rsample gradients
through the reparameterization."""
import math
import re

import numpy as np
import pytest
import torch

import fastt
import fastt.distributions as D
from fastt.distributions import constraints as C
from fastt.distributions import transforms as T
from torch_ref import Fz

TD = torch.distributions
F64 = torch.float64


def close(f, t, tol=1e-9):
    """fastt tensor f equals torch tensor t (NaN == NaN, inf == inf)."""
    ft = torch.from_dlpack(f.detach()) if isinstance(f, fastt.Tensor) \
        else torch.as_tensor(f)
    t = t.detach() if isinstance(t, torch.Tensor) else torch.as_tensor(t)
    assert tuple(ft.shape) == tuple(t.shape), (ft.shape, t.shape)
    if t.dtype == torch.float32:
        tol = max(tol, 2e-5)
    torch.testing.assert_close(ft.to(t.dtype), t, rtol=tol, atol=tol,
                               equal_nan=True)


def _rng(seed):
    return np.random.default_rng(seed)


def randn(*shape, seed=0):
    return torch.tensor(_rng(seed).standard_normal(shape), dtype=F64)


def pos(*shape, seed=0, lo=0.5, hi=2.5):
    return torch.tensor(_rng(seed).uniform(lo, hi, shape), dtype=F64)


def spd(n, batch=(), seed=0):
    a = _rng(seed).standard_normal(batch + (n, n))
    return torch.tensor(a @ np.swapaxes(a, -1, -2) + n * np.eye(n), dtype=F64)


def tril(n, batch=(), seed=0):
    a = np.tril(_rng(seed).standard_normal(batch + (n, n)) * 0.3, -1)
    d = _rng(seed + 1).uniform(0.5, 1.5, batch + (n,))
    return torch.tensor(a + d[..., None] * np.eye(n), dtype=F64)


# Each case: (name, build(lib, p), params). build receives the module
# (torch.distributions or fastt.distributions) and the parameters converted
# to that library, so one lambda builds the same distribution in both.
CASES = [
    ("Normal", lambda L, p: L.Normal(p["loc"], p["scale"]),
     dict(loc=randn(3), scale=pos(3))),
    ("NormalScalar", lambda L, p: L.Normal(0.5, 2.0), {}),
    ("Uniform", lambda L, p: L.Uniform(p["low"], p["low"] + p["w"]),
     dict(low=randn(3), w=pos(3))),
    ("Exponential", lambda L, p: L.Exponential(p["rate"]),
     dict(rate=pos(2, 3))),
    ("Laplace", lambda L, p: L.Laplace(p["loc"], p["scale"]),
     dict(loc=randn(3, seed=1), scale=pos(3, seed=1))),
    ("Gamma", lambda L, p: L.Gamma(p["concentration"], p["rate"]),
     dict(concentration=pos(3, lo=0.3, hi=4.0), rate=pos(3, seed=2))),
    ("Beta", lambda L, p: L.Beta(p["c1"], p["c0"]),
     dict(c1=pos(3, seed=3, lo=0.7), c0=pos(3, seed=4, lo=0.7))),
    ("BetaScalar", lambda L, p: L.Beta(2.0, 3.0), {}),
    ("Dirichlet", lambda L, p: L.Dirichlet(p["concentration"]),
     dict(concentration=pos(2, 4, seed=5))),
    ("LogNormal", lambda L, p: L.LogNormal(p["loc"], p["scale"]),
     dict(loc=randn(3, seed=6) * 0.3, scale=pos(3, seed=6, lo=0.2, hi=0.6))),
    ("BernoulliProbs", lambda L, p: L.Bernoulli(p["probs"]),
     dict(probs=pos(3, lo=0.1, hi=0.9))),
    ("BernoulliLogits", lambda L, p: L.Bernoulli(logits=p["logits"]),
     dict(logits=randn(2, 3))),
    ("CategoricalProbs", lambda L, p: L.Categorical(p["probs"]),
     dict(probs=pos(2, 4, seed=7))),
    ("CategoricalLogits", lambda L, p: L.Categorical(logits=p["logits"]),
     dict(logits=randn(4, seed=8))),
    ("OneHotCategorical", lambda L, p: L.OneHotCategorical(p["probs"]),
     dict(probs=pos(2, 4, seed=9))),
    ("Poisson", lambda L, p: L.Poisson(p["rate"]),
     dict(rate=pos(3, lo=0.5, hi=6.0))),
    ("Binomial", lambda L, p: L.Binomial(p["n"], p["probs"]),
     dict(n=torch.full((3,), 6.0, dtype=F64), probs=pos(3, lo=0.1, hi=0.9))),
    ("BinomialLogits", lambda L, p: L.Binomial(10, logits=p["logits"]),
     dict(logits=randn(3, seed=10))),
    ("Multinomial", lambda L, p: L.Multinomial(7, p["probs"]),
     dict(probs=pos(2, 4, seed=11))),
    ("MVNCov", lambda L, p: L.MultivariateNormal(
        p["loc"], covariance_matrix=p["cov"]),
     dict(loc=randn(2, 3), cov=spd(3))),
    ("MVNTril", lambda L, p: L.MultivariateNormal(
        p["loc"], scale_tril=p["tril"]),
     dict(loc=randn(3, seed=12), tril=tril(3, (2,)))),
    ("MVNPrecision", lambda L, p: L.MultivariateNormal(
        p["loc"], precision_matrix=p["prec"]),
     dict(loc=randn(3, seed=13), prec=spd(3, seed=2))),
    ("LowRankMVN", lambda L, p: L.LowRankMultivariateNormal(
        p["loc"], p["W"], p["D"]),
     dict(loc=randn(2, 3), W=randn(2, 3, 2, seed=3) * 0.5, D=pos(2, 3))),
    ("Independent", lambda L, p: L.Independent(
        L.Normal(p["loc"], p["scale"]), 1),
     dict(loc=randn(2, 3), scale=pos(2, 3))),
    ("MixtureNormal", lambda L, p: L.MixtureSameFamily(
        L.Categorical(logits=p["logits"]), L.Normal(p["loc"], p["scale"])),
     dict(logits=randn(2, 3), loc=randn(2, 3, seed=4), scale=pos(2, 3))),
    ("MixtureIndependent", lambda L, p: L.MixtureSameFamily(
        L.Categorical(logits=p["logits"]),
        L.Independent(L.Normal(p["loc"], p["scale"]), 1)),
     dict(logits=randn(3), loc=randn(3, 2, seed=4), scale=pos(3, 2))),
    ("AffineExp", lambda L, p: L.TransformedDistribution(
        L.Normal(p["loc"], p["scale"]),
        [L.transforms.AffineTransform(p["a"], p["b"]),
         L.transforms.ExpTransform()]),
     dict(loc=randn(3), scale=pos(3, hi=1.0), a=randn(3, seed=5) * 0.1,
          b=pos(3, seed=5, lo=0.2, hi=0.8))),
    ("NegAffine", lambda L, p: L.TransformedDistribution(
        L.Laplace(p["loc"], p["scale"]),
        L.transforms.AffineTransform(1.5, -2.0)),
     dict(loc=randn(3), scale=pos(3))),
    ("Tanh", lambda L, p: L.TransformedDistribution(
        L.Normal(p["loc"], p["scale"]), [L.transforms.TanhTransform()]),
     dict(loc=randn(3) * 0.5, scale=pos(3, lo=0.2, hi=0.7))),
    ("Sigmoid", lambda L, p: L.TransformedDistribution(
        L.Normal(p["loc"], p["scale"]), L.transforms.SigmoidTransform()),
     dict(loc=randn(3), scale=pos(3))),
    ("Power", lambda L, p: L.TransformedDistribution(
        L.Exponential(p["rate"]), L.transforms.PowerTransform(p["e"])),
     dict(rate=pos(3), e=pos(3, seed=3))),
    ("StickBreaking", lambda L, p: L.TransformedDistribution(
        L.Normal(p["loc"], p["scale"]),
        L.transforms.StickBreakingTransform()),
     dict(loc=randn(2, 3) * 0.3, scale=pos(2, 3, lo=0.2, hi=0.5))),
    ("RelaxedBernoulli", lambda L, p: L.RelaxedBernoulli(
        p["t"], probs=p["probs"]),
     dict(t=torch.tensor(0.7, dtype=F64), probs=pos(3, lo=0.2, hi=0.8))),
    ("RelaxedOneHot", lambda L, p: L.RelaxedOneHotCategorical(
        p["t"], logits=p["logits"]),
     dict(t=torch.tensor(0.8, dtype=F64), logits=randn(2, 4))),
]
CASE_IDS = [c[0] for c in CASES]
# torch computes Multinomial's lgamma(total_count + 1) from an int64 tensor,
# i.e. in float32; fastt keeps float64, so the entropies agree to ~1e-7.
LOOSE = {"Multinomial": 2e-6}
INT_PARAMS = {"n"}


def build(case, grad=False):
    """(fastt distribution, torch distribution, fastt params, torch params)."""
    _, make, params = case
    tp = {k: v.clone().requires_grad_(grad and k not in INT_PARAMS)
          for k, v in params.items()}
    fp = {k: Fz(v, grad=grad and k not in INT_PARAMS)
          for k, v in params.items()}
    return make(D, fp), make(TD, tp), fp, tp


def values_for(td, n=4):
    torch.manual_seed(0)
    with torch.no_grad():
        return td.sample((n,))


def _both(fn_f, fn_t, tol=1e-9):
    """Compare fn_f() with fn_t(); if torch raises, fastt raises alike."""
    try:
        expected = fn_t()
    except (NotImplementedError, ValueError) as e:
        with pytest.raises(type(e)):
            fn_f()
        return None
    got = fn_f()
    close(got, expected, tol)
    return got


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_values_match_torch(case):
    fd, td, _, _ = build(case)
    assert tuple(fd.batch_shape) == tuple(td.batch_shape)
    assert tuple(fd.event_shape) == tuple(td.event_shape)
    assert fd.has_rsample == td.has_rsample
    v = values_for(td)
    fv = Fz(v)
    for prop in ("mean", "mode", "variance", "stddev"):
        _both(lambda: getattr(fd, prop), lambda: getattr(td, prop))
    _both(fd.entropy, td.entropy, LOOSE.get(case[0], 1e-9))
    _both(lambda: fd.log_prob(fv), lambda: td.log_prob(v))
    _both(lambda: fd.cdf(fv), lambda: td.cdf(v))
    q = torch.linspace(0.05, 0.95, 4, dtype=F64).reshape(
        (4,) + (1,) * len(td.batch_shape)).expand(
        (4,) + tuple(td.batch_shape))
    if len(td.event_shape) == 0:
        _both(lambda: fd.icdf(Fz(q)), lambda: td.icdf(q))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_log_prob_and_entropy_gradients_match_torch(case):
    fd, td, fp, tp = build(case, grad=True)
    if not any(v.requires_grad for v in tp.values()):
        return
    v = values_for(td)
    tl = td.log_prob(v).sum()
    try:
        tl = tl + td.entropy().sum()
        with_entropy = True
    except NotImplementedError:
        with_entropy = False
    fl = fd.log_prob(Fz(v)).sum()
    if with_entropy:
        fl = fl + fd.entropy().sum()
    tol = LOOSE.get(case[0], 1e-8)
    close(fl, tl, tol)
    keys = [k for k in tp if tp[k].requires_grad]
    tg = torch.autograd.grad(tl, [tp[k] for k in keys], allow_unused=True)
    fg = fastt.autograd.grad(fl, [fp[k] for k in keys], allow_unused=True)
    for k, a, b in zip(keys, fg, tg):
        if b is None:
            assert a is None or float(a.abs().sum()) == 0, k
        else:
            close(a, b, tol)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_shapes_and_expand(case):
    fd, td, _, _ = build(case)
    fastt.manual_seed(0)
    s = fd.sample((2, 3))
    assert tuple(s.shape) == (2, 3) + tuple(td.batch_shape) + \
        tuple(td.event_shape)
    assert tuple(fd.sample().shape) == tuple(td.batch_shape) + \
        tuple(td.event_shape)
    assert bool(fd.support.check(s).all())
    new_batch = (5,) + tuple(td.batch_shape)
    fe, te = fd.expand(new_batch), td.expand(new_batch)
    assert tuple(fe.batch_shape) == tuple(te.batch_shape) == new_batch
    assert type(fe) is type(fd)
    v = values_for(td, 5)
    close(fe.log_prob(Fz(v)), te.log_prob(v))
    assert tuple(fe.sample().shape) == new_batch + tuple(td.event_shape)


# ---- sampling statistics -----------------------------------------------------

N = 20000
NO_MOMENTS = {"CategoricalProbs", "CategoricalLogits", "AffineExp",
              "NegAffine", "Tanh", "Sigmoid", "Power", "StickBreaking",
              "RelaxedBernoulli", "RelaxedOneHot"}


def _check_moments(x, mean, var, k=6.0):
    """x: (N, ...) samples; mean/var: torch tensors of the expected
    moments. Bounds are k standard errors (the variance's from the sample
    fourth moment), so a fixed seed makes this deterministic, not lucky."""
    x = torch.from_dlpack(x.detach()).to(F64)
    n = x.shape[0]
    m = x.mean(0)
    assert torch.all((m - mean).abs() <= k * (var / n).sqrt() + 1e-12), \
        (m, mean)
    c = x - m
    v = (c ** 2).mean(0)
    m4 = (c ** 4).mean(0)
    se_v = ((m4 - v ** 2).clamp(min=0) / n).sqrt()
    assert torch.all((v - var).abs() <= k * se_v + 1e-9), (v, var)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in NO_MOMENTS],
                         ids=[c[0] for c in CASES if c[0] not in NO_MOMENTS])
def test_sample_moments(case):
    fd, td, _, _ = build(case)
    fastt.manual_seed(1234)
    x = fd.sample((N,))
    _check_moments(x, td.mean.detach(), td.variance.detach())


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in NO_MOMENTS],
                         ids=[c[0] for c in CASES if c[0] in NO_MOMENTS])
def test_sample_matches_torch_sample_moments(case):
    # no closed-form moments: compare with torch's own samples' moments
    fd, td, _, _ = build(case)
    fastt.manual_seed(99)
    torch.manual_seed(99)
    x = fd.sample((N,))
    with torch.no_grad():
        y = td.sample((4 * N,)).to(F64)
    # the reference moments carry their own (4x smaller) error: k = 7
    _check_moments(x, y.mean(0), y.var(0), k=7.0)


@pytest.mark.parametrize("alpha", [0.05, 0.4, 1.0, 3.0, 50.0])
def test_gamma_sampler_moments(alpha):
    fastt.manual_seed(7)
    x = D.Gamma(fastt.full((2,), alpha, dtype=fastt.float64), 2.0).sample((N,))
    assert bool((x > 0).all())
    a = torch.full((2,), alpha, dtype=F64)
    _check_moments(x, a / 2, a / 4)


@pytest.mark.parametrize("n,p", [(3, 0.3), (20, 0.95), (200, 0.4),
                                 (5000, 0.02), (1e5, 0.7)])
def test_binomial_sampler_moments(n, p):
    fastt.manual_seed(3)
    x = D.Binomial(fastt.full((2,), float(n), dtype=fastt.float64),
                   fastt.full((2,), p, dtype=fastt.float64)).sample((N,))
    assert bool((x >= 0).all() and (x <= n).all() and (x == x.round()).all())
    _check_moments(x, torch.full((2,), n * p, dtype=F64),
                   torch.full((2,), n * p * (1 - p), dtype=F64))


def test_binomial_sampler_pmf():
    # the whole distribution, not just two moments: chi-square-like bound
    fastt.manual_seed(11)
    n, p = 30, 0.45  # BTRS branch (n p >= 10)
    x = D.Binomial(n, fastt.tensor(p, dtype=fastt.float64)).sample((40000,))
    counts = torch.bincount(torch.from_dlpack(x).long(), minlength=n + 1)
    pmf = TD.Binomial(n, torch.tensor(p, dtype=F64)).log_prob(
        torch.arange(n + 1, dtype=F64)).exp()
    expected = pmf * 40000
    assert torch.all((counts - expected).abs() <= 5 * expected.sqrt() + 3)


def test_categorical_and_multinomial_frequencies():
    probs = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=F64)
    fastt.manual_seed(5)
    x = D.Categorical(Fz(probs)).sample((N,))
    assert x.dtype == fastt.int64
    freq = torch.bincount(torch.from_dlpack(x), minlength=4).to(F64) / N
    assert torch.all((freq - probs).abs() <= 6 * (probs * (1 - probs) / N)
                     .sqrt())
    m = D.Multinomial(9, Fz(probs)).sample((N,))
    assert bool((m.sum(-1) == 9).all())
    _check_moments(m, 9 * probs, 9 * probs * (1 - probs))


# ---- reparameterized samples: gradients ---------------------------------------

def _grads(out, *params):
    return fastt.autograd.grad(out.sum(), list(params))


def test_rsample_gradients_location_scale():
    loc = fastt.tensor([0.3, -1.0, 2.0], dtype=fastt.float64,
                       requires_grad=True)
    scale = fastt.tensor([0.5, 1.5, 2.0], dtype=fastt.float64,
                         requires_grad=True)
    for cls in (D.Normal, D.Laplace):
        fastt.manual_seed(0)
        x = cls(loc, scale).rsample((7,))
        gl, gs = _grads(x, loc, scale)
        eps = ((x - loc) / scale).detach()
        close(gl, torch.full((3,), 7.0, dtype=F64))
        close(gs, torch.from_dlpack(eps.sum(0)))
    fastt.manual_seed(0)
    x = D.LogNormal(loc, scale).rsample((7,))
    gl, gs = _grads(x, loc, scale)
    eps = ((x.log() - loc) / scale).detach()
    close(gl, torch.from_dlpack(x.detach().sum(0)))
    close(gs, torch.from_dlpack((x * eps).detach().sum(0)))


def test_rsample_gradients_uniform_exponential():
    low = fastt.tensor([0.0, -2.0], dtype=fastt.float64, requires_grad=True)
    high = fastt.tensor([1.0, 3.0], dtype=fastt.float64, requires_grad=True)
    fastt.manual_seed(1)
    x = D.Uniform(low, high).rsample((6,))
    r = ((x - low) / (high - low)).detach()
    gl, gh = _grads(x, low, high)
    close(gl, torch.from_dlpack((1 - r).sum(0)))
    close(gh, torch.from_dlpack(r.sum(0)))
    rate = fastt.tensor([0.5, 3.0], dtype=fastt.float64, requires_grad=True)
    x = D.Exponential(rate).rsample((6,))
    (g,) = _grads(x, rate)
    close(g, torch.from_dlpack((-x / rate).detach().sum(0)))


def test_rsample_mvn_same_noise_as_formula():
    loc = Fz(randn(3), grad=True)
    L = Fz(tril(3), grad=True)
    fastt.manual_seed(2)
    x = D.MultivariateNormal(loc, scale_tril=L).rsample((5,))
    fastt.manual_seed(2)
    eps = fastt.randn(5, 3, dtype=fastt.float64)
    close(x, torch.from_dlpack(loc.detach() + eps @ L.detach().T))
    gloc, gL = _grads(x, loc, L)
    close(gloc, torch.full((3,), 5.0, dtype=F64))
    expect = torch.tril(torch.ones(3, 1, dtype=F64)
                        * torch.from_dlpack(eps.sum(0)).reshape(1, 3))
    close(gL.tril(), expect)
    # covariance parameterization: the gradient flows through the Cholesky
    cov = Fz(spd(3), grad=True)
    tcov = spd(3).requires_grad_()
    fastt.manual_seed(2)
    x = D.MultivariateNormal(loc, covariance_matrix=cov).rsample((5,))
    tx = torch.from_dlpack(loc.detach()) + torch.from_dlpack(eps) @ \
        torch.linalg.cholesky(tcov).T
    close(x, tx)
    (g,) = _grads(x, cov)
    (tg,) = torch.autograd.grad(tx.sum(), tcov)
    close(g, tg, 1e-8)


def test_rsample_lowrank_same_noise_as_formula():
    loc, W, Dg = Fz(randn(3), grad=True), Fz(randn(3, 2), grad=True), \
        Fz(pos(3), grad=True)
    tW, tD = randn(3, 2).requires_grad_(), pos(3).requires_grad_()
    fastt.manual_seed(4)
    x = D.LowRankMultivariateNormal(loc, W, Dg).rsample((6,))
    fastt.manual_seed(4)
    eW = torch.from_dlpack(fastt.randn(6, 2, dtype=fastt.float64))
    eD = torch.from_dlpack(fastt.randn(6, 3, dtype=fastt.float64))
    tx = randn(3) + eW @ tW.T + tD.sqrt() * eD
    close(x, tx)
    gW, gD = _grads(x, W, Dg)
    tgW, tgD = torch.autograd.grad(tx.sum(), [tW, tD])
    close(gW, tgW)
    close(gD, tgD)


def test_rsample_relaxed_same_noise_as_torch_formula():
    logits = randn(2, 4)
    temp = 0.6
    fl = Fz(logits, grad=True)
    tl = logits.clone().requires_grad_()
    fastt.manual_seed(8)
    x = D.RelaxedOneHotCategorical(temp, logits=fl).rsample((3,))
    fastt.manual_seed(8)
    u = torch.from_dlpack(fastt.rand(3, 2, 4, dtype=fastt.float64))
    eps = torch.finfo(F64).eps
    u = u.clamp(eps, 1 - eps)
    g = -(-u.log()).log()
    lp = tl - tl.logsumexp(-1, keepdim=True)
    tx = torch.softmax((lp + g) / temp, -1)
    close(x, tx, 1e-8)
    w = randn(3, 2, 4, seed=9)
    (gf,) = fastt.autograd.grad((x * Fz(w)).sum(), [fl])
    (gt,) = torch.autograd.grad((tx * w).sum(), [tl])
    close(gf, gt, 1e-8)
    # RelaxedBernoulli
    probs = pos(3, lo=0.2, hi=0.8)
    fp, tp = Fz(probs, grad=True), probs.clone().requires_grad_()
    fastt.manual_seed(9)
    x = D.RelaxedBernoulli(fastt.tensor(temp, dtype=fastt.float64),
                           probs=fp).rsample((4,))
    fastt.manual_seed(9)
    u = torch.from_dlpack(fastt.rand(4, 3, dtype=fastt.float64))
    u = u.clamp(eps, 1 - eps)
    pc = tp.clamp(eps, 1 - eps)
    tx = torch.sigmoid((u.log() - (-u).log1p() + pc.log() - (-pc).log1p())
                       / temp)
    close(x, tx, 1e-8)
    close(_grads(x, fp)[0], torch.autograd.grad(tx.sum(), [tp])[0], 1e-8)


def test_transformed_rsample_gradient():
    loc, scale = Fz(randn(3), grad=True), Fz(pos(3), grad=True)
    d = D.TransformedDistribution(
        D.Normal(loc, scale), [T.AffineTransform(0.5, 2.0), T.TanhTransform()])
    fastt.manual_seed(3)
    y = d.rsample((4,))
    fastt.manual_seed(3)
    eps = torch.from_dlpack(fastt.randn(4, 3, dtype=fastt.float64))
    tl, ts = randn(3).requires_grad_(), pos(3).requires_grad_()
    ty = torch.tanh(0.5 + 2.0 * (tl + eps * ts))
    close(y, ty)
    gl, gs = _grads(y, loc, scale)
    tgl, tgs = torch.autograd.grad(ty.sum(), [tl, ts])
    close(gl, tgl)
    close(gs, tgs)


def test_standard_gamma_grad_matches_torch():
    from fastt.distributions._gamma import _standard_gamma_grad
    a = torch.tensor([0.05, 0.3, 1.0, 2.5, 10.0, 200.0, 0.5, 3.0, 30.0],
                     dtype=F64)
    x = torch.tensor([1e-8, 0.01, 2.0, 0.5, 14.0, 180.0, 4.0, 0.001, 25.0],
                     dtype=F64)
    close(_standard_gamma_grad(Fz(a), Fz(x)), torch._standard_gamma_grad(a, x),
          2e-3)


def test_gamma_rsample_gradient():
    from fastt.distributions._gamma import _standard_gamma_grad
    conc = fastt.tensor([0.4, 2.0, 7.0], dtype=fastt.float64,
                        requires_grad=True)
    rate = fastt.tensor([1.5, 0.5, 2.0], dtype=fastt.float64,
                        requires_grad=True)
    fastt.manual_seed(0)
    x = D.Gamma(conc, rate).rsample((N,))
    gc, gr = _grads(x, conc, rate)
    xd = x.detach()
    close(gr, torch.from_dlpack((-xd / rate.detach()).sum(0)), 1e-8)
    close(gc, torch.from_dlpack(
        (_standard_gamma_grad(conc.detach().expand(xd.shape), xd *
                              rate.detach()) / rate.detach()).sum(0)), 1e-8)
    # unbiased: E[dx/dconc] = d E[x] / dconc = 1 / rate
    per = torch.from_dlpack(_standard_gamma_grad(
        conc.detach().expand(xd.shape), xd * rate.detach()))
    r = torch.from_dlpack(rate.detach())
    m, s = per.mean(0) / r, per.std(0) / r / math.sqrt(N)
    assert torch.all((m - 1 / r).abs() <= 6 * s)


@pytest.mark.parametrize("kind", ["Beta", "Dirichlet"])
def test_beta_dirichlet_rsample_gradient_unbiased(kind):
    # E[d x_0 / d a_0] = d (a_0 / sum a) / d a_0 = (sum a - a_0) / (sum a)^2;
    # one parameter row per draw gives the per-draw gradients and so the
    # estimate's own standard error.
    conc = torch.tensor([1.5, 0.7, 2.5], dtype=F64)
    k = 2 if kind == "Beta" else 3
    a = Fz(conc[:k].expand(N, k).contiguous(), grad=True)
    fastt.manual_seed(1)
    if kind == "Beta":
        x = D.Beta(a[:, 0], a[:, 1]).rsample()
    else:
        x = D.Dirichlet(a).rsample()[:, 0]
    (g,) = fastt.autograd.grad(x.sum(), [a])
    g0 = torch.from_dlpack(g[:, 0])
    assert torch.isfinite(g0).all()
    tot = float(conc[:k].sum())
    expect = (tot - float(conc[0])) / tot ** 2
    assert abs(float(g0.mean()) - expect) <= 6 * float(g0.std()) / N ** 0.5


# ---- KL divergence -------------------------------------------------------------

def _p2(params, seed):
    """Second parameter set of the same shapes (another seed)."""
    out = {}
    for k, v in params.items():
        g = _rng(seed + hash(k) % 100)
        if k in ("loc", "logits", "low", "a"):
            out[k] = torch.tensor(g.standard_normal(v.shape), dtype=F64)
        elif k in ("cov", "prec"):
            out[k] = spd(v.shape[-1], tuple(v.shape[:-2]), seed=seed)
        elif k == "tril":
            out[k] = tril(v.shape[-1], tuple(v.shape[:-2]), seed=seed)
        elif k == "W":
            out[k] = torch.tensor(g.standard_normal(v.shape) * 0.5, dtype=F64)
        elif k == "probs":
            out[k] = torch.tensor(g.uniform(0.1, 0.9, v.shape), dtype=F64)
        else:
            out[k] = torch.tensor(g.uniform(0.5, 2.5, v.shape), dtype=F64) \
                if k != "n" else v
    return out


KL_SAME = ["Normal", "Uniform", "Exponential", "Laplace", "Gamma", "Beta",
           "Dirichlet", "LogNormal", "BernoulliProbs", "BernoulliLogits",
           "CategoricalProbs", "CategoricalLogits", "OneHotCategorical",
           "Poisson", "Binomial", "MVNCov", "MVNTril", "MVNPrecision",
           "LowRankMVN", "Independent", "AffineExp", "Sigmoid"]
_BY_NAME = {c[0]: c for c in CASES}


@pytest.mark.parametrize("name", KL_SAME)
def test_kl_same_family_matches_torch(name):
    _, make, params = _BY_NAME[name]
    p1 = {k: v.clone().requires_grad_(k not in INT_PARAMS)
          for k, v in params.items()}
    p2 = _p2(params, 17)
    if name == "Uniform":  # q covers p in two places, not in the third
        p2 = dict(low=params["low"] - 0.2,
                  w=params["w"] + torch.tensor([0.5, -0.5, 0.5], dtype=F64))
    if name in ("AffineExp", "Sigmoid"):  # same transforms
        for k in ("a", "b"):
            if k in params:
                p2[k] = params[k]
    fp1 = {k: Fz(v, grad=v.requires_grad) for k, v in p1.items()}
    fp2 = {k: Fz(v) for k, v in p2.items()}
    tkl = TD.kl_divergence(make(TD, p1), make(TD, p2))
    fkl = D.kl.kl_divergence(make(D, fp1), make(D, fp2))
    close(fkl, tkl, 1e-8)
    keys = [k for k in p1 if p1[k].requires_grad]
    finite = torch.isfinite(tkl)
    tg = torch.autograd.grad(tkl[finite].sum(), [p1[k] for k in keys],
                             allow_unused=True)
    fg = fastt.autograd.grad(fkl[Fz(finite)].sum(), [fp1[k] for k in keys],
                             allow_unused=True)
    for k, a, b in zip(keys, fg, tg):
        if b is not None:
            close(a, b, 1e-7)


KL_CROSS = [("MVNCov", "LowRankMVN"), ("LowRankMVN", "MVNTril"),
            ("Normal", "Laplace"), ("Laplace", "Normal"), ("Gamma", "Normal"),
            ("Exponential", "Gamma"), ("Gamma", "Exponential"),
            ("Beta", "Normal"), ("Beta", "Gamma"), ("Beta", "Exponential"),
            ("Uniform", "Normal"), ("Uniform", "Gamma"),
            ("Uniform", "Beta"),
            ("Exponential", "Normal"), ("Normal", "Gamma"),
            ("BernoulliProbs", "Poisson"), ("Poisson", "BernoulliProbs"),
            ("Beta", "Uniform")]


@pytest.mark.parametrize("pq", KL_CROSS, ids=["-".join(x) for x in KL_CROSS])
def test_kl_cross_family_matches_torch(pq):
    p, q = _BY_NAME[pq[0]], _BY_NAME[pq[1]]
    pp, qp = dict(p[2]), dict(q[2])
    if pq[0] == "Uniform" and pq[1] in ("Beta",):
        pp = dict(low=torch.tensor([0.1, -0.1, 0.2], dtype=F64),
                  w=torch.tensor([0.5, 0.5, 0.9], dtype=F64))
    if pq == ("Beta", "Uniform"):
        qp = dict(low=torch.tensor([-0.5, 0.1, 0.0], dtype=F64),
                  w=torch.tensor([2.0, 2.0, 1.0], dtype=F64))
    tkl = TD.kl_divergence(p[1](TD, pp), q[1](TD, qp))
    fkl = D.kl_divergence(p[1](D, {k: Fz(v) for k, v in pp.items()}),
                          q[1](D, {k: Fz(v) for k, v in qp.items()}))
    close(fkl, tkl, 1e-8)


def test_kl_registry_and_errors():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    close(D.kl_divergence(p, q), TD.kl_divergence(TD.Normal(0.0, 1.0),
                                                  TD.Normal(1.0, 2.0)))

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return fastt.tensor(42.0)

    assert float(D.kl_divergence(p, q)) == 42.0
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), q)) != 42.0
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(
            fastt.tensor([0.5, 0.5])))
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)
    # different transforms: not implemented, as in torch
    base = D.Normal(fastt.zeros(2), fastt.ones(2))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.TransformedDistribution(base, T.ExpTransform()),
                        D.TransformedDistribution(base, T.TanhTransform()))


def test_kl_infinite_where_supports_differ():
    p = D.Uniform(fastt.tensor([0.0, 0.0]), fastt.tensor([1.0, 1.0]))
    q = D.Uniform(fastt.tensor([-1.0, 0.5]), fastt.tensor([2.0, 1.0]))
    kl = D.kl_divergence(p, q)
    assert math.isfinite(float(kl[0])) and math.isinf(float(kl[1]))
    b = D.Bernoulli(fastt.tensor([0.0, 1.0, 0.5], dtype=fastt.float64))
    c = D.Bernoulli(fastt.tensor([0.5, 0.0, 1.0], dtype=fastt.float64))
    close(D.kl_divergence(b, c), TD.kl_divergence(
        TD.Bernoulli(torch.tensor([0.0, 1.0, 0.5], dtype=F64)),
        TD.Bernoulli(torch.tensor([0.5, 0.0, 1.0], dtype=F64))))
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), D.Exponential(1.0))) \
        == math.inf


# ---- validation ------------------------------------------------------------------

def _first_line(msg):
    return msg.split("\n")[0].replace("torch.", "fastt.")


INVALID = [
    ("Normal", lambda L, t: L.Normal(t([0.0, 1.0, 2.0]), t([1.0, -1.0, 1.0]))),
    ("NormalLoc", lambda L, t: L.Normal(t([0.0, math.nan, 2.0]),
                                        t([1.0, 1.0, 1.0]))),
    ("Exponential", lambda L, t: L.Exponential(t([0.0, 1.0]))),
    ("Gamma", lambda L, t: L.Gamma(t([1.0]), t([-2.0]))),
    ("Beta", lambda L, t: L.Beta(t([1.0]), t([0.0]))),
    ("Dirichlet", lambda L, t: L.Dirichlet(t([1.0, -0.5, 2.0]))),
    ("Bernoulli", lambda L, t: L.Bernoulli(t([0.5, 1.5]))),
    ("Categorical", lambda L, t: L.Categorical(t([-0.1, 0.6, 0.5]))),
    ("Uniform", lambda L, t: L.Uniform(t([0.0, 2.0]), t([1.0, 1.0]))),
    ("Poisson", lambda L, t: L.Poisson(t([-1.0]))),
    ("Binomial", lambda L, t: L.Binomial(t([2.5]), t([0.5]))),
    ("Laplace", lambda L, t: L.Laplace(t([0.0]), t([0.0]))),
    ("MVN", lambda L, t: L.MultivariateNormal(
        t([0.0, 0.0]), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]]))),
    ("MVNTril", lambda L, t: L.MultivariateNormal(
        t([0.0, 0.0]), scale_tril=t([[1.0, 0.0], [2.0, -1.0]]))),
    ("LowRank", lambda L, t: L.LowRankMultivariateNormal(
        t([0.0, 0.0]), t([[1.0], [0.0]]), t([1.0, -1.0]))),
]


def _tt(v):
    return torch.tensor(v, dtype=F64)


def _ft(v):
    return fastt.tensor(v, dtype=fastt.float64)


@pytest.mark.parametrize("make", [m for _, m in INVALID],
                         ids=[n for n, _ in INVALID])
def test_invalid_parameters_raise_torch_message(make):
    with pytest.raises(ValueError) as te:
        make(TD, _tt)
    with pytest.raises(ValueError, match=r"^Expected parameter ") as fe:
        make(D, _ft)
    assert _first_line(str(fe.value)) == _first_line(str(te.value))


def test_normal_message_text():
    with pytest.raises(ValueError, match=re.escape(
            "Expected parameter scale (Tensor of shape (3,)) of distribution "
            "Normal(loc: fastt.Size([3]), scale: fastt.Size([3])) to satisfy "
            "the constraint GreaterThan(lower_bound=0.0), but found invalid "
            "values:")):
        D.Normal(fastt.zeros(3), fastt.tensor([1.0, -1.0, 1.0]))


def test_set_default_validate_args():
    bad = fastt.tensor([-1.0])
    try:
        D.Distribution.set_default_validate_args(False)
        d = D.Normal(0.0, bad)  # accepted
        assert bool(fastt.isnan(d.log_prob(fastt.tensor([0.0]))).all())
        D.Exponential(fastt.tensor([1.0])).log_prob(fastt.tensor([-1.0]))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, bad)
    D.Normal(0.0, bad, validate_args=False)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(3)


SUPPORT_CASES = [
    ("Exponential", lambda L, t: L.Exponential(t([1.0, 2.0, 3.0])),
     [1.0, -1.0, 2.0]),
    ("Bernoulli", lambda L, t: L.Bernoulli(t([0.3, 0.3])), [0.5, 1.0]),
    ("Categorical", lambda L, t: L.Categorical(t([0.3, 0.7])), [2.0]),
    ("Beta", lambda L, t: L.Beta(t([2.0]), t([2.0])), [1.5]),
    ("Dirichlet", lambda L, t: L.Dirichlet(t([2.0, 2.0])), [0.3, 0.3]),
    ("Uniform", lambda L, t: L.Uniform(t([0.0]), t([1.0])), [1.5]),
    ("Poisson", lambda L, t: L.Poisson(t([2.0])), [1.5]),
    ("OneHot", lambda L, t: L.OneHotCategorical(t([0.5, 0.5])), [1.0, 1.0]),
]


@pytest.mark.parametrize("make,value", [(m, v) for _, m, v in SUPPORT_CASES],
                         ids=[n for n, _, _ in SUPPORT_CASES])
def test_value_outside_support_raises_torch_message(make, value):
    with pytest.raises(ValueError) as te:
        make(TD, _tt).log_prob(_tt(value))
    with pytest.raises(ValueError, match=r"^Expected value argument ") as fe:
        make(D, _ft).log_prob(_ft(value))
    assert _first_line(str(fe.value)) == _first_line(str(te.value))


def test_other_argument_errors():
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli(fastt.tensor([0.5]), fastt.tensor([0.0]))
    with pytest.raises(ValueError, match="right-most size of value must "
                       "match event_shape"):
        D.Dirichlet(fastt.ones(3)).log_prob(fastt.ones(2) / 2)
    with pytest.raises(ValueError, match="not broadcastable"):
        D.Normal(fastt.zeros(3), 1.0).log_prob(fastt.zeros(4))
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Categorical(fastt.tensor(1.0))
    with pytest.raises(ValueError, match="Exactly one of"):
        D.MultivariateNormal(fastt.zeros(2))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(D.Normal(fastt.zeros(2), 1.0), 2)
    with pytest.raises(NotImplementedError, match="Inhomogeneous"):
        D.Binomial(fastt.tensor([2.0, 3.0]), fastt.tensor([0.5, 0.5])) \
            .entropy()
    with pytest.raises(NotImplementedError):
        D.Poisson(fastt.tensor([1.0])).entropy()


# ---- constraints -------------------------------------------------------------------

CONSTRAINT_VALUES = [
    [[0.0, 1.0, -1.0], [0.5, 2.0, 3.0]],
    [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]],
    [[math.nan, 1.0, 0.0], [0.0, 0.0, 1.0]],
]
CONSTRAINTS = [
    ("real", lambda L: L.real), ("positive", lambda L: L.positive),
    ("nonnegative", lambda L: L.nonnegative),
    ("unit_interval", lambda L: L.unit_interval),
    ("boolean", lambda L: L.boolean), ("simplex", lambda L: L.simplex),
    ("one_hot", lambda L: L.one_hot),
    ("nonnegative_integer", lambda L: L.nonnegative_integer),
    ("positive_integer", lambda L: L.positive_integer),
    ("integer_interval", lambda L: L.integer_interval(0, 2)),
    ("interval", lambda L: L.interval(-0.5, 1.0)),
    ("half_open_interval", lambda L: L.half_open_interval(0.0, 1.0)),
    ("greater_than", lambda L: L.greater_than(0.2)),
    ("greater_than_eq", lambda L: L.greater_than_eq(0.2)),
    ("less_than", lambda L: L.less_than(1.0)),
    ("real_vector", lambda L: L.real_vector),
    ("independent", lambda L: L.independent(L.positive, 1)),
    ("multinomial", lambda L: L.multinomial(3)),
    ("cat", lambda L: L.cat([L.positive, L.real], dim=-1, lengths=[1, 2])),
    ("stack", lambda L: L.stack([L.positive, L.real, L.unit_interval],
                                dim=-1)),
]


@pytest.mark.parametrize("make", [m for _, m in CONSTRAINTS],
                         ids=[n for n, _ in CONSTRAINTS])
def test_constraints_match_torch(make):
    fc, tc = make(C), make(TD.constraints)
    assert repr(fc) == repr(tc)
    assert fc.event_dim == tc.event_dim and fc.is_discrete == tc.is_discrete
    for v in CONSTRAINT_VALUES:
        close(fc.check(_ft(v)), tc.check(_tt(v)))


MATRICES = [spd(3), tril(3), -spd(3), randn(3, 3), spd(3, (2,)),
            torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=F64)]


@pytest.mark.parametrize("name", ["lower_cholesky", "lower_triangular",
                                  "positive_definite", "positive_semidefinite",
                                  "symmetric", "square", "corr_cholesky"])
def test_matrix_constraints_match_torch(name):
    fc, tc = getattr(C, name), getattr(TD.constraints, name)
    assert repr(fc) == repr(tc) and fc.event_dim == tc.event_dim
    for m in MATRICES:
        close(fc.check(Fz(m)), tc.check(m))


def test_dependent_constraints():
    assert C.is_dependent(C.dependent)
    assert C.is_dependent(D.Uniform.support)
    assert C.is_dependent(D.Categorical.support)
    with pytest.raises(ValueError):
        C.dependent.check(fastt.zeros(1))
    u = D.Uniform(fastt.zeros(2), fastt.ones(2))
    assert repr(u.support).startswith("Interval(lower_bound=")
    assert repr(D.Categorical(fastt.ones(3)).support) == repr(
        TD.Categorical(torch.ones(3)).support)


# ---- transforms --------------------------------------------------------------------

TRANSFORMS = [
    ("Exp", lambda L, p: L.ExpTransform(), randn(2, 3)),
    ("Affine", lambda L, p: L.AffineTransform(p["a"], p["b"]), randn(2, 3)),
    ("AffineScalar", lambda L, p: L.AffineTransform(1.0, -3.0), randn(2, 3)),
    ("AffineEvent", lambda L, p: L.AffineTransform(p["a"], p["b"],
                                                   event_dim=1), randn(2, 3)),
    ("Sigmoid", lambda L, p: L.SigmoidTransform(), randn(2, 3)),
    ("Tanh", lambda L, p: L.TanhTransform(), randn(2, 3)),
    ("Softplus", lambda L, p: L.SoftplusTransform(), randn(2, 3)),
    ("Power", lambda L, p: L.PowerTransform(p["b"]), pos(2, 3)),
    ("Abs", lambda L, p: L.AbsTransform(), randn(2, 3)),
    ("Softmax", lambda L, p: L.SoftmaxTransform(), randn(2, 3)),
    ("StickBreaking", lambda L, p: L.StickBreakingTransform(), randn(2, 3)),
    ("LowerCholesky", lambda L, p: L.LowerCholeskyTransform(), randn(2, 3, 3)),
    ("PositiveDefinite", lambda L, p: L.PositiveDefiniteTransform(),
     randn(2, 3, 3)),
    ("Reshape", lambda L, p: L.ReshapeTransform((3,), (3, 1)), randn(2, 3)),
    ("Compose", lambda L, p: L.ComposeTransform(
        [L.AffineTransform(p["a"], p["b"]), L.SigmoidTransform(),
         L.PowerTransform(p["b"])]), randn(2, 3)),
    ("Independent", lambda L, p: L.IndependentTransform(L.ExpTransform(), 1),
     randn(2, 3)),
    ("Inverse", lambda L, p: L.ExpTransform().inv, pos(2, 3)),
    ("ComposeInv", lambda L, p: L.ComposeTransform(
        [L.ExpTransform(), L.AffineTransform(1.0, p["b"])]).inv, pos(2, 3)),
]
TPARAMS = dict(a=randn(3, seed=3), b=pos(3, seed=3))


@pytest.mark.parametrize("make,x", [(m, x) for _, m, x in TRANSFORMS],
                         ids=[n for n, _, _ in TRANSFORMS])
def test_transforms_match_torch(make, x):
    tt = make(TD.transforms, TPARAMS)
    ft = make(T, {k: Fz(v) for k, v in TPARAMS.items()})
    fx = Fz(x)
    y = _both(lambda: ft(fx), lambda: tt(x))
    ty = tt(x)
    _both(lambda: ft.inv(y), lambda: tt.inv(ty), 1e-8)
    _both(lambda: ft.log_abs_det_jacobian(fx, y),
          lambda: tt.log_abs_det_jacobian(x, ty), 1e-8)
    assert repr(ft.domain) == repr(tt.domain)
    assert repr(ft.codomain) == repr(tt.codomain)
    assert ft.bijective == tt.bijective
    shape = tuple(x.shape)
    assert tuple(ft.forward_shape(shape)) == tuple(tt.forward_shape(shape))
    try:
        s = tt.sign
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ft.sign
    else:
        if isinstance(s, torch.Tensor):
            close(ft.sign, s)
        else:
            assert ft.sign == s


def test_transform_cache_and_equality():
    t = T.ExpTransform().with_cache(1)
    x = fastt.randn(3)
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    assert T.ExpTransform() == T.ExpTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.ExpTransform().inv == T.ExpTransform().inv
    assert T.ComposeTransform([T.ExpTransform()]) == \
        T.ComposeTransform([T.ExpTransform()])
    with pytest.raises(ValueError):
        T.Transform(cache_size=2)
    assert T.identity_transform(x) is x


def test_stickbreaking_roundtrip_and_simplex():
    x = fastt.randn(4, 5, dtype=fastt.float64)
    t = T.StickBreakingTransform()
    y = t(x)
    assert tuple(y.shape) == (4, 6) and bool(C.simplex.check(y).all())
    close(t.inv(y), torch.from_dlpack(x), 1e-8)


# ---- the rest ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["BernoulliProbs", "CategoricalProbs",
                                  "OneHotCategorical", "Binomial"])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support_matches_torch(name, expand):
    fd, td, _, _ = build(_BY_NAME[name])
    close(fd.enumerate_support(expand), td.enumerate_support(expand))
    assert fd.has_enumerate_support


def test_utils_match_torch():
    from fastt.distributions import utils as U
    p = pos(2, 3, lo=0.0, hi=1.0)
    TU = TD.utils
    close(U.probs_to_logits(Fz(p)), TU.probs_to_logits(p))
    close(U.probs_to_logits(Fz(p), True), TU.probs_to_logits(p, True))
    close(U.logits_to_probs(Fz(p)), TU.logits_to_probs(p))
    close(U.logits_to_probs(Fz(p), True), TU.logits_to_probs(p, True))
    close(U.clamp_probs(Fz(p)), TU.clamp_probs(p))
    a, b = U.broadcast_all(Fz(randn(2, 1)), 3.0)
    assert tuple(b.shape) == (2, 1) and b.dtype == fastt.float64
    with pytest.raises(ValueError):
        U.broadcast_all("x")
    v = randn(2, 6)
    close(U.vec_to_tril_matrix(Fz(v)), TU.vec_to_tril_matrix(v))
    close(U.tril_matrix_to_vec(Fz(randn(3, 3))),
          TU.tril_matrix_to_vec(randn(3, 3)))
    close(U.vec_to_tril_matrix(Fz(randn(3)), -1),
          TU.vec_to_tril_matrix(randn(3), -1))

    class Lazy:
        calls = 0

        @U.lazy_property
        def x(self):
            Lazy.calls += 1
            return 5

    o = Lazy()
    assert o.x == 5 and o.x == 5 and Lazy.calls == 1


def test_lazy_probs_logits_and_repr():
    d = D.Bernoulli(logits=fastt.tensor([0.0, 2.0], dtype=fastt.float64))
    assert "probs" not in d.__dict__
    close(d.probs, torch.sigmoid(torch.tensor([0.0, 2.0], dtype=F64)))
    assert repr(D.Normal(0.0, 1.0)) == repr(TD.Normal(0.0, 1.0))
    assert repr(D.Normal(fastt.zeros(3), 1.0)) == \
        "Normal(loc: fastt.Size([3]), scale: fastt.Size([3]))"
    assert repr(D.Independent(D.Normal(0.0, 1.0).expand((2,)), 1)) \
        .startswith("Independent(Normal(")


def test_perplexity_and_sample_n():
    d = D.Normal(fastt.zeros(2, dtype=fastt.float64), 2.0)
    close(d.perplexity(), TD.Normal(torch.zeros(2, dtype=F64), 2.0)
          .perplexity())
    with pytest.warns(FutureWarning):
        assert tuple(d.sample_n(4).shape) == (4, 2)


def test_one_hot_straight_through():
    probs = Fz(pos(2, 3), grad=True)
    d = D.OneHotCategoricalStraightThrough(probs)
    x = d.rsample((4,))
    assert bool(C.one_hot.check(x.detach()).all())
    (g,) = fastt.autograd.grad((x * fastt.arange(3.0, dtype=fastt.float64))
                               .sum(), [probs])
    assert bool(fastt.isfinite(g).all()) and float(g.abs().sum()) > 0


def test_mixture_sample_statistics():
    logits = randn(3, seed=2)
    loc, scale = randn(3, seed=3) * 3, pos(3)
    fd = D.MixtureSameFamily(D.Categorical(logits=Fz(logits)),
                             D.Normal(Fz(loc), Fz(scale)))
    td = TD.MixtureSameFamily(TD.Categorical(logits=logits),
                              TD.Normal(loc, scale))
    fastt.manual_seed(6)
    _check_moments(fd.sample((N,)).unsqueeze(-1), td.mean.reshape(1),
                   td.variance.reshape(1))


def test_exponential_family_entropy_via_bregman():
    # the generic Bregman entropy equals each family's closed form
    for fd in (D.Normal(Fz(randn(3)), Fz(pos(3))),
               D.Exponential(Fz(pos(3))),
               D.Gamma(Fz(pos(3)), Fz(pos(3, seed=1))),
               D.Bernoulli(Fz(pos(3, lo=0.1, hi=0.9)))):
        close(D.ExponentialFamily.entropy(fd),
              torch.from_dlpack(fd.entropy()), 1e-8)


def test_float32_parameters():
    d = D.Normal(fastt.zeros(3), fastt.ones(3))
    fastt.manual_seed(0)
    x = d.rsample((4,))
    assert x.dtype == fastt.float32
    assert d.log_prob(x).dtype == fastt.float32
    g = D.Gamma(fastt.full((3,), 0.5), fastt.ones(3)).sample((5,))
    assert g.dtype == fastt.float32 and bool((g > 0).all())
    b = D.Beta(fastt.full((3,), 0.5), fastt.full((3,), 2.0)).sample((5,))
    assert b.dtype == fastt.float32

