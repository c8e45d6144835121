"""The rest of torch.distributions in fastt.distributions (StudentT, Cauchy,
HalfNormal, HalfCauchy, Chi2, Gumbel, Pareto, Weibull, Kumaraswamy,
LogisticNormal, InverseGamma, FisherSnedecor, GeneralizedPareto,
ContinuousBernoulli, Geometric, NegativeBinomial, VonMises; Cat/Stack/
CorrCholesky transforms; biject_to / transform_to) against torch: values
and gradients in float64 on the same parameters, KL pairs, validation
messages; samples statistically with fixed seeds and bounds from the
standard error; rsample values and gradients against torch's formula on
the same noise."""
import math
import warnings

import pytest
import torch

import fastt
import fastt.distributions as D
from fastt.distributions import constraints as C
from fastt.distributions import transforms as T
from fastt.distributions._gamma import _standard_gamma_grad
from test_distributions import (_both, _check_moments, _first_line, close,
                                pos, randn, spd, tril)
from torch_ref import Fz

TD = torch.distributions
F64 = torch.float64
N = 20000


def _t(v):
    return torch.tensor(v, dtype=F64)


# (name, build(lib, params), params): one lambda builds the same
# distribution from torch.distributions or fastt.distributions.
CASES = [
    ("StudentT", lambda L, p: L.StudentT(p["df"], p["loc"], p["scale"]),
     dict(df=_t([0.8, 1.5, 4.5]), loc=randn(3), scale=pos(3))),
    ("StudentTScalar", lambda L, p: L.StudentT(3.0), {}),
    ("Cauchy", lambda L, p: L.Cauchy(p["loc"], p["scale"]),
     dict(loc=randn(2, 3), scale=pos(2, 3))),
    ("HalfNormal", lambda L, p: L.HalfNormal(p["scale"]), dict(scale=pos(3))),
    ("HalfCauchy", lambda L, p: L.HalfCauchy(p["scale"]), dict(scale=pos(3))),
    ("Chi2", lambda L, p: L.Chi2(p["df"]), dict(df=pos(3, lo=0.5, hi=6.0))),
    ("Gumbel", lambda L, p: L.Gumbel(p["loc"], p["scale"]),
     dict(loc=randn(3, seed=1), scale=pos(3, seed=1))),
    ("GumbelScalar", lambda L, p: L.Gumbel(0.5, 2.0), {}),
    ("Pareto", lambda L, p: L.Pareto(p["scale"], p["alpha"]),
     dict(scale=pos(3), alpha=_t([0.7, 1.5, 3.5]))),
    ("Weibull", lambda L, p: L.Weibull(p["scale"], p["concentration"]),
     dict(scale=pos(3), concentration=pos(3, seed=2, lo=0.6, hi=3.0))),
    ("Kumaraswamy", lambda L, p: L.Kumaraswamy(p["c1"], p["c0"]),
     dict(c1=_t([0.7, 1.5, 3.0]), c0=_t([2.0, 0.8, 1.7]))),
    ("LogisticNormal", lambda L, p: L.LogisticNormal(p["loc"], p["scale"]),
     dict(loc=randn(2, 3) * 0.5, scale=pos(2, 3, lo=0.3, hi=1.0))),
    ("InverseGamma", lambda L, p: L.InverseGamma(p["concentration"],
                                                 p["rate"]),
     dict(concentration=_t([0.8, 1.5, 4.0]), rate=pos(3, seed=3))),
    ("FisherSnedecor", lambda L, p: L.FisherSnedecor(p["df1"], p["df2"]),
     dict(df1=_t([1.5, 3.0, 6.0]), df2=_t([1.5, 3.0, 9.0]))),
    ("GeneralizedPareto", lambda L, p: L.GeneralizedPareto(
        p["loc"], p["scale"], p["concentration"]),
     # float32: torch's log_prob compares with a float32 zero tensor and
     # raises "Double did not match Float" for float64 parameters
     dict(loc=randn(3).float(), scale=pos(3).float(),
          concentration=torch.tensor([-0.3, 0.0, 0.4]))),
    ("ContinuousBernoulli", lambda L, p: L.ContinuousBernoulli(p["probs"]),
     dict(probs=_t([0.1, 0.4995, 0.5, 0.8]))),
    ("ContinuousBernoulliLogits",
     lambda L, p: L.ContinuousBernoulli(logits=p["logits"]),
     dict(logits=randn(2, 3))),
    ("Geometric", lambda L, p: L.Geometric(p["probs"]),
     dict(probs=pos(3, lo=0.1, hi=0.9))),
    ("GeometricLogits", lambda L, p: L.Geometric(logits=p["logits"]),
     dict(logits=_t([-1.2, 0.0, 0.7]))),
    ("NegativeBinomial", lambda L, p: L.NegativeBinomial(p["n"], p["probs"]),
     dict(n=_t([1.0, 2.5, 7.0]), probs=pos(3, lo=0.1, hi=0.8))),
    ("NegativeBinomialLogits",
     lambda L, p: L.NegativeBinomial(4.0, logits=p["logits"]),
     dict(logits=_t([-0.6, 0.0, 0.4]))),
    ("VonMises", lambda L, p: L.VonMises(p["loc"], p["concentration"]),
     dict(loc=randn(4), concentration=_t([0.3, 2.0, 3.9, 12.0]))),
    ("WishartCov", lambda L, p: L.Wishart(p["df"], covariance_matrix=p["cov"]),
     dict(df=_t([4.0, 6.5]), cov=spd(3))),
    ("WishartTril", lambda L, p: L.Wishart(p["df"], scale_tril=p["tril"]),
     dict(df=_t([5.0, 3.0]), tril=tril(3, (2,)))),
    ("WishartPrecision", lambda L, p: L.Wishart(
        p["df"], precision_matrix=p["prec"]),
     dict(df=_t(3.5), prec=spd(3, seed=2))),
    ("LKJCholesky", lambda L, p: L.LKJCholesky(3, p["c"]),
     dict(c=_t([0.5, 1.0, 3.0]))),
    ("LKJCholeskyScalar", lambda L, p: L.LKJCholesky(4, 2.0), {}),
]
CASE_IDS = [c[0] for c in CASES]
BY_NAME = {c[0]: c for c in CASES}
INT_PARAMS = set()


def build(case, grad=False):
    """(fastt distribution, torch distribution, fastt params, torch
    params)."""
    _, make, params = case
    tp = {k: v.clone().requires_grad_(grad) for k, v in params.items()}
    fp = {k: Fz(v, grad=grad) for k, v in params.items()}
    return make(D, fp), make(TD, tp), fp, tp


def values_for(td, n=4):
    torch.manual_seed(0)
    # torch 2.13's Wishart warns "Singular sample detected." for every
    # regular sample (its singularity test is inverted)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return td.sample((n,))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_values_match_torch(case):
    fd, td, _, _ = build(case)
    assert type(fd).__name__ == type(td).__name__
    assert tuple(fd.batch_shape) == tuple(td.batch_shape)
    assert tuple(fd.event_shape) == tuple(td.event_shape)
    assert fd.has_rsample == td.has_rsample
    assert fd.has_enumerate_support == td.has_enumerate_support
    v = values_for(td)
    fv = Fz(v)
    for prop in ("mean", "mode", "variance", "stddev"):
        _both(lambda: getattr(fd, prop), lambda: getattr(td, prop))
    _both(fd.entropy, td.entropy)
    _both(lambda: fd.log_prob(fv), lambda: td.log_prob(v))
    _both(lambda: fd.cdf(fv), lambda: td.cdf(v))
    if len(td.event_shape) == 0:
        q = torch.linspace(0.05, 0.95, 4, dtype=F64).reshape(
            (4,) + (1,) * len(td.batch_shape)).expand(
            (4,) + tuple(td.batch_shape))
        _both(lambda: fd.icdf(Fz(q)), lambda: td.icdf(q))


@pytest.mark.parametrize("case", [c for c in CASES if c[2]],
                         ids=[c[0] for c in CASES if c[2]])
def test_log_prob_and_entropy_gradients_match_torch(case):
    fd, td, fp, tp = build(case, grad=True)
    v = values_for(td)
    tl = td.log_prob(v).sum()
    fl = fd.log_prob(Fz(v)).sum()
    try:
        tl = tl + td.entropy().sum()
    except NotImplementedError:
        pass
    else:
        fl = fl + fd.entropy().sum()
    close(fl, tl, 1e-8)
    keys = list(tp)
    tg = torch.autograd.grad(tl, [tp[k] for k in keys], allow_unused=True)
    fg = fastt.autograd.grad(fl, [fp[k] for k in keys], allow_unused=True)
    for k, a, b in zip(keys, fg, tg):
        if b is None:
            assert a is None or float(a.abs().sum()) == 0, k
        else:
            close(a, b, 1e-8)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_shapes_and_expand(case):
    fd, td, _, _ = build(case)
    fastt.manual_seed(0)
    s = fd.sample((2, 3))
    assert tuple(s.shape) == (2, 3) + tuple(td.batch_shape) + \
        tuple(td.event_shape)
    assert str(s.dtype).split(".")[-1] == \
        str(values_for(td, 1).dtype).split(".")[-1]
    assert tuple(fd.sample().shape) == tuple(td.batch_shape) + \
        tuple(td.event_shape)
    if case[0] != "VonMises":  # torch: support real, values in [-pi, pi)
        assert bool(fd.support.check(s).all())
    new_batch = (5,) + tuple(td.batch_shape)
    fe, te = fd.expand(new_batch), td.expand(new_batch)
    assert tuple(fe.batch_shape) == tuple(te.batch_shape) == new_batch
    assert type(fe) is type(fd)
    v = values_for(td, 5)
    close(fe.log_prob(Fz(v)), te.log_prob(v))
    assert tuple(fe.sample().shape) == new_batch + tuple(td.event_shape)


# ---- sampling statistics ----------------------------------------------------

MOMENTS = ["WishartCov", "WishartTril", "WishartPrecision",
           "Chi2", "Gumbel", "GumbelScalar", "HalfNormal", "Weibull",
           "Kumaraswamy", "ContinuousBernoulli", "ContinuousBernoulliLogits",
           "Geometric", "GeometricLogits", "NegativeBinomial",
           "NegativeBinomialLogits"]


@pytest.mark.parametrize("name", MOMENTS)
def test_sample_moments(name):
    fd, td, _, _ = build(BY_NAME[name])
    fastt.manual_seed(1234)
    x = fd.sample((N,))
    _check_moments(x, td.mean.detach(), td.variance.detach())


@pytest.mark.parametrize("make", [
    lambda L: L.StudentT(_c(L, [9.0, 12.0]), _c(L, [1.0, -2.0]),
                         _c(L, [0.5, 2.0])),
    lambda L: L.Pareto(_c(L, [1.0, 2.0]), _c(L, [9.0, 12.0])),
    lambda L: L.InverseGamma(_c(L, [9.0, 12.0]), _c(L, [1.0, 3.0])),
    lambda L: L.FisherSnedecor(_c(L, [3.0, 8.0]), _c(L, [12.0, 20.0])),
    lambda L: L.GeneralizedPareto(_c(L, [0.0, 1.0]), _c(L, [1.0, 2.0]),
                                  _c(L, [-0.4, 0.1])),
], ids=["StudentT", "Pareto", "InverseGamma", "FisherSnedecor",
        "GeneralizedPareto"])
def test_sample_moments_light_tailed_parameters(make):
    # parameters with finite fourth moments, so that the standard errors
    # of the sample moments are themselves well estimated
    td, fd = make(TD), make(D)
    fastt.manual_seed(4321)
    _check_moments(fd.sample((N,)), td.mean, td.variance)


def _c(L, v):
    if L is TD:
        return torch.tensor(v, dtype=F64)
    return fastt.tensor(v, dtype=fastt.float64)


CDF_CASES = ["StudentT", "Cauchy", "HalfNormal", "HalfCauchy", "Chi2",
             "Gumbel", "Pareto", "Weibull", "Kumaraswamy", "InverseGamma",
             "FisherSnedecor", "GeneralizedPareto", "ContinuousBernoulli"]


@pytest.mark.parametrize("name", CDF_CASES)
def test_sample_empirical_cdf(name):
    # heavy tails too: the fraction of draws <= t is binomial, so its
    # standard error is exact; thresholds are torch's own draws and the
    # reference probability is torch's cdf (or, where torch has none, the
    # fraction of 4N torch draws)
    fd, td, _, _ = build(BY_NAME[name])
    fastt.manual_seed(77)
    x = torch.from_dlpack(fd.sample((N,)))
    thresholds = values_for(td, 5)
    frac = (x.unsqueeze(0) <= thresholds.unsqueeze(1)).to(F64).mean(1)
    try:
        p = td.cdf(thresholds).detach()
        se = (p * (1 - p) / N).sqrt()
    except NotImplementedError:
        torch.manual_seed(78)
        y = td.sample((4 * N,))
        p = (y.unsqueeze(0) <= thresholds.unsqueeze(1)).to(F64).mean(1)
        se = (p * (1 - p) / N).sqrt() * math.sqrt(1.25)
    assert torch.all((frac - p).abs() <= 6 * se + 1e-3), (frac, p)


def test_logistic_normal_samples_match_torch_moments():
    fd, td, _, _ = build(BY_NAME["LogisticNormal"])
    fastt.manual_seed(5)
    torch.manual_seed(5)
    x = fd.sample((N,))
    assert bool(C.simplex.check(x).all())
    y = td.sample((4 * N,))
    _check_moments(x, y.mean(0), y.var(0), k=7.0)


def test_von_mises_sampler_circular_moments():
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - variance, E[sin(x - loc)] = 0
    loc = _t([0.5, -2.0, 3.0, 0.0, 1.0])
    kappa = _t([1e-6, 0.3, 2.0, 8.0, 50.0])
    fastt.manual_seed(9)
    for dtype in (fastt.float64, fastt.float32):
        fd = D.VonMises(Fz(loc).to(dtype), Fz(kappa).to(dtype))
        x = fd.sample((N,))
        assert x.dtype == dtype
        x = torch.from_dlpack(x).to(F64)
        assert torch.all(x >= -math.pi) and torch.all(x <= math.pi)
        c, s = torch.cos(x - loc), torch.sin(x - loc)
        r = torch.special.i1(kappa) / torch.special.i0(kappa)
        assert torch.all((c.mean(0) - r).abs() <= 6 * c.std(0) / N ** 0.5)
        assert torch.all(s.mean(0).abs() <= 6 * s.std(0) / N ** 0.5)


@pytest.mark.parametrize("dim,eta", [(2, 0.5), (3, 1.0), (5, 3.0)])
def test_lkj_cholesky_sampler_correlation_moments(dim, eta):
    # every off-diagonal correlation of LKJ(eta) in dim dimensions is
    # 2 Beta(b, b) - 1, b = eta - 1 + dim / 2: mean 0, variance
    # 1 / (2 eta + dim - 1)
    fastt.manual_seed(13)
    L = D.LKJCholesky(dim, fastt.tensor(eta, dtype=fastt.float64)).sample(
        (N,))
    assert bool(C.corr_cholesky.check(L).all())
    corr = torch.from_dlpack(L @ L.mT)
    i, j = torch.tril_indices(dim, dim, -1)
    r = corr[:, i, j]
    k = r.shape[1]
    _check_moments(Fz(r.contiguous()), torch.zeros(k, dtype=F64),
                   torch.full((k,), 1 / (2 * eta + dim - 1), dtype=F64))
    close(corr.diagonal(dim1=-2, dim2=-1), torch.ones(N, dim, dtype=F64),
          1e-12)


def test_wishart_rsample_gradient_same_noise():
    # sample = (L A)(L A)^T, A the Bartlett factor: the scale_tril
    # gradient against torch on the same A
    Lt = tril(3, seed=5)
    fL = Fz(Lt, grad=True)
    tL = Lt.clone().requires_grad_()
    fd = D.Wishart(6.0, scale_tril=fL)
    fastt.manual_seed(8)
    x = fd.rsample((50,))
    fastt.manual_seed(8)
    chi = D.Chi2(fastt.tensor([6.0, 5.0, 4.0], dtype=fastt.float64)) \
        .rsample((50,))
    below = fastt.randn((50, 3), dtype=fastt.float64)
    A = torch.diag_embed(torch.from_dlpack(chi).sqrt())
    i, j = torch.tril_indices(3, 3, -1)
    A[:, i, j] = torch.from_dlpack(below)
    y = (tL @ A) @ (tL @ A).mT
    close(x, y, 1e-10)
    w = torch.linspace(0.5, 1.5, y.numel(), dtype=F64).reshape(y.shape)
    (fg,) = fastt.autograd.grad((x * Fz(w)).sum(), [fL])
    (tg,) = torch.autograd.grad((y * w).sum(), [tL])
    close(fg, tg, 1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # regular draws do not warn
        fd.rsample((5,))


def test_wishart_number_df_with_batched_scale():
    # torch 2.13 keeps a number df 0-d and its mean fails for batched
    # matrices; fastt expands df to the batch shape
    tl = tril(3, (2,))
    with pytest.raises(RuntimeError):
        TD.Wishart(5.0, scale_tril=tl).mean
    fd = D.Wishart(5.0, scale_tril=Fz(tl))
    td = TD.Wishart(torch.full((2,), 5.0, dtype=F64), scale_tril=tl)
    for prop in ("mean", "mode", "variance"):
        close(getattr(fd, prop), getattr(td, prop))
    close(fd.entropy(), td.entropy())


def test_lkj_cholesky_log_prob_normalized():
    # dim 2: L = [[1, 0], [r, sqrt(1 - r^2)]], r = 2 Beta(eta, eta) - 1;
    # the density over r is the log_prob plus the Jacobian of r -> L_11
    eta = 1.7
    r = torch.linspace(-0.99, 0.99, 9, dtype=F64)
    L = torch.zeros(9, 2, 2, dtype=F64)
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1.0, r, (1 - r ** 2).sqrt()
    lp = torch.from_dlpack(D.LKJCholesky(2, fastt.tensor(
        eta, dtype=fastt.float64)).log_prob(Fz(L)))
    e = torch.tensor(eta, dtype=F64)
    ref = TD.Beta(e, e).log_prob((r + 1) / 2) - math.log(2)
    # p(L) dL_10 with L_10 = r: the same density as r's
    close(lp, ref, 1e-9)


def test_wishart_and_lkj_argument_errors():
    for L in (TD, D):
        with pytest.raises(ValueError, match="Expected dim to be an integer"):
            L.LKJCholesky(1)
        with pytest.raises(AssertionError, match="Exactly one of"):
            L.Wishart(4.0)
        with pytest.raises(ValueError, match="expected to be greater than"):
            L.Wishart(1.5, covariance_matrix=_c(L, [[1.0, 0.0, 0.0],
                                                     [0.0, 1.0, 0.0],
                                                     [0.0, 0.0, 1.0]]))
        with pytest.warns(UserWarning, match="Low df values"):
            L.Wishart(2.5, covariance_matrix=_c(L, [[1.0, 0.0, 0.0],
                                                     [0.0, 1.0, 0.0],
                                                     [0.0, 0.0, 1.0]]))


def test_negative_binomial_pmf_frequencies():
    fd = D.NegativeBinomial(3.0, fastt.tensor(0.4, dtype=fastt.float64))
    td = TD.NegativeBinomial(3.0, torch.tensor(0.4, dtype=F64))
    fastt.manual_seed(12)
    x = torch.from_dlpack(fd.sample((N,))).long()
    counts = torch.bincount(x, minlength=12)[:12].to(F64)
    expected = td.log_prob(torch.arange(12, dtype=F64)).exp() * N
    assert torch.all((counts - expected).abs() <= 6 * expected.sqrt() + 2)


# ---- reparameterized samples: against torch's formula on the same noise -----

def _leaf(v):
    return Fz(_t(v), grad=True)


def _noise_then(seed, draw):
    fastt.manual_seed(seed)
    return draw()


RSAMPLE = [
    # name, fastt distribution from leaves, params, noise draw (fastt, same
    # calls as the distribution makes), torch formula(params, noise)
    ("Cauchy", lambda P: D.Cauchy(P["loc"], P["scale"]),
     dict(loc=[0.3, -1.0], scale=[0.5, 2.0]),
     lambda s: fastt.empty(s, dtype=fastt.float64).cauchy_(),
     lambda P, e: P["loc"] + e * P["scale"]),
    ("HalfNormal", lambda P: D.HalfNormal(P["scale"]), dict(scale=[0.5, 2.0]),
     lambda s: fastt.randn(s, dtype=fastt.float64),
     lambda P, e: (P["scale"] * e).abs()),
    ("HalfCauchy", lambda P: D.HalfCauchy(P["scale"]), dict(scale=[0.5, 2.0]),
     lambda s: fastt.empty(s, dtype=fastt.float64).cauchy_(),
     lambda P, e: (e * P["scale"]).abs()),
    ("Gumbel", lambda P: D.Gumbel(P["loc"], P["scale"]),
     dict(loc=[0.3, -1.0], scale=[0.5, 2.0]),
     lambda s: fastt.rand(s, dtype=fastt.float64),
     lambda P, u: P["loc"] - P["scale"] * torch.log(-torch.log(
         torch.finfo(F64).tiny + u * (1 - torch.finfo(F64).eps
                                      - torch.finfo(F64).tiny)))),
    ("Pareto", lambda P: D.Pareto(P["scale"], P["alpha"]),
     dict(scale=[0.5, 2.0], alpha=[1.5, 3.0]),
     lambda s: fastt.empty(s, dtype=fastt.float64).exponential_(),
     lambda P, e: P["scale"] * torch.exp(e / P["alpha"])),
    ("Weibull", lambda P: D.Weibull(P["scale"], P["k"]),
     dict(scale=[0.5, 2.0], k=[0.8, 3.0]),
     lambda s: fastt.empty(s, dtype=fastt.float64).exponential_(),
     lambda P, e: P["scale"] * e.pow(1 / P["k"])),
    ("Kumaraswamy", lambda P: D.Kumaraswamy(P["a"], P["b"]),
     dict(a=[0.7, 2.0], b=[1.5, 0.8]),
     lambda s: fastt.rand(s, dtype=fastt.float64),
     lambda P, u: (1 - u.pow(1 / P["b"])).pow(1 / P["a"])),
    ("GeneralizedPareto", lambda P: D.GeneralizedPareto(
        P["loc"], P["scale"], P["c"]),
     dict(loc=[0.0, 1.0, -1.0], scale=[1.0, 0.5, 2.0], c=[-0.3, 0.0, 0.4]),
     lambda s: fastt.rand(s, dtype=fastt.float64),
     lambda P, u: TD.GeneralizedPareto(P["loc"], P["scale"], P["c"]).icdf(u)),
    ("ContinuousBernoulli", lambda P: D.ContinuousBernoulli(P["p"]),
     dict(p=[0.2, 0.5, 0.9]),
     lambda s: fastt.rand(s, dtype=fastt.float64),
     lambda P, u: TD.ContinuousBernoulli(P["p"]).icdf(u)),
    ("LogisticNormal", lambda P: D.LogisticNormal(P["loc"], P["scale"]),
     dict(loc=[0.3, -1.0], scale=[0.5, 2.0]),
     lambda s: fastt.randn(s[:-1] + (s[-1] - 1,), dtype=fastt.float64),
     lambda P, e: TD.transforms.StickBreakingTransform()(
         P["loc"] + e * P["scale"])),
]


@pytest.mark.parametrize("name,make,params,noise,formula", RSAMPLE,
                         ids=[r[0] for r in RSAMPLE])
def test_rsample_same_noise_as_torch_formula(name, make, params, noise,
                                             formula):
    fp = {k: _leaf(v) for k, v in params.items()}
    tp = {k: _t(v).requires_grad_() for k, v in params.items()}
    d = make(fp)
    assert d.has_rsample
    shape = tuple(d._extended_shape((500,)))
    fastt.manual_seed(3)
    x = d.rsample((500,))
    e = torch.from_dlpack(_noise_then(3, lambda: noise(shape)))
    y = formula(tp, e)
    close(x, y, 1e-10)
    # weights so that the gradient is not just that of a sum
    w = torch.linspace(0.5, 1.5, y.numel(), dtype=F64).reshape(y.shape)
    fg = fastt.autograd.grad((x * Fz(w)).sum(), list(fp.values()))
    tg = torch.autograd.grad((y * w).sum(), list(tp.values()))
    for a, b in zip(fg, tg):
        close(a, b, 1e-8)


class _TorchGammaFromFastt(torch.autograd.Function):
    """A torch Gamma(alpha, 1) sample fixed to fastt's draw g, with the
    implicit reparameterization gradient in alpha."""

    @staticmethod
    def forward(ctx, alpha, g):
        ctx.save_for_backward(alpha, g)
        return g.clone()

    @staticmethod
    def backward(ctx, grad):
        alpha, g = ctx.saved_tensors
        dg = torch.from_dlpack(_standard_gamma_grad(Fz(alpha), Fz(g)))
        return grad * dg, None


def test_studentt_rsample_is_normal_over_chi2_on_the_same_noise():
    df, loc, scale = _t([0.8, 3.0, 12.0]), _t([0.0, 1.0, -2.0]), \
        _t([1.0, 0.5, 2.0])
    fp = [Fz(v, grad=True) for v in (df, loc, scale)]
    tp = [v.clone().requires_grad_() for v in (df, loc, scale)]
    fastt.manual_seed(21)
    x = D.StudentT(*fp).rsample((400,))
    fastt.manual_seed(21)
    X = torch.from_dlpack(fastt.randn((400, 3), dtype=fastt.float64))
    g = D.Chi2(Fz(df)).rsample((400,)) / 2  # the Gamma(df / 2, 1) draw
    G = _TorchGammaFromFastt.apply((tp[0] / 2).expand(400, 3),
                                   torch.from_dlpack(g))
    Z = 2 * G
    y = tp[1] + tp[2] * X * torch.rsqrt(Z / tp[0])
    close(x, y, 1e-10)
    fg = fastt.autograd.grad(x.sum(), fp)
    tg = torch.autograd.grad(y.sum(), tp)
    for a, b in zip(fg, tg):
        close(a, b, 1e-7)


def test_inverse_gamma_and_fisher_rsample_gradients():
    conc = _leaf([2.0, 5.0])
    rate = _leaf([0.5, 3.0])
    fastt.manual_seed(2)
    x = D.InverseGamma(conc, rate).rsample((300,))
    fastt.manual_seed(2)
    gdraw = D.Gamma(conc.detach(), 1.0).rsample((300,))
    close(x, torch.from_dlpack(rate.detach() / gdraw), 1e-10)
    gc, gr = fastt.autograd.grad(x.sum(), [conc, rate])
    close(gr, torch.from_dlpack((x / rate).detach().sum(0)), 1e-10)
    dg = _standard_gamma_grad(conc.detach().expand(gdraw.shape), gdraw)
    close(gc, torch.from_dlpack((-x.detach() / gdraw * dg).sum(0)), 1e-8)
    df1, df2 = _leaf([3.0, 6.0]), _leaf([5.0, 9.0])
    y = D.FisherSnedecor(df1, df2).rsample((300,))
    g1, g2 = fastt.autograd.grad(y.sum(), [df1, df2])
    assert bool(fastt.isfinite(g1).all() and fastt.isfinite(g2).all())
    assert not D.VonMises(0.0, 1.0).has_rsample
    assert not D.Geometric(0.5).has_rsample


# ---- KL ---------------------------------------------------------------------

def _pp(name, **over):
    params = dict(BY_NAME[name][2])
    params.update({k: _t(v) for k, v in over.items()})
    return BY_NAME[name][1], params


KL_PAIRS = [
    # (p, q) as (name, overrides) with parameters where the value is finite
    (("Gumbel", {}), ("Gumbel", dict(loc=[0.5, -0.5, 1.0], scale=[1.0, 2.0,
                                                                  0.7]))),
    (("Geometric", {}), ("Geometric", dict(probs=[0.3, 0.6, 0.5]))),
    (("HalfNormal", {}), ("HalfNormal", dict(scale=[1.0, 2.0, 0.7]))),
    (("Pareto", {}), ("Pareto", dict(scale=[0.4, 3.0, 1.0],
                                     alpha=[1.0, 2.0, 0.5]))),
    (("Cauchy", {}), ("Cauchy", dict(loc=[[0.5, 0.0, 1.0]],
                                     scale=[[1.0, 2.0, 0.7]]))),
    (("ContinuousBernoulli", {}), ("ContinuousBernoulli",
                                   dict(probs=[0.7, 0.2, 0.5001, 0.4]))),
    (("Chi2", {}), ("Chi2", dict(df=[1.0, 2.0, 7.0]))),
    (("ContinuousBernoulli", dict(probs=[0.1, 0.5, 0.8])), ("Normal", {})),
    (("ContinuousBernoulli", dict(probs=[0.1, 0.5, 0.8])),
     ("Exponential", {})),
    (("ContinuousBernoulli", {}), ("Uniform", dict(low=[-1.0, 0.0, 0.5, -1.0],
                                                   w=[3.0, 2.0, 1.0, 1.5]))),
    (("Beta", {}), ("ContinuousBernoulli", {})),
    (("Uniform", dict(low=[0.1, 0.0, 0.3, -0.2], w=[0.5, 0.5, 0.4, 0.5])),
     ("ContinuousBernoulli", {})),
    (("Exponential", {}), ("Gumbel", {})),
    (("Gamma", {}), ("Gumbel", {})),
    (("Gumbel", {}), ("Normal", {})),
    (("Normal", {}), ("Gumbel", {})),
    (("Uniform", {}), ("Gumbel", {})),
    (("Pareto", dict(alpha=[0.7, 2.5, 3.5])), ("Exponential", {})),
    (("Pareto", dict(alpha=[0.7, 2.5, 3.5])), ("Gamma", {})),
    (("Pareto", dict(alpha=[1.5, 2.5, 3.5])), ("Normal", {})),
    (("Uniform", dict(low=[0.6, 1.5, -0.5], w=[1.0, 1.0, 2.0])),
     ("Pareto", dict(scale=[0.5, 1.0, 0.1], alpha=[1.0, 2.0, 3.0]))),
    (("Gumbel", {}), ("Beta", {})),
    (("Gumbel", {}), ("ContinuousBernoulli", {})),
    (("Gumbel", {}), ("Pareto", {})),
    (("Normal", {}), ("Pareto", {})),
    (("Normal", {}), ("ContinuousBernoulli", {})),
    (("Laplace", {}), ("Pareto", {})),
    (("Laplace", {}), ("ContinuousBernoulli", {})),
    (("Gamma", {}), ("Pareto", {})),
    (("Exponential", {}), ("ContinuousBernoulli", {})),
    (("Beta", {}), ("Pareto", {})),
    (("ContinuousBernoulli", {}), ("Pareto", {})),
    (("Pareto", {}), ("Uniform", {})),
    (("Pareto", {}), ("Beta", {})),
]
_BASE = {
    "Normal": (lambda L, p: L.Normal(p["loc"], p["scale"]),
               dict(loc=randn(3, seed=31), scale=pos(3, seed=31))),
    "Exponential": (lambda L, p: L.Exponential(p["rate"]),
                    dict(rate=pos(3, seed=32))),
    "Gamma": (lambda L, p: L.Gamma(p["concentration"], p["rate"]),
              dict(concentration=pos(3, seed=33), rate=pos(3, seed=34))),
    "Uniform": (lambda L, p: L.Uniform(p["low"], p["low"] + p["w"]),
                dict(low=randn(3, seed=35), w=pos(3, seed=35))),
    "Beta": (lambda L, p: L.Beta(p["c1"], p["c0"]),
             dict(c1=pos(4, seed=36), c0=pos(4, seed=37))),
    "Laplace": (lambda L, p: L.Laplace(p["loc"], p["scale"]),
                dict(loc=randn(3, seed=38), scale=pos(3, seed=38))),
}


def _kl_side(spec):
    name, over = spec
    make, params = BY_NAME[name][1:] if name in BY_NAME else _BASE[name]
    params = dict(params)
    params.update({k: _t(v) for k, v in over.items()})
    return make, params


def _kl_id(pair):
    return f"{pair[0][0]}-{pair[1][0]}"


@pytest.mark.parametrize("pair", KL_PAIRS, ids=[_kl_id(p) for p in KL_PAIRS])
def test_kl_matches_torch(pair):
    (mp, pp), (mq, qp) = _kl_side(pair[0]), _kl_side(pair[1])
    tpp = {k: v.clone().requires_grad_() for k, v in pp.items()}
    fpp = {k: Fz(v, grad=True) for k, v in pp.items()}
    tkl = TD.kl_divergence(mp(TD, tpp), mq(TD, qp))
    fkl = D.kl_divergence(mp(D, fpp), mq(D, {k: Fz(v) for k, v in
                                             qp.items()}))
    close(fkl, tkl, 1e-8)
    finite = torch.isfinite(tkl)
    if not bool(finite.any()):
        return
    keys = list(tpp)
    tg = torch.autograd.grad(tkl[finite].sum(), [tpp[k] for k in keys],
                             allow_unused=True)
    fg = fastt.autograd.grad(fkl[Fz(finite)].sum(), [fpp[k] for k in keys],
                             allow_unused=True)
    for k, a, b in zip(keys, fg, tg):
        if b is not None:
            close(a, b, 1e-7)


def test_kl_pairs_registered_like_torch():
    # every registered (P, Q) among classes both libraries have is present
    # in fastt, and vice versa
    names = set(D.__all__)
    tk = {(p.__name__, q.__name__) for p, q in TD.kl._KL_REGISTRY
          if p.__name__ in names and q.__name__ in names}
    fk = {(p.__name__, q.__name__) for p, q in D.kl._KL_REGISTRY
          if p.__name__ in names and q.__name__ in names}  # not test-local
    assert tk - fk == set()
    assert fk - tk == set()


def test_kl_studentt_not_implemented_like_torch():
    with pytest.raises(NotImplementedError):
        TD.kl_divergence(TD.StudentT(3.0), TD.StudentT(4.0))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.StudentT(3.0), D.StudentT(4.0))


# ---- validation -------------------------------------------------------------

INVALID = [
    ("StudentT", lambda L, t: L.StudentT(t([1.0, -1.0]))),
    ("StudentTScale", lambda L, t: L.StudentT(t([1.0]), t([0.0]), t([0.0]))),
    ("Cauchy", lambda L, t: L.Cauchy(t([0.0]), t([-1.0]))),
    ("HalfNormal", lambda L, t: L.HalfNormal(t([0.0, 1.0]))),
    ("HalfCauchy", lambda L, t: L.HalfCauchy(t([-2.0]))),
    ("Chi2", lambda L, t: L.Chi2(t([0.0]))),
    ("Gumbel", lambda L, t: L.Gumbel(t([0.0]), t([-1.0]))),
    ("Pareto", lambda L, t: L.Pareto(t([1.0]), t([-1.0]))),
    ("ParetoScale", lambda L, t: L.Pareto(t([-1.0]), t([1.0]))),
    ("Weibull", lambda L, t: L.Weibull(t([1.0]), t([0.0]))),
    ("Kumaraswamy", lambda L, t: L.Kumaraswamy(t([1.0]), t([-1.0]))),
    ("LogisticNormal", lambda L, t: L.LogisticNormal(t([0.0, 1.0]),
                                                     t([1.0, 0.0]))),
    ("InverseGamma", lambda L, t: L.InverseGamma(t([-1.0]), t([1.0]))),
    ("FisherSnedecor", lambda L, t: L.FisherSnedecor(t([1.0]), t([0.0]))),
    ("GeneralizedPareto", lambda L, t: L.GeneralizedPareto(
        t([0.0]), t([-1.0]), t([0.1]))),
    ("GeometricZero", lambda L, t: L.Geometric(t([0.0, 0.5]))),
    ("GeometricBig", lambda L, t: L.Geometric(t([1.5]))),
    ("NegativeBinomial", lambda L, t: L.NegativeBinomial(t([-1.0]),
                                                         t([0.5]))),
    ("NegativeBinomialProbs", lambda L, t: L.NegativeBinomial(t([2.0]),
                                                              t([1.0]))),
    ("VonMises", lambda L, t: L.VonMises(t([0.0]), t([0.0]))),
    ("ContinuousBernoulli", lambda L, t: L.ContinuousBernoulli(
        t([1.5]), validate_args=True)),
    ("LKJCholesky", lambda L, t: L.LKJCholesky(3, t([1.0, -1.0]))),
    ("Wishart", lambda L, t: L.Wishart(t(4.0), covariance_matrix=t(
        [[1.0, 2.0], [2.0, 1.0]]))),
]


@pytest.mark.parametrize("make", [m for _, m in INVALID],
                         ids=[n for n, _ in INVALID])
def test_invalid_parameters_raise_torch_message(make):
    with pytest.raises(ValueError) as te:
        make(TD, lambda v: _c(TD, v))
    with pytest.raises(ValueError) as fe:
        make(D, lambda v: _c(D, v))
    assert _first_line(str(fe.value)) == _first_line(str(te.value))


OUTSIDE = [
    ("HalfNormal", lambda L, t: L.HalfNormal(t([1.0])), [-0.5]),
    ("Pareto", lambda L, t: L.Pareto(t([1.0]), t([2.0])), [0.5]),
    ("Weibull", lambda L, t: L.Weibull(t([1.0]), t([2.0])), [0.0]),
    ("Kumaraswamy", lambda L, t: L.Kumaraswamy(t([1.0]), t([2.0])), [1.5]),
    ("Geometric", lambda L, t: L.Geometric(t([0.5])), [1.5]),
    ("NegativeBinomial", lambda L, t: L.NegativeBinomial(t([2.0]), t([0.5])),
     [-1.0]),
    ("ContinuousBernoulli", lambda L, t: L.ContinuousBernoulli(t([0.3])),
     [1.2]),
    ("GeneralizedPareto", lambda L, t: L.GeneralizedPareto(
        t([0.0]), t([1.0]), t([-0.5])), [2.5]),
    ("LogisticNormal", lambda L, t: L.LogisticNormal(t([0.0]), t([1.0])),
     [0.3, 0.3]),
    ("LKJCholesky", lambda L, t: L.LKJCholesky(2, t(1.0)),
     [[1.0, 0.0], [0.5, 0.5]]),
    ("Wishart", lambda L, t: L.Wishart(t(3.0), scale_tril=t(
        [[1.0, 0.0], [0.5, 1.0]])), [[1.0, 2.0], [2.0, 1.0]]),
]


@pytest.mark.parametrize("make,value", [(m, v) for _, m, v in OUTSIDE],
                         ids=[n for n, _, _ in OUTSIDE])
def test_value_outside_support_raises_torch_message(make, value):
    td, fd = make(TD, lambda v: _c(TD, v)), make(D, lambda v: _c(D, v))
    with pytest.raises(ValueError) as te:
        td.log_prob(_c(TD, value))
    with pytest.raises(ValueError, match="^Expected value argument") as fe:
        fd.log_prob(_c(D, value))
    assert _first_line(str(fe.value)) == _first_line(str(te.value))


def test_other_argument_errors():
    for L in (TD, D):
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            L.Geometric()
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            L.NegativeBinomial(3.0, _c(L, [0.5]), _c(L, [0.0]))
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            L.ContinuousBernoulli()
    # without validate_args torch clamps ContinuousBernoulli's probs first
    fd = D.ContinuousBernoulli(fastt.tensor([1.0, 0.0], dtype=fastt.float64))
    td = TD.ContinuousBernoulli(torch.tensor([1.0, 0.0], dtype=F64))
    close(fd.probs, td.probs)
    close(fd.mean, td.mean)


# ---- transforms, biject_to / transform_to -----------------------------------

TRANSFORMS = [
    ("CorrCholesky", lambda L: L.CorrCholeskyTransform(), randn(2, 6)),
    ("CorrCholesky1", lambda L: L.CorrCholeskyTransform(), randn(1)),
    ("Cat", lambda L: L.CatTransform(
        [L.ExpTransform(), L.identity_transform,
         L.AffineTransform(1.0, 2.0)], dim=1, lengths=[1, 2, 2]),
     randn(3, 5)),
    ("CatNegDim", lambda L: L.CatTransform(
        [L.ExpTransform(), L.IndependentTransform(L.SigmoidTransform(), 1)],
        dim=-1, lengths=[2, 3]), randn(2, 5)),
    ("CatBatchDim", lambda L: L.CatTransform(
        [L.IndependentTransform(L.ExpTransform(), 1),
         L.IndependentTransform(L.TanhTransform(), 1)], dim=0,
        lengths=[1, 2]), randn(3, 4) * 0.5),
    ("Stack", lambda L: L.StackTransform(
        [L.ExpTransform(), L.SigmoidTransform(), L.TanhTransform()], dim=1),
     randn(2, 3)),
    ("StackDim0", lambda L: L.StackTransform(
        [L.ExpTransform(), L.AffineTransform(0.5, -3.0)], dim=0),
     randn(2, 4)),
]


@pytest.mark.parametrize("make,x", [(m, x) for _, m, x in TRANSFORMS],
                         ids=[n for n, _, _ in TRANSFORMS])
def test_new_transforms_match_torch(make, x):
    tt, ft = make(TD.transforms), make(T)
    fx = Fz(x, grad=True)
    tx = x.clone().requires_grad_()
    ty = tt(tx)
    fy = ft(fx)
    close(fy, ty)
    close(ft.inv(fy.detach()), tt.inv(ty.detach()), 1e-8)
    tl = tt.log_abs_det_jacobian(tx, ty)
    fl = ft.log_abs_det_jacobian(fx, fy)
    close(fl, tl, 1e-8)
    (tg,) = torch.autograd.grad(tl.sum() + ty.sum(), [tx])
    (fg,) = fastt.autograd.grad(fl.sum() + fy.sum(), [fx])
    close(fg, tg, 1e-8)
    assert repr(ft.domain) == repr(tt.domain)
    assert repr(ft.codomain) == repr(tt.codomain)
    assert ft.bijective == tt.bijective
    try:  # torch's cat constraint cannot check mixed event dims either
        tcheck = tt.codomain.check(ty.detach())
    except RuntimeError:
        with pytest.raises(RuntimeError):
            ft.codomain.check(fy.detach())
    else:
        close(ft.codomain.check(fy.detach()), tcheck)
        assert bool(tcheck.all())
    shape = tuple(x.shape)
    assert tuple(ft.forward_shape(shape)) == tuple(tt.forward_shape(shape))
    out = tuple(ty.shape)
    assert tuple(ft.inverse_shape(out)) == tuple(tt.inverse_shape(out))
    assert ft.with_cache(1)._cache_size == 1


def test_transform_argument_errors():
    for L in (TD.transforms, T):
        with pytest.raises(AssertionError):
            L.CatTransform([L.ExpTransform()], lengths=[1, 2])
        with pytest.raises(AssertionError):
            L.StackTransform([1])
        c = L.CatTransform([L.ExpTransform()], dim=0, lengths=[2])
        with pytest.raises(AssertionError, match=r"x.size\(0\) = 3"):
            c(_c(TD if L is TD.transforms else D, [1.0, 2.0, 3.0]))
        with pytest.raises(ValueError,
                           match="not a flattened lower-diagonal"):
            L.CorrCholeskyTransform().forward_shape((4,))


def _constraints(L):
    Cn = L.constraints if L is TD else C
    lo = _c(L, [-1.0, 0.0, 2.0])
    return [
        ("real", Cn.real), ("positive", Cn.positive),
        ("nonnegative", Cn.nonnegative),
        ("greater_than", Cn.greater_than(lo)),
        ("greater_than_eq", Cn.greater_than_eq(-2.0)),
        ("less_than", Cn.less_than(lo)),
        ("interval", Cn.interval(lo, lo + 3)),
        ("half_open_interval", Cn.half_open_interval(-1.0, 2.0)),
        ("unit_interval", Cn.unit_interval),
        ("real_vector", Cn.real_vector),
        ("independent", Cn.independent(Cn.positive, 1)),
        ("simplex", Cn.simplex),
        ("lower_cholesky", Cn.lower_cholesky),
        ("positive_definite", Cn.positive_definite),
        ("positive_semidefinite", Cn.positive_semidefinite),
        ("corr_cholesky", Cn.corr_cholesky),
        ("cat", Cn.cat([Cn.positive, Cn.interval(0.0, 2.0)], dim=-1,
                       lengths=[1, 2])),
        ("stack", Cn.stack([Cn.real, Cn.positive, Cn.unit_interval], dim=-1)),
    ]


_UNCONSTRAINED_SHAPE = {"simplex": (2, 3), "lower_cholesky": (2, 3, 3),
                        "positive_definite": (2, 3, 3),
                        "positive_semidefinite": (2, 3, 3),
                        "corr_cholesky": (2, 6)}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("index", range(18), ids=[n for n, _ in
                                                   _constraints(TD)])
def test_biject_to_transform_to_match_torch(registry, index):
    name, tc = _constraints(TD)[index]
    _, fc = _constraints(D)[index]
    treg, freg = getattr(TD, registry), getattr(D, registry)
    try:
        tt = treg(tc)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError) as fe:
            freg(fc)
        assert str(fe.value) == str(e)
        return
    ft = freg(fc)
    assert repr(ft).replace("fastt.", "torch.") == repr(tt) or \
        type(ft).__name__ == type(tt).__name__
    assert ft.bijective == tt.bijective
    x = randn(*_UNCONSTRAINED_SHAPE.get(name, (2, 3)), seed=41)
    ty, fy = tt(x), ft(Fz(x))
    close(fy, ty, 1e-9)
    assert bool(fc.check(fy).all())
    assert bool(tc.check(ty).all())
    if ft.bijective:
        close(ft.inv(fy), x, 1e-7)
        close(ft.log_abs_det_jacobian(Fz(x), fy),
              tt.log_abs_det_jacobian(x, ty), 1e-8)


def test_constraint_registry_register_and_errors():
    reg = D.constraint_registry.ConstraintRegistry()

    @reg.register(C.positive)
    def _f(c):
        return T.ExpTransform()

    assert isinstance(reg(C.greater_than(3.0)), T.ExpTransform)
    reg.register(C.simplex, lambda c: T.SoftmaxTransform())
    assert isinstance(reg(C.simplex), T.SoftmaxTransform)
    with pytest.raises(TypeError, match="Expected constraint"):
        reg.register(3, lambda c: None)
    with pytest.raises(NotImplementedError,
                       match="Cannot transform _Boolean constraints"):
        D.biject_to(C.boolean)
    with pytest.raises(NotImplementedError,
                       match="Cannot transform _Boolean constraints"):
        TD.biject_to(TD.constraints.boolean)
