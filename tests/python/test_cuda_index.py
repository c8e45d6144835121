"""CUDA indexing, shape and sort kernels (kernels/cuda/index.cu, sort.cu)
against the CPU: index_select/gather/scatter(_add)/index_add/index/
index_put (direct and strided forms, accumulate with duplicates), embedding
forward/backward, cat/stack, masked_select/nonzero, tril/triu, flip/roll,
sort/argsort/topk (stability, ties, NaN, -0), and out-of-range indices
raising torch's error (RuntimeError from gather/scatter, IndexError
from the rest): on the CPU before anything is written, on the device
at the next synchronizing call (the kernel reports it, skipping the bad
elements), cleared once raised."""
import numpy as np
import pytest

import emu_counters
import fastt
import fastt.nn.functional as F
from cuda_util import (DEVICE, FLOAT_DTYPES, check, check_grad, rand,
                       requires_device, to_dev, to_numpy)

pytestmark = requires_device

SMALL_INTS = [fastt.uint8, fastt.int8, fastt.int16, fastt.int32, fastt.int64]
ALL10 = FLOAT_DTYPES + SMALL_INTS + [fastt.bool]
BIG = 2 ** 20 + 3  # multi-block, odd tail


def sample(shape, dtype, seed=0):
    """Values exact in every dtype (small integers for 16-bit floats'
    sakes where sums are compared exactly)."""
    if dtype == fastt.bool:
        return rand(*shape, dtype=dtype, seed=seed)
    if dtype == fastt.uint8:
        return rand(*shape, dtype=dtype, seed=seed, low=0, high=6)
    if dtype in SMALL_INTS:
        return rand(*shape, dtype=dtype, seed=seed, low=-4, high=5)
    return rand(*shape, dtype=dtype, seed=seed)


def int_valued(shape, dtype, seed=0):
    """Integer-valued samples: sums of a few are exact in every dtype, so
    accumulations in a different order still compare exactly."""
    if dtype == fastt.bool:
        return rand(*shape, dtype=dtype, seed=seed)
    lo = 0 if dtype == fastt.uint8 else -3
    ints = rand(*shape, dtype=fastt.int64, seed=seed, low=lo, high=4)
    return ints.to(dtype)


def index(shape, size, seed=1, negative=True):
    low = -size if negative else 0
    return rand(*shape, dtype=fastt.int64, seed=seed, low=low, high=size)


def unique_index(n, size, seed=2):
    """n distinct in-range positions, some written as negative."""
    gen = np.random.default_rng(seed)
    p = gen.permutation(size)[:n]
    p = np.where(gen.random(n) < 0.3, p - size, p)
    return fastt.tensor(p.astype(np.int64))


def nc(t):
    """The same values laid out non-contiguously on t's own device."""
    if t.dim() >= 2:
        return t.transpose(0, 1).contiguous().transpose(0, 1)
    if t.dim() == 1:
        return t.unsqueeze(1).expand(t.shape[0], 2).contiguous()[:, 0]
    return t


# ------------------------------------------------------- index_select --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select(dtype, dim):
    x = sample((45, 65), dtype)
    idx = index((37,), x.shape[dim])
    check(lambda t, i: fastt.index_select(t, dim, i), x, idx)
    check(lambda t, i: t.index_select(dim, nc(i)), x, idx)  # strided index
    check(lambda t, i: fastt.index_select(nc(t), dim, i), x, idx)
    check(lambda t, i: fastt.index_select(t, dim, i.to(fastt.int32)), x, idx)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.int64, fastt.bool],
                         ids=str)
def test_index_select_edges(dtype):
    x = sample((5, 7, 3), dtype)
    check(lambda t, i: fastt.index_select(t, 1, i), x,
          fastt.tensor([], dtype=fastt.int64))
    check(lambda t, i: fastt.index_select(t, 2, i), x, fastt.tensor(2))
    s = sample((), dtype)
    check(lambda t, i: fastt.index_select(t, 0, i), s, fastt.tensor([0]))
    e = sample((0, 4), dtype)
    check(lambda t, i: fastt.index_select(t, 1, i), e, fastt.tensor([3, 0]))
    big = sample((BIG,), dtype)
    check(lambda t, i: fastt.index_select(t, 0, i), big, index((BIG,), BIG))
    # Row widths hitting every word width of the direct form.
    for width in (1, 2, 3, 4, 8, 16, 33):
        w = sample((11, width), dtype)
        check(lambda t, i: fastt.index_select(t, 0, i), w, index((9,), 11))


# ---------------------------------------------------------------- gather --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dtype, dim):
    x = sample((45, 65), dtype)
    ishape = (30, 40)
    idx = index(ishape, x.shape[dim])
    check(lambda t, i: fastt.gather(t, dim, i), x, idx)
    check(lambda t, i: fastt.gather(nc(t), dim, nc(i)), x, idx)


@pytest.mark.parametrize("dtype", [fastt.float16, fastt.int32], ids=str)
def test_gather_shapes(dtype):
    x = sample((6, 7, 8), dtype)
    check(lambda t, i: fastt.gather(t, 1, i), x, index((6, 3, 8), 7))
    check(lambda t, i: t.gather(-1, i), x, index((2, 7, 5), 8))
    check(lambda t, i: fastt.gather(t, 0, i), sample((50,), dtype),
          index((70,), 50))
    check(lambda t, i: fastt.gather(t, 0, i), sample((), dtype),
          fastt.tensor(0))
    check(lambda t, i: fastt.gather(t, 0, i), sample((4, 5), dtype),
          fastt.zeros((0, 5), dtype=fastt.int64))


# --------------------------------------------------------------- scatter --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_unique(dtype, dim):
    # Unique targets: non-accumulating scatter is then deterministic.
    x = sample((45, 65), dtype)
    n = 20
    other = 65 if dim == 0 else 45
    cols = [unique_index(n, x.shape[dim], seed=s) for s in range(other)]
    idx = fastt.stack(cols, 1 if dim == 0 else 0)
    src = sample(tuple(idx.shape), dtype, seed=5)
    check(lambda t, i, s: fastt.scatter(t, dim, i, s), x, idx, src)
    check(lambda t, i, s: nc(t).scatter_(dim, nc(i), nc(s)), x, idx, src)
    value = True if dtype == fastt.bool else 3
    check(lambda t, i: fastt.scatter(t, dim, i, value), x, idx)


@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_add_duplicates(dtype, dim):
    x = int_valued((17, 19), dtype)
    # More index entries than targets along dim: many collisions.
    idx = index((30, 19) if dim == 0 else (17, 40), x.shape[dim])
    src = int_valued(tuple(idx.shape), dtype, seed=3)
    check(lambda t, i, s: fastt.scatter_add(t, dim, i, s), x, idx, src)
    check(lambda t, i, s: nc(t).scatter_add_(dim, nc(i), nc(s)), x, idx, src)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64,
                                   fastt.float16, fastt.bfloat16], ids=str)
def test_scatter_add_random_floats(dtype):
    # Non-integer sums: the device adds in another order (atomics).
    x = rand(8, 50, dtype=dtype)
    idx = index((8, 1000), 50, negative=False)  # ~20 adds per target
    src = rand(8, 1000, dtype=dtype, seed=4)
    r, a = {fastt.float32: (1e-5, 1e-4), fastt.float64: (1e-12, 1e-11),
            fastt.float16: (2e-2, 0.5), fastt.bfloat16: (5e-2, 2.0)}[dtype]
    check(lambda t, i, s: fastt.scatter_add(t, 1, i, s), x, idx, src,
          rtol=r, atol=a)


def test_scatter_add_big():
    x = fastt.zeros(1000, dtype=fastt.int64)
    idx = index((BIG,), 1000, negative=False)
    src = rand(BIG, dtype=fastt.int64, low=-5, high=6)
    check(lambda t, i, s: fastt.scatter_add(t, 0, i, s), x, idx, src)
    xf = fastt.zeros(1000, dtype=fastt.float32)
    check(lambda t, i, s: fastt.scatter_add(t, 0, i, s.float()), xf, idx,
          src)  # integer-valued: exact in float32 up to 2^24


def test_one_hot():
    idx = index((5, 7), 9, negative=False)
    check(lambda i: fastt.one_hot(i, 9), idx)
    check(lambda i: F.one_hot(i), idx)


# ------------------------------------------------------------- index_add --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_add(dtype, dim):
    x = int_valued((13, 15), dtype)
    n = 40
    idx = index((n,), x.shape[dim])  # duplicates, negatives
    sshape = (n, 15) if dim == 0 else (13, n)
    src = int_valued(sshape, dtype, seed=7)
    check(lambda t, i, s: fastt.index_add(t, dim, i, s), x, idx, src)
    check(lambda t, i, s: nc(t).index_add_(dim, nc(i), nc(s)), x, idx, src)
    if dtype != fastt.bool:
        alpha = 2 if dtype not in FLOAT_DTYPES else 0.5
        check(lambda t, i, s: fastt.index_add(t, dim, i, s, alpha=alpha), x,
              idx, src)


def test_index_add_alpha_wraps():
    # int8 sums wrap modulo 256 in any order.
    x = fastt.full((4,), 100, dtype=fastt.int8)
    idx = fastt.tensor([0, 0, 0, 1, 3, 3])
    src = fastt.tensor([90, 90, 90, -100, 7, 7], dtype=fastt.int8)
    check(lambda t, i, s: fastt.index_add(t, 0, i, s, alpha=3), x, idx, src)


# ------------------------------------------------------ advanced index --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_index(dtype):
    x = sample((9, 10, 11), dtype)
    i0 = index((4,), 9)
    i1 = index((4,), 10, seed=3)
    i2 = index((2, 4), 11, seed=4)
    check(lambda t, a: t[a], x, i0)                  # direct form
    check(lambda t, a: nc(t)[a], x, i0)              # strided form
    check(lambda t, a: t[:, a], x, i1)
    check(lambda t, a, b: t[a, b], x, i0, i1)
    check(lambda t, a, b: t[a, :, b], x, i0, i2)     # non-adjacent
    check(lambda t, a: t[..., a], x, i2)
    check(lambda t, a: t[a.to(fastt.int32)], x, i0)
    mask = rand(9, 10, dtype=fastt.bool, seed=5)
    check(lambda t, m: t[m], x, mask)
    check(lambda t, m: t[:, m[0]], x, mask)
    check(lambda t: t[fastt.tensor(True, device=t.device)], x)
    check(lambda t: t[fastt.tensor(False, device=t.device)], x)
    check(lambda t: t[fastt.tensor([], dtype=fastt.int64, device=t.device)],
          x)


@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_index_put(dtype):
    x = int_valued((9, 10), dtype)
    rows = unique_index(6, 9)
    v = int_valued((6, 10), dtype, seed=8)
    check(lambda t, i, w: t.clone().index_put_((i,), w), x, rows, v)
    check(lambda t, i, w: fastt.index_put(t, (i,), w[0]), x, rows, v)
    dup = index((25,), 9)
    vd = int_valued((25, 10), dtype, seed=9)
    check(lambda t, i, w: t.clone().index_put_((i,), w, accumulate=True), x,
          dup, vd)
    cols = index((25,), 10, seed=6)
    check(lambda t, i, j, w: fastt.index_put(t, (i, j), w[:, 0],
                                             accumulate=True),
          x, dup, cols, vd)
    mask = rand(9, 10, dtype=fastt.bool, seed=2)
    val = int_valued((), dtype, seed=3)
    check(lambda t, m, w: t.clone().index_put_((m,), w), x, mask, val)


def test_masked_scatter():
    x = rand(6, 7)
    mask = rand(6, 7, dtype=fastt.bool, seed=3)
    src = rand(42, seed=4)
    check(lambda t, m, s: t.clone().masked_scatter_(m, s), x, mask, src)


# -------------------------------------------------------------- embedding --
@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64], ids=str)
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding(dtype, padding_idx):
    w = rand(20, 16, dtype=dtype).requires_grad_(True)
    idx = index((5, 7), 20, negative=False)
    idx = fastt.cat([idx.reshape(-1), fastt.tensor([2, 2, 19])]).reshape(
        2, 19)
    check(lambda wt, i: F.embedding(i, wt.detach(), padding_idx), w, idx)
    check_grad(lambda wt, i: F.embedding(i, wt, padding_idx), w, idx,
               what="embedding")


@pytest.mark.parametrize("dim", [3, 5, 8, 64])
def test_embedding_widths(dim):
    w = rand(50, dim, dtype=fastt.float16)
    idx = index((33,), 50, negative=False)
    check(lambda wt, i: F.embedding(i, wt), w, idx)
    check(lambda wt, i: F.embedding(i.to(fastt.int32), wt), w, idx)


# -------------------------------------------------------------- bounds --
# The CPU raises before any kernel runs; a CUDA kernel reports a bad index
# through the device error slot and the next call that waits for the
# device raises it. So each case runs the op AND a sync (.cpu()) inside
# pytest.raises: both modes pass, and the device must raise by then.
def on_device():
    return fastt.device(DEVICE).type != "cpu"


def oob(bad, op, dim, size=6):
    """The message (CPU's, which the device's extends) as a regex."""
    prefix = rf"^{op}\(\): " if op else "^"
    return rf"{prefix}index {bad} is out of bounds for dimension {dim} " \
        rf"with size {size}"


BAD = [
    ("index_select", lambda t, i: fastt.index_select(t, 0, i),
     "index_select", 0),
    ("index_select_strided", lambda t, i: fastt.index_select(nc(t), 1, i),
     "index_select", 1),
    ("index_select_int32",
     lambda t, i: fastt.index_select(t, 1, i.to(fastt.int32)),
     "index_select", 1),
    ("gather", lambda t, i: fastt.gather(t, 0, i.reshape(1, -1)), "gather",
     0),
    ("gather_1d", lambda t, i: fastt.gather(t[0], 0, i), "gather", 0),
    ("index", lambda t, i: t[i], None, 0),
    ("index_2", lambda t, i: t[:, i], None, 1),
    ("index_pair", lambda t, i: t[i, i * 0], None, 0),
    ("embedding", lambda t, i: F.embedding(i, t), "embedding", 0),
    ("embedding_2d", lambda t, i: F.embedding(i.reshape(2, 2), nc(t)),
     "embedding", 0),
]


# Every BAD row with every bad index, except int32 indices past int32's range.
BAD_CASES = [pytest.param(*b, bad, id=f"{bad}-{b[0]}") for bad in
             (6, -7, 1 << 40) for b in BAD
             if not (b[0].endswith("int32") and bad >= 2 ** 31)]


@pytest.mark.parametrize("name,fn,op,dim,bad", BAD_CASES)
def test_out_of_range_raises(name, fn, op, dim, bad):
    x = rand(6, 6)
    xd = to_dev(x)
    # torch's classes: RuntimeError from gather/scatter, IndexError else
    cls = RuntimeError if op in ("gather", "scatter", "scatter_add") else \
        IndexError
    with pytest.raises(cls, match=oob(bad, op, dim)) as info:
        y = fn(xd, to_dev(fastt.tensor([0, 5, bad, 1])))
        y.cpu()
    if on_device():
        assert "next synchronization" in str(info.value)
    # Raised once, then cleared: valid calls (negative indices wrapped as
    # on the CPU) work and match again.
    check(fn, x, fastt.tensor([0, 5, -6, 1]))
    fastt.index_select(xd, 0, to_dev(fastt.tensor([1]))).cpu()


def test_out_of_range_zero_fills_on_device():
    """Where a gather-like kernel met a bad index it writes 0 (a
    deterministic result, never memory it should not read)."""
    x = rand(6, 6)
    xd = to_dev(x)
    i = to_dev(fastt.tensor([1, 9, 2]))
    with pytest.raises(IndexError, match=oob(9, "index_select", 0)):
        ys = [fastt.index_select(xd, 0, i), fastt.index_select(xd, 1, i),
              xd[i], F.embedding(i, xd)]
        for y in ys:
            y.cpu()
    if not on_device():
        return
    rows = to_numpy(x)[[1, 0, 2]]
    rows[1] = 0
    cols = to_numpy(x)[:, [1, 0, 2]]
    cols[:, 1] = 0
    for y in ys[::2] + ys[3:]:
        np.testing.assert_array_equal(to_numpy(y), rows)
    np.testing.assert_array_equal(to_numpy(ys[1]), cols)


def test_first_error_wins_and_clears():
    """Several bad ops before a sync: the first one's error is raised, the
    later reports are dropped; after raising, syncs are clean."""
    x = rand(6, 6)
    xd = to_dev(x)
    with pytest.raises(IndexError, match=oob(9, "index_select", 0)):
        fastt.index_select(xd, 0, to_dev(fastt.tensor([9])))
        fastt.gather(xd, 1, to_dev(fastt.tensor([[8]])))
        F.embedding(to_dev(fastt.tensor([7])), xd)
        xd.sum().item()
    assert xd.sum().item() == pytest.approx(x.sum().item(), rel=1e-5)
    # Several bad values in one op: one of them is named.
    with pytest.raises(IndexError, match=r"index (7|-9) is out of bounds"):
        fastt.index_select(xd, 0, to_dev(fastt.tensor([0, 7, -9, 1]))).cpu()
    xd.cpu()


def test_pending_error_raised_by_data_dependent_size():
    """nonzero/masked_select wait for the device to size their result:
    that wait raises an earlier op's error."""
    x = rand(6, 6)
    xd = to_dev(x)
    with pytest.raises(RuntimeError, match=oob(6, "gather", 1)):
        fastt.gather(xd, 1, to_dev(fastt.tensor([[0, 6]])))
        fastt.nonzero(xd)
    with pytest.raises(IndexError, match=oob(-7, None, 0)):
        xd[to_dev(fastt.tensor([-7]))]
        fastt.masked_select(xd, xd > 0)
    check(lambda t: fastt.masked_select(t, t > 0), x)


INPLACE = [
    ("index_add_", lambda t, i, s: t.index_add_(0, i, s)),
    ("index_put_acc", lambda t, i, s: t.index_put_((i,), s,
                                                   accumulate=True)),
    ("index_put", lambda t, i, s: t.index_put_((i,), s)),
    ("setitem", lambda t, i, s: t.__setitem__(i, s)),
    ("scatter_", lambda t, i, s: t.scatter_(
        0, i.reshape(-1, 1).expand(-1, 6).contiguous(), s)),
    ("scatter_value", lambda t, i, s: t.scatter_(
        0, i.reshape(-1, 1).expand(-1, 6).contiguous(), 3.0)),
    ("scatter_add_", lambda t, i, s: t.scatter_add_(
        1, i.reshape(1, -1), s[:, 0].reshape(1, -1).contiguous())),
]


@pytest.mark.parametrize("name,fn", INPLACE, ids=[c[0] for c in INPLACE])
@pytest.mark.parametrize("bad", [6, -7])
def test_out_of_range_inplace(name, fn, bad):
    """CPU: raises before writing (self untouched). Device: raises at the
    next sync; the kernel skipped exactly the bad elements."""
    x = rand(6, 6)
    before = x.clone()
    src = rand(3, 6, seed=2)
    xd = to_dev(x)
    # torch's classes: RuntimeError from the scatter family, IndexError else
    cls = RuntimeError if name.startswith("scatter") else IndexError
    with pytest.raises(cls, match=rf"index {bad} is out of bounds"):
        fn(xd, to_dev(fastt.tensor([0, bad, 1])), to_dev(src))
        xd.cpu()
    want = before.clone()
    if on_device():
        fn(want, fastt.tensor([0, 1]), src[fastt.tensor([0, 2])])
    np.testing.assert_array_equal(to_numpy(xd), to_numpy(want))
    check(lambda t: t * 2, rand(3))  # the device is still usable


# ------------------------------------------------------------ cat/stack --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dtype, dim):
    a = sample((4, 5, 6), dtype)
    b = sample((4, 5, 6), dtype, seed=1)
    c = sample((4, 5, 6), dtype, seed=2)
    sizes = [2, 3, 1]
    parts = [t.narrow(dim, 0, s) for t, s in zip((a, b, c), sizes)]
    parts = [p.contiguous() for p in parts]
    check(lambda *ts: fastt.cat(list(ts), dim), *parts)
    check(lambda *ts: fastt.cat([nc(t) for t in ts], dim), *parts)
    check(lambda *ts: fastt.stack(list(ts), dim), a, b, c)


def test_cat_many_and_mixed():
    many = [rand(3, i % 4 + 1, seed=i) for i in range(150)]  # > batch of 64
    check(lambda *ts: fastt.cat(list(ts), 1), *many)
    check(lambda *ts: fastt.cat(list(ts), 0), *[m.t().contiguous()
                                                 for m in many])
    mixed = [rand(2, 3), rand(2, 3, dtype=fastt.int32, seed=1),
             rand(2, 3, dtype=fastt.float16, seed=2)]
    check(lambda *ts: fastt.cat(list(ts)), *mixed)
    legacy = [rand(2, 3), fastt.tensor([]), rand(1, 3, seed=1)]
    check(lambda *ts: fastt.cat(list(ts)), *legacy)
    check(lambda *ts: fastt.cat(list(ts), 1), rand(1, BIG), rand(1, 5))
    check(lambda *ts: fastt.cat(list(ts), 1), rand(BIG, 1), rand(BIG, 2))
    check(lambda *ts: fastt.cat(list(ts)), rand(0, 3), rand(0, 3))


# --------------------------------------------- masked_select, nonzero --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_masked_select(dtype):
    x = sample((45, 65), dtype)
    m = rand(45, 65, dtype=fastt.bool, seed=3)
    check(fastt.masked_select, x, m)
    check(lambda t, k: fastt.masked_select(nc(t), nc(k)), x, m)
    check(fastt.masked_select, x, m[0])             # broadcast mask
    check(fastt.masked_select, x[:, :1], m)         # broadcast self
    check(fastt.masked_select, x, fastt.zeros_like(m))
    check(fastt.masked_select, sample((0, 3), dtype),
          fastt.ones(3, dtype=fastt.bool))
    check(fastt.masked_select, sample((), dtype), fastt.tensor(True))


def test_masked_select_big():
    x = rand(BIG)
    check(fastt.masked_select, x, rand(BIG, dtype=fastt.bool, seed=1))


@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_nonzero(dtype):
    x = sample((7, 9, 11), dtype)
    check(fastt.nonzero, x)
    check(lambda t: fastt.nonzero(nc(t)), x)
    check(lambda t: fastt.nonzero(t, as_tuple=True), x)
    check(fastt.nonzero, sample((5,), dtype))
    check(fastt.nonzero, sample((), dtype))
    check(fastt.nonzero, fastt.ones((), dtype=dtype))
    check(fastt.nonzero, fastt.zeros((4, 0), dtype=dtype))
    check(fastt.nonzero, fastt.zeros((4, 3), dtype=dtype))


def test_nonzero_nan_and_big():
    check(fastt.nonzero, fastt.tensor([0.0, float("nan"), -0.0, 1.0]))
    check(fastt.nonzero, rand(BIG, dtype=fastt.bool))


# ------------------------------------------------------------- tril/triu --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("k", [-2, 0, 1, 70])
def test_tril_triu(dtype, k):
    x = sample((45, 65), dtype)
    check(lambda t: fastt.tril(t, k), x)
    check(lambda t: fastt.triu(t, k), x)
    check(lambda t: fastt.tril(nc(t), k), x)
    check(lambda t: t.clone().triu_(k), x)
    check(lambda t: nc(t).tril_(k), x)  # non-contiguous in place
    b = sample((3, 5, 4), dtype)
    check(lambda t: fastt.triu(t, k), b)
    check(lambda t: fastt.tril(t, k), sample((0, 3), dtype))


def test_tril_grad():
    x = rand(6, 5, dtype=fastt.float64).requires_grad_(True)
    check_grad(lambda t: fastt.tril(t, -1) + fastt.triu(t, 2), x)


# ------------------------------------------------------------ flip/roll --
@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_flip(dtype):
    x = sample((6, 7, 8), dtype)
    for dims in [(0,), (-1,), (0, 2), (2, 1, 0), ()]:
        check(lambda t: fastt.flip(t, dims), x)
        check(lambda t: fastt.flip(nc(t), dims), x)
    check(lambda t: fastt.flip(t, (0,)), sample((), dtype))
    check(lambda t: fastt.flip(t, (0,)), sample((0, 3), dtype))
    check(lambda t: fastt.flip(t, (0,)), sample((BIG,), dtype))


@pytest.mark.parametrize("dtype", ALL10, ids=str)
def test_roll(dtype):
    x = sample((6, 7, 8), dtype)
    cases = [(1, 0), (-2, 1), (9, -1), ((1, 3), (0, 2)), ((2, -3), (1, 1)),
             ((5, 6, 7), (0, 1, 2))]
    for shifts, dims in cases:
        check(lambda t: fastt.roll(t, shifts, dims), x)
        check(lambda t: fastt.roll(nc(t), shifts, dims), x)
    check(lambda t: fastt.roll(t, 5), x)  # flattened
    check(lambda t: fastt.roll(t, 3, 0), sample((BIG,), dtype))
    check(lambda t: fastt.roll(t, 1, 0), sample((0, 2), dtype))


def test_flip_roll_grad():
    x = rand(5, 6, dtype=fastt.float64).requires_grad_(True)
    check_grad(lambda t: fastt.flip(t, (0, 1)) * fastt.roll(t, (2, -1),
                                                            (0, 1)), x)


# ------------------------------------------------------------ sort/topk --
def tie_heavy(shape, dtype, seed=0):
    """Few distinct values, so stability decides the index order."""
    if dtype == fastt.bool:
        return rand(*shape, dtype=dtype, seed=seed)
    lo = 0 if dtype == fastt.uint8 else -2
    return rand(*shape, dtype=fastt.int64, seed=seed, low=lo,
                high=3).to(dtype)


@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dtype, dim, descending):
    for x in (sample((45, 65), dtype), tie_heavy((45, 65), dtype)):
        # Stable on both backends: values AND indices must match exactly.
        check(lambda t: fastt.sort(t, dim, descending=descending), x,
              rtol=0, atol=0)
        check(lambda t: fastt.sort(nc(t), dim, descending=descending), x,
              rtol=0, atol=0)
        check(lambda t: fastt.argsort(t, dim, descending=descending), x)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64,
                                   fastt.float16, fastt.bfloat16], ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_nan_zero_inf(dtype, descending):
    nan, inf = float("nan"), float("inf")
    vals = [1.0, nan, -0.0, 0.0, -inf, inf, nan, -1.0, 0.0, -0.0, 2.0, nan]
    x = fastt.tensor(vals).to(dtype)
    check(lambda t: fastt.sort(t, descending=descending), x, rtol=0, atol=0)
    xs = fastt.tensor(vals * 300).to(dtype).reshape(60, 60)  # long rows
    check(lambda t: fastt.sort(t, 0, descending=descending), xs, rtol=0,
          atol=0)
    check(lambda t: fastt.topk(t, 7, largest=descending), x, rtol=0, atol=0)


def test_sort_big_and_edges():
    check(lambda t: fastt.sort(t), rand(BIG), rtol=0, atol=0)
    check(lambda t: fastt.sort(t, descending=True),
          tie_heavy((BIG,), fastt.int32), rtol=0, atol=0)
    check(lambda t: fastt.sort(t, 1), rand(3000, 7), rtol=0, atol=0)
    check(lambda t: fastt.sort(t, 0), rand(1, 9), rtol=0, atol=0)
    check(lambda t: fastt.sort(t), rand(), rtol=0, atol=0)
    check(lambda t: fastt.sort(t, 0), rand(0, 4), rtol=0, atol=0)
    check(lambda t: fastt.sort(t, 1), rand(3, 0), rtol=0, atol=0)
    check(lambda t: fastt.sort(t, 1), rand(3, 4, 5).permute(2, 0, 1),
          rtol=0, atol=0)


LONG_ROW = 2 ** 16 + 17  # sort.cu's kLongRow: few such rows sort one by one


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float16,
                                   fastt.int64, fastt.bool], ids=str)
def test_sort_few_long_rows(dtype):
    # Few long rows take the device-wide radix sort, row by row (each row's
    # keys, positions and output at its own offset); keys of 1, 2, 4 and 8
    # bytes. Tie-heavy values: stability fixes the indices exactly.
    x = tie_heavy((LONG_ROW, 2), dtype, seed=3)  # rows along dim 0
    for desc in (False, True):
        check(lambda t: fastt.sort(t, 0, descending=desc), x, rtol=0,
              atol=0)
    check(lambda t: fastt.topk(t, 5, 0), x, rtol=0, atol=0)
    check(lambda t: fastt.sort(t, descending=True), x[:, 1].contiguous(),
          rtol=0, atol=0)


def _emu_cub_calls(fn):
    """CUB calls fn makes, counted by the CUDA emulation build."""
    return emu_counters.calls(fn)["cub"]


@emu_counters.requires_emu
def test_sort_long_rows_use_device_wide_sort():
    # A few long rows must not go through the segmented sort (one block per
    # segment on a GPU); many short rows must.
    x = to_dev(rand(LONG_ROW, 3))
    calls = _emu_cub_calls(lambda: fastt.sort(x, 0))
    assert calls.get("DeviceRadixSort::SortPairs") == 1 + 3  # query, rows
    assert "DeviceSegmentedSort::StableSortPairs" not in calls
    calls = _emu_cub_calls(lambda: fastt.sort(x[:64], 1))
    assert calls.get("DeviceSegmentedSort::StableSortPairs") == 2


@pytest.mark.parametrize("dtype", ALL10, ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, largest):
    x = sample((45, 65), dtype)
    t = tie_heavy((45, 65), dtype)
    for k in (0, 1, 5, 65):
        check(lambda a: fastt.topk(a, k, largest=largest), x, rtol=0, atol=0)
        check(lambda a: fastt.topk(a, k, largest=largest), t, rtol=0, atol=0)
    for k in (1, 45):
        check(lambda a: fastt.topk(a, k, 0, largest=largest), x, rtol=0,
              atol=0)
        check(lambda a: fastt.topk(nc(a), k, 0, largest=largest), t, rtol=0,
              atol=0)
    check(lambda a: fastt.topk(a, 1), sample((), dtype), rtol=0, atol=0)


def test_topk_big():
    check(lambda t: fastt.topk(t, 10), rand(BIG), rtol=0, atol=0)
    check(lambda t: fastt.topk(t, 3, largest=False),
          tie_heavy((BIG,), fastt.int64), rtol=0, atol=0)


def test_sort_topk_grad():
    x = rand(6, 9, dtype=fastt.float64).requires_grad_(True)
    check_grad(lambda t: fastt.sort(t, 1)[0], x, what="sort")
    check_grad(lambda t: fastt.topk(t, 3, 0)[0], x, what="topk")


def test_index_grads():
    x = rand(7, 8, dtype=fastt.float64).requires_grad_(True)
    i = index((5,), 7)
    g = index((7, 3), 8, seed=5)
    check_grad(lambda t, a: fastt.index_select(t, 0, a), x, i, what="isel")
    check_grad(lambda t, a: fastt.gather(t, 1, a), x, g, what="gather")
    check_grad(lambda t, a: t[a], x, i, what="index")
    check_grad(lambda t: fastt.cat([t, t * 2], 1), x, what="cat")
    src = rand(5, 8, dtype=fastt.float64, seed=3).requires_grad_(True)
    check_grad(lambda t, a, s: fastt.index_add(t, 0, a, s), x, i, src,
               what="index_add")
    m = rand(7, 8, dtype=fastt.bool, seed=6)
    check_grad(lambda t, k: fastt.masked_select(t, k), x, m,
               what="masked_select")
