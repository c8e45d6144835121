"""float32 CPU convolutions through oneDNN (kernels/cpu/onednn_conv.cpp):
forward, input and weight gradients against torch and against fastt's own
im2col path (fastt.backends.mkldnn.enabled = False), over the geometry a
convolution can have: groups, stride, dilation, padding (asymmetric 'same'
included), 1-D, no bias, strided inputs, shapes on both sides of the size
threshold, and the cached primitives reused across calls and threads."""
import os
import threading

import pytest
import torch

import fastt
import fastt.nn.functional as F


def test_built_with_onednn_on_x86():
    if os.uname().machine != "x86_64":
        pytest.skip("oneDNN is a dependency on x86-64 builds only")
    assert fastt.backends.mkldnn.is_available()
    assert fastt.backends.mkldnn.enabled


def test_switch_and_flags():
    m = fastt.backends.mkldnn
    assert m.enabled
    with m.flags(enabled=False):
        assert not m.enabled
    assert m.enabled
    m.enabled = False
    try:
        assert not m.enabled
    finally:
        m.enabled = True


CASES = [
    # N, C, O, H, W, k, stride, padding, dilation, groups, bias
    (64, 16, 32, 8, 8, 3, 1, 1, 1, 1, True),      # the digits CNN's
    (64, 1, 16, 8, 8, 3, 1, 1, 1, 1, True),       # one input channel
    (8, 16, 24, 13, 11, 3, 2, 1, 1, 1, False),    # odd sizes, stride
    (8, 12, 24, 12, 12, 3, 1, 2, 2, 1, True),     # dilation
    (8, 16, 32, 10, 10, 3, 1, 1, 1, 4, True),     # groups
    (8, 16, 16, 10, 10, 3, 1, 1, 1, 16, True),    # depthwise
    (8, 16, 32, 9, 9, (2, 4), 1, "same", 1, 1, True),  # asymmetric pads
    (8, 16, 32, 12, 12, 1, 1, 0, 1, 1, True),     # pointwise
    (4, 32, 32, 16, 16, 5, 2, 0, 1, 1, True),     # no padding, stride 2
    (1, 3, 8, 4, 4, 3, 1, 1, 1, 1, True),         # under the threshold
]


def _run(lib, x, w, b, stride, padding, dilation, groups, g):
    x = x.clone().requires_grad_()
    w = w.clone().requires_grad_()
    b = b.clone().requires_grad_() if b is not None else None
    y = lib.nn.functional.conv2d(x, w, b, stride, padding, dilation, groups)
    y.backward(g)
    return [y, x.grad, w.grad] + ([b.grad] if b is not None else [])


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_matches_torch_and_im2col(case):
    N, C, O, H, W, k, s, p, d, G, bias = case
    gen = torch.Generator().manual_seed(0)
    kh, kw = (k, k) if isinstance(k, int) else k
    x = torch.randn(N, C, H, W, generator=gen)
    w = torch.randn(O, C // G, kh, kw, generator=gen)
    b = torch.randn(O, generator=gen) if bias else None
    shape = torch.nn.functional.conv2d(x, w, b, s, p, d, G).shape
    g = torch.randn(shape, generator=gen)
    want = _run(torch, x, w, b, s, p, d, G, g)

    def fz(t):
        return None if t is None else fastt.from_dlpack(t.clone())
    got = _run(fastt, fz(x), fz(w), fz(b), s, p, d, G, fz(g))
    with fastt.backends.mkldnn.flags(enabled=False):
        own = _run(fastt, fz(x), fz(w), fz(b), s, p, d, G, fz(g))
    for a, o, t in zip(got, own, want):
        a, o = torch.from_dlpack(a), torch.from_dlpack(o)
        tol = dict(rtol=1e-4, atol=1e-4 * float(t.abs().max()) + 1e-6)
        torch.testing.assert_close(a, t, **tol)
        torch.testing.assert_close(a, o, **tol)


def test_conv1d_and_strided_inputs():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(32, 16, 64, generator=gen)
    w = torch.randn(32, 16, 5, generator=gen)
    fx, fw = fastt.from_dlpack(x.clone()), fastt.from_dlpack(w.clone())
    torch.testing.assert_close(
        torch.from_dlpack(F.conv1d(fx, fw, padding=2)),
        torch.nn.functional.conv1d(x, w, padding=2), rtol=1e-4, atol=1e-3)
    # a channels-last tensor (not contiguous in NCHW)
    x4 = torch.randn(16, 8, 8, 16, generator=gen).permute(0, 3, 1, 2)
    w4 = torch.randn(32, 16, 3, 3, generator=gen)
    fx4 = fastt.from_dlpack(x4.permute(0, 2, 3, 1).contiguous()).permute(
        0, 3, 1, 2)
    assert not fx4.is_contiguous()
    torch.testing.assert_close(
        torch.from_dlpack(F.conv2d(fx4, fastt.from_dlpack(w4.clone()),
                                   padding=1)),
        torch.nn.functional.conv2d(x4, w4, padding=1), rtol=1e-4, atol=1e-3)


def test_conv_transpose_keeps_its_bias():
    # conv_transpose2d's forward is the input gradient plus a bias on the
    # input side: not oneDNN's hook, and still right
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(16, 32, 8, 8, generator=gen)
    w = torch.randn(32, 16, 3, 3, generator=gen)
    b = torch.randn(16, generator=gen)
    got = F.conv_transpose2d(*(fastt.from_dlpack(t.clone())
                               for t in (x, w, b)), stride=2, padding=1)
    torch.testing.assert_close(
        torch.from_dlpack(got),
        torch.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1),
        rtol=1e-4, atol=1e-3)


def test_cached_primitives_from_many_threads():
    gen = torch.Generator().manual_seed(3)
    shapes = [(16, 16, 32, 8), (8, 16, 16, 12), (16, 8, 32, 6)]
    data = []
    for N, C, O, H in shapes:
        x = torch.randn(N, C, H, H, generator=gen)
        w = torch.randn(O, C, 3, 3, generator=gen)
        data.append((fastt.from_dlpack(x.clone()),
                     fastt.from_dlpack(w.clone()),
                     torch.nn.functional.conv2d(x, w, padding=1)))
    errors = []

    def work(i):
        try:
            for r in range(20):
                fx, fw, want = data[(i + r) % len(data)]
                torch.testing.assert_close(
                    torch.from_dlpack(F.conv2d(fx, fw, padding=1)), want,
                    rtol=1e-4, atol=1e-3)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[0]


def test_training_step_uses_fewer_kernels_with_onednn():
    # the path is really taken: no im2col / col2im kernel runs in a step
    # of a CNN whose convolutions are all above the size threshold
    import fastt.profiler as profiler
    net = fastt.nn.Sequential(fastt.nn.Conv2d(16, 32, 3, padding=1),
                              fastt.nn.ReLU(),
                              fastt.nn.Conv2d(32, 32, 3, padding=1))
    x = fastt.randn(64, 16, 8, 8).requires_grad_()
    with profiler.profile() as prof:
        net(x).sum().backward()
    names = {e.key for e in prof.key_averages()}
    assert "im2col" not in names and "col2im" not in names, names
    with fastt.backends.mkldnn.flags(enabled=False):
        with profiler.profile() as prof:
            net(x).sum().backward()
    assert "im2col" in {e.key for e in prof.key_averages()}
