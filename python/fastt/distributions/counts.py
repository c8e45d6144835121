"""Count families over {0, 1, 2, ...}: Geometric (failures before the
first success) and NegativeBinomial (failures before total_count
successes, sampled as a Gamma-Poisson mixture). As torch.distributions."""
import numbers

import fastt

from . import constraints
from .continuous import Gamma
from .distribution import Distribution
from .utils import (_neg_bce_with_logits, _softplus, broadcast_all,
                    lazy_property, logits_to_probs, probs_to_logits)

__all__ = ["Geometric", "NegativeBinomial"]



class Geometric(Distribution):
    """Geometric(probs) or Geometric(logits=...): P(k) = (1 - p)^k p."""
    arg_constraints = {"probs": constraints.unit_interval,
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError(
                "Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = (fastt.Size() if isinstance(given, numbers.Number)
                       else given.size())
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid_value = value.detach()[~valid]
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {repr(self)} "
                    f"to be positive but found invalid values:\n"
                    f"{invalid_value}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = fastt.Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return fastt.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = fastt.finfo(self.probs.dtype).tiny
        with fastt.no_grad():
            u = fastt.empty(shape, dtype=self.probs.dtype,
                            device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 puts all mass on 0: log(1 - p) * 0 must be 0, not nan
        probs = fastt.where((probs == 1) & (value == 0),
                            fastt.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return -_neg_bce_with_logits(self.logits, self.probs) / self.probs


class NegativeBinomial(Distribution):
    """Failures before total_count successes, each trial a success with
    probability 1 - probs (torch's convention)."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None,
                 validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError(
                "Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = fastt.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.total_count * fastt.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(
            min=0.0)

    @property
    def variance(self):
        return self.mean / fastt.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count,
                     rate=fastt.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=fastt.Size()):
        with fastt.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return fastt.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # logsigmoid(x) = -softplus(-x)
        log_unnormalized_prob = (-self.total_count * _softplus(self.logits)
                                 - value * _softplus(-self.logits))
        log_normalization = (-fastt.lgamma(self.total_count + value)
                             + fastt.lgamma(1.0 + value)
                             + fastt.lgamma(self.total_count))
        log_normalization = log_normalization.masked_fill(
            self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
