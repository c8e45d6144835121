"""More univariate continuous families (torch.distributions' StudentT,
Cauchy, HalfNormal, HalfCauchy, Chi2, Gumbel, Pareto, Weibull,
Kumaraswamy, LogisticNormal, InverseGamma, FisherSnedecor,
GeneralizedPareto, ContinuousBernoulli). Formulas follow
torch.distributions; those torch builds as a TransformedDistribution are
built the same way here, so expand/cdf/icdf/rsample behave alike."""
import math
import numbers

import fastt

from . import constraints
from .continuous import (Exponential, Gamma, Normal, Uniform, _batch_shape_of,
                         _expand_params)
from .distribution import Distribution, ExponentialFamily
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ExpTransform,
                         PowerTransform, StickBreakingTransform)
from .utils import (_neg_bce_with_logits, _standard_normal, broadcast_all,
                    clamp_probs,
                    euler_constant, lazy_property, logits_to_probs,
                    probs_to_logits)

__all__ = ["StudentT", "Cauchy", "HalfNormal", "HalfCauchy", "Chi2",
           "Gumbel", "Pareto", "Weibull", "Kumaraswamy", "LogisticNormal",
           "InverseGamma", "FisherSnedecor", "GeneralizedPareto",
           "ContinuousBernoulli"]

_Number = numbers.Number
_nan = math.nan
_inf = math.inf


def _full_like(t, value):
    return fastt.full_like(t, value)


class Chi2(Gamma):
    """Chi2(df) = Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    """Student's t with df degrees of freedom, location loc, scale scale."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = fastt.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return fastt.where(self.df <= 1, _full_like(self.loc, _nan), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        safe = fastt.where(df > 2, df, _full_like(df, 3.0))
        var = self.scale.pow(2) * safe / (safe - 2)
        var = fastt.where(df > 2, var, _full_like(var, _inf))
        return fastt.where(df <= 1, _full_like(var, _nan), var)

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, self.df.dtype, self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * fastt.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log()
             + 0.5 * math.log(math.pi) + fastt.lgamma(0.5 * self.df)
             - fastt.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * fastt.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        lbeta = (fastt.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - fastt.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (fastt.digamma(0.5 * (self.df + 1))
                                         - fastt.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class Cauchy(Distribution):
    """Cauchy(loc, scale) (Lorentz)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of(self.loc, loc, scale),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Cauchy, batch_shape, _instance,
                              ("loc", "scale"))

    @property
    def mean(self):
        return fastt.full(self._extended_shape(), _nan, dtype=self.loc.dtype,
                          device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return fastt.full(self._extended_shape(), _inf, dtype=self.loc.dtype,
                          device=self.loc.device)

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        eps = fastt.empty(shape, dtype=self.loc.dtype,
                          device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return fastt.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return fastt.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class _HalfMixin:
    """|X| for X symmetric about 0 (base_dist): density, cdf and entropy
    folded onto [0, inf)."""

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return fastt.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = fastt.as_tensor(value, dtype=self.base_dist.scale.dtype,
                                device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return fastt.where(value >= 0, log_prob, _full_like(log_prob, -_inf))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_HalfMixin, TransformedDistribution):
    """|X| for X ~ Normal(0, scale)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_HalfMixin, TransformedDistribution):
    """|X| for X ~ Cauchy(0, scale)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return fastt.full(self._extended_shape(), _inf,
                          dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale): loc - scale * log(-log(U))."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = fastt.finfo(self.loc.dtype)
        if isinstance(loc, _Number) and isinstance(scale, _Number):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps,
                                validate_args=validate_args)
        else:
            base_dist = Uniform(fastt.full_like(self.loc, finfo.tiny),
                                fastt.full_like(self.loc, 1 - finfo.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv,
                      AffineTransform(loc=0,
                                      scale=-fastt.ones_like(self.scale)),
                      ExpTransform().inv,
                      AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)


class Pareto(TransformedDistribution):
    """Pareto Type I: scale * exp(E), E ~ Exponential(alpha)."""
    arg_constraints = {"alpha": constraints.positive,
                       "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """Weibull(scale, concentration): scale * E ** (1 / concentration)."""
    arg_constraints = {"scale": constraints.positive,
                       "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(fastt.ones_like(self.scale),
                                validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms,
                                         validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * fastt.exp(
            fastt.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) \
            ** self.concentration.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * (
            fastt.exp(fastt.lgamma(1 + 2 * self.concentration_reciprocal))
            - fastt.exp(2 * fastt.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        return (euler_constant * (1 - self.concentration_reciprocal)
                + fastt.log(self.scale * self.concentration_reciprocal) + 1)


def _kumaraswamy_moments(a, b, n):
    """The n-th moment of Kumaraswamy(a, b): b B(1 + n / a, b)."""
    arg1 = 1 + n / a
    log_value = fastt.lgamma(arg1) + fastt.lgamma(b) - fastt.lgamma(arg1 + b)
    return b * fastt.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1, concentration0) on (0, 1):
    (1 - (1 - U) ** (1 / c0)) ** (1 / c1)."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(
            concentration1, concentration0)
        base_dist = Uniform(fastt.full_like(self.concentration0, 0),
                            fastt.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _kumaraswamy_moments(self.concentration1, self.concentration0,
                                    1)

    @property
    def mode(self):
        log_mode = (self.concentration0.reciprocal()
                    * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        bad = (self.concentration0 < 1) | (self.concentration1 < 1)
        return fastt.where(bad, _full_like(log_mode, _nan), log_mode).exp()

    @property
    def variance(self):
        return _kumaraswamy_moments(self.concentration1, self.concentration0,
                                    2) - fastt.pow(self.mean, 2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = fastt.digamma(self.concentration0 + 1) + euler_constant
        return (t0 + t1 * H0 - fastt.log(self.concentration1)
                - fastt.log(self.concentration0))


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform of Normal(loc, scale) (one more component
    than loc has): a distribution over the simplex."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate)."""
    arg_constraints = {"concentration": constraints.positive,
                       "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return fastt.where(self.concentration > 1, result,
                           _full_like(result, _inf))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return fastt.where(self.concentration > 2, result,
                           _full_like(result, _inf))

    def entropy(self):
        return (self.concentration + self.rate.log()
                + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())


class FisherSnedecor(Distribution):
    """Fisher-Snedecor F(df1, df2) = (X1 / df1) / (X2 / df2), Xi ~ Chi2."""
    arg_constraints = {"df1": constraints.positive,
                       "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(_batch_shape_of(self.df1, df1, df2),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = fastt.Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = fastt.where(self.df2 <= 2, _full_like(self.df2, _nan), self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return fastt.where(self.df1 <= 2, _full_like(mode, _nan), mode)

    @property
    def variance(self):
        df2 = fastt.where(self.df2 <= 4, _full_like(self.df2, _nan), self.df2)
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=fastt.Size(())):
        shape = self._extended_shape(sample_shape)
        X1 = self._gamma1.rsample(sample_shape).view(shape)
        X2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = fastt.finfo(X2.dtype).tiny
        Y = X1 / X2.clamp(min=tiny)
        return Y.clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * fastt.log(value)
        t3 = (ct1 + ct2) * fastt.log1p(ct3 * value)
        return t1 + t2 - t3


class GeneralizedPareto(Distribution):
    """Generalized Pareto(loc, scale, concentration); concentration 0 is
    the shifted exponential, concentration < 0 has bounded support."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(
            loc, scale, concentration)
        super().__init__(_batch_shape_of(self.loc, loc, scale, concentration),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, GeneralizedPareto, batch_shape, _instance,
                              ("loc", "scale", "concentration"))

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        u = fastt.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _eq_zero_and_safe(self):
        c = self.concentration
        eq_zero = fastt.isclose(c, fastt.zeros_like(c))
        return eq_zero, fastt.where(eq_zero, fastt.ones_like(c), c)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._eq_zero_and_safe()
        y = 1 / safe_conc + fastt.ones_like(z)
        where_nonzero = fastt.where(y == 0, y, y * fastt.log1p(safe_conc * z))
        return -self.scale.log() - fastt.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._eq_zero_and_safe()
        where_nonzero = -fastt.log1p(safe_conc * z) / safe_conc
        return fastt.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        return fastt.log1p(-fastt.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return fastt.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._eq_zero_and_safe()
        logu = fastt.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * fastt.expm1(
            -safe_conc * logu)
        where_zero = self.loc - self.scale * logu
        return fastt.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        c = self.concentration
        valid = c < 1
        safe_conc = fastt.where(valid, c, _full_like(c, 0.5))
        result = self.loc + self.scale / (1 - safe_conc)
        return fastt.where(valid, result, _full_like(result, _nan))

    @property
    def variance(self):
        c = self.concentration
        valid = c < 0.5
        safe_conc = fastt.where(valid, c, _full_like(c, 0.25))
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return fastt.where(valid, result, _full_like(result, _nan))

    def entropy(self):
        ans = fastt.log(self.scale) + self.concentration + 1
        return fastt.broadcast_to(ans, tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        c = self.concentration
        safe = fastt.where(c < 0, c, -fastt.ones_like(c))
        upper = fastt.where(c < 0, lower - self.scale / safe,
                            _full_like(lower, _inf))
        return constraints.interval(lower, upper)


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli on [0, 1] (Loaiza-Ganem & Cunningham 2019):
    density proportional to probs**x (1 - probs)**(1 - x); probs near 1/2
    use Taylor expansions (the `lims` window)."""
    arg_constraints = {"probs": constraints.unit_interval,
                       "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501),
                 validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError(
                "Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, _Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(
                        self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, _Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = fastt.Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = fastt.Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return fastt.where(self._outside_unstable_region(), self.probs,
                           self._lims[0] * fastt.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log of the normalizing constant, as a function of probs."""
        cut_probs = self._cut_probs()
        below = fastt.where(cut_probs <= 0.5, cut_probs,
                            fastt.zeros_like(cut_probs))
        above = fastt.where(cut_probs >= 0.5, cut_probs,
                            fastt.ones_like(cut_probs))
        log_norm = fastt.log(fastt.abs(fastt.log1p(-cut_probs)
                                       - fastt.log(cut_probs))) - fastt.where(
            cut_probs <= 0.5, fastt.log1p(-2.0 * below),
            fastt.log(2.0 * above - 1.0))
        x = fastt.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return fastt.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (
            fastt.log1p(-cut_probs) - fastt.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * fastt.pow(x, 2)) * x
        return fastt.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return fastt.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        vars_ = cut_probs * (cut_probs - 1.0) / fastt.pow(
            1.0 - 2.0 * cut_probs, 2) + 1.0 / fastt.pow(
            fastt.log1p(-cut_probs) - fastt.log(cut_probs), 2)
        x = fastt.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return fastt.where(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        u = fastt.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with fastt.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        u = fastt.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return _neg_bce_with_logits(logits, value) + \
            self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (fastt.pow(cut_probs, value)
                * fastt.pow(1.0 - cut_probs, 1.0 - value)
                + cut_probs - 1.0) / (2.0 * cut_probs - 1.0)
        unbounded = fastt.where(self._outside_unstable_region(), cdfs, value)
        return fastt.where(value <= 0.0, fastt.zeros_like(unbounded),
                           fastt.where(value >= 1.0,
                                       fastt.ones_like(unbounded), unbounded))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return fastt.where(
            self._outside_unstable_region(),
            (fastt.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0))
             - fastt.log1p(-cut_probs))
            / (fastt.log(cut_probs) - fastt.log1p(-cut_probs)),
            value)

    def entropy(self):
        log_probs0 = fastt.log1p(-self.probs)
        log_probs1 = fastt.log(self.probs)
        return (self.mean * (log_probs0 - log_probs1)
                - self._cont_bern_log_norm() - log_probs0)

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log normalizing constant as a function of the natural
        parameter."""
        out_unst_reg = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut_nat_params = fastt.where(
            out_unst_reg, x, (self._lims[0] - 0.5) * fastt.ones_like(x))
        log_norm = fastt.log(fastt.abs(fastt.expm1(cut_nat_params))) - \
            fastt.log(fastt.abs(cut_nat_params))
        taylor = 0.5 * x + fastt.pow(x, 2) / 24.0 - fastt.pow(x, 4) / 2880.0
        return fastt.where(out_unst_reg, log_norm, taylor)
