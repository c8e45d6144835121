"""The vectorized float32 kernels of tanh, erf, GELU (both forms), sigmoid,
SiLU, softmax and the GELU/SiLU gradients (kernels/cpu/vec_exp.h) against
float64 references
computed with Python's math module, on dense and strided inputs (the
strided ones take the scalar libm path), with NaN/inf handled as torch."""
import math

import numpy as np
import pytest

import fastt

X = np.concatenate([np.linspace(-12, 12, 24001),
                    np.logspace(-30, 1.2, 400), -np.logspace(-30, 1.2, 400),
                    [0.0, -0.0]]).astype(np.float32)
XD = X.astype(np.float64)
SQ2 = math.sqrt(2.0)


def phi(v):
    return 0.5 * math.erfc(-v / SQ2)


REFS = {
    "tanh": np.tanh(XD),
    "erf": np.array([math.erf(v) for v in XD]),
    "gelu": np.array([v * phi(v) for v in XD]),
    "gelu_tanh": 0.5 * XD * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                         (XD + 0.044715 * XD ** 3))),
    "sigmoid": 1 / (1 + np.exp(-XD)),
    "silu": XD / (1 + np.exp(-XD)),
}
OPS = {
    "tanh": lambda t: t.tanh(),
    "erf": lambda t: t.erf(),
    "gelu": lambda t: fastt.nn.functional.gelu(t),
    "gelu_tanh": lambda t: fastt.nn.functional.gelu(t, approximate="tanh"),
    "sigmoid": lambda t: t.sigmoid(),
    "silu": lambda t: fastt.nn.functional.silu(t),
}
# max error allowed: rtol in float32 ulps-ish, plus a tiny atol. GELU's
# erf form is within 8e-7 relative above |GELU| = 1e-7, 1.5e-6 down to
# 1e-9 (vec_exp.h's vec_normal_tail: its exponent -x^2/2 rounds to float);
# below about -6 the tanh form (and the strided libm path of the erf form)
# give -0 where the value is under 1e-10, as torch's float32 kernels do.
TOL = {"tanh": (3e-7, 1e-37), "erf": (4e-7, 1e-37), "gelu": (1e-6, 1e-9),
       "gelu_tanh": (1e-6, 1e-9), "sigmoid": (3e-7, 1e-37),
       "silu": (5e-7, 1e-37)}


def check(got, ref, rtol, atol, what):
    err = np.abs(got.astype(np.float64) - ref)
    bad = err > atol + rtol * np.abs(ref)
    assert not bad.any(), (what, X[bad][:5], got[bad][:5], ref[bad][:5])


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("layout", ["dense", "strided"])
def test_accuracy_against_float64(name, layout):
    x = fastt.from_numpy(X.copy())
    if layout == "strided":
        x = fastt.stack([x, x], 1)[:, 0]  # stride 2: the libm path
    got = OPS[name](x).numpy()
    check(got, REFS[name], *TOL[name], f"{name} {layout}")


@pytest.mark.parametrize("name", list(OPS))
def test_special_values(name):
    x = fastt.tensor([float("nan"), float("inf"), float("-inf"), 0.0, -0.0])
    got = OPS[name](x).tolist()
    assert math.isnan(got[0])
    if name in ("tanh", "erf"):
        assert got[1:3] == [1.0, -1.0]
    elif name == "sigmoid":
        assert got[1:3] == [1.0, 0.0] and got[3] == 0.5
        return
    else:
        assert got[1] == float("inf")
    assert got[3] == 0.0


@pytest.mark.parametrize("approx", ["none", "tanh"])
def test_gelu_and_silu_gradients_against_float64(approx):
    g = np.random.default_rng(0).standard_normal(X.size).astype(np.float32)
    for fn, deriv in (
            (lambda t: fastt.nn.functional.gelu(t, approximate=approx),
             None),
            (fastt.nn.functional.silu, None)):
        x = fastt.from_numpy(X.copy()).requires_grad_(True)
        fn(x).backward(fastt.from_numpy(g.copy()))
        got = x.grad.numpy()
        # central differences of the float64 reference are too noisy:
        # the analytic derivatives in float64
        if fn is fastt.nn.functional.silu:
            s = 1 / (1 + np.exp(-XD))
            ref = g * s * (1 + XD * (1 - s))
        elif approx == "none":
            pdf = np.exp(-0.5 * XD * XD) / math.sqrt(2 * math.pi)
            ref = g * (np.array([phi(v) for v in XD]) + XD * pdf)
        else:
            k, c = math.sqrt(2 / math.pi), 0.044715
            t = np.tanh(k * XD * (1 + c * XD * XD))
            ref = g * (0.5 * (1 + t) + 0.5 * XD * (1 - t * t) *
                       k * (1 + 3 * c * XD * XD))
        check(got, ref, 2e-6, 4e-6, f"backward {approx}")


# The tails down to the subnormal range, where sigmoid and softmax take
# exp(-|x|) and exp(x - max) through vec_exp_bounded's one-scale 2^k: a
# relative bound while the value is normal, a few subnormal ulps below.
WIDE = np.linspace(-110, 110, 220001).astype(np.float32)


def check_tails(got, ref, what):
    normal = np.abs(ref) >= 1.2e-38
    err = np.abs(got.astype(np.float64) - ref)
    assert (err[normal] <= 4e-7 * np.abs(ref[normal])).all(), what
    assert (err[~normal] <= 8e-45).all(), what


def test_sigmoid_and_silu_tails():
    xd = WIDE.astype(np.float64)
    s = 1 / (1 + np.exp(-xd))
    x = fastt.from_numpy(WIDE.copy())
    check_tails(x.sigmoid().numpy(), s, "sigmoid")
    silu = fastt.nn.functional.silu(x).numpy()
    big = s >= 1.2e-38  # below, x times a subnormal sigmoid
    err = np.abs(silu.astype(np.float64) - xd * s)
    assert (err[big] <= 5e-7 * np.abs(xd * s)[big]).all()
    assert (err[~big] <= 110 * 8e-45).all()


@pytest.mark.parametrize("dim", [1, 0])
def test_softmax_down_to_subnormals(dim):
    rng = np.random.default_rng(1)
    x = (rng.random((64, 96)) * -115).astype(np.float32)
    x[:, 3] = 0.0  # every row and column reaches 0 and -115
    x[5, :] = 0.0
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(dim, keepdims=True))
    ref = e / e.sum(dim, keepdims=True)
    got = fastt.softmax(fastt.from_numpy(x.copy()), dim).numpy()
    check_tails(got, ref, f"softmax dim {dim}")
