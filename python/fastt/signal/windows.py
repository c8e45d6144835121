"""torch.signal.windows: window functions of length M, built from fastt
ops (so they run on any device and honour dtype and requires_grad).

Every window takes M and keyword-only `sym` (True: symmetric, for filter
design; False: periodic, for spectral analysis - the window of M + 1 points
without its last), `dtype` (float32 or float64; the default dtype when
None), `layout` (accepted, as by fastt's factories: every tensor is
strided), `device` and `requires_grad`. The errors are torch's
ValueErrors, naming the window."""
import math

import fastt

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian",
           "general_cosine", "general_hamming", "hamming", "hann", "kaiser",
           "nuttall"]


def _check(name, M, dtype, layout):
    del layout  # accepted as fastt's factories do: strided only
    if not isinstance(M, int) or isinstance(M, bool):
        raise TypeError(f"{name}(): argument 'M' must be int, not "
                        f"{type(M).__name__}")
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, "
                         f"got M={M}")
    if dtype is None:
        dtype = fastt.get_default_dtype()
    if dtype not in (fastt.float32, fastt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: "
                         f"{dtype}")
    return dtype


def _window(name, M, sym, dtype, layout, device, requires_grad, body):
    """The window body(k, N) on the points k = 0..N-1 (N = M, or M + 1 for
    a periodic window, whose last point goes), after the common checks;
    M = 0 and M = 1 give the empty window and [1]."""
    dtype = _check(name, M, dtype, layout)
    if M <= 1:
        w = (fastt.empty((0,), dtype=dtype, device=device) if M == 0
             else fastt.ones((1,), dtype=dtype, device=device))
    else:
        n = M if sym else M + 1
        w = body(fastt.arange(n, dtype=dtype, device=device), n)
        w = w[:M].contiguous()
    if requires_grad:
        w.requires_grad_(True)
    return w


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """sum_i (-1)^i a[i] cos(2 pi i k / (N - 1))."""
    def body(k, n):
        if not isinstance(a, (list, tuple)):
            raise TypeError("Coefficients must be a list/tuple")
        if not a:
            raise ValueError("Coefficients cannot be empty")
        phase = k * (2 * math.pi / (n - 1))
        w = fastt.zeros_like(phase)
        for i, coef in enumerate(a):
            w = w + ((-1) ** i * coef) * fastt.cos(phase * i)
        return w
    return _window("general_cosine", M, sym, dtype, layout, device,
                   requires_grad, body)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None,
                    device=None, requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi k / (N - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype,
                          layout=layout, device=device,
                          requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None,
         requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout,
                           device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None,
            requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout,
                           device=device, requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype,
                          layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None,
            requires_grad=False):
    """The minimum 4-term Blackman-Harris window (Nuttall's)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
                          sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """The triangle 1 - |2k / (N - 1) - 1|."""
    return _window("bartlett", M, sym, dtype, layout, device, requires_grad,
                   lambda k, n: 1 - fastt.abs(k * (2.0 / (n - 1)) - 1))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """sin(pi (k + 1/2) / N) (the sine window)."""
    return _window("cosine", M, sym, dtype, layout, device, requires_grad,
                   lambda k, n: fastt.sin((k + 0.5) * (math.pi / n)))


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None,
                layout=None, device=None, requires_grad=False):
    """exp(-|k - center| / tau); center (N - 1) / 2 unless given, which
    only a periodic window may do."""
    _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def body(k, n):
        c = (n - 1) / 2 if center is None else center
        return fastt.exp(fastt.abs(k - c) * (-1.0 / tau))
    return _window("exponential", M, sym, dtype, layout, device,
                   requires_grad, body)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """exp(-((k - (N - 1) / 2) / std)^2 / 2)."""
    _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} "
                         "instead.")

    def body(k, n):
        x = (k - (n - 1) / 2) * (1.0 / std)
        return fastt.exp(x * x * -0.5)
    return _window("gaussian", M, sym, dtype, layout, device, requires_grad,
                   body)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """I0(beta sqrt(1 - ((k - c) / c)^2)) / I0(beta), c = (N - 1) / 2."""
    _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")

    def body(k, n):
        c = (n - 1) / 2
        r = (k - c) * (1.0 / c)
        # clamp: rounding may put 1 - r^2 a hair below 0 at the ends
        arg = fastt.sqrt(fastt.clamp(1 - r * r, min=0.0)) * beta
        return fastt.i0(arg) / _i0(beta)
    return _window("kaiser", M, sym, dtype, layout, device, requires_grad,
                   body)


def _i0(x):
    """The modified Bessel function I0 of a Python float (power series;
    converges for every real x, terms (x/2)^2k / (k!)^2)."""
    term, total, k = 1.0, 1.0, 0
    q = (x / 2) ** 2
    while term > total * 1e-17:
        k += 1
        term *= q / (k * k)
        total += term
    return total
