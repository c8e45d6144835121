"""The nn pieces issue 15 lists that OpInfo does not sample: the shrink /
sign activations' modules, LPPool1d/2d/3d (F.lp_pool*), F.affine_grid,
F.gumbel_softmax and the full nn.Transformer (decoder layer and stack)
against torch, with torch's reprs, masks and state_dict names."""
import numpy as np
import pytest

import fastt
import fastt.nn as nn
import fastt.nn.functional as F
import torch_ref
from torch_ref import Fz

torch = pytest.importorskip("torch")


def close(f, t, tol=1e-6):
    """torch_ref.close at 1e-6: float32 results, and torch's float64 CELU
    gradient is off by ~1e-8 (fastt's is exact to 1e-16)."""
    torch_ref.close(f, t, tol)


@pytest.mark.parametrize("name,args", [
    ("CELU", (0.7,)), ("SELU", ()), ("Hardshrink", (0.3,)),
    ("Softshrink", (0.3,)), ("Tanhshrink", ()), ("Softsign", ())])
def test_activation_modules(name, args):
    x = torch.randn(4, 5, dtype=torch.float64)
    tm, fm = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    assert repr(fm) == repr(tm)
    fx = Fz(x, True)
    tx = x.clone().requires_grad_(True)
    close(fm(fx), tm(tx))
    fm(fx).sum().backward()
    tm(tx).sum().backward()
    close(fx.grad, tx.grad)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("p,kernel,stride,ceil", [
    (2, 2, None, False), (3.0, 3, 2, True), (1.5, 2, 1, False)])
def test_lp_pool(nd, p, kernel, stride, ceil):
    x = torch.rand((2, 3) + (7,) * nd, dtype=torch.float64) + 0.1
    cls = f"LPPool{nd}d"
    tm = getattr(torch.nn, cls)(p, kernel, stride, ceil)
    fm = getattr(nn, cls)(p, kernel, stride, ceil)
    assert repr(fm) == repr(tm)
    fx, tx = Fz(x, True), x.clone().requires_grad_(True)
    close(fm(fx), tm(tx))
    fm(fx).sum().backward()
    tm(tx).sum().backward()
    close(fx.grad, tx.grad)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 1, 6), (2, 3, 3, 4, 5)])
def test_affine_grid(align, size):
    theta = torch.randn(2, len(size) - 2, len(size) - 1, dtype=torch.float64)
    t = torch.nn.functional.affine_grid(theta, size, align_corners=align)
    fth = Fz(theta, True)
    f = F.affine_grid(fth, size, align_corners=align)
    close(f, t)
    th = theta.clone().requires_grad_(True)
    torch.nn.functional.affine_grid(th, size, align_corners=align).pow(
        2).sum().backward()
    f.pow(2).sum().backward()
    close(fth.grad, th.grad)
    with pytest.raises(ValueError, match="affine matrices"):
        F.affine_grid(Fz(theta[:, :1]), size)


def test_gumbel_softmax():
    fastt.manual_seed(0)
    logits = Fz(torch.randn(64, 10), True)
    y = F.gumbel_softmax(logits, tau=0.5)
    close(y.sum(-1), torch.ones(64))
    h = F.gumbel_softmax(logits, hard=True)
    assert set(np.unique(np.asarray(h.detach())).tolist()) <= {0.0, 1.0}
    close(h.sum(-1), torch.ones(64))
    (h * fastt.arange(10.0)).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0
    # the samples follow softmax(logits): frequencies of the argmax
    fastt.manual_seed(1)
    lg = Fz(torch.tensor([[0.0, 1.0, 2.0]]).expand(20000, 3))
    counts = np.bincount(np.asarray(F.gumbel_softmax(lg, hard=True)
                                    .argmax(-1)), minlength=3) / 20000
    np.testing.assert_allclose(counts, torch.softmax(
        torch.tensor([0.0, 1.0, 2.0]), 0).numpy(), atol=0.02)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_torch(batch_first, norm_first):
    torch.manual_seed(0)
    tm = torch.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2,
                              num_decoder_layers=2, dim_feedforward=32,
                              dropout=0.0, batch_first=batch_first,
                              norm_first=norm_first).double()
    fm = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2,
                        num_decoder_layers=2, dim_feedforward=32,
                        dropout=0.0, batch_first=batch_first,
                        norm_first=norm_first, dtype=fastt.float64)
    tsd = tm.state_dict()
    assert sorted(fm.state_dict()) == sorted(tsd)
    fm.load_state_dict({k: Fz(v) for k, v in tsd.items()})
    S, T, N = 7, 5, 3
    src = torch.randn((N, S, 16) if batch_first else (S, N, 16),
                      dtype=torch.float64)
    tgt = torch.randn((N, T, 16) if batch_first else (T, N, 16),
                      dtype=torch.float64)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(
        T, dtype=torch.float64)
    fmask = nn.Transformer.generate_square_subsequent_mask(
        T, dtype=fastt.float64)
    close(fmask, mask)
    pad = torch.zeros(N, S, dtype=torch.bool)
    pad[0, -2:] = True
    t = tm(src, tgt, tgt_mask=mask, src_key_padding_mask=pad,
           memory_key_padding_mask=pad)
    fs, ft = Fz(src, True), Fz(tgt)
    f = fm(fs, ft, tgt_mask=fmask, src_key_padding_mask=Fz(pad),
           memory_key_padding_mask=Fz(pad))
    close(f, t, 1e-9)
    ts = src.clone().requires_grad_(True)
    tm(ts, tgt, tgt_mask=mask).sum().backward()
    fm(fs, ft, tgt_mask=fmask).sum().backward()
    close(fs.grad, ts.grad, 1e-9)


def test_transformer_errors():
    m = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
                       num_decoder_layers=1, dim_feedforward=8)
    with pytest.raises(RuntimeError, match="batch number"):
        m(fastt.randn(3, 2, 8), fastt.randn(3, 4, 8))
    with pytest.raises(RuntimeError, match="feature number"):
        m(fastt.randn(3, 2, 8), fastt.randn(3, 2, 6))
