"""float16/bfloat16 through float32 blocks (kernels/cpu/half_block.h):
dtype conversions to and from the 16-bit floats (copy.cpp's
convert_blocks, with F16C's padded and masked tails) and softmax /
log_softmax forward and backward, layer_norm and rms_norm (the float32
kernels on staged copies: half_block.h's Staging, rows_via_float and
via_float, rows and columns), against torch at lengths around the
vector, block and stack-buffer edges. The file runs again at the SSE2
level in CI (scripts/test.sh), where the conversions are the portable
ones."""
import numpy as np
import pytest
import torch

import fastt

HALF = ["float16", "bfloat16"]
OTHER = ["float32", "float64", "float16", "bfloat16", "int64", "int32",
         "int16", "int8", "uint8", "bool"]
LENGTHS = [1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 100, 255, 256, 257, 1000,
           70001]


def _values(n, seed):
    """Random normals with the special values and rounding cases mixed in:
    ties between float16/bfloat16 neighbours, their denormals, overflow."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(np.float32) * 8
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0 + 2.0 ** -11,
                        1.0 + 3 * 2.0 ** -11, 1.0 + 2.0 ** -8, 65504.0,
                        65520.0, 1e-7, -6e-8, 3e-5, 1e38, -3.4e38,
                        2.0 ** -133], np.float32)
    k = min(n, len(special))
    a[rng.permutation(n)[:k]] = special[:k]
    return a


def _torch_dtype(dt):
    return getattr(torch, dt)


def _fastt_from(t):
    """t (any torch dtype) as a fastt tensor of the same dtype and bits."""
    if t.dtype == torch.bfloat16:
        return fastt.from_numpy(t.view(torch.int16).numpy()).view(
            fastt.bfloat16)
    return fastt.from_numpy(t.numpy())


def _as_torch(f):
    if f.dtype == fastt.bfloat16:
        return torch.from_numpy(f.view(fastt.int16).numpy()).view(
            torch.bfloat16)
    return torch.from_numpy(f.numpy())


def _same(got, want):
    """Equal values with NaN where torch has NaN (payload bits aside)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.is_floating_point():
        gn, wn = torch.isnan(got), torch.isnan(want)
        assert torch.equal(gn, wn)
        g, w = got[~wn], want[~wn]
        # bit equality, so -0.0 against 0.0 is caught
        if g.element_size() == 2:
            assert torch.equal(g.view(torch.int16), w.view(torch.int16))
        else:
            assert torch.equal(g.double().view(torch.int64),
                               w.double().view(torch.int64))
    else:
        assert torch.equal(got, want)


@pytest.mark.parametrize("half", HALF)
@pytest.mark.parametrize("other", OTHER)
@pytest.mark.parametrize("n", LENGTHS)
def test_conversions_to_and_from_16_bit(half, other, n):
    a = _values(n, n)
    if other not in ("float32", "float64", "float16", "bfloat16", "bool"):
        # float -> integer out of range is undefined in C++ and in torch
        a = np.nan_to_num(a, nan=1.0, posinf=2.0, neginf=-3.0)
        a = np.clip(a, -100, 100)
    src = torch.from_numpy(a).to(_torch_dtype(half))
    # from the 16-bit type
    _same(_as_torch(_fastt_from(src).to(getattr(fastt, other))),
          src.to(_torch_dtype(other)))
    # into it, from the other type's values
    if other == "float64":
        base = torch.from_numpy(a.astype(np.float64) * (1 + 2.0 ** -30))
    else:
        base = torch.from_numpy(a).to(_torch_dtype(other))
    _same(_as_torch(_fastt_from(base).to(getattr(fastt, half))),
          base.to(_torch_dtype(half)))


@pytest.mark.parametrize("half", HALF)
def test_strided_conversions(half):
    a = _values(999, 7).reshape(27, 37)
    src = torch.from_numpy(a).to(_torch_dtype(half))
    f = _fastt_from(src)
    _same(_as_torch(f.t().float().contiguous()), src.t().float().contiguous())
    _same(_as_torch(f[:, ::3].float()), src[:, ::3].float())
    base = torch.from_numpy(a)
    _same(_as_torch(_fastt_from(base)[::2, 1:].to(getattr(fastt, half))),
          base[::2, 1:].to(_torch_dtype(half)))


def _close16(got, want, dt, spread=0.0):
    """Within a unit in the last place of want (plus spread units of the
    largest |want|: gradients cancel, g - exp(y) * sum(g))."""
    ulp = 2.0 ** -10 if dt == "float16" else 2.0 ** -7
    g, w = got.double(), want.double()
    assert torch.equal(torch.isnan(g), torch.isnan(w))
    assert torch.equal(torch.isinf(g), torch.isinf(w))
    assert torch.equal(g[torch.isinf(w)], w[torch.isinf(w)])
    ok = torch.isfinite(w)
    if not ok.any():
        return
    err = (g[ok] - w[ok]).abs()
    tol = 1.01 * ulp * (w[ok].abs() + spread * w[ok].abs().max()) + 1e-6
    assert (err <= tol).all(), err.max()


# (shape, dim): rows (dim -1) and columns (dim 0 of [n, inner]), short
# and long (the per-thread staging grows); rows staged in batches of
# about 2048 elements (rows_via_float): many short rows over several
# batches and thread chunks, rows longer than a batch one at a time
SOFTMAX_CASES = [((4, 1), -1), ((3, 5), -1), ((5, 64), -1), ((2, 257), -1),
                 ((2, 3000), -1), ((5000, 3), -1), ((20001, 8), -1),
                 ((3, 9000), -1), ((7, 70), 0), ((40, 5), 0),
                 ((100, 65), 0), ((3, 4, 9), 1),
                 # past softmax.cpp's kMaxStaged (2^20): converted in place
                 ((1, (1 << 20) + 5), -1), ((16500, 64), 0),
                 ((17000, 70), 0)]


@pytest.mark.parametrize("dt", HALF)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", SOFTMAX_CASES)
def test_softmax_forward_backward_16_bit(dt, log, shape, dim):
    rng = np.random.default_rng(sum(shape))
    a = (rng.standard_normal(shape) * 3).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    t = torch.from_numpy(a).to(_torch_dtype(dt)).requires_grad_()
    tg = torch.from_numpy(g).to(_torch_dtype(dt))
    f = _fastt_from(t.detach()).requires_grad_()
    fg = _fastt_from(tg)
    op_t = torch.log_softmax if log else torch.softmax
    op_f = fastt.log_softmax if log else fastt.softmax
    yt, yf = op_t(t, dim), op_f(f, dim)
    assert yf.dtype == getattr(fastt, dt)
    # against torch's float32 result rounded once, as both compute
    ref = op_t(t.detach().float(), dim).to(_torch_dtype(dt))
    _close16(_as_torch(yf), ref, dt)
    (yt * tg).sum().backward()
    (yf * fg).sum().backward()
    _close16(_as_torch(f.grad), t.grad, dt, spread=1.0)


# the long paths (softmax.cpp's long_slab, past kMaxStaged) with NaN and
# infinities: a NaN anywhere makes its row or column NaN, +inf makes it
# NaN too (inf - inf), -inf entries are zeros; as torch's
@pytest.mark.parametrize("dt", HALF)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", [((2, (1 << 20) + 3), -1),
                                       ((16500, 66), 0)])
def test_softmax_long_16_bit_special_values(dt, log, shape, dim):
    a = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    if dim == -1:
        a[0, 7], a[1, 100] = np.nan, -np.inf
    else:
        a[3, 1], a[9000, 2], a[5, 65] = np.nan, np.inf, -np.inf
    t = torch.from_numpy(a).to(_torch_dtype(dt))
    op_t = torch.log_softmax if log else torch.softmax
    op_f = fastt.log_softmax if log else fastt.softmax
    ref = op_t(t.float(), dim).to(_torch_dtype(dt))
    _close16(_as_torch(op_f(_fastt_from(t), dim)), ref, dt)


# layer_norm / rms_norm rows through the float32 kernel (norm.cpp,
# Staging): with and without weight and bias, every gradient or only
# some, row lengths from 1 to past a vector block
@pytest.mark.parametrize("dt", HALF)
@pytest.mark.parametrize("cols", [1, 5, 64, 257, 3000])
@pytest.mark.parametrize("affine", ["wb", "w", "b", ""])
@pytest.mark.parametrize("rms", [False, True])
def test_norms_forward_backward_16_bit(dt, cols, affine, rms):
    if rms and affine in ("wb", "b"):
        affine = affine.replace("b", "")
    rng = np.random.default_rng(cols + len(affine) + rms)
    shape = (6, cols)
    a = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(cols).astype(np.float32)
    b = rng.standard_normal(cols).astype(np.float32)
    tdt = _torch_dtype(dt)
    tt = {"x": torch.from_numpy(a).to(tdt), "w": torch.from_numpy(w).to(tdt),
          "b": torch.from_numpy(b).to(tdt)}
    ff = {k: _fastt_from(v) for k, v in tt.items()}
    for d in (tt, ff):
        for k in d:
            d[k].requires_grad_(k == "x" or k in affine)
    tg, fg = torch.from_numpy(g).to(tdt), _fastt_from(torch.from_numpy(g).to(tdt))

    def call(F, d):
        wt = d["w"] if "w" in affine else None
        if rms:
            return F.rms_norm(d["x"], (cols,), wt, eps=1e-5)
        bs = d["b"] if "b" in affine else None
        return F.layer_norm(d["x"], (cols,), wt, bs, eps=1e-5)

    # the reference: torch in float32 on the same 16-bit values, rounded
    # once (torch's own 16-bit column sums round on the way: its float16
    # bias gradient of 6 rows was off by 0.0008 in 0.079)
    t32 = {k: v.detach().float().requires_grad_(v.requires_grad)
           for k, v in tt.items()}
    yt, yf = call(torch.nn.functional, t32), call(fastt.nn.functional, ff)
    assert yf.dtype == getattr(fastt, dt)
    _close16(_as_torch(yf), yt.detach().to(tdt), dt, spread=0.02)
    (yt * tg.float()).sum().backward()
    (yf * fg).sum().backward()
    for k in ["x"] + list(affine):
        if cols == 1 and not rms and k in "xw":
            # x - mean is exactly 0: so are these (torch's float32 leaves
            # rounding noise, times rstd = 1 / sqrt(eps))
            assert not _as_torch(ff[k].grad).any()
            continue
        # cancelling row terms (g - mean(g) - xhat * mean(g * xhat)): a
        # unit of the largest
        _close16(_as_torch(ff[k].grad), t32[k].grad.to(tdt), dt, spread=1.0)
