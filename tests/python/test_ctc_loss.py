"""F.ctc_loss / nn.CTCLoss against torch: padded and concatenated targets,
unbatched input, uneven input and target lengths, empty targets, repeated
labels (which need a blank between them), impossible alignments (inf, and
zero_infinity), every reduction; gradients through log_softmax and w.r.t.
raw log_probs (torch's convention); the errors."""
import pytest
import torch

import fastt
import fastt.nn.functional as F
from torch_ref import Fz, close


def case(T=12, N=4, C=6, S=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(T, N, C, dtype=torch.float64, generator=g)
    tg = torch.randint(1, C, (N, S), generator=g)
    tg[0, 1] = tg[0, 0]  # a repeat
    il = torch.tensor([T, T - 3, T, 5])[:N]
    tl = torch.tensor([S, 3, 0, 2])[:N]
    return x, tg, il, tl


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("concat", [False, True])
def test_ctc_through_log_softmax(reduction, concat):
    x, tg, il, tl = case()
    if concat:
        tg = torch.cat([tg[n, :tl[n]] for n in range(len(tl))])
    xt = x.clone().requires_grad_(True)
    fx = Fz(x, True)
    t = torch.nn.functional.ctc_loss(xt.log_softmax(2), tg, il, tl,
                                     reduction=reduction)
    f = F.ctc_loss(fx.log_softmax(2), Fz(tg), Fz(il), Fz(tl),
                   reduction=reduction)
    close(f, t)
    t.sum().backward()
    f.sum().backward()
    close(fx.grad, xt.grad)


def test_ctc_raw_log_probs_gradient_and_lists():
    x, tg, il, tl = case(seed=3)
    lp = x.log_softmax(2).requires_grad_(True)
    flp = Fz(lp, True)
    t = torch.nn.functional.ctc_loss(lp, tg, il.tolist(), tl.tolist(),
                                     blank=0, reduction="sum")
    f = F.ctc_loss(flp, Fz(tg), il.tolist(), tl.tolist(), reduction="sum")
    close(f, t)
    t.backward()
    f.backward()
    close(flp.grad, lp.grad)  # torch's exp(log_probs) convention included


@pytest.mark.parametrize("zero_inf", [False, True])
def test_ctc_impossible_alignment(zero_inf):
    # target of 4 with a repeat needs 5 frames; only 3 given
    lp = torch.randn(3, 1, 4, dtype=torch.float64).log_softmax(2)
    lp.requires_grad_(True)
    flp = Fz(lp, True)
    tg = torch.tensor([[1, 1, 2, 3]])
    args = (torch.tensor([3]), torch.tensor([4]))
    t = torch.nn.functional.ctc_loss(lp, tg, *args, reduction="sum",
                                     zero_infinity=zero_inf)
    f = F.ctc_loss(flp, Fz(tg), *[Fz(a) for a in args], reduction="sum",
                   zero_infinity=zero_inf)
    close(f, t)
    if zero_inf:
        t.backward()
        f.backward()
        close(flp.grad, lp.grad)


def test_ctc_unbatched_and_module():
    x, tg, il, tl = case(N=1)
    lp = x[:, 0].log_softmax(1)
    t = torch.nn.CTCLoss(blank=0)(lp, tg[0], il, tl)
    f = fastt.nn.CTCLoss(blank=0)(Fz(lp), Fz(tg[0]), Fz(il), Fz(tl))
    close(f, t)
    # another blank index
    t = torch.nn.functional.ctc_loss(lp, tg[0] - 1, il, tl, blank=5)
    f = F.ctc_loss(Fz(lp), Fz(tg[0] - 1), Fz(il), Fz(tl), blank=5)
    close(f, t)


def test_ctc_errors():
    lp = fastt.zeros(5, 2, 4)
    tg = fastt.ones(2, 3, dtype=fastt.int64)
    for call in (lambda: F.ctc_loss(lp, tg, [6, 5], [3, 3]),
                 lambda: F.ctc_loss(lp, tg, [5], [3, 3]),
                 lambda: F.ctc_loss(lp, tg, [5, 5], [4, 3]),
                 lambda: F.ctc_loss(lp, tg, [5, 5], [3, 3], blank=4),
                 lambda: F.ctc_loss(fastt.zeros(5, 2, 4, 1), tg, [5, 5],
                                    [3, 3])):
        with pytest.raises(RuntimeError):
            call()
    with pytest.raises(ValueError):
        F.ctc_loss(lp, tg, [5, 5], [3, 3], reduction="avg")
