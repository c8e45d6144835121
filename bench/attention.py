"""Scaled-dot-product attention on the CPU (issue 16, item 3): fastt's fused
kernel (kernels/cpu/attention.cpp), fastt's composed path (matmul,
softmax, matmul: what ran before, and still runs on CUDA) and torch's CPU
flash attention, forward and forward + backward, float32, batch 1 x 8
heads x head dim 64, causal, L = 16 ... 2048, one thread, medians of
interleaved repeats (bench.common.interleaved).

    python -m bench.attention [--quick]

Writes bench/results/attention.md and .json.
"""
import math
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

H, E = 8, 64


def _composed(fastt, q, k, v):
    L = q.size(-2)
    s = q.matmul(k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
    mask = fastt.ones((L, L), dtype=fastt.bool).triu(1)
    return fastt.softmax(s.masked_fill(mask, -math.inf), -1).matmul(v)


def run(quick=False):
    import numpy as np
    import torch

    import fastt
    fastt.set_num_threads(1)
    torch.set_num_threads(1)
    lengths = (16, 128, 512) if quick else (16, 64, 256, 1024, 2048)
    repeats = 3 if quick else 7
    res = {}
    for L in lengths:
        target = 0.01 if L <= 256 else 0.1
        rng = np.random.default_rng(L)
        x = [rng.standard_normal((1, H, L, E)).astype(np.float32)
             for _ in range(3)]
        g = rng.standard_normal((1, H, L, E)).astype(np.float32)
        fx = [fastt.from_numpy(a) for a in x]
        tx = [torch.from_numpy(a) for a in x]
        fg, tg = fastt.from_numpy(g), torch.from_numpy(g)
        fsdpa = fastt.nn.functional.scaled_dot_product_attention
        tsdpa = torch.nn.functional.scaled_dot_product_attention

        def train(lib, fn, xs, gr):
            ys = [a.detach().requires_grad_() for a in xs]
            fn(*ys).backward(gr)

        def f_fused(*a):
            return fsdpa(*a, is_causal=True)

        def f_comp(*a):
            return _composed(fastt, *a)

        def t_sdpa(*a):
            return tsdpa(*a, is_causal=True)
        samplers = {
            "fastt fwd": common.loop_sampler(lambda: f_fused(*fx)),
            "composed fwd": common.loop_sampler(lambda: f_comp(*fx)),
            "torch fwd": common.loop_sampler(lambda: t_sdpa(*tx)),
            "fastt train": common.loop_sampler(
                lambda: train(fastt, f_fused, fx, fg)),
            "composed train": common.loop_sampler(
                lambda: train(fastt, f_comp, fx, fg)),
            "torch train": common.loop_sampler(
                lambda: train(torch, t_sdpa, tx, tg)),
        }
        st = common.interleaved(samplers, repeats, target)
        res[L] = {k: v["median"] * 1e6 for k, v in st.items()}
        common.log(f"attention: L={L} done")
    return {"us": res, "others_busy": common.others_busy()}


def markdown(res):
    lines = [f"Causal scaled-dot-product attention, float32, 1 x {H} heads "
             f"x head dim {E}, one thread, µs per call (median of "
             "interleaved repeats). `composed`: fastt's matmul + softmax + "
             "matmul path (the [L, L] scores materialized).", "",
             "| L | fastt fwd | composed fwd | torch fwd | fastt/torch | "
             "fastt fwd+bwd | composed fwd+bwd | torch fwd+bwd | "
             "fastt/torch |", "|---|---|---|---|---|---|---|---|---|"]
    for L, d in res["us"].items():
        lines.append(
            f"| {L} | {d['fastt fwd']:.1f} | {d['composed fwd']:.1f} | "
            f"{d['torch fwd']:.1f} | {d['fastt fwd'] / d['torch fwd']:.2f} | "
            f"{d['fastt train']:.1f} | {d['composed train']:.1f} | "
            f"{d['torch train']:.1f} | "
            f"{d['fastt train'] / d['torch train']:.2f} |")
    if common.busy_note(res):
        lines.append(common.busy_note(res))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(common.standalone_main("attention", run, markdown))
