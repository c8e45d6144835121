"""Composite ops: torch functions that are compositions of fastt's kernels
(no Python loops over elements), as torch's own CompositeImplicit ops are.
Each becomes fastt.<name>; those torch also has as methods join Tensor
through fastt._C._add_tensor_method (so `x.nansum()` works). Gradients come
from the kernels they call; where torch's formula differs from the
composition's, the composition is arranged to give torch's gradient.

The conformance suite (tests/python/test_opinfo.py) checks each against
torch's OpInfo samples, error inputs and gradients."""
import builtins
import collections
import functools
import inspect
import math

import fastt
from . import _C

__all__ = []


def _numpy_aliases(fn):
    """fn taking axis= for dim= and keepdims= for keepdim= when it has
    those parameters (torch's NumPy-style aliases, which the C bindings take
    too); fn itself when it has neither."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    pairs = [(a, d) for a, d in (("axis", "dim"), ("keepdims", "keepdim"))
             if d in params and a not in params]
    if not pairs:
        return fn

    @functools.wraps(fn)
    def aliased(*args, **kwargs):
        if kwargs:
            for alias, real in pairs:
                if alias in kwargs:
                    if real in kwargs:
                        raise TypeError(f"{fn.__name__}() got multiple "
                                        f"values for argument '{real}'")
                    kwargs[real] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return aliased


def _export(method=True, name=None, inplace=None):
    """Make fn fastt.<name> (and Tensor.<name> when method)."""
    def wrap(fn):
        n = name or fn.__name__
        __all__.append(n)
        public = _numpy_aliases(fn)
        globals()[n] = public
        if method:
            _C._add_tensor_method(n, public)
        return public
    return wrap


def _method(name, fn):
    _C._add_tensor_method(name, _numpy_aliases(fn))


def _type_name(dtype):
    return {"bool": "Bool", "uint8": "Byte", "int8": "Char",
            "int16": "Short", "int32": "Int", "int64": "Long",
            "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
            "float64": "Double", "complex64": "ComplexFloat",
            "complex128": "ComplexDouble"}[str(dtype).split(".")[-1]]


def _wrap_dim(dim, ndim, op):
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}(): Dimension out of range (expected to be "
                         f"in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, builtins.int):
        return (dim,)
    return tuple(dim)


def _extent(t):
    """The byte range [lo, hi) t's elements occupy."""
    if t.numel() == 0:
        return (0, 0)
    lo = t.data_ptr()
    span = builtins.sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    return (lo, lo + (span + 1) * t.itemsize)


def _out(result, out, *inputs):
    """result, or copied into out (a tensor or a tuple of them); an out
    that shares memory with one of inputs is refused, as torch does."""
    if out is None:
        return result
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for o in outs:
        a = _extent(o)
        for i in inputs:
            b = _extent(i)
            if a[0] < b[1] and b[0] < a[1]:
                raise RuntimeError(
                    "unsupported operation: some elements of the input "
                    "tensor and the written-to tensor refer to a single "
                    "memory location. Please clone() the tensor before "
                    "performing the operation.")
    if isinstance(out, (tuple, list)):
        for o, r in zip(out, result):
            o.copy_(r)
        return out
    return out.copy_(result)


def _write_back(self, result, op):
    """An in-place composite's last step: result into self, refused when
    result's dtype cannot be cast to self's (torch's rule)."""
    if not fastt.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"{op}: result type {_type_name(result.dtype)} "
                           "can't be cast to the desired output type "
                           f"{_type_name(self.dtype)}")
    return self.copy_(result)


# ---- comparisons ----

@_export()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise; infinities
    compare equal to themselves, NaN to NaN only with equal_nan."""
    if input.dtype != other.dtype:
        raise RuntimeError(f"{_type_name(input.dtype)} did not match "
                           f"{_type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError("rtol must be greater than or equal to zero, "
                           f"but got {rtol}")
    if atol < 0:
        raise RuntimeError("atol must be greater than or equal to zero, "
                           f"but got {atol}")
    close = fastt.eq(input, other)
    floating = input.dtype.is_floating_point
    if equal_nan and input.dtype.is_complex:  # NaN in either part, as torch
        close = close | (fastt.view_as_real(input).isnan().any(-1) &
                         fastt.view_as_real(other).isnan().any(-1))
    elif equal_nan and floating:
        close = close | (fastt.isnan(input) & fastt.isnan(other))
    if rtol == 0 and atol == 0:
        return close
    if input.dtype == fastt.bool:
        a = input.to(fastt.get_default_dtype())
        b = other.to(fastt.get_default_dtype())
    else:
        a, b = input, other
    allowed = atol + fastt.abs(rtol * b)
    actual = fastt.abs(a - b)
    return close | (fastt.isfinite(actual) & (actual <= allowed))


@_export()
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """isclose(...).all() as a Python bool."""
    return builtins.bool(isclose(input, other, rtol, atol,
                                 equal_nan).all().item())


@_export()
def equal(input, other):
    """True when input and other have the same shape and elements."""
    if not isinstance(other, fastt.Tensor):
        raise TypeError("equal(): argument 'other' (position 2) must be "
                        f"Tensor, not {type(other).__name__}")
    if input.device != other.device:
        raise RuntimeError("Expected all tensors to be on the same device, "
                           f"but found {input.device} and {other.device}")
    if input.shape != other.shape:
        return False
    return builtins.bool(fastt.eq(input, other).all().item())


# ---- NaN-ignoring reductions ----

@_export()
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """sum treating NaN as zero (gradient 0 at the NaNs, as torch)."""
    x = input
    if x.dtype.is_complex:
        raise RuntimeError("nansum does not support complex inputs")
    if x.dtype.is_floating_point:
        x = fastt.where(fastt.isnan(x), fastt.zeros((), dtype=x.dtype,
                                                    device=x.device), x)
    dims = _dims(dim, x.ndim) if dim is not None else None
    if dims is None or dims == ():
        r = fastt.sum(x, dtype=dtype) if not keepdim else \
            fastt.sum(x, tuple(range(x.ndim)), True, dtype=dtype)
    else:
        r = fastt.sum(x, dims, keepdim, dtype=dtype)
    return _out(r, out)


@_export()
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """mean over the non-NaN elements (NaN for an all-NaN slice)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating "
                           "point or complex dtype but got "
                           f"{_type_name(input.dtype)}")
    count = nansum(fastt.logical_not(fastt.isnan(input)), dim, keepdim)
    return _out(nansum(input, dim, keepdim, dtype=dtype) / count, out)


_aminmax = collections.namedtuple("aminmax", ["min", "max"])


@_export()
def aminmax(input, *, dim=None, keepdim=False, out=None):
    """(amin, amax) over dim (all elements for None)."""
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an "
                               "empty dimension as the operation has no "
                               "identity.")
        lo, hi = fastt.amin(input), fastt.amax(input)
        if keepdim:
            shape = [1] * input.ndim
            lo, hi = lo.reshape(shape), hi.reshape(shape)
    else:
        if input.ndim and input.shape[_wrap_dim(dim, input.ndim,
                                                "aminmax")] == 0:
            raise IndexError("aminmax(): Expected reduction dim "
                             f"{dim} to have non-zero size.")
        lo = fastt.amin(input, dim, keepdim)
        hi = fastt.amax(input, dim, keepdim)
    for o in out or ():
        if o.dtype != input.dtype:
            raise RuntimeError("Expected out tensor to have dtype "
                               f"{_type_name(input.dtype).lower()}, but got "
                               f"{_type_name(o.dtype).lower()} instead")
    return _aminmax(*_out((lo, hi), out))


# ---- differences and integrals ----

def _pre_append(t, input, dim, name):
    if t is None:
        return None
    if not isinstance(t, fastt.Tensor):
        t = fastt.tensor(t, dtype=input.dtype, device=input.device)
    if t.ndim == 0:
        shape = list(input.shape)
        shape[dim] = 1
        t = t.expand(shape)
    if t.ndim != input.ndim:
        raise RuntimeError(f"diff expects prepend or append to be the same "
                           "dimension as input")
    return t


@_export()
def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """The n-th forward difference along dim (logical_xor for bool)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least "
                           "one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if n == 0:  # torch: the input, prepend and append ignored
        return _out(input, out)
    dim = _wrap_dim(dim, input.ndim, "diff")
    p = _pre_append(prepend, input, dim, "prepend")
    a = _pre_append(append, input, dim, "append")
    x = fastt.cat([t for t in (p, input, a) if t is not None], dim) \
        if p is not None or a is not None else input
    for _ in range(n):
        m = x.shape[dim]
        if m == 0:
            break
        hi, lo = x.narrow(dim, 1, m - 1), x.narrow(dim, 0, m - 1)
        x = fastt.logical_xor(hi, lo) if x.dtype == fastt.bool else hi - lo
    return _out(x, out)


def _trapezoid_dx(y, x, dx, dim, name):
    """The spacing: a Python number, or a tensor broadcast against the
    n-1 intervals of y along dim."""
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of "
                        "arguments - got both x and dx")
    if x is None or not isinstance(x, fastt.Tensor):
        return 1 if x is None and dx is None else (x if x is not None
                                                   else dx)
    n = y.shape[dim]
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{name}: There must be one `x` value for "
                               "each sample point")
        shape = [1] * y.ndim
        shape[dim] = n
        x = x.reshape(shape)
    else:
        xd = _wrap_dim(dim - y.ndim if dim >= 0 else dim, x.ndim, name)
        if x.shape[xd] != n:
            raise RuntimeError(f"{name}: There must be one `x` value for "
                               "each sample point")
        d = x.ndim - 1 - xd
        return ("t", x.narrow(xd, 1, n - 1) - x.narrow(xd, 0, n - 1), d)
    return ("t", x.narrow(dim, 1, n - 1) - x.narrow(dim, 0, n - 1), None)


@_export(method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along dim, with sample points x or spacing dx."""
    dim = _wrap_dim(dim, y.ndim, "trapezoid")
    n = y.shape[dim]
    step = _trapezoid_dx(y, x, dx, dim, "trapezoid")
    if n == 0:
        return fastt.sum(y * 0, dim)
    if not isinstance(step, tuple):
        ends = y.select(dim, 0) + y.select(dim, n - 1)
        return (fastt.sum(y, dim) - ends * 0.5) * step
    pair = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return fastt.sum(step[1] * pair, dim) / 2


@_export(method=False)
def trapz(y, x=None, *, dx=None, dim=-1):
    """torch.trapz: trapezoid under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


@_export(method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid rule along dim (n-1 values)."""
    dim = _wrap_dim(dim, y.ndim, "cumulative_trapezoid")
    n = y.shape[dim]
    step = _trapezoid_dx(y, x, dx, dim, "cumulative_trapezoid")
    if n == 0:
        return y * 0
    pair = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    if not isinstance(step, tuple):
        return fastt.cumsum(step / 2.0 * pair, dim)
    return fastt.cumsum(step[1] * pair, dim) / 2


# ---- statistics ----

@_export()
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in input's rows (torch.cov,
    numpy.cov's conventions), with frequency and importance weights."""
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer "
                           "dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype == fastt.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    nobs = x.shape[1]
    w = None
    if fweights is not None:
        fw = fweights
        if fw.ndim > 1:
            raise RuntimeError("cov(): expected fweights to have one or fewer"
                               " dimensions but got fweights with "
                               f"{fw.ndim} dimensions")
        if fw.dtype.is_floating_point or fw.dtype == fastt.bool:
            raise RuntimeError("cov(): expected fweights to have integral "
                               "dtype but got fweights with "
                               f"{_type_name(fw.dtype)} dtype")
        if fw.numel() != nobs:
            raise RuntimeError("cov(): expected fweights to have the same "
                               "numel as there are observations in the "
                               f"input but got {fw.numel()} != {nobs}")
        if nobs and fw.min().item() < 0:
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fw
    if aweights is not None:
        aw = aweights
        if aw.ndim > 1:
            raise RuntimeError("cov(): expected aweights to have one or fewer"
                               " dimensions but got aweights with "
                               f"{aw.ndim} dimensions")
        if not aw.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to have floating "
                               "point dtype but got aweights with "
                               f"{_type_name(aw.dtype)} dtype")
        if aw.numel() != nobs:
            raise RuntimeError("cov(): expected aweights to have the same "
                               "numel as there are observations in the "
                               f"input but got {aw.numel()} != {nobs}")
        if nobs and aw.min().item() < 0:
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aw if w is None else w * aw
    if w is None:
        w_sum = fastt.tensor(nobs, dtype=fastt.int64, device=x.device)
    else:
        w_sum = w.sum()
        if w_sum.item() == 0:
            raise RuntimeError("cov(): weights sum to zero, can't be "
                               "normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if norm.item() <= 0:
        norm = norm * 0
    xc = x - avg.unsqueeze(1)
    c = fastt.mm(xc, (xc * w if w is not None else xc).t().conj())
    return fastt.true_divide(c, norm).squeeze()


@_export()
def corrcoef(input):
    """Pearson correlation coefficients of input's rows, clipped to
    [-1, 1] (each part of a complex one)."""
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer "
                           "dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    sd = fastt.sqrt(d.real if d.is_complex() else d)
    c = c / sd.reshape(-1, 1)
    c = c / sd.reshape(1, -1)
    if c.is_complex():  # each part clipped, as torch
        return fastt.complex(fastt.clamp(c.real, -1, 1),
                             fastt.clamp(c.imag, -1, 1))
    return fastt.clamp(c, -1, 1)


@_export()
def dist(input, other, p=2):
    """The p-norm of input - other."""
    return fastt.norm(input - other, p)


@_export()
def renorm(input, p, dim, maxnorm):
    """Each slice along dim whose p-norm exceeds maxnorm, scaled to
    maxnorm."""
    if input.ndim <= 1:
        raise RuntimeError("renorm: input needs at least 2 dimensions, got "
                           f"{input.ndim} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError("renorm: expected maxnorm to be >= 0 but got "
                           f"{maxnorm}")
    dim = _wrap_dim(dim, input.ndim, "renorm")
    rest = tuple(d for d in range(input.ndim) if d != dim)
    norms = fastt.norm(input, p, rest, True)
    factor = fastt.where(norms > maxnorm, maxnorm / (norms + 1e-7),
                         fastt.ones((), dtype=norms.dtype,
                                    device=norms.device))
    return input * factor


_method("renorm_", lambda self, p, dim, maxnorm:
        _write_back(self, renorm(self, p, dim, maxnorm), "renorm_"))


@_export()
def msort(input, *, out=None):
    """input sorted along its first dimension."""
    return _out(fastt.sort(input, 0).values, out)


# ---- building tensors from tensors ----

@_export(method=False)
def block_diag(*tensors):
    """The block-diagonal matrix of the (at most 2-d) tensors."""
    mats = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 "
                               f"or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
        mats.append(t.reshape(1, 1) if t.ndim == 0 else
                    t.reshape(1, -1) if t.ndim == 1 else t)
    if not mats:
        return fastt.empty(1, 0)
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = fastt.promote_types(dtype, m.dtype)
    dev = mats[0].device
    cols = builtins.sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        parts = [fastt.zeros(r, left, dtype=dtype, device=dev),
                 m.to(dtype),
                 fastt.zeros(r, cols - left - c, dtype=dtype, device=dev)]
        rows.append(fastt.cat(parts, 1))
        left += c
    return fastt.cat(rows, 0)


def _check_1d(t):
    if t.ndim != 1:
        raise RuntimeError("Expect a 1D vector, but got shape "
                           f"{list(t.shape)}")


@_export(method=False)
def cartesian_prod(*tensors):
    """Every combination of one element from each 1-d tensor, as rows."""
    for t in tensors:
        _check_1d(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = fastt.meshgrid(*tensors, indexing="ij")
    return fastt.stack([g.flatten() for g in grids], 1)


@_export(method=False)
def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of input's elements (itertools'
    combinations / combinations_with_replacement order)."""
    _check_1d(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return fastt.empty(0, dtype=input.dtype, device=input.device)
    n = input.shape[0]
    idx = fastt.arange(n, device=input.device)
    grids = fastt.meshgrid(*([idx] * r), indexing="ij")
    mask = fastt.ones(grids[0].shape, dtype=fastt.bool, device=input.device)
    for a, b in zip(grids, grids[1:]):
        mask = mask & ((a <= b) if with_replacement else (a < b))
    picks = [fastt.masked_select(g, mask) for g in grids]
    return fastt.stack([input[p] for p in picks], 1)


@_export(method=False)
def unravel_index(indices, shape):
    """The coordinates in shape of flat indices (a tuple of tensors)."""
    if not isinstance(indices, fastt.Tensor):
        indices = fastt.tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype == fastt.bool:
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{indices.dtype}")
    if isinstance(shape, builtins.int):
        shape = (shape,)
    shape = tuple(builtins.int(s) for s in shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got "
                         f"{shape}")
    total = math.prod(shape)
    if indices.numel() and total == 0:
        raise ValueError("'shape' cannot have zero-sized dimensions when "
                         "'indices' is not empty")
    idx = indices.to(fastt.int64)
    out = []
    for s in reversed(shape):
        out.append(fastt.remainder(idx, s))
        idx = fastt.floor_divide(idx, s)
    return tuple(reversed(out))


@_export(method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of elements is in test_elements."""
    if not isinstance(elements, fastt.Tensor):
        elements = fastt.tensor(elements, device=test_elements.device)
    if not isinstance(test_elements, fastt.Tensor):
        test_elements = fastt.tensor(test_elements, device=elements.device)
    common = fastt.promote_types(elements.dtype, test_elements.dtype)
    e = elements.to(common)
    t = test_elements.to(common).flatten()
    if t.numel() == 0:
        hit = fastt.zeros(e.shape, dtype=fastt.bool, device=e.device)
    elif e.numel() * t.numel() <= (1 << 22):
        hit = fastt.eq(e.unsqueeze(-1), t).any(-1)
    else:  # sort the test values and look each element up
        st = fastt.sort(t).values
        pos = fastt.searchsorted(st, e.flatten()).clamp(max=st.numel() - 1)
        hit = fastt.eq(st[pos], e.flatten()).reshape(e.shape)
    return fastt.logical_not(hit) if invert else hit


def sum_to_size(self, *size):
    """self summed down to size (self must expand from size)."""
    if len(size) == 1 and not isinstance(size[0], builtins.int):
        size = tuple(size[0])
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and builtins.all(
        s == 1 or s == d for s, d in zip(size, shape[lead:]))
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to "
                           f"size {{{list(shape)}}}.")
    if not size:  # torch: an empty size is a full sum
        return fastt.sum(self)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and shape[lead + i] != 1]
    r = fastt.sum(self, tuple(dims), True) if dims else self
    return r.reshape(size) if lead else r


_method("sum_to_size", sum_to_size)


# ---- complex tensors: parts, conjugates, construction ----
# The parts are views (view_as_real / view_as_complex, csrc/ops/complex.h).
# fastt has no lazy conjugate bit: conj() of a complex tensor is a new
# tensor (torch's is a view with is_conj() True; the values are the same).

@_export()
def resolve_neg(input):
    """input itself: fastt has no lazy negation bit."""
    return input


@_export()
def resolve_conj(input):
    """input itself: fastt's conj() materialises, so no tensor carries a
    pending conjugation."""
    return input


@_export()
def is_conj(input):
    """False: fastt has no lazy conjugate bit (conj() materialises)."""
    return False


@_export()
def is_neg(input):
    """False: fastt has no lazy negation bit."""
    return False


@_export()
def conj(input):
    """The complex conjugate: a new tensor for a complex input, input
    itself for a real one (torch)."""
    return _C._conj_physical(input) if input.dtype.is_complex else input


@_export()
def conj_physical(input, *, out=None):
    """The complex conjugate, materialised: input itself for a real
    tensor, as torch."""
    r = _C._conj_physical(input) if input.dtype.is_complex else input
    return _out(r, out) if out is not None else r


def _conj_physical_(self):
    if self.dtype.is_complex:
        if self.requires_grad and _C.is_grad_enabled():
            # Recorded as a copy_: a write through the real view is not.
            self.copy_(_C._conj_physical(self))
        else:
            fastt.view_as_real(self).select(-1, 1).neg_()
    return self


_method("conj_physical_", _conj_physical_)
_method("__complex__", lambda self: builtins.complex(self.item()))


@_export(method=False)
def real(input):
    """The real part, a view; input itself for a real tensor."""
    return _C._real(input)


@_export(method=False)
def imag(input):
    """The imaginary part, a view; complex tensors only."""
    return _C._imag(input)


def _set_part(part):
    def setter(self, value):
        part(self).copy_(value if isinstance(value, fastt.Tensor)
                         else fastt.tensor(value))
    return setter


_C._add_tensor_method("real", property(_C._real, _set_part(_C._real)))
_C._add_tensor_method("imag", property(_C._imag, _set_part(_C._imag)))


def _check_parts(op, a, b, an, bn):
    for x in (a, b):
        if not isinstance(x, fastt.Tensor):
            raise TypeError(f"{op}(): argument '{an if x is a else bn}' "
                            f"must be Tensor, not {type(x).__name__}")
    if a.dtype != b.dtype or a.dtype not in (fastt.float32, fastt.float64):
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but "
            f"got {_type_name(a.dtype)} and {_type_name(b.dtype)}")


@_export(method=False)
def complex(real, imag, *, out=None):
    """real + imag * 1j, broadcast, for float32 / float64 parts of one
    dtype."""
    _check_parts("complex", real, imag, "real", "imag")
    shape = fastt.broadcast_shapes(real.shape, imag.shape)
    r = fastt.empty(shape + (2,), dtype=real.dtype, device=real.device)
    r.select(-1, 0).copy_(real.expand(shape))
    r.select(-1, 1).copy_(imag.expand(shape))
    return _out(fastt.view_as_complex(r), out, real, imag)


@_export(method=False)
def polar(abs, angle, *, out=None):  # noqa: A002 - torch's names
    """abs * (cos(angle) + sin(angle) * 1j)."""
    _check_parts("polar", abs, angle, "abs", "angle")
    return _out(complex(abs * fastt.cos(angle), abs * fastt.sin(angle)),
                out, abs, angle)


@_export()
def angle(input, *, out=None):
    """The argument of each element: atan2(imag, real) for complex input;
    pi for negatives, 0 otherwise, NaN kept for real input (integers give
    the default float dtype)."""
    x = input
    if x.dtype.is_complex:
        p = fastt.view_as_real(x)
        return _out(fastt.atan2(p.select(-1, 1), p.select(-1, 0)), out)
    if not x.dtype.is_floating_point:
        x = x.to(fastt.get_default_dtype())
    pi = fastt.full((), math.pi, dtype=x.dtype, device=x.device)
    zero = fastt.zeros((), dtype=x.dtype, device=x.device)
    r = fastt.where(x < 0, pi, zero)
    r = fastt.where(fastt.isnan(x), x, r)
    return _out(r, out)


# ---- in-place variants of ops that have a kernel ----

def _rdiv(self, other):
    if not isinstance(self, fastt.Tensor):
        raise TypeError("descriptor '__rdiv__' requires a 'fastt.Tensor' "
                        f"object but received a '{type(self).__name__}'")
    return fastt.div(other, self) if isinstance(other, fastt.Tensor) else \
        self.__rtruediv__(other)


_method("__rdiv__", _rdiv)
_method("true_divide_", lambda self, other: self.div_(other))
_method("cumsum_", lambda self, dim, *, dtype=None:
        _write_back(self, fastt.cumsum(self, dim, dtype=dtype), "cumsum_"))
_method("cumprod_", lambda self, dim, *, dtype=None:
        _write_back(self, fastt.cumprod(self, dim, dtype=dtype), "cumprod_"))


# ---- the *_copy family: a view op's result, as a new tensor ----

def _fresh(v):
    """v as a contiguous tensor of its own (contiguous() copies only when v
    is not contiguous; a view that is gets cloned)."""
    if isinstance(v, (tuple, list)):
        return tuple(_fresh(t) for t in v)
    c = v.contiguous()
    return c.clone() if c.data_ptr() == v.data_ptr() else c


def _copy_of(view_name):
    def fn(input, *args, out=None, **kwargs):
        view = getattr(fastt.Tensor, view_name)
        return _out(_fresh(view(input, *args, **kwargs)), out)
    fn.__name__ = view_name + "_copy"
    fn.__doc__ = f"input.{view_name}(...) as a new contiguous tensor."
    return fn


for _v in ("expand", "permute", "t", "transpose", "squeeze", "unsqueeze",
           "view", "diagonal", "unbind", "unfold", "split_with_sizes",
           "as_strided"):
    _export(method=False)(_copy_of(_v))


@_export()
def narrow_copy(input, dim, start, length, *, out=None):
    """input.narrow(dim, start, length) as a new tensor (torch raises
    RuntimeError for a dim past the end here, IndexError below -ndim)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= input.ndim:
        raise RuntimeError("Expected dim < static_cast<int64_t>("
                           "self_sizes.size()) to be true, but got false.")
    return _out(_fresh(input.narrow(dim, start, length)), out)


def alias_copy(input, *, out=None):
    """A copy of input (torch.alias_copy)."""
    return _out(input.clone(), out)


_export(method=False)(alias_copy)


# ---- scatters: a copy of input with one view of it replaced ----

def _scatter_into(input, src, view, name):
    v = view(input)
    if tuple(v.shape) != tuple(src.shape):
        raise RuntimeError(f"{name}: expected src to have a size equal to "
                           f"the slice of self. src size = "
                           f"{list(src.shape)}, slice size = "
                           f"{list(v.shape)}")
    out = input.clone()
    view(out).copy_(src)
    return out


@_export()
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with its diagonal (offset, dim1, dim2) replaced by src."""
    return _scatter_into(input, src,
                         lambda t: t.diagonal(offset, dim1, dim2),
                         "diagonal_scatter")


@_export()
def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src."""
    return _scatter_into(input, src, lambda t: t.select(dim, index),
                         "select_scatter")


@_export()
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[start:end:step] along dim replaced by src."""
    d = _wrap_dim(dim, input.ndim, "slice_scatter")
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, src, lambda t: t[key], "slice_scatter")


@_export()
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """input with its as_strided(size, stride, storage_offset) view
    replaced by src."""
    return _scatter_into(input, src,
                         lambda t: t.as_strided(size, stride, storage_offset),
                         "as_strided_scatter")


# ---- uninitialised tensors with a given layout ----

@_export(method=False)
def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given sizes and strides."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    extent = 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) \
        if builtins.all(s > 0 for s in size) else 0
    base = fastt.empty(extent, dtype=dtype, device=device)
    t = base.as_strided(size, stride, 0).detach()
    return t.requires_grad_(True) if requires_grad else t


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None,
                       device=None, requires_grad=False, pin_memory=False):
    return empty_strided(size, stride, dtype=dtype or self.dtype,
                         device=device or self.device,
                         requires_grad=requires_grad)


_method("new_empty_strided", _new_empty_strided)


@_export(method=False)
def empty_permuted(size, physical_layout, *, dtype=None, layout=None,
                   device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor of size whose dims lie in memory in the
    order physical_layout (outermost first)."""
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError("Number of dimensions in size does not match the "
                           "length of the physical_layout; i.e. len(size) = "
                           f"{len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    seen = set()
    for d in order:
        if not 0 <= d < builtins.max(len(size), 1):
            raise RuntimeError(f"Dimension out of range (expected to be in "
                             f"range of [{-len(size)}, {len(size) - 1}], "
                             f"but got {d})")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    phys = fastt.empty([size[d] for d in order], dtype=dtype, device=device)
    inv = [0] * len(order)
    for i, d in enumerate(order):
        inv[d] = i
    t = phys.permute(inv).detach()
    return t.requires_grad_(True) if requires_grad else t


# ---- index-based writes, out of place ----

def _dim_key(input, dim, index, name):
    d = _wrap_dim(dim, input.ndim, name)
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if index.dtype != fastt.int64:
        raise IndexError(f"{name}(): Expected dtype int64 for index")
    return (slice(None),) * d + (index.reshape(-1),)


def _index_fill_(self, dim, index, value):
    if isinstance(value, fastt.Tensor) and value.ndim != 0:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value "
                           f"tensor, but got tensor with {value.ndim} "
                           "dimension(s).")
    if self.ndim == 0:
        _dim_key(self.reshape(1), dim, index, "index_fill_")
        hit = fastt.tensor(index.numel() > 0, device=self.device)
    else:
        key = _dim_key(self, dim, index, "index_fill_")
        d = len(key) - 1
        hit = fastt.zeros(self.shape[d], dtype=fastt.bool,
                          device=self.device)
        hit[index.reshape(-1)] = True  # duplicates fill once, as torch
        hit = hit.reshape([-1] + [1] * (self.ndim - 1 - d))
    if not isinstance(value, fastt.Tensor):
        value = fastt.tensor(value, dtype=self.dtype, device=self.device)
    return self.copy_(fastt.where(hit, value.to(self.dtype), self))


@_export()
def index_fill(input, dim, index, value):
    """A copy of input with the entries at index along dim set to value."""
    return _index_fill_(input.clone(), dim, index, value)


_method("index_fill_", _index_fill_)


def _index_copy_(self, dim, index, source):
    if self.ndim == 0:
        if index.numel():
            self.copy_(source.reshape(()))
        return self
    key = _dim_key(self, dim, index, "index_copy_")
    d = _wrap_dim(dim, self.ndim, "index_copy_")
    if source.dtype != self.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have "
                           "the same dtype, but got (self) "
                           f"{_type_name(self.dtype)} and (source) "
                           f"{_type_name(source.dtype)}")
    src = source if source.ndim else source.reshape(1)
    if src.ndim != self.ndim or src.shape[d] != index.numel():
        raise RuntimeError("index_copy_(): Source/destination tensor must "
                           "have same slice shapes.")
    self[key] = src
    return self


@_export()
def index_copy(input, dim, index, source):
    """A copy of input with source's slices written at index along dim."""
    return _index_copy_(input.clone(), dim, index, source)


_method("index_copy_", _index_copy_)


@_export(method=False)
def masked_scatter(input, mask, source):
    """input (broadcast with mask) with source's elements, in order, where
    mask is True."""
    return input.masked_scatter(mask, source)


def _put_(self, index, source, accumulate=False):
    if index.dtype != fastt.int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but "
                           f"got {_type_name(index.dtype)}")
    if source.dtype != self.dtype:
        raise RuntimeError("put_(): self and source expected to have the "
                           f"same dtype, but got self.dtype = {self.dtype} "
                           f"and source.dtype = {source.dtype}")
    if index.numel() != source.numel():
        raise RuntimeError("put_(): Expected source and index to have the "
                           "same number of elements, but got source.numel()"
                           f" = {source.numel()}, index.numel() = "
                           f"{index.numel()}")
    flat = self.reshape(-1)
    n = flat.numel()
    if index.numel():
        lo, hi = index.min().item(), index.max().item()
        if lo < -n or hi >= n:
            bad = hi if hi >= n else lo
            raise IndexError(f"out of range: tried to access index {bad} on "
                             f"a tensor of {n} elements.")
    upd = flat.index_put((index.reshape(-1),), source.reshape(-1),
                         accumulate)
    self.copy_(upd.reshape(self.shape))
    return self


@_export()
def put(input, index, source, accumulate=False):
    """A copy of input with source written at the flat positions index
    (summed in with accumulate)."""
    return _put_(input.clone(), index, source, accumulate)


_method("put_", _put_)


@_export(method=False)
def constant_pad_nd(input, pad, value=0):
    """input padded with value (pad as nn.functional.pad's)."""
    return fastt.nn.functional.pad(input, pad, "constant", value)


# ---- order statistics (sort, then pick) ----

_VI = {n: collections.namedtuple(n, ["values", "indices"])
       for n in ("median", "nanmedian", "kthvalue", "mode")}


def _check_reduce_dim(input, dim, op):
    d = _wrap_dim(dim, input.ndim, op)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have "
                         "non-zero size.")
    return d


def _pick(input, dim, which, k, keepdim, op):
    """(values, indices) of one element per slice along dim in the order
    a stable sort gives: which = 0, the k-th (0-based); 1, the lower
    median, or the first NaN of a slice with one; 2, the lower median of
    the non-NaN values. Values gathered from input, so the gradient goes
    to the chosen element."""
    x = input if input.ndim else input.reshape(1)
    if x.device.type == "cpu" and x.shape[dim] < 2 ** 32:
        # a linear-time selection (kernels/cpu/sort.cpp)
        idx = fastt._C._select_kth(x, dim, which, k)
    else:
        idx = fastt.sort(x, dim, stable=True).indices.gather(
            dim, _positions(x, dim, which, k))
    vals = x.gather(dim, idx)
    if not keepdim or input.ndim == 0:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
        if input.ndim == 0:
            vals, idx = vals.reshape(()), idx.reshape(())
    return _VI[op](vals, idx)


def _positions(x, dim, which, k):
    """_pick's position in each slice's sorted order (keepdim-shaped)."""
    n = x.shape[dim]
    shape = list(x.shape)
    shape[dim] = 1
    if which == 0 or not x.dtype.is_floating_point:
        pos = k if which == 0 else (n - 1) // 2
        return fastt.full(shape, pos, dtype=fastt.int64, device=x.device)
    good = fastt.logical_not(fastt.isnan(x)).sum(dim, True)
    if which == 2:   # the lower median of the numbers; 0 if none
        return fastt.clamp((good - 1) // 2, min=0)
    # a NaN makes the median: the first one
    return fastt.where(good < n, good, fastt.full_like(good, (n - 1) // 2))


def _median(input, dim, keepdim, ignore_nan, op):
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return fastt.full((), math.nan, dtype=input.dtype,
                              device=input.device)
        return _median(flat, 0, False, ignore_nan, op).values
    d = _check_reduce_dim(input, dim, op)
    return _pick(input, d, 2 if ignore_nan else 1, 0, keepdim, op)


@_export()
def median(input, dim=None, keepdim=False, *, out=None):
    """The lower median (all elements: a value; along dim: values and
    indices); NaN where a slice holds one."""
    return _out(_median(input, dim, keepdim, False, "median"), out)


@_export()
def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """median ignoring NaN (NaN only for an all-NaN slice)."""
    return _out(_median(input, dim, keepdim, True, "nanmedian"), out)


@_export()
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The k-th smallest element along dim (1-based) and its index."""
    d = _wrap_dim(dim, input.ndim, "kthvalue")
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError("kthvalue(): selected number k out of range for "
                           f"dimension {d}")
    return _out(_pick(input, d, 0, k - 1, keepdim, "kthvalue"), out, input)


@_export()
def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along dim (the smallest of equally frequent
    ones) and the index of its last occurrence."""
    d = _wrap_dim(dim, input.ndim, "mode")
    x = (input if input.ndim else input.reshape(1)).movedim(d, -1)
    lead = tuple(x.shape[:-1])
    n = x.shape[-1]
    if n == 0:
        raise IndexError("mode(): Expected reduction dim "
                         f"{d} to have non-zero size.")
    rows = x.reshape(-1, n)
    s = fastt.sort(rows.detach(), -1).values
    start = fastt.ones(s.shape, dtype=fastt.int64, device=s.device)
    if n > 1:
        start[:, 1:] = (s[:, 1:] != s[:, :-1]).to(fastt.int64)
    run = fastt.cumsum(start, -1) - 1                # run id per position
    counts = fastt.zeros(s.shape, dtype=fastt.int64, device=s.device)
    counts = counts.scatter_add(1, run, fastt.ones_like(run))
    best = counts.argmax(1, True)                     # the smallest value
    first = (run == best).to(fastt.int64).argmax(1, True)
    value = s.gather(1, first)
    hit = (rows.detach() == value).to(fastt.int64)
    last = (n - 1) - hit.flip(1).argmax(1, True)
    idx = last.reshape(lead + (1,)).movedim(-1, d)
    if input.ndim == 0:
        idx = idx.reshape(())
        return _out(_VI["mode"](input.clone(), idx), out)
    vals = input.gather(d, idx)
    if not keepdim:
        vals, idx = vals.squeeze(d), idx.squeeze(d)
    return _out(_VI["mode"](vals, idx), out)


_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, op):
    if not input.dtype.is_floating_point or input.dtype not in (
            fastt.float32, fastt.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or "
                           "double dtype")
    qt = q if isinstance(q, fastt.Tensor) else None
    if qt is not None:
        if qt.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
        if qt.dtype != input.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the "
                               "input tensor")
        if qt.numel() and (qt.min().item() < 0 or qt.max().item() > 1):
            raise RuntimeError(f"{op}() q values must be in the range "
                               "[0, 1]")
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{op}() q must be in the range [0, 1] but "
                               f"got {q}")
        qt = fastt.tensor(builtins.float(q), dtype=input.dtype,
                          device=input.device)
    if interpolation not in _INTERP:
        raise RuntimeError(f"{op}() interpolation must be one of linear, "
                           "lower, higher, midpoint or nearest. Got "
                           f"{interpolation}")
    if input.numel() == 0 and dim is None:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    if dim is None:
        x = input.reshape(-1)
        d = 0
        out_shape = [1] * input.ndim if keepdim else []
    else:
        d = _wrap_dim(dim, input.ndim, op)
        x = input if input.ndim else input.reshape(1)
        if x.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have "
                             "non-zero size.")
        out_shape = list(input.shape)
        if input.ndim:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
    s = fastt.sort(x.movedim(d, -1), -1).values      # [..., n]
    n = s.shape[-1]
    qv = qt.reshape(-1)                              # [Q]
    nan = fastt.isnan(s)
    if ignore_nan:
        cnt = fastt.logical_not(nan).sum(-1, True)   # [..., 1]
        ranks = (cnt - 1).to(s.dtype) * qv          # [..., Q]
        ranks = fastt.where(ranks < 0, fastt.full_like(ranks, n - 1),
                            ranks)
    else:
        ranks = qv * (n - 1) + fastt.zeros_like(s[..., :1])
        ranks = fastt.where(nan.any(-1, True), fastt.full_like(ranks, n - 1),
                            ranks)
    if interpolation == "lower":
        ranks = fastt.floor(ranks)
    elif interpolation == "higher":
        ranks = fastt.ceil(ranks)
    elif interpolation == "nearest":
        ranks = fastt.round(ranks)
    below = ranks.to(fastt.int64)
    r = s.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        w = fastt.full_like(ranks, 0.5) if interpolation == "midpoint" \
            else ranks - below.to(ranks.dtype)
        above = fastt.ceil(ranks).to(fastt.int64)
        r = fastt.lerp(r, s.gather(-1, above), w)
    # r: [..., Q] -> [Q, *out_shape] (no Q dim for a scalar q)
    r = r.movedim(-1, 0).reshape([qv.numel()] + out_shape)
    return r.reshape(out_shape) if qt.ndim == 0 else r


@_export()
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear",
             out=None):
    """The q-th quantiles of input along dim (all elements for None);
    NaN where a slice holds one."""
    return _out(_quantile(input, q, dim, keepdim, interpolation, False,
                          "quantile"), out)


@_export()
def nanquantile(input, q, dim=None, keepdim=False, *,
                interpolation="linear", out=None):
    """quantile ignoring NaN (NaN only for an all-NaN slice)."""
    return _out(_quantile(input, q, dim, keepdim, interpolation, True,
                          "nanquantile"), out)


# ---- counting and uniqueness ----

@_export()
def bincount(input, weights=None, minlength=0):
    """How often each non-negative integer occurs in the 1-d input (summed
    weights instead of counts when weights is given)."""
    if input.ndim != 1 or input.dtype.is_floating_point or \
            input.dtype == fastt.bool or \
            (input.numel() and input.min().item() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative "
                           "integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.ndim != 1 or
                                weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length "
                           "as input")
    n = builtins.max(input.max().item() + 1 if input.numel() else 0,
                     minlength)
    if weights is None:  # a broadcast 1 (no 8-byte-per-element ones)
        dtype, w = fastt.int64, fastt.ones((), dtype=fastt.int64,
                                           device=input.device).expand(
                                               input.shape)
    else:
        dtype = weights.dtype if weights.dtype in (fastt.float32,
                                                   fastt.float64) \
            else fastt.float64
        w = weights.to(dtype)
    out = fastt.zeros(n, dtype=dtype, device=input.device)
    return out.index_add(0, input.to(fastt.int64), w)


@_export()
def histc(input, bins=100, min=0, max=0, *, out=None):  # noqa: A002
    """A histogram of input with bins equal bins over [min, max] (the data's
    range when min == max); elements outside it are ignored."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"histogram_cpu\" not implemented for "
                           f"'{_type_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError("torch.histc: bins must be > 0")
    lo, hi = builtins.float(min), builtins.float(max)
    if lo == hi and input.numel():
        lo, hi = fastt.amin(input).item(), fastt.amax(input).item()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not "
                           "finite")
    x = input.detach().reshape(-1)
    keep = (x >= lo) & (x <= hi)
    v = fastt.masked_select(x, keep)
    # the edges in input's dtype; 16-bit arithmetic in float32, as torch's
    wide = fastt.float32 if x.itemsize == 2 else x.dtype
    lo_t = fastt.tensor(lo, dtype=x.dtype).to(wide)
    hi_t = fastt.tensor(hi, dtype=x.dtype).to(wide)
    pos = ((v.to(wide) - lo_t) / (hi_t - lo_t) * bins).to(fastt.int64)
    pos = fastt.clamp(pos, 0, bins - 1)
    h = fastt.zeros(bins, dtype=x.dtype, device=x.device)
    return _out(h.index_add(0, pos, fastt.ones_like(v)), out)


def _unique_runs(rows, keep_order):
    """rows [n, m] (sorted unless keep_order) -> (starts [n] bool)."""
    n = rows.shape[0]
    start = fastt.ones(n, dtype=fastt.bool, device=rows.device)
    if n > 1:
        ne = rows[1:] != rows[:-1]
        start[1:] = ne.any(1) if ne.ndim > 1 else ne
    return start


def _unique_impl(input, dim, sort, return_inverse, return_counts, op):
    x = input.detach()
    if dim is None:
        rows = x.reshape(-1)
        moved = None
    else:
        d = _wrap_dim(dim, x.ndim, op)
        moved = x.movedim(d, 0)
        if moved.shape[0] == 0 and moved.numel() == 0 and x.ndim > 1 and \
                builtins.any(s == 0 for i, s in enumerate(x.shape)
                             if i != d):
            raise RuntimeError(f"Number of zero sized dimensions is more "
                               "than one, so unique cannot be applied")
        rows = moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))
    n = rows.shape[0]
    perm = fastt.arange(n, device=x.device)
    if sort and n:
        if rows.ndim == 1:
            perm = fastt.sort(rows, stable=True).indices
        else:  # lexicographic: stable sorts from the last column
            for c in range(rows.shape[1] - 1, -1, -1):
                perm = perm[fastt.sort(rows[perm, c], stable=True).indices]
    srt = rows[perm]
    start = _unique_runs(srt, not sort)
    run = fastt.cumsum(start.to(fastt.int64), 0) - 1
    uniq = srt[start]
    if moved is not None:
        uniq = uniq.reshape((-1,) + tuple(moved.shape[1:])).movedim(0, d)
    res = [uniq]
    if return_inverse:
        inv = fastt.empty(n, dtype=fastt.int64, device=x.device)
        inv[perm] = run
        res.append(inv.reshape(input.shape) if dim is None else inv)
    if return_counts:
        nu = builtins.int(start.sum().item())
        res.append(fastt.zeros(nu, dtype=fastt.int64, device=x.device)
                   .index_add(0, run, fastt.ones_like(run)))
    return res[0] if len(res) == 1 else tuple(res)


@_export()
def unique(input, sorted=True, return_inverse=False,  # noqa: A002
           return_counts=False, dim=None):
    """The distinct elements of input (or distinct slices along dim),
    sorted, with the inverse map and the counts on request."""
    return _unique_impl(input, dim, True, return_inverse, return_counts,
                        "unique")


@_export()
def unique_consecutive(input, return_inverse=False, return_counts=False,
                       dim=None):
    """input with each run of equal consecutive elements (or slices along
    dim) kept once."""
    return _unique_impl(input, dim, False, return_inverse, return_counts,
                        "unique_consecutive")


# ---- distances ----

def _check_dist_input(x, name, op):
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op} only supports floating-point dtypes, "
                           f"{name} got: {_type_name(x.dtype)}")


@_export(method=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """torch.cosine_similarity: nn.functional's, at the top level."""
    from .nn import functional as F
    return F.cosine_similarity(x1, x2, dim, eps)


@_export(method=False)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """torch.pairwise_distance: nn.functional's, at the top level."""
    from .nn import functional as F
    return F.pairwise_distance(x1, x2, p, eps, keepdim)


@_export(method=False)
def cdist(x1, x2, p=2.0, compute_mode=None):
    """The p-norm distance between each row of x1 and each row of x2
    (batched over leading dims). p == 2 on more than 25 rows uses the
    matrix-product form, as torch."""
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 "
                           f"got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 "
                           f"got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns."
                           f" X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    _check_dist_input(x1, "X1", "cdist")
    _check_dist_input(x2, "X2", "cdist")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = (None, "use_mm_for_euclid_dist_if_necessary",
             "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for "
                         "compute_mode")
    P, R = x1.shape[-2], x2.shape[-2]
    mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode in (None, "use_mm_for_euclid_dist_if_necessary")
        and (P > 25 or R > 25)))
    if mm:
        batch = fastt.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
        a = x1.expand(tuple(batch) + tuple(x1.shape[-2:]))
        b = x2.expand(tuple(batch) + tuple(x2.shape[-2:]))
        an = (a * a).sum(-1, True)
        bn = (b * b).sum(-1, True)
        a_ = fastt.cat([-2 * a, an, fastt.ones_like(an)], -1)
        b_ = fastt.cat([b, fastt.ones_like(bn), bn], -1)
        d2 = fastt.matmul(a_, b_.transpose(-2, -1))
        return fastt.sqrt(fastt.clamp_min(d2, 1e-30))
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    # (an empty difference: zeros, still attached to the inputs)
    return fastt.norm(diff, p, -1) if diff.numel() else (diff * 0).sum(-1)


@_export(method=False)
def pdist(input, p=2):
    """The p-norm distance between each pair of input's rows (i < j), in
    row-major order of the pairs."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: "
                           f"{input.ndim}D")
    _check_dist_input(input, "X1", "pdist")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    ij = fastt.triu_indices(n, n, 1, device=input.device)
    diff = input[ij[0]] - input[ij[1]]
    return fastt.norm(diff, p, -1) if diff.numel() else (diff * 0).sum(-1)


# ---- einsum ----

_ELL = "..."


def _einsum_parse(equation, nops):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != nops:
        raise RuntimeError(
            "einsum(): more operands were provided than specified in the "
            "equation" if nops > len(terms) else
            "einsum(): fewer operands were provided than specified in the "
            "equation")

    def labels(term, where):
        out, i = [], 0
        while i < len(term):
            if term.startswith(_ELL, i):
                if _ELL in out:
                    raise RuntimeError("einsum(): found '.' for operand "
                                       f"{where} for which an ellipsis was "
                                       "already found")
                out.append(_ELL)
                i += 3
            elif term[i] == ".":
                raise RuntimeError(f"einsum(): found '.' for operand {where}"
                                   " that is not part of any ellipsis")
            elif term[i].isalpha() and term[i].isascii():
                out.append(term[i])
                i += 1
            else:
                raise RuntimeError("einsum(): invalid subscript given at "
                                   f"index {i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
        return out

    ins = [labels(t, k) for k, t in enumerate(terms)]
    outs = labels(rhs, "output") if arrow else None
    return ins, outs


def _label_key(c):
    # torch orders implicit output labels A-Z then a-z
    return (c.islower(), c)


def _contract(a, la, b, lb, keep):
    """a (labels la) times b (labels lb), summing the shared labels not in
    keep; one batched matrix product. Returns (tensor, labels)."""
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    a_only = [c for c in la if c not in lb]
    b_only = [c for c in lb if c not in la]
    size = {}
    for t, ls in ((a, la), (b, lb)):
        for i, c in enumerate(ls):
            if size.get(c, 1) == 1:  # 1 broadcasts (to 0 too)
                size[c] = t.shape[i]

    def arrange(t, ls, order):
        t = t.permute([ls.index(c) for c in order])
        return t.expand([size[c] for c in order])
    A = arrange(a, la, batch + a_only + summed)
    B = arrange(b, lb, batch + summed + b_only)
    nb = math.prod(size[c] for c in batch)
    m = math.prod(size[c] for c in a_only)
    k = math.prod(size[c] for c in summed)
    n = math.prod(size[c] for c in b_only)
    r = A.reshape(nb, m, k).bmm(B.reshape(nb, k, n))
    r = r.reshape([size[c] for c in batch + a_only + b_only])
    return r, batch + a_only + b_only


@_export(method=False)
def einsum(equation, *operands):
    """torch.einsum: sums of products over the labelled dimensions of the
    operands (ellipsis broadcasting, repeated labels as diagonals, the
    implicit output of labels seen once). Pairs are contracted greedily,
    the smallest intermediate first, each as one batched matrix product.
    The sublist form einsum(a, [0, 1], b, [1, 2], [0, 2]) works too."""
    if not isinstance(equation, str):  # sublist format
        args = (equation,) + operands
        out_sub = None
        if len(args) % 2 == 1:
            out_sub, args = args[-1], args[:-1]
        alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

        def letters(sub):
            for s in sub:
                if s is not Ellipsis and not 0 <= s < 52:
                    raise RuntimeError("einsum(): subscript in subscript "
                                       "list is not within the valid range "
                                       f"[0, 52), got {s}")
            return "".join(_ELL if s is Ellipsis else alphabet[s]
                           for s in sub)
        equation = ",".join(letters(s) for s in args[1::2]) + \
            ("->" + letters(out_sub) if out_sub is not None else "")
        operands = tuple(args[0::2])
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    if not builtins.all(isinstance(t, fastt.Tensor) for t in operands):
        return _einsum(equation, operands)
    key = (equation,) + tuple(tuple(t.shape) for t in operands)
    plan = _EINSUM_PLANS.get(key)
    if plan is not None:
        return _einsum_replay(plan, operands)
    tape = []
    r = _einsum(equation, [_Traced(t, k, tape, len(operands))
                           for k, t in enumerate(operands)])
    if not isinstance(r, _Traced):
        return r
    if builtins.all(not isinstance(a, fastt.Tensor)
                    for _, _, args in tape for a in args):  # no constants
        if len(_EINSUM_PLANS) >= 512:
            _EINSUM_PLANS.clear()
        _EINSUM_PLANS[key] = (tape, r.k)
    return r.t


# einsum's every decision (labels, diagonals, sums, the contraction order,
# each product's layout) depends on the equation and the operands' shapes
# only: the first call for a (equation, shapes) runs on _Traced operands,
# which record the tensor methods called on them, and later calls replay
# that tape (20 -> ~6 us for a 4x4 'ij,jk->ik'; torch's C++ einsum 10).
_EINSUM_PLANS = {}


class _Ref:
    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k


class _Traced:
    """A tensor that records each method called on it into tape as (its
    value's number, method, arguments): values 0..nops-1 are the operands,
    then one per recorded call."""
    __slots__ = ("t", "k", "tape", "nops")

    def __init__(self, t, k, tape, nops):
        self.t, self.k, self.tape, self.nops = t, k, tape, nops

    @property
    def shape(self):
        return self.t.shape

    @property
    def ndim(self):
        return self.t.ndim

    def __getattr__(self, name):
        method = getattr(self.t, name)

        def call(*args):
            r = method(*[a.t if isinstance(a, _Traced) else a for a in args])
            self.tape.append((self.k, name, tuple(
                _Ref(a.k) if isinstance(a, _Traced) else a for a in args)))
            return _Traced(r, self.nops + len(self.tape) - 1, self.tape,
                           self.nops)
        return call


def _einsum_replay(plan, operands):
    tape, out = plan
    v = list(operands)
    for k, name, args in tape:
        v.append(getattr(v[k], name)(*[v[a.k] if type(a) is _Ref else a
                                       for a in args]))
    return v[out]


def _einsum(equation, operands):
    ins, outs = _einsum_parse(equation, len(operands))
    ell = 0
    for k, (t, ls) in enumerate(zip(operands, ins)):
        named = len(ls) - (1 if _ELL in ls else 0)
        if (_ELL in ls and t.ndim < named) or \
                (_ELL not in ls and t.ndim != named):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation "
                f"({named}) does not match the number of dimensions "
                f"({t.ndim}) for operand {k}"
                + ("" if _ELL in ls else " and no ellipsis was given"))
        if _ELL in ls:
            ell = builtins.max(ell, t.ndim - named)
    ell_labels = [f"#{i}" for i in range(ell)]
    counts = collections.Counter(c for ls in ins for c in ls if c != _ELL)
    tensors, labs = [], []
    for t, ls in zip(operands, ins):
        if _ELL in ls:
            i = ls.index(_ELL)
            e = t.ndim - (len(ls) - 1)
            ls = ls[:i] + ell_labels[ell - e:] + ls[i + 1:]
        # repeated labels: take the diagonal (it moves to the end)
        while True:
            dup = next((c for c in ls if ls.count(c) > 1), None)
            if dup is None:
                break
            i = ls.index(dup)
            j = ls.index(dup, i + 1)
            t = t.diagonal(0, i, j)
            ls = [c for n, c in enumerate(ls) if n not in (i, j)] + [dup]
        tensors.append(t)
        labs.append(ls)
    if outs is None:
        outs = ell_labels + sorted((c for c in counts
                                    if counts[c] == 1), key=_label_key)
    else:
        if _ELL in outs:
            i = outs.index(_ELL)
            outs = outs[:i] + ell_labels + outs[i + 1:]
        for c in outs:
            if outs.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears"
                                   " more than once in the output")
            if c not in counts and not c.startswith("#"):
                raise RuntimeError(f"einsum(): output subscript {c} does not"
                                   " appear in the equation for any input "
                                   "operand")
    # check that each label's sizes agree (1 broadcasts)
    size = {}
    for k, (t, ls) in enumerate(zip(tensors, labs)):
        for i, c in enumerate(ls):
            s = t.shape[i]
            if c in size and s != size[c] and 1 not in (s, size[c]):
                what = ("ellipsis dimension " + c[1:]) if c[0] == "#" \
                    else "subscript " + c
                raise RuntimeError(f"einsum(): {what} has size {s} for "
                                   f"operand {k} which does not broadcast "
                                   f"with previously seen size {size[c]}")
            if size.get(c, 1) == 1:
                size[c] = s
    keep_out = set(outs)

    def reduce_own(t, ls, others):
        """Sum the labels no other operand or the output needs."""
        drop = [i for i, c in enumerate(ls)
                if c not in keep_out and not builtins.any(c in o
                                                          for o in others)]
        if drop:
            t = t.sum(drop)
            ls = [c for i, c in enumerate(ls) if i not in drop]
        return t, ls

    items = list(zip(tensors, labs))
    while len(items) > 1:
        best = None
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                rest = [ls for k, (_, ls) in enumerate(items)
                        if k not in (i, j)]
                keep = keep_out | {c for ls in rest for c in ls}
                res = [c for c in dict.fromkeys(items[i][1] + items[j][1])
                       if c in keep]
                cost = math.prod(size[c] for c in res)
                if best is None or cost < best[0]:
                    best = (cost, i, j, keep)
        _, i, j, keep = best
        (a, la), (b, lb) = items[i], items[j]
        others = [ls for k, (_, ls) in enumerate(items) if k not in (i, j)]
        a, la = reduce_own(a, la, others + [lb])
        b, lb = reduce_own(b, lb, others + [la])
        r = _contract(a, la, b, lb, keep)
        items = [it for k, it in enumerate(items) if k not in (i, j)] + [r]
    t, ls = items[0]
    t, ls = reduce_own(t, ls, [])
    for c in outs:  # labels broadcast away by a size-1 operand dim
        if c not in ls:
            t = t.unsqueeze(-1)
            ls = ls + [c]
    t = t.permute([ls.index(c) for c in outs]) if ls else t
    return t.expand([size[c] for c in outs]) if outs else t


# ---- binary search ----

@_export(method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False,
                 side=None, sorter=None, out=None):
    """For each value of input, the index where it would be inserted into
    sorted_sequence (along its last dim) to keep it sorted: the first such
    index, or with right=True / side="right" the last. A binary search
    per value (torch's loop) on the CPU; elsewhere _search_rounds."""
    seq = sorted_sequence
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("torch.searchsorted(): side can only be "
                               f"'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't "
                               "be set to opposites, got side of left while"
                               " right was True")
        right = side == "right"
    scalar = not isinstance(input, fastt.Tensor)
    if scalar:
        if seq.ndim != 1:
            raise RuntimeError("torch.searchsorted(): input value can be a "
                               "scalar only when boundaries tensor "
                               "dimension is 1, but we got boundaries "
                               f"tensor dim({seq.ndim})")
        input = fastt.tensor([input], dtype=fastt.result_type(seq, input),
                             device=seq.device)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should "
                           "have positive dimension, but got 0 dimension")
    if seq.ndim > 1 and (input.ndim != seq.ndim or
                         input.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension "
            "or the first N-1 dimensions of boundaries tensor and input "
            "value tensor must match, but we got boundaries tensor "
            f"{list(seq.shape)} and input value tensor "
            f"{list(input.shape)}")
    if sorter is not None:
        if sorter.dtype != fastt.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a "
                               "tensor of long dtype but got "
                               f"{_type_name(sorter.dtype)}")
        if sorter.shape != seq.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter "
                               "must have the same size, but got boundary "
                               f"tensor {list(seq.shape)}and got sorter "
                               f"tensor {list(sorter.shape)}")
        if sorter.numel() and (sorter.min().item() < 0 or
                               sorter.max().item() >= seq.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of "
                               "range")
        seq = seq.gather(-1, sorter)
    if out_int32 and seq.shape[-1] >= 2 ** 31 - 1:
        raise RuntimeError("torch.searchsorted(): the size of boundaries' "
                           "last dimension should be less than 2147483647, "
                           f"but we got {seq.shape[-1]}")
    common = fastt.result_type(seq, input)  # a 0-d input does not lead
    seq, v = seq.detach().to(common), input.detach().to(common)
    if v.device.type == "cpu":  # kernels/cpu/sort.cpp
        r = fastt._C._searchsorted(seq, v, right, out_int32)
    else:
        r = _search_rounds(seq, v, right)
        r = r.to(fastt.int32) if out_int32 else r
    return _out(r.reshape(()) if scalar else r, out)


def _search_rounds(seq, v, right):
    """searchsorted's insertion points (int64) as one vectorised binary
    search, log2(len) rounds of a gather and a compare, for devices
    without the CPU's kernel: torch's loop, value by value in lockstep."""
    m = seq.shape[-1]
    lo = fastt.zeros(v.shape, dtype=fastt.int64, device=v.device)
    hi = fastt.full(v.shape, m, dtype=fastt.int64, device=v.device)
    if m and v.numel():
        flat = seq.ndim == 1
        for _ in range(m.bit_length()):
            mid = (lo + hi) // 2
            at = fastt.clamp(mid, max=m - 1)
            mv = seq[at] if flat else seq.gather(-1, at)
            # torch's bounds: go right unless mid_val >= v (> v for right)
            go = fastt.logical_not(mv > v if right else mv >= v)
            live = lo < hi
            lo = fastt.where(live & go, mid + 1, lo)
            hi = fastt.where(live & fastt.logical_not(go), mid, hi)
    return lo


@_export(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False,
              out=None):
    """The index of the bucket of each value of input, boundaries (1-d,
    sorted) being the buckets' edges: searchsorted(boundaries, input)."""
    if boundaries.ndim != 1:
        raise RuntimeError("boundaries tensor must be 1 dimension, but got "
                           f"dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right,
                        out=out)


# ---- scans with a combine step: log2(n) rounds of whole-tensor ops ----

def _doubling_scan(parts, dim, combine):
    """Inclusive scan along dim of the tensors in parts (same shape) with
    an associative combine(earlier, later) -> parts (Hillis-Steele: round
    k combines each element with the one 2^k before it)."""
    n = parts[0].shape[dim]
    k = 1
    while k < n:
        early = [p.narrow(dim, 0, n - k) for p in parts]
        late = [p.narrow(dim, k, n - k) for p in parts]
        new = combine(early, late)
        parts = [fastt.cat([p.narrow(dim, 0, k), q], dim)
                 for p, q in zip(parts, new)]
        k *= 2
    return parts


def _cum_extreme(input, dim, is_max, op):
    d = _wrap_dim(dim, input.ndim, op)
    x = input if input.ndim else input.reshape(1)
    # the indices: one sequential pass (a kernel); values and gradients
    # are a gather at them, or without a gradient written in the same pass
    if x.requires_grad and _C.is_grad_enabled():
        idx = _C._cum_extreme_index(x.detach(), d, is_max)
        vals = x.gather(d, idx)
    else:
        vals, idx = _C._cum_extreme(x, d, is_max)
    if input.ndim == 0:
        vals, idx = vals.reshape(()), idx.reshape(())
    return _VI[op](vals, idx)


_VI["cummax"] = collections.namedtuple("cummax", ["values", "indices"])
_VI["cummin"] = collections.namedtuple("cummin", ["values", "indices"])


@_export()
def cummax(input, dim, *, out=None):
    """The running maximum along dim and where it was (the latest index
    among equal values; NaN propagates)."""
    return _out(_cum_extreme(input, dim, True, "cummax"), out, input)


@_export()
def cummin(input, dim, *, out=None):
    """The running minimum along dim and where it was."""
    return _out(_cum_extreme(input, dim, False, "cummin"), out, input)


@_export()
def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along dim, computed stably: a scan of
    logaddexp."""
    d = _wrap_dim(dim, input.ndim, "logcumsumexp")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("\"logcumsumexp_out_cpu\" not implemented for "
                           f"'{_type_name(input.dtype)}'")
    x = input if input.ndim else input.reshape(1)
    (r,) = _doubling_scan([x], d, lambda e, l: [fastt.logaddexp(e[0],
                                                                l[0])])
    if r.dtype.is_complex and r.numel():
        r = r + _torch_scan_branch(x, r.detach(), d)
        # a sum of zeros so far: torch's -inf + 0j (its start value); a
        # NaN part in x so far: NaN + NaN i (the scan keeps x's first
        # value as it is)
        r = fastt.where(r.real == -math.inf,
                        fastt.full_like(r, builtins.complex(-math.inf, 0)), r)
        seen = fastt.isnan(x).to(fastt.int64).cummax(d).values.bool()
        r = fastt.where(seen, fastt.full_like(
            r, builtins.complex(math.nan, math.nan)), r)
    return _out(r.reshape(input.shape), out, input)


def _torch_scan_branch(x, c, d):
    """2 pi i k per element that moves the scan's logarithms c (a valid
    branch each) to torch's sequential one: c_k = hi + log1p(exp(lo -
    hi)) of (x_k, c_(k-1)), hi the larger real part, so Im c_k is Im x_j
    (j: the last k where x_k led) plus the Args of the 1 + exp(lo - hi)
    since, which depend on c only through exp (its branch cancels)."""
    n = x.shape[d]
    prev = fastt.cat([fastt.full_like(c.narrow(d, 0, 1), -math.inf),
                      c.narrow(d, 0, n - 1)], d)
    lead = x.real >= prev.real  # torch: x leads unless x.re < prev.re
    hi = fastt.where(lead, x, prev)
    lo = fastt.where(lead, prev, x)
    step = fastt.log1p(fastt.exp(lo - hi)).imag.nan_to_num(0.0)
    total = step.cumsum(d)
    pos = fastt.arange(n, device=x.device).reshape(
        [n if i == d else 1 for i in range(x.ndim)]).expand(x.shape)
    last = fastt.where(lead, pos, fastt.zeros_like(pos)).cummax(d).values
    start = fastt.where(lead, x.imag - (total - step), fastt.zeros_like(
        total)).gather(d, last)
    want = start + total
    k = fastt.round((want - c.imag) / (2 * math.pi))
    k = fastt.where(fastt.isfinite(c) & fastt.isfinite(want), k,
                    fastt.zeros_like(k))
    return fastt.complex(fastt.zeros_like(k), k * (2 * math.pi)).to(c.dtype)


# ---- scatter with a reduction ----

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _segment_prod(pos, val):
    """Products of val over runs of equal pos (pos sorted): the last
    element of each run holds its run's product (a segmented scan)."""
    start = fastt.ones(pos.shape, dtype=fastt.bool, device=pos.device)
    if pos.numel() > 1:
        start[1:] = pos[1:] != pos[:-1]

    def combine(early, late):
        (ef, ev), (lf, lv) = early, late
        return [ef | lf, fastt.where(lf, lv, ev * lv)]
    _, prod = _doubling_scan([start, val], 0, combine)
    return prod


def _scatter_reduce(input, dim, index, src, reduce, include_self, op):
    if reduce not in _REDUCES:
        raise RuntimeError(f"{op}(): reduce argument must be either sum, "
                           f"prod, mean, amax or amin, got {reduce}")
    if index.dtype not in (fastt.int64, fastt.int32):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    if src.dtype != input.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to "
                           f"src.dtype")
    nd = builtins.max(input.ndim, 1)
    if builtins.max(index.ndim, 1) != nd or builtins.max(src.ndim, 1) != nd:
        raise RuntimeError(f"{op}(): Index tensor must have the same number "
                           "of dimensions as self tensor")
    if input.dtype == fastt.bool:  # in int64, then nonzero (or / and)
        r = _scatter_reduce(input.to(fastt.int64), dim, index,
                            src.to(fastt.int64), reduce, include_self, op)
        return r != 0
    d = _wrap_dim(dim, input.ndim, op)
    x = input.reshape(-1) if input.ndim == 0 else input
    idx = index.reshape(-1) if index.ndim == 0 else index
    s = src.reshape(-1) if src.ndim == 0 else src
    for k in range(nd):
        if idx.shape[k] > s.shape[k] or (k != d and
                                         idx.shape[k] > x.shape[k]):
            raise RuntimeError(f"{op}(): Expected index {list(index.shape)}"
                               f" to be no larger than self "
                               f"{list(input.shape)} apart from dimension "
                               f"{d} and to be no larger size than src "
                               f"{list(src.shape)}")
    n_dim = x.shape[d]
    if idx.numel() and (idx.min().item() < -n_dim or
                        idx.max().item() >= n_dim):
        bad = idx.max().item() if idx.max().item() >= n_dim else \
            idx.min().item()
        raise RuntimeError(f"{op}(): index {bad} is out of bounds for "
                           f"dimension {d} with size {n_dim}")
    if idx.numel() == 0:
        return input.clone()
    # the flat position in x (contiguous) each index element writes
    strides = [math.prod(x.shape[k + 1:]) for k in range(nd)]
    lin = fastt.remainder(idx, n_dim) * strides[d]
    for k in range(nd):
        if k != d:
            shape = [1] * nd
            shape[k] = idx.shape[k]
            lin = lin + fastt.arange(idx.shape[k], device=x.device).reshape(
                shape) * strides[k]
    vals = s[tuple(slice(0, n) for n in idx.shape)].reshape(-1)
    lin = lin.reshape(-1)
    flat = x.contiguous().reshape(-1)
    m = flat.numel()
    hit = fastt.zeros(m, dtype=fastt.bool, device=x.device)
    hit[lin] = True
    if reduce in ("sum", "mean"):
        base = flat if include_self else fastt.where(
            hit, fastt.zeros((), dtype=flat.dtype, device=flat.device), flat)
        out = base.index_add(0, lin, vals)
        if reduce == "mean":
            cnt = fastt.full((m,), 1 if include_self else 0,
                             dtype=fastt.int64, device=x.device)
            cnt = cnt.index_add(0, lin, fastt.ones_like(lin))
            cnt = fastt.clamp(cnt, min=1)
            out = fastt.div(out, cnt.to(out.dtype),
                            rounding_mode=None if out.dtype.is_floating_point
                            else "floor")
        return out.reshape(input.shape)
    # prod, amax, amin: over the candidates of each position, self first
    if include_self:
        cpos = fastt.cat([fastt.arange(m, device=x.device), lin])
        cval = fastt.cat([flat, vals])
    else:
        cpos, cval = lin, vals
    order = fastt.sort(cpos, stable=True).indices
    if reduce == "prod":
        spos, sval = cpos[order], cval[order]
        red = _segment_prod(spos, sval)
        last = fastt.ones(spos.shape, dtype=fastt.bool, device=x.device)
        if spos.numel() > 1:
            last[:-1] = spos[1:] != spos[:-1]
        res = flat.clone() if not include_self else flat * 0
        res = res.index_put((spos[last],), red[last])
        if include_self:
            return res.reshape(input.shape)
        return fastt.where(hit, res, flat).reshape(input.shape)
    # amax / amin: the extreme value (NaN wins), the gradient shared
    # evenly by the candidates equal to it, as torch's
    cv = cval.detach()
    by_val = fastt.sort(cv, stable=True, descending=reduce == "amax").indices
    o2 = by_val[fastt.sort(cpos[by_val], stable=True).indices]
    spos, sval = cpos[o2], cv[o2]
    first = fastt.ones(spos.shape, dtype=fastt.bool, device=x.device)
    if spos.numel() > 1:
        first[1:] = spos[1:] != spos[:-1]
    ext = flat.detach().clone().index_put((spos[first],), sval[first])
    if cv.dtype.is_floating_point:
        nan = fastt.zeros(m, dtype=fastt.int64, device=x.device).index_add(
            0, cpos, fastt.isnan(cv).to(fastt.int64)) > 0
        ext = fastt.where(nan, fastt.full((), math.nan, dtype=ext.dtype,
                                          device=ext.device), ext)
    if not (input.requires_grad or src.requires_grad) or \
            not fastt.is_grad_enabled():
        return fastt.where(hit, ext, flat).reshape(input.shape) \
            if not include_self else ext.reshape(input.shape)
    target = ext[cpos]
    eq = (cv == target) | (fastt.isnan(cv) & fastt.isnan(target))
    cnt = fastt.zeros(m, dtype=cval.dtype, device=x.device).index_add(
        0, cpos, eq.to(cval.dtype))
    if not include_self:  # torch counts an equal self value all the same
        cnt = cnt + (flat.detach() == ext).to(cval.dtype)
    w = eq.to(cval.dtype) / cnt[cpos]
    share = fastt.zeros(m, dtype=cval.dtype, device=x.device).index_add(
        0, cpos, w * (cval - cv))       # value 0, gradient w
    res = ext + share
    if not include_self:
        res = fastt.where(hit, res, flat)
    return res.reshape(input.shape)


def _scatter_with_reduce(input, dim, index, src, reduce, inplace):
    """scatter(dim, index, src or value, reduce='add' | 'multiply'), called
    by the scatter binding: src's elements (or the value) summed or
    multiplied into input where index points."""
    op = "scatter_" if inplace else "scatter"
    names = {"add": "sum", "multiply": "prod"}
    if reduce not in names:
        raise RuntimeError(f"{op}(): reduce argument must be either add or "
                           f"multiply, got {reduce}")
    if not isinstance(src, fastt.Tensor):
        src = fastt.full(tuple(index.shape), src, dtype=input.dtype,
                         device=input.device)
    r = _scatter_reduce(input, dim, index, src, names[reduce], True, op)
    return input.copy_(r) if inplace else r


@_export()
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True,
                   out=None):
    """input with src's elements reduced (sum, prod, mean, amax, amin)
    into the positions index gives along dim (torch.scatter_reduce)."""
    return _out(_scatter_reduce(input, dim, index, src, reduce,
                                include_self, "scatter_reduce"), out)


_method("scatter_reduce_", lambda self, dim, index, src, reduce, *,
        include_self=True: self.copy_(_scatter_reduce(
            self, dim, index, src, reduce, include_self, "scatter_reduce_")))


def _index_reduce(input, dim, index, source, reduce, include_self, op):
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"{op}(): Expected reduce to be one of prod, "
                           f"mean, amax or amin but got {reduce}.")
    if index.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    d = _wrap_dim(dim, input.ndim, op)
    src = source if source.ndim else source.reshape(1)
    if input.ndim and src.ndim != input.ndim:
        raise RuntimeError(f"{op}(): Source/destination tensor must have "
                           "same number of dimensions")
    if src.shape[d] != index.numel():
        raise RuntimeError(f"{op}(): Number of indices "
                           f"({index.numel()}) should be equal to "
                           f"source.size(dim) ({src.shape[d]})")
    shape = [1] * src.ndim
    shape[d] = -1
    idx = index.reshape(shape).expand(src.shape)
    if index.dtype != fastt.int64:
        idx = idx.to(fastt.int64)
    return _scatter_reduce(input, d, idx, src.reshape(src.shape)
                           if input.ndim else src, reduce, include_self, op)


@_export()
def index_reduce(input, dim, index, source, reduce, *, include_self=True,
                 out=None):
    """input with source's slices reduced (prod, mean, amax, amin) into the
    slices index names along dim."""
    return _out(_index_reduce(input, dim, index, source, reduce,
                              include_self, "index_reduce"), out)


_method("index_reduce_", lambda self, dim, index, source, reduce, *,
        include_self=True: self.copy_(_index_reduce(
            self, dim, index, source, reduce, include_self, "index_reduce_")))


# ---- the norms' aten forms: the output and the saved statistics ----

def _stats(x, dims, eps, keepdim, grad=False):
    """(mean, 1/sqrt(biased var + eps)) over dims; without a gradient
    unless grad (torch differentiates native_group_norm's, not the
    others')."""
    with fastt.set_grad_enabled(grad and fastt.is_grad_enabled()):
        w = x.float() if x.dtype in (fastt.float16, fastt.bfloat16) else x
        var, mean = fastt.var_mean(w, dims, correction=0, keepdim=keepdim)
        return mean, fastt.rsqrt(var + eps)


@_export(method=False)
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(layer_norm(input), mean, rstd), the statistics shaped to broadcast
    against input."""
    out = fastt.nn.functional.layer_norm(input, normalized_shape, weight,
                                         bias, eps)
    k = len(normalized_shape)
    dims = tuple(range(input.ndim - k, input.ndim))
    mean, rstd = _stats(input, dims, eps, True) if dims and input.numel() \
        else (fastt.zeros(input.shape[:input.ndim - k] + (1,) * k,
                          dtype=input.dtype),) * 2
    return out, mean.to(input.dtype), rstd.to(input.dtype)


def _bn(input, weight, bias, running_mean, running_var, training, momentum,
        eps):
    out = fastt.nn.functional.batch_norm(input, running_mean, running_var,
                                         weight, bias, training, momentum,
                                         eps)
    if not training:
        e = fastt.empty(0, dtype=input.dtype, device=input.device)
        return out, e, e.clone()
    dims = (0,) + tuple(range(2, input.ndim))
    mean, invstd = _stats(input, dims, eps, False)
    return out, mean.to(input.dtype), invstd.to(input.dtype)


@_export(method=False)
def native_batch_norm(input, weight, bias, running_mean, running_var,
                      training, momentum, eps):
    """(batch_norm(input), save_mean, save_invstd): the batch statistics
    in training, empty tensors in evaluation."""
    return _bn(input, weight, bias, running_mean, running_var, training,
               momentum, eps)


@_export(method=False)
def _native_batch_norm_legit(input, weight, bias, running_mean, running_var,
                             training=None, momentum=None, eps=None):
    """native_batch_norm; also the form without running statistics
    (input, weight, bias, training, momentum, eps)."""
    if isinstance(running_mean, builtins.bool):  # the no-stats overload
        training, momentum, eps = running_mean, running_var, training
        running_mean = running_var = None
    return _bn(input, weight, bias, running_mean, running_var, training,
               momentum, eps)


@_export(method=False)
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(group_norm(input), mean, rstd), the statistics shaped (N, group)."""
    out = fastt.nn.functional.group_norm(input, group, weight, bias, eps)
    x = input.reshape(N, group, (C // group) * HxW)
    mean, rstd = _stats(x, (2,), eps, False, grad=True)
    return out, mean.to(input.dtype), rstd.to(input.dtype)


# ---- grid samplers: torch's integer-coded forms of F.grid_sample ----

def _grid_sampler(op, ndim, input, grid, interpolation_mode, padding_mode,
                  align_corners):
    if ndim is not None and input.dim() != ndim:
        raise RuntimeError(f"{op}(): expected {ndim}D input, got "
                           f"{input.dim()}D")
    from .nn import functional as F
    return F._grid_sample(input, grid, interpolation_mode, padding_mode,
                          align_corners, op)


@_export(method=False)
def grid_sampler(input, grid, interpolation_mode, padding_mode,
                 align_corners):
    """F.grid_sample with the mode (0 bilinear, 1 nearest, 2 bicubic) and
    padding (0 zeros, 1 border, 2 reflection) as integers."""
    return _grid_sampler("grid_sampler", None, input, grid,
                         interpolation_mode, padding_mode, align_corners)


@_export(method=False)
def grid_sampler_2d(input, grid, interpolation_mode, padding_mode,
                    align_corners):
    """grid_sampler over a 4-D input."""
    return _grid_sampler("grid_sampler_2d", 4, input, grid,
                         interpolation_mode, padding_mode, align_corners)


@_export(method=False)
def grid_sampler_3d(input, grid, interpolation_mode, padding_mode,
                    align_corners):
    """grid_sampler over a 5-D input (bilinear or nearest)."""
    return _grid_sampler("grid_sampler_3d", 5, input, grid,
                         interpolation_mode, padding_mode, align_corners)


# ---- aten internals that op_db tests by name ----

@_export(method=False)
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """softmax's backward: output * (grad - sum(grad * output, dim))."""
    g, o = grad_output, output
    if o.dtype in (fastt.float16, fastt.bfloat16):  # float32 math
        g, o = g.float(), o.float()
    r = o * (g - (g * o).sum(dim, True))
    return r.to(input_dtype)


@_export(method=False)
def _chunk_cat(tensors, dim, num_chunks, *, out=None):
    """Each tensor padded with zeros along dim to a multiple of num_chunks,
    split into num_chunks chunks there, each chunk flattened; the i-th
    chunks of all tensors concatenated: lead + (num_chunks, total)."""
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor "
                           "list")
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    nds = {t.ndim for t in tensors}
    if dim < 0 and len(nds) > 1:
        raise RuntimeError("_chunk_cat expects non-negative dim when input "
                           "tensors have different ndims")
    d = dim % tensors[0].ndim if dim < 0 else dim
    for t in tensors:
        if d >= t.ndim:
            raise RuntimeError("_chunk_cat expects dim < ndim for all input "
                               "tensors")
        if t.numel() == 0:
            raise RuntimeError("_chunk_cat expects non-empty tensor")
        if tuple(t.shape[:d]) != tuple(tensors[0].shape[:d]):
            raise RuntimeError("_chunk_cat expects same sizes of 0,...,"
                               "dim-1 dimensions for all tensors")
    parts = []
    for t in tensors:
        n = t.shape[d]
        pad = -n % num_chunks
        if pad:
            shape = list(t.shape)
            shape[d] = pad
            t = fastt.cat([t, fastt.zeros(shape, dtype=t.dtype,
                                          device=t.device)], d)
        parts.append(t.reshape(tuple(t.shape[:d]) + (num_chunks, -1)
                               if t.numel() else
                               tuple(t.shape[:d]) + (num_chunks, 0)))
    return _out(fastt.cat(parts, -1), out)


_SEG_IDENTITY = {"sum": 0, "prod": 1, "mean": 0}


@_export(method=False)
def _segment_reduce(data, reduce, *, lengths=None, indices=None,
                    offsets=None, axis=0, unsafe=False, initial=None):
    """Reduce (sum, mean, max, min, prod) consecutive segments of data
    along axis, their lengths given (or offsets); an empty segment gives
    initial, or the reduction's identity (NaN for mean)."""
    if reduce not in ("sum", "mean", "max", "min", "prod"):
        raise RuntimeError(f"reduce argument must be either sum, max, min, "
                           f"mean or prod, got {reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is "
                           "not supported yet.")
    if lengths is None:
        if offsets is None:
            raise RuntimeError("segment_reduce(): Either lengths or offsets "
                               "must be defined")
        lengths = offsets.narrow(-1, 1, offsets.shape[-1] - 1) - \
            offsets.narrow(-1, 0, offsets.shape[-1] - 1)
    ax = _wrap_dim(axis, data.ndim, "segment_reduce")
    lead, n = tuple(data.shape[:ax]), data.shape[ax]
    trail = tuple(data.shape[ax + 1:])
    lengths = lengths.to(fastt.int64)
    if not unsafe and lengths.numel() and lengths.min().item() < 0:
        raise RuntimeError("lengths contains negative value!")
    s = lengths.shape[-1]
    ends = fastt.cumsum(lengths, -1)
    pos = fastt.arange(n, device=data.device)
    if lengths.ndim > 1:
        pos = pos.expand(tuple(lengths.shape[:-1]) + (n,)).contiguous()
    seg = searchsorted(ends, pos, right=True)             # lead + (n,)
    # positions past the last segment go to a spare one, dropped at the end
    seg = seg.reshape(seg.shape + (1,) * len(trail)).expand(data.shape)
    shape = lead + (s + 1,) + trail
    dt = data.dtype
    if reduce in ("max", "min"):
        ident = (-math.inf if reduce == "max" else math.inf) \
            if dt.is_floating_point else (
                fastt.iinfo(dt).min if reduce == "max" else
                fastt.iinfo(dt).max)
        base = fastt.full(shape, ident if initial is None else initial,
                          dtype=dt, device=data.device)
        return _scatter_reduce(base, ax, seg.contiguous(), data,
                               "amax" if reduce == "max" else "amin",
                               initial is not None,
                               "segment_reduce").narrow(ax, 0, s)
    start = _SEG_IDENTITY[reduce] if initial is None else initial
    base = fastt.full(shape, start, dtype=dt, device=data.device)
    r = _scatter_reduce(base, ax, seg.contiguous(), data,
                        "prod" if reduce == "prod" else "sum", True,
                        "segment_reduce").narrow(ax, 0, s)
    if reduce == "mean":
        cnt = lengths.reshape(lengths.shape + (1,) * len(trail)).to(dt)
        empty = fastt.full((), math.nan if initial is None else initial,
                           dtype=dt, device=data.device)
        r = fastt.where(cnt > 0, r / fastt.clamp(cnt, min=1), empty)
    return r


def _clamped(x, indices):
    out = []
    for d, i in enumerate(indices):
        if i is None:
            out.append(None)
            continue
        n = x.shape[d]
        out.append(fastt.clamp(i, -n, n - 1))
    return out


@_export(method=False)
def _unsafe_masked_index(x, mask, indices, fill):
    """where(mask, x[indices], fill), indices clamped into range first (the
    masked-off ones may be out of range)."""
    idx = _clamped(x, indices)
    key = tuple(slice(None) if i is None else i for i in idx)
    return fastt.where(mask, x[key], fastt.full((), fill, dtype=x.dtype,
                                                 device=x.device))


@_export(method=False)
def _unsafe_masked_index_put_accumulate(x, mask, indices, values):
    """x.index_put(indices, values where mask (0 elsewhere), accumulate),
    indices clamped into range first."""
    idx = _clamped(x, indices)
    v = fastt.where(mask, values, fastt.zeros((), dtype=values.dtype,
                                              device=values.device))
    return x.index_put(tuple(idx), v, True)


@_export()
def nonzero_static(input, *, size, fill_value=-1):
    """nonzero(input) as exactly size rows: truncated, or padded with
    fill_value."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative "
                           f"integer, but got {size}")
    nz = fastt.nonzero(input)
    k = nz.shape[0]
    if k >= size:
        return nz[:size].contiguous()
    pad = fastt.full((size - k, nz.shape[1]), fill_value, dtype=nz.dtype,
                     device=nz.device)
    return fastt.cat([nz, pad], 0)


# ---- in-place views and storage re-pointing ----

def _inplace_view(name, view):
    def fn(self, *args, **kwargs):
        return _C._become_view(self, view(self, *args, **kwargs), name)
    fn.__name__ = name
    fn.__doc__ = (f"In place: self becomes self.{name[:-1]}(...) (same "
                  "storage; under autograd, that view's history).")
    _method(name, fn)


_inplace_view("squeeze_", lambda t, *dim: t.squeeze(*dim))
_inplace_view("unsqueeze_", fastt.Tensor.unsqueeze)
_inplace_view("t_", fastt.Tensor.t)
_inplace_view("transpose_", fastt.Tensor.transpose)
_inplace_view("swapdims_", fastt.Tensor.transpose)
_inplace_view("swapaxes_", fastt.Tensor.transpose)
_inplace_view("as_strided_", fastt.Tensor.as_strided)


def _set_(self, source=None, storage_offset=0, size=None, stride=None):
    """self shares source's storage, with source's geometry (or the given
    offset, size and stride); no source: an empty tensor."""
    if source is None:
        return _C._set_(self, fastt.empty(0, dtype=self.dtype,
                                          device=self.device))
    if size is not None:
        source = source.as_strided(size, stride if stride is not None else
                                   fastt.empty(size).stride(),
                                   storage_offset)
    return _C._set_(self, source)


_method("set_", _set_)


def _resize_(self, *size, memory_format=None):
    """self reshaped to size (contiguous) in place: the leading elements
    keep their values; new storage (copying them) when it must grow."""
    if len(size) == 1 and not isinstance(size[0], builtins.int):
        size = tuple(size[0])
    size = tuple(builtins.int(s) for s in size)
    if builtins.any(s < 0 for s in size):
        raise RuntimeError("Trying to create tensor with negative dimension "
                           f"{builtins.min(size)}: {list(size)}")
    if self.requires_grad and fastt.is_grad_enabled():
        raise RuntimeError("cannot resize variables that require grad")
    n = math.prod(size)
    if self.is_contiguous() and n <= self.numel():  # shrinks in place
        st = fastt.empty(size).stride() if size else ()
        return _C._set_(self, self.as_strided(size, st,
                                              self.storage_offset()))
    new = fastt.empty(size, dtype=self.dtype, device=self.device)
    k = builtins.min(n, self.numel())
    if k:
        with fastt.no_grad():
            new.reshape(-1)[:k] = self.reshape(-1)[:k]
    return _C._set_(self, new)


_method("resize_", _resize_)


def _addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """self = beta * self + alpha * sum_b batch1[b] @ batch2[b]; unlike the
    other in-place add-products, torch's resizes self to the result's
    shape (it is addbmm's out= form)."""
    r = fastt.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    if tuple(r.shape) != tuple(self.shape):
        _resize_(self, r.shape)
    return self.copy_(r)


_method("addbmm_", _addbmm_)


@_export(method=False)
def resize_as_(input, the_template, *, memory_format=None):
    """input.resize_(the_template.shape)."""
    return _resize_(input, tuple(the_template.shape))


_method("resize_as_", resize_as_)


# ---- numerical gradient ----

@_export(method=False)
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of input estimated along each dim in dim (all for
    None) by central differences, one-sided at the edges (first or second
    order); spacing: one number, a number per dim, or each dim's sample
    coordinates. A tuple with one tensor per dim (numpy.gradient's
    formulas)."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and "
                           "edge_order=2.")
    if dim is None:
        dims = list(range(input.ndim))
    elif isinstance(dim, builtins.int):
        dims = [dim]
    else:
        dims = list(dim)
    dims = [_wrap_dim(d, input.ndim, "gradient") for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list "
                               "of dims")
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar"
                " or it's spacing and dim arguments to have the same length,"
                f" but got a spacing argument of length {len(spacing)} and a"
                f" dim argument of length {len(dims)}.")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    x = input if input.dtype.is_floating_point or input.dtype.is_complex \
        else input.to(fastt.get_default_dtype())
    out = []
    for d, h in zip(dims, steps):
        n = x.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size "
                               "to be at least edge_order+1")

        def sl(a, b):
            return x.narrow(d, a, b - a)
        if isinstance(h, fastt.Tensor) and h.ndim == 1:
            if h.shape[0] != n:
                raise RuntimeError("torch.gradient expected each tensor to "
                                   "be on the same device and to have as "
                                   "many coordinates as the dimension")
            shape = [1] * x.ndim
            shape[d] = -1
            dx = (h.narrow(0, 1, n - 1) - h.narrow(0, 0, n - 1)).to(x.dtype)
            dx1 = dx.narrow(0, 0, n - 2).reshape(shape)
            dx2 = dx.narrow(0, 1, n - 2).reshape(shape)
            a = -dx2 / (dx1 * (dx1 + dx2))
            b = (dx2 - dx1) / (dx1 * dx2)
            c = dx1 / (dx2 * (dx1 + dx2))
            center = a * sl(0, n - 2) + b * sl(1, n - 1) + c * sl(2, n)
            if edge_order == 1:
                first = (sl(1, 2) - sl(0, 1)) / dx[0]
                last = (sl(n - 1, n) - sl(n - 2, n - 1)) / dx[-1]
            else:
                p, q = dx[0], dx[1]
                first = (-(2 * p + q) / (p * (p + q)) * sl(0, 1) +
                         (p + q) / (p * q) * sl(1, 2) -
                         p / (q * (p + q)) * sl(2, 3))
                p, q = dx[-2], dx[-1]
                last = (q / (p * (p + q)) * sl(n - 3, n - 2) -
                        (q + p) / (p * q) * sl(n - 2, n - 1) +
                        (2 * q + p) / (q * (p + q)) * sl(n - 1, n))
        else:
            if isinstance(h, fastt.Tensor):
                h = h.item()
            center = (sl(2, n) - sl(0, n - 2)) / (2 * h) if n > 2 else \
                sl(1, 1)
            if edge_order == 1:
                first = (sl(1, 2) - sl(0, 1)) / h
                last = (sl(n - 1, n) - sl(n - 2, n - 1)) / h
            else:
                first = (-1.5 * sl(0, 1) + 2 * sl(1, 2) - 0.5 * sl(2, 3)) / h
                last = (0.5 * sl(n - 3, n - 2) - 2 * sl(n - 2, n - 1) +
                        1.5 * sl(n - 1, n)) / h
        out.append(fastt.cat([first, center, last], d))
    return tuple(out)


# ---- histograms with bin edges ----

_histogram_t = collections.namedtuple("histogram", ["hist", "bin_edges"])
_histogramdd_t = collections.namedtuple("histogramdd", ["hist", "bin_edges"])


def _edges(x, bins, lo_hi, op):
    """The bin edges for the values x (1-d): a given edge tensor, or bins
    equal bins over lo_hi (the data's range when None; a point range
    widened by 0.5 each side; (0, 1) for no data)."""
    if isinstance(bins, fastt.Tensor):
        if bins.ndim != 1 or bins.numel() < 2:
            raise RuntimeError(f"{op}(): bins tensor should have one "
                               "dimension and at least 2 elements")
        return bins.to(x.dtype)
    if bins <= 0:
        raise RuntimeError(f"{op}(): bins must be > 0, but got {bins}")
    if lo_hi is not None:
        lo, hi = builtins.float(lo_hi[0]), builtins.float(lo_hi[1])
        if lo > hi:
            raise RuntimeError(f"{op}(): min should not exceed max, but got "
                               f"min {lo} max {hi}")
    elif x.numel():
        lo, hi = fastt.amin(x).item(), fastt.amax(x).item()
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"{op}(): range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return fastt.linspace(lo, hi, bins + 1, dtype=x.dtype, device=x.device)


def _bin_of(x, edges):
    """The bin of each value (-1 outside [first, last] or NaN); the last
    edge belongs to the last bin."""
    nb = edges.numel() - 1
    pos = searchsorted(edges, x, right=True) - 1
    pos = fastt.where(x == edges[-1], fastt.full_like(pos, nb - 1), pos)
    inside = (x >= edges[0]) & (x <= edges[-1])
    return fastt.where(inside, pos, fastt.full_like(pos, -1))


def _check_hist_input(input, weight, op):
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}(): input tensor and bins tensors should "
                           "have the same dtype, but got input "
                           f"{_type_name(input.dtype)}")
    if weight is not None and tuple(weight.shape) != tuple(
            input.shape if op == "histogram" else input.shape[:-1]):
        raise RuntimeError(f"{op}(): if weight tensor is provided it should "
                           "have the same shape as the input tensor excluding"
                           " its innermost dimension")


@_export()
def histogram(input, bins=100, *, range=None, weight=None,  # noqa: A002
              density=False, out=None):
    """(hist, bin_edges) of input's values: bins equal bins over range, or
    the given edges; weights summed instead of counts; density divides by
    the total and the bin widths."""
    _check_hist_input(input, weight, "histogram")
    x = input.detach().reshape(-1)
    edges = _edges(x, bins, range, "histogram")
    nb = edges.numel() - 1
    pos = _bin_of(x, edges)
    keep = pos >= 0
    w = weight.detach().reshape(-1).to(x.dtype) if weight is not None \
        else fastt.ones_like(x)
    hist = fastt.zeros(nb, dtype=x.dtype, device=x.device).index_add(
        0, fastt.masked_select(pos, keep), fastt.masked_select(w, keep))
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (hist.sum() * widths)
    return _histogram_t(*_out((hist, edges), out))


@_export(method=False)
def histogramdd(input, bins=10, *, range=None, weight=None,  # noqa: A002
                density=False):
    """The D-dimensional histogram of the points input[..., :] (D = the
    last dim): (hist, bin_edges per dim)."""
    _check_hist_input(input, weight, "histogramdd")
    d = input.shape[-1]
    pts = input.detach().reshape(-1, d)
    if isinstance(bins, (builtins.int, fastt.Tensor)):
        bins = [bins] * d
    if len(bins) != d:
        raise RuntimeError("histogramdd(): expected bins to have one entry "
                           f"per dimension of the points ({d}), got "
                           f"{len(bins)}")
    if range is not None and len(range) != 2 * d:
        raise RuntimeError("histogramdd(): expected range to have 2 entries"
                           f" per dimension of the points ({2 * d}), got "
                           f"{len(range)}")
    edges, flat = [], None
    keep = fastt.ones(pts.shape[0], dtype=fastt.bool, device=pts.device)
    for k in builtins.range(d):
        col = pts[:, k].contiguous()
        e = _edges(col, bins[k], None if range is None else
                   range[2 * k:2 * k + 2], "histogramdd")
        pos = _bin_of(col, e)
        keep = keep & (pos >= 0)
        flat = pos if flat is None else flat * (e.numel() - 1) + pos
        edges.append(e)
    shape = [e.numel() - 1 for e in edges]
    w = weight.detach().reshape(-1).to(pts.dtype) if weight is not None \
        else fastt.ones(pts.shape[0], dtype=pts.dtype, device=pts.device)
    hist = fastt.zeros(math.prod(shape), dtype=pts.dtype, device=pts.device)
    if flat is not None:
        hist = hist.index_add(0, fastt.masked_select(flat, keep),
                              fastt.masked_select(w, keep))
    hist = hist.reshape(shape)
    if density:
        vol = hist.sum()
        for k, e in enumerate(edges):
            shp = [1] * d
            shp[k] = -1
            vol = vol * (e[1:] - e[:-1]).reshape(shp)
        hist = hist / vol
    return _histogramdd_t(hist, tuple(edges))


# ---- gamma-function composites ----

@_export()
def mvlgamma(input, p, *, out=None):
    """The log of the multivariate gamma function of dimension p:
    p(p-1)/4 log(pi) + sum_i lgamma(input - i/2), i < p."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = input if input.dtype.is_floating_point or input.dtype.is_complex \
        else input.to(fastt.get_default_dtype())
    if x.numel() and not builtins.bool((x > (p - 1) / 2).all().item()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    w = x.float() if x.dtype in (fastt.float16, fastt.bfloat16) else x
    r = fastt.lgamma(w)
    for i in range(1, p):
        r = r + fastt.lgamma(w - i / 2)
    r = r + p * (p - 1) / 4 * math.log(math.pi)
    return _out(r.to(x.dtype), out)


_method("mvlgamma_", lambda self, p:
        _write_back(self, mvlgamma(self, p), "mvlgamma"))


# ---- torch's window factories (torch.hann_window, ...), for stft ----
def _torch_window(name, window_length, periodic, dtype, layout, device,
                  requires_grad, make):
    """torch.<name>(window_length, periodic): make(M, sym, dtype) from
    fastt.signal.windows, at float32/float64 and cast to a 16-bit dtype
    when asked (torch allows those); torch's checks and messages."""
    del layout  # strided only, as fastt's factories
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' must be int, "
                        f"not {type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, "
                           f"got window_length={window_length}")
    dtype = fastt.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: "
                           f"{dtype}")
    base = dtype if dtype in (fastt.float32, fastt.float64) else \
        fastt.float32
    w = make(window_length, not periodic, base).to(dtype)
    if device is not None:
        w = w.to(device)
    return w.requires_grad_() if requires_grad else w


@_export(method=False)
def hann_window(window_length: int, periodic=True, *, dtype=None, layout=None,
                device=None, pin_memory=False, requires_grad=False):
    from .signal import windows
    return _torch_window(
        "hann_window", window_length, periodic, dtype, layout, device,
        requires_grad, lambda m, sym, dt: windows.hann(m, sym=sym, dtype=dt))


@_export(method=False)
def hamming_window(window_length: int, periodic=True, alpha=0.54, beta=0.46, *,
                   dtype=None, layout=None, device=None, pin_memory=False,
                   requires_grad=False):
    from .signal import windows
    return _torch_window(
        "hamming_window", window_length, periodic, dtype, layout, device,
        requires_grad, lambda m, sym, dt: windows.general_cosine(
            m, a=[alpha, beta], sym=sym, dtype=dt))


@_export(method=False)
def blackman_window(window_length: int, periodic=True, *, dtype=None,
                    layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    from .signal import windows
    return _torch_window(
        "blackman_window", window_length, periodic, dtype, layout, device,
        requires_grad,
        lambda m, sym, dt: windows.blackman(m, sym=sym, dtype=dt))


@_export(method=False)
def bartlett_window(window_length: int, periodic=True, *, dtype=None,
                    layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    from .signal import windows
    return _torch_window(
        "bartlett_window", window_length, periodic, dtype, layout, device,
        requires_grad,
        lambda m, sym, dt: windows.bartlett(m, sym=sym, dtype=dt))


@_export(method=False)
def kaiser_window(window_length: int, periodic=True, beta=12.0, *, dtype=None,
                  layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    from .signal import windows
    return _torch_window(
        "kaiser_window", window_length, periodic, dtype, layout, device,
        requires_grad,
        lambda m, sym, dt: windows.kaiser(m, beta=beta, sym=sym, dtype=dt))


# ---- short-time Fourier transforms (torch.stft / torch.istft) ----
def _stft_sizes(op, n_fft, hop_length, win_length, window, sig):
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if hop <= 0:
        raise RuntimeError(f"{op}: expected hop_length > 0, but got "
                           f"hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{op}: expected 0 < win_length <= n_fft, but "
                           f"got win_length={win}")
    if window is not None and (window.dim() != 1 or
                               window.shape[0] != win):
        raise RuntimeError(f"{op}: expected a 1D window tensor of size "
                           f"equal to win_length={win}, but got window "
                           f"with size {list(window.shape)}")
    if window is None:
        import warnings
        warnings.warn(f"A window was not provided. A rectangular window "
                      f"will be applied. To suppress this warning, "
                      f"explicitly set `window=fastt.ones(n_fft)` ({op}).",
                      UserWarning, stacklevel=3)
    return hop, win


def _stft_window(window, win, n_fft, dtype, device):
    """The window centred in n_fft points (ones where None)."""
    if window is None:
        return fastt.ones(n_fft, dtype=dtype, device=device)
    if win == n_fft:
        return window
    w = fastt.zeros(n_fft, dtype=window.dtype, device=window.device)
    left = (n_fft - win) // 2
    w[left:left + win] = window
    return w


@_export()
def stft(input, n_fft, hop_length=None, win_length=None, window=None,
         center=True, pad_mode="reflect", normalized=False, onesided=None,
         return_complex=None, align_to_window=None):
    """torch.stft: the transforms of windowed frames, [(B,) freq,
    frames]; rfft's onesided spectrum for real inputs and windows."""
    from . import fft as _fft
    complex_in = input.dtype.is_complex or (
        window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_in:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for "
                "real inputs, and will further require that "
                "return_complex=True in a future PyTorch release.")
        return_complex = True
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, got "
                           f"{input.dim()}D")
    if align_to_window is not None and center:
        raise RuntimeError("stft: align_to_window should only be set when "
                           "center = false")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    if center:
        p = n_fft // 2
        if x.dtype.is_complex:  # padded as its real view [B, 1, L, 2]
            xr = fastt.view_as_real(x.unsqueeze(1))
            xr = fastt.nn.functional.pad(xr, (0, 0, p, p), mode=pad_mode)
            x = fastt.view_as_complex(xr.contiguous()).squeeze(1)
        else:
            x = fastt.nn.functional.pad(x.unsqueeze(1), (p, p),
                                        mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got "
                           f"n_fft={n_fft}")
    hop, win = _stft_sizes("stft", n_fft, hop_length, win_length, window,
                           input)
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input "
                           "is complex")
    if align_to_window and win < n_fft:
        # Each window, not its n_fft frame, starts at a multiple of hop:
        # the frame reaches (n_fft - win) // 2 before it (zeros there).
        left = (n_fft - win) // 2
        x = fastt.nn.functional.pad(x, (left, n_fft - win - left))
    frames = x.unfold(-1, n_fft, hop)
    if window is not None:
        frames = frames * _stft_window(window, win, n_fft, None, None)
    norm = "ortho" if normalized else "backward"
    spec = (_fft.rfft if onesided else _fft.fft)(frames, norm=norm)
    spec = spec.transpose(-1, -2)
    if input.dim() == 1:
        spec = spec.squeeze(0)
    if return_complex:
        return spec
    import warnings
    warnings.warn("stft with return_complex=False is deprecated; use "
                  "fastt.view_as_real on the complex output.", UserWarning,
                  stacklevel=2)
    return fastt.view_as_real(spec.contiguous())


@_export()
def istft(input, n_fft, hop_length=None, win_length=None, window=None,
          center=True, normalized=False, onesided=None, length=None,
          return_complex=False):
    """torch.istft: the inverse of stft by windowed overlap-add, divided
    by the overlap-added squared window."""
    from . import fft as _fft
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor "
                           "matching the output from stft with "
                           "return_complex=True.")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 "
                           f"dimensions of complex dtype, but got "
                           f"{input.dim()}")
    hop, win = _stft_sizes("istft", n_fft, hop_length, win_length, window,
                           input)
    x = input if input.dim() == 3 else input.unsqueeze(0)
    n_freq, n_frames = x.shape[-2], x.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided and n_freq != n_fft // 2 + 1:
        raise RuntimeError(
            "istft: expected the frequency dimension (3rd to the last) of "
            "the input tensor to match n_fft / 2 + 1 when onesided=True, "
            f"but got {n_freq}")
    if not onesided and n_freq != n_fft:
        raise RuntimeError(
            "istft: expected the frequency dimension (3rd to the last) of "
            "the input tensor to match n_fft when onesided=False, but got "
            f"{n_freq}")
    if return_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input "
                           "is complex")
    if not return_complex and window is not None and window.dtype.is_complex:
        raise RuntimeError("Complex windows are incompatible with "
                           "return_complex=False")
    frames = x.transpose(-1, -2)  # [B, frames, freq]
    norm = "ortho" if normalized else "backward"
    if return_complex:
        y = _fft.ifft(frames, n=n_fft, norm=norm)
    else:
        if not onesided:
            frames = frames.narrow(-1, 0, n_fft // 2 + 1)
        y = _fft.irfft(frames, n=n_fft, norm=norm)
    real = y.dtype.to_real() if y.dtype.is_complex else y.dtype
    w = _stft_window(window, win, n_fft, real, y.device)
    y = y * w
    total = n_fft + hop * (n_frames - 1)
    idx = (fastt.arange(n_frames, device=y.device).unsqueeze(1) * hop +
           fastt.arange(n_fft, device=y.device)).reshape(-1)
    b = y.shape[0]
    if y.dtype.is_complex:  # overlap-added as its real view
        out = fastt.zeros(b, total, 2, dtype=real, device=y.device)
        out.index_add_(1, idx, fastt.view_as_real(y.contiguous())
                       .reshape(b, -1, 2))
        out = fastt.view_as_complex(out)
    else:
        out = fastt.zeros(b, total, dtype=y.dtype, device=y.device)
        out.index_add_(1, idx, y.reshape(b, -1))
    wsq = w * w  # (torch's window.pow(2): complex for a complex window)
    env = fastt.zeros(total, dtype=wsq.dtype, device=y.device)
    env.index_add_(0, idx, wsq.expand(n_frames, n_fft).reshape(-1))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - n_fft // 2 if center else total
    end = builtins.min(end, total)
    out = out[:, start:end]
    env = env[start:end]
    if env.numel() and env.abs().min().item() < 1e-11:
        raise RuntimeError(f"istft: window overlap add min: "
                           f"{env.abs().min().item():g} (the window must "
                           "overlap-add to a nonzero envelope, NOLA)")
    out = out / env
    if length is not None and out.shape[-1] < length:
        import warnings
        warnings.warn("The length of signal is shorter than the length "
                      "parameter. Result is being padded with zeros in the "
                      "tail. Please check your center and hop_length "
                      "settings.", UserWarning, stacklevel=2)
        out = fastt.nn.functional.pad(out, (0, length - out.shape[-1]))
    return out.squeeze(0) if input.dim() == 2 else out
