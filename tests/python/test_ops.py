"""Forward tests driven by op_table.OPS / REDUCTIONS: every op, every
dtype it supports (and mixed dtype pairs for binary ops), 0-d / empty /
broadcast / non-contiguous / 45x65 inputs, checked against NumPy and torch:
the result dtype first (op_table.result_dtype, torch's promotion rules,
itself checked against torch), then the values, never cast to fit."""
import warnings

import numpy as np
import pytest

import fastt
from op_table import (ALL, COMPLEX, DTYPE_DIVERGENCES, OPS, REDUCTIONS,
                      SHAPES_BINARY, SHAPES_UNARY, TOL, common_dtype,
                      dtype_cases, promote, random_array, result_dtype,
                      to_fastt)

try:
    import torch
except ImportError:
    torch = None

FLOATS = ("float16", "bfloat16", "float32", "float64")


def _samples(op, dtypes, seed=0):
    """Yields (case id, list of fastt inputs) for one op and its input
    dtypes (one per input)."""
    rng = np.random.default_rng(seed)
    shapes = SHAPES_UNARY if op.arity == 1 else SHAPES_BINARY

    def array(i, shape):
        return random_array(rng, shape, dtypes[i], op.domain,
                            nonzero=(op.nonzero_rhs and i == 1))

    for shape in shapes:
        shp = (shape,) if op.arity == 1 else shape
        yield f"{shp}", [to_fastt(array(i, s), dtypes[i])
                         for i, s in enumerate(shp)]
    # non-contiguous: transposed / strided views of bigger arrays
    yield "transposed 45x65", [to_fastt(array(i, (65, 45)), dtypes[i]).t()
                               for i in range(op.arity)]
    yield "strided slice", [to_fastt(array(i, (10, 14)),
                                     dtypes[i])[::2, 1::3]
                            for i in range(op.arity)]


def _as_numpy(t):
    """The values of t as NumPy sees them (bfloat16 via float32)."""
    if t.dtype == fastt.bfloat16:
        return t.float().numpy()
    return t.numpy()


def _reference(op, inputs):
    """NumPy's values: in float64 when the op computes in floating point
    (the result dtype is checked separately, against torch's rules), else
    in torch's common dtype (uint8 (3,) - int8 () wraps in uint8, where
    NumPy would widen to int16)."""
    arrays = [_as_numpy(t) for t in inputs]
    common = common_dtype([_name(t.dtype) for t in inputs],
                          [t.ndim for t in inputs])
    if common in ("complex64", "complex128"):
        arrays = [a.astype(np.complex128) for a in arrays]
    elif op.result == "float" or common in FLOATS:
        arrays = [a.astype(np.float64) for a in arrays]
    else:
        arrays = [a.astype(common) for a in arrays]
    with np.errstate(all="ignore"):
        return np.asarray(op.ref(*arrays))


def _name(dtype):
    return str(dtype).split(".")[-1]


def _compare(out, expected, floor=None):
    """Values only: the caller has checked out's dtype. Integer and bool
    results must be equal as numbers (expected is not cast to out's dtype:
    a cast would wrap or truncate a wrong value into a right one). `floor`:
    (rtol, atol) minimums (an OpInfo's torch_tol)."""
    got = _as_numpy(out)
    if out.dtype.is_floating_point or out.dtype.is_complex:
        rtol, atol = TOL[_name(out.dtype)]
        if floor:
            rtol, atol = max(rtol, floor[0]), max(atol, floor[1])
        wide = np.complex128 if out.dtype.is_complex else np.float64
        np.testing.assert_allclose(got.astype(wide), expected.astype(wide),
                                   rtol=rtol, atol=atol, equal_nan=True)
    else:
        assert expected.dtype.kind in "biuf", expected.dtype
        if expected.dtype.kind == "f":
            assert np.isfinite(expected).all() and \
                (expected == np.round(expected)).all(), expected
        np.testing.assert_array_equal(got, expected)


CASES = [(op, dts) for op in OPS for dts in dtype_cases(op)]
IDS = [f"{o.name}-{'-'.join(d) if len(set(d)) > 1 else d[0]}"
       for o, d in CASES]


@pytest.mark.parametrize("op,dtypes", CASES, ids=IDS)
def test_op_against_numpy(op, dtypes):
    for case, inputs in _samples(op, dtypes):
        out = op.fastt_fn(*inputs)
        want = result_dtype(op, dtypes, [t.ndim for t in inputs])
        assert _name(out.dtype) == want, \
            f"{op.name} {dtypes} {case}: dtype {out.dtype}, torch's rules " \
            f"give {want}"
        expected = _reference(op, inputs)
        assert tuple(out.shape) == expected.shape, case
        try:
            _compare(out, expected)
        except AssertionError as e:
            raise AssertionError(f"{op.name} {dtypes} {case}: {e}") from None


def _to_torch(t):
    return torch.from_dlpack(t)


def _torch_takes(op, dtypes):  # not a dtype only fastt accepts
    fastt_only = DTYPE_DIVERGENCES.get(op.name, (frozenset(),))[0]
    return not set(dtypes) & fastt_only


# Values torch computes differently, by (OpInfo name, input dtypes):
# strict xfails (a fix fails as XPASS until its entry goes).
TORCH_VALUE_XFAILS = {
    (name, dts): "torch rounds the 16-bit quotient before truncating "
    "(trunc(-22.995) gives -23); fastt truncates the float32 quotient "
    "(-22, as NumPy): to decide in kernels/functors.h DivTrunc"
    for name, dts in [("div_trunc", ("float16", "float16")),
                      ("div_trunc", ("bfloat16", "bfloat16")),
                      ("div_trunc", ("int16", "bfloat16"))]}


def _torch_case(op, dtypes, case_id):
    why = TORCH_VALUE_XFAILS.get((op.name, tuple(dtypes)))
    marks = [pytest.mark.xfail(raises=AssertionError, strict=True,
                               reason=why)] if why else []
    return pytest.param(op, dtypes, id=case_id, marks=marks)


TORCH_CASES = [_torch_case(o, d, i) for (o, d), i in zip(CASES, IDS)
               if _torch_takes(o, d)]


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("op,dtypes", TORCH_CASES)
def test_op_against_torch(op, dtypes):
    tfn = _torch_fn(op)
    for case, inputs in _samples(op, dtypes, seed=1):
        out = op.fastt_fn(*inputs)
        ref = tfn(*[_to_torch(t) for t in inputs], **op.torch_kwargs)
        if op.torch_in_float64 and ref.dtype == torch.float32:
            # torch's float32 kernel loses digits (a float32 recurrence);
            # fastt's computes in double: compare with torch's float64
            ref = tfn(*[_to_torch(t).double() for t in inputs],
                      **op.torch_kwargs).float()
        # The table's rule is torch's (so the NumPy test checks torch's
        # dtypes), and fastt gives it.
        want = result_dtype(op, dtypes, [t.ndim for t in inputs])
        assert _name(ref.dtype) == want, \
            f"{op.name} {dtypes} {case}: op_table says {want}, torch " \
            f"gives {ref.dtype}"
        assert _name(out.dtype) == _name(ref.dtype), \
            f"{op.name} {dtypes} {case}: dtype {out.dtype} vs torch " \
            f"{ref.dtype}"
        expected = (ref.float() if ref.dtype == torch.bfloat16
                    else ref).numpy()
        try:
            _compare(out, expected, op.torch_tol)
        except AssertionError as e:
            raise AssertionError(f"{op.name} {dtypes} {case}: {e}") from None


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_promotion_rule_is_torchs():
    """op_table.promote, which the NumPy test's dtypes come from, is
    torch.promote_types on every pair of dtypes."""
    add = next(op for op in OPS if op.name == "add")
    for a in ALL + COMPLEX:
        for b in ALL + COMPLEX:
            ta, tb = getattr(torch, a), getattr(torch, b)
            assert promote(a, b) == _name(torch.promote_types(ta, tb)), \
                (a, b)
            # and with 0-d operands (torch.result_type's categories)
            for shape_a, shape_b in [((2,), ()), ((), (2,)), ((), ())]:
                ref = torch.result_type(torch.zeros(shape_a, dtype=ta),
                                        torch.zeros(shape_b, dtype=tb))
                if ref == torch.complex32:  # no fastt dtype: complex64
                    continue
                got = result_dtype(add, (a, b), [len(shape_a), len(shape_b)])
                assert got == _name(ref), (a, shape_a, b, shape_b)


def _torch_fn(op):
    tfn = torch
    for part in (op.torch_name or op.name).split("."):
        tfn = getattr(tfn, part)
    return tfn


BINARY_OPS = [o for o in OPS if o.arity == 2 and not o.name.startswith("__")]


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("op", BINARY_OPS, ids=[o.name for o in BINARY_OPS])
def test_python_number_other_as_torch(op):
    """op(tensor, number) works where torch's does and is the TypeError
    torch's is where `other` must be a tensor (the table's `scalar`, which
    the CUDA suite's scalar cases follow)."""
    dtype = "int64" if "int64" in op.dtypes else op.dtypes[-1]
    t = to_fastt(np.ones(3), dtype)
    s = 3 if dtype == "int64" else 1.5
    try:
        _torch_fn(op)(_to_torch(t), s, **op.torch_kwargs)
        torch_takes = True
    except TypeError:
        torch_takes = False
    assert op.scalar == torch_takes, \
        f"{op.name}: op_table scalar={op.scalar}, torch takes a number: " \
        f"{torch_takes}"
    if op.scalar:
        op.fastt_fn(t, s)
    else:
        with pytest.raises(TypeError):
            op.fastt_fn(t, s)


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
            _compare(out, exp)


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


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("red,dtype", RED_CASES,
                         ids=[f"{r[0]}-{d}" for r, d in RED_CASES])
def test_reduction_against_torch(red, dtype):
    """The same call on torch's tensor (the rows are written against the
    shared API): the result dtype (int32.sum() is int64, argmax is int64,
    ...), shape and values."""
    name, ffn, _, _ = red
    rng = np.random.default_rng(6)
    for shape in [(45, 65), (2, 3), (1, 1)]:
        arr = random_array(rng, shape, dtype, (-2, 2))
        for t in (to_fastt(arr, dtype),
                  to_fastt(np.ascontiguousarray(arr.T), dtype).t()):
            out = ffn(t)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # var of one element
                ref = ffn(_to_torch(t))
            assert _name(out.dtype) == _name(ref.dtype), \
                f"{name} {dtype}: dtype {out.dtype} vs torch {ref.dtype}"
            assert tuple(out.shape) == tuple(ref.shape), (name, shape)
            exp = (ref.float() if ref.dtype == torch.bfloat16 else ref)
            got = _as_numpy(out)
            if out.dtype.is_floating_point:
                rtol, atol = TOL[_name(out.dtype)]
                if dtype in ("float16", "bfloat16"):
                    rtol, atol = rtol * 10, atol * 50
                np.testing.assert_allclose(got.astype(np.float64),
                                           exp.double().numpy(), rtol=rtol,
                                           atol=atol)
            else:
                np.testing.assert_array_equal(got, exp.numpy())


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
