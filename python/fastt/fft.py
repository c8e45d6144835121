"""fastt.fft: torch.fft on fastt.

Every transform is one call of torch's three primitives, C++ ops with
kernel rows (csrc/ops/fft.h, kernels/cpu/fft.cpp; bound as
fastt._C._fft_c2c / _fft_r2c / _fft_c2r): this module resolves n/s, dim
and norm, promotes the input and pads or trims it, as torch's SpectralOps
do. A real input to fft/ifft(n) takes the real transform with both
halves of the spectrum (ifft as its conjugate), as torch's does.
Gradients: each primitive's backward is its adjoint transform
(autograd/formulas_linalg.cpp, torch's formulas), so every function here
is differentiable, with torch's complex convention."""
import builtins

import fastt

from . import _C
from .linalg import _type_name

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn",
    "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
    "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _norm_mode(norm, forward):
    """torch's fft_norm_mode: the scaling of a forward or inverse
    transform under norm (None means "backward")."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _check_tensor(op, x):
    if not isinstance(x, fastt.Tensor):
        raise TypeError(f"fft_{op}(): argument 'input' (position 1) must be "
                        f"Tensor, not {type(x).__name__}")


def _promote(op, x, *, require_complex=False, require_real=False):
    """torch's promote_tensor_fft: integers and bool become the default
    float dtype; float16/bfloat16 are refused on the CPU (as torch's)."""
    _check_tensor(op, x)
    dt = x.dtype
    if dt.is_complex:
        if require_real:
            raise RuntimeError(f"{op} expects a real input tensor, but got "
                               f"{_type_name(dt)}")
        return x
    if dt in (fastt.float16, fastt.bfloat16):
        raise RuntimeError(f"Unsupported dtype {_type_name(dt)}")
    if not dt.is_floating_point:
        x = x.to(fastt.get_default_dtype())
    return x.to(x.dtype.to_complex()) if require_complex else x


def _resize(x, dim, n):
    """x padded with zeros or trimmed to n along dim (torch's resize of an
    FFT input)."""
    have = x.shape[dim]
    if have == n:
        return x
    if have > n:
        return x.narrow(dim, 0, n)
    shape = list(x.shape)
    shape[dim] = n
    z = fastt.zeros(shape, dtype=x.dtype, device=x.device)
    z.narrow(dim, 0, have).copy_(x)
    return z


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _wrap(dim, ndim):
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"dim must be int, not {type(dim).__name__}")
    lo, hi = -builtins.max(ndim, 1), builtins.max(ndim, 1) - 1
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no "
                         "dimensions")
    if dim < lo or dim > hi:
        raise IndexError(f"Dimension out of range (expected to be in range "
                         f"of [{lo}, {hi}], but got {dim})")
    return dim % ndim


def _out(op, result, out):
    """torch's out= for the transforms: a complex result needs a complex
    out, a real one a real out; the result is cast and out resized."""
    if out is None:
        return result
    if result.dtype.is_complex and not out.dtype.is_complex:
        raise RuntimeError(f"{op} expects a complex output tensor, but got "
                           f"{_type_name(out.dtype)}")
    if not result.dtype.is_complex and (out.dtype.is_complex or
                                        not out.dtype.is_floating_point):
        raise RuntimeError(f"{op} expects a floating point output tensor, "
                           f"but got {_type_name(out.dtype)}")
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(tuple(result.shape))
    out.copy_(result)
    return out


# ---- one dim ----

def _any2c(x, dims, norm, forward):
    """The complex transform of x along dims; a real x through the real
    transform's full spectrum (the inverse of a real signal is the
    conjugate of its forward transform, scaled)."""
    mode = _norm_mode(norm, forward)
    if x.dtype.is_complex:
        return _C._fft_c2c(x, dims, mode, forward)
    y = _C._fft_r2c(x, dims, mode, False)
    return y if forward else fastt.conj_physical(y)


def _c2c(op, x, n, dim, norm, forward, out):
    x = _promote(op, x)
    d = _wrap(dim, x.dim())
    if n is not None:
        _check_n(n)
        x = _resize(x, d, n)
    return _out(op, _any2c(x, [d], norm, forward), out)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-d discrete Fourier transform (torch.fft.fft)."""
    return _c2c("fft", input, n, dim, norm, True, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-d inverse discrete Fourier transform (torch.fft.ifft)."""
    return _c2c("ifft", input, n, dim, norm, False, out)


def _r2c(op, x, n, dim, norm, forward, out):
    x = _promote(op, x, require_real=True)
    d = _wrap(dim, x.dim())
    if n is not None:
        _check_n(n)
        x = _resize(x, d, n)
    y = _C._fft_r2c(x, [d], _norm_mode(norm, forward), True)
    # ihfft: the inverse transform of a real signal is the conjugate of
    # its forward one, scaled.
    return _out(op, y if forward else fastt.conj_physical(y), out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-d transform of a real signal: its n//2 + 1 non-negative
    frequencies (torch.fft.rfft)."""
    return _r2c("rfft", input, n, dim, norm, True, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of hfft: the onesided inverse transform of a real
    signal (torch.fft.ihfft)."""
    return _r2c("ihfft", input, n, dim, norm, False, out)


def _c2r(op, x, n, dim, norm, forward, out):
    x = _promote(op, x, require_complex=True)
    d = _wrap(dim, x.dim())
    n = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(n)
    if forward:  # hfft: the forward transform of a Hermitian signal
        x = fastt.conj_physical(x)
    y = _C._fft_c2r(x, [d], _norm_mode(norm, forward), n)
    return _out(op, y, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of rfft: n real values from n//2 + 1 frequencies
    (torch.fft.irfft; n defaults to 2 * (m - 1))."""
    return _c2r("irfft", input, n, dim, norm, False, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of a Hermitian-symmetric signal given by its first
    half: a real result (torch.fft.hfft)."""
    return _c2r("hfft", input, n, dim, norm, True, out)


# ---- several dims ----

def _resolve(op, x, s, dim, default_dim=None):
    """torch's canonicalize_fft_shape_and_dim_args: the wrapped dims and
    the signal sizes along them (None where a size stays as it is)."""
    ndim = x.dim()
    if dim is None and default_dim is not None:
        dim = default_dim
    if isinstance(dim, int):
        dim = (dim,)
    if s is not None and isinstance(s, int):
        s = (s,)
    if dim is not None:
        dims = [_wrap(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must "
                               "have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input "
                               f"tensor only has {ndim} dimensions.")
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim))
    sizes = [None] * len(dims)
    if s is not None:
        for i, v in enumerate(s):
            if v != -1:
                _check_n(v)
                sizes[i] = v
    return dims, sizes


def _cn(op, x, s, dim, norm, forward, out, default_dim=None):
    x = _promote(op, x)
    dims, sizes = _resolve(op, x, s, dim, default_dim)
    for d, n in zip(dims, sizes):
        if n is not None:
            x = _resize(x, d, n)
    if not dims:  # nothing to transform: the input as complex
        return _out(op, x.to(x.dtype.to_complex()) if not
                    x.dtype.is_complex else x, out)
    return _out(op, _any2c(x, dims, norm, forward), out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d discrete Fourier transform (torch.fft.fftn)."""
    return _cn("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d inverse discrete Fourier transform (torch.fft.ifftn)."""
    return _cn("ifftn", input, s, dim, norm, False, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-d discrete Fourier transform (torch.fft.fft2)."""
    return _cn("fft2", input, s, dim, norm, True, out, (-2, -1))


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-d inverse discrete Fourier transform (torch.fft.ifft2)."""
    return _cn("ifft2", input, s, dim, norm, False, out, (-2, -1))


def _nd_input(op, x, s, dim, default_dim, resize_last):
    """The dims and sizes of an r2c / c2r n-d transform, x resized along
    them (but the last when c2r, whose size is the output's)."""
    dims, sizes = _resolve(op, x, s, dim, default_dim)
    if not dims:
        raise RuntimeError(f"{op} must transform at least one axis")
    for d, n in zip(dims if resize_last else dims[:-1], sizes):
        if n is not None:
            x = _resize(x, d, n)
    return x, dims, sizes


def _rn(op, x, s, dim, norm, forward, out, default_dim=None):
    x = _promote(op, x, require_real=True)
    x, dims, _ = _nd_input(op, x, s, dim, default_dim, True)
    y = _C._fft_r2c(x, dims, _norm_mode(norm, forward), True)
    return _out(op, y if forward else fastt.conj_physical(y), out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d transform of a real signal, onesided along the last of dim
    (torch.fft.rfftn)."""
    return _rn("rfftn", input, s, dim, norm, True, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-d transform of a real signal (torch.fft.rfft2)."""
    return _rn("rfft2", input, s, dim, norm, True, out, (-2, -1))


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d inverse of hfftn (torch.fft.ihfftn)."""
    return _rn("ihfftn", input, s, dim, norm, False, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-d inverse of hfft2 (torch.fft.ihfft2)."""
    return _rn("ihfft2", input, s, dim, norm, False, out, (-2, -1))


def _cnr(op, x, s, dim, norm, forward, out, default_dim=None):
    x = _promote(op, x, require_complex=True)
    x, dims, sizes = _nd_input(op, x, s, dim, default_dim, False)
    last = sizes[-1]
    if last is None:
        last = 2 * (x.shape[dims[-1]] - 1)
        _check_n(last)
    if forward:  # hfftn: the forward transform of a Hermitian signal
        x = fastt.conj_physical(x)
    y = _C._fft_c2r(x, dims, _norm_mode(norm, forward), last)
    return _out(op, y, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of rfftn (torch.fft.irfftn)."""
    return _cnr("irfftn", input, s, dim, norm, False, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of rfft2 (torch.fft.irfft2)."""
    return _cnr("irfft2", input, s, dim, norm, False, out, (-2, -1))


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d transform of a Hermitian-symmetric signal given by its half
    along the last of dim: a real result (torch.fft.hfftn)."""
    return _cnr("hfftn", input, s, dim, norm, True, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-d transform of a Hermitian-symmetric signal (torch.fft.hfft2).
    """
    return _cnr("hfft2", input, s, dim, norm, True, out, (-2, -1))


# ---- frequencies and shifts ----

def _freqs(op, k, n, d, out, dtype, device, requires_grad):
    """k / (d * n) as dtype on device, or written into out."""
    dtype = dtype if out is None else out.dtype
    dtype = fastt.get_default_dtype() if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{op} requires a floating point or complex "
                           "dtype")
    r = k.to(dtype) / (d * n)
    if device is not None:
        r = r.to(device)
    if out is not None:
        return _out(op, r, out)
    return r.requires_grad_() if requires_grad else r


def _check_count(n):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative "
                           f"dimension {n}: [{n}]")


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    """The sample frequencies of an n-point transform: [0, 1, ...,
    (n-1)//2, -(n//2), ..., -1] / (d * n) (torch.fft.fftfreq)."""
    _check_count(n)
    k = fastt.arange(n, dtype=fastt.int64)
    k = fastt.where(k < (n + 1) // 2, k, k - n)
    return _freqs("fftfreq", k, n, d, out, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """The sample frequencies of rfft's output: [0, 1, ..., n//2] / (d * n)
    (torch.fft.rfftfreq)."""
    _check_count(n)
    k = fastt.arange(n // 2 + 1, dtype=fastt.int64)
    return _freqs("rfftfreq", k, n, d, out, dtype, device, requires_grad)


def _shift(input, dim, sign):
    _check_tensor("fftshift" if sign > 0 else "ifftshift", input)
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return input.clone()
    shifts = [(input.shape[d] // 2) if sign > 0 else
              (input.shape[d] + 1) // 2 for d in dims]
    return fastt.roll(input, shifts, dims)


def fftshift(input, dim=None):
    """The zero frequency moved to the centre (torch.fft.fftshift)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of fftshift (torch.fft.ifftshift)."""
    return _shift(input, dim, -1)
