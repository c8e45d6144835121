"""fastt.utils.checkpoint: gradients identical to the plain run (dropout
replayed through the saved random state), torch's errors and warnings, the
peak memory drop measured with the CPU allocator's statistics, and
checkpoint_sequential against torch's on the same weights."""
import pytest
import torch
import torch.utils.checkpoint as tcp

import fastt
import fastt.nn as nn
from fastt.utils.checkpoint import (CheckpointError, checkpoint,
                                    checkpoint_sequential)
from torch_ref import Fz, close

MODES = [True, False]


def mlp(depth=6, width=32, dropout=0.0, act=nn.Tanh):
    fastt.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), act()]
        if dropout:
            layers.append(nn.Dropout(dropout))
    return nn.Sequential(*layers)


def grads(m, x, fn):
    m.zero_grad()
    x.grad = None
    fastt.manual_seed(7)
    y = fn()
    (y * y).sum().backward()
    return [y.detach().clone(), x.grad.clone()] + [
        p.grad.clone() for p in m.parameters()]


@pytest.mark.parametrize("use_reentrant", MODES)
def test_gradients_equal_the_plain_run_with_dropout(use_reentrant):
    m = mlp(dropout=0.3)
    x = fastt.randn(8, 32, requires_grad=True)
    ref = grads(m, x, lambda: m(x))
    got = grads(m, x, lambda: checkpoint(m, x, use_reentrant=use_reentrant))
    for a, b in zip(got, ref):
        assert bool((a == b).all())


@pytest.mark.parametrize("use_reentrant", MODES)
def test_without_preserve_rng_state_the_mask_is_not_replayed(use_reentrant):
    m = mlp(dropout=0.5)
    x = fastt.randn(8, 32, requires_grad=True)
    ref = grads(m, x, lambda: m(x))
    got = grads(m, x, lambda: checkpoint(m, x, use_reentrant=use_reentrant,
                                         preserve_rng_state=False))
    assert bool((got[0] == ref[0]).all())  # the forward is the same run
    assert not bool((got[1] == ref[1]).all())


@pytest.mark.parametrize("use_reentrant", MODES)
def test_peak_memory_drops(use_reentrant):
    width, depth = 256, 24
    m = mlp(depth=depth, width=width, act=nn.GELU)
    x = fastt.randn(256, width, requires_grad=True)

    def peak(fn):
        # The .grad tensors exist before the measurement (a warm-up pass)
        # and are accumulated into: the peak is the activations' and the
        # backward's temporaries.
        m.zero_grad(set_to_none=False)
        x.grad = None
        base = fastt._C._memory_stats()["allocated_bytes"]
        fastt._C._reset_peak_memory_stats()
        fn().sum().backward()
        return fastt._C._memory_stats()["peak_allocated_bytes"] - base

    peak(lambda: m(x))
    plain = peak(lambda: m(x))
    ckpt = peak(lambda: checkpoint_sequential(m, 6, x,
                                              use_reentrant=use_reentrant))
    # Without checkpointing, 2 * 24 saved activations (each Linear's input
    # and each GELU's); with 6 segments, the 5 segment outputs, the last
    # segment's 8 and one recomputed segment's 8 at a time: 21 of 48.
    assert ckpt < 0.6 * plain, (ckpt, plain)


def test_checkpoint_sequential_matches_torch():
    tm = torch.nn.Sequential(*[torch.nn.Linear(6, 6, dtype=torch.float64)
                               if i % 2 == 0 else torch.nn.GELU()
                               for i in range(8)])
    fm = nn.Sequential(*[nn.Linear(6, 6, dtype=fastt.float64)
                         if i % 2 == 0 else nn.GELU() for i in range(8)])
    fm.load_state_dict({k: Fz(v) for k, v in tm.state_dict().items()})
    xt = torch.randn(5, 6, dtype=torch.float64, requires_grad=True)
    xf = Fz(xt, grad=True)
    for ur in MODES:
        tm.zero_grad()
        fm.zero_grad()
        xt.grad = None
        xf.grad = None
        yt = tcp.checkpoint_sequential(tm, 3, xt, use_reentrant=ur)
        yf = checkpoint_sequential(fm, 3, xf, use_reentrant=ur)
        yt.pow(2).sum().backward()
        yf.pow(2).sum().backward()
        close(yf, yt)
        close(xf.grad, xt.grad)
        for pf, pt in zip(fm.parameters(), tm.parameters()):
            close(pf.grad, pt.grad)


def test_reentrant_refuses_autograd_grad_non_reentrant_allows_it():
    m = mlp()
    x = fastt.randn(4, 32, requires_grad=True)
    y = checkpoint(m, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="incompatible with .grad()"):
        fastt.autograd.grad(y.sum(), x)
    y = checkpoint(m, x, use_reentrant=False)
    g, = fastt.autograd.grad(y.sum(), x)
    g_ref, = fastt.autograd.grad(m(x).sum(), x)
    assert bool((g == g_ref).all())


def test_keyword_arguments_and_inputs_without_grad():
    m = mlp()
    x = fastt.randn(4, 32)  # does not require grad: params still get grads

    def f(inp, *, scale):
        return m(inp) * scale

    y = checkpoint(f, x, scale=2.0, use_reentrant=False)
    y.sum().backward()
    w = m[0].weight.grad.clone()
    m.zero_grad()
    f(x, scale=2.0).sum().backward()
    assert bool((w == m[0].weight.grad).all())
    with pytest.raises(ValueError, match="Unexpected keyword arguments: "
                                         "scale"):
        checkpoint(f, x, scale=2.0, use_reentrant=True)


def test_warnings_like_torch():
    m = mlp()
    x = fastt.randn(4, 32, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be "
                                         "passed explicitly"):
        checkpoint(m, x)
    with pytest.warns(UserWarning, match="None of the inputs have "
                                         "requires_grad=True"):
        checkpoint(m, x.detach(), use_reentrant=True)
    with pytest.raises(ValueError, match="context_fn"):
        checkpoint(m, x, use_reentrant=True, debug=True)


def test_recomputation_that_differs_is_an_error():
    calls = [0]

    def f(x):
        calls[0] += 1
        n = 3 if calls[0] == 1 else 2
        return (x[:n] * x[:n]).sum()

    x = fastt.randn(4, requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata"):
        y.backward()
    calls[0] = 0
    y = checkpoint(f, x, use_reentrant=False, determinism_check="none")
    with pytest.raises(RuntimeError):
        y.backward()  # shapes no longer fit the graph
