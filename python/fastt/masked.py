"""fastt.masked: torch.masked's reductions and normalizations on strided
tensors with a boolean `mask` (True: the element takes part).

Each op fills the masked-out elements with the reduction's identity (0 for
sum, 1 for prod, -inf or the dtype's minimum for amax, ...) with `where`,
then runs the plain op, so gradients reach the unmasked elements and are
zero on the masked ones, as torch's. The mask broadcasts to the input (it
may not have more dims). Ops without an identity (mean, var, std, median)
count the unmasked elements: a slice with none gives nan, as torch's.
MaskedTensor is not implemented."""
import builtins
import math

import fastt
from fastt.nn import functional as _F

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum",
           "log_softmax", "logaddexp", "logsumexp", "mean", "median",
           "norm", "normalize", "prod", "softmax", "softmin", "std", "sum",
           "var"]

_SMALL_INTS = (fastt.bool, fastt.uint8, fastt.int8, fastt.int16,
               fastt.int32)


def _dims(dim, ndim):
    """dim as a sorted tuple of non-negative dims; None and () mean all."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    bound = builtins.max(ndim, 1)
    out = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in out:
            raise RuntimeError(f"dim={d} appears multiple times in the list "
                               "of dims")
        if d >= bound or d < -bound:
            raise IndexError(f"Dimension out of range (expected to be in "
                             f"range of [{-bound}, {bound - 1}], but got {d})")
        out.append(d % bound)
    return tuple(sorted(out))


def _input_mask(input, mask):
    """The mask as a bool tensor of input's shape."""
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got "
                             "mask dimensionality higher than of the input)")
        mask = fastt.broadcast_to(mask, tuple(input.shape))
    return mask.to(fastt.bool)


def _identity(op, input, ord=None):
    """The value that leaves op's result unchanged (a 0-d tensor of input's
    dtype), or None where there is none."""
    dt = input.dtype
    if op in ("sum", "cumsum") or (op == "norm" and ord != -math.inf):
        v = 0
    elif op in ("prod", "cumprod"):
        v = 1
    elif op == "logsumexp" and dt.is_complex:  # torch's -inf + 0j
        v = complex(-math.inf, 0)
    elif op in ("amax", "argmax", "logsumexp", "logaddexp"):
        v = (-math.inf if dt.is_floating_point
             else None if dt == fastt.bool or dt.is_complex
             else fastt.iinfo(dt).min)
    elif op in ("amin", "argmin", "norm"):
        v = (math.inf if dt.is_floating_point
             else None if dt == fastt.bool or dt.is_complex
             else fastt.iinfo(dt).max)
    elif op == "median":
        return fastt.tensor(math.nan, dtype=dt if dt.is_floating_point
                            else fastt.float32, device=input.device)
    else:
        v = None
    if v is None:
        raise NotImplementedError(f"identity of {op} on {dt} input")
    return fastt.tensor(v, dtype=dt, device=input.device)


def _masked(op, input, mask, ord=None):
    """input with its masked-out elements set to op's identity."""
    if mask is None:
        return input
    return fastt.where(_input_mask(input, mask), input,
                       _identity(op, input, ord))


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return fastt.int64 if input.dtype in _SMALL_INTS else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    return fastt.sum(_masked("sum", input, mask), _dims(dim, input.ndim),
                     builtins.bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = _masked("prod", input, mask).to(_sum_dtype(input, dtype))
    for d in reversed(_dims(dim, input.ndim)):
        out = out.prod(d, keepdim=builtins.bool(keepdim))
    return out


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _dims(dim, input.ndim)[0]
    return fastt.cumsum(_masked("sum", input, mask), d, dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _dims(dim, input.ndim)[0]
    return fastt.cumprod(_masked("prod", input, mask), d, dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = _masked("amax", input, mask)
    return fastt.amax(x, _dims(dim, x.ndim), builtins.bool(keepdim)).to(
        dtype or input.dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = _masked("amin", input, mask)
    return fastt.amin(x, _dims(dim, x.ndim), builtins.bool(keepdim)).to(
        dtype or input.dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = _masked("argmax", input, mask)
    return fastt.argmax(x, dim, builtins.bool(keepdim)).to(
        dtype or input.dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = _masked("argmin", input, mask)
    return fastt.argmin(x, dim, builtins.bool(keepdim)).to(
        dtype or input.dtype)


def _count(input, dim, keepdim, mask):
    """The number of unmasked elements over dim (int64)."""
    if mask is None:
        ones = fastt.ones(tuple(input.shape), dtype=fastt.int64,
                          device=input.device)
        return sum(ones, dim, keepdim=keepdim)
    return sum(_input_mask(input, mask), dim, keepdim=keepdim)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    source = "Optional" if dtype is not None else "Input"
    dtype = dtype or input.dtype
    if not dtype.is_floating_point and not dtype.is_complex:
        raise ValueError(f"mean(): Could not infer output dtype. {source} "
                         "dtype must be either a floating point or complex "
                         f"dtype. Got: {dtype}")
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return total / _count(input, dim, keepdim, mask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """The lower median of the unmasked elements along dim (nan where a
    slice has none: an error for integer dtypes, as torch's)."""
    dtype = dtype or input.dtype
    d = _dims(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    x = input if is_float else input.to(fastt.float32)
    x = _masked("median", x, mask)
    out = fastt.nanmedian(x, d, keepdim).values
    if is_float:
        return out
    if fastt.isnan(out).any():
        raise ValueError("masked median expects no fully masked out rows if "
                         "dtype is not floating point")
    return out.to(dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = _masked("logsumexp", input, mask)
    return fastt.logsumexp(x, _dims(dim, input.ndim), keepdim=keepdim).to(
        dtype or input.dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None,
              other_mask=None):
    a = _masked("logaddexp", input, input_mask)
    b = _masked("logaddexp", other, other_mask)
    return fastt.logaddexp(a, b).to(dtype or input.dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The vector ord-norm of the unmasked elements (identity 0; +inf for
    ord = -inf)."""
    x = _masked("norm", input, mask, ord)
    return fastt.linalg.vector_norm(x, ord, _dims(dim, input.ndim),
                                    builtins.bool(keepdim),
                                    dtype=dtype or input.dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, sqrt):
    if unbiased is not None and correction is not None:
        raise RuntimeError("Only one of unbiased and correction may be "
                           "given")
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = (input.dtype if input.dtype.is_floating_point or
                 input.dtype.is_complex else fastt.float32)
    compute = dtype if dtype.is_floating_point or dtype.is_complex \
        else fastt.float32
    # complex: the sum of |x - mean|^2, kept complex as torch's masked var
    real = {fastt.complex64: fastt.float32,
            fastt.complex128: fastt.float64}.get(compute, compute)
    count = _count(input, dim, True, mask)
    centered = input - sum(input, dim, keepdim=True, dtype=dtype,
                           mask=mask) / count
    sq = centered * (centered.conj() if centered.dtype.is_complex
                     else centered)
    total = sum(sq, dim, keepdim=keepdim, dtype=compute, mask=mask)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if corr != 0:
        count = fastt.clamp(count.to(real) - corr, min=0)
    out = (total / count).to(dtype)
    return fastt.sqrt(out) if sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False,
        dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask,
                    False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False,
        dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask,
                    True)


def softmax(input, dim, *, dtype=None, mask=None):
    d = _dims(dim, input.ndim)[0]
    return _F.softmax(_masked("amax", input, mask), d,
                      dtype=dtype or input.dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    d = _dims(dim, input.ndim)[0]
    return _F.log_softmax(_masked("amax", input, mask), d,
                          dtype=dtype or input.dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    d = _dims(dim, input.ndim)[0]
    return _F.softmin(_masked("amin", input, mask), d,
                      dtype=dtype or input.dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """input / max(norm(input, ord, dim), eps), masked elements 0."""
    dtype = dtype or input.dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _masked("sum", input, mask) / fastt.clamp(nrm, min=eps)
