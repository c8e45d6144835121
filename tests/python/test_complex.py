"""complex64 / complex128 (issue 18, first part): the dtypes, promotion,
construction, printing, NumPy / DLPack interop, the real views
(view_as_real, view_as_complex, real, imag), conj / angle / complex /
polar, arithmetic with tensors and Python complex numbers, sums and means,
and the errors where complex support has not come yet. Values against
torch; the op-table rows with complex kernels (neg, add, sub, mul, div,
eq, ne) also run in test_ops.py."""
import warnings

import numpy as np
import pytest

import fastt

torch = pytest.importorskip("torch")

CDTYPES = ["complex64", "complex128"]
REAL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
        "bfloat16", "float32", "float64"]


def F(name):
    return getattr(fastt, name)


def T(name):
    return getattr(torch, name)


def crand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape)
    return a.astype(dtype)


def tt(t):
    """fastt tensor -> torch tensor (through DLPack, a copy-free view)."""
    return torch.from_dlpack(t)


def close(got, want, rtol=None, atol=None):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], \
        (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    tol = {"complex64": 1.3e-6, "float32": 1.3e-6}.get(
        str(want.dtype).split(".")[-1], 1e-12)
    np.testing.assert_allclose(np.asarray(got.tolist()),
                               np.asarray(want.tolist()),
                               rtol=rtol or tol, atol=atol or tol,
                               equal_nan=True)


# ---- the dtypes ------------------------------------------------------------
def test_dtype_objects():
    assert fastt.cfloat is fastt.complex64
    assert fastt.cdouble is fastt.complex128
    for name, size, real in [("complex64", 8, fastt.float32),
                             ("complex128", 16, fastt.float64)]:
        d = F(name)
        assert d.is_complex and not d.is_floating_point and d.is_signed
        assert d.itemsize == size
        assert d.to_real() is real and real.to_complex() is d
        assert repr(d) == f"fastt.{name}"
    assert not fastt.float32.is_complex
    with pytest.raises(RuntimeError):
        fastt.int32.to_complex()


@pytest.mark.parametrize("a", REAL + CDTYPES)
@pytest.mark.parametrize("b", CDTYPES)
def test_promote_types_is_torchs(a, b):
    got = fastt.promote_types(F(a), F(b))
    want = torch.promote_types(T(a), T(b))
    assert str(got) == str(want).replace("torch", "fastt")
    got = fastt.promote_types(F(b), F(a))
    assert str(got) == str(want).replace("torch", "fastt")


# float16 / bfloat16 with a Python complex: torch gives complex32, which
# fastt does not have (test_complex_scalar_on_half_gives_complex64).
RESULT_CASES = [(d, s) for d in REAL + CDTYPES
                for s in [1j, 2.5 + 0.5j, 2, 1.5, True]
                if not (d in ("float16", "bfloat16") and
                        isinstance(s, complex))]


@pytest.mark.parametrize("dtype,scalar", RESULT_CASES)
def test_result_type_with_python_complex(dtype, scalar):
    """tensor op Python number, 0-d and dimensioned tensors, as torch."""
    for shape in [(3,), ()]:
        a = fastt.ones(shape, dtype=F(dtype))
        ta = torch.ones(shape, dtype=T(dtype))
        want = torch.result_type(ta, scalar)
        got = fastt.result_type(a, scalar)
        assert str(got) == str(want).replace("torch", "fastt"), shape
        if dtype != "bool" or not isinstance(scalar, bool):
            assert str((a + scalar).dtype) == str(want).replace("torch",
                                                                "fastt")


def test_complex_scalar_on_half_gives_complex64():
    """torch's complex32 (ComplexHalf) has no fastt counterpart: a float16
    or bfloat16 tensor with a complex number computes in complex64."""
    x = fastt.tensor([1.0, 2.0], dtype=fastt.float16)
    r = x * 1j
    assert r.dtype == fastt.complex64
    assert r.tolist() == [1j, 2j]
    # a 0-d complex128 tensor too (torch: complex32)
    assert (x + fastt.tensor(1j, dtype=fastt.complex128)).dtype == \
        fastt.complex64


def test_default_dtype_sets_the_default_complex():
    assert fastt.tensor([1j]).dtype == fastt.complex64
    old = fastt.get_default_dtype()
    fastt.set_default_dtype(fastt.float64)
    try:
        assert fastt.tensor([1j]).dtype == fastt.complex128
        assert fastt.tensor(1j).dtype == fastt.complex128
        assert (fastt.ones(2, dtype=fastt.int64) * 1j).dtype == \
            fastt.complex128
        assert repr(fastt.tensor([1j])) == "tensor([0.+1.j])"
    finally:
        fastt.set_default_dtype(old)


# ---- construction and conversion --------------------------------------------
@pytest.mark.parametrize("data", [
    [1 + 2j, 3 - 4j], 1j, [[1, 2j], [3.5, True]], [1j, np.float64(2)],
    [np.complex64(1 + 1j), 2], [np.complex128(1 + 1j)], [0j],
])
def test_tensor_infers_complex(data):
    got, want = fastt.tensor(data), torch.tensor(data)
    close(got, want)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_tensor_with_complex_dtype(dtype):
    for data in ([1, 2, 3], [1.5, -2.0], [1 + 1j, 2], 3, 2.5j):
        close(fastt.tensor(data, dtype=F(dtype)),
              torch.tensor(data, dtype=T(dtype)))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_factories(dtype):
    close(fastt.zeros(2, 3, dtype=F(dtype)), torch.zeros(2, 3, dtype=T(dtype)))
    close(fastt.ones(4, dtype=F(dtype)), torch.ones(4, dtype=T(dtype)))
    close(fastt.full((2, 2), 1 - 2j, dtype=F(dtype)),
          torch.full((2, 2), 1 - 2j, dtype=T(dtype)))
    close(fastt.full((3,), 1 - 2j), torch.full((3,), 1 - 2j))
    z = fastt.empty(5, dtype=F(dtype)).fill_(2 + 3j)
    assert z.tolist() == [2 + 3j] * 5
    assert fastt.zeros_like(z).tolist() == [0j] * 5


CAST_PAIRS = [(s, d) for s in REAL + CDTYPES for d in REAL + CDTYPES
              if s in CDTYPES or d in CDTYPES]


@pytest.mark.parametrize("src,dst", CAST_PAIRS)
def test_casts_as_torch(src, dst):
    """Every dtype to and from complex (complex to real: the real part;
    to bool: either part nonzero), contiguous and strided."""
    if src in CDTYPES:
        # parts in uint8's range too: negative floats to uint8 differ
        z = crand((4, 6), src, seed=1) + (3 + 3j)
        z[0, :3] = [0, 1j, 2]
        a, ta = fastt.tensor(z), torch.tensor(z)
    else:
        a = fastt.arange(24).reshape(4, 6).to(F(src))
        ta = torch.arange(24).reshape(4, 6).to(T(src))
    for x, tx in [(a, ta), (a.t(), ta.t()), (a[:, ::2], ta[:, ::2])]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: "discards the imag"
            want = tx.to(T(dst))
        got = x.to(F(dst))
        assert got.dtype == F(dst)
        np.testing.assert_array_equal(
            np.asarray(got.float().tolist() if dst == "bfloat16"
                       else got.tolist()),
            np.asarray(want.float().tolist() if dst == "bfloat16"
                       else want.tolist()))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_clone_contiguous_and_transposed_copies(dtype):
    z = fastt.tensor(crand((33, 17), dtype))
    t = z.t().contiguous()
    assert t.is_contiguous()
    assert t.tolist() == [list(r) for r in zip(*z.tolist())]
    assert z.clone().tolist() == z.tolist()
    big = fastt.tensor(crand((70, 90), dtype))
    assert big.t().contiguous().tolist() == \
        [list(r) for r in zip(*big.tolist())]
    y = fastt.zeros(17, 33, dtype=F(dtype))
    y.copy_(z.t())
    assert y.tolist() == t.tolist()


@pytest.mark.parametrize("dtype", CDTYPES)
def test_cat_and_stack(dtype):
    a, b = crand((2, 3), dtype, 1), crand((4, 3), dtype, 2)
    close(fastt.cat([fastt.tensor(a), fastt.tensor(b)]),
          torch.cat([torch.tensor(a), torch.tensor(b)]))
    close(fastt.stack([fastt.tensor(a), fastt.tensor(a)], 2),
          torch.stack([torch.tensor(a), torch.tensor(a)], 2))
    close(fastt.cat([fastt.tensor(a), fastt.ones(1, 3)]),  # promoted
          torch.cat([torch.tensor(a), torch.ones(1, 3)]))


def test_item_and_tolist_give_python_complex():
    z = fastt.tensor([[1 + 2j, -3j]])
    assert z.tolist() == [[1 + 2j, -3j]]
    assert isinstance(z[0, 0].item(), complex)
    assert z[0, 1].item() == -3j
    assert complex(z[0, 0]) == 1 + 2j


# ---- printing ----------------------------------------------------------------
@pytest.mark.parametrize("data,dtype", [
    ([1 + 2j, 3 - 4j], "complex64"),
    ([1.5 + 2j, -3.25 - 4j, 0j], "complex64"),
    ([1e-5 + 1e5j, 2j], "complex64"),
    ([[1 + 1j, 2], [3j, -4 - 4j]], "complex128"),
    (2 - 3j, "complex64"),
    ([float("nan") + 1j, float("inf") - 1j], "complex128"),
    ([0.1 + 0.2j] * 30, "complex64"),
    ([], "complex64"),
])
def test_repr_is_torchs(data, dtype):
    got = repr(fastt.tensor(data, dtype=F(dtype)))
    want = repr(torch.tensor(data, dtype=T(dtype))).replace("torch.",
                                                            "fastt.")
    assert got == want


def test_repr_summarized_is_torchs():
    z = crand((40, 40), "complex64", seed=3)
    got = repr(fastt.tensor(z))
    want = repr(torch.tensor(z))
    assert got == want


# ---- NumPy and DLPack ---------------------------------------------------------
@pytest.mark.parametrize("dtype", CDTYPES)
def test_numpy_round_trip_shares_memory(dtype):
    a = crand((3, 4), dtype)
    t = fastt.from_numpy(a)
    assert t.dtype == F(dtype)
    a[0, 0] = 7 + 7j
    assert t[0, 0].item() == 7 + 7j
    b = t.numpy()
    assert b.dtype == np.dtype(dtype)
    b[1, 1] = -1j
    assert t[1, 1].item() == -1j
    np.testing.assert_array_equal(np.asarray(t), a)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_dlpack_both_ways(dtype):
    t = fastt.tensor(crand((2, 5), dtype))
    x = torch.from_dlpack(t)
    assert x.dtype == T(dtype)
    assert x.tolist() == t.tolist()
    back = fastt.from_dlpack(torch.tensor(crand((4,), dtype)))
    assert back.dtype == F(dtype)


# ---- the real views -------------------------------------------------------------
@pytest.mark.parametrize("dtype", CDTYPES)
def test_view_as_real_and_back(dtype):
    z = fastt.tensor(crand((3, 4), dtype))
    r = fastt.view_as_real(z)
    assert r.shape == (3, 4, 2) and r.dtype == z.dtype.to_real()
    assert r.stride() == (8, 2, 1)
    close(r, torch.view_as_real(tt(z)))
    r[0, 0, 1] = 9.0  # a view: writes reach z
    assert z[0, 0].item().imag == 9.0
    back = fastt.view_as_complex(r)
    assert back.shape == (3, 4) and back.tolist() == z.tolist()
    # strided complex views
    zt = z.t()[1:]
    close(fastt.view_as_real(zt), torch.view_as_real(tt(z).t()[1:]))
    x = fastt.tensor(np.arange(24.0).reshape(3, 4, 2), dtype=z.dtype.to_real())
    close(fastt.view_as_complex(x[1:]),
          torch.view_as_complex(tt(x)[1:]))


def test_view_as_complex_errors_are_torchs():
    cases = [lambda m: m.ones(3, 3), lambda m: m.ones(3, 2, dtype=m.int32),
             lambda m: m.ones(2, 3).t(), lambda m: m.ones(3, 6)[:, 1::2],
             lambda m: m.ones(7)[1:].view(3, 2),
             lambda m: m.ones(3, 5)[:, 1:3], lambda m: m.ones(())]
    for make in cases:
        with pytest.raises(RuntimeError) as want:
            torch.view_as_complex(make(torch))
        with pytest.raises(RuntimeError) as got:
            fastt.view_as_complex(make(fastt))
        # torch also views half as complex32, which fastt does not have
        want_msg = str(want.value).split("\n")[0].replace("half, ", "")
        assert str(got.value) == want_msg
    with pytest.raises(RuntimeError,
                       match="view_as_real is only supported for complex"):
        fastt.view_as_real(fastt.ones(2))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_real_imag_are_views(dtype):
    a = crand((2, 3), dtype)
    z, tz = fastt.tensor(a), torch.tensor(a)
    close(z.real, tz.real)
    close(z.imag, tz.imag)
    close(fastt.real(z), torch.real(tz))
    close(fastt.imag(z), torch.imag(tz))
    z.imag.mul_(0)
    assert z.tolist() == [[complex(v.real, 0) for v in r] for r in a]
    z.real = fastt.ones(2, 3, dtype=z.dtype.to_real())
    assert all(v.real == 1 for r in z.tolist() for v in r)
    z.imag = 2.0
    assert all(v == 1 + 2j for r in z.tolist() for v in r)
    x = fastt.ones(3)
    assert fastt.real(x) is x or fastt.real(x).tolist() == x.tolist()
    assert x.real.tolist() == [1.0] * 3
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        x.imag
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        fastt.imag(x)


# ---- abs, conj, angle, complex, polar, is_complex ---------------------------------
@pytest.mark.parametrize("dtype", CDTYPES)
def test_abs(dtype):
    big = 1e200 if dtype == "complex128" else 1e30
    a = crand((4, 5), dtype)
    a[0, :4] = [0, big + big * 1j, 1e-30j, float("inf") + 1j]
    z, tz = fastt.tensor(a), torch.tensor(a)
    close(z.abs(), tz.abs())
    close(fastt.abs(z.t()), torch.abs(tz.t()))
    close(abs(z), abs(tz))



@pytest.mark.parametrize("dtype", CDTYPES)
def test_conj_angle(dtype):
    a = crand((4, 5), dtype)
    a[0, :4] = [0, -1, 1j, -0.0 - 1j]
    z, tz = fastt.tensor(a), torch.tensor(a)
    close(fastt.conj(z), torch.conj(tz).resolve_conj())
    close(z.conj(), tz.conj().resolve_conj())
    close(fastt.conj_physical(z), torch.conj_physical(tz))
    close(fastt.angle(z), torch.angle(tz))
    close(z.t().angle(), tz.t().angle())
    assert not fastt.is_conj(fastt.conj(z))
    assert fastt.resolve_conj(z) is z
    w = z.clone()
    w.conj_physical_()
    close(w, torch.conj_physical(tz))
    assert fastt.is_complex(z) and z.is_complex()
    assert not fastt.ones(2).is_complex()
    x = fastt.ones(2)
    assert fastt.conj(x) is x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_and_polar(dtype):
    rng = np.random.default_rng(2)
    re, im = rng.standard_normal((3, 1)), rng.standard_normal((4,))
    a, b = fastt.tensor(re, dtype=F(dtype)), fastt.tensor(im, dtype=F(dtype))
    ta, tb = tt(a), tt(b)
    close(fastt.complex(a, b), torch.complex(ta, tb))
    close(fastt.polar(a.abs(), b), torch.polar(ta.abs(), tb))
    with pytest.raises(RuntimeError, match="Expected both inputs"):
        fastt.complex(a, b.double() if dtype == "float32" else b.float())
    with pytest.raises(RuntimeError, match="Expected both inputs"):
        fastt.complex(fastt.ones(2, dtype=fastt.int64), fastt.ones(2))


# ---- arithmetic --------------------------------------------------------------
OPS = ["add", "sub", "mul", "div", "eq", "ne"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_binary_against_torch(op, dtype):
    a, b = crand((4, 1, 5), dtype, 1), crand((3, 5), dtype, 2)
    a.flat[0] = b.flat[0] = 1 + 1j  # an equal pair for eq / ne
    x, y = fastt.tensor(a), fastt.tensor(b)
    close(getattr(fastt, op)(x, y), getattr(torch, op)(tt(x), tt(y)))
    # non-contiguous operands
    close(getattr(fastt, op)(x.transpose(1, 2), y.t()),
          getattr(torch, op)(tt(x).transpose(1, 2), tt(y).t()))


# float16 / bfloat16 with a complex number: torch computes in complex32
# (test_complex_scalar_on_half_gives_complex64); sub refuses bool.
SCALAR_CASES = [(op, d) for op in OPS
                for d in REAL + CDTYPES
                if d not in ("float16", "bfloat16") and
                not (op == "sub" and d == "bool")]


@pytest.mark.parametrize("op,dtype", SCALAR_CASES)
@pytest.mark.parametrize("scalar", [2 - 1j, 1j, 0.5 + 0j])
def test_python_complex_scalar_against_torch(op, dtype, scalar):
    a = fastt.arange(1, 7).reshape(2, 3).to(F(dtype))
    ta = tt(a)
    close(getattr(fastt, op)(a, scalar), getattr(torch, op)(ta, scalar))
    r = {"add": lambda v: scalar + v, "sub": lambda v: scalar - v,
         "mul": lambda v: scalar * v, "div": lambda v: scalar / v,
         "eq": lambda v: v == scalar, "ne": lambda v: v != scalar}[op]
    close(r(a), r(ta))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_alpha(dtype):
    a, b = crand((6,), dtype, 1), crand((6,), dtype, 2)
    x, y = fastt.tensor(a), fastt.tensor(b)
    close(fastt.add(x, y, alpha=2 - 1j), torch.add(tt(x), tt(y), alpha=2 - 1j))
    close(fastt.sub(x, y, alpha=1j), torch.sub(tt(x), tt(y), alpha=1j))
    close(fastt.add(x, y, alpha=3), torch.add(tt(x), tt(y), alpha=3))
    with pytest.raises(RuntimeError, match="alpha must not be a complex"):
        fastt.add(fastt.ones(2), fastt.ones(2), alpha=1j)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_in_place_and_out(dtype):
    a = crand((5,), dtype)
    x, tx = fastt.tensor(a), torch.tensor(a)
    x.mul_(1 - 2j)
    tx.mul_(1 - 2j)
    x.add_(x)
    tx.add_(tx)
    x /= 3j
    tx /= 3j
    close(x, tx)
    y = fastt.ones(3)
    with pytest.raises(RuntimeError):
        y.mul_(1j)  # complex result into a float tensor, as torch refuses
    o = fastt.empty(5, dtype=F(dtype))
    fastt.mul(fastt.tensor(a), 2, out=o)
    close(o, torch.tensor(a) * 2)
    with pytest.raises(RuntimeError, match="can't be cast"):
        fastt.mul(fastt.tensor(a), 2, out=fastt.empty(5))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_division_special_values_as_torch(dtype):
    """Smith's algorithm: no overflow for large parts, zero divisors give
    torch's inf/nan pattern."""
    big = 1e300 if dtype == "complex128" else 1e30
    num = np.array([1 + 1j, big + big * 1j, 1 + 0j, 0j, 1j, 3 - 4j],
                   dtype=dtype)
    den = np.array([big + big * 1j, big - big * 1j, 0j, 0j, 0j, 1e-30 + 0j],
                   dtype=dtype)
    got = fastt.tensor(num) / fastt.tensor(den)
    want = torch.tensor(num) / torch.tensor(den)
    np.testing.assert_allclose(np.asarray(got.tolist()),
                               np.asarray(want.tolist()), rtol=1e-6,
                               equal_nan=True)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_neg_and_python_operators(dtype):
    a = crand((3, 3), dtype)
    x, tx = fastt.tensor(a), torch.tensor(a)
    close(-x, -tx)
    close(x * x - x / (x + 1), tx * tx - tx / (tx + 1))
    close(2 * x + 1j, 2 * tx + 1j)


# ---- reductions -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", CDTYPES)
def test_sum_and_mean(dtype):
    a = crand((3, 4, 5), dtype)
    z, tz = fastt.tensor(a), torch.tensor(a)
    for dims in [None, 0, -1, (0, 2), (-1, -2)]:
        for keep in (False, True):
            if dims is None:
                close(z.sum(), tz.sum())
                close(z.mean(), tz.mean())
                continue
            close(z.sum(dims, keepdim=keep), tz.sum(dims, keepdim=keep))
            close(z.mean(dims, keepdim=keep), tz.mean(dims, keepdim=keep))
    close(z.t().sum(0) if z.dim() == 2 else z.transpose(0, 2).sum(1),
          tz.transpose(0, 2).sum(1))
    close(fastt.tensor(1 + 2j, dtype=F(dtype)).sum(),
          torch.tensor(1 + 2j, dtype=T(dtype)).sum())
    close(fastt.zeros(0, 3, dtype=F(dtype)).sum(0),
          torch.zeros(0, 3, dtype=T(dtype)).sum(0))
    close(fastt.ones(4, dtype=fastt.float32).sum(dtype=F(dtype)),
          torch.ones(4).sum(dtype=T(dtype)))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_sums_over_the_last_dim_against_complex128(dtype):
    # The complex sum kernel's dense runs (pairs of real lanes, complex128
    # accumulation) at lengths around its short path (16 numbers), its
    # 16-number lane rows and 128-number blocks, batched rows, strided and
    # conjugated inputs, a whole 2^20 + 3 tensor: to the float64 sum of
    # the same values.
    for n in (1, 7, 8, 15, 16, 17, 31, 33, 64, 100, 127, 128, 129, 257,
              300):
        a = crand((5, n), dtype, seed=n)
        want = a.astype(np.complex128).sum(-1)
        np.testing.assert_allclose(np.asarray(fastt.tensor(a).sum(-1)
                                              .tolist()), want,
                                   rtol=1e-6 if dtype == "complex64"
                                   else 1e-13)
    a = crand((6, 40, 3), dtype, seed=1)
    z = fastt.tensor(a)
    for got, want in ((z.sum(-1), a.sum(-1)), (z.sum((1, 2)), a.sum((1, 2))),
                      (z.transpose(1, 2).sum(-1), a.sum(1)),
                      (z[:, ::3].sum(-2), a[:, ::3].sum(-2)),
                      (z.conj().sum(-1), a.conj().sum(-1)),
                      (z.mean(-1), a.mean(-1)),
                      (z.conj().mean((0, 2)), a.conj().mean((0, 2)))):
        np.testing.assert_allclose(np.asarray(got.tolist()), want,
                                   rtol=1e-5 if dtype == "complex64"
                                   else 1e-12)
    big = crand(((1 << 20) + 3,), dtype, seed=2)
    got = complex(fastt.tensor(big).sum().item())
    want = big.astype(np.complex128).sum()
    assert abs(got - want) <= 1e-6 * np.abs(big).sum()
    e = fastt.zeros(2, 0, dtype=F(dtype))
    assert e.sum(-1).tolist() == [0j, 0j]
    assert all(np.isnan(v.real) and np.isnan(v.imag)
               for v in e.mean(-1).tolist())


# ---- the elementwise functions: torch's values, special values included ----
UNARY_FUNCTIONS = ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt",
                   "rsqrt", "reciprocal", "sin", "cos", "tan", "sinh",
                   "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh",
                   "atanh", "sigmoid")
_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -2.5, 1e30, -1e30, 1e-40, 88.0,
            700.0, float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", UNARY_FUNCTIONS)
def test_unary_functions_special_values_as_torch(op, dtype):
    """Every pair of real and imaginary parts from zeros, ones, huge, tiny,
    infinities and NaN (C99 Annex G's cases): the same infinities and NaNs
    as torch, finite values within rounding. Where torch departs from C99
    (log1p gives NaN for 1e-40 + 1e-40j in complex64 and for 1e-40 + inf
    j; acos(1 + 1e-40j) and acos(1e30 + 3j) lose their real parts) fastt
    gives NumPy's value."""
    zs = [complex(a, b) for a in _SPECIAL for b in _SPECIAL]
    got = np.asarray(getattr(fastt, op)(
        fastt.tensor(zs, dtype=F(dtype))).tolist())
    want = getattr(torch, op)(torch.tensor(zs, dtype=T(dtype))).numpy()
    rtol = 1e-5 if dtype == "complex64" else 1e-12

    def same(x, y):
        for p, q in ((x.real, y.real), (x.imag, y.imag)):
            if np.isfinite(q) and np.isfinite(p):
                if abs(p - q) > rtol * abs(q) + 1e-30:
                    return False
            elif not (p == q or (np.isnan(p) and np.isnan(q))):
                return False
        return True

    with np.errstate(all="ignore"):
        numpy = _NUMPY.get(op, getattr(np, op, None))
        for z, x, y in zip(zs, got, want):
            if same(x, y):
                continue
            assert op in ("log1p", "acos"), (op, z, x, y)
            assert same(x, numpy(np.complex128(z))), (op, z, x, y)


_NUMPY = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
          "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh}


# ---- powers, products, scans, moments, selection and indexing --------------
def _ix(m, *v):
    return m.tensor(list(v))


# name -> fn(lib, x, y) of two complex [3, 4] tensors
MORE_OPS = {
    "pow_tensor": lambda m, x, y: x ** y,
    "pow_real_tensor_complex_tensor": lambda m, x, y: x.real.abs() ** y,
    "pow_complex_scalar": lambda m, x, y: x ** (1 - 0.5j),
    "rpow_real": lambda m, x, y: 2 ** x,
    "rpow_complex": lambda m, x, y: (1 + 1j) ** x,
    "rpow_onto_real": lambda m, x, y: (0.5 - 2j) ** x.real,
    **{f"pow_{e}": (lambda e: lambda m, x, y: x ** e)(e)
       for e in (2, 3, 0.5, -0.5, -1, -2, 0, 1, 1.7, 2 + 0j)},
    "pow_inplace": lambda m, x, y: x.clone().pow_(3),
    "exp2": lambda m, x, y: m.exp2(x),
    "square": lambda m, x, y: m.square(x),
    "sgn": lambda m, x, y: m.sgn(m.cat([x, m.zeros_like(x)])),
    "prod": lambda m, x, y: x.prod(),
    "prod_dim": lambda m, x, y: x.prod(1, keepdim=True),
    "cumsum": lambda m, x, y: x.cumsum(1),
    "all_any": lambda m, x, y: m.stack([m.where(x.real > 0, x, 0).all(1),
                                        (x * 0).any(1), x.any(0)[:3]]),
    "logical": lambda m, x, y: m.stack([
        m.logical_and(x, m.where(y.real > 0, y, 0)), m.logical_not(x * 0),
        m.logical_or(x * 0, y), m.logical_xor(x, y * 0)]),
    "cumprod": lambda m, x, y: x.cumprod(0),
    "var": lambda m, x, y: x.var(1),
    "var_all": lambda m, x, y: x.var(),
    "std_correction0": lambda m, x, y: x.std(0, correction=0,
                                             keepdim=True),
    "var_mean": lambda m, x, y: m.stack(m.var_mean(x, 1)),
    "std_mean_all": lambda m, x, y: m.stack(m.std_mean(x)),
    "var_0d": lambda m, x, y: x[0, 0].var(),
    "where": lambda m, x, y: m.where(x.real > 0, x, y),
    "where_scalar": lambda m, x, y: m.where(x.imag > 0, x, 2 - 1j),
    "masked_fill": lambda m, x, y: x.masked_fill(x.real > 0, 1j),
    "setitem": lambda m, x, y: _setitem(m, x, y),
    "index": lambda m, x, y: x[_ix(m, 2, 0, 2)],
    "index_2d": lambda m, x, y: x[_ix(m, 0, 2), _ix(m, 3, 1)],
    "index_select": lambda m, x, y: x.index_select(1, _ix(m, 3, 0)),
    "gather": lambda m, x, y: x.gather(1, m.tensor([[0], [3], [1]])),
    "scatter": lambda m, x, y: x.scatter(1, m.tensor([[0], [3], [1]]), y),
    "scatter_add": lambda m, x, y: x.scatter_add(
        0, m.tensor([[0, 1, 2, 0], [0, 0, 1, 2]]), y[:2]),
    "index_add": lambda m, x, y: x.index_add(0, _ix(m, 1, 1), y[:2]),
    "index_add_alpha": lambda m, x, y: x.index_add(1, _ix(m, 0, 0, 3),
                                                   y[:, :3], alpha=2 - 1j),
    "index_put_accumulate": lambda m, x, y: x.index_put(
        (_ix(m, 0, 0, 2),), y[:3], accumulate=True),
    "masked_select": lambda m, x, y: x.masked_select(x.real > 0),
    "masked_scatter": lambda m, x, y: x.masked_scatter(x.imag > 0, y),
    "nonzero": lambda m, x, y: m.nonzero(m.where(x.real > 0, x, 0)),
    "tril": lambda m, x, y: x.tril(),
    "triu": lambda m, x, y: x.triu(1),
    "flip": lambda m, x, y: x.flip(0, 1),
    "roll": lambda m, x, y: x.roll(1, 1),
    "roll_flat": lambda m, x, y: x.roll(5),
    "diag": lambda m, x, y: m.diag(x[0]),
    "diag_embed": lambda m, x, y: m.diag_embed(x),
    "take_along_dim": lambda m, x, y: m.take_along_dim(
        x, m.tensor([[1], [0], [2]]), 1),
    "eye": lambda m, x, y: m.eye(3, dtype=x.dtype) * x[:3, :3],
    "lerp": lambda m, x, y: m.lerp(x, y, x.real.sigmoid().to(x.dtype)),
    "lerp_real_scalar": lambda m, x, y: m.lerp(x, y, 0.75),
    "lerp_complex_scalar": lambda m, x, y: m.lerp(x, y, 0.3 + 0.4j),
    "lerp_inplace": lambda m, x, y: x.clone().lerp_(y, 0.6 - 0.2j),
    "addcmul": lambda m, x, y: m.addcmul(x, y, x, value=2 - 1j),
    "addcdiv": lambda m, x, y: m.addcdiv(x, y, x, value=0.5j),
    "addcmul_inplace": lambda m, x, y: x.clone().addcmul_(x, y, value=3),
    "cov": lambda m, x, y: m.cov(x),
    "cov_weights": lambda m, x, y: m.cov(
        x, fweights=m.tensor([1, 2, 1, 3]),
        aweights=m.tensor([0.5, 1.0, 2.0, 1.0], dtype=x.real.dtype)),
    "corrcoef": lambda m, x, y: m.corrcoef(x),
    "vector_norm": lambda m, x, y: m.linalg.vector_norm(x),
    "vector_norm_p3_dim": lambda m, x, y: m.linalg.vector_norm(x, 3, 1),
    "vector_norm_inf_dtype": lambda m, x, y: m.linalg.vector_norm(
        x, float("inf"), dtype=m.complex128),
    "linalg_norm": lambda m, x, y: m.linalg.norm(x),
    "matrix_norm_1": lambda m, x, y: m.linalg.matrix_norm(x, 1),
    "matrix_norm_neg_inf": lambda m, x, y: m.linalg.matrix_norm(
        x, -float("inf")),
    "norm": lambda m, x, y: m.norm(x),
    "mH": lambda m, x, y: x.mH,  # conjugated (they were plain transposes)
    "H": lambda m, x, y: x.H,
    "vecdot": lambda m, x, y: m.linalg.vecdot(x, y),
}


def _setitem(m, x, y):
    x = x.clone()
    x[1] = y[0]
    x[x.real < 0] = 1 - 1j
    x[_ix(m, 0, 2), 1] = 3j
    return x


@pytest.mark.parametrize("name", sorted(MORE_OPS))
@pytest.mark.parametrize("dtype", CDTYPES)
def test_more_ops_against_torch(name, dtype):
    a, b = crand((3, 4), dtype, 3), crand((3, 4), dtype, 4)
    x, y = fastt.tensor(a), fastt.tensor(b)
    got = MORE_OPS[name](fastt, x, y)
    want = MORE_OPS[name](torch, torch.tensor(a), torch.tensor(b))
    tol = 2e-5 if dtype == "complex64" else 1e-12
    close(got, want.resolve_conj(), rtol=tol, atol=tol)


_EDGES = [0.0, -0.0, 1.0, -2.5, 1e30, float("inf"), float("-inf"),
          float("nan")]


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", ["isnan", "isinf", "isfinite", "sgn",
                                "exp2"])
def test_special_values_as_torch(op, dtype):
    """Every pair of parts from zeros, finite, huge, infinite and NaN: the
    same predicates as torch, the same infinities and NaNs, finite values
    within rounding."""
    zs = [complex(p, q) for p in _EDGES for q in _EDGES]
    got = getattr(fastt, op)(fastt.tensor(zs, dtype=F(dtype)))
    want = getattr(torch, op)(torch.tensor(zs, dtype=T(dtype)))
    close(got, want, rtol=2e-6, atol=0)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_pow_zero_and_one_as_torch(dtype):
    """torch's pow(z, 0) is 1 and pow(z, 1) is z even for zero, infinite
    and NaN z (the library's complex pow gives NaN for 0^0)."""
    zs = [complex(p, q) for p in _EDGES for q in _EDGES]
    x, tx = fastt.tensor(zs, dtype=F(dtype)), torch.tensor(zs, dtype=T(dtype))
    for e in (0, 1, 0.0, 1 + 0j):
        close(x ** e, tx ** e, rtol=0, atol=0)
    close(fastt.pow(x, 0j), torch.pow(tx, 0j), rtol=0, atol=0)


def _hpd(m, a):
    """A Hermitian positive-definite matrix from a."""
    return a @ a.mH + 3 * m.eye(a.shape[-1], dtype=a.dtype)


# name -> fn(lib, A, B) of two complex [2, 4, 4] batches
LINALG = {
    "det": lambda m, A, B: m.linalg.det(A),
    "det_legacy": lambda m, A, B: m.det(A[0]),
    "slogdet": lambda m, A, B: m.stack(list(m.linalg.slogdet(A))),
    "inv": lambda m, A, B: m.linalg.inv(A),
    "inverse_legacy": lambda m, A, B: m.inverse(A),
    "solve": lambda m, A, B: m.linalg.solve(A, B),
    "solve_vector": lambda m, A, B: m.linalg.solve(A, B[..., 0]),
    "solve_right": lambda m, A, B: m.linalg.solve(A, B, left=False),
    "lu_factor": lambda m, A, B: m.linalg.lu_factor(A)[0],
    "lu_plu": lambda m, A, B: m.cat([t.flatten() for t in m.linalg.lu(
        A[:, :, :3])] + [t.flatten() for t in m.linalg.lu(A[:, :3])]),
    "lu_solve": lambda m, A, B: m.linalg.lu_solve(
        *m.linalg.lu_factor(A), B),
    "lu_solve_adjoint": lambda m, A, B: m.linalg.lu_solve(
        *m.linalg.lu_factor(A), B, adjoint=True),
    "lu_solve_right": lambda m, A, B: m.linalg.lu_solve(
        *m.linalg.lu_factor(A), B, left=False),
    "cholesky": lambda m, A, B: m.linalg.cholesky(_hpd(m, A)),
    "cholesky_upper": lambda m, A, B: m.linalg.cholesky(_hpd(m, A),
                                                      upper=True),
    "cholesky_solve": lambda m, A, B: m.cholesky_solve(
        B, m.linalg.cholesky(_hpd(m, A))),
    "cholesky_inverse": lambda m, A, B: m.cholesky_inverse(
        m.linalg.cholesky(_hpd(m, A[0]))),
    "solve_triangular": lambda m, A, B: m.linalg.solve_triangular(
        A.triu() + 4 * m.eye(4, dtype=A.dtype), B, upper=True),
    "solve_triangular_right_unit": lambda m, A, B: m.linalg.solve_triangular(
        A.tril(), B, upper=False, left=False, unitriangular=True),
}


def _table_against_torch(fn, dtype, b_shape, tol):
    """fn(lib, A [2, 4, 4], B) for fastt and torch: a tensor or a list."""
    a, b = crand((2, 4, 4), dtype, 5), crand(b_shape, dtype, 6)
    got = fn(fastt, fastt.tensor(a), fastt.tensor(b))
    want = fn(torch, torch.tensor(a), torch.tensor(b))
    if not isinstance(got, list):
        got, want = [got], [want]
    assert len(got) == len(want)
    for g, t in zip(got, want):
        close(g, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(LINALG))
@pytest.mark.parametrize("dtype", CDTYPES)
def test_linalg_against_torch(name, dtype):
    _table_against_torch(LINALG[name], dtype, (2, 4, 4),
                         1e-4 if dtype == "complex64" else 1e-10)


def _eig_sorted(m, A):
    """Eigenvalues in a fixed order (LAPACK builds may order them apart)
    and the reconstruction V diag(L) V^-1."""
    L, V = m.linalg.eig(A)
    key = L.real * 1000 + L.imag
    order = key.argsort(-1)
    rec = m.linalg.solve(V, V * L.unsqueeze(-2), left=False)
    return [L.gather(-1, order), rec]


def _svd_parts(m, A, full):
    """What does not depend on the vectors' free phases: S, |U|, |Vh| and
    U diag(S) Vh."""
    U, S, Vh = m.linalg.svd(A, full_matrices=full)
    k = S.shape[-1]
    rec = (U[..., :k] * S.unsqueeze(-2).to(A.dtype)) @ Vh[..., :k, :]
    return [S, U.abs(), Vh.abs(), rec]


# name -> fn(lib, A [2, 4, 4], W [2, 4, 6]) -> tensors that do not depend
# on a free phase (the decompositions built on QR, eigh, eig and the SVD)
SPECTRAL = {
    "qr": lambda m, A, W: list(m.linalg.qr(A)),
    "qr_wide_complete": lambda m, A, W: list(m.linalg.qr(W, "complete")),
    "qr_tall_r": lambda m, A, W: [m.linalg.qr(W.mT, "r")[1]],
    "geqrf_householder": lambda m, A, W: [m.linalg.householder_product(
        *m.geqrf(W.mT))],
    "ormqr": lambda m, A, W: [m.ormqr(*m.geqrf(A), W, transpose=t, left=l)
                              for t in (False, True) for l in (True,)] + [
        m.ormqr(*m.geqrf(A), W.mT, left=False, transpose=True)],
    "eigh": lambda m, A, W: [m.linalg.eigh(_hpd(m, A))[0],
                             m.linalg.eigh(_hpd(m, A), "U")[1].abs()],
    "eigvalsh": lambda m, A, W: [m.linalg.eigvalsh(A + A.mH)],
    "eig": lambda m, A, W: _eig_sorted(m, A),
    "eig_real_input": lambda m, A, W: _eig_sorted(m, A.real),
    "eigvals": lambda m, A, W: [m.linalg.eigvals(A).abs().sort(-1)[0]],
    "svd": lambda m, A, W: _svd_parts(m, W, False),
    "svd_full": lambda m, A, W: _svd_parts(m, W.mT, True),
    "svdvals": lambda m, A, W: [m.linalg.svdvals(W)],
    "pinv": lambda m, A, W: [m.linalg.pinv(W), m.linalg.pinv(
        A + A.mH, hermitian=True), m.linalg.pinv(W, atol=5.0)],
    "lstsq_gelsd": lambda m, A, W: list(m.linalg.lstsq(
        W.mT, A[:, :, :2].repeat(1, 2, 1)[:, :6], driver="gelsd")),
    "lstsq_gels": lambda m, A, W: list(m.linalg.lstsq(
        W.mT, W.mT[..., :2], driver="gels"))[:2],
    "lstsq_gelsy_gelss": lambda m, A, W: [
        m.linalg.lstsq(A, W, driver=d)[0] for d in ("gelsy", "gelss")],
    "matrix_rank": lambda m, A, W: [m.linalg.matrix_rank(W),
                                    m.linalg.matrix_rank(A, hermitian=True,
                                                         atol=2.0)],
    "norms": lambda m, A, W: [m.linalg.matrix_norm(W, o)
                              for o in ("nuc", 2, -2)] + [
        m.linalg.cond(A), m.linalg.cond(A, "fro")],
    "ldl": lambda m, A, W: [
        t for herm in (False, True) for S in [A + (A.mH if herm else A.mT)]
        for LD, piv in [m.linalg.ldl_factor(S, hermitian=herm)]
        for t in (LD, piv, m.linalg.ldl_solve(LD, piv, W, hermitian=herm))],
    "matrix_power_exp": lambda m, A, W: [
        m.linalg.matrix_power(A / 4, -3), m.linalg.matrix_exp(A / 4)],
}


@pytest.mark.parametrize("name", sorted(SPECTRAL))
@pytest.mark.parametrize("dtype", CDTYPES)
def test_spectral_linalg_against_torch(name, dtype):
    _table_against_torch(SPECTRAL[name], dtype, (2, 4, 6),
                         2e-4 if dtype == "complex64" else 1e-9)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_small_lu_pivots_as_lapack(dtype):
    # The inline small-matrix LU picks pivots by |re| + |im| as cgetrf's
    # icamax: 2+2j (4) over 3 (|z| would pick 3), in batches of 1x1-9x9
    # (9: LAPACK itself) and a rectangular 3x5.
    a = np.array([[3, 1, 0], [2 + 2j, 0, 1], [1j, 1, 1]])
    rng = np.random.default_rng(3)
    cases = [a] + [rng.standard_normal((3, n, n)) +
                   1j * rng.standard_normal((3, n, n)) for n in range(1, 10)]
    cases.append(rng.standard_normal((2, 3, 5)) + 1j)
    for c in cases:
        f = fastt.linalg.lu_factor(fastt.tensor(c.astype(dtype)))
        t = torch.linalg.lu_factor(torch.tensor(c.astype(dtype)))
        assert f[1].tolist() == t[1].tolist()
        close(f[0], t[0], rtol=1e-4 if dtype == "complex64" else 1e-10,
              atol=1e-4 if dtype == "complex64" else 1e-10)
        if c.shape[-1] == c.shape[-2]:
            close(fastt.linalg.det(fastt.tensor(c.astype(dtype))),
                  torch.linalg.det(torch.tensor(c.astype(dtype))),
                  rtol=1e-4 if dtype == "complex64" else 1e-10)


def test_complex_singular_and_indefinite_raise_linalg_errors():
    z = fastt.zeros(3, 3, dtype=fastt.complex64)
    with pytest.raises(fastt.linalg.LinAlgError, match="singular"):
        fastt.linalg.inv(z)
    with pytest.raises(fastt.linalg.LinAlgError, match="positive-definite"):
        fastt.linalg.cholesky(-fastt.eye(3, dtype=fastt.complex128))
    LU, piv, info = fastt.linalg.lu_factor_ex(z)
    assert info.item() == 1


def test_vector_norm_of_complex_needs_a_complex_dtype():
    z = fastt.tensor(crand((3, 3), "complex64"))
    with pytest.raises(RuntimeError, match="dtype should be complex"):
        fastt.linalg.vector_norm(z, dtype=fastt.float64)
    close(fastt.linalg.vector_norm(z, dtype=fastt.complex128),
          torch.linalg.vector_norm(tt(z), dtype=torch.complex128))


def test_complex_numbers_need_a_complex_result():
    x = fastt.ones(3)
    with pytest.raises(RuntimeError, match="lerp: value cannot be converted"):
        fastt.lerp(x, x, 0.5j)
    with pytest.raises(RuntimeError,
                       match="addcmul: value cannot be converted"):
        fastt.addcmul(x, x, x, value=1j)
    with pytest.raises(RuntimeError,
                       match="addcdiv: value cannot be converted"):
        x.addcdiv_(x, x.to(fastt.complex64), value=1j)


# ---- what is not there yet: typed errors, never garbage ---------------------------
def test_ops_without_complex_kernels_raise():
    z = fastt.tensor([1 + 1j, 2j])
    for call in (lambda: fastt.erf(z), lambda: z.abs_(), lambda: z < z,
                 lambda: z.max(), lambda: fastt.sort(z),
                 lambda: fastt.cummax(z, 0), lambda: fastt.sign(z),
                 lambda: fastt.floor(z), lambda: fastt.clamp(z, 0, 1)):
        with pytest.raises((RuntimeError, NotImplementedError, TypeError)) \
                as e:
            call()
        assert "complex" in str(e.value) or "Complex" in str(e.value), \
            str(e.value)


def test_rope_forward_as_torch():
    """Rotary embeddings the way LLaMA writes them (view_as_complex,
    polar, a broadcast complex product, view_as_real)."""
    B, L, H, D = 2, 6, 3, 8
    rng = np.random.default_rng(0)
    q = rng.standard_normal((B, L, H, D)).astype(np.float32)

    def rope(lib, q):
        freqs = 1.0 / (10000 ** (lib.arange(0, D, 2)[: D // 2].float() / D))
        t = lib.arange(L).float()
        freqs = lib.outer(t, freqs)
        cis = lib.polar(lib.ones_like(freqs), freqs)
        qc = lib.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
        cis = cis.view(1, L, 1, D // 2)
        return lib.view_as_real(qc * cis).flatten(3)

    got = rope(fastt, fastt.tensor(q))
    want = rope(torch, torch.tensor(q))
    close(got, want, rtol=1e-5, atol=1e-5)


# ---- safetensors -------------------------------------------------------------
def test_safetensors_complex64_round_trip_and_interop(tmp_path):
    import fastt.serialization as ser
    st = pytest.importorskip("safetensors.numpy")
    z = fastt.tensor(crand((3, 4), "complex64"))
    p = str(tmp_path / "z.safetensors")
    ser.save_file({"z": z}, p)
    assert ser.load_file(p)["z"].tolist() == z.tolist()
    np.testing.assert_array_equal(st.load_file(p)["z"], z.numpy())
    q = str(tmp_path / "np.safetensors")
    st.save_file({"a": crand((5,), "complex64", 1)}, q)
    got = ser.load_file(q)["a"]
    assert got.dtype == fastt.complex64
    np.testing.assert_array_equal(got.numpy(), crand((5,), "complex64", 1))
    with pytest.raises(ValueError, match="no dtype for"):
        ser.save_file({"w": fastt.zeros(2, dtype=fastt.complex128)},
                      str(tmp_path / "w.safetensors"))


# ---- real parameters refuse complex values (never cut to the real part) --------
def test_real_parameters_refuse_complex_values():
    x = fastt.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match="complex"):
        fastt.tensor([1j, 2], dtype=fastt.float32)
    with pytest.raises(TypeError, match="complex"):
        fastt.tensor(1 + 0j, dtype=fastt.int64)
    with pytest.raises(RuntimeError):
        x.lerp(fastt.zeros(2, 2), 0.5j)
    with pytest.raises(RuntimeError):
        fastt.addcmul(x, x, x, value=1j)
    with pytest.raises(RuntimeError):
        fastt.addmm(x, x, x, beta=1j)
    with pytest.raises(RuntimeError):
        fastt.full((2,), 1j, dtype=fastt.float32)
    with pytest.raises(RuntimeError):
        fastt.zeros(2).fill_(1j)
    with pytest.raises(RuntimeError):
        float(fastt.tensor(1 + 2j))
    assert float(fastt.tensor(3 + 0j)) == 3.0
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.pow_(1j)  # (pow(x, 1j) is complex: test_more_ops_against_torch)
    with pytest.raises(RuntimeError, match="requires dtype ComplexDouble"):
        x.double().float_power_(1j)  # (float_power(x, 1j) is complex)
    with pytest.raises(TypeError, match="complex"):
        fastt.nn.functional.leaky_relu(x, 1j)


# ---- random ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", CDTYPES)
def test_rand_and_randn(dtype):
    """Each part sampled on its own: randn's parts N(0, 1/2) (so E|z|^2 =
    1, as torch), rand's parts in [0, 1)."""
    fastt.manual_seed(0)
    z = fastt.randn(200000, dtype=F(dtype))
    assert z.dtype == F(dtype)
    p = fastt.view_as_real(z)
    for k in (0, 1):
        part = p[:, k]
        assert abs(part.mean().item()) < 0.01
        assert abs(part.var().item() - 0.5) < 0.01
    assert abs((z.abs() ** 2).mean().item() - 1.0) < 0.02
    u = fastt.view_as_real(fastt.rand(100000, dtype=F(dtype)))
    assert u.min().item() >= 0 and u.max().item() < 1
    assert abs(u.mean().item() - 0.5) < 0.01
    w = fastt.randn_like(z[:10])
    assert w.dtype == F(dtype) and w.shape == (10,)
    x = fastt.empty(3, 4, dtype=F(dtype)).t()  # strided
    x.normal_(2.0, 0.0)
    assert x.tolist() == [[2 + 2j] * 3] * 4


# ---- matrix products (cgemm / zgemm) -------------------------------------------
@pytest.mark.parametrize("dtype", CDTYPES)
def test_matmul_against_torch(dtype):
    rtol = 1e-5 if dtype == "complex64" else 1e-12
    cases = [((2, 3), (3, 4)), ((9, 17), (17, 12)), ((40, 70), (70, 33)),
             ((5,), (5, 3)), ((4, 5), (5,)), ((6,), (6,)),
             ((3, 4, 5), (5, 2)), ((2, 1, 4, 6), (3, 6, 5)), ((0, 3), (3, 2))]
    for sa, sb in cases:
        a, b = crand(sa, dtype, 1), crand(sb, dtype, 2)
        close(fastt.tensor(a) @ fastt.tensor(b),
              torch.tensor(a) @ torch.tensor(b), rtol=rtol, atol=rtol)
    a, b = crand((20, 30), dtype, 3), crand((40, 20), dtype, 4)
    x, y, tx, ty = fastt.tensor(a), fastt.tensor(b), torch.tensor(a), \
        torch.tensor(b)
    close(x.t() @ y.t(), tx.t() @ ty.t(), rtol=rtol, atol=rtol)  # strided
    close(x[:, ::2] @ y[::2, :15].t()[:15],
          tx[:, ::2] @ ty[::2, :15].t()[:15], rtol=rtol, atol=rtol)
    c, w = crand((20, 40), dtype, 5), crand((30, 40), dtype, 6)
    close(fastt.addmm(fastt.tensor(c), x, fastt.tensor(w), beta=0.5,
                      alpha=2),
          torch.addmm(torch.tensor(c), tx, torch.tensor(w), beta=0.5,
                      alpha=2), rtol=rtol, atol=rtol)
    close(fastt.bmm(fastt.tensor(crand((3, 4, 5), dtype)),
                    fastt.tensor(crand((3, 5, 6), dtype, 1))),
          torch.bmm(torch.tensor(crand((3, 4, 5), dtype)),
                    torch.tensor(crand((3, 5, 6), dtype, 1))),
          rtol=rtol, atol=rtol)
    for beta, alpha in ((0.5, 1j), (2 - 1j, 1), (0, 1 + 1j)):
        close(fastt.addmm(fastt.tensor(c), x, fastt.tensor(w), beta=beta,
                          alpha=alpha),
              torch.addmm(torch.tensor(c), tx, torch.tensor(w), beta=beta,
                          alpha=alpha), rtol=rtol, atol=rtol)
    with pytest.raises(RuntimeError, match="same dtype"):
        x @ fastt.ones(30, 2)


def test_complex_convolution_needs_one_dtype():
    x = fastt.tensor(crand((1, 2, 5), "complex64"))
    w = fastt.ones(3, 2, 2)
    with pytest.raises(RuntimeError, match=r"Input type \(complex64\) and "
                                           r"weight type \(float32\) should "
                                           "be the same"):
        fastt.nn.functional.conv1d(x, w)
    with pytest.raises(RuntimeError, match="bias type"):
        fastt.nn.functional.conv1d(x, w.to(fastt.complex64), fastt.ones(3))
    got = fastt.nn.functional.conv1d(x, w.to(fastt.complex64))
    want = torch.nn.functional.conv1d(tt(x), torch.ones(3, 2, 2,
                                                         dtype=torch.cfloat))
    close(got, want, rtol=1e-5, atol=1e-5)


def test_complex_linspace_and_float_power_as_torch():
    for dt, tdt in ((fastt.complex64, torch.complex64),
                    (fastt.complex128, torch.complex128)):
        for start, end, n in ((0, 1 + 2j, 5), (-1 - 1j, 3 + 0.5j, 8),
                              (2j, 2j, 1), (1, 2, 0)):
            close(fastt.linspace(start, end, n, dtype=dt),
                  torch.linspace(start, end, n, dtype=tdt))
    z = fastt.tensor(crand((6,), "complex64"))
    x = fastt.tensor([0.5, 2.0, 3.0])
    close(fastt.float_power(z, 2.5), torch.float_power(tt(z), 2.5))
    close(fastt.float_power(x, 1j), torch.float_power(tt(x), 1j))
    close(fastt.float_power(z[:3], x), torch.float_power(tt(z)[:3], tt(x)))
    close(fastt.float_power(2, z), torch.float_power(2, tt(z)))
    with pytest.raises(RuntimeError, match="has dtype ComplexFloat but the "
                                           "operation's result requires "
                                           "dtype ComplexDouble"):
        z.clone().float_power_(2)
    w = z.to(fastt.complex128)
    w.float_power_(2)
    close(w, torch.float_power(tt(z), 2))
