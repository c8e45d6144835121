"""MultivariateNormal (by covariance, precision or scale_tril) and
LowRankMultivariateNormal (covariance W W^T + diag(D)), with the batched
Mahalanobis / log-det helpers the KL formulas share."""
import math

import fastt

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal", "LowRankMultivariateNormal"]

_LA = fastt.linalg


def _batch_mv(bmat, bvec):
    """Matrix-vector product with broadcasting over batch dims."""
    return fastt.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """|L^{-1} x|^2 for lower-triangular L, broadcasting L's batch dims
    against x's."""
    n = bx.size(-1)
    if bL.dim() == 2:
        # one L for every x: a single solve with the xs as columns
        flat = bx.reshape(-1, n).T
        sol = _LA.solve_triangular(bL, flat, upper=False)
        return sol.pow(2).sum(0).reshape(bx.shape[:-1])
    batch = fastt.broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    L = bL.expand(tuple(batch) + (n, n))
    x = bx.expand(tuple(batch) + (n,)).unsqueeze(-1)
    return _LA.solve_triangular(L, x, upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    # L with L L^T = P^{-1}, via the Cholesky factor of P with reversed
    # row/column order (stable: no explicit inverse of P).
    Lf = _LA.cholesky(fastt.flip(P, (-2, -1)))
    L_inv = fastt.transpose(fastt.flip(Lf, (-2, -1)), -2, -1)
    Id = fastt.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return _LA.solve_triangular(L_inv, Id.expand(L_inv.shape), upper=False)


def _half_log_det(scale_tril):
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


class MultivariateNormal(Distribution):
    """N(loc, Sigma), Sigma given by exactly one of covariance_matrix,
    precision_matrix or scale_tril (lower Cholesky factor)."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None,
                 scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or "
                             "precision_matrix or scale_tril may be specified.")
        given = (("scale_tril", scale_tril), ("covariance_matrix",
                 covariance_matrix), ("precision_matrix", precision_matrix))
        for name, mat in given:
            if mat is None:
                continue
            if mat.dim() < 2:
                raise ValueError(
                    f"{name} matrix must be at least two-dimensional, with "
                    "optional leading batch dimensions" if name == "scale_tril"
                    else f"{name} must be at least two-dimensional, with "
                    "optional leading batch dimensions")
            batch_shape = fastt.broadcast_shapes(tuple(mat.shape[:-2]),
                                                 tuple(loc.shape[:-1]))
            setattr(self, name, mat.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:],
                         validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _LA.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(
                precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = fastt.Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _mat_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._mat_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return fastt.matmul(L, L.mT).expand(self._mat_shape())

    @lazy_property
    def precision_matrix(self):
        return fastt.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._mat_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - \
            half_log_det

    def entropy(self):
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + \
            half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)


def _add_identity(K):
    m = K.shape[-1]
    return K + fastt.eye(m, dtype=K.dtype, device=K.device)


def _batch_capacitance_tril(W, D):
    """Cholesky factor of I + W^T D^{-1} W."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return _LA.cholesky(_add_identity(fastt.matmul(Wt_Dinv, W)))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + \
        D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^{-1} x by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    term1 = (x.pow(2) / D).sum(-1)
    term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return term1 - term2


class LowRankMultivariateNormal(Distribution):
    """N(loc, cov_factor cov_factor^T + diag(cov_diag))."""
    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError("cov_factor must be a batch of matrices with "
                             f"shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError("cov_diag must be a batch of vectors with shape "
                             f"{event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = fastt.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = fastt.Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(
            loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _mat_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        # cov = D^{1/2} (I + D^{-1/2} W W^T D^{-1/2}) D^{1/2}
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / d_sqrt
        K = _add_identity(fastt.matmul(Dinvsqrt_W, Dinvsqrt_W.mT))
        return (d_sqrt * _LA.cholesky(K)).expand(self._mat_shape())

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        cov = fastt.matmul(W, W.mT) + fastt.diag_embed(
            self._unbroadcasted_cov_diag)
        return cov.expand(self._mat_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^{-1} - D^{-1} W C^{-1} W^T D^{-1}
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / \
            self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = _LA.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        P = fastt.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - \
            A.mT @ A
        return P.expand(self._mat_shape())

    def rsample(self, sample_shape=fastt.Size()):
        shape = self._extended_shape(sample_shape)
        W_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_W = _standard_normal(W_shape, self.loc.dtype, self.loc.device)
        eps_D = _standard_normal(shape, self.loc.dtype, self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag,
                                        self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) +
                       log_det + M)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag,
                                        self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) +
                   log_det)
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
