"""Distribution, the base class of every distribution (as
torch.distributions.Distribution), and ExponentialFamily. A subclass sets
arg_constraints and support, calls Distribution.__init__(batch_shape,
event_shape, validate_args) after storing its parameters, and implements
what it can of sample/rsample/log_prob/cdf/icdf/entropy/mean/variance."""
import warnings

import fastt

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution", "ExponentialFamily"]


def _all_true(valid):
    return bool(valid.all()) if isinstance(valid, fastt.Tensor) else bool(valid)


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on or off for every distribution whose
        validate_args is left as None (on by default, as under assert)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=fastt.Size(), event_shape=fastt.Size(),
                 validate_args=None):
        self._batch_shape = fastt.Size(batch_shape)
        self._event_shape = fastt.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    "Please set `arg_constraints = {}` or initialize the "
                    "distribution with `validate_args=False` to turn off "
                    "validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(
                        getattr(type(self), param), lazy_property):
                    continue  # lazily constructed, not given
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) "
                        f"of distribution {repr(self)} "
                        f"to satisfy the constraint {repr(constraint)}, "
                        f"but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution whose batch dims are expanded to batch_shape
        (parameters are expanded views; no validation is repeated)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=fastt.Size()):
        with fastt.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=fastt.Size()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` "
                      "instead.", FutureWarning, stacklevel=2)
        return self.sample(fastt.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return fastt.exp(self.entropy())

    def _extended_shape(self, sample_shape=fastt.Size()):
        """sample_shape + batch_shape + event_shape."""
        return fastt.Size(tuple(sample_shape) + tuple(self._batch_shape)
                          + tuple(self._event_shape))

    def _validate_sample(self, value):
        """Raise ValueError unless value is a tensor whose rightmost dims
        broadcast with batch_shape + event_shape and that lies in the
        support."""
        if not isinstance(value, fastt.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.size()[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                "The right-most size of value must match event_shape: "
                f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                "sample validation. Please initialize the distribution with "
                "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        assert support is not None
        if not _all_true(support.check(value)):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({repr(support)}) "
                f"of the distribution {repr(self)}, "
                f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that "
                "defines a custom __init__ method must also define a custom "
                ".expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        def show(v):  # a one-element parameter by value, else its size
            return v if v.numel() == 1 else v.size()

        args = ", ".join(f"{p}: {show(self.__dict__[p])}" for p in names)
        return self.__class__.__name__ + "(" + args + ")"


class ExponentialFamily(Distribution):
    """p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)). Subclasses give
    _natural_params, _log_normalizer (F) and _mean_carrier_measure (E[k]);
    entropy then follows from the Bregman divergence of F."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with fastt.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            grads = fastt.autograd.grad(lg_normal.sum(), nparams,
                                        create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, grads):
            result = result - (np_ * g).reshape(
                tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
