"""Convolution and pooling (fastt.conv1d/conv2d/conv_transpose2d,
max/avg/adaptive_avg pools) against torch.nn.functional: forward values,
and the _C._*_backward functions against torch autograd's gradients."""
import itertools

import numpy as np
import pytest

import fastt

torch = pytest.importorskip("torch")
F = torch.nn.functional
_C = fastt._C

TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10),
       "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}


def to_fastt(t):
    if t is None:
        return None
    if t.dtype == torch.bfloat16:
        return fastt.tensor(t.float().numpy()).to(fastt.bfloat16)
    return fastt.tensor(t.detach().numpy())


def to_numpy(t):
    if t.dtype == fastt.bfloat16:
        t = t.to(fastt.float32)
    return np.asarray(torch.from_dlpack(t).numpy(), dtype=np.float64)


def check(got, want, dtype="float32"):
    assert got is not None
    want = want.detach()
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    rtol, atol = TOL[dtype]
    # Scale atol with the magnitude: sums of many products.
    scale = max(1.0, float(want.double().abs().max()) if want.numel() else 1)
    np.testing.assert_allclose(to_numpy(got), want.double().numpy(),
                               rtol=rtol, atol=atol * scale)


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


# ---- conv2d ----

CONV2D_CASES = [
    # N, C, H, W, O, (kh, kw), stride, padding, dilation, groups, bias
    (2, 3, 8, 8, 4, (3, 3), 1, 1, 1, 1, True),
    (1, 1, 8, 8, 16, (3, 3), 1, 1, 1, 1, True),
    (3, 4, 7, 9, 6, (2, 3), (2, 1), (0, 2), (1, 2), 2, True),
    (2, 6, 5, 8, 3, (3, 1), 1, (2, 0), (2, 1), 3, False),
    (2, 4, 9, 9, 4, (3, 3), 3, 0, 1, 4, True),
    (3, 5, 6, 7, 2, (1, 1), 1, 0, 1, 1, True),
    (2, 3, 6, 7, 2, (1, 1), (2, 3), (1, 0), 1, 1, False),
    (2, 2, 20, 19, 3, (5, 4), 1, (2, 1), 1, 1, True),
    (4, 3, 5, 5, 2, (5, 5), 1, 0, 1, 1, True),
    (5, 8, 11, 13, 8, (3, 3), 2, 1, 2, 2, True),
    (1, 3, 1, 1, 2, (1, 1), 1, 0, 1, 1, True),
    (2, 2, 4, 4, 2, (3, 3), 1, "same", 1, 1, True),
    (2, 2, 6, 5, 3, (2, 4), 1, "same", (1, 2), 1, True),
    (2, 2, 6, 5, 3, (2, 3), 1, "valid", 1, 1, True),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("case", CONV2D_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_forward_backward(case, dtype):
    N, C, H, W, O, k, s, p, d, g, has_bias = case
    tdt = getattr(torch, dtype)
    x = rand(N, C, H, W, dtype=tdt, seed=1).requires_grad_()
    w = rand(O, C // g, *k, dtype=tdt, seed=2).requires_grad_()
    b = rand(O, dtype=tdt, seed=3).requires_grad_() if has_bias else None
    ref = F.conv2d(x, w, b, stride=s, padding=p, dilation=d, groups=g)
    out = fastt.conv2d(to_fastt(x), to_fastt(w), to_fastt(b), stride=s,
                       padding=p, dilation=d, groups=g)
    check(out, ref, dtype)

    gy = rand(*ref.shape, dtype=tdt, seed=4)
    ref.backward(gy)
    gx, gw, gb = _C._conv2d_backward(to_fastt(gy), to_fastt(x), to_fastt(w),
                                     s, p, d, g)
    check(gx, x.grad, dtype)
    check(gw, w.grad, dtype)
    if has_bias:
        check(gb, b.grad, dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_conv2d_half_types(dtype):
    tdt = getattr(torch, dtype)
    x = rand(2, 4, 7, 6, dtype=tdt, seed=1)
    w = rand(6, 2, 3, 3, dtype=tdt, seed=2)
    b = rand(6, dtype=tdt, seed=3)
    ref = F.conv2d(x.double(), w.double(), b.double(), padding=1, groups=2)
    out = fastt.conv2d(to_fastt(x), to_fastt(w), to_fastt(b), padding=1,
                       groups=2)
    assert out.dtype == getattr(fastt, dtype)
    check(out, ref, dtype)
    gy = rand(*ref.shape, dtype=tdt, seed=4)
    xd = x.double().requires_grad_()
    wd = w.double().requires_grad_()
    F.conv2d(xd, wd, padding=1, groups=2).backward(gy.double())
    gx, gw, gb = _C._conv2d_backward(to_fastt(gy), to_fastt(x), to_fastt(w),
                                     1, 1, 1, 2, (True, True, False))
    check(gx, xd.grad, dtype)
    check(gw, wd.grad, dtype)
    assert gb is None


def test_conv2d_noncontiguous_unbatched_and_masks():
    xt = rand(2, 4, 6, 7, seed=5).transpose(2, 3)  # [2, 4, 7, 6]
    w = rand(6, 4, 3, 2, seed=6)[:, 1:3]
    b = rand(12, seed=7)[::2]
    fx = fastt.tensor(rand(2, 4, 6, 7, seed=5).numpy()).transpose(2, 3)
    fw = fastt.tensor(rand(6, 4, 3, 2, seed=6).numpy())[:, 1:3]
    fb = fastt.tensor(rand(12, seed=7).numpy())[::2]
    assert not fx.is_contiguous() and not fw.is_contiguous()
    ref = F.conv2d(xt, w, b, stride=(1, 2), padding=1, groups=2)
    check(fastt.conv2d(fx, fw, fb, (1, 2), 1, 1, 2), ref)
    # Unbatched [C, H, W].
    ref3 = F.conv2d(xt[0], w, b, padding=1, groups=2)
    out3 = fastt.conv2d(fx[0], fw, fb, padding=1, groups=2)
    check(out3, ref3)
    gy = rand(*ref3.shape, seed=8)
    x0 = xt[0].clone().requires_grad_()
    F.conv2d(x0, w, padding=1, groups=2).backward(gy)
    gx, gw, gb = _C._conv2d_backward(to_fastt(gy), fx[0], fw, 1, 1, 1, 2,
                                     output_mask=(True, False, False))
    check(gx, x0.grad)
    assert gw is None and gb is None


def test_conv2d_batch_in_chunks():
    # 16 * 9 * 64 * 64 columns per sample: several chunks.
    x = rand(9, 16, 64, 64, seed=9).requires_grad_()
    w = rand(4, 16, 3, 3, seed=10).requires_grad_()
    ref = F.conv2d(x, w, padding=1)
    check(fastt.conv2d(to_fastt(x), to_fastt(w), padding=1), ref)
    gy = rand(*ref.shape, seed=11)
    ref.backward(gy)
    gx, gw, _ = _C._conv2d_backward(to_fastt(gy), to_fastt(x), to_fastt(w),
                                    1, 1, 1, 1)
    check(gx, x.grad)
    check(gw, w.grad)


# ---- conv1d ----

CONV1D_CASES = [
    # N, C, L, O, k, stride, padding, dilation, groups
    (2, 3, 10, 4, 3, 1, 1, 1, 1),
    (3, 4, 13, 6, 3, 2, 2, 2, 2),
    (1, 2, 7, 2, 7, 1, 0, 1, 1),
    (2, 4, 9, 4, 4, 1, "same", 1, 4),
    (2, 4, 9, 4, 4, 1, "valid", 2, 1),
]


@pytest.mark.parametrize("case", CONV1D_CASES)
@pytest.mark.parametrize("batched", [True, False])
def test_conv1d(case, batched):
    N, C, L, O, k, s, p, d, g = case
    x = rand(N, C, L, seed=1)
    if not batched:
        x = x[0]
    x.requires_grad_()
    w = rand(O, C // g, k, seed=2).requires_grad_()
    b = rand(O, seed=3).requires_grad_()
    ref = F.conv1d(x, w, b, s, p, d, g)
    check(fastt.conv1d(to_fastt(x), to_fastt(w), to_fastt(b), s, p, d, g),
          ref)
    gy = rand(*ref.shape, seed=4)
    ref.backward(gy)
    gx, gw, gb = _C._conv1d_backward(to_fastt(gy), to_fastt(x), to_fastt(w),
                                     s, p, d, g)
    check(gx, x.grad)
    check(gw, w.grad)
    check(gb, b.grad)


# ---- conv_transpose2d ----

TRANSPOSE_CASES = [
    # N, Cin, H, W, Cout, k, stride, padding, output_padding, groups, dil
    (2, 3, 4, 5, 4, (3, 3), 1, 0, 0, 1, 1),
    (3, 4, 5, 3, 6, (3, 2), (2, 3), (1, 0), (1, 2), 2, 1),
    (1, 2, 6, 6, 2, (2, 3), 1, (2, 1), (1, 0), 2, (2, 3)),
    (2, 2, 17, 16, 3, (3, 3), 1, 1, 0, 1, 1),
    (2, 8, 4, 4, 4, (4, 4), 2, 1, 0, 1, 1),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_transpose2d(case, dtype):
    N, Ci, H, W, Co, k, s, p, op, g, d = case
    tdt = getattr(torch, dtype)
    x = rand(N, Ci, H, W, dtype=tdt, seed=1).requires_grad_()
    w = rand(Ci, Co // g, *k, dtype=tdt, seed=2).requires_grad_()
    b = rand(Co, dtype=tdt, seed=3).requires_grad_()
    ref = F.conv_transpose2d(x, w, b, s, p, op, g, d)
    out = fastt.conv_transpose2d(to_fastt(x), to_fastt(w), to_fastt(b),
                                 stride=s, padding=p, output_padding=op,
                                 groups=g, dilation=d)
    check(out, ref, dtype)
    gy = rand(*ref.shape, dtype=tdt, seed=4)
    ref.backward(gy)
    gx, gw, gb = _C._conv_transpose2d_backward(
        to_fastt(gy), to_fastt(x), to_fastt(w), s, p, op, g, d)
    check(gx, x.grad, dtype)
    check(gw, w.grad, dtype)
    check(gb, b.grad, dtype)


def test_conv_transpose2d_unbatched():
    x = rand(3, 4, 4, seed=1)
    w = rand(3, 2, 3, 3, seed=2)
    ref = F.conv_transpose2d(x, w, None, 2, 1, 1)
    check(fastt.conv_transpose2d(to_fastt(x), to_fastt(w), None, 2, 1, 1),
          ref)


# ---- pooling ----

MAX_POOL_CASES = [
    # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False),
    ((3, 2), (2, 1), 1, 1, True),
    (3, (2, 3), (1, 0), 2, False),
    (3, (2, 3), 1, (2, 1), True),
    (5, 1, 2, 1, False),
    (2, 2, 1, 1, True),
]


@pytest.mark.parametrize("case", MAX_POOL_CASES)
@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (3, 11, 10)])
def test_max_pool2d(case, shape):
    k, s, p, d, ceil = case
    x = rand(*shape, seed=1).requires_grad_()
    ref, ridx = F.max_pool2d(x, k, s, p, d, ceil_mode=ceil,
                             return_indices=True)
    fx = to_fastt(x)
    out, idx = fastt.max_pool2d_with_indices(fx, k, s, p, d, ceil)
    check(out, ref)
    np.testing.assert_array_equal(torch.from_dlpack(idx).numpy(),
                                  ridx.numpy())
    out2 = fastt.max_pool2d(fx, kernel_size=k, stride=s, padding=p,
                            dilation=d, ceil_mode=ceil)
    check(out2, ref)
    o3, i3 = fastt.max_pool2d(fx, k, s, p, d, ceil, return_indices=True)
    check(o3, ref)
    gy = rand(*ref.shape, seed=2)
    ref.backward(gy)
    check(_C._max_pool2d_backward(to_fastt(gy), fx, idx), x.grad)


def test_max_pool2d_nan_and_int():
    x = torch.tensor([[[1.0, float("nan"), 3.0], [4.0, 5.0, 6.0],
                       [7.0, 8.0, 9.0]]])
    ref, ridx = F.max_pool2d(x, 2, 1, return_indices=True)
    out, idx = fastt.max_pool2d_with_indices(to_fastt(x), 2, 1)
    np.testing.assert_array_equal(to_numpy(out), ref.double().numpy())
    np.testing.assert_array_equal(torch.from_dlpack(idx).numpy(),
                                  ridx.numpy())
    xi = torch.randint(-50, 50, (2, 3, 6, 6))
    out = fastt.max_pool2d(fastt.tensor(xi.numpy()), 3, 2, 1)
    assert out.dtype == fastt.int64
    np.testing.assert_array_equal(torch.from_dlpack(out).numpy(),
                                  F.max_pool2d(xi, 3, 2, 1).numpy())


AVG_POOL_CASES = [
    # kernel, stride, padding, ceil_mode, count_include_pad, divisor
    (2, None, 0, False, True, None),
    ((3, 2), (2, 1), 1, True, True, None),
    ((3, 2), (2, 1), 1, True, False, None),
    (3, (3, 2), 1, True, False, None),
    (3, 2, (1, 0), False, True, 5),
    (3, 2, 1, True, False, 2),
]


@pytest.mark.parametrize("case", AVG_POOL_CASES)
@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (3, 8, 5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_avg_pool2d(case, shape, dtype):
    k, s, p, ceil, cip, div = case
    tdt = getattr(torch, dtype)
    x = rand(*shape, dtype=tdt, seed=1).requires_grad_()
    ref = F.avg_pool2d(x, k, s, p, ceil, cip, div)
    fx = to_fastt(x)
    out = fastt.avg_pool2d(fx, kernel_size=k, stride=s, padding=p,
                           ceil_mode=ceil, count_include_pad=cip,
                           divisor_override=div)
    check(out, ref, dtype)
    gy = rand(*ref.shape, dtype=tdt, seed=2)
    ref.backward(gy)
    gx = _C._avg_pool2d_backward(to_fastt(gy), fx, k, s, p, ceil, cip, div)
    check(gx, x.grad, dtype)


def test_avg_pool2d_int64_and_half():
    xi = torch.randint(-50, 50, (2, 3, 6, 7))
    out = fastt.avg_pool2d(fastt.tensor(xi.numpy()), 3, 2, 1)
    np.testing.assert_array_equal(torch.from_dlpack(out).numpy(),
                                  F.avg_pool2d(xi, 3, 2, 1).numpy())
    xh = rand(2, 3, 6, 7, dtype=torch.float16)
    check(fastt.avg_pool2d(to_fastt(xh), 2), F.avg_pool2d(xh, 2), "float16")


ADAPTIVE_CASES = [(3, 4), (1, 1), (7, 9), 5, (10, 11), (None, 3), (2, None),
                  (0, 3)]


@pytest.mark.parametrize("output_size", ADAPTIVE_CASES)
@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (3, 8, 5)])
def test_adaptive_avg_pool2d(output_size, shape):
    x = rand(*shape, seed=1).requires_grad_()
    ref = F.adaptive_avg_pool2d(x, output_size)
    fx = to_fastt(x)
    check(fastt.adaptive_avg_pool2d(fx, output_size=output_size), ref)
    if ref.numel() == 0:
        return
    gy = rand(*ref.shape, seed=2)
    ref.backward(gy)
    check(_C._adaptive_avg_pool2d_backward(to_fastt(gy), fx), x.grad)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_pools_half_types(dtype):
    tdt = getattr(torch, dtype)
    x = rand(2, 3, 8, 7, dtype=tdt)
    fx = to_fastt(x)
    check(fastt.max_pool2d(fx, 3, 2, 1), F.max_pool2d(x, 3, 2, 1), dtype)
    check(fastt.avg_pool2d(fx, 3, 2, 1), F.avg_pool2d(x, 3, 2, 1), dtype)
    check(fastt.adaptive_avg_pool2d(fx, (3, 2)),
          F.adaptive_avg_pool2d(x, (3, 2)), dtype)


# ---- errors: raised where torch raises, with the same exception type ----

def _x():
    return rand(2, 3, 8, 8)


ERROR_CASES = [
    ("conv2d", lambda m: m.conv2d(m.X[0, 0], m.W)),
    ("conv2d", lambda m: m.conv2d(m.X[:, :2], m.W)),
    ("conv2d", lambda m: m.conv2d(m.X, m.W, groups=2)),
    ("conv2d", lambda m: m.conv2d(m.X, m.W, groups=0)),
    ("conv2d", lambda m: m.conv2d(m.X[:, :, :2, :2], m.W)),
    ("conv2d", lambda m: m.conv2d(m.X, m.W, stride=0)),
    ("conv2d", lambda m: m.conv2d(m.X, m.W, padding=-1)),
    ("conv2d", lambda m: m.conv2d(m.X, m.W, dilation=0)),
    ("conv2d", lambda m: m.conv2d(m.X, m.W, stride=(1, 1, 1))),
    ("conv2d", lambda m: m.conv2d(m.X, m.W, padding=(1, 1, 1, 1))),
    ("conv2d", lambda m: m.conv2d(m.X, m.W, m.B3)),
    ("conv2d", lambda m: m.conv2d(m.X, m.W, padding="same", stride=2)),
    ("conv2d", lambda m: m.conv2d(m.X, m.W, padding="foo")),
    ("conv1d", lambda m: m.conv1d(m.X, m.W[:, :, 0])),
    ("conv_transpose2d", lambda m: m.conv_transpose2d(m.X, m.WT,
                                                      output_padding=1)),
    ("conv_transpose2d", lambda m: m.conv_transpose2d(m.X[:, :2], m.WT)),
    ("max_pool2d", lambda m: m.max_pool2d(m.X, 3, padding=2)),
    ("max_pool2d", lambda m: m.max_pool2d(m.X, 2, stride=0)),
    ("max_pool2d", lambda m: m.max_pool2d(m.X[0, 0], 2)),
    ("max_pool2d", lambda m: m.max_pool2d(m.X[:, :, :1, :1], 2)),
    ("max_pool2d", lambda m: m.max_pool2d(m.X, (2, 2, 2))),
    ("avg_pool2d", lambda m: m.avg_pool2d(m.X, 2, divisor_override=0)),
    ("avg_pool2d", lambda m: m.avg_pool2d(m.X, 3, padding=2)),
    ("adaptive_avg_pool2d", lambda m: m.adaptive_avg_pool2d(m.X, (2, 2, 2))),
    ("adaptive_avg_pool2d", lambda m: m.adaptive_avg_pool2d(m.X[:, :, :0],
                                                            2)),
]


# ERROR_CASES whose fastt message is the wording of another torch check
# (pool2d_shape_check's) than the one torch's CPU path reaches first.
_OTHER_TORCH_WORDING = {
    17: "stride should be greater than zero, but got dH: 0 dW: 0",
    18: "max_pool2d: Expected 3D or 4D (batch mode) tensor with optional 0 "
        "dim batch size for input, but got:[8, 8]",
}


class _NS:
    pass


def _namespace(lib, conv):
    m = _NS()
    for name in ("conv1d", "conv2d", "conv_transpose2d", "max_pool2d",
                 "avg_pool2d", "adaptive_avg_pool2d"):
        setattr(m, name, getattr(lib, name))
    m.X, m.W, m.WT, m.B3 = (conv(t) for t in (
        _x(), rand(4, 3, 3, 3, seed=2), rand(3, 2, 3, 3, seed=3),
        rand(3, seed=4)))
    return m


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors_match_torch(i):
    _, fn = ERROR_CASES[i]
    with pytest.raises(Exception) as te:
        fn(_namespace(F, lambda t: t))
    with pytest.raises(Exception) as fe:
        fn(_namespace(fastt, to_fastt))
    assert type(fe.value) is type(te.value), (te.value, fe.value)
    tmsg = str(te.value).splitlines()[0]
    fmsg = str(fe.value).splitlines()[0]
    if i in _OTHER_TORCH_WORDING:
        # torch words these from another of its own code paths.
        assert _OTHER_TORCH_WORDING[i] in fmsg, (tmsg, fmsg)
    else:
        assert fmsg == tmsg


def test_backward_shape_errors():
    x, w = to_fastt(_x()), to_fastt(rand(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="grad_output"):
        _C._conv2d_backward(to_fastt(rand(2, 4, 5, 5)), x, w, 1, 0, 1, 1)
    with pytest.raises(ValueError, match="output_mask must be a sequence of "
                                         "3 bools"):
        _C._conv2d_backward(to_fastt(rand(2, 4, 6, 6)), x, w, 1, 0, 1, 1,
                            (True, False))


def test_argument_names_and_defaults():
    x, w, b = _x(), rand(4, 3, 3, 3, seed=2), rand(4, seed=3)
    ref = F.conv2d(input=x, weight=w, bias=b, stride=1, padding=1,
                   dilation=1, groups=1)
    check(fastt.conv2d(input=to_fastt(x), weight=to_fastt(w),
                       bias=to_fastt(b), stride=1, padding=1, dilation=1,
                       groups=1), ref)
    check(fastt.conv2d(to_fastt(x), to_fastt(w)), F.conv2d(x, w))
    with pytest.raises(TypeError, match=r"conv2d\(\) got an unexpected "
                                        r"keyword argument 'bogus'"):
        fastt.conv2d(to_fastt(x), to_fastt(w), bogus=1)
    with pytest.raises(TypeError, match=r"max_pool2d\(\) missing required "
                                        r"argument 'kernel_size'"):
        fastt.max_pool2d(to_fastt(x))


def test_grid_of_small_convs():
    # Many parameter combinations on tiny tensors, forward and backward.
    combos = itertools.product([1, 2], [1, 2], [0, 1], [1, 2], [1, 2])
    for stride, dil, pad, groups, n in combos:
        x = rand(n, 2 * groups, 6, 5, seed=stride + 3 * dil).requires_grad_()
        w = rand(2 * groups, 2, 2, 3, seed=pad).requires_grad_()
        ref = F.conv2d(x, w, None, stride, pad, dil, groups)
        check(fastt.conv2d(to_fastt(x), to_fastt(w), None, stride, pad, dil,
                           groups), ref)
        gy = rand(*ref.shape, seed=7)
        ref.backward(gy)
        gx, gw, gb = _C._conv2d_backward(to_fastt(gy), to_fastt(x),
                                         to_fastt(w), stride, pad, dil,
                                         groups)
        check(gx, x.grad)
        check(gw, w.grad)
