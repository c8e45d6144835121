"""The fused CPU attention (kernels/cpu/attention.cpp, csrc/ops/attention.cpp)
behind fastt.nn.functional.scaled_dot_product_attention: outputs and
gradients against torch over the shapes and options it serves (2-D to 4-D,
grouped-query heads, bool and float masks broadcast from any shape, rows
with every key masked, causal with L != S, scales, several tiles per
row/column, float64 gradcheck, bf16 through float32), the paths that stay
composed (dropout, a mask that needs its gradient, broadcast key batches)
and the errors of the op itself."""
import numpy as np
import pytest
import torch

import fastt
import fastt.nn.functional as F
from fastt import _C

TF = torch.nn.functional


def _data(shapes, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _both(q, k, v, mask=None, grad=True, **kw):
    """(fastt out, torch out, [(fastt grad, torch grad)] for q, k, v)."""
    fx = [fastt.from_numpy(a.copy()).requires_grad_(grad) for a in (q, k, v)]
    tx = [torch.tensor(a, requires_grad=grad) for a in (q, k, v)]
    fm = None if mask is None else fastt.from_numpy(np.array(mask))
    tm = None if mask is None else torch.tensor(np.array(mask))
    fo = F.scaled_dot_product_attention(*fx, attn_mask=fm, **kw)
    to = TF.scaled_dot_product_attention(*tx, attn_mask=tm, **kw)
    grads = []
    if grad:
        g = np.random.default_rng(9).standard_normal(tuple(to.shape)).astype(
            q.dtype)
        fo.backward(fastt.from_numpy(g))
        to.backward(torch.tensor(g))
        grads = [(a.grad.numpy(), b.grad.numpy()) for a, b in zip(fx, tx)]
    return fo.detach().numpy(), to.detach().numpy(), grads


def _close(a, b, tol):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


CASES = [
    # q, k, v shapes, kwargs
    ((2, 4, 16, 16), (2, 4, 16, 16), (2, 4, 16, 16), {}),
    ((1, 2, 150, 32), (1, 2, 200, 32), (1, 2, 200, 24), {}),       # tiles
    ((1, 2, 150, 32), (1, 2, 200, 32), (1, 2, 200, 24),
     {"is_causal": True}),                                           # L < S
    ((1, 2, 130, 16), (1, 2, 70, 16), (1, 2, 70, 16),
     {"is_causal": True}),                                           # L > S
    ((2, 8, 33, 16), (2, 2, 40, 16), (2, 2, 40, 16),
     {"enable_gqa": True, "is_causal": True}),
    ((3, 10, 8), (3, 12, 8), (3, 12, 5), {"scale": 0.3}),           # 3-D
    ((10, 8), (12, 8), (12, 5), {"is_causal": True}),               # 2-D
    ((2, 3, 1, 16), (2, 3, 1, 16), (2, 3, 1, 16), {}),               # one key
    ((1, 2, 0, 8), (1, 2, 5, 8), (1, 2, 5, 8), {}),                   # empty
    ((1, 2, 4, 8), (1, 2, 0, 8), (1, 2, 0, 5), {}),
    ((1, 2, 4, 0), (1, 2, 5, 0), (1, 2, 5, 3), {}),
]


@pytest.mark.parametrize("qs,ks,vs,kw", CASES)
def test_matches_torch(qs, ks, vs, kw):
    fo, to, grads = _both(*_data((qs, ks, vs)), **kw)
    _close(fo, to, 2e-5)
    for a, b in grads:
        _close(a, b, 5e-5)


def test_uses_the_fused_kernel():
    q, k, v = (fastt.randn(2, 4, 16, 8).requires_grad_() for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.grad_fn.name() == \
        "ScaledDotProductFlashAttentionForCpuBackward0"
    # What stays composed: dropout, a mask that needs its gradient.
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert "Flash" not in out.grad_fn.name()
    m = fastt.zeros(16, 16).requires_grad_()
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    assert "Flash" not in out.grad_fn.name()
    out.sum().backward()
    assert m.grad is not None and m.grad.shape == (16, 16)


@pytest.mark.parametrize("mshape", [(33, 40), (1, 40), (8, 1, 40),
                                    (2, 1, 33, 40), (2, 8, 33, 40)])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_masks_broadcast(mshape, kind):
    q, k, v = _data(((2, 8, 33, 16), (2, 8, 40, 16), (2, 8, 40, 16)))
    rng = np.random.default_rng(1)
    mask = (rng.random(mshape) > 0.3 if kind == "bool"
            else rng.standard_normal(mshape).astype(np.float32))
    fo, to, grads = _both(q, k, v, mask)
    _close(fo, to, 2e-5)
    for a, b in grads:
        _close(a, b, 5e-5)


def test_rows_with_every_key_masked_are_zero():
    q, k, v = _data(((1, 2, 6, 8), (1, 2, 9, 8), (1, 2, 9, 8)))
    mask = np.ones((6, 9), dtype=bool)
    mask[2] = False
    fo, to, grads = _both(q, k, v, mask)
    assert np.all(fo[:, :, 2] == 0) and np.isfinite(fo).all()
    _close(fo, to, 2e-5)
    for a, b in grads:
        assert np.isfinite(a).all()
        _close(a, b, 5e-5)
    # The composed path (CUDA's, and dropout's) agrees: 0, not NaN.
    fq, fk, fv = (fastt.from_numpy(a) for a in (q, k, v))
    comp = F.scaled_dot_product_attention(
        fq, fk, fv, attn_mask=fastt.from_numpy(mask), dropout_p=1e-12)
    np.testing.assert_allclose(comp.numpy(), fo, rtol=1e-4, atol=1e-5)


def test_noncontiguous_inputs():
    # Attention's own layout: heads permuted out of [L, N, 3E].
    L, N, H, D = 20, 3, 4, 8
    x = fastt.randn(L, N, 3 * H * D)
    q, k, v = (c.reshape(L, N, H, D).permute(1, 2, 0, 3)
               for c in x.chunk(3, -1))
    tq, tk, tv = (torch.from_numpy(t.contiguous().numpy()) for t in (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    want = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    _close(out.numpy(), want.numpy(), 2e-5)


def test_float64_gradcheck():
    q, k, v = (fastt.from_numpy(a).requires_grad_() for a in _data(
        ((1, 2, 5, 4), (1, 1, 7, 4), (1, 1, 7, 3)), np.float64))
    mask = fastt.from_numpy(np.random.default_rng(2).standard_normal((5, 7)))
    for kw in ({"attn_mask": mask, "enable_gqa": True},
               {"is_causal": True, "enable_gqa": True, "scale": 0.7}):
        assert fastt.autograd.gradcheck(
            lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw),
            (q, k, v))


def test_bfloat16_through_float32():
    q, k, v = _data(((1, 2, 40, 16),) * 3)
    fq, fk, fv = (fastt.from_numpy(a).bfloat16() for a in (q, k, v))
    tq, tk, tv = (torch.tensor(a).bfloat16() for a in (q, k, v))
    out = F.scaled_dot_product_attention(fq, fk, fv, is_causal=True)
    want = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    assert out.dtype == fastt.bfloat16
    np.testing.assert_allclose(out.float().numpy(), want.float().numpy(),
                               rtol=2e-2, atol=2e-2)


def test_broadcast_key_batch_stays_composed():
    q, k, v = _data(((2, 4, 8, 8), (1, 4, 8, 8), (1, 4, 8, 8)))
    fo, to, grads = _both(q, k, v)
    _close(fo, to, 2e-5)
    for a, b in grads:
        _close(a, b, 5e-5)


def test_multihead_attention_module_matches_torch():
    torch.manual_seed(0)
    tm = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0,
                                          batch_first=True)
    fm = fastt.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0,
                                          batch_first=True)
    fm.load_state_dict({k: fastt.from_numpy(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((3, 10, 32)).astype(
        np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(10)
    want = tm(torch.tensor(x), src_mask=mask, is_causal=True)
    got = fm(fastt.from_numpy(x), src_mask=fastt.from_numpy(mask.numpy()),
             is_causal=True)
    _close(got.detach().numpy(), want.detach().numpy(), 1e-4)


def test_op_errors():
    q = fastt.randn(1, 2, 4, 8)
    with pytest.raises(RuntimeError, match="4-D"):
        _C._flash_attention(fastt.randn(4, 8), q, q)
    with pytest.raises(RuntimeError, match="same dtype"):
        _C._flash_attention(q, q.double(), q)
    with pytest.raises(RuntimeError, match="multiple of the heads"):
        _C._flash_attention(fastt.randn(1, 3, 4, 8), q, q)
    with pytest.raises(RuntimeError, match="do not fit"):
        _C._flash_attention(q, fastt.randn(1, 2, 4, 6), q)
    with pytest.raises(RuntimeError, match="additive attn_mask"):
        _C._flash_attention(q, q, q, fastt.zeros(4, 4, dtype=fastt.bool))
    with pytest.raises(RuntimeError):
        _C._flash_attention(q, q, q, fastt.zeros(3, 4))  # not broadcastable
    out, lse = _C._flash_attention(q, q, q, None, 0.5, True)
    with pytest.raises(RuntimeError, match="logsumexp"):
        _C._flash_attention_backward(out, q, q, q, None, out, lse[..., :2],
                                     0.5, True)
    with pytest.raises(RuntimeError, match="attn_mask should not be set"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=fastt.zeros(4, 4),
                                       is_causal=True)


def test_saved_inputs_modified_in_place_are_caught():
    q, k, v = (fastt.randn(1, 2, 4, 8).requires_grad_() for _ in range(3))
    kk = k * 1
    out = F.scaled_dot_product_attention(q, kk, v)
    kk.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace"):
        out.sum().backward()
