"""Wishart(df, covariance_matrix | precision_matrix | scale_tril) over
positive-definite matrices (as torch.distributions.Wishart), sampled by
the Bartlett decomposition (reparameterized: chi-square diagonal,
standard normal below it)."""
import math
import numbers
import warnings

import fastt

from . import constraints
from .distribution import Distribution, ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .univariate import Chi2
from .utils import lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    half = fastt.arange(p, dtype=x.dtype, device=x.device) / 2
    return fastt.digamma(x.unsqueeze(-1) - half).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=fastt.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart with df degrees of freedom (> dim - 1) and scale matrix
    given as exactly one of covariance_matrix, precision_matrix,
    scale_tril."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None,
                 scale_tril=None, validate_args=None):
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril)
                 if p is not None]
        if len(given) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or "
                "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = fastt.Size(param.shape[:-2])
            # expanded to the batch shape (torch 2.13 keeps a 0-d df, and
            # then its mean / mode / variance fail for batched matrices)
            self.df = fastt.tensor(df, dtype=param.dtype,
                                   device=param.device).expand(batch_shape)
        else:
            batch_shape = fastt.Size(fastt.broadcast_shapes(
                tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(
                f"Value of df={df} expected to be greater than ndim - 1 = "
                f"{event_shape[-1] - 1}.")
        full = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
        else:
            self.precision_matrix = param.expand(full)
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are "
                          "highly likely to occur for ndim - 1 < df < ndim.",
                          stacklevel=2)
        super().__init__(batch_shape, event_shape,
                         validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = fastt.linalg.cholesky(
                covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(
                precision_matrix)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df, batch_shape):
        p = self._event_shape[-1]
        ar = fastt.arange(p, dtype=self._unbroadcasted_scale_tril.dtype,
                          device=self._unbroadcasted_scale_tril.device)
        return Chi2(df=df.unsqueeze(-1) - ar.expand(tuple(batch_shape)
                                                    + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = fastt.Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = \
            self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape,
                              validate_args=False)
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def precision_matrix(self):
        identity = fastt.eye(self._event_shape[-1],
                             device=self._unbroadcasted_scale_tril.device,
                             dtype=self._unbroadcasted_scale_tril.dtype)
        return fastt.cholesky_solve(
            identity, self._unbroadcasted_scale_tril).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def _df_matrix(self, t):
        return t.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = fastt.where(factor <= 0, fastt.full_like(factor, math.nan),
                             factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (
            V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=fastt.Size()):
        p = self._event_shape[-1]
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        below = fastt.randn(tuple(sample_shape) + tuple(self._batch_shape)
                            + (p * (p - 1) // 2,), dtype=diag.dtype,
                            device=diag.device)
        noise = fastt.diag_embed(diag) + vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=fastt.Size(), max_try_correction=None):
        """Bartlett samples; the (rare, for df < dim) singular ones are
        drawn again up to max_try_correction times. (torch 2.13 tests the
        inverted condition, so it warns and redraws for every regular
        sample; here only singular draws are redrawn and warned about.)"""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = fastt.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = ~self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(sample_shape)
                mask = is_singular.reshape(
                    tuple(is_singular.shape)
                    + (1,) * (sample.dim() - is_singular.dim()))
                sample = fastt.where(mask, sample_new, sample)
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular = is_singular & is_singular_new
                if not bool(is_singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        half_logdet = self._unbroadcasted_scale_tril.diagonal(
            dim1=-2, dim2=-1).log().sum(-1)
        return (-nu * (p * _log_2 / 2 + half_logdet)
                - fastt.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * fastt.linalg.slogdet(value).logabsdet
                - fastt.cholesky_solve(value, self._unbroadcasted_scale_tril)
                .diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        half_logdet = self._unbroadcasted_scale_tril.diagonal(
            dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _log_2 / 2 + half_logdet)
                + fastt.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (
            -fastt.linalg.slogdet(-2 * x).logabsdet + _log_2 * p) + \
            fastt.mvlgamma(y + (p + 1) / 2, p=p)
