"""The fused nn kernels on the device (kernels/cuda/softmax.cu, norm.cu,
loss.cu) against the same ops on CPU: softmax / log_softmax over every dim
position and row lengths that take the warp, block and column paths; layer
and RMS norm with every affine / mask variant and enough rows for the
multi-chunk weight-grad reduction; cross-entropy / NLL with every option
and reduction (and enough positions for the two-stage sum); embedding
backward; autograd through all of them and fastt.nn modules on the device.
"""
import math

import numpy as np
import pytest

import fastt
import fastt.nn as nn
import fastt.nn.functional as F
from fastt import _C

from cuda_util import (DEVICE, FLOAT_DTYPES, assert_close, check, check_grad,
                       noncontig, rand, requires_device, to_dev)

pytestmark = requires_device

ROW_LENGTHS = [1, 7, 33, 1000, 4097]
LOW = (fastt.float16, fastt.bfloat16)


def gtol(dtype, scale=1.0):
    """Tolerances for gradients (a reduction, then an elementwise pass)."""
    return {fastt.float32: (1e-4, 1e-5), fastt.float64: (1e-10, 1e-12),
            fastt.float16: (2e-2, 2e-2), fastt.bfloat16: (5e-2, 5e-2)}[
                dtype] if scale == 1.0 else tuple(
                    v * scale for v in gtol(dtype))


def on_device():
    return fastt.device(DEVICE).type != "cpu"


# ---------------------------------------------------------------------------
# softmax / log_softmax
# ---------------------------------------------------------------------------
SOFTMAX_FNS = [fastt.softmax, fastt.log_softmax]
SOFTMAX_IDS = ["softmax", "log_softmax"]


@pytest.mark.parametrize("fn", SOFTMAX_FNS, ids=SOFTMAX_IDS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", ROW_LENGTHS)
def test_softmax_rows(fn, dtype, n):
    x = rand(5, n, dtype=dtype, seed=n, low=-6, high=6)
    check(fn, x, -1)
    check(fn, x, 1)


@pytest.mark.parametrize("fn", SOFTMAX_FNS, ids=SOFTMAX_IDS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim", [
    ((33, 6, 5), 0), ((6, 33, 5), 1), ((6, 5, 33), 2),     # first/mid/last
    ((1000, 3), 0), ((3, 1000, 2), 1), ((7, 1, 9), 1),     # few columns
    ((4097, 40), 0), ((2, 5, 300), 1), ((1, 7), 0),        # many / n == 1
])
def test_softmax_dims(fn, dtype, shape, dim):
    x = rand(*shape, dtype=dtype, seed=len(shape) + dim, low=-5, high=5)
    check(fn, x, dim)


@pytest.mark.parametrize("fn", SOFTMAX_FNS, ids=SOFTMAX_IDS)
def test_softmax_special_shapes(fn):
    check(fn, fastt.tensor(1.5), 0)                     # 0-d
    check(fn, fastt.zeros(0, 7), 1)                     # empty rows
    check(fn, fastt.zeros(4, 0), 1)                     # empty dim
    check(fn, fastt.zeros(3, 0, 5), 0)
    x = rand(9, 13, seed=3)
    check(fn, noncontig(x), 1)                          # transposed layout
    check(fn, noncontig(x), 0)
    check(fn, x[:, ::2], 1)                             # strided slice
    check(fn, rand(7, dtype=fastt.float64), 0)
    check(fn, rand(3, 4, dtype=fastt.float64), 1, dtype=fastt.float32)


@pytest.mark.parametrize("fn", SOFTMAX_FNS, ids=SOFTMAX_IDS)
def test_softmax_large(fn):
    # One row of 2^20 + 3 (block path, many elements per thread), many
    # short rows (grid-stride over warps), a long strided column.
    check(fn, rand(2, 2 ** 20 + 3, seed=4, low=-20, high=20), 1)
    check(fn, rand(70000, 5, seed=5), 1)
    check(fn, rand(70000, 3, seed=6), 0)
    check(fn, rand(3, 40000, dtype=fastt.float16, seed=7), 1)


@pytest.mark.parametrize("fn", SOFTMAX_FNS, ids=SOFTMAX_IDS)
@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64,
                                   fastt.float16])
@pytest.mark.parametrize("n", [7, 2000])
def test_softmax_inf_nan(fn, dtype, n):
    inf, nan = math.inf, math.nan
    rows = np.random.default_rng(1).uniform(-3, 3, size=(7, n))
    rows[0, :] = -inf                        # all -inf: NaN row
    rows[1, 3] = nan                         # a NaN: NaN row
    rows[2, :] = -inf
    rows[2, n // 2] = 1.0                    # one finite among -inf
    rows[3, 1] = inf                         # +inf: NaN row (like CPU)
    rows[4, ::2] = -inf                      # half -inf
    rows[5, :] = 1e4                         # large equal logits
    rows[6, 0] = -inf                        # -inf first in the row
    x = fastt.tensor(rows).to(dtype)
    check(fn, x, 1)
    check(fn, noncontig(x), 0)
    check(fn, x.t().contiguous(), 0)         # the same rows as columns


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim", [
    ((5, 1), 1), ((5, 7), 1), ((4, 33), 1), ((3, 1000), 1), ((2, 4097), 1),
    ((33, 6, 5), 0), ((6, 33, 5), 1), ((2000, 3), 0), ((), 0), ((0, 3), 1),
])
def test_softmax_backward_kernel(log, dtype, shape, dim):
    x = rand(*shape, dtype=dtype, seed=11, low=-4, high=4)
    y = (fastt.log_softmax if log else fastt.softmax)(x, dim)
    g = rand(*shape, dtype=dtype, seed=12)
    bwd = _C._log_softmax_backward if log else _C._softmax_backward
    r, a = gtol(dtype)
    check(bwd, g, y, dim, rtol=r, atol=a)
    if len(shape) == 2:
        check(bwd, noncontig(g), y, dim, rtol=r, atol=a)


@pytest.mark.parametrize("fn", SOFTMAX_FNS, ids=SOFTMAX_IDS)
@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64])
@pytest.mark.parametrize("shape,dim", [((6, 33), 1), ((3, 1500), -1),
                                       ((7, 4, 9), 1), ((50, 3), 0)])
def test_softmax_grad(fn, dtype, shape, dim):
    x = rand(*shape, dtype=dtype, seed=13).requires_grad_(True)
    r, a = gtol(dtype)
    check_grad(lambda t: fn(t, dim), x, rtol=r, atol=a, what=fn.__name__)


# ---------------------------------------------------------------------------
# layer norm / RMS norm
# ---------------------------------------------------------------------------
def norm_inputs(rows, cols, dtype, seed=0):
    x = rand(rows, cols, dtype=dtype, seed=seed, low=-3, high=3)
    w = rand(cols, dtype=dtype, seed=seed + 1, low=0.5, high=1.5)
    b = rand(cols, dtype=dtype, seed=seed + 2)
    g = rand(rows, cols, dtype=dtype, seed=seed + 3)
    return x, w, b, g


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("cols", ROW_LENGTHS)
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm(dtype, cols, affine):
    x, w, b, g = norm_inputs(6, cols, dtype, seed=cols)
    w = w if affine in ("weight", "both") else None
    b = b if affine in ("bias", "both") else None
    r, a = gtol(dtype)
    _, (o, mean, rstd) = check(_C._layer_norm, x, [cols], w, b, 1e-5,
                               rtol=r, atol=a)
    # Backward from the CPU's saved statistics (moved to the device), every
    # mask combination.
    for mask in [(True, True, True), (True, False, False),
                 (False, True, True), (False, True, False)]:
        cpu = _C._layer_norm_backward(g, x, [cols], mean, rstd, w, b, mask)
        dev = _C._layer_norm_backward(*to_dev((g, x, [cols], mean, rstd, w,
                                               b)), mask)
        for d, c in zip(dev, cpu, strict=True):
            assert (d is None) == (c is None)
            if c is not None:
                assert_close(d, c, *gtol(dtype, 4.0), what=f"mask {mask}")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,cols", [(3000, 33), (513, 1000), (70000, 7),
                                       (2, 20000), (0, 5), (1, 1)])
def test_layer_norm_shapes(dtype, rows, cols):
    # Many rows: several row chunks in the weight-grad column reduction.
    x, w, b, g = norm_inputs(rows, cols, dtype, seed=3)
    _, (o, mean, rstd) = check(_C._layer_norm, x, [cols], w, b, 1e-5,
                               rtol=gtol(dtype)[0], atol=gtol(dtype)[1])
    r, a = gtol(dtype, 10.0 if rows >= 3000 else 4.0)
    check(_C._layer_norm_backward, g, x, [cols], mean, rstd, w, b,
          (True, True, True), rtol=r, atol=a)


def test_layer_norm_layouts():
    x = rand(4, 6, 10, seed=21)
    w, b = rand(6, 10, seed=22), rand(6, 10, seed=23)
    check(_C._layer_norm, x, [6, 10], w, b, 1e-5, rtol=1e-4, atol=1e-5)
    check(_C._layer_norm, noncontig(x), [6, 10], noncontig(w), b, 1e-3,
          rtol=1e-4, atol=1e-5)
    # Inputs far from zero keep their precision (centred sums).
    check(_C._layer_norm, rand(5, 100, seed=24, low=1e4, high=1e4 + 1),
          [100], None, None, 1e-5, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("cols", ROW_LENGTHS)
@pytest.mark.parametrize("weighted", [False, True])
def test_rms_norm(dtype, cols, weighted):
    x, w, _, g = norm_inputs(6, cols, dtype, seed=cols + 7)
    w = w if weighted else None
    r, a = gtol(dtype)
    for eps in (None, 1e-3):
        _, (o, rstd) = check(_C._rms_norm, x, [cols], w, eps, rtol=r, atol=a)
    for mask in [(True, True), (True, False), (False, True)]:
        cpu = _C._rms_norm_backward(g, x, [cols], rstd, w, mask)
        dev = _C._rms_norm_backward(*to_dev((g, x, [cols], rstd, w)), mask)
        for d, c in zip(dev, cpu, strict=True):
            assert (d is None) == (c is None)
            if c is not None:
                assert_close(d, c, *gtol(dtype, 4.0), what=f"mask {mask}")


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.bfloat16])
@pytest.mark.parametrize("rows,cols", [(3000, 33), (70000, 7), (2, 20000),
                                       (0, 5)])
def test_rms_norm_shapes(dtype, rows, cols):
    x, w, _, g = norm_inputs(rows, cols, dtype, seed=5)
    _, (o, rstd) = check(_C._rms_norm, x, [cols], w, None,
                         rtol=gtol(dtype)[0], atol=gtol(dtype)[1])
    r, a = gtol(dtype, 10.0)
    check(_C._rms_norm_backward, g, noncontig(x), [cols], rstd, w,
          (True, True), rtol=r, atol=a)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64])
@pytest.mark.parametrize("cols", [7, 1000, 4097])
def test_norm_grad(dtype, cols):
    x = rand(5, cols, dtype=dtype, seed=31).requires_grad_(True)
    w = rand(cols, dtype=dtype, seed=32).requires_grad_(True)
    b = rand(cols, dtype=dtype, seed=33).requires_grad_(True)
    r, a = gtol(dtype, 4.0)
    check_grad(lambda x, w, b: F.layer_norm(x, (cols,), w, b), x, w, b,
               rtol=r, atol=a, what="layer_norm")
    check_grad(lambda x, w: F.rms_norm(x, (cols,), w), x, w, rtol=r,
               atol=a, what="rms_norm")
    check_grad(lambda x: F.layer_norm(x, (cols,)), x, rtol=r, atol=a,
               what="layer_norm (no affine)")


# ---------------------------------------------------------------------------
# cross-entropy / NLL
# ---------------------------------------------------------------------------
CE_SHAPES = [(45, 65), (7, 10), (3, 5, 4, 2), (2, 6, 70), (9,), (0, 5),
             (4, 4097), (8, 1000)]


def class_count(shape):
    return shape[0] if len(shape) == 1 else shape[1]


def targets(shape, classes, seed, ignore_index=None):
    tshape = () if len(shape) == 1 else (shape[0],) + tuple(shape[2:])
    t = np.random.default_rng(seed).integers(0, max(classes, 1), tshape)
    if ignore_index is not None and t.size > 1:
        t.reshape(-1)[::3] = ignore_index
    return fastt.tensor(t, dtype=fastt.int64)


def loss_case(shape, dtype, weighted, ignore, seed=0):
    C = class_count(shape)
    x = rand(*shape, dtype=dtype, seed=seed, low=-6, high=6)
    t = targets(shape, C, seed + 1, ignore)
    w = rand(C, dtype=dtype, seed=seed + 2, low=0.1, high=1.1) \
        if weighted else None
    return x, t, w


def ce_tol(dtype):
    return {fastt.float32: (1e-4, 1e-5), fastt.float64: (1e-10, 1e-12),
            fastt.float16: (2e-2, 1e-2), fastt.bfloat16: (5e-2, 3e-2)}[dtype]


@pytest.mark.parametrize("shape", CE_SHAPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("ignore", [None, 1])
def test_cross_entropy(shape, reduction, weighted, smoothing, ignore):
    for dtype in (fastt.float64, fastt.float32):
        x, t, w = loss_case(shape, dtype, weighted, ignore, seed=len(shape))
        ii = -100 if ignore is None else ignore
        r, a = ce_tol(dtype)
        _, (loss, lse) = check(_C._cross_entropy, x, t, w, reduction, ii,
                               smoothing, rtol=r, atol=a)
        g = rand(*loss.shape, dtype=dtype, seed=9)
        check(_C._cross_entropy_backward, g, x, t, w, reduction, ii,
              smoothing, lse, rtol=r, atol=a)


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("shape", [(45, 65), (3, 5, 4, 2), (4, 4097)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_low_precision(dtype, shape, reduction):
    x, t, w = loss_case(shape, dtype, True, 2, seed=3)
    r, a = ce_tol(dtype)
    _, (loss, lse) = check(_C._cross_entropy, x, t, w, reduction, 2, 0.1,
                           rtol=r, atol=a)
    g = rand(*loss.shape, dtype=dtype, seed=9)
    check(_C._cross_entropy_backward, g, x, t, w, reduction, 2, 0.1,
          lse, rtol=r, atol=a)


@pytest.mark.parametrize("shape", [(40000, 3), (2, 3, 20000), (70000,)])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_many_positions(shape, reduction):
    # More positions than one block sums: the two-stage reduction.
    if len(shape) == 1:
        shape = (shape[0], 4)
    x, t, w = loss_case(shape, fastt.float32, True, 0, seed=4)
    _, (loss, lse) = check(_C._cross_entropy, x, t, w, reduction, 0, 0.1,
                           rtol=1e-4, atol=1e-5)
    g = fastt.tensor(0.7)
    check(_C._cross_entropy_backward, g, x, t, w, reduction, 0, 0.1,
          lse, rtol=1e-4, atol=1e-6)
    check(_C._nll_loss, fastt.log_softmax(x, 1), t, w, reduction, 0,
          rtol=1e-4, atol=1e-5)


def test_cross_entropy_layouts_and_large_logits():
    x = fastt.tensor([[1e4, -1e4, 1e4 - 1], [-1e4, -1e4, -1e4 + 3]])
    t = fastt.tensor([0, 2])
    # The float64 lse of float32 logits carries float32 precision: CUDA's
    # logf/expf differ from glibc's by an ulp (3e-8 of lse's log part).
    _, (loss, lse) = check(_C._cross_entropy, x, t, None, "sum", -100, 0.1,
                           rtol=1e-5, atol=1e-6)
    check(_C._cross_entropy_backward, fastt.tensor(1.0), x, t, None, "sum",
          -100, 0.1, lse, rtol=1e-5, atol=1e-6)
    base = rand(10, 6, dtype=fastt.float64, seed=5)
    tt = fastt.tensor([1, 0, 9, 3, 3, 2])
    check(_C._cross_entropy, base.t(), tt)                 # non-contiguous
    check(_C._cross_entropy, base.t(), tt.to(fastt.uint8))  # uint8 targets
    # All targets ignored: mean is 0 / 0 = NaN like the CPU.
    check(_C._cross_entropy, base.t(), fastt.full((6,), -100,
                                                  dtype=fastt.int64))
    # NaN / -inf logits.
    y = rand(4, 5, seed=6)
    y[1, 2] = math.nan
    y[2, :] = -math.inf
    # The float64 lse of float32 logits carries float32 precision.
    check(_C._cross_entropy, y, fastt.tensor([0, 1, 2, 3]), None, "none",
          rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_functional(reduction, smoothing, weighted):
    # fastt.nn.functional.cross_entropy: class indices (fused op) and class
    # probabilities (composed from log_softmax) with autograd.
    x, t, w = loss_case((12, 9), fastt.float64, weighted, 3, seed=7)
    x.requires_grad_(True)
    r, a = gtol(fastt.float64)
    check_grad(lambda x, t, w: F.cross_entropy(x, t, w, ignore_index=3,
                                               reduction=reduction,
                                               label_smoothing=smoothing),
               x, t, w, rtol=r, atol=a, what="cross_entropy (indices)")
    probs = fastt.softmax(rand(12, 9, dtype=fastt.float64, seed=8), 1)
    check_grad(lambda x, p, w: F.cross_entropy(x, p, w, reduction=reduction,
                                               label_smoothing=smoothing),
               x, probs, w, rtol=r, atol=a,
               what="cross_entropy (probabilities)")
    x3, t3, _ = loss_case((3, 5, 4, 2), fastt.float64, False, None, seed=9)
    x3.requires_grad_(True)
    check_grad(lambda x, t: F.cross_entropy(x, t, reduction=reduction,
                                            label_smoothing=smoothing),
               x3, t3, rtol=r, atol=a, what="cross_entropy (spatial)")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(45, 65), (3, 5, 4, 2), (9,), (0, 4),
                                   (4, 4097)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [None, 2])
def test_nll_loss(dtype, shape, reduction, weighted, ignore):
    x, t, w = loss_case(shape, dtype, weighted, ignore, seed=11)
    ii = -100 if ignore is None else ignore
    r, a = ce_tol(dtype)
    _, (loss, tw) = check(_C._nll_loss, x, t, w, reduction, ii, rtol=r,
                          atol=a)
    g = rand(*loss.shape, dtype=dtype, seed=12)
    check(_C._nll_loss_backward, g, x, t, w, reduction, ii, tw,
          rtol=r, atol=a)
    check(_C._nll_loss_backward, g, noncontig(x), t, w, reduction, ii,
          tw, rtol=r, atol=a)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_grad(reduction):
    x, t, w = loss_case((10, 7), fastt.float64, True, 1, seed=13)
    x.requires_grad_(True)
    r, a = gtol(fastt.float64)
    check_grad(lambda x, t, w: F.nll_loss(F.log_softmax(x, 1), t, w,
                                          ignore_index=1,
                                          reduction=reduction),
               x, t, w, rtol=r, atol=a, what="nll_loss")


BAD_TARGET = r"Target (7|-1) is out of bounds"


def test_bad_target():
    """A target outside [0, C) that is not ignore_index raises IndexError:
    on the CPU at once, on the device at the next synchronizing call (the
    kernel reports it; no host sync per loss), for every reduction."""
    x = rand(4, 3, seed=14)
    bad = fastt.tensor([0, 7, 1, -1])
    xd, bd = to_dev(x), to_dev(bad)
    for red in ("mean", "sum", "none"):
        with pytest.raises(IndexError, match=BAD_TARGET):
            loss, _ = _C._cross_entropy(xd, bd, None, red)
            loss.cpu()
        with pytest.raises(IndexError, match=BAD_TARGET):
            nl, _ = _C._nll_loss(xd, bd, None, red)
            nl.cpu()
    with pytest.raises(IndexError, match=BAD_TARGET):
        F.cross_entropy(xd, bd, label_smoothing=0.1).item()
    # Raised once, then cleared: the same losses with valid targets match.
    good = fastt.tensor([0, 2, 1, 2])
    check(lambda x, t: F.cross_entropy(x, t), x, good)
    check(lambda x, t: F.nll_loss(x, t, reduction="none"), x, good)
    # A target equal to ignore_index is no error, even outside [0, C).
    check(lambda x, t: F.cross_entropy(x, t, ignore_index=7),
          x, fastt.tensor([0, 7, 1, 7]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bad_target_backward(reduction):
    """Backward with a bad target raises too (device: at the next sync);
    the device's gradient rows of the bad positions are 0, the others are
    the CPU's gradients of the valid positions."""
    x = rand(4, 3, dtype=fastt.float64, seed=15)
    bad = fastt.tensor([0, 7, 1, -1])
    # The device skips the bad positions as if ignored (a mean's
    # denominator leaves them out too): the reference ignores them.
    ign = fastt.tensor([0, 5, 1, 5])
    g = rand(4, dtype=fastt.float64, seed=16) if reduction == "none" \
        else fastt.tensor(1.0, dtype=fastt.float64)
    _, lse = _C._cross_entropy(x, ign, None, reduction, 5)
    _, tw = _C._nll_loss(x, ign, None, reduction, 5)
    xd, bd, gd = to_dev(x), to_dev(bad), to_dev(g)
    with pytest.raises(IndexError, match=BAD_TARGET):
        dx = _C._cross_entropy_backward(gd, xd, bd, None, reduction, -100,
                                        0.0, to_dev(lse))
        dx.cpu()
    with pytest.raises(IndexError, match=BAD_TARGET):
        dn = _C._nll_loss_backward(gd, xd, bd, None, reduction, -100,
                                   to_dev(tw))
        dn.cpu()
    if not on_device():
        return
    want = _C._cross_entropy_backward(g, x, ign, None, reduction, 5, 0.0,
                                      lse)
    assert_close(dx, want, 1e-12, 1e-12, "cross_entropy_backward")
    want = _C._nll_loss_backward(g, x, ign, None, reduction, 5, tw)
    assert_close(dn, want, 1e-12, 1e-12, "nll_loss_backward")


def test_embedding_backward_bad_index():
    """embedding accepts an index in [-V, V) (wrapped, as index_select),
    its backward only [0, V): a negative index raises there (device: at
    the next sync, reported by the kernel)."""
    g = rand(3, 4, seed=17)
    idx = fastt.tensor([0, -1, 2])
    with pytest.raises(IndexError, match="-1"):
        _C._embedding_backward(to_dev(g), to_dev(idx), 5, -1).cpu()
    check(_C._embedding_backward, g, fastt.tensor([0, 4, 2]), 5, -1)


# ---------------------------------------------------------------------------
# embedding backward
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("padding_idx", [-1, 3])
@pytest.mark.parametrize("ishape,V,D", [((5, 9), 7, 6), ((40,), 7, 300),
                                        ((0,), 4, 5), ((3000,), 50, 33),
                                        ((200000,), 1000, 8)])
def test_embedding_backward(dtype, padding_idx, ishape, V, D):
    idx = fastt.tensor(np.random.default_rng(1).integers(0, V, ishape),
                       dtype=fastt.int64)
    g = rand(*ishape, D, dtype=dtype, seed=2)
    r, a = gtol(dtype, 4.0)
    check(_C._embedding_backward, g, idx, V, padding_idx, rtol=r, atol=a)
    check(_C._embedding_backward, g, idx.to(fastt.int32), V, padding_idx,
          rtol=r, atol=a)


def test_embedding_grad():
    emb = nn.Embedding(11, 5, padding_idx=2).double()
    idx = fastt.tensor([[1, 2, 3], [3, 3, 10]])
    w = emb.weight.detach().requires_grad_(True)
    check_grad(lambda w, idx: F.embedding(idx, w, padding_idx=2), w, idx,
               rtol=1e-10, atol=1e-12, what="embedding")


# ---------------------------------------------------------------------------
# modules on the device
# ---------------------------------------------------------------------------
def module_pair(make, seed=0):
    """The same module on CPU and (as a copy with equal parameters) on the
    device."""
    fastt.manual_seed(seed)
    cpu = make()
    dev = make()
    dev.load_state_dict(cpu.state_dict())
    return cpu, dev.to(DEVICE)


def compare_grads(cpu, dev, rtol, atol):
    """Every parameter's gradient, by name; at least one must exist."""
    cpu_p = list(cpu.named_parameters())
    dev_p = list(dev.named_parameters())
    assert [n for n, _ in dev_p] == [n for n, _ in cpu_p]
    assert any(p.grad is not None for _, p in cpu_p), "no gradients"
    for (name, pc), (_, pd) in zip(cpu_p, dev_p, strict=True):
        assert (pc.grad is None) == (pd.grad is None), name
        if pc.grad is not None:
            assert_close(pd.grad, pc.grad, rtol, atol, what=name)


def run_both(cpu, dev, inputs, loss_fn, rtol, atol):
    """Forward on both, compares every output (a tuple's too: MHA's
    attention weights), then backward of loss_fn(outputs) and every
    parameter gradient."""
    out_c = cpu(*inputs)
    out_d = dev(*to_dev(inputs))
    assert_close(out_d, out_c, rtol, atol, what="forward")
    loss_fn(out_c).backward()
    loss_fn(out_d).backward()
    compare_grads(cpu, dev, rtol, atol)


def test_layer_norm_module():
    cpu, dev = module_pair(lambda: nn.LayerNorm((6, 10)))
    x = rand(4, 6, 10, seed=41)
    cot = rand(4, 6, 10, seed=42)

    def loss(o):
        return (o * cot.to(o.device)).sum()
    run_both(cpu, dev, (x,), loss, 1e-4, 1e-5)


def test_mlp_cross_entropy():
    def make():
        return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.LayerNorm(64),
                             nn.Linear(64, 10))
    cpu, dev = module_pair(make, seed=1)
    x = rand(32, 20, seed=43)
    t = targets((32, 10), 10, 44)
    crit = nn.CrossEntropyLoss(label_smoothing=0.05)
    out_c = cpu(x)
    out_d = dev(to_dev(x))
    assert_close(out_d, out_c, 1e-4, 1e-5, what="logits")
    lc = crit(out_c, t)
    ld = crit(out_d, to_dev(t))
    assert_close(ld, lc, 1e-4, 1e-5, what="loss")
    lc.backward()
    ld.backward()
    compare_grads(cpu, dev, 2e-3, 1e-4)


def test_multihead_attention():
    cpu, dev = module_pair(lambda: nn.MultiheadAttention(16, 4,
                                                         batch_first=True),
                           seed=2)
    q = rand(3, 7, 16, seed=45)
    kv = rand(3, 9, 16, seed=46)

    def loss(o):
        out, weights = o  # both outputs carry gradient to the parameters
        assert weights is not None and tuple(weights.shape) == (3, 7, 9)
        return (out * out).sum() + (weights * weights).sum()
    # Loose: the attention matmuls may run in TF32 on the device.
    run_both(cpu, dev, (q, kv, kv), loss, 2e-3, 1e-4)


def test_transformer_encoder_layer():
    cpu, dev = module_pair(
        lambda: nn.TransformerEncoderLayer(16, 4, dim_feedforward=32,
                                           dropout=0.0, batch_first=True),
        seed=3)
    x = rand(2, 11, 16, seed=47)

    def loss(o):
        return (o * o).sum()
    run_both(cpu, dev, (x,), loss, 2e-3, 1e-4)
