"""fastt.nn.utils.parametrizations: weight_norm, spectral_norm and
orthogonal as parametrizations (torch's modules, buffers, state_dict keys
and math)."""

from enum import Enum, auto

import fastt
from fastt import Tensor

from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v, dim):
    # The 2-norm over every dim but `dim` (all dims for dim -1), keeping
    # dims (torch.norm_except_dim).
    if dim == -1:
        return v.norm()
    dims = [d for d in range(v.dim()) if d != dim]
    return (v * v).sum(dims, keepdim=True).sqrt()


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """w = g * v / ||v|| (the norm over all dims but `dim`), with g
    (original0) and v (original1) the parameters."""
    wn = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, wn, unsafe=True)

    def _old_keys(state_dict, prefix, local_metadata, strict, missing_keys,
                  unexpected_keys, error_msgs):
        g, v = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g in state_dict and v in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = \
                state_dict.pop(g)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = \
                state_dict.pop(v)

    if hasattr(module, "_register_load_state_dict_pre_hook"):
        module._register_load_state_dict_pre_hook(_old_keys)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = fastt.randn(h, dtype=weight.dtype, device=weight.device)
            v = fastt.randn(w, dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim())
                                                if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with fastt.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(fastt.mv(weight_mat, self._v),
                                          dim=0, eps=self.eps))
                self._v.copy_(F.normalize(fastt.mv(weight_mat.t(), self._u),
                                          dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = fastt.dot(u, fastt.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12,
                  dim=None):
    """w / sigma(w), sigma estimated by power iteration (the buffers _u and
    _v, updated in training mode)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(
            f"Module '{module}' has no parameter or buffer with name "
            f"'{name}'")
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d
        kinds = (ConvTranspose1d, ConvTranspose2d)
        try:
            from ..modules.conv import ConvTranspose3d
            kinds += (ConvTranspose3d,)
        except ImportError:
            pass
        dim = 1 if isinstance(module, kinds) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eye = fastt.eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * fastt.finfo(Q.dtype).eps
    return fastt.allclose(Q.mT @ Q, eye, atol=eps)


def _make_orthogonal(A):
    X, tau = fastt.geqrf(A)
    Q = fastt.linalg.householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = fastt.cat([X, X.new_zeros(n, n - k).expand(
                    *X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = fastt.linalg.matrix_exp(A)
            else:
                eye = fastt.eye(n, dtype=A.dtype, device=A.device)
                Q = fastt.linalg.solve(fastt.add(eye, A, alpha=-0.5),
                                       fastt.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = fastt.linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:  # set by right_inverse at registration
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with fastt.no_grad():
            if tuple(Q.shape) != tuple(self.shape):
                raise ValueError(
                    "Expected a matrix or batch of matrices of shape "
                    f"{self.shape}. Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley,
                                           _OrthMaps.matrix_exp):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix "
                        "exponential or the Cayley parametrizations when "
                        "use_trivialization=False.")
                A, tau = fastt.geqrf(Q)
                d = A.diagonal(dim1=-2, dim2=-1)
                d.copy_(fastt.where(tau == 0.0, -d.sign(), d.sign()))
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                N = fastt.randn(*(tuple(Q.shape[:-2]) + (n, n - k)),
                                dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(fastt.cat([Q, N], dim=-1))
            self.base = Q
            neg_id = fastt.zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *,
               use_trivialization=True):
    """Makes module.<name> orthogonal (its columns or rows orthonormal)
    through matrix_exp, cayley or householder."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(
            f"Module '{module}' has no parameter or buffer with name "
            f"'{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a "
                         f"tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1)
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", '
                         '"cayley", "householder". Got: '
                         f"{orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum,
                       use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
