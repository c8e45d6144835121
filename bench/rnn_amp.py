"""Issue 17's figures, fastt vs torch in one run (1 thread, medians over
interleaved repeats, ratios fastt/torch: < 1 means fastt is faster):

- a training step (forward, backward, SGD step) of nn.LSTM and nn.GRU
  (input 64, hidden 128, 32 steps) at batch 1, 32 and 256;
- the float32 activations with vectorized kernels (tanh, erf, GELU in both
  forms and GELU's gradient) at 256K elements;
- a custom autograd.Function call (recorded) against the same op inline;
- bfloat16 against float32 GEMM (fastt's own ratio; OpenBLAS in Debian has
  no bf16 GEMM, so bf16 converts around sgemm).

    python -m bench.rnn_amp [--quick]
"""

import argparse
import statistics
import sys
import time
import timeit
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

common.pin_environment()

import fastt  # noqa: E402
import torch  # noqa: E402


def interleave(fns, rounds, number):
    """Median seconds per call of each fn, measured round-robin."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            times[i].append(min(timeit.repeat(fn, number=number, repeat=3))
                            / number)
    return [statistics.median(t) for t in times]


def rnn_step(L, cls, B, T=32, I=64, H=128):
    m = getattr(L.nn, cls)(I, H)
    x = L.randn(T, B, I)
    opt = L.optim.SGD(m.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        y, _ = m(x)
        y.sum().backward()
        opt.step()
    for _ in range(2):
        step()
    return step


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    fastt.set_num_threads(1)
    torch.set_num_threads(1)
    rounds = 3 if args.quick else 7
    print("| layer | batch | fastt ms | torch ms | fastt/torch |")
    print("|---|---|---|---|---|")
    for cls in ("LSTM", "GRU"):
        for B in (1, 32, 256):
            f, t = interleave([rnn_step(fastt, cls, B),
                               rnn_step(torch, cls, B)], rounds,
                              1 if B == 256 else 3)
            print(f"| {cls} | {B} | {f * 1e3:.2f} | {t * 1e3:.2f} | "
                  f"{f / t:.2f} |")
    n = 262144
    xf, xt = fastt.randn(n), torch.randn(n)
    acts = [
        ("tanh", lambda: xf.tanh(), lambda: xt.tanh()),
        ("erf", lambda: xf.erf(), lambda: xt.erf()),
        ("gelu", lambda: fastt.nn.functional.gelu(xf),
         lambda: torch.nn.functional.gelu(xt)),
        ("gelu(tanh)", lambda: fastt.nn.functional.gelu(xf, approximate="tanh"),
         lambda: torch.nn.functional.gelu(xt, approximate="tanh")),
    ]
    for approx in ("none", "tanh"):
        a = fastt.randn(n, requires_grad=True)
        b = torch.randn(n, requires_grad=True)
        ya = fastt.nn.functional.gelu(a, approximate=approx)
        yb = torch.nn.functional.gelu(b, approximate=approx)
        ga, gb = fastt.randn(n), torch.randn(n)
        acts.append((f"gelu backward ({approx})",
                     lambda ya=ya, a=a, ga=ga: fastt.autograd.grad(
                         ya, a, ga, retain_graph=True),
                     lambda yb=yb, b=b, gb=gb: torch.autograd.grad(
                         yb, b, gb, retain_graph=True)))
    print("\n| float32 op, 256K | fastt us | torch us | fastt/torch |")
    print("|---|---|---|---|")
    for name, ff, tf in acts:
        f, t = interleave([ff, tf], rounds, 10)
        print(f"| {name} | {f * 1e6:.1f} | {t * 1e6:.1f} | {f / t:.2f} |")

    def mk(L):
        class Mul2(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return Mul2
    xs = [L.ones(16, requires_grad=True) for L in (fastt, torch)]
    fns = [lambda F=mk(fastt): F.apply(xs[0]), lambda F=mk(torch): F.apply(xs[1]),
           lambda: xs[0] * 2, lambda: xs[1] * 2]
    fa, ta, fi, ti = interleave(fns, rounds, 5000)
    print("\n| recorded call | fastt ns | torch ns |")
    print("|---|---|---|")
    print(f"| Function.apply (x * 2 inside) | {fa * 1e9:.0f} | {ta * 1e9:.0f} |")
    print(f"| x * 2 | {fi * 1e9:.0f} | {ti * 1e9:.0f} |")
    print("\n| GEMM n x n | fastt f32 ms | fastt bf16 ms | bf16/f32 |")
    print("|---|---|---|---|")
    for n2 in (256, 512):
        a, b = fastt.randn(n2, n2), fastt.randn(n2, n2)
        ab, bb = a.bfloat16(), b.bfloat16()
        f32, f16 = interleave([lambda: a @ b, lambda: ab @ bb], rounds, 3)
        print(f"| {n2} | {f32 * 1e3:.3f} | {f16 * 1e3:.3f} | {f16 / f32:.2f} |")


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"\n({time.time() - t0:.0f} s)")
