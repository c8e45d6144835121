"""Univariate and Dirichlet-type continuous families: Normal, Uniform,
Exponential, Laplace, Gamma, Beta, Dirichlet. Formulas follow
torch.distributions; sampling uses fastt's generator (a different stream
from torch's)."""
import math
import numbers

import fastt

from . import constraints
from ._gamma import standard_gamma
from .distribution import Distribution, ExponentialFamily
from .utils import _standard_normal, broadcast_all

__all__ = ["Normal", "Uniform", "Exponential", "Laplace", "Gamma", "Beta",
           "Dirichlet"]

_Number = numbers.Number


def _batch_shape_of(first, *params):
    """() when every given parameter was a Python number, else the shape of
    the broadcast parameter `first`."""
    if all(isinstance(p, _Number) for p in params):
        return fastt.Size()
    return first.size()


def _expand_params(self, cls, batch_shape, _instance, names, event_shape=()):
    new = self._get_checked_instance(cls, _instance)
    batch_shape = fastt.Size(batch_shape)
    for name in names:
        setattr(new, name, getattr(self, name).expand(
            tuple(batch_shape) + tuple(event_shape)))
    Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


class Normal(ExponentialFamily):
    """Normal(loc, scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of(self.loc, loc, scale),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Normal, batch_shape, _instance,
                              ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return (-(value - self.loc) ** 2 / (2 * var) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + fastt.erf((value - self.loc) * self.scale.reciprocal()
                                    / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * fastt.erfinv(2 * value - 1) * \
            math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + fastt.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2),
                -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * fastt.log(-math.pi / y)


class Uniform(Distribution):
    """Uniform on the half-open interval [low, high)."""
    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(_batch_shape_of(self.low, low, high),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Uniform, batch_shape, _instance,
                              ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        rand = fastt.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return fastt.log(lb.mul(ub)) - fastt.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return fastt.log(self.high - self.low)


class Exponential(ExponentialFamily):
    """Exponential(rate)."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_shape_of(self.rate, rate),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Exponential, batch_shape, _instance,
                              ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return fastt.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        e = fastt.empty(shape, dtype=self.rate.dtype, device=self.rate.device)
        return e.exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - fastt.exp(-self.rate * value)

    def icdf(self, value):
        return -fastt.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - fastt.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -fastt.log(-x)


class Laplace(Distribution):
    """Laplace(loc, scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of(self.loc, loc, scale),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Laplace, batch_shape, _instance,
                              ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        eps = fastt.finfo(self.loc.dtype).eps
        u = fastt.empty(shape, dtype=self.loc.dtype,
                        device=self.loc.device).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * fastt.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -fastt.log(2 * self.scale) - fastt.abs(value - self.loc) / \
            self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * fastt.expm1(
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * \
            fastt.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + fastt.log(2 * self.scale)


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate)."""
    arg_constraints = {"concentration": constraints.positive,
                       "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(
            _batch_shape_of(self.concentration, concentration, rate),
            validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Gamma, batch_shape, _instance,
                              ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / \
            self.rate.expand(shape)
        return value.clamp(min=fastt.finfo(value.dtype).tiny)

    def log_prob(self, value):
        value = fastt.as_tensor(value, dtype=self.rate.dtype,
                                device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (fastt.xlogy(self.concentration, self.rate)
                + fastt.xlogy(self.concentration - 1, value)
                - self.rate * value - fastt.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - fastt.log(self.rate)
                + fastt.lgamma(self.concentration)
                + (1.0 - self.concentration) * fastt.digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return fastt.lgamma(x + 1) + (x + 1) * fastt.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return fastt.special.gammainc(self.concentration, self.rate * value)


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration) over the simplex of concentration's last
    dimension."""
    arg_constraints = {
        "concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError(
                "`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Dirichlet, batch_shape, _instance,
                              ("concentration",), self.event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        gammas = standard_gamma(self.concentration.expand(shape))
        x = gammas / gammas.sum(-1, keepdim=True)
        return x.clamp(min=fastt.finfo(x.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (fastt.xlogy(self.concentration - 1.0, value).sum(-1)
                + fastt.lgamma(self.concentration.sum(-1))
                - fastt.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        # all concentrations < 1: the mode is the vertex of the largest one
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = fastt.nn.functional.one_hot(
            mode.argmax(dim=-1), cm1.shape[-1]).to(mode)
        return fastt.where(mask, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / \
            (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (fastt.lgamma(self.concentration).sum(-1) - fastt.lgamma(a0)
                - (k - a0) * fastt.digamma(a0)
                - ((self.concentration - 1.0)
                   * fastt.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - fastt.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """Beta(concentration1, concentration0), through a two-component
    Dirichlet."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, _Number) and \
                isinstance(concentration0, _Number):
            c1_c0 = fastt.tensor([float(concentration1),
                                  float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1,
                                                           concentration0)
            c1_c0 = fastt.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(c1_c0, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = fastt.Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / \
            (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = fastt.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return fastt.lgamma(x) + fastt.lgamma(y) - fastt.lgamma(x + y)
