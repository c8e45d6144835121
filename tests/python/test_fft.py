"""fastt.fft (issue 18, third part) against torch.fft: every function over
dtypes, lengths (powers of two, odd, prime lengths that take the Bluestein
path), n/s padding and trimming, dims, the three norms, non-contiguous and
batched inputs, out=, the frequency and shift helpers, the properties
(inverse pairs, Parseval) and torch's errors."""
import numpy as np
import pytest

import fastt

torch = pytest.importorskip("torch")

LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17, 31, 47, 64, 97, 100, 128,
           210, 257, 1009, 1024]
NORMS = [None, "backward", "ortho", "forward"]


def rnd(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def pair(a):
    return fastt.tensor(a), torch.tensor(a)


def close(got, want, scale=1.0):
    """got (fastt) against want (torch): dtype, shape, values to a
    tolerance relative to the largest magnitude (FFT errors are absolute
    at the scale of the largest output)."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], \
        (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    g = np.asarray(got.tolist(), dtype=np.complex128)
    w = want.resolve_conj().numpy().astype(np.complex128)
    single = str(want.dtype) in ("torch.float32", "torch.complex64")
    big = max(1.0, float(np.abs(w).max()) if w.size else 1.0)
    tol = (2e-6 if single else 1e-13) * scale * big
    np.testing.assert_allclose(g, w, rtol=0, atol=tol)


# ---- one dim ---------------------------------------------------------------
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("fn", ["fft", "ifft"])
def test_c2c_lengths(fn, dtype, n):
    f, t = pair(rnd((3, n), dtype, n))
    close(getattr(fastt.fft, fn)(f), getattr(torch.fft, fn)(t))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rfft_irfft_lengths(dtype, n):
    f, t = pair(rnd((2, n), dtype, n))
    close(fastt.fft.rfft(f), torch.fft.rfft(t))
    close(fastt.fft.fft(f), torch.fft.fft(t))  # real input, full spectrum
    cf, ct = pair(rnd((2, n // 2 + 1), "complex" + str(2 * int(dtype[5:])),
                      n + 1))
    close(fastt.fft.irfft(cf, n=n), torch.fft.irfft(ct, n=n))
    close(fastt.fft.hfft(cf, n=n), torch.fft.hfft(ct, n=n))
    close(fastt.fft.ihfft(f), torch.fft.ihfft(t))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("fn", ["fft", "ifft", "rfft", "irfft", "hfft",
                                "ihfft"])
def test_norms(fn, norm):
    real = fn in ("rfft", "ihfft")
    f, t = pair(rnd((4, 10), "float64" if real else "complex128", 1))
    close(getattr(fastt.fft, fn)(f, norm=norm),
          getattr(torch.fft, fn)(t, norm=norm))


@pytest.mark.parametrize("n", [1, 3, 8, 9, 15, 16, 40])
@pytest.mark.parametrize("fn", ["fft", "ifft", "rfft", "irfft", "hfft",
                                "ihfft"])
def test_n_pads_and_trims(fn, n):
    real = fn in ("rfft", "ihfft")
    f, t = pair(rnd((3, 12), "float32" if real else "complex64", n))
    close(getattr(fastt.fft, fn)(f, n=n), getattr(torch.fft, fn)(t, n=n))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("fn", ["fft", "rfft", "irfft", "ihfft"])
def test_dims(fn, dim):
    real = fn in ("rfft", "ihfft")
    f, t = pair(rnd((4, 6, 5), "float64" if real else "complex128",
                    dim + 3))
    close(getattr(fastt.fft, fn)(f, dim=dim),
          getattr(torch.fft, fn)(t, dim=dim))


def test_real_and_integer_inputs_promote():
    for dt in ["int64", "int32", "bool", "uint8", "float32", "float64"]:
        a = (np.arange(12) % 5).astype(dt)
        f, t = pair(a)
        close(fastt.fft.fft(f), torch.fft.fft(t))
        close(fastt.fft.ifft(f, norm="ortho"), torch.fft.ifft(t,
                                                               norm="ortho"))
        close(fastt.fft.rfft(f), torch.fft.rfft(t))
        close(fastt.fft.irfft(f), torch.fft.irfft(t))
        close(fastt.fft.hfft(f), torch.fft.hfft(t))


@pytest.mark.parametrize("fn", ["fftn", "ifftn", "fft2", "ifft2"])
def test_nd_real_inputs(fn):
    # Real signals take the real transform's full spectrum (torch's path).
    f, t = pair(rnd((3, 4, 6), "float64", 15))
    close(getattr(fastt.fft, fn)(f), getattr(torch.fft, fn)(t))
    close(getattr(fastt.fft, fn)(f, s=(5, 3), norm="forward"),
          getattr(torch.fft, fn)(t, s=(5, 3), norm="forward"))


def test_irfft_ignores_imaginary_dc_and_nyquist():
    # A non-Hermitian input: c2r reads only the real parts of the zero
    # and Nyquist frequencies (pocketfft's and torch's convention).
    a = rnd(9, "complex128", 3)
    f, t = pair(a)
    for n in (16, 17):
        close(fastt.fft.irfft(f, n=n), torch.fft.irfft(t, n=n))


def test_non_contiguous_inputs():
    a = rnd((6, 20), "complex64", 4)
    f, t = pair(a)
    close(fastt.fft.fft(f.t(), dim=0), torch.fft.fft(t.t(), dim=0))
    close(fastt.fft.fft(f[:, ::2]), torch.fft.fft(t[:, ::2]))
    r = rnd((8, 30), "float64", 5)
    f, t = pair(r)
    close(fastt.fft.rfft(f.t()), torch.fft.rfft(t.t()))
    close(fastt.fft.rfft(f[::3, 1::2], dim=0), torch.fft.rfft(t[::3, 1::2],
                                                              dim=0))
    f, t = pair(rnd((5, 9), "complex128", 6))
    close(fastt.fft.irfft(f.t(), dim=0), torch.fft.irfft(t.t(), dim=0))


@pytest.mark.parametrize("n", [1000, 1024, 1031])
def test_batched_rows_in_parallel(n):
    # Enough rows for the kernels' parallel loop (32K values per thread).
    old = fastt.get_num_threads()
    fastt.set_num_threads(2)
    try:
        f, t = pair(rnd((96, n), "float32", n))
        close(fastt.fft.rfft(f), torch.fft.rfft(t))
        close(fastt.fft.fft(f), torch.fft.fft(t))
        c = fastt.fft.rfft(f)
        close(fastt.fft.irfft(c, n=n), torch.fft.irfft(torch.fft.rfft(t),
                                                       n=n))
    finally:
        fastt.set_num_threads(old)


# Two or more rows of a power-of-two length (the real kinds': an even length
# whose half is one) up to 4096 complex values run 4, 8 or 16 float (4 or
# 8 double) rows at once in the kernel's lane layout (kernels/cpu/fft.cpp,
# by length and row count). Every lane holds its own row, so a mixed-up
# lane, a partial last group (its unused lanes), a wrong transposed tile
# or a wrong pass count shows as a wrong row; 8192 and 16384 take the row
# loops.
LANE_ROWS = [2, 4, 7, 8, 16, 21, 37]
LANE_LENGTHS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 2048, 4096, 8192,
                16384]


@pytest.mark.parametrize("n", LANE_LENGTHS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lane_groups(dtype, n):
    cdt = "complex" + str(2 * int(dtype[5:]))
    for rows in LANE_ROWS:
        f, t = pair(rnd((rows, n), dtype, rows * n))
        close(fastt.fft.rfft(f), torch.fft.rfft(t))
        close(fastt.fft.fft(f), torch.fft.fft(t))  # r2c, full spectrum
        close(fastt.fft.rfft(f, norm="ortho"), torch.fft.rfft(t,
                                                              norm="ortho"))
        cf, ct = pair(rnd((rows, n), cdt, rows + n))
        close(fastt.fft.fft(cf), torch.fft.fft(ct))
        close(fastt.fft.ifft(cf, norm="forward"),
              torch.fft.ifft(ct, norm="forward"))
        hf, ht = pair(rnd((rows, n // 2 + 1), cdt, 3 * rows + n))
        close(fastt.fft.irfft(hf, n=n), torch.fft.irfft(ht, n=n))
        close(fastt.fft.irfft(hf, n=n, norm="ortho"),
              torch.fft.irfft(ht, n=n, norm="ortho"))


@pytest.mark.parametrize("threads", [1, 2])
def test_lane_groups_2d_and_threads(threads):
    # Columns go through the rows' kernels after a transposed copy; two
    # threads split the rows in whole groups of lanes (1555 rows of 32:
    # the second thread's last group part empty).
    old = fastt.get_num_threads()
    fastt.set_num_threads(threads)
    try:
        for dtype in ("float32", "float64"):
            f, t = pair(rnd((24, 64, 32), dtype, threads))
            close(fastt.fft.rfft2(f), torch.fft.rfft2(t))
            close(fastt.fft.fftn(f, dim=(0, 2)), torch.fft.fftn(t,
                                                                dim=(0, 2)))
            c = fastt.fft.rfftn(f)
            close(fastt.fft.irfftn(c, s=(24, 64, 32)),
                  torch.fft.irfftn(torch.fft.rfftn(t), s=(24, 64, 32)))
            f, t = pair(rnd((1555, 32), dtype, 7))
            close(fastt.fft.rfft(f), torch.fft.rfft(t))
            close(fastt.fft.ifft(f), torch.fft.ifft(t))
            c = fastt.fft.rfft(f)
            close(fastt.fft.irfft(c), torch.fft.irfft(torch.fft.rfft(t)))
    finally:
        fastt.set_num_threads(old)


def test_empty_batch_and_scalars():
    f = fastt.zeros(0, 8)
    assert tuple(fastt.fft.fft(f).shape) == (0, 8)
    assert tuple(fastt.fft.rfft(f).shape) == (0, 5)
    assert tuple(fastt.fft.irfft(fastt.fft.rfft(f)).shape) == (0, 8)
    z = fastt.fft.fftn(fastt.tensor(2.0))
    assert z.dtype == fastt.complex64 and z.dim() == 0 and z.item() == 2


# ---- several dims ----------------------------------------------------------
SHAPE_ARGS = [
    dict(), dict(dim=(0,)), dict(dim=(1, 0)), dict(dim=(0, 2)),
    dict(s=(4, 6)), dict(s=(3, -1)), dict(s=(2, 3, 5)), dict(s=(7,), dim=1),
    dict(dim=(-1, -3), s=(4, 3))]


@pytest.mark.parametrize("kw", SHAPE_ARGS, ids=str)
@pytest.mark.parametrize("fn", ["fftn", "ifftn", "rfftn", "irfftn",
                                "hfftn", "ihfftn"])
def test_nd(fn, kw):
    real = fn in ("rfftn", "ihfftn")
    f, t = pair(rnd((3, 4, 5), "float64" if real else "complex128", 7))
    close(getattr(fastt.fft, fn)(f, **kw), getattr(torch.fft, fn)(t, **kw))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("fn", ["fft2", "ifft2", "rfft2", "irfft2", "hfft2",
                                "ihfft2"])
def test_2d(fn, norm):
    real = fn in ("rfft2", "ihfft2")
    f, t = pair(rnd((2, 6, 7), "float32" if real else "complex64", 8))
    close(getattr(fastt.fft, fn)(f, norm=norm),
          getattr(torch.fft, fn)(t, norm=norm), scale=4)
    close(getattr(fastt.fft, fn)(f, s=(5, 8), norm=norm),
          getattr(torch.fft, fn)(t, s=(5, 8), norm=norm), scale=4)


# ---- helpers ---------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
def test_fftfreq(n):
    close(fastt.fft.fftfreq(n), torch.fft.fftfreq(n))
    close(fastt.fft.fftfreq(n, d=0.25, dtype=fastt.float64),
          torch.fft.fftfreq(n, d=0.25, dtype=torch.float64))
    if n:
        close(fastt.fft.rfftfreq(n, 2.0), torch.fft.rfftfreq(n, 2.0))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        fastt.fft.fftfreq(n, dtype=fastt.int64)


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), (-1,)])
@pytest.mark.parametrize("fn", ["fftshift", "ifftshift"])
def test_shifts(fn, dim):
    f, t = pair(np.arange(35).reshape(5, 7))
    g = getattr(fastt.fft, fn)(f, dim=dim)
    assert g.tolist() == getattr(torch.fft, fn)(t, dim=dim).tolist()
    # The shifts undo each other.
    back = fastt.fft.ifftshift(fastt.fft.fftshift(f, dim), dim)
    assert back.tolist() == f.tolist()


# ---- properties ------------------------------------------------------------
@pytest.mark.parametrize("n", [5, 16, 97, 100])
def test_inverse_pairs_and_parseval(n):
    x = fastt.tensor(rnd((3, n), "float64", 9))
    np.testing.assert_allclose(fastt.fft.irfft(fastt.fft.rfft(x), n).tolist(),
                               x.tolist(), atol=1e-12)
    z = fastt.tensor(rnd((3, n), "complex128", 10))
    back = fastt.fft.ifft(fastt.fft.fft(z))
    np.testing.assert_allclose(np.asarray(back.tolist()),
                               np.asarray(z.tolist()), atol=1e-12)
    spec = fastt.fft.fft(z, norm="ortho")
    np.testing.assert_allclose((spec.abs() ** 2).sum().item(),
                               (z.abs() ** 2).sum().item(), rtol=1e-12)


def test_out():
    f, t = pair(rnd(8, "complex64", 11))
    o = fastt.empty(0, dtype=fastt.complex64)
    r = fastt.fft.fft(f, out=o)
    assert r is o
    close(o, torch.fft.fft(t))
    o = fastt.empty(3, dtype=fastt.complex128)  # resized and cast, as torch
    fastt.fft.fft(f, out=o)
    assert o.dtype == fastt.complex128 and tuple(o.shape) == (8,)
    np.testing.assert_allclose(np.asarray(o.tolist()),
                               torch.fft.fft(t).numpy(), atol=1e-5)
    with pytest.raises(RuntimeError, match="expects a complex output"):
        fastt.fft.fft(f, out=fastt.empty(0))
    with pytest.raises(RuntimeError, match="expects a floating point output"):
        fastt.fft.irfft(f, out=fastt.empty(0, dtype=fastt.complex64))


# ---- errors as torch's -----------------------------------------------------
def raises_like(fn, *args, **kw):
    """fastt and torch both raise, the same class, and fastt's message is
    torch's (the first line)."""
    fargs = [fastt.tensor(a) if isinstance(a, np.ndarray) else a
             for a in args]
    targs = [torch.tensor(a) if isinstance(a, np.ndarray) else a
             for a in args]
    with pytest.raises(Exception) as te:
        fn(torch)(*targs, **kw)
    with pytest.raises(Exception) as fe:
        fn(fastt)(*fargs, **kw)
    assert type(fe.value).__name__ == type(te.value).__name__, \
        (fe.value, te.value)
    assert str(fe.value).splitlines()[0] == str(te.value).splitlines()[0]


@pytest.mark.parametrize("case", [
    (lambda m: m.fft.fft, (rnd(8, "float16"),), {}),
    (lambda m: m.fft.rfft, (rnd(8, "float16"),), {}),
    (lambda m: m.fft.fft, (rnd(8, "float32"),), dict(n=0)),
    (lambda m: m.fft.irfft, (rnd(1, "complex64"),), {}),
    (lambda m: m.fft.fft, (rnd(8, "float32"),), dict(norm="xyz")),
    (lambda m: m.fft.rfft, (rnd(8, "complex64"),), {}),
    (lambda m: m.fft.ihfft, (rnd(8, "complex64"),), {}),
    (lambda m: m.fft.fft, (rnd((2, 3), "float32"),), dict(dim=2)),
    (lambda m: m.fft.fftn, (rnd((2, 3), "float32"),), dict(dim=(0, 0))),
    (lambda m: m.fft.fftn, (rnd((2, 3), "float32"),),
     dict(s=(3,), dim=(0, 1))),
    (lambda m: m.fft.fft, (rnd(0, "float32"),), {}),
    (lambda m: m.fft.fft2, (rnd(8, "float32"),), {}),
    (lambda m: m.fft.fftfreq, (-1,), {}),
], ids=lambda c: str(c[2]))
def test_errors(case):
    fn, args, kw = case
    raises_like(fn, *args, **kw)


def test_primitives_validate():
    x = fastt.randn(8)
    with pytest.raises(RuntimeError, match="expected a complex input"):
        fastt._C._fft_c2c(x, [0], 0, True)
    with pytest.raises(RuntimeError, match="expected a float or double"):
        fastt._C._fft_r2c(x.to(fastt.complex64), [0], 0, True)
    with pytest.raises(ValueError, match="normalization"):
        fastt._C._fft_r2c(x, [0], 3, True)
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        fastt._C._fft_c2r(x.to(fastt.complex64), [0], 0, 0)
    with pytest.raises(RuntimeError, match="unique"):
        fastt._C._fft_c2c(fastt.randn(2, 2).to(fastt.complex64), [0, -2], 0,
                          True)


# ---- windows and the short-time transforms ---------------------------------
@pytest.mark.parametrize("M", [0, 1, 2, 5, 16])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("name, extra", [
    ("hann_window", ()), ("hamming_window", ()),
    ("hamming_window", (0.5, 0.3)), ("blackman_window", ()),
    ("bartlett_window", ()), ("kaiser_window", ()),
    ("kaiser_window", (3.0,))])
def test_windows(name, extra, periodic, M):
    for fd, td in [(fastt.float64, torch.float64),
                   (fastt.float32, torch.float32)]:
        got = getattr(fastt, name)(M, periodic, *extra, dtype=fd)
        want = getattr(torch, name)(M, periodic, *extra, dtype=td)
        assert got.dtype == fd
        np.testing.assert_allclose(got.tolist(), want.tolist(),
                                   atol=1e-6 if fd == fastt.float32
                                   else 1e-12)
    assert fastt.hann_window(4, dtype=fastt.float16).dtype == fastt.float16
    assert fastt.hann_window(3).dtype == fastt.float32


def test_window_errors():
    with pytest.raises(RuntimeError, match="non-negative window_length"):
        fastt.hann_window(-1)
    with pytest.raises(RuntimeError, match="floating point dtypes"):
        fastt.hann_window(4, dtype=fastt.int64)


STFT_ARGS = [
    dict(n_fft=16), dict(n_fft=16, hop_length=3),
    dict(n_fft=16, win_length=10, window="hann"),
    dict(n_fft=15, window="hann", center=False),
    dict(n_fft=16, window="hann", normalized=True),
    dict(n_fft=16, window="hann", pad_mode="constant"),
    dict(n_fft=12, window="hann", onesided=False),
    dict(n_fft=16, win_length=12, window="hann", center=False,
         align_to_window=True)]


def _stft_kw(kw, lib):
    kw = dict(kw)
    if kw.get("window") == "hann":
        kw["window"] = lib.hann_window(kw.get("win_length", kw["n_fft"]),
                                       dtype=lib.float64)
    return kw


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("kw", STFT_ARGS, ids=str)
@pytest.mark.parametrize("shape", [(100,), (3, 80)])
def test_stft_and_istft(shape, kw):
    f, t = pair(rnd(shape, "float64", 12))
    got = fastt.stft(f, return_complex=True, **_stft_kw(kw, fastt))
    want = torch.stft(t, return_complex=True, **_stft_kw(kw, torch))
    close(got, want)
    # The inverse from torch's spectrum, against torch's inverse.
    ikw = {k: v for k, v in _stft_kw(kw, fastt).items()
           if k not in ("pad_mode", "align_to_window")}
    tkw = {k: v for k, v in _stft_kw(kw, torch).items()
           if k not in ("pad_mode", "align_to_window")}
    if kw.get("center", True) and kw.get("pad_mode") is None:
        close(fastt.istft(fastt.tensor(want.numpy()), **ikw),
              torch.istft(want, **tkw))
        close(fastt.istft(got, length=shape[-1], **ikw),
              torch.istft(want, length=shape[-1], **tkw))


def test_stft_complex_input_and_real_output():
    f, t = pair(rnd(64, "complex128", 13))
    w = fastt.hann_window(16, dtype=fastt.float64)
    tw = torch.hann_window(16, dtype=torch.float64)
    close(fastt.stft(f, 16, window=w, return_complex=True),
          torch.stft(t, 16, window=tw, return_complex=True))
    r, tr = pair(rnd(64, "float64", 14))
    with pytest.warns(UserWarning, match="return_complex=False"):
        got = fastt.stft(r, 16, window=w, return_complex=False)
    with pytest.warns(UserWarning):
        want = torch.stft(tr, 16, window=tw, return_complex=False)
    close(got, want)
    spec = torch.stft(t, 16, window=tw, return_complex=True)
    close(fastt.istft(fastt.tensor(spec.numpy()), 16, window=w,
                      return_complex=True),
          torch.istft(spec, 16, window=tw, return_complex=True))


def test_stft_errors():
    x = fastt.randn(100)
    w = fastt.ones(16)
    with pytest.raises(RuntimeError, match="return_complex parameter"):
        fastt.stft(x, 16, window=w)
    with pytest.raises(RuntimeError, match="expected 0 < n_fft < 100"):
        fastt.stft(x, 200, window=fastt.ones(200), center=False,
                   return_complex=True)
    with pytest.raises(RuntimeError, match="hop_length > 0"):
        fastt.stft(x, 16, 0, window=w, return_complex=True)
    with pytest.raises(RuntimeError, match="win_length <= n_fft"):
        fastt.stft(x, 16, win_length=20, window=w, return_complex=True)
    with pytest.raises(RuntimeError, match="1D window tensor"):
        fastt.stft(x, 16, window=fastt.ones(10), return_complex=True)
    with pytest.raises(RuntimeError, match="1D or 2D"):
        fastt.stft(fastt.randn(2, 3, 100), 16, window=w,
                   return_complex=True)
    spec = fastt.stft(x, 16, window=w, return_complex=True)
    with pytest.raises(RuntimeError, match="complex-valued input"):
        fastt.istft(fastt.view_as_real(spec.contiguous()), 16, window=w)
    with pytest.raises(RuntimeError, match="overlap add min"):
        fastt.istft(spec, 16, window=fastt.zeros(16))
    with pytest.raises(RuntimeError, match="n_fft when onesided=False"):
        fastt.istft(spec, 16, window=w, onesided=False)
    with pytest.warns(UserWarning, match="padded with zeros"):
        assert fastt.istft(spec, 16, window=w, length=120).shape == (120,)
