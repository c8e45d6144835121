"""Numerical robustness against torch: softmax, log_softmax, logsumexp,
cross_entropy, binary_cross_entropy_with_logits, layer_norm and var on
large (+-1e4), offset, tiny (1e-30) and denormal inputs and on rows holding
inf/NaN, in float32 and float64, forward and gradients. Where torch gives
inf or NaN fastt must give the same (same sign for inf); elsewhere values
must agree to a dtype-scaled tolerance. Add a function to FUNCS and an
input family to INPUTS."""
import numpy as np
import pytest

import fastt

torch = pytest.importorskip("torch")

ROWS, COLS = 7, 6
_inf, _nan = float("inf"), float("nan")


def _special_rows():
    r = np.random.default_rng(5).standard_normal((ROWS, COLS))
    r[0, 1] = _inf                  # one +inf
    r[1, 2] = -_inf                 # one -inf
    r[2, 3] = _nan                  # one NaN
    r[3, :] = -_inf                 # a row of -inf
    r[4, 0] = r[4, 4] = _inf        # two +inf
    r[5, 0], r[5, 5] = _inf, -_inf  # +inf and -inf
    return r                        # row 6 stays finite


def _inputs(dtype):
    rng = np.random.default_rng(1)
    n = rng.standard_normal((ROWS, COLS))
    denorm = 1e-40 if dtype == "float32" else 1e-310
    return {
        "normal": n,
        "large": rng.uniform(-1e4, 1e4, (ROWS, COLS)),
        # Cancellation in var / layer_norm, at a condition number each
        # dtype can answer (|x| / std * eps ~ 1e-3 and 1e-8).
        "offset": (1e4 if dtype == "float32" else 1e8) + n,
        "constant": np.full((ROWS, COLS), 1e4),
        "tiny": 1e-30 * n,
        "denormal": denorm * np.sign(n) * (1 + np.abs(n)),
        "special": _special_rows(),
        # Wide rows take the kernels' vectorised / parallel paths.
        "wide_large": _wide(rng, 1e4),
        "wide_special": _wide(rng, 1.0, special=True),
    }


def _wide(rng, scale, special=False):
    w = scale * rng.standard_normal((3, 40000))
    if special:
        w[0, 12345] = _inf
        w[1, 39999] = _nan
        w[2, 7] = -_inf
    return w


INPUT_NAMES = list(_inputs("float64"))


# Each function: f(lib, F, x, aux) with lib = fastt or torch and F its
# nn.functional; aux holds per-library extra tensors made by _aux.
def _aux(lib, dtype, shape, seed=2):
    rng = np.random.default_rng(seed)
    dt = getattr(lib, dtype)
    rows, cols = shape
    return {
        "target": lib.tensor(rng.integers(0, cols, rows).tolist()),
        "probs": lib.tensor(rng.uniform(0, 1, (rows, cols)).tolist(),
                            dtype=dt),
        "weight": lib.tensor((1 + 0.1 * rng.standard_normal(cols)).tolist(),
                             dtype=dt, requires_grad=True),
        "bias": lib.tensor((0.1 * rng.standard_normal(cols)).tolist(),
                           dtype=dt, requires_grad=True),
        "cols": cols,
    }


FUNCS = {
    "softmax": lambda lib, F, x, a: F.softmax(x, dim=1),
    "log_softmax": lambda lib, F, x, a: F.log_softmax(x, dim=1),
    "softmax_dim0": lambda lib, F, x, a: F.softmax(x, dim=0),
    "logsumexp": lambda lib, F, x, a: x.logsumexp(dim=1),
    "cross_entropy": lambda lib, F, x, a: F.cross_entropy(x, a["target"]),
    "cross_entropy_none": lambda lib, F, x, a: F.cross_entropy(
        x, a["target"], reduction="none"),
    "cross_entropy_smooth": lambda lib, F, x, a: F.cross_entropy(
        x, a["target"], reduction="none", label_smoothing=0.1),
    "bce_with_logits": lambda lib, F, x, a: (
        F.binary_cross_entropy_with_logits(x, a["probs"], reduction="none")),
    "bce_with_logits_mean": lambda lib, F, x, a: (
        F.binary_cross_entropy_with_logits(x, a["probs"])),
    "layer_norm": lambda lib, F, x, a: F.layer_norm(x, (a["cols"],)),
    "layer_norm_affine": lambda lib, F, x, a: F.layer_norm(
        x, (a["cols"],), a["weight"], a["bias"]),
    "var": lambda lib, F, x, a: x.var(dim=1),
    "var_all": lambda lib, F, x, a: x.var(),
    "var_unbiased0": lambda lib, F, x, a: x.var(dim=0, correction=0),
}


def _run(lib, fname, arr, dtype):
    F = lib.nn.functional
    x = lib.tensor(arr.tolist(), dtype=getattr(lib, dtype),
                   requires_grad=True)
    aux = _aux(lib, dtype, arr.shape)
    out = FUNCS[fname](lib, F, x, aux)
    g = np.random.default_rng(3).standard_normal(tuple(out.shape))
    out.backward(lib.tensor(g.tolist(), dtype=out.dtype))
    grads = [x.grad]
    if fname == "layer_norm_affine":
        grads += [aux["weight"].grad, aux["bias"].grad]
    return [out] + grads


def _np(t):
    return np.asarray(t.detach().double().cpu().numpy() if hasattr(t, "cpu")
                      else t.detach().double().numpy())


def _close(got, want, rtol, floor):
    # Absolute slack scaled to the output's magnitude: cancellation in sums
    # of +-1e4 terms loses digits the same way in both libraries.
    scale = max(np.abs(want).max(), floor)
    atol = rtol * scale + (1e-30 if scale > 0 else 0)
    return np.allclose(got, want, rtol=rtol, atol=atol)


def _compare(name, got, want, dtype, loose=False, want64=None):
    """got must have torch's NaN/+inf/-inf pattern exactly, and finite
    values close to torch's, or (float32) closer to torch's float64 answer
    on the same inputs: on ill-conditioned rows fastt may beat torch."""
    got, want = np.atleast_1d(_np(got)), np.atleast_1d(_np(want))
    assert got.shape == want.shape, name
    for pred in (np.isnan, np.isposinf, np.isneginf):
        bad = pred(got) != pred(want)
        assert not bad.any(), (
            f"{name}: {pred.__name__} differs at {np.argwhere(bad).tolist()}"
            f"\n fastt={got[bad]}\n torch={want[bad]}")
    fin = np.isfinite(want)
    if not fin.any():
        return
    rtol = 2e-4 if dtype == "float32" else 1e-9
    # Ill-conditioned inputs (|x| >> spread): both libraries round
    # differently; the natural output scale there is 1, not the output.
    floor = 1.0 if loose else 0.0
    if loose:
        rtol *= 10 if dtype == "float32" else 100
    if _close(got[fin], want[fin], rtol, floor):
        return
    if want64 is not None:
        w64 = np.atleast_1d(_np(want64))
        if _close(got[fin], w64[fin], rtol, floor):
            return
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("inp", INPUT_NAMES)
@pytest.mark.parametrize("fname", list(FUNCS))
def test_matches_torch(fname, inp, dtype):
    arr = _inputs(dtype)[inp]
    got = _run(fastt, fname, arr, dtype)
    want = _run(torch, fname, arr, dtype)
    want64 = [None] * len(want)
    if dtype == "float32":  # the float32 inputs, computed in float64
        want64 = _run(torch, fname, arr.astype(np.float32).astype(np.float64),
                      "float64")
    labels = ["forward", "grad input", "grad weight", "grad bias"][:len(want)]
    for label, g, w, w64 in zip(labels, got, want, want64, strict=True):
        _compare(f"{fname}[{inp},{dtype}] {label}", g, w, dtype,
                 loose=inp in ("offset", "constant"), want64=w64)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_extremes_exact(dtype):
    # Stable softmax: huge logits neither overflow nor lose the winner.
    x = fastt.tensor([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4],
                      [_inf, 0.0, 0.0], [-_inf, 0.0, 0.0]],
                     dtype=getattr(fastt, dtype))
    s = _np(fastt.softmax(x, 1))
    np.testing.assert_array_equal(s[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(s[1], [1 / 3] * 3, rtol=1e-6)
    assert np.isnan(s[2]).all()  # inf - inf, as torch
    np.testing.assert_array_equal(s[3], [0.0, 0.5, 0.5])
    lse = _np(x.logsumexp(dim=1))
    np.testing.assert_allclose(lse[:2], [1e4, -1e4 + np.log(3)], rtol=1e-7)
    assert lse[2] == _inf and lse[3] == pytest.approx(np.log(2))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_var_and_layer_norm_keep_precision_far_from_zero(dtype):
    # 1e4 + small noise: a one-pass sum-of-squares loses everything here.
    base = 1e4 if dtype == "float32" else 1e8
    noise = np.random.default_rng(0).standard_normal(1000)
    arr = base + noise
    x = fastt.tensor(arr.tolist(), dtype=getattr(fastt, dtype))
    t = torch.tensor(arr.tolist(), dtype=getattr(torch, dtype))
    v, tv = float(x.var()), float(t.var())
    assert v == pytest.approx(tv, rel=1e-3)
    ln = _np(fastt.nn.functional.layer_norm(x, (1000,)))
    tln = torch.nn.functional.layer_norm(t, (1000,)).double().numpy()
    np.testing.assert_allclose(ln, tln, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("n", [1, 7, 63, 255, 256, 257, 4097, 65536 + 3,
                               1 << 20, (1 << 24) + 5])
@pytest.mark.parametrize("family", ["uniform", "offset", "mixed"])
def test_float32_full_reductions_against_float64(n, family):
    """sum/mean (float lanes folded into double lanes) and amax/amin (64
    select lanes, threads split the range) of dense float32 inputs at 1 to
    16M elements: the error against a float64 reference is no worse than
    torch's (its cascade sum), and max/min are exact, NaN included."""
    rng = np.random.default_rng(n)
    if family == "uniform":
        v = rng.random(n, dtype=np.float32)
    elif family == "offset":
        v = (1e4 + rng.standard_normal(n)).astype(np.float32)
    else:
        v = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
             ).astype(np.float32)
    x, tx = fastt.from_numpy(v), torch.from_numpy(v)
    ref = v.astype(np.float64).sum()
    v64 = v.astype(np.float64)
    for got, want, r in ((x.sum(), tx.sum(), ref),
                         (x.mean(), tx.mean(), ref / n),
                         (x.norm(), tx.norm(), np.sqrt((v64 * v64).sum())),
                         (x.norm(1), tx.norm(1), np.abs(v64).sum())):
        err, terr = abs(float(got) - r), abs(float(want) - r)
        assert err <= max(2 * terr, 2 * np.spacing(np.float32(abs(r)))), \
            (err, terr)
    assert float(x.max()) == v.max() and float(x.min()) == v.min()
    assert float(x.amax()) == v.max() and float(x.amin()) == v.min()
    if n > 1:
        w = v.copy()
        w[n // 2] = np.nan
        xw = fastt.from_numpy(w)
        assert np.isnan(float(xw.max())) and np.isnan(float(xw.amin()))
        w[n // 2] = np.inf
        assert float(fastt.from_numpy(w).max()) == np.inf


@pytest.mark.parametrize("n", [3, 300, 5000])
def test_float32_norm_squares_in_float_as_torch(n):
    """The 2-norm squares float32 inputs in float on every path (dense,
    strided, over a dim), as torch: 1e20 overflows to inf, 1e-25 to 0."""
    for big in (1e20, 1e-25, 3.0):
        v = np.full(n, big, dtype=np.float32)
        v[0] = 1.0
        x, tx = fastt.from_numpy(v), torch.from_numpy(v)
        want = float(tx.norm())
        strided = fastt.from_numpy(np.stack([v, v], 1))[:, 0]
        assert not strided.is_contiguous()
        for got in (x.norm(), strided.norm(), x.reshape(1, n).norm(dim=1)[0],
                    fastt.linalg.vector_norm(x)):
            np.testing.assert_allclose(float(got), want, rtol=1e-6)
