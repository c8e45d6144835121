"""nn.Conv3d / nn.ConvTranspose3d and F.conv_transpose3d against torch:
values and gradients over strides, paddings, output paddings, dilations,
groups and unbatched input; the module's output_size; 16-bit rounding
(computed in float32, rounded once, as torch); the errors."""
import pytest
import torch

import fastt
import fastt.nn.functional as F
from torch_ref import Fz, close


@pytest.mark.parametrize("kw", [
    {}, {"stride": 2}, {"stride": (1, 2, 3), "padding": (0, 1, 2)},
    {"stride": 2, "padding": 1, "output_padding": 1},
    {"dilation": (2, 1, 2), "padding": 1, "groups": 2},
    {"stride": 3, "dilation": 2, "output_padding": (0, 1, 2), "groups": 2}])
@pytest.mark.parametrize("batched", [True, False])
def test_conv_transpose3d_against_torch(kw, batched):
    g = kw.get("groups", 1)
    x = torch.randn((2, 4, 3, 4, 2) if batched else (4, 3, 4, 2),
                    dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 6 // g, 2, 3, 2, dtype=torch.float64,
                    requires_grad=True)
    b = torch.randn(6 // g * g, dtype=torch.float64, requires_grad=True)
    fx, fw, fb = Fz(x, True), Fz(w, True), Fz(b, True)
    t = torch.nn.functional.conv_transpose3d(x, w, b, **kw)
    f = F.conv_transpose3d(fx, fw, fb, **kw)
    close(f, t)
    gy = torch.randn(t.shape, dtype=torch.float64)
    t.backward(gy)
    f.backward(Fz(gy))
    for a, c in ((fx, x), (fw, w), (fb, b)):
        close(a.grad, c.grad)


def test_conv3d_and_transpose_modules():
    torch.manual_seed(0)
    tm = torch.nn.Conv3d(2, 4, 3, stride=2, padding=1, groups=2,
                         padding_mode="circular").double()
    fm = fastt.nn.Conv3d(2, 4, 3, stride=2, padding=1, groups=2,
                         padding_mode="circular", dtype=fastt.float64)
    tt = torch.nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1).double()
    ft = fastt.nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1,
                                  dtype=fastt.float64)
    with fastt.no_grad():
        for f_, t_ in ((fm, tm), (ft, tt)):
            f_.weight.copy_(Fz(t_.weight))
            f_.bias.copy_(Fz(t_.bias))
    x = torch.randn(1, 2, 5, 6, 7, dtype=torch.float64)
    y = tm(x)
    fy = fm(Fz(x))
    close(fy, y)
    # output_size picks the output padding
    close(ft(fy, output_size=(5, 6, 7)), tt(y, output_size=(5, 6, 7)))
    assert repr(fm).startswith("Conv3d(2, 4, kernel_size=(3, 3, 3)")
    assert "ConvTranspose3d" in repr(ft)


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16])
def test_conv_transpose3d_16bit_rounds_once(dt):
    x = torch.randn(1, 2, 3, 3, 3).to(dt)
    w = torch.randn(2, 3, 2, 2, 2).to(dt)
    b = torch.randn(3).to(dt)
    # float32 arithmetic rounded once to dt (torch's CPU kernel agrees on
    # some machines; on others, e.g. oneDNN's AVX512-FP16 / AMX paths, it
    # accumulates in dt and lands ulps away, so it is only a tolerance
    # reference)
    ref = torch.nn.functional.conv_transpose3d(
        x.float(), w.float(), b.float(), stride=2).to(dt)
    f = F.conv_transpose3d(Fz(x), Fz(w), Fz(b), stride=2)
    assert torch.equal(torch.from_dlpack(f), ref)
    t = torch.nn.functional.conv_transpose3d(x, w, b, stride=2)
    torch.testing.assert_close(torch.from_dlpack(f), t, rtol=2e-2,
                               atol=2e-2)


def test_conv_transpose3d_errors():
    x, w = fastt.ones(1, 4, 2, 2, 2), fastt.ones(4, 2, 2, 2, 2)
    for call, err in (
            (lambda: F.conv_transpose3d(fastt.ones(4, 2, 2), w), "input"),
            (lambda: F.conv_transpose3d(x, fastt.ones(4, 2, 2, 2)), "weight"),
            (lambda: F.conv_transpose3d(x, w, stride=0), "stride"),
            (lambda: F.conv_transpose3d(x, w, output_padding=1), "output"),
            (lambda: F.conv_transpose3d(fastt.ones(1, 3, 2, 2, 2), w),
             "channels"),
            (lambda: F.conv_transpose3d(x, w, groups=3), "channels")):
        with pytest.raises(RuntimeError, match=err):
            call()
