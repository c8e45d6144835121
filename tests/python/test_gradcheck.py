"""Gradients of every differentiable op, driven by grad_table.CASES: a
finite-difference check of a random vector-Jacobian product in float64
(first and second order), fastt.autograd.gradcheck itself, and the
gradients torch computes on the same inputs (float64 and float32): values,
shapes and dtypes (a gradient has its input's dtype, not the promoted one).
Rows with fixed-dtype inputs (dtype promotion: bfloat16, float16, int/bool
with float, float32 with float64) run the finite-difference checks only
when every input is exact enough (float64, integer, bool); torch checks
them all, at the tolerance of their lowest-precision dtype. To add an op,
add a row to grad_table.py."""
import itertools

import numpy as np
import pytest

import fastt
from grad_table import CASES, GradCase, I

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

EPS = 1e-6


# ------------------------------------------------------------- inputs --
_GRID = np.array([0.11 + 0.25 * k for k in range(12)])


def make_array(rng, spec):
    """float64 values in the spec's domain, away from the kinks the rows
    avoid (0 for abs/relu, integers for floor, clamp bounds, ties)."""
    shape = spec.shape
    n = int(np.prod(shape)) if shape else 1
    sign = rng.choice([-1.0, 1.0], size=n)
    if spec.dom == "any":
        v = sign * rng.uniform(0.2, 2.0, n)
    elif spec.dom == "pos":
        v = rng.uniform(0.5, 2.0, n)
    elif spec.dom == "unit":  # inside (-1, 1): asin, atanh, erfinv
        v = sign * rng.uniform(0.1, 0.8, n)
    elif spec.dom == "gt1":  # above 1: acosh
        v = rng.uniform(1.2, 3.0, n)
    elif spec.dom == "frac":
        v = rng.integers(-3, 4, n) + sign * rng.uniform(0.1, 0.4, n)
    elif spec.dom in ("big", "rem"):  # grid never within 0.1 of k*0.25
        v = sign * rng.choice(_GRID, n)
    elif spec.dom == "lo":
        v = -rng.choice([0.5, 0.75, 1.0], n)
    elif spec.dom == "hi":
        v = rng.choice([0.5, 0.75, 1.0], n)
    elif spec.dom == "div":
        v = sign * rng.choice([0.75, 1.5], n)
    elif spec.dom == "zeros":  # 'any' with exact zeros at fixed places
        v = sign * rng.uniform(0.5, 1.5, n)
        v[[k for k in (1, 6, 7) if k < n]] = 0.0
    elif spec.dom == "int":  # nonzero integers, for integer dtypes
        v = sign * rng.integers(1, 4, n)
    elif spec.dom == "ipos":
        v = rng.integers(1, 5, n).astype(np.float64)
    elif spec.dom == "bool":
        v = (np.arange(n) % 3 == 1).astype(np.float64)
    else:
        raise ValueError(spec.dom)
    return v.reshape(shape).astype(np.float64)


def build(L, arrays, specs, dtype, requires_grad=True):
    """Leaves in the spec's layout: 't' is a transposed view made a leaf,
    's' a stride-2 slice made a leaf (both non-contiguous)."""
    out = []
    for arr, spec in zip(arrays, specs):
        dt = getattr(L, spec.dtype) if spec.dtype else dtype
        if spec.dtype == "bool":
            arr = arr != 0
        if spec.layout == "t" and arr.ndim >= 2:
            base = L.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)),
                            dtype=dt)
            t = base.transpose(arr.ndim - 2, arr.ndim - 1)
        elif spec.layout == "s" and arr.ndim >= 1:
            wide = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2,),
                            dtype=arr.dtype)
            wide[..., ::2] = arr
            t = L.tensor(wide, dtype=dt)[..., ::2]
        else:
            t = L.tensor(arr, dtype=dt)
        if requires_grad and spec.grad:
            t.requires_grad_()
        out.append(t)
    return out


def outputs(r):
    rs = list(r) if isinstance(r, (tuple, list)) else [r]
    return [o for o in rs if o.is_floating_point()]


def arrays_for(case, seed=0):
    rng = np.random.default_rng(seed + sum(map(ord, case.name)))
    return [make_array(rng, s) for s in case.inputs]


def vectors_for(outs, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, tuple(o.shape)) for o in outs]


def to_np(t):
    return np.asarray(t.detach().double().numpy(), dtype=np.float64)


def mark(case, xfail=None):
    """A param for the row; xfail = (exception type, reason) makes it a
    strict xfail that only that exception satisfies."""
    xfail = case.xfail or xfail
    if xfail:
        raises, reason = xfail
        return pytest.param(case, id=case.name,
                            marks=pytest.mark.xfail(raises=raises,
                                                    reason=reason,
                                                    strict=True))
    return pytest.param(case, id=case.name)


# Fixed dtypes a float64 finite difference can check exactly.
EXACT = {None, "float64", "bool", "uint8", "int8", "int16", "int32", "int64"}


def exact(case):
    return all(s.dtype in EXACT for s in case.inputs)


# Per-dtype (rtol, atol) floors for the comparison with torch.
DTYPE_TOL = {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2),
             "float32": (1e-4, 1e-5)}


def torch_tol(case, dtype):
    """The row's tolerance for `dtype`, no tighter than its
    lowest-precision fixed dtype's."""
    rtol, atol = case.tol64 if dtype == "float64" else case.tol32
    for s in case.inputs:
        r, a = DTYPE_TOL.get(s.dtype, (0, 0))
        rtol, atol = max(rtol, r), max(atol, a)
    return max(rtol, 1e-6), max(atol, 1e-9)


PARAMS = [mark(c) for c in CASES if exact(c)]
GG_PARAMS = [mark(c, c.gg_xfail) for c in CASES if c.gradgrad and exact(c)]
# torch=False rows have nothing to compare with: not collected (a skip
# would fail under CI).
TORCH_PARAMS = [mark(c) for c in CASES if c.torch]


def diff_index(case):
    return [k for k, s in enumerate(case.inputs) if s.grad]


# ------------------------------------------------ finite differences --
def vjp_value(case, arrays, vs):
    """sum_o <v_o, o(x)> without recording."""
    with fastt.no_grad():
        xs = build(fastt, arrays, case.inputs, fastt.float64, False)
        outs = outputs(case.fn(fastt, *xs))
    return sum(float((to_np(o) * v).sum()) for o, v in zip(outs, vs))


def numeric_grads(f, arrays, which, eps=EPS):
    """Central differences of the scalar f(arrays) for the inputs `which`."""
    grads = []
    for k in which:
        g = np.zeros_like(arrays[k])
        for idx in itertools.product(*[range(d) for d in arrays[k].shape]):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            g[idx] = (f(plus) - f(minus)) / (2 * eps)
        grads.append(g)
    return grads


def analytic_grads(case, arrays, vs, create_graph=False):
    xs = build(fastt, arrays, case.inputs, fastt.float64)
    outs = outputs(case.fn(fastt, *xs))
    assert outs, "no floating output"
    which = diff_index(case)
    inputs = [xs[k] for k in which]
    gos = [fastt.tensor(v, dtype=o.dtype) for o, v in zip(outs, vs)]
    gs = fastt.autograd.grad(outs, inputs, gos, allow_unused=True,
                             create_graph=create_graph)
    return xs, inputs, gs


def assert_close(actual, expected, rtol, atol, what):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol,
                               err_msg=what)


@pytest.mark.parametrize("case", PARAMS)
def test_finite_difference(case: GradCase):
    arrays = arrays_for(case)
    with fastt.no_grad():
        probe = outputs(case.fn(
            fastt, *build(fastt, arrays, case.inputs, fastt.float64, False)))
    vs = vectors_for(probe, 1)
    xs, inputs, gs = analytic_grads(case, arrays, vs)
    which = diff_index(case)
    num = numeric_grads(lambda arr: vjp_value(case, arr, vs), arrays, which,
                        case.eps)
    for k, x, g, n in zip(which, inputs, gs, num):
        if g is None:
            g_np = np.zeros(tuple(x.shape))
        else:
            assert tuple(g.shape) == tuple(x.shape), (k, g.shape, x.shape)
            assert g.dtype == x.dtype
            g_np = to_np(g)
        assert_close(g_np, n, case.fd_tol[0], case.fd_tol[1],
                     f"{case.name}: input {k}")


@pytest.mark.parametrize("case", GG_PARAMS)
def test_double_backward(case: GradCase):
    """The gradient computed with create_graph=True is itself
    differentiable: check its vector-Jacobian product numerically."""
    arrays = arrays_for(case)
    with fastt.no_grad():
        probe = outputs(case.fn(
            fastt, *build(fastt, arrays, case.inputs, fastt.float64, False)))
    vs = vectors_for(probe, 1)
    which = diff_index(case)
    ws = [np.random.default_rng(2 + k).uniform(-1, 1, arrays[k].shape)
          for k in which]

    def first_order(arr):
        _, inputs, gs = analytic_grads(case, arr, vs, create_graph=True)
        return inputs, gs

    def value(arr):
        _, gs = first_order(arr)
        return sum(float((to_np(g) * w).sum())
                   for g, w in zip(gs, ws) if g is not None)

    inputs, gs = first_order(arrays)
    pairs = [(g, fastt.tensor(w)) for g, w in zip(gs, ws)
             if g is not None and g.requires_grad]
    if pairs:
        gg = fastt.autograd.grad([p[0] for p in pairs], inputs,
                                 [p[1] for p in pairs], allow_unused=True)
    else:
        gg = [None] * len(inputs)
    num = numeric_grads(value, arrays, which, case.eps)
    for k, x, g, n in zip(which, inputs, gg, num):
        g_np = np.zeros(tuple(x.shape)) if g is None else to_np(g)
        assert_close(g_np, n, 1e-3, 1e-5, f"{case.name}: input {k}")


@pytest.mark.parametrize("case", PARAMS)
def test_fastt_gradcheck(case: GradCase):
    """fastt.autograd.gradcheck (full Jacobian) on the row's inputs."""
    xs = build(fastt, arrays_for(case), case.inputs, fastt.float64)
    assert any(o.requires_grad for o in outputs(case.fn(fastt, *xs)))
    assert fastt.autograd.gradcheck(lambda *a: case.fn(fastt, *a), xs,
                                    eps=case.eps,
                                    atol=case.fd_tol[1] * 10,
                                    rtol=case.fd_tol[0] * 10)


# ------------------------------------------------------------ torch ---
@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", TORCH_PARAMS)
def test_matches_torch(case: GradCase, dtype):
    arrays = arrays_for(case, seed=7)
    xf = build(fastt, arrays, case.inputs, getattr(fastt, dtype))
    xt = build(torch, arrays, case.inputs, getattr(torch, dtype))
    of = outputs(case.fn(fastt, *xf))
    ot = outputs(case.fn(torch, *xt))
    assert len(of) == len(ot)
    rtol, atol = torch_tol(case, dtype)
    for a, b in zip(of, ot):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], \
            f"{case.name}: output dtype {a.dtype} vs torch {b.dtype}"
        assert_close(to_np(a), b.detach().double().numpy(), rtol, atol,
                     f"{case.name}: forward")
        assert a.requires_grad == b.requires_grad, case.name
    vs = vectors_for(ot, 3)
    which = diff_index(case)
    gf = fastt.autograd.grad(
        of, [xf[k] for k in which],
        [fastt.tensor(v, dtype=a.dtype) for a, v in zip(of, vs)],
        allow_unused=True)
    gt = torch.autograd.grad(
        ot, [xt[k] for k in which],
        [torch.tensor(v, dtype=b.dtype) for b, v in zip(ot, vs)],
        allow_unused=True)
    for k, a, b in zip(which, gf, gt):
        if b is None:
            assert a is None or not to_np(a).any(), f"{case.name}: {k}"
            continue
        assert a is not None, f"{case.name}: input {k} got no gradient"
        assert tuple(a.shape) == tuple(b.shape), \
            f"{case.name}: grad of input {k} has shape {a.shape}, torch's " \
            f"{b.shape}"
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], \
            f"{case.name}: grad of input {k} is {a.dtype}, torch's {b.dtype}"
        assert a.dtype == xf[k].dtype, \
            f"{case.name}: grad of input {k} is {a.dtype}, not {xf[k].dtype}"
        assert_close(to_np(a), b.double().numpy(), rtol, atol,
                     f"{case.name}: grad of input {k} ({dtype})")


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("case", TORCH_PARAMS)
def test_backward_accumulates_like_torch(case: GradCase):
    """loss.backward() twice (retain_graph) into .grad, non-leaf and leaf
    paths, vs torch: catches formulas that write into their inputs. The
    inputs that do not require grad (integer ones) get no .grad, and
    asking autograd.grad for them raises as in torch."""
    arrays = arrays_for(case, seed=11)
    xf = build(fastt, arrays, case.inputs, fastt.float64)
    xt = build(torch, arrays, case.inputs, torch.float64)
    of = outputs(case.fn(fastt, *xf))
    ot = outputs(case.fn(torch, *xt))
    vs = vectors_for(ot, 5)
    lf = sum((o * fastt.tensor(v)).sum() for o, v in zip(of, vs))
    lt = sum((o * torch.tensor(v)).sum() for o, v in zip(ot, vs))
    lf.backward(retain_graph=True)
    lf.backward()
    lt.backward(retain_graph=True)
    lt.backward()
    rtol, atol = (1e-7, 1e-9) if exact(case) else torch_tol(case, "float64")
    for k in diff_index(case):
        a, b = xf[k].grad, xt[k].grad
        if b is None:
            assert a is None or not to_np(a).any()
            continue
        assert a is not None, f"{case.name}: input {k} has no .grad"
        assert a.dtype == xf[k].dtype, (case.name, k, a.dtype)
        assert_close(to_np(a), b.double().numpy(), rtol, atol,
                     f"{case.name}: .grad of input {k}")
    for k, s in enumerate(case.inputs):
        if s.grad:
            continue
        assert xf[k].grad is None and not xf[k].requires_grad, (case.name, k)
        if xf[k].dtype.is_floating_point:
            continue
        with pytest.raises(RuntimeError, match="only Tensors of floating"):
            xf[k].requires_grad_()
        out = outputs(case.fn(fastt, *xf))[0]
        with pytest.raises(RuntimeError, match="does not require grad"):
            fastt.autograd.grad(out.sum(), [xf[k]])


# -------------------------------------------- gradcheck's own checks --
def test_gradcheck_detects_wrong_gradient():
    x = fastt.randn(3, dtype=fastt.float64, requires_grad=True)

    def bad(t):  # forward of 2t, backward of t: detach half of it
        return t + t.detach()

    with pytest.raises(RuntimeError):
        fastt.autograd.gradcheck(bad, (x,))
    assert fastt.autograd.gradcheck(bad, (x,), raise_exception=False) is False


def test_gradcheck_accepts_correct_gradient_many_outputs():
    x = fastt.randn(3, 4, dtype=fastt.float64, requires_grad=True)
    assert fastt.autograd.gradcheck(lambda t: (t * t).sum(0), (x,))


def test_gradcheck_noncontiguous_leaf():
    base = fastt.randn(4, 3, dtype=fastt.float64)
    x = base.t().requires_grad_()
    assert not x.is_contiguous() and x.is_leaf
    assert fastt.autograd.gradcheck(lambda t: t.exp() * 2, (x,))


def test_gradcheck_output_without_grad_must_be_constant():
    """An output that does not record must have a zero numerical
    derivative (torch checks this too), else gradcheck fails."""
    x = fastt.randn(3, dtype=fastt.float64, requires_grad=True)
    assert not fastt.autograd.gradcheck(lambda t: t.detach() * 2, (x,),
                                        raise_exception=False)


def test_gradcheck_leaves_inputs_unchanged():
    x = fastt.randn(2, 3, dtype=fastt.float64, requires_grad=True)
    before = x.detach().clone()
    fastt.autograd.gradcheck(lambda t: t.sin(), (x,))
    assert (x.detach() == before).all().item()
    assert x.grad is None


def test_table_has_unique_names():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert isinstance(CASES[0].inputs[0], I)
