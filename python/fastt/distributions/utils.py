"""Helpers shared by the distributions (torch.distributions.utils): argument
broadcasting, probs <-> logits, lazily computed parameters, and the
triangular-matrix <-> vector packing the transforms use."""
import numbers
from functools import update_wrapper

import fastt

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs",
           "probs_to_logits", "lazy_property", "tril_matrix_to_vec",
           "vec_to_tril_matrix"]


def _is_number(v):
    return isinstance(v, numbers.Number)


def broadcast_all(*values):
    """Broadcast numbers and tensors to one shape; numbers become tensors of
    the first tensor's dtype and device (the default dtype if none)."""
    if not all(isinstance(v, fastt.Tensor) or _is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "fastt.Tensor or objects implementing "
                         "__torch_function__.")
    if not all(isinstance(v, fastt.Tensor) for v in values):
        options = dict(dtype=fastt.get_default_dtype())
        for v in values:
            if isinstance(v, fastt.Tensor):
                options = dict(dtype=v.dtype, device=v.device)
                break
        values = [v if isinstance(v, fastt.Tensor)
                  else fastt.tensor(v, **options) for v in values]
    return tuple(fastt.broadcast_tensors(*values))


def _standard_normal(shape, dtype, device):
    return fastt.randn(fastt.Size(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """Sum out the `dim` rightmost dimensions of value."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return fastt.sigmoid(logits)
    return fastt.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = fastt.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return fastt.log(ps_clamped) - fastt.log1p(-ps_clamped)
    return fastt.log(ps_clamped)


class lazy_property:
    """A property computed on first access (under enable_grad) and then
    stored on the instance, replacing the descriptor."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with fastt.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property is on the class: both, so that introspection
    (e.g. Distribution.__init__'s check) sees a property."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag, device):
    arange = fastt.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m
                            + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = fastt.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mask = _tril_mask(n, diag, vec.device).reshape(-1)
    # Scatter the packed entries into the masked positions of a flat n*n row
    # (differentiable, unlike a masked assignment into zeros).
    idx = fastt.nonzero(mask).reshape(-1)
    batch = tuple(vec.shape[:-1])
    flat = vec.new_zeros(batch + (n * n,))
    flat = flat.index_add(-1, idx, vec)
    return flat.reshape(batch + (n, n))


def _softplus(x):
    """log(1 + exp(x)), stable, with the gradient sigmoid(x) everywhere
    (fastt's softplus / logsigmoid / binary_cross_entropy_with_logits
    backward gives the one-sided slope at exactly x == 0)."""
    return fastt.logaddexp(x, fastt.zeros_like(x))


def _neg_bce_with_logits(logits, target):
    """-binary_cross_entropy_with_logits(logits, target, reduction='none')."""
    return target * logits - _softplus(logits)
