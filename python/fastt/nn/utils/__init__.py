"""fastt.nn.utils: gradient clipping and parameter/vector conversion with
few ops (one norm per gradient, one stack, one scale per gradient)."""

import math

import fastt
from fastt import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_", "parameters_to_vector",
           "vector_to_parameters"]


def _no_grad():
    ng = getattr(fastt, "no_grad", None)
    if ng is None:
        import contextlib
        return contextlib.nullcontext()
    return ng()


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """The norm of the norms of `tensors` (the norm of their concat)."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return fastt.tensor(0.0)
    with _no_grad():
        if norm_type == math.inf:
            norms = [t.abs().max() for t in tensors]
            total = norms[0] if len(norms) == 1 else fastt.stack(norms).max()
        else:
            norms = [t.norm(norm_type) for t in tensors]
            total = (norms[0] if len(norms) == 1
                     else fastt.stack(norms).norm(norm_type))
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm "
            "anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    grads = _grads(parameters)
    if not grads:
        return
    with _no_grad():
        clip_coef = (float(max_norm) / (total_norm + 1e-6)).clamp_max_(1.0)
        for g in grads:
            g.mul_(clip_coef)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0,
                    error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so their total norm is at most
    max_norm; returns the total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        parameters = list(parameters)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if grads:
        clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    clip_value = float(clip_value)
    with _no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    return fastt.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected fastt.Tensor, but got: {type(vec)}")
    offset = 0
    with _no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].view_as(p))
            offset += n

from . import rnn  # noqa: E402,F401
from . import parametrize, parametrizations, stateless  # noqa: E402,F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402,F401
