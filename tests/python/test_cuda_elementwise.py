"""CUDA elementwise kernels (kernels/cuda/unary.cu, binary.cu, compare.cu,
ternary.cu) against the CPU: every registered op over its dtypes, odd and
large shapes, broadcasting, scalars, promotion, views, in-place, autograd.
"""
import math

import numpy as np
import pytest

import fastt
import fastt.nn.functional as F
import op_table
import test_op_rows
from cuda_util import (DEVICE, FLOAT_DTYPES, assert_close, check,
                       check_grad, rand, requires_device, to_dev, tol)

pytestmark = requires_device

FLOATS = [fastt.float32, fastt.float64, fastt.float16, fastt.bfloat16]
INTS = [fastt.uint8, fastt.int8, fastt.int16, fastt.int32, fastt.int64]
NUMERIC = INTS + FLOATS
ALL = [fastt.bool] + NUMERIC
COMPLEX = [fastt.complex64, fastt.complex128]
INTBOOL = [fastt.bool] + INTS

# 0-size, 1 element, odd 2-d, 3-d.
SHAPES = [(0,), (1,), (45, 65), (3, 7, 5)]
BIG = (1 << 20) + 3  # not a multiple of any vector width: the tail path


def make(shape, dtype, seed=0, low=-3.0, high=3.0, nonzero=False):
    """Reproducible CPU values; uint8 stays non-negative, `nonzero` keeps
    integer divisors away from 0 (integer division by 0 raises on CPU)."""
    gen = np.random.default_rng(seed)
    if dtype == fastt.bool:
        return fastt.tensor(gen.random(shape) < 0.5)
    if dtype in INTS:
        lo = max(int(low), 0) if dtype == fastt.uint8 else int(low)
        v = gen.integers(lo, int(high) + 1, size=shape)
        if nonzero:
            v = np.where(v == 0, 1, v)
        return fastt.tensor(v, dtype=dtype)
    if dtype in COMPLEX:
        v = gen.uniform(low, high, size=shape) + \
            1j * gen.uniform(low, high, size=shape)
        if nonzero:
            v = np.where(np.abs(v) < 0.25, 0.25, v)
        return fastt.tensor(v).to(dtype)
    v = gen.uniform(low, high, size=shape)
    return fastt.tensor(v).to(dtype)


def name(d):
    return str(d).split(".")[-1]


def ids(dtypes):
    return [name(d) for d in dtypes]


# ------------------------------------------------------------ the rows --
# The ops and dtypes are the Python op table's (tests/python/op_table.py,
# the row's own OpInfo), run here on the device against the CPU. The op
# table's dtypes are checked against what the dispatch table registers for
# the device (test_device_registrations_are_the_op_tables below) and for
# the CPU and torch (tests/python/test_op_rows.py). The internal rows
# (op_table.INTERNAL_ROWS) run through autograd: test_trigamma_kernel,
# test_activation_backward_ops.
def _div_floor(a, b):
    return fastt.div(a, b, rounding_mode="floor")


def _div_trunc(a, b):
    return fastt.div(a, b, rounding_mode="trunc")


def _digamma_grad(x):  # the trigamma kernel: digamma's derivative
    x = x.detach().requires_grad_(True)
    fastt.digamma(x).sum().backward()
    return x.grad


_EW_ROWS = {r[0]: r for r in fastt._C._ew_rows()}
_PRIMARY = {}  # row -> its own OpInfo
for _op in op_table.OPS:
    _PRIMARY.setdefault(_op.row, _op)


_COL = 5 if DEVICE == "cpu" else 6  # the device's registrations


def _kernel_dtypes(row):
    """The compute dtypes the device registers for the row."""
    return set(_EW_ROWS[row][_COL])


# (row name, fn, the op table's dtypes, OpInfo)
UNARY = [(n, op.fastt_fn, [getattr(fastt, d) for d in op.dtypes], op)
         for n, op in _PRIMARY.items() if op.arity == 1]
UNARY_CASES = [(n, f, d) for n, f, ds, _ in UNARY for d in ds]


def _promoted(op, dtype):
    """An input dtype the op layer converts before the kernel (integer
    input of a Float-rule op): the device runs the float kernel of another
    case, so one small check is enough."""
    return dtype not in _kernel_dtypes(op)


def test_device_registrations_are_the_op_tables():
    """The device's kernels, as the op layer promotes to them, accept
    exactly the op table's dtypes (those run below), for every row; the
    internal rows register the float dtypes (the gradients)."""
    for row in _EW_ROWS.values():
        name = row[0]
        if name in op_table.INTERNAL_ROWS:
            assert {str(d).split(".")[-1] for d in row[_COL]} == \
                set(op_table.FLOATS), name
            continue
        want = test_op_rows.accepted(row, row[_COL])
        assert test_op_rows.table_dtypes(name) == want, (
            f"{name}: the op table tests "
            f"{sorted(test_op_rows.table_dtypes(name))}, the device takes "
            f"{sorted(want)}")


@pytest.mark.parametrize("op,fn,dtype", UNARY_CASES,
                         ids=[f"{n}-{name(d)}" for n, _, d in UNARY_CASES])
def test_unary(op, fn, dtype):
    if _promoted(op, dtype):
        check(fn, make((7, 5), dtype, seed=1), what=f"{op} promoted")
        return
    for shape in SHAPES:
        x = make(shape, dtype, seed=len(shape))
        check(fn, x, what=f"{op} {shape}")
    check(fn, make((), dtype), what=f"{op} 0-d")
    # Non-contiguous: a transposed view and a strided slice.
    x = make((33, 20), dtype, seed=3)
    check(lambda t: fn(t.t()), x, what=f"{op} transposed")
    check(lambda t: fn(t[::2, 1::3]), x, what=f"{op} sliced")


@pytest.mark.parametrize("op,fn", [
    ("exp", fastt.exp), ("sigmoid", fastt.sigmoid), ("tanh", fastt.tanh),
    ("neg", fastt.neg),
    # silu and gelu take floats only (torch): an int8 input is made float
    ("silu", lambda t: F.silu(t if t.is_floating_point() else t.float())),
    ("gelu", lambda t: fastt.gelu(t if t.is_floating_point() else t.float())),
    ("relu", fastt.relu), ("abs", fastt.abs)])
@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float16,
                                   fastt.int8, fastt.float64],
                         ids=ids([fastt.float32, fastt.float16, fastt.int8,
                                  fastt.float64]))
def test_unary_big(op, fn, dtype):
    """2^20+3 elements: many blocks, the vector body and its tail; an
    offset view (misaligned for 16-byte loads) takes the scalar path."""
    x = make((BIG + 1,), dtype, seed=5)
    check(lambda t: fn(t[:-1]), x, what=f"{op} big aligned")
    check(lambda t: fn(t[1:]), x, what=f"{op} big misaligned")


@pytest.mark.parametrize("dtype", INTS + [fastt.bool],
                         ids=ids(INTS + [fastt.bool]))
def test_unary_float_ops_promote_ints(dtype):
    """Float-only ops on integer/bool inputs compute in the default float
    dtype (the op layer converts; the device sees float32)."""
    x = make((17, 9), dtype, seed=1, low=0, high=9)
    for fn in (fastt.exp, fastt.sqrt, fastt.sigmoid, fastt.sin, fastt.erf,
               fastt.reciprocal):
        check(fn, x, what=f"{fn} on {name(dtype)}")


def test_unary_special_values():
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-30, 88.0,
            -88.0, 1e30, math.inf, -math.inf, math.nan]
    for dtype in FLOATS:
        x = fastt.tensor(vals).to(dtype)
        for op, fn, ds, _ in UNARY:
            if dtype in ds:
                check(fn, x, what=f"{op} special {name(dtype)}")


def test_unary_inplace_on_views():
    for dtype in (fastt.float32, fastt.float16, fastt.float64):
        def f(t):
            t = t.clone()
            t[:, 1:].exp_()
            t.t()[2:].neg_()
            t[::2].sigmoid_()
            F.leaky_relu(t[1::2], 0.3, inplace=True)
            return t
        check(f, make((9, 13), dtype, seed=2), what=f"unary_ {dtype}")


def test_unary_unsupported_dtype_raises_like_cpu():
    """Dtypes the CPU lacks are unsupported on the device too."""
    for fn, dtype in ((fastt.neg, fastt.bool), (fastt.bitwise_not,
                                                fastt.float32),
                      (fastt.abs, fastt.bool)):
        x = make((4,), dtype)
        want = (f"{fn.__name__}: not implemented for dtype "
                f"'{str(dtype).split('.')[-1]}' on device")
        with pytest.raises(NotImplementedError, match=want) as cpu_err:
            fn(x)
        with pytest.raises(NotImplementedError, match=want) as dev_err:
            fn(to_dev(x))
        # The same message, naming the device the op ran on.
        dev_type = fastt.device(DEVICE).type
        assert str(dev_err.value) == str(cpu_err.value).replace(
            "'cpu'", f"'{dev_type}'")


# --------------------------------------------------------------- binary --
# (row name, fn, the op table's dtypes, divisor must be nonzero for ints)
BINARY = [(n, op.fastt_fn, [getattr(fastt, d) for d in op.dtypes],
           op.nonzero_rhs) for n, op in _PRIMARY.items() if op.arity == 2]
NONZERO = tuple(n for n, _, _, nz in BINARY if nz)
BINARY_CASES = [(n, f, d, nz) for n, f, ds, nz in BINARY for d in ds]
# The cases whose dtype is a kernel's (the promoted ones: test_binary).
KERNEL_CASES = [c for c in BINARY_CASES if not _promoted(c[0], c[2])]


def operands(op, shape_a, shape_b, dtype, seed=0):
    a = make(shape_a, dtype, seed=seed)
    if op == "pow" and dtype in INTS:  # small non-negative exponents
        b = make(shape_b, dtype, seed=seed + 1, low=0, high=4)
    else:
        b = make(shape_b, dtype, seed=seed + 1,
                 nonzero=op in ("div_floor", "div_trunc", "remainder",
                                "fmod"))
    return a, b


def test_binary_cases_are_the_rows():
    names = {n for n, _, _, _ in BINARY}
    assert {"add", "sub", "div", "div_floor", "div_trunc", "heaviside",
            "pow"} <= names
    assert set(NONZERO) == {"div", "div_floor", "div_trunc", "remainder",
                            "fmod"}


@pytest.mark.parametrize("op,fn,dtype,nz", BINARY_CASES,
                         ids=[f"{n}-{name(d)}" for n, _, d, _ in BINARY_CASES])
def test_binary(op, fn, dtype, nz):
    if _promoted(op, dtype):
        a, b = operands(op, (7, 5), (5,), dtype, seed=1)
        check(fn, a, b, what=f"{op} promoted")
        return
    # Same shapes (the dense fast path), odd shapes, 0-size, 0-d.
    for shape in SHAPES + [()]:
        a, b = operands(op, shape, shape, dtype, seed=len(shape))
        check(fn, a, b, what=f"{op} {shape}")
    # Broadcasting: row x column, a middle dim, 0-d tensor operands.
    for sa, sb in (((45, 1), (1, 65)), ((3, 1, 5), (4, 5)), ((7, 6), ()),
                   ((), (7, 6)), ((2, 0, 3), (1, 3))):
        a, b = operands(op, sa, sb, dtype, seed=11)
        check(fn, a, b, what=f"{op} {sa} vs {sb}")
    # Non-contiguous operands (transposed, sliced) and mixed layouts.
    a, b = operands(op, (33, 20), (20, 33), dtype, seed=4)
    check(lambda x, y: fn(x.t(), y), a, b, what=f"{op} a transposed")
    check(lambda x, y: fn(x[::2, 1:], y.t()[::2, 1:]), a, b,
          what=f"{op} both strided")


BIG_CASES = [c for c in KERNEL_CASES if c[2] in (
    fastt.float32, fastt.float16, fastt.int8, fastt.int64, fastt.bool)]


@pytest.mark.parametrize("op,fn,dtype,nz", BIG_CASES,
                         ids=[f"{n}-{name(d)}" for n, _, d, _ in BIG_CASES])
def test_binary_big(op, fn, dtype, nz):
    a, b = operands(op, (BIG + 1,), (BIG + 1,), dtype, seed=9)
    check(lambda x, y: fn(x[:-1], y[:-1]), a, b, what=f"{op} big")
    check(lambda x, y: fn(x[1:], y[:-1]), a, b, what=f"{op} big misaligned")


def _scalar_for(op, dtype):
    if dtype == fastt.bool:
        return True
    if dtype in INTS:
        return 3 if op != "pow" else 2
    return 1.75


# The ops whose `other` may be a Python number (torch's rule, op_table's
# `scalar`: torch.atan2(t, 2) is a TypeError).
SCALAR_CASES = [c for c in KERNEL_CASES if _PRIMARY[c[0]].scalar]


@pytest.mark.parametrize("op,fn,dtype,nz", SCALAR_CASES,
                         ids=[f"{n}-{name(d)}" for n, _, d, _ in SCALAR_CASES])
def test_binary_python_scalar(op, fn, dtype, nz):
    """A Python number operand rides in the kernel parameters (host
    scalar), on either side, on dense and strided tensors."""
    a = make((45, 65), dtype, seed=2, nonzero=op in NONZERO)
    if op == "pow" and dtype in INTS:
        a = make((45, 65), dtype, seed=2, low=0, high=4)
    s = _scalar_for(op, dtype)
    check(lambda x: fn(x, s), a, what=f"{op} tensor, scalar")
    check(lambda x: fn(x.t(), s), a, what=f"{op} view, scalar")
    check(lambda x: fn(x[:, :0], s), a, what=f"{op} empty, scalar")
    big = make((BIG,), dtype, seed=3)
    check(lambda x: fn(x, s), big, what=f"{op} big, scalar")
    if op in ("div_floor", "div_trunc", "remainder", "fmod"):
        return  # the tensor is the divisor: zeros raise on CPU
    if op == "pow" and dtype in INTS:
        return  # int ** tensor with negative exponents raises on CPU
    reflected = {  # scalar on the left: Python's reflected operators
        "add": lambda x: s + x, "sub": lambda x: s - x,
        "mul": lambda x: s * x, "div": lambda x: s / x,
        "pow": lambda x: s ** x, "eq": lambda x: s == x,
        "lt": lambda x: s < x, "ge": lambda x: s >= x,
        "bitwise_and": lambda x: s & x, "bitwise_or": lambda x: s | x,
        "bitwise_xor": lambda x: s ^ x}
    if op in reflected:
        check(reflected[op], a, what=f"{op} scalar, tensor")


def test_add_sub_alpha():
    for dtype in NUMERIC:
        a, b = make((45, 65), dtype, seed=1), make((45, 65), dtype, seed=2)
        alphas = [1, 2, -3] if dtype in INTS else [1, 0.5, -2.25, 3]
        for alpha in alphas:
            check(lambda x, y: fastt.add(x, y, alpha=alpha), a, b,
                  what=f"add alpha={alpha} {dtype}")
            check(lambda x, y: fastt.sub(x, y, alpha=alpha), a, b,
                  what=f"sub alpha={alpha} {dtype}")
            check(lambda x, y: fastt.add(x.t(), 2, alpha=alpha), a, b,
                  what=f"add view scalar alpha={alpha} {dtype}")
            check(lambda x, y: fastt.sub(x[:, None, :1], y[:3], alpha=alpha),
                  a, b, what=f"sub bcast alpha={alpha} {dtype}")
    # bool add is a logical or, alpha True keeps it so.
    a, b = make((17,), fastt.bool, seed=1), make((17,), fastt.bool, seed=2)
    check(fastt.add, a, b, what="bool add")
    check(lambda x, y: fastt.add(x, y, alpha=True), a, b,
          what="bool add alpha=True")


PROMOTIONS = [  # (dtype a, dtype b)
    (fastt.int32, fastt.float32), (fastt.int64, fastt.float16),
    (fastt.uint8, fastt.int8), (fastt.int32, fastt.int64),
    (fastt.float16, fastt.float32), (fastt.bfloat16, fastt.float16),
    (fastt.bool, fastt.int16), (fastt.bool, fastt.float64),
    (fastt.float32, fastt.float64), (fastt.uint8, fastt.bool),
]


@pytest.mark.parametrize("da,db", PROMOTIONS,
                         ids=[f"{name(a)}+{name(b)}" for a, b in PROMOTIONS])
def test_binary_promotion(da, db):
    a = make((13, 7), da, seed=1, low=1, high=4)
    b = make((7,), db, seed=2, low=1, high=4)
    for fn in (fastt.add, fastt.mul, fastt.div, fastt.maximum, fastt.eq,
               fastt.lt, fastt.logical_and, fastt.atan2, fastt.pow):
        check(fn, a, b, what=f"{fn} {da} {db}")
        check(fn, b, a, what=f"{fn} {db} {da}")
    if da != fastt.bool and db != fastt.bool:
        check(fastt.sub, a, b, what=f"sub {da} {db}")


@pytest.mark.parametrize("dtype", INTS + [fastt.bool],
                         ids=ids(INTS + [fastt.bool]))
def test_binary_scalar_promotion(dtype):
    """int tensor + float scalar -> float; 0-d tensors of a higher
    category promote, of the same category do not."""
    a = make((9, 11), dtype, seed=3, low=0, high=5)
    check(lambda x: x + 2.5, a, what="int + float scalar")
    check(lambda x: x * 0.5, a, what="int * float scalar")
    check(lambda x: 1.5 - x.to(fastt.int32), a, what="float scalar - int")
    check(lambda x: x / 2, a, what="int / int scalar (true division)")
    check(lambda x: fastt.maximum(x, fastt.tensor(1.5).to(x.device)), a,
          what="int vs 0-d float tensor")
    check(lambda x: x + fastt.tensor(7, dtype=fastt.int64).to(x.device), a,
          what="int vs 0-d int64 tensor")
    check(lambda x: x < 2.5, a, what="int < float scalar")


def test_binary_nan_semantics():
    nan, inf = math.nan, math.inf
    va = [nan, 1.0, nan, -inf, 0.0, -0.0, 2.0, -3.5, 5.0, -5.0]
    vb = [1.0, nan, nan, inf, -0.0, 0.0, 0.0, 0.0, -2.0, 3.0]
    for dtype in FLOATS:
        a, b = fastt.tensor(va).to(dtype), fastt.tensor(vb).to(dtype)
        for op, fn, ds, _ in BINARY:
            if dtype in ds:
                check(fn, a, b, what=f"{op} nan/inf {name(dtype)}")


def test_integer_division_edge_cases():
    """min / -1 wraps (no trap), signs follow Python's // and %."""
    for dtype, lo in ((fastt.int8, -128), (fastt.int16, -32768),
                      (fastt.int32, -2**31), (fastt.int64, -2**63)):
        a = fastt.tensor([lo, lo, 7, -7, 7, -7, 0, lo + 1], dtype=dtype)
        b = fastt.tensor([-1, 1, 2, 2, -2, -2, -1, -1], dtype=dtype)
        for fn in (_div_floor, _div_trunc, fastt.remainder, fastt.fmod,
                   fastt.mul, fastt.neg, fastt.abs):
            if fn in (fastt.neg, fastt.abs):
                check(fn, a, what=f"{fn} {dtype}")
            else:
                check(fn, a, b, what=f"{fn} {dtype}")
    # Negative integer exponents: 1, +-1 or 0, like torch.
    a = fastt.tensor([1, -1, -1, 2, -2, 0], dtype=fastt.int64)
    b = fastt.tensor([-3, -3, -2, -1, -5, 3], dtype=fastt.int64)
    check(fastt.pow, a, b, what="int pow negative exponents")


def test_binary_inplace():
    for dtype in (fastt.float32, fastt.int32, fastt.float16, fastt.int8):
        base = make((12, 10), dtype, seed=1, low=1, high=5)
        other = make((10,), dtype, seed=2, low=1, high=5)

        def f(t, o):
            t = t.clone()
            t[:, 1:].add_(o[1:])            # view += broadcast row
            t.t()[3:].mul_(2)               # transposed view *= scalar
            t[::3].sub_(o, alpha=2)         # strided rows
            t[1].add_(t[2])                 # 1-d view += another row
            t.add_(t[0:1].clone())          # broadcast from a 1xN copy
            return t
        check(f, base, other, what=f"in-place {dtype}")
    # float in-place with a float 0-d tensor and a scalar
    x = make((5, 6), fastt.float32, seed=4)
    check(lambda t: t.clone().mul_(fastt.tensor(3.0).to(t.device)), x,
          what="mul_ 0-d")
    check(lambda t: t.clone().div_(3.0), x, what="div_ scalar")
    check(lambda t: t.clone().pow_(2), x, what="pow_ scalar")


def test_binary_out_dtype_cast():
    """An int tensor updated in place with an int operand of a wider
    dtype: computed in the result dtype, written back to the view."""
    a = make((6, 7), fastt.int16, seed=1)
    b = make((7,), fastt.int16, seed=2)
    check(lambda x, y: x.clone().add_(y.to(fastt.int8)), a, b,
          what="int16 += int8")
    f = make((6, 7), fastt.float32, seed=1)
    check(lambda x, y: x.clone().add_(y), f, b, what="float32 += int16")
    check(lambda x, y: x.clone().mul_(y.to(fastt.float16)), f, f[0],
          what="float32 *= float16")


def test_activation_backward_ops():
    """The *_backward kernels, reached through autograd, in every float
    dtype (float16/bfloat16 compute in float)."""
    for dtype in FLOATS:
        x = make((37, 11), dtype, seed=5)
        for fn in (fastt.relu, fastt.sigmoid, fastt.tanh, F.silu, fastt.gelu,
                   lambda t: fastt.gelu(t, approximate="tanh")):
            check_grad(fn, x.requires_grad_(True), what=f"{fn} {dtype}")


def test_trigamma_kernel():
    """The trigamma row (internal: digamma's derivative), every float
    dtype, dense and strided."""
    for dtype in FLOATS:
        x = make((37, 11), dtype, seed=6, low=0.2, high=6.0)
        check(_digamma_grad, x, what=f"trigamma {name(dtype)}")
        check(lambda t: _digamma_grad(t.t()), x, what="trigamma strided")


# -------------------------------------------------------------- ternary --
@pytest.mark.parametrize("dtype", ALL, ids=ids(ALL))
def test_where(dtype):
    c = make((45, 65), fastt.bool, seed=1)
    a, b = make((45, 65), dtype, seed=2), make((45, 65), dtype, seed=3)
    check(fastt.where, c, a, b, what="where dense")
    check(lambda c, a, b: fastt.where(c.t(), a.t(), b.t()), c, a, b,
          what="where views")
    check(lambda c, a, b: fastt.where(c[:, :1], a[:1], b), c, a, b,
          what="where broadcast")
    s = True if dtype == fastt.bool else (2 if dtype in INTS else 1.5)
    check(lambda c, a: fastt.where(c, a, s), c, a, what="where tensor, s")
    check(lambda c, b: fastt.where(c, s, b), c, b, what="where s, tensor")
    check(lambda c, a: fastt.where(c, a, fastt.tensor(s).to(a.device)
                                   .to(a.dtype)), c, a,
          what="where 0-d other")
    check(lambda c, a: a.masked_fill(c, s), c, a, what="masked_fill")
    check(lambda c, a: a.clone().masked_fill_(c[0], s), c, a,
          what="masked_fill_ broadcast mask")
    check(lambda c, a: a.masked_fill(c, fastt.tensor(s).to(a.device)), c,
          a, what="masked_fill 0-d value")
    cb, ab = make((BIG,), fastt.bool, seed=4), make((BIG,), dtype, seed=5)
    check(lambda c, a: fastt.where(c, a, fastt.logical_not(a)), cb, ab,
          what="where big")


def test_where_scalars_both():
    c = make((17, 3), fastt.bool, seed=1)
    check(lambda c: fastt.where(c, 1.0, 0.0), c, what="where 1.0 0.0")
    check(lambda c: fastt.where(c, 3, -4), c, what="where int ints")
    check(lambda c, a: fastt.where(c, a, 2.5), c,
          make((17, 3), fastt.int32, seed=2), what="where int, float")


@pytest.mark.parametrize("dtype", NUMERIC, ids=ids(NUMERIC))
def test_clamp(dtype):
    x = make((45, 65), dtype, seed=1, low=-9, high=9)
    lo_s, hi_s = (-3, 4) if dtype in INTS else (-2.5, 1.25)
    if dtype == fastt.uint8:
        lo_s, hi_s = 2, 6
    check(lambda t: fastt.clamp(t, lo_s, hi_s), x, what="clamp both")
    check(lambda t: fastt.clamp(t, min=lo_s), x, what="clamp min")
    check(lambda t: fastt.clamp(t, max=hi_s), x, what="clamp max")
    check(lambda t: fastt.clamp(t, hi_s, lo_s), x, what="clamp lo > hi")
    check(lambda t: fastt.clamp_min(t.t(), lo_s), x, what="clamp_min view")
    check(lambda t: fastt.clamp_max(t[::2], hi_s), x, what="clamp_max view")
    lo = make((65,), dtype, seed=2, low=-9, high=0)
    hi = make((45, 1), dtype, seed=3, low=0, high=9)
    check(lambda t, l, h: fastt.clamp(t, l, h), x, lo, hi,
          what="clamp tensor bounds")
    check(lambda t, l: fastt.clamp(t, min=l), x, lo, what="clamp tensor min")
    check(lambda t, h: fastt.clamp(t, max=h), x, hi, what="clamp tensor max")
    check(lambda t: fastt.clamp(t, lo_s, hi_s), make((), dtype),
          what="clamp 0-d")
    big = make((BIG,), dtype, seed=4, low=-9, high=9)
    check(lambda t: fastt.clamp(t, lo_s, hi_s), big, what="clamp big")

    def inplace(t, l):
        t = t.clone()
        t[:, 1::2].clamp_(lo_s, hi_s)
        t.t()[:5].clamp_(min=l[:45])
        return t
    check(inplace, x, lo, what="clamp_ on views")


def test_clamp_nan():
    nan = math.nan
    x = fastt.tensor([nan, -5.0, 0.5, 5.0, nan, 1.0])
    lo = fastt.tensor([0.0, nan, 0.0, 0.0, nan, 2.0])
    hi = fastt.tensor([1.0, 1.0, nan, 1.0, 1.0, 0.0])
    for dtype in FLOATS:
        a, l, h = x.to(dtype), lo.to(dtype), hi.to(dtype)
        check(fastt.clamp, a, l, h, what=f"clamp nan {dtype}")
        check(lambda t: fastt.clamp(t, -1.0, 1.0), a, what="clamp nan x")
        check(lambda t: fastt.clamp(t, min=nan), a, what="clamp nan min")


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_lerp(dtype):
    a, b = make((45, 65), dtype, seed=1), make((45, 65), dtype, seed=2)
    w = make((45, 65), dtype, seed=3, low=-0.5, high=1.5)
    check(fastt.lerp, a, b, w, what="lerp tensor weight")
    for ws in (0.0, 0.25, 0.5, 0.75, 1.0, -0.3, 1.7):
        check(lambda x, y: fastt.lerp(x, y, ws), a, b, what=f"lerp w={ws}")
    check(lambda x, y, z: fastt.lerp(x.t(), y[:1].t(), z[:, :1].t()), a, b,
          w, what="lerp broadcast views")
    check(lambda x, y: x.clone().lerp_(y, 0.3), a, b, what="lerp_ scalar")
    check(lambda x, y, z: x.clone().t().lerp_(y.t(), z.t()), a, b, w,
          what="lerp_ tensor on view")
    big = make((BIG,), dtype, seed=4)
    check(lambda x: fastt.lerp(x, x * 2, 0.6), big, what="lerp big")


@pytest.mark.parametrize("dtype", NUMERIC, ids=ids(NUMERIC))
def test_addcmul(dtype):
    a = make((45, 65), dtype, seed=1)
    b, c = make((45, 1), dtype, seed=2), make((65,), dtype, seed=3)
    values = [1, 2, -1] if dtype in INTS else [1, 0.5, -2.0]
    for v in values:
        check(lambda x, y, z: fastt.addcmul(x, y, z, value=v), a, b, c,
              what=f"addcmul value={v}")
    check(lambda x, y, z: fastt.addcmul(x.t(), y.t(), z[:, None]), a, b, c,
          what="addcmul views")
    check(lambda x, y, z: x.clone().addcmul_(y, z, value=2), a, b, c,
          what="addcmul_")
    big = make((BIG,), dtype, seed=4)
    check(lambda x: fastt.addcmul(x, x, x), big, what="addcmul big")


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_addcdiv(dtype):
    a = make((45, 65), dtype, seed=1)
    b = make((45, 1), dtype, seed=2)
    c = make((65,), dtype, seed=3, low=0.5, high=3.0)
    for v in (1, 0.5, -2.0):
        check(lambda x, y, z: fastt.addcdiv(x, y, z, value=v), a, b, c,
              what=f"addcdiv value={v}")
    check(lambda x, y, z: x.clone().t().addcdiv_(y.t(), z[:, None], value=3),
          a, b, c, what="addcdiv_ views")
    # Division by zero follows IEEE on both backends.
    z = fastt.tensor([0.0, -0.0, 1.0]).to(dtype)
    check(lambda x, y: fastt.addcdiv(x, x, y), z, z, what="addcdiv by 0")


def test_ternary_promotion():
    a = make((5, 6), fastt.int32, seed=1)
    b = make((5, 6), fastt.float32, seed=2)
    check(lambda x, y: fastt.addcmul(x, y, y), a, b, what="addcmul int+float")
    check(lambda x, y: fastt.clamp(x, y, y + 1), a, b,
          what="clamp int by float bounds")
    check(lambda x, y: fastt.where(x > 0, x, y), a, b, what="where mixed")
    check(lambda x: fastt.where(x > 0, x, 0.5), a,
          what="where int, float scalar")
    check(lambda x, y: fastt.lerp(y, y.to(fastt.float64), 0.5), a, b,
          what="lerp float32/float64")


# ------------------------------------------------------------- autograd --
def _g(shape, seed, dtype=fastt.float32, low=-2.0, high=2.0):
    return make(shape, dtype, seed=seed, low=low, high=high
                ).requires_grad_(True)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64],
                         ids=["float32", "float64"])
def test_grad(dtype):
    x, y = _g((7, 9), 1, dtype), _g((7, 9), 2, dtype)
    pos = _g((7, 9), 3, dtype, 0.5, 2.0)
    w = _g((9,), 4, dtype, 0.0, 1.0)
    c = make((7, 9), fastt.bool, seed=5)
    cases = [
        ("exp", fastt.exp, (x,)), ("tanh", fastt.tanh, (x,)),
        ("sigmoid", fastt.sigmoid, (x,)), ("relu", fastt.relu, (x,)),
        ("gelu", fastt.gelu, (x,)),
        ("gelu_tanh", lambda t: fastt.gelu(t, approximate="tanh"), (x,)),
        ("silu", F.silu, (x,)),
        ("pow tensor", fastt.pow, (pos, y)),
        ("pow scalar", lambda t: fastt.pow(t, 3), (x,)),
        ("div", fastt.div, (x, pos)),
        ("div bcast", lambda a, b: fastt.div(a, b[0]), (x, pos)),
        ("where", lambda c, a, b: fastt.where(c, a, b), (c, x, y)),
        ("clamp", lambda t: fastt.clamp(t, -1.0, 0.5), (x,)),
        ("clamp tensor", lambda t, lo: fastt.clamp(t, min=lo), (x, y)),
        ("lerp", fastt.lerp, (x, y, w)),
        ("lerp scalar", lambda a, b: fastt.lerp(a, b, 0.3), (x, y)),
        ("addcmul", lambda a, b, d: fastt.addcmul(a, b, d, value=0.5),
         (x, y, pos)),
        ("mul add views", lambda a, b: (a.t() * b.t() + a.t()).sum(0),
         (x, y)),
    ]
    for what, fn, args in cases:
        check_grad(fn, *args, what=what)


def test_device_mismatch_raises():
    if DEVICE == "cpu":
        pytest.skip("needs two devices")
    a = make((3,), fastt.float32)
    same = ("Expected all tensors to be on the same device, but found at "
            "least two devices")
    with pytest.raises(RuntimeError, match=same):
        fastt.add(a, to_dev(a))
    with pytest.raises(RuntimeError, match=same):
        fastt.where(to_dev(a > 0), a, a)


def test_integer_division_by_zero_on_device_gives_zero():
    """The CPU raises ZeroDivisionError after scanning the divisor; the
    device skips that scan (a reduction + host sync per op) and the
    functors write 0. Scalar divisors are still checked on the host."""
    a = make((6,), fastt.int32, seed=1)
    b = fastt.tensor([0, 1, 0, 2, 0, 3], dtype=fastt.int32)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        _div_floor(to_dev(a), 0)
    if DEVICE == "cpu":
        return
    for fn in (_div_floor, _div_trunc, fastt.remainder, fastt.fmod):
        r = fn(to_dev(a), to_dev(b)).cpu()
        assert [int(v) for v in r[::2]] == [0, 0, 0]


def test_tolerance_table_is_used():
    # Guards the helpers this file relies on (a broken tol() would make
    # every float comparison exact or vacuous).
    assert tol(fastt.float32)[0] > 0 and tol(fastt.int32) == (0.0, 0.0)


def test_assert_close_numbers_can_fail():
    """Python-number results: ints and bools exactly (and of the same
    type), floats within the tolerance given, exactly when it is 0."""
    assert_close(3, 3)
    assert_close(1.0, 1.0 + 1e-9)  # default: 1e-6
    for dev, cpu, kw in ((3, 4, {}), (True, 1, {}), (1, True, {}),
                         (3.0, 3, {}), (1.0 + 1e-9, 1.0, dict(rtol=0, atol=0)),
                         (None, 1, {}), ((1, 2), (1, 2, 3), {}),
                         (fastt.tensor(1.0), 1.0, {})):
        with pytest.raises(AssertionError):
            assert_close(dev, cpu, **kw)


# ----------------------------------------- real-GPU hazards (review) --
# The emulator runs kernels with the CPU's arithmetic and on small sizes;
# these cases differ only on a real GPU.

@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_copy_negative_float_to_uint8_wraps(dtype):
    """float -> uint8 of negative values wraps like the CPU (and torch):
    the GPU's own conversion saturates them to 0."""
    x = make((45, 65), dtype, seed=5, low=-300.0, high=300.0)
    for view, what in ((lambda v: v, "dense"), (lambda v: v.t(), "strided"),
                       (lambda v: v[:, 1:], "offset")):
        check(lambda v: view(v).to(fastt.uint8), x, what=f"{what} {dtype}")
    check(lambda v: v.to(fastt.int8), x, what=f"int8 {dtype}")


@pytest.mark.parametrize("dtype", COMPLEX, ids=ids(COMPLEX))
def test_complex_copy_cast_fill(dtype):
    """Complex copies on the device: dense, transposed and offset views,
    casts to and from every other dtype (complex to real: the real part),
    and fills."""
    x = make((45, 65), dtype, seed=6)
    for view, what in ((lambda v: v, "dense"), (lambda v: v.t(), "strided"),
                       (lambda v: v[:, 1:], "offset")):
        check(lambda v: view(v).contiguous(), x, what=f"{what} copy")
        check(lambda v: view(v).clone(), x, what=f"{what} clone")
    for other in ALL + COMPLEX:
        check(lambda v: v.to(other), x, what=f"to {name(other)}")
        y = make((45, 65), other, seed=7)
        check(lambda v: v.to(dtype), y, what=f"from {name(other)}")
    check(lambda v: fastt.zeros_like(v).fill_(1.5 - 2j), x, what="fill")
    check(lambda v: fastt.full((3, 5), 2j, dtype=dtype, device=v.device), x,
          what="full")
    check(lambda v: v.t().conj_physical(), x, what="conj")
    check(lambda v: fastt.view_as_real(v)[:, :4], x, what="view_as_real")
    check(lambda v: fastt.cat([v, v[:7]]), x, what="cat")
    check(lambda v: fastt.stack([v[0], v[1]], 1), x, what="stack")


@pytest.mark.parametrize("dtype", COMPLEX, ids=ids(COMPLEX))
def test_complex_structured_kernels(dtype):
    """The complex rows of the structured kernels on the device against
    the CPU: selection, every indexing kernel (accumulating ones
    included), triangles, flips and rolls, products and scans, and the
    ternary elementwise ops with complex numbers."""
    x = make((6, 9), dtype, seed=8)
    y = make((6, 9), dtype, seed=9)

    def ix(v, *i):
        return fastt.tensor(list(i), device=v.device)

    def setitem(v):
        v = v.clone()
        v[ix(v, 0, 2)] = 1 - 1j
        v.index_put_((ix(v, 1, 1),), v[:2] * 2, accumulate=True)
        return v
    cases = {
        "where": lambda v: fastt.where(v.real > 0, v, 2j),
        "index_select": lambda v: v.index_select(1, ix(v, 8, 0, 8)),
        "gather": lambda v: v.gather(1, ix(v, 3, 1, 2, 0, 8, 8)[:, None]),
        "scatter": lambda v: v.scatter(0, ix(v, 1, 0)[:, None].expand(2, 9)
                                       .contiguous(), v[:2] * 3),
        "scatter_add": lambda v: v.scatter_add(
            1, ix(v, 0, 0, 1)[None].expand(6, 3).contiguous(), v[:, :3]),
        "index_add": lambda v: v.index_add(0, ix(v, 2, 2, 5), v[:3],
                                           alpha=1 - 2j),
        "index": lambda v: v[ix(v, 5, 0, 5), ix(v, 1, 8, 1)],
        "setitem": setitem,
        "masked_select": lambda v: v.masked_select(v.imag > 0),
        "nonzero": lambda v: fastt.nonzero(fastt.where(v.real > 0, v, 0)),
        "tril": lambda v: v.tril(1),
        "triu": lambda v: v.t().triu(),
        "flip": lambda v: v.flip(0, 1),
        "roll": lambda v: v.roll((2, -3), (0, 1)),
        "eye": lambda v: fastt.eye(4, 6, dtype=v.dtype, device=v.device),
        "all": lambda v: fastt.where(v.real > 0, v, 0).all(1),
        "any": lambda v: (v * 0).any(),
        "prod": lambda v: (v * 0.5).prod(1),
        "prod_all": lambda v: (v[:2] * 0.5).prod(),
        # sums over the last dim: the complex sum kernel; over others: the
        # real view's columns
        "sum_rows": lambda v: v.sum(1),
        "sum_all": lambda v: v.sum(),
        "sum_cols": lambda v: v.sum(0),
        "sum_strided": lambda v: v.t().sum(0),
        "mean_rows": lambda v: v.mean(-1, keepdim=True),
        "cumsum": lambda v: v.cumsum(1),
        "cumprod": lambda v: (v * 0.5).cumprod(0),
        "lerp": lambda v: fastt.lerp(v, v.flip(0), v.abs().to(v.dtype) / 4),
        "lerp_scalar": lambda v: fastt.lerp(v, v.flip(1), 0.3 - 0.2j),
        "addcmul": lambda v: fastt.addcmul(v, v, v.flip(0), value=2 - 1j),
        "addcdiv": lambda v: fastt.addcdiv(v, v, v.flip(0), value=0.5j),
        "logaddexp": lambda v: fastt.logaddexp(v, v.flip(0) * 0.5),
        "sinc": lambda v: fastt.sinc(v * 0.3),
        "silu": lambda v: fastt.nn.functional.silu(v),
    }
    for what, fn in cases.items():
        check(fn, x, what=what)
    check(lambda a, b: a ** b, x, y, what="pow")
    check(lambda a: a.var(1), x, what="var")


@pytest.mark.large  # 2**31 elements, ~6 GB: for a real GPU only
@pytest.mark.skipif(not DEVICE.startswith("cuda"),
                    reason="device-size case (no CPU self-check)")
def test_strided_loop_just_under_int32_elements():
    """2**31 - 8 elements in a strided loop: the 32-bit index path's
    grid-stride counter overshoots numel by up to the launch's thread
    count, which must not wrap past 2**31 - 1."""
    m = (1 << 30) - 4
    x = fastt.ones(2, m, dtype=fastt.uint8, device=DEVICE)
    y = x.t() + 1  # strided input, dense output
    assert tuple(y.shape) == (m, 2)
    assert bool((y == 2).all().item())
    assert int(y[m - 1, 1].item()) == 2


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_nan_to_num_kernel(dtype):
    """nan_to_num's one-pass kernel (kernels/*/ternary): defaults (the
    dtype's largest finite values) and given replacements, contiguous and
    strided."""
    x = rand(7, 33, dtype=dtype)
    x[0, 0] = float("nan")
    x[1, 3] = float("inf")
    x[2, 5] = float("-inf")
    check(lambda t: t.nan_to_num(), x)
    check(lambda t: fastt.nan_to_num(t, nan=1.5, posinf=2.0, neginf=-3.0), x)
    check(lambda t: t.mT.nan_to_num(0.25), x)
