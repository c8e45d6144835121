"""fastt vs torch, single-threaded: cross_entropy and layer_norm forward +
backward (fastt._C underscore ops vs torch aten ops and torch autograd).
Run: PYTHONPATH=<build>/pkg python3 bench/bench_nn.py"""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
import time
import statistics
import torch
import torch.nn.functional as F
import fastt
_C = fastt._C
if hasattr(fastt, "set_num_threads"):
    fastt.set_num_threads(1)
torch.set_num_threads(1)


def bench(fn, min_time=0.02):
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > min_time:
            break
        n *= 2
    return dt / n


def compare(fns, repeats=7):
    res = {k: [] for k in fns}
    for _ in range(repeats):          # interleaved repeats, median
        for k, f in fns.items():
            res[k].append(bench(f))
    return {k: statistics.median(v) for k, v in res.items()}


for (N, C) in [(32, 10), (64, 128), (512, 512)]:
    xt = torch.randn(N, C)
    tt = torch.randint(0, C, (N,))
    one_t = torch.tensor(1.0)
    xf = fastt.tensor(xt.numpy())
    tf = fastt.tensor(tt.numpy())
    one_f = fastt.tensor(1.0)
    xg = xt.clone().requires_grad_()

    def f_ce():
        l, lse = _C._cross_entropy(xf, tf)
        return _C._cross_entropy_backward(one_f, xf, tf, None, "mean", -100,
                                          0.0, lse)

    def t_ce_aten():
        lp = torch._log_softmax(xt, 1, False)
        l, tw = torch.ops.aten.nll_loss_forward(lp, tt, None, 1, -100)
        gl = torch.ops.aten.nll_loss_backward(one_t, lp, tt, None, 1, -100,
                                              tw)
        return torch._log_softmax_backward_data(gl, lp, 1, torch.float32)

    def t_ce_autograd():
        xg.grad = None
        F.cross_entropy(xg, tt).backward()

    w_t, b_t = torch.randn(C), torch.randn(C)
    g_t = torch.randn(N, C)
    w_f, b_f, g_f = (fastt.tensor(a.numpy()) for a in (w_t, b_t, g_t))
    wg = w_t.clone().requires_grad_()
    bg = b_t.clone().requires_grad_()
    shp = (C,)

    def f_ln():
        o, m, r = _C._layer_norm(xf, shp, w_f, b_f, 1e-5)
        return _C._layer_norm_backward(g_f, xf, shp, m, r, w_f, b_f)

    def t_ln_aten():
        o, m, r = torch.ops.aten.native_layer_norm(xt, shp, w_t, b_t, 1e-5)
        return torch.ops.aten.native_layer_norm_backward(
            g_t, xt, shp, m, r, w_t, b_t, [True, True, True])

    def t_ln_autograd():
        xg.grad = wg.grad = bg.grad = None
        F.layer_norm(xg, shp, wg, bg, 1e-5).backward(g_t)

    r = compare({"f_ce": f_ce, "t_ce_aten": t_ce_aten,
                 "t_ce_ag": t_ce_autograd, "f_ln": f_ln,
                 "t_ln_aten": t_ln_aten, "t_ln_ag": t_ln_autograd})
    us = {k: v * 1e6 for k, v in r.items()}
    print(f"[{N},{C}] cross_entropy fwd+bwd: fastt {us['f_ce']:.2f} us | "
          f"torch aten {us['t_ce_aten']:.2f} us (ratio "
          f"{us['f_ce'] / us['t_ce_aten']:.2f}) | torch autograd "
          f"{us['t_ce_ag']:.2f} us (ratio {us['f_ce'] / us['t_ce_ag']:.2f})")
    print(f"[{N},{C}] layer_norm    fwd+bwd: fastt {us['f_ln']:.2f} us | "
          f"torch aten {us['t_ln_aten']:.2f} us (ratio "
          f"{us['f_ln'] / us['t_ln_aten']:.2f}) | torch autograd "
          f"{us['t_ln_ag']:.2f} us (ratio {us['f_ln'] / us['t_ln_ag']:.2f})")
