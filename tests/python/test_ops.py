"""Forward tests driven by op_table.OPS / REDUCTIONS: every op, every
dtype it supports, 0-d / empty / broadcast / non-contiguous / 45x65 inputs,
checked against NumPy and (when installed) torch, values and dtypes."""
import warnings

import numpy as np
import pytest

import fastt
from op_table import (OPS, REDUCTIONS, SHAPES_BINARY, SHAPES_UNARY, TOL,
                      random_array, to_fastt)

try:
    import torch
except ImportError:
    torch = None

FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


def _samples(op, dtype, seed=0):
    """Yields (case id, list of fastt inputs) for one op and dtype."""
    rng = np.random.default_rng(seed)
    shapes = SHAPES_UNARY if op.arity == 1 else SHAPES_BINARY
    for shape in shapes:
        shp = (shape,) if op.arity == 1 else shape
        arrays = [random_array(rng, s, dtype, op.domain,
                               nonzero=(op.nonzero_rhs and i == 1))
                  for i, s in enumerate(shp)]
        yield f"{shp}", [to_fastt(a, dtype) for a in arrays]
    # non-contiguous: transposed / strided views of bigger arrays
    arrays = []
    for i in range(op.arity):
        big = random_array(rng, (65, 45), dtype, op.domain,
                           nonzero=(op.nonzero_rhs and i == 1))
        arrays.append(to_fastt(big, dtype).t())
    yield "transposed 45x65", arrays
    arrays = []
    for i in range(op.arity):
        big = random_array(rng, (10, 14), dtype, op.domain,
                           nonzero=(op.nonzero_rhs and i == 1))
        arrays.append(to_fastt(big, dtype)[::2, 1::3])
    yield "strided slice", arrays


def _as_numpy(t):
    """The values of t as NumPy sees them (bfloat16 via float32)."""
    if t.dtype == fastt.bfloat16:
        return t.float().numpy()
    return t.numpy()


def _reference(op, inputs):
    arrays = [_as_numpy(t) for t in inputs]
    if arrays and arrays[0].dtype.kind == "f":
        arrays = [a.astype(np.float64) for a in arrays]
    with np.errstate(all="ignore"):
        return np.asarray(op.ref(*arrays))


def _compare(out, expected, dtype_name):
    got = _as_numpy(out)
    if out.dtype.is_floating_point:
        rtol, atol = TOL[str(out.dtype).split(".")[1]]
        np.testing.assert_allclose(got.astype(np.float64),
                                   expected.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected.astype(got.dtype))


CASES = [(op, dt) for op in OPS for dt in op.dtypes]


@pytest.mark.parametrize("op,dtype", CASES,
                         ids=[f"{o.name}-{d}" for o, d in CASES])
def test_op_against_numpy(op, dtype):
    for case, inputs in _samples(op, dtype):
        out = op.fastt_fn(*inputs)
        expected = _reference(op, inputs)
        assert tuple(out.shape) == expected.shape, case
        try:
            _compare(out, expected, dtype)
        except AssertionError as e:
            raise AssertionError(f"{op.name} {dtype} {case}: {e}") from None


def _to_torch(t):
    return torch.from_dlpack(t)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("op,dtype", CASES,
                         ids=[f"{o.name}-{d}" for o, d in CASES])
def test_op_against_torch(op, dtype):
    tfn = torch
    for part in (op.torch_name or op.name).split("."):
        tfn = getattr(tfn, part)
    for case, inputs in _samples(op, dtype, seed=1):
        out = op.fastt_fn(*inputs)
        ref = tfn(*[_to_torch(t) for t in inputs])
        assert str(out.dtype).split(".")[1] == str(ref.dtype).split(".")[1], \
            f"{op.name} {dtype} {case}: dtype {out.dtype} vs torch {ref.dtype}"
        expected = (ref.float() if ref.dtype == torch.bfloat16 else ref).numpy()
        try:
            _compare(out, expected, dtype)
        except AssertionError as e:
            raise AssertionError(f"{op.name} {dtype} {case}: {e}") from None


SCALARS = [2, -3, 2.5, True]
SCALAR_OPS = ["add", "sub", "mul", "div", "maximum", "eq", "lt", "pow",
              "remainder"]


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("name", SCALAR_OPS)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64",
                                   "float16", "float32", "float64"])
def test_scalar_promotion_matches_torch(name, dtype):
    """tensor op python-scalar and scalar op tensor: dtype and values."""
    rng = np.random.default_rng(3)
    arr = random_array(rng, (5,), dtype, (1, 4))
    t = to_fastt(arr, dtype)
    tt = torch.from_dlpack(t)
    for s in SCALARS:
        for flip in (False, True):
            f = getattr(fastt, name)
            g = getattr(torch, name)
            try:
                ref = g(s, tt) if flip else g(tt, s)
            except (RuntimeError, TypeError, NotImplementedError):
                continue  # torch rejects it too
            if flip and name not in ("add", "mul", "maximum", "eq", "lt"):
                continue
            if flip:
                out = {"add": lambda: s + t, "mul": lambda: s * t,
                       "eq": lambda: s == t, "lt": lambda: s < t,
                       "maximum": lambda: f(t, s)}[name]()
            else:
                out = f(t, s)
            assert str(out.dtype) == "fastt." + str(ref.dtype).split(".")[1], \
                (name, dtype, s, flip)
            exp = (ref.float() if ref.dtype == torch.bfloat16 else ref).numpy()
            _compare(out, exp, dtype)


RED_CASES = [(r, dt) for r in REDUCTIONS for dt in r[3]]


@pytest.mark.parametrize("red,dtype", RED_CASES,
                         ids=[f"{r[0]}-{d}" for r, d in RED_CASES])
def test_reduction_against_numpy(red, dtype):
    name, ffn, ref, _ = red
    rng = np.random.default_rng(5)
    for shape in [(45, 65), (2, 3), (1, 1)]:
        arr = random_array(rng, shape, dtype, (-2, 2))
        for t in (to_fastt(arr, dtype),
                  to_fastt(np.ascontiguousarray(arr.T), dtype).t()):
            out = ffn(t)
            a = _as_numpy(t)
            if a.dtype.kind == "f":
                a = a.astype(np.float64)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = np.asarray(ref(a))
            assert tuple(out.shape) == expected.shape, (name, shape)
            if out.dtype.is_floating_point:
                rtol, atol = TOL[str(out.dtype).split(".")[1]]
                if dtype in ("float16", "bfloat16"):
                    rtol, atol = rtol * 10, atol * 50
                np.testing.assert_allclose(_as_numpy(out).astype(np.float64),
                                           expected, rtol=rtol, atol=atol)
            else:
                np.testing.assert_array_equal(_as_numpy(out), expected)


def test_reduction_dtype_rules():
    assert fastt.tensor([1, 2, 3], dtype=fastt.int32).sum().dtype == \
        fastt.int64
    assert fastt.tensor([True, True]).sum().item() == 2
    assert fastt.ones(3).sum(dtype=fastt.float64).dtype == fastt.float64


@pytest.mark.parametrize("shape_a,shape_b", [((4, 4), (4, 4)), ((3,), (3,)),
                                             ((2, 3), (3,)), ((3,), (3, 5)),
                                             ((2, 4, 3), (3, 5)),
                                             ((45, 65), (65, 7))])
def test_matmul(shape_a, shape_b):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    out = fastt.from_numpy(a) @ fastt.from_numpy(b)
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    out2 = fastt.matmul(fastt.from_numpy(a), fastt.from_numpy(b))
    np.testing.assert_allclose(out2.numpy(), a @ b, rtol=1e-4, atol=1e-4)
