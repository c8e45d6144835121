"""fastt.signal.windows against torch.signal.windows: every window, both
sym modes, lengths 0..9, both float dtypes, the parameters' ranges, and
torch's errors."""
import numpy as np
import pytest

import fastt
from fastt.signal import windows as fw

torch = pytest.importorskip("torch")
tw = torch.signal.windows

# (name, parameter sets)
WINDOWS = [
    ("bartlett", [{}]), ("blackman", [{}]), ("cosine", [{}]),
    ("hamming", [{}]), ("hann", [{}]), ("nuttall", [{}]),
    ("exponential", [{}, {"tau": 0.3}, {"tau": 4.0}]),
    ("gaussian", [{}, {"std": 0.4}, {"std": 7.0}]),
    ("general_cosine", [{"a": [0.5]}, {"a": [0.4, 0.3, 0.2, 0.1]},
                        {"a": (1.0, 1.0)}]),
    ("general_hamming", [{}, {"alpha": 0.3}]),
    ("kaiser", [{}, {"beta": 0.0}, {"beta": 2.5}, {"beta": 40.0}]),
]
CASES = [(n, kw) for n, kws in WINDOWS for kw in kws]


@pytest.mark.parametrize("name,kw", CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_window_matches_torch(name, kw):
    for M in range(10):
        for sym in (True, False):
            for fd, td in ((fastt.float32, torch.float32),
                           (fastt.float64, torch.float64)):
                got = getattr(fw, name)(M, sym=sym, dtype=fd, **kw)
                ref = getattr(tw, name)(M, sym=sym, dtype=td, **kw)
                assert got.dtype == fd and tuple(got.shape) == (M,)
                tol = 1e-12 if fd == fastt.float64 else 2e-6
                np.testing.assert_allclose(np.asarray(got), ref.numpy(),
                                           rtol=tol, atol=tol,
                                           err_msg=f"{name} M={M} sym={sym}")


def test_periodic_exponential_center():
    for center in (0.0, 1.0, 2.5):
        got = fw.exponential(6, center=center, sym=False, tau=2.0)
        ref = tw.exponential(6, center=center, sym=False, tau=2.0)
        np.testing.assert_allclose(np.asarray(got), ref.numpy(), rtol=2e-6)


def test_default_dtype_and_requires_grad():
    assert fw.hann(4).dtype == fastt.get_default_dtype()
    w = fw.kaiser(5, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    assert fw.hann(0, requires_grad=True).requires_grad
    assert fastt.signal.windows is fw


@pytest.mark.parametrize("call,cls,msg", [
    (lambda: fw.hann(-1), ValueError,
     "general_cosine requires non-negative window length, got M=-1"),
    (lambda: fw.kaiser(-2), ValueError, "kaiser requires non-negative"),
    (lambda: fw.kaiser(4, beta=-1.0), ValueError, "beta must be non-negat"),
    (lambda: fw.gaussian(4, std=0.0), ValueError, "Standard deviation"),
    (lambda: fw.exponential(4, tau=0.0), ValueError, "Tau must be positive"),
    (lambda: fw.exponential(4, center=1.0), ValueError,
     "Center must be None for symmetric windows"),
    (lambda: fw.general_cosine(4, a=[]), ValueError, "cannot be empty"),
    (lambda: fw.general_cosine(4, a=3), TypeError, "list/tuple"),
    (lambda: fw.hann(4, dtype=fastt.int64), ValueError,
     "expects float32 or float64 dtypes"),
    (lambda: fw.bartlett(4, dtype=fastt.float16), ValueError,
     "bartlett expects float32 or float64"),
    (lambda: fw.cosine(2.5), TypeError, "must be int"),
])
def test_errors_as_torch(call, cls, msg):
    with pytest.raises(cls, match=msg):
        call()
