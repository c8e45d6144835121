"""Matrix products (Op::gemm: kernels/cuda/linalg.cu, cuBLAS or the tiled
kernel) and convolution / pooling (kernels/cuda/conv.cu, composed by
csrc/ops/conv.cpp with gemm) on the device against the CPU: every dtype,
transposed / strided / expanded operands, broadcast batches, odd and empty
sizes, alpha/beta/addend rules, the TF32 switch, conv1d/conv2d/
conv_transpose2d over stride/padding/dilation/groups, the pools, and
gradients through all of them."""
import itertools

import numpy as np
import pytest

import fastt
import fastt.nn.functional as F
from cuda_util import (DEVICE, assert_close, check, check_grad, noncontig,
                       rand, requires_device, to_dev, tol)

pytestmark = requires_device

MM_DTYPES = [fastt.float32, fastt.float64, fastt.float16, fastt.bfloat16,
             fastt.int64, fastt.int32, fastt.complex64, fastt.complex128]
COMPLEX = [fastt.complex64, fastt.complex128]
FLOATS = [fastt.float32, fastt.float64, fastt.float16, fastt.bfloat16]

# Products of K terms in [-1, 1): the device sums in another order (and
# cuBLAS may split K), so tolerances grow with the 16-bit types' rounding
# of results of magnitude ~sqrt(K).
MM_TOL = {
    fastt.float32: (1e-4, 1e-4),
    fastt.float64: (1e-10, 1e-10),
    fastt.float16: (1e-2, 2e-2),
    fastt.bfloat16: (2e-2, 1e-1),
    fastt.int64: (0, 0),
    fastt.int32: (0, 0),
    fastt.uint8: (0, 0),
    fastt.int8: (0, 0),
    fastt.complex64: (1e-4, 1e-4),
    fastt.complex128: (1e-10, 1e-10),
}


def mrand(*shape, dtype=fastt.float32, seed=0):
    if dtype.is_complex:  # both parts in [-1, 1)
        real = fastt.float32 if dtype == fastt.complex64 else fastt.float64
        return fastt.complex(mrand(*shape, dtype=real, seed=seed),
                             mrand(*shape, dtype=real, seed=seed + 1000))
    if dtype.is_floating_point:
        return rand(*shape, dtype=dtype, seed=seed, low=-1.0, high=1.0)
    return rand(*shape, dtype=dtype, seed=seed, low=-5, high=5)


def mm_check(fn, *args, dtype, scale=1.0, what=""):
    r, a = MM_TOL[dtype]
    return check(fn, *args, rtol=r * scale, atol=a * scale, what=what)


# ---------------------------------------------------------------- matmul

MATMUL_SHAPES = [
    ((17, 33), (33, 65)),
    ((1, 1), (1, 1)),
    ((3,), (3,)),
    ((5, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3, 4, 5), (5, 6)),       # folded into one product
    ((2, 1, 4, 5), (3, 5, 6)),    # broadcast batch
    ((4, 5), (2, 5, 6)),
    ((7,), (2, 7, 3)),
    ((2, 3, 7), (7,)),
    ((3, 1, 9), (1, 9, 2)),       # M = 1 / N small
    ((0, 3), (3, 4)),
    ((3, 0), (0, 4)),             # K = 0: zeros
    ((2, 0, 3), (3, 4)),
    ((2, 3, 4), (2, 4, 0)),
    ((0,), (0,)),
]


@pytest.mark.parametrize("dtype", MM_DTYPES)
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_shapes(dtype, sa, sb):
    a, b = mrand(*sa, dtype=dtype, seed=1), mrand(*sb, dtype=dtype, seed=2)
    mm_check(fastt.matmul, a, b, dtype=dtype, what=f"matmul {sa} {sb}")


@pytest.mark.parametrize("dtype", MM_DTYPES)
def test_mm_layouts(dtype):
    # Every mix of as-is / transposed / strided / expanded operands.
    M, K, N = 9, 13, 11
    a = mrand(M, K, dtype=dtype, seed=3)
    b = mrand(K, N, dtype=dtype, seed=4)
    at = mrand(K, M, dtype=dtype, seed=3).t()            # BLAS "T"
    bt = mrand(N, K, dtype=dtype, seed=4).t()
    wide = mrand(M, 2 * K, dtype=dtype, seed=5)[:, ::2]  # not BLAS-shaped
    row = mrand(1, K, dtype=dtype, seed=6).expand(M, K)  # stride 0
    padded = mrand(M, K + 3, dtype=dtype, seed=7)[:, 1:K + 1]  # ld > K
    for x in (a, at, noncontig(a), wide, row, padded):
        for y in (b, bt, noncontig(b)):
            mm_check(fastt.mm, x, y, dtype=dtype,
                     what=f"mm {x.stride()} {y.stride()}")


@pytest.mark.parametrize("dtype", MM_DTYPES)
def test_bmm_and_batches(dtype):
    a = mrand(4, 6, 5, dtype=dtype, seed=1)
    b = mrand(4, 5, 7, dtype=dtype, seed=2)
    mm_check(fastt.bmm, a, b, dtype=dtype)
    mm_check(fastt.bmm, a.transpose(1, 2).contiguous().transpose(1, 2),
             b.transpose(0, 1).contiguous().transpose(0, 1), dtype=dtype)
    # Batch of transposed matrices and a permuted batch.
    mm_check(fastt.bmm, mrand(4, 5, 6, dtype=dtype).transpose(1, 2), b,
             dtype=dtype)
    # Broadcast batch through matmul: expanded operands with stride 0, and
    # batch dims that do not merge (sliced batch).
    x = mrand(3, 1, 6, 5, dtype=dtype, seed=3)
    y = mrand(1, 4, 5, 7, dtype=dtype, seed=4)
    mm_check(fastt.matmul, x, y, dtype=dtype)
    big = mrand(6, 4, 5, 7, dtype=dtype, seed=5)[::2]
    mm_check(fastt.matmul, x, big, dtype=dtype)
    # Attention's layout: q, k, v permuted [N, H, L, D] out of one [L, N, 3E]
    # projection, so N (stride 3E) and H (stride D) do not merge (cuBLAS:
    # one pointer-array call over the N * H items).
    L, N, H, D = 5, 6, 3, 4
    proj = mrand(L, N, 3 * H * D, dtype=dtype, seed=6)
    q, k, v = (c.reshape(L, N, H, D).permute(1, 2, 0, 3)
               for c in proj.chunk(3, -1))
    mm_check(fastt.matmul, q, k.transpose(-2, -1), dtype=dtype)
    mm_check(fastt.matmul, mrand(N, H, L, L, dtype=dtype, seed=7), v,
             dtype=dtype)
    mm_check(fastt.baddbmm, mrand(N, L, L, dtype=dtype, seed=8),
             q[:, 1], k[:, 2].transpose(1, 2), dtype=dtype)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float16,
                                   fastt.bfloat16, fastt.float64])
def test_matmul_large(dtype):
    # Several tiles / cuBLAS kernels; odd sizes leave partial tiles.
    a = mrand(129, 257, dtype=dtype, seed=8)
    b = mrand(257, 67, dtype=dtype, seed=9)
    mm_check(fastt.matmul, a, b, dtype=dtype, scale=4.0)
    # A batch larger than one grid dimension's tiles in the fallback.
    x = mrand(70000, 2, 3, dtype=dtype, seed=10)
    y = mrand(70000, 3, 2, dtype=dtype, seed=11)
    mm_check(fastt.bmm, x, y, dtype=dtype)


@pytest.mark.parametrize("dtype", [fastt.int32, fastt.int64, fastt.uint8,
                                   fastt.int8])
def test_matmul_integer_wraps(dtype):
    # Products past the type's range wrap exactly like the CPU kernel.
    hi = {fastt.int32: 100000, fastt.int64: 2 ** 40, fastt.uint8: 250,
          fastt.int8: 120}[dtype]
    lo = 0 if dtype == fastt.uint8 else -hi
    a = rand(7, 33, dtype=dtype, seed=1, low=lo, high=hi)
    b = rand(33, 5, dtype=dtype, seed=2, low=lo, high=hi)
    check(fastt.matmul, a, b, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", MM_DTYPES)
def test_addmm_baddbmm(dtype):
    floating = dtype.is_floating_point or dtype.is_complex
    inp = mrand(6, 7, dtype=dtype, seed=1)
    m1, m2 = mrand(6, 5, dtype=dtype, seed=2), mrand(5, 7, dtype=dtype, seed=3)
    scalars = ([(1, 1), (0.5, 2.0), (0, 1.5), (2.0, 0)] if floating
               else [(1, 1), (2, 3), (0, 2), (3, 0)])
    for beta, alpha in scalars:
        mm_check(lambda i, a, b: fastt.addmm(i, a, b, beta=beta, alpha=alpha),
                 inp, m1, m2, dtype=dtype, what=f"addmm {beta} {alpha}")
        # Broadcast addends: a row, a column, a scalar-like tensor.
        for addend in (mrand(7, dtype=dtype), mrand(6, 1, dtype=dtype),
                       mrand(1, dtype=dtype), noncontig(inp)):
            mm_check(lambda i, a, b: fastt.addmm(i, a, b, beta=beta,
                                                 alpha=alpha),
                     addend, m1.t().contiguous().t(), m2, dtype=dtype)
    b1 = mrand(3, 6, 5, dtype=dtype, seed=4)
    b2 = mrand(3, 5, 7, dtype=dtype, seed=5)
    for beta, alpha in scalars:
        mm_check(lambda i, a, b: fastt.baddbmm(i, a, b, beta=beta,
                                               alpha=alpha),
                 mrand(3, 6, 7, dtype=dtype), b1, b2, dtype=dtype)
        mm_check(lambda i, a, b: fastt.baddbmm(i, a, b, beta=beta,
                                               alpha=alpha),
                 mrand(7, dtype=dtype), b1, b2, dtype=dtype)
    # K = 0: beta * input only.
    mm_check(lambda i, a, b: fastt.addmm(i, a, b, beta=beta, alpha=alpha),
             inp, mrand(6, 0, dtype=dtype), mrand(0, 7, dtype=dtype),
             dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_addmm_nan_rules(dtype):
    # beta == 0 never reads the addend; alpha == 0 skips the product.
    nan_in = fastt.full((4, 5), float("nan"), dtype=dtype)
    m1, m2 = mrand(4, 3, dtype=dtype), mrand(3, 5, dtype=dtype)
    dev, _ = check(lambda i, a, b: fastt.addmm(i, a, b, beta=0), nan_in, m1,
                   m2, rtol=MM_TOL[dtype][0], atol=MM_TOL[dtype][1])
    assert not np.isnan(dev.float().cpu().numpy()).any()
    nan_m = fastt.full((4, 3), float("nan"), dtype=dtype)
    inp = mrand(4, 5, dtype=dtype)
    dev, _ = check(lambda i, a, b: fastt.addmm(i, a, b, alpha=0), inp, nan_m,
                   m2, rtol=MM_TOL[dtype][0], atol=MM_TOL[dtype][1])
    assert not np.isnan(dev.float().cpu().numpy()).any()
    # A NaN in the product does propagate.
    dev, _ = check(fastt.mm, nan_m, m2)
    assert np.isnan(dev.float().cpu().numpy()).all()


@pytest.mark.parametrize("dtype", MM_DTYPES)
def test_mv_dot(dtype):
    m = mrand(9, 17, dtype=dtype, seed=1)
    v = mrand(17, dtype=dtype, seed=2)
    mm_check(fastt.mv, m, v, dtype=dtype)
    mm_check(fastt.mv, mrand(17, 9, dtype=dtype).t(), noncontig(v),
             dtype=dtype)
    mm_check(fastt.dot, v, mrand(17, dtype=dtype, seed=3), dtype=dtype)
    mm_check(fastt.dot, noncontig(v), v, dtype=dtype)
    mm_check(fastt.mv, mrand(0, 4, dtype=dtype), mrand(4, dtype=dtype),
             dtype=dtype)
    mm_check(fastt.mv, mrand(3, 0, dtype=dtype), mrand(0, dtype=dtype),
             dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_linear(dtype):
    w = mrand(7, 5, dtype=dtype, seed=1)
    b = mrand(7, dtype=dtype, seed=2)
    for x in (mrand(4, 5, dtype=dtype), mrand(2, 3, 5, dtype=dtype),
              mrand(5, dtype=dtype), noncontig(mrand(4, 5, dtype=dtype)),
              mrand(3, 4, 5, dtype=dtype).transpose(0, 1),
              mrand(0, 5, dtype=dtype)):
        mm_check(F.linear, x, w, dtype=dtype, what=f"linear {x.shape}")
        mm_check(F.linear, x, w, b, dtype=dtype, what=f"linear+b {x.shape}")
    mm_check(F.linear, mrand(4, 5, dtype=dtype), noncontig(w),
             mrand(4, 7, dtype=dtype), dtype=dtype)
    mm_check(F.linear, mrand(4, 5, dtype=dtype), mrand(5, dtype=dtype),
             dtype=dtype)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64])
def test_matmul_grads(dtype):
    r, a = MM_TOL[dtype]
    x = mrand(3, 4, 5, dtype=dtype, seed=1).requires_grad_(True)
    y = mrand(5, 6, dtype=dtype, seed=2).requires_grad_(True)
    check_grad(fastt.matmul, x, y, rtol=r, atol=a, what="matmul")
    yb = mrand(3, 5, 6, dtype=dtype, seed=3).requires_grad_(True)
    check_grad(fastt.matmul, x, yb, rtol=r, atol=a, what="matmul batch")
    check_grad(fastt.bmm, x, yb, rtol=r, atol=a, what="bmm")
    m = mrand(4, 5, dtype=dtype, seed=4).requires_grad_(True)
    v = mrand(5, dtype=dtype, seed=5).requires_grad_(True)
    check_grad(fastt.mv, m, v, rtol=r, atol=a, what="mv")
    inp = mrand(4, 6, dtype=dtype, seed=6).requires_grad_(True)
    check_grad(lambda i, p, q: fastt.addmm(i, p, q, beta=0.5, alpha=2.0),
               inp, m, mrand(5, 6, dtype=dtype).requires_grad_(True),
               rtol=r, atol=a, what="addmm")
    w = mrand(7, 5, dtype=dtype, seed=7).requires_grad_(True)
    b = mrand(7, dtype=dtype, seed=8).requires_grad_(True)
    check_grad(F.linear, x, w, b, rtol=r, atol=a, what="linear")


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_products(dtype):
    # cgemm/zgemm (cuBLAS) or the tiled kernel's complex accumulator:
    # conjugated views (resolved before the kernel), the adjoint, complex
    # coefficients (a real one reaches the kernel; an imaginary part is
    # composed by the op layer), a product large enough for several tiles.
    r, a = MM_TOL[dtype]
    x, y = mrand(6, 9, dtype=dtype, seed=1), mrand(9, 4, dtype=dtype, seed=2)
    check(lambda p, q: fastt.mm(p.conj(), q), x, y, rtol=r, atol=a)
    check(lambda p, q: p.mH @ q, mrand(9, 6, dtype=dtype, seed=15),
          mrand(9, 5, dtype=dtype, seed=16), rtol=r, atol=a)
    check(lambda i, p, q: fastt.addmm(i, p, q, beta=0.5, alpha=2 - 1j),
          mrand(6, 4, dtype=dtype, seed=3), x, y, rtol=r, atol=a)
    check(lambda i, p, q: fastt.baddbmm(i, p, q, beta=1j, alpha=0.25),
          mrand(2, 6, 4, dtype=dtype, seed=4),
          mrand(2, 6, 9, dtype=dtype, seed=5),
          mrand(2, 9, 4, dtype=dtype, seed=6), rtol=r, atol=a)
    check(fastt.matmul, mrand(70, 129, dtype=dtype, seed=7),
          mrand(129, 33, dtype=dtype, seed=8), rtol=4 * r, atol=4 * a)
    # A transposed out= result: no BLAS view of C, so the tiled kernel's
    # shared-memory complex accumulator runs on a cuBLAS build too.
    check(lambda p, q: fastt.mm(p, q, out=fastt.empty(
        4, 6, dtype=p.dtype, device=p.device).t()), x, y, rtol=r, atol=a)
    check(fastt.vdot, mrand(17, dtype=dtype, seed=9),
          mrand(17, dtype=dtype, seed=10), rtol=r, atol=a)
    # Gradients (conjugate Wirtinger: g @ B^H, A^H @ g) through the
    # device's conj and product kernels.
    p = mrand(3, 4, 5, dtype=dtype, seed=11).requires_grad_(True)
    q = mrand(5, 6, dtype=dtype, seed=12).requires_grad_(True)
    check_grad(fastt.matmul, p, q, rtol=r, atol=a, what="complex matmul")
    check_grad(lambda i, u, v: fastt.addmm(i, u, v, beta=0.5, alpha=1j),
               mrand(4, 6, dtype=dtype, seed=13).requires_grad_(True),
               mrand(4, 5, dtype=dtype, seed=14).requires_grad_(True), q,
               rtol=r, atol=a, what="complex addmm")


def test_tf32_defaults_like_torch():
    # Read at import by cuda_util, before it turned the cuDNN one off.
    from cuda_util import CUDNN_TF32_DEFAULT
    cuda_built = fastt.backends.cuda.is_built()
    assert CUDNN_TF32_DEFAULT is cuda_built  # torch: cudnn TF32 on
    assert fastt.backends.cuda.matmul.allow_tf32 is False  # matmul: off
    try:
        fastt.backends.cudnn.allow_tf32 = True
        assert fastt.backends.cudnn.allow_tf32 is cuda_built
        assert fastt.backends.cuda.matmul.allow_tf32 is False  # separate
    finally:
        fastt.backends.cudnn.allow_tf32 = False


def test_tf32_switch():
    matmul = fastt.backends.cuda.matmul
    assert matmul.allow_tf32 is False  # off by default, like torch
    a = mrand(64, 512, seed=1)
    b = mrand(512, 48, seed=2)
    exact = np.asarray(a.numpy(), np.float64) @ np.asarray(b.numpy(),
                                                           np.float64)
    try:
        matmul.allow_tf32 = True
        on = fastt.matmul(*to_dev((a, b))).cpu().numpy()
    finally:
        matmul.allow_tf32 = False
    off = fastt.matmul(*to_dev((a, b))).cpu().numpy()
    # float32 accumulate: tight. TF32 rounds inputs to 10 mantissa bits:
    # errors ~ sqrt(K) * 2^-11 * |terms|.
    np.testing.assert_allclose(off, exact, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(on, exact, rtol=2e-2, atol=5e-2)


# ------------------------------------------------------- convolutions

CONV2D_CASES = [
    # (N, C, H, W), (O, C/g, kh, kw), stride, padding, dilation, groups
    ((2, 3, 7, 9), (4, 3, 3, 2), 1, 0, 1, 1),
    ((2, 4, 7, 9), (6, 2, 3, 3), (2, 1), (1, 2), 1, 2),
    ((1, 4, 8, 8), (4, 1, 3, 3), 1, 1, 2, 4),           # depthwise dilated
    ((3, 3, 5, 6), (5, 3, 1, 1), 1, 0, 1, 1),           # pointwise
    ((3, 3, 5, 6), (5, 3, 1, 1), 2, 0, 1, 1),           # strided 1x1
    ((2, 2, 20, 20), (3, 2, 3, 3), 1, 1, 1, 1),         # L >= 256: per sample
    ((0, 3, 5, 5), (4, 3, 3, 3), 1, 1, 1, 1),           # empty batch
    ((1, 2, 1, 1), (3, 2, 1, 1), 1, 0, 1, 1),
    ((2, 3, 6, 5), (4, 3, 6, 5), 1, 0, 1, 1),           # 1x1 output
    ((2, 6, 9, 7), (6, 2, 2, 3), (3, 2), (1, 1), (2, 1), 3),
]


@pytest.mark.parametrize("dtype", FLOATS + [fastt.int64])
@pytest.mark.parametrize("case", range(len(CONV2D_CASES)))
def test_conv2d(dtype, case):
    xs, ws, stride, padding, dilation, groups = CONV2D_CASES[case]
    x = mrand(*xs, dtype=dtype, seed=1)
    w = mrand(*ws, dtype=dtype, seed=2)
    b = mrand(ws[0], dtype=dtype, seed=3)
    r, a = MM_TOL[dtype]
    for bias in (None, b):
        check(lambda x, w, bias: F.conv2d(x, w, bias, stride, padding,
                                          dilation, groups),
              x, w, bias, rtol=r, atol=a, what=f"conv2d case {case}")
    # Non-contiguous input and weight.
    check(lambda x, w: F.conv2d(x, w, None, stride, padding, dilation,
                                groups),
          noncontig(x), noncontig(w), rtol=r, atol=a)


@pytest.mark.parametrize("dtype", FLOATS)
def test_conv2d_variants(dtype):
    r, a = MM_TOL[dtype]
    x = mrand(2, 3, 8, 7, dtype=dtype, seed=1)
    w = mrand(4, 3, 2, 3, dtype=dtype, seed=2)
    check(lambda x, w: F.conv2d(x, w, padding="same"), x, w, rtol=r, atol=a)
    check(lambda x, w: F.conv2d(x, w, padding="same", dilation=2), x, w,
          rtol=r, atol=a)
    check(lambda x, w: F.conv2d(x, w, padding="valid"), x, w, rtol=r, atol=a)
    check(lambda x, w: F.conv2d(x, w), x[0], w, rtol=r, atol=a)  # unbatched
    # channels-last-like strides
    xl = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    check(lambda x, w: F.conv2d(x, w, stride=2, padding=1), xl, w, rtol=r,
          atol=a)
    # A batch big enough to run in several column chunks.
    xb = mrand(40, 8, 32, 32, dtype=dtype, seed=4)
    wb = mrand(8, 8, 3, 3, dtype=dtype, seed=5)
    check(lambda x, w: F.conv2d(x, w, padding=1), xb, wb, rtol=r * 4,
          atol=a * 4)


@pytest.mark.parametrize("dtype", FLOATS)
def test_conv1d(dtype):
    r, a = MM_TOL[dtype]
    x = mrand(3, 4, 17, dtype=dtype, seed=1)
    for ws, stride, padding, dilation, groups in [
            ((6, 4, 3), 1, 0, 1, 1), ((6, 2, 5), 2, 2, 1, 2),
            ((4, 1, 3), 1, 2, 3, 4), ((5, 4, 1), 3, 0, 1, 1)]:
        w = mrand(*ws, dtype=dtype, seed=2)
        b = mrand(ws[0], dtype=dtype, seed=3)
        check(lambda x, w, b: F.conv1d(x, w, b, stride, padding, dilation,
                                       groups),
              x, w, b, rtol=r, atol=a, what=f"conv1d {ws}")
    w = mrand(6, 4, 4, dtype=dtype, seed=4)
    check(lambda x, w: F.conv1d(x, w, padding="same"), x, w, rtol=r, atol=a)
    check(lambda x, w: F.conv1d(x, w), x[0], w, rtol=r, atol=a)


CONVT_CASES = [
    # (N, Cin, H, W), (Cin, Cout/g, kh, kw), stride, padding, out_pad,
    # groups, dilation
    ((2, 3, 5, 4), (3, 4, 3, 3), 1, 0, 0, 1, 1),
    ((2, 4, 5, 4), (4, 3, 3, 2), 2, 1, 1, 2, 1),
    ((1, 2, 3, 3), (2, 2, 2, 2), (3, 2), (0, 1), (2, 1), 1, 1),
    ((2, 2, 4, 5), (2, 3, 3, 3), 2, 1, 1, 1, 2),
    ((3, 2, 20, 18), (2, 2, 3, 3), 1, 1, 0, 1, 1),   # L >= 256
    ((0, 2, 4, 4), (2, 3, 3, 3), 1, 0, 0, 1, 1),
    # output_padding >= stride (allowed by dilation): cuDNN's geometry
    # cannot express it, so the im2col composition runs on the device too.
    ((2, 2, 4, 4), (2, 3, 3, 3), 1, 1, 1, 1, 2),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(len(CONVT_CASES)))
def test_conv_transpose2d(dtype, case):
    xs, ws, stride, padding, opad, groups, dilation = CONVT_CASES[case]
    x = mrand(*xs, dtype=dtype, seed=1)
    w = mrand(*ws, dtype=dtype, seed=2)
    b = mrand(ws[1] * groups, dtype=dtype, seed=3)
    r, a = MM_TOL[dtype]
    for bias in (None, b):
        check(lambda x, w, bias: F.conv_transpose2d(x, w, bias, stride,
                                                    padding, opad, groups,
                                                    dilation),
              x, w, bias, rtol=r, atol=a, what=f"conv_transpose2d {case}")


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64])
def test_conv_grads(dtype):
    r, a = MM_TOL[dtype]
    r, a = r * 10, a * 10

    def g(*shape, seed):
        return mrand(*shape, dtype=dtype, seed=seed).requires_grad_(True)

    check_grad(lambda x, w, b: F.conv2d(x, w, b, 1, 1), g(2, 3, 6, 7, seed=1),
               g(4, 3, 3, 3, seed=2), g(4, seed=3), rtol=r, atol=a,
               what="conv2d")
    check_grad(lambda x, w, b: F.conv2d(x, w, b, (2, 1), (1, 0), (1, 2), 2),
               g(2, 4, 7, 8, seed=4), g(6, 2, 3, 2, seed=5), g(6, seed=6),
               rtol=r, atol=a, what="conv2d strided grouped")
    check_grad(lambda x, w, b: F.conv2d(x, w, b, 1, 1),
               g(2, 3, 18, 17, seed=7), g(2, 3, 3, 3, seed=8), g(2, seed=9),
               rtol=r, atol=a, what="conv2d per-sample")
    check_grad(lambda x, w, b: F.conv1d(x, w, b, 2, 1), g(2, 3, 11, seed=10),
               g(4, 3, 3, seed=11), g(4, seed=12), rtol=r, atol=a,
               what="conv1d")
    check_grad(lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1),
               g(2, 3, 4, 5, seed=13), g(3, 2, 3, 3, seed=14), g(2, seed=15),
               rtol=r, atol=a, what="conv_transpose2d")


# ------------------------------------------------------------- pooling

POOL_CASES = [
    # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False),
    (3, 1, 1, 1, False),          # overlapping windows
    ((3, 2), (2, 1), (1, 0), 1, True),
    (3, 2, 1, 2, False),
    (2, 3, 1, (2, 1), True),
    (1, 1, 0, 1, False),
]


@pytest.mark.parametrize("dtype", FLOATS + [fastt.int64, fastt.uint8,
                                            fastt.int32])
@pytest.mark.parametrize("case", range(len(POOL_CASES)))
def test_max_pool2d(dtype, case):
    k, s, p, d, cm = POOL_CASES[case]
    # Few distinct values: ties decide the index (the first maximum wins).
    x = rand(2, 3, 9, 11, dtype=dtype, seed=case, low=0, high=4)

    def f(x):
        return F.max_pool2d(x, k, s, p, d, cm, return_indices=True)
    check(f, x, rtol=0, atol=0)
    check(f, noncontig(x), rtol=0, atol=0)
    check(f, x[0], rtol=0, atol=0)                    # unbatched
    check(f, x[:0], rtol=0, atol=0)                   # empty batch


@pytest.mark.parametrize("dtype", FLOATS)
def test_max_pool2d_nan_inf(dtype):
    x = rand(1, 2, 6, 6, dtype=dtype, seed=1)
    x[0, 0, 1, 1] = float("nan")
    x[0, 0, 1, 2] = float("nan")
    x[0, 1, 2, 2] = float("-inf")
    x[0, 1, 4, 4] = float("inf")
    for k, s in ((2, 2), (3, 1)):
        check(lambda x: F.max_pool2d(x, k, s, return_indices=True), x,
              rtol=0, atol=0)
    allneg = fastt.full((1, 1, 4, 4), float("-inf"), dtype=dtype)
    check(lambda x: F.max_pool2d(x, 2, return_indices=True), allneg,
          rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64,
                                   fastt.int64, fastt.float16,
                                   fastt.bfloat16])
@pytest.mark.parametrize("case", range(5))
def test_avg_pool2d(dtype, case):
    k, s, p, _, cm = POOL_CASES[case]
    x = (rand(2, 3, 9, 11, dtype=dtype, seed=case, low=-20, high=20)
         if dtype == fastt.int64 else mrand(2, 3, 9, 11, dtype=dtype))
    r, a = (0, 0) if dtype == fastt.int64 else MM_TOL[dtype]
    for cip, div in itertools.product((True, False), (None, 3)):
        check(lambda x: F.avg_pool2d(x, k, s, p, cm, cip, div), x, rtol=r,
              atol=a, what=f"avg_pool2d {case} {cip} {div}")
    check(lambda x: F.avg_pool2d(x, k, s, p, cm), noncontig(x)[0], rtol=r,
          atol=a)


@pytest.mark.parametrize("dtype", FLOATS)
def test_adaptive_avg_pool2d(dtype):
    r, a = MM_TOL[dtype]
    x = mrand(2, 3, 7, 9, dtype=dtype)
    for size in ((3, 4), 1, (7, 9), (5, 13), (None, 2), (1, 9)):
        check(lambda x: F.adaptive_avg_pool2d(x, size), x, rtol=r, atol=a,
              what=f"adaptive {size}")
    check(lambda x: F.adaptive_avg_pool2d(x, (2, 3)), noncontig(x)[1],
          rtol=r, atol=a)


@pytest.mark.parametrize("dtype", FLOATS)
def test_pool_grads(dtype):
    r, a = MM_TOL[dtype]
    # Overlapping max windows (stride < kernel) scatter-add into one input;
    # a 16-bit grad is rounded per addition, so allow its rounding.
    if dtype in (fastt.float16, fastt.bfloat16):
        r, a = r * 2, a * 2
    x = mrand(2, 3, 9, 10, dtype=dtype, seed=1).requires_grad_(True)
    for k, s, p, d, cm in POOL_CASES:
        check_grad(lambda x: F.max_pool2d(x, k, s, p, d, cm), x, rtol=r,
                   atol=a, what=f"max_pool2d {k} {s} {p} {d} {cm}")
    for k, s, p, _, cm in POOL_CASES[:5]:
        for cip, div in ((True, None), (False, None), (True, 5)):
            check_grad(lambda x: F.avg_pool2d(x, k, s, p, cm, cip, div), x,
                       rtol=r, atol=a, what=f"avg_pool2d {k} {s} {p}")
    for size in ((3, 4), (4, 7), (9, 10), (12, 13), 1):
        check_grad(lambda x: F.adaptive_avg_pool2d(x, size), x, rtol=r,
                   atol=a, what=f"adaptive {size}")


def test_pool1d_wrappers():
    x = mrand(2, 3, 17)
    check(lambda x: F.max_pool1d(x, 3, 2, 1), x)
    check(lambda x: F.avg_pool1d(x, 4, 3, 2, True, False), x)


def test_big_pool_and_im2col():
    # Enough elements for many blocks of the grid-stride loops.
    x = mrand(8, 16, 64, 64, seed=3)
    check(lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), x,
          rtol=0, atol=0)
    check(lambda x: F.avg_pool2d(x, 3, 2, 1), x)
    w = mrand(16, 16, 3, 3, seed=4)
    check(lambda x, w: F.conv2d(x, w, padding=1), x, w, rtol=1e-4,
          atol=1e-4)


# --------------------------------------------- integer conv, pool, gemm
# The CPU registers im2col/col2im/conv_rows/max_pool2d/gemm for every
# integer dtype (integer convolutions wrap like the CPU's); so does CUDA.
@pytest.mark.parametrize("dtype", [fastt.uint8, fastt.int8, fastt.int16,
                                   fastt.int32, fastt.int64], ids=str)
def test_integer_conv_pool_gemm(dtype):
    x = rand(2, 3, 7, 6, dtype=dtype, seed=31, low=0, high=4)
    w = rand(4, 3, 3, 2, dtype=dtype, seed=32, low=0, high=3)
    b = rand(4, dtype=dtype, seed=33, low=0, high=3)
    check(lambda x, w, b: F.conv2d(x, w, b, 1, 1), x, w, b)
    check(lambda x, w: F.conv2d(x, w, None, 2, 0, 1, 1), x, w)
    wt = rand(3, 2, 3, 3, dtype=dtype, seed=34, low=0, high=3)
    check(lambda x, w: F.conv_transpose2d(x, w, None, 2, 1), x, wt)
    check(lambda x: F.max_pool2d(x, 2, 2), x)
    check(lambda x: F.max_pool2d(x, 3, 1, 1), noncontig(x))
    m = rand(5, 7, dtype=dtype, seed=35, low=0, high=5)
    n = rand(7, 3, dtype=dtype, seed=36, low=0, high=5)
    check(fastt.matmul, m, n)
    check(fastt.matmul, m.t().contiguous().t(), n)


# ------------------------------------- cuBLAS / cuDNN bindings (real GPU)
# On the emulator these run the tiled gemm and im2col; on a GPU they reach
# cuBLAS's per-stream workspaces and cuDNN's algorithm choice.
@pytest.mark.skipif(DEVICE == "cpu", reason="streams need a CUDA device")
def test_matmul_on_many_streams():
    # linalg.cu keeps a cuBLAS workspace for each of the first 4 streams a
    # thread uses and none past them: every binding, and returning to an
    # earlier stream (its workspace found again), must compute right.
    streams = [fastt.cuda.Stream() for _ in range(6)]
    a, b = mrand(64, 96, seed=1), mrand(96, 80, seed=2)
    for s in streams + streams[:2] + [fastt.cuda.default_stream()]:
        with fastt.cuda.stream(s):
            for dtype in (fastt.float32, fastt.float16):
                mm_check(fastt.matmul, a.to(dtype), b.to(dtype),
                         dtype=dtype, what=f"matmul on {s}")


@pytest.mark.large  # ResNet-sized convolutions: slow under tests/cuda_emu
@pytest.mark.parametrize("dtype", FLOATS)
def test_conv_realistic_shapes(dtype):
    # Shapes whose cuDNN algorithms want workspace (3x3 stages, the 7x7
    # stride-2 stem, a strided 1x1 projection), forward and both grads.
    # float32 must stay float32: with allow_tf32 off, a TF32 kernel's error
    # (~1e-2 here) fails the 1e-3 tolerance.
    # float32's atol is 1e-5 of the largest weight gradient (~100: 6272
    # products summed): cuDNN's weight-grad algorithms sum in another order
    # (1.3e-3 off on the H200), where TF32 would be ~1 off.
    tol = {fastt.float32: (1e-4, 5e-3), fastt.float64: (1e-10, 1e-10),
           fastt.float16: (1e-2, 5e-2), fastt.bfloat16: (5e-2, 3e-1)}
    r, a = tol[dtype]
    for xs, ws, stride, padding in [
            ((2, 64, 56, 56), (64, 64, 3, 3), 1, 1),
            ((2, 3, 112, 112), (64, 3, 7, 7), 2, 3),
            ((2, 128, 28, 28), (256, 128, 1, 1), 2, 0)]:
        x = mrand(*xs, dtype=dtype, seed=1).requires_grad_(True)
        w = mrand(*ws, dtype=dtype, seed=2).requires_grad_(True)
        check_grad(lambda x, w: F.conv2d(x, w, None, stride, padding), x, w,
                   rtol=r, atol=a, what=f"conv2d {xs} {ws}")


# ---------------------------------------------------------------- LAPACK
# fastt.linalg on device tensors: factorized on the host (no cuSOLVER rows
# yet), results and gradients back on the device.

def _wellcond(*shape, seed=0, dtype=fastt.float64):
    a = np.random.default_rng(seed).standard_normal(shape)
    a = a + shape[-1] * np.eye(shape[-1])
    return fastt.tensor(a, dtype=dtype)


@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64])
@pytest.mark.parametrize("name,fn", [
    ("solve", lambda A, B: fastt.linalg.solve(A, B)),
    ("inv", lambda A, B: fastt.linalg.inv(A)),
    ("det", lambda A, B: fastt.linalg.det(A)),
    ("slogdet", lambda A, B: fastt.linalg.slogdet(A)),
    ("cholesky", lambda A, B: fastt.linalg.cholesky(A @ A.mT)),
    ("qr_R", lambda A, B: fastt.linalg.qr(A).R.abs()),
    ("eigvalsh", lambda A, B: fastt.linalg.eigvalsh(A + A.mT)),
    ("svdvals", lambda A, B: fastt.linalg.svdvals(A)),
    ("pinv", lambda A, B: fastt.linalg.pinv(A)),
    ("lstsq", lambda A, B: fastt.linalg.lstsq(A, B).solution),
    ("lu_solve", lambda A, B: fastt.linalg.lu_solve(
        *fastt.linalg.lu_factor(A), B)),
    ("solve_triangular", lambda A, B: fastt.linalg.solve_triangular(
        fastt.triu(A), B, upper=True)),
])
def test_linalg_on_device(dtype, name, fn):
    A = _wellcond(3, 5, 5, seed=1, dtype=dtype).requires_grad_(True)
    B = _wellcond(3, 5, 5, seed=2, dtype=dtype)[..., :2].contiguous()
    B.requires_grad_(True)
    scale = 1e3 if dtype == fastt.float32 else 1.0
    dev, _ = check(fn, A, B, rtol=tol(dtype, scale)[0],
                   atol=tol(dtype, scale)[1], what=name)
    out = dev[0] if isinstance(dev, tuple) else dev
    assert out.device.type == DEVICE.split(":")[0]
    check_grad(fn, A, B, rtol=tol(dtype, scale)[0],
               atol=tol(dtype, scale)[1], what=name)


# ---------------------------------------------------------------- fft
@pytest.mark.parametrize("dtype", [fastt.float32, fastt.float64])
def test_fft_family_on_device(dtype):
    # No cuFFT rows yet: the ops transform on the host and return device
    # tensors; values must be the CPU's and the result on the device.
    import fastt.fft as ffft
    x = mrand(4, 10, dtype=dtype, seed=3)
    r, a = (1e-5, 1e-5) if dtype == fastt.float32 else (1e-12, 1e-12)
    for fn in (ffft.rfft, ffft.fft, ffft.ihfft,
               lambda t: ffft.fftn(t, s=(3, 12)),
               lambda t: ffft.irfft(ffft.rfft(t)),
               lambda t: ffft.hfft(ffft.rfft(t), n=7)):
        dev, _ = check(fn, x, rtol=r, atol=a)
        assert str(dev.device).startswith(DEVICE.split(":")[0])
