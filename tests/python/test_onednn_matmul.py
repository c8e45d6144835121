"""bfloat16 CPU matrix products through oneDNN (kernels/cpu/onednn_matmul.cpp)
against a float64 reference of the same bf16 values and against fastt's own
path (fastt.backends.mkldnn.enabled = False: both operands converted to
float32 for sgemm): sizes on both sides of the threshold, transposed and
padded operands, batches that merge into one oneDNN call and ones that do
not (permuted, broadcast), alpha/beta/addend, and gradients. On a processor
without bf16 instructions the path must stay unused (and everything still
agrees); with them, it must have run."""
import numpy as np
import pytest
import torch

import fastt


def _bf16(shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return fastt.from_numpy(x).bfloat16()


def _ref(fn, *args):
    """fn over the float64 copies of the bf16 arguments, rounded to bf16."""
    return fn(*[a.double() if isinstance(a, fastt.Tensor) else a
                for a in args]).bfloat16()


def _calls():
    return fastt._C._mkldnn()[3]


def _check(fn, *args):
    before = _calls()
    got = fn(*args)
    assert got.dtype == fastt.bfloat16
    want = _ref(fn, *args)
    with fastt.backends.mkldnn.flags(enabled=False):
        own = fn(*args)
    ran = _calls() - before
    # f32 accumulation, one bf16 rounding: within 2 bf16 ulps of the exact
    # result scaled by the operands' magnitude.
    scale = max(1.0, float(want.float().abs().max()))
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(),
                               rtol=1.6e-2, atol=1e-2 * scale)
    np.testing.assert_allclose(got.float().numpy(), own.float().numpy(),
                               rtol=1.6e-2, atol=1e-2 * scale)
    return ran


def _expect_ran(ran, used):
    if fastt._C._mkldnn()[2]:
        assert (ran > 0) == used, ran
    else:
        assert ran == 0


def test_available_means_bf16_instructions():
    import re
    flags = open("/proc/cpuinfo").read() if \
        __import__("os").path.exists("/proc/cpuinfo") else ""
    has = bool(re.search(r"\b(avx512_bf16|amx_bf16)\b", flags))
    if fastt.backends.mkldnn.is_available():
        assert fastt._C._mkldnn()[2] == has
    else:
        assert not fastt._C._mkldnn()[2]


@pytest.mark.parametrize("M,K,N,used", [
    (64, 64, 64, True), (128, 96, 80, True), (32, 64, 64, False),
    (257, 129, 65, True), (16, 16, 16, False), (8, 64, 64, False)])
def test_sizes_around_the_threshold(M, K, N, used):
    ran = _check(fastt.mm, _bf16((M, K), 1), _bf16((K, N), 2))
    _expect_ran(ran, used)


def test_transposed_and_padded_operands():
    a, b = _bf16((96, 80), 3), _bf16((80, 72), 4)
    at = _bf16((80, 96), 5).t()                 # column-major
    bt = _bf16((72, 80), 6).t()
    padded = _bf16((96, 90), 7)[:, 3:83]        # ld > K
    for x in (a, at, padded):
        for y in (b, bt):
            _expect_ran(_check(fastt.mm, x, y), True)
    # A transposed result (out=): oneDNN writes bf16 with C's strides.
    out = fastt.empty((72, 96), dtype=fastt.bfloat16).t()
    before = _calls()
    fastt.mm(a, b, out=out)
    _expect_ran(_calls() - before, True)
    want = _ref(fastt.mm, a, b).float().numpy()
    np.testing.assert_allclose(out.float().numpy(), want, rtol=1.6e-2,
                               atol=1e-2 * float(np.abs(want).max()))
    # Neither stride is 1: fastt's own path.
    odd = _bf16((96, 160), 8)[:, ::2]
    _expect_ran(_check(fastt.mm, odd, b), False)


def test_batches():
    # Contiguous and 4-D batches merge into one oneDNN call.
    _expect_ran(_check(fastt.bmm, _bf16((8, 64, 48), 1),
                       _bf16((8, 48, 40), 2)), True)
    _expect_ran(_check(fastt.matmul, _bf16((2, 4, 32, 64), 3),
                       _bf16((2, 4, 64, 32), 4)), True)
    # Attention's permuted q/k (N, H not mergeable): a call per matrix.
    L, Nb, H, D = 64, 4, 2, 64
    proj = _bf16((L, Nb, 3 * H * D), 5)
    q, k, _ = (c.reshape(L, Nb, H, D).permute(1, 2, 0, 3)
               for c in proj.chunk(3, -1))
    _expect_ran(_check(fastt.matmul, q, k.transpose(-2, -1)), True)
    # A broadcast operand (batch stride 0).
    _expect_ran(_check(fastt.matmul, _bf16((64, 64), 6),
                       _bf16((3, 64, 64), 7)), True)
    # Many small matrices: one call whose total work passes the threshold.
    _expect_ran(_check(fastt.bmm, _bf16((512, 16, 16), 8),
                       _bf16((512, 16, 16), 9)), True)


def test_alpha_beta_and_addend():
    a, b = _bf16((64, 96), 1), _bf16((96, 80), 2)
    c = _bf16((64, 80), 3)
    _expect_ran(_check(lambda c, a, b: fastt.addmm(c, a, b, beta=0.5,
                                                   alpha=2.0), c, a, b), True)
    _expect_ran(_check(lambda c, a, b: fastt.addmm(c, a, b, alpha=-1.5),
                       c, a, b), True)
    bias = _bf16((80,), 4)
    _expect_ran(_check(fastt.nn.functional.linear, a, _bf16((80, 96), 5),
                       bias), True)
    bc = _bf16((4, 64, 80), 6)
    _expect_ran(_check(lambda c, a, b: fastt.baddbmm(c, a, b, beta=0.25),
                       bc, _bf16((4, 64, 96), 7), _bf16((4, 96, 80), 8)),
                True)


def test_gradients_match_torch():
    a = np.random.default_rng(1).standard_normal((64, 96)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((96, 80)).astype(np.float32)
    fa = fastt.from_numpy(a).bfloat16().requires_grad_()
    fb = fastt.from_numpy(b).bfloat16().requires_grad_()
    ta = torch.from_numpy(a).bfloat16().requires_grad_()
    tb = torch.from_numpy(b).bfloat16().requires_grad_()
    before = _calls()
    (fa @ fb).sum().backward()
    (ta @ tb).sum().backward()
    _expect_ran(_calls() - before, True)
    for f, t in ((fa.grad, ta.grad), (fb.grad, tb.grad)):
        np.testing.assert_allclose(f.float().numpy(), t.float().numpy(),
                                   rtol=1.6e-2, atol=1e-2)


def test_empty_and_zero_k():
    z = fastt.mm(_bf16((64, 0), 1), _bf16((0, 64), 2))
    assert z.dtype == fastt.bfloat16 and float(z.float().abs().max()) == 0.0
    assert fastt.mm(_bf16((0, 64), 1), _bf16((64, 64), 2)).shape == (0, 64)
