"""Discrete families: Bernoulli, Categorical, OneHotCategorical, Poisson,
Binomial, Multinomial. Those parameterized by probs or logits store the one
given and compute the other lazily."""
import math
import numbers

import fastt

from . import constraints
from .distribution import Distribution, ExponentialFamily
from .utils import (broadcast_all, lazy_property, logits_to_probs,
                    probs_to_logits)

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "Poisson",
           "Binomial", "Multinomial"]

_F = fastt.nn.functional


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(
            "Either `probs` or `logits` must be specified, but not both.")


def _expand_probs_or_logits(self, new, shape):
    if "probs" in self.__dict__:
        new.probs = self.probs.expand(shape)
        new._param = new.probs
    if "logits" in self.__dict__:
        new.logits = self.logits.expand(shape)
        new._param = new.logits


def _finish_expand(self, new, batch_shape, event_shape=()):
    Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


def _enumerate(values, batch_shape, expand, event=()):
    values = values.view((-1,) + (1,) * len(batch_shape) + tuple(event))
    if expand:
        values = values.expand((-1,) + tuple(batch_shape) + tuple(event))
    return values


class Bernoulli(ExponentialFamily):
    """Bernoulli(probs) or Bernoulli(logits=...), values in {0, 1}."""
    arg_constraints = {"probs": constraints.unit_interval,
                       "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = fastt.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = fastt.Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        return _finish_expand(self, new, batch_shape)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        return fastt.where(self.probs == 0.5, fastt.full_like(mode, math.nan),
                           mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        with fastt.no_grad():
            return fastt.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_F.binary_cross_entropy_with_logits(logits, value,
                                                    reduction="none")

    def entropy(self):
        return _F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                   reduction="none")

    def enumerate_support(self, expand=True):
        values = fastt.arange(2, dtype=self._param.dtype,
                              device=self._param.device)
        return _enumerate(values, self._batch_shape, expand)

    @property
    def _natural_params(self):
        return (fastt.logit(self.probs),)

    def _log_normalizer(self, x):
        return fastt.log1p(fastt.exp(x))


class Categorical(Distribution):
    """Categorical over {0, ..., K-1}, K = probs.size(-1); probs are
    normalized, logits are shifted to log-probabilities."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError(
                    "`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError(
                    "`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = (self._param.size()[:-1] if self._param.dim() > 1
                       else fastt.Size())
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = fastt.Size(batch_shape)
        _expand_probs_or_logits(self, new,
                                tuple(batch_shape) + (self._num_events,))
        new._num_events = self._num_events
        return _finish_expand(self, new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return fastt.full(self._extended_shape(), math.nan,
                          dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return fastt.full(self._extended_shape(), math.nan,
                          dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape=fastt.Size()):
        sample_shape = fastt.Size(sample_shape)
        with fastt.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            n = sample_shape.numel()
            samples_2d = fastt.multinomial(probs_2d, n, True).T
            return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = fastt.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = fastt.finfo(self.logits.dtype).min
        logits = fastt.clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = fastt.arange(self._num_events, dtype=fastt.int64,
                              device=self._param.device)
        return _enumerate(values, self._batch_shape, expand)


class OneHotCategorical(Distribution):
    """Categorical whose samples are one-hot vectors of length K."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape,
                         self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = fastt.Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        return _finish_expand(self, new, batch_shape, self.event_shape)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return _F.one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=fastt.Size()):
        indices = self._categorical.sample(sample_shape)
        return _F.one_hot(indices, self._categorical._num_events).to(
            self._categorical.probs.detach())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = fastt.eye(n, dtype=self._param.dtype,
                           device=self._param.device)
        return _enumerate(values, self._batch_shape, expand, (n,))


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes the gradient of probs
    straight through the one-hot sample."""
    has_rsample = True

    def rsample(self, sample_shape=fastt.Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class Poisson(ExponentialFamily):
    """Poisson(rate)."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = (fastt.Size() if isinstance(rate, numbers.Number)
                       else self.rate.size())
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = fastt.Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        return _finish_expand(self, new, batch_shape)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        with fastt.no_grad():
            return fastt.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (fastt.log(self.rate),)

    def _log_normalizer(self, x):
        return fastt.exp(x)


def _clamp_by_zero(x):
    # max(x, 0) with gradient 1/2 at 0
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


# log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2] for k < 10
_STIRLING_TAIL = [0.08106146679532726, 0.04134069595540929,
                  0.02767792568499834, 0.02079067210376509,
                  0.01664469118982119, 0.01387612882307075,
                  0.01189670994589177, 0.01041126526197209,
                  0.009255462182712733, 0.008330563433362871]


def _stirling_tail(k):
    table = fastt.tensor(_STIRLING_TAIL, dtype=k.dtype, device=k.device)
    small = table[k.clamp(0, 9).long()]
    kp1sq = (k + 1) * (k + 1)
    big = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return fastt.where(k <= 9, small, big)


def _binomial_inversion(n, p):
    """Binomial draws by sequential CDF search; for n * p < 10, p <= 1/2."""
    u = fastt.rand(n.shape, dtype=n.dtype, device=n.device)
    q = 1 - p
    pmf = fastt.exp(n * fastt.log1p(-p))
    cdf = pmf.clone()
    k = fastt.zeros_like(n)
    todo = u > cdf
    ratio = p / q
    while bool(todo.any()):
        k = k + todo.to(k.dtype)
        pmf = pmf * (n - k + 1) / k.clamp(min=1) * ratio
        cdf = cdf + fastt.where(todo, pmf, fastt.zeros_like(pmf))
        todo = todo & (u > cdf) & (k < n)
    return k


def _binomial_btrs(n, p):
    """Hormann's BTRS transformed-rejection sampler; for n * p >= 10,
    p <= 1/2."""
    spq = fastt.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / (1 - p)
    alpha = (2.83 + 5.1 / b) * spq
    m = fastt.floor((n + 1) * p)
    out = fastt.zeros_like(n)
    todo = fastt.ones_like(n, dtype=fastt.bool)
    for _ in range(200):
        U = fastt.rand(n.shape, dtype=n.dtype, device=n.device) - 0.5
        V = fastt.rand(n.shape, dtype=n.dtype, device=n.device)
        us = 0.5 - U.abs()
        k = fastt.floor((2 * a / us + b) * U + c)
        valid = (k >= 0) & (k <= n)
        fast = valid & (us >= 0.07) & (V <= v_r)
        kk = k.clamp(min=0)
        kk = fastt.minimum(kk, n)
        logv = fastt.log(V * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * fastt.log((m + 1) / (r * (n - m + 1)))
                 + (n + 1) * fastt.log((n - m + 1) / (n - kk + 1))
                 + (kk + 0.5) * fastt.log(r * (n - kk + 1) / (kk + 1))
                 + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(kk) - _stirling_tail(n - kk))
        accept = fast | (valid & (logv <= bound))
        out = fastt.where(accept & todo, k, out)
        todo = todo & ~accept
        if not bool(todo.any()):
            break
    return out


def _sample_binomial(n, p):
    """Binomial(n, p) draws (fastt has no binomial op)."""
    n = n.double().contiguous()
    p = p.double().contiguous()
    flip = p > 0.5
    pp = fastt.where(flip, 1 - p, p)
    small = n * pp < 10
    k_small = _binomial_inversion(fastt.where(small, n, fastt.zeros_like(n)),
                                  fastt.where(small, pp,
                                              fastt.zeros_like(pp)))
    if bool((~small).any()):
        big_n = fastt.where(small, fastt.full_like(n, 100.0), n)
        big_p = fastt.where(small, fastt.full_like(pp, 0.5), pp)
        k_big = _binomial_btrs(big_n, big_p)
        k = fastt.where(small, k_small, k_big)
    else:
        k = k_small
    k = fastt.where(flip, n - k, k)
    return fastt.where(n == 0, fastt.zeros_like(k), k)


class Binomial(Distribution):
    """Binomial(total_count, probs) or Binomial(total_count, logits=...)."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None,
                 validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = fastt.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        return _finish_expand(self, new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(
            max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        with fastt.no_grad():
            k = _sample_binomial(self.total_count.expand(shape),
                                 self.probs.expand(shape))
            return k.to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = fastt.lgamma(self.total_count + 1)
        log_factorial_k = fastt.lgamma(value + 1)
        log_factorial_nmk = fastt.lgamma(self.total_count - value + 1)
        normalize_term = (
            self.total_count * _clamp_by_zero(self.logits)
            + self.total_count * fastt.log1p(fastt.exp(-fastt.abs(self.logits)))
            - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - \
            normalize_term

    def _homogeneous_count(self, what):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(
                f"Inhomogeneous total count not supported by `{what}`.")
        return total_count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(fastt.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = self._homogeneous_count("enumerate_support")
        values = fastt.arange(1 + total_count, dtype=self._param.dtype,
                              device=self._param.device)
        return _enumerate(values, self._batch_shape, expand)


class Multinomial(Distribution):
    """Counts of total_count independent Categorical(probs) draws."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None,
                 validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError(
                "inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape,
                         self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = fastt.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count,
                                 probs=new._categorical.probs,
                                 validate_args=False)
        return _finish_expand(self, new, batch_shape, self.event_shape)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=fastt.Size()):
        sample_shape = fastt.Size(sample_shape)
        with fastt.no_grad():
            samples = self._categorical.sample(
                fastt.Size((self.total_count,)) + sample_shape)
            # (total_count, *sample, *batch) -> (*sample, *batch, total_count)
            samples = samples.movedim(0, -1)
            counts = fastt.zeros(self._extended_shape(sample_shape),
                                 dtype=samples.dtype, device=samples.device)
            counts.scatter_add_(-1, samples, fastt.ones_like(samples))
            return counts.to(self.probs.dtype)

    def entropy(self):
        n = fastt.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - fastt.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = fastt.exp(self._binomial.log_prob(support))
        weights = fastt.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = fastt.lgamma(value.sum(-1) + 1)
        log_factorial_xs = fastt.lgamma(value + 1).sum(-1)
        # 0 * log(0) = 0: a zero count of an impossible category adds nothing
        logits = fastt.where((value == 0) & (logits == -math.inf),
                             fastt.zeros_like(logits), logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
