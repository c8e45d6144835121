"""bfloat16 matrix products (issue 16, item 4): fastt through oneDNN's
matmul (kernels/cpu/onednn_matmul.cpp), fastt's own path (both operands
converted to float32 for sgemm; fastt.backends.mkldnn disabled), and torch,
one thread, medians of interleaved repeats (bench.common.interleaved).

    python -m bench.bf16_gemm [--quick]

Writes bench/results/bf16_gemm.md and .json.
"""
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

# (batch or None, M, K, N): around oneDNN's threshold (2^18 multiply-adds),
# square sizes, a Linear-shaped product and batches of attention tiles.
SHAPES = [(None, 32, 64, 64), (None, 64, 64, 64), (None, 64, 128, 64),
          (None, 128, 128, 128), (None, 256, 256, 256),
          (None, 512, 512, 512), (None, 1024, 128, 512),
          (64, 64, 64, 64), (2048, 16, 16, 16), (256, 64, 16, 64)]


def run(quick=False):
    import numpy as np
    import torch

    import fastt
    repeats, target = common.single_thread(quick)
    res = {}
    rng = np.random.default_rng(0)
    for batch, M, K, N in SHAPES:
        lead = () if batch is None else (batch,)
        a = rng.standard_normal(lead + (M, K)).astype(np.float32)
        b = rng.standard_normal(lead + (K, N)).astype(np.float32)
        fa, fb = (fastt.from_numpy(v).bfloat16() for v in (a, b))
        ta, tb = (torch.from_numpy(v).bfloat16() for v in (a, b))

        # Both under the same context manager, so its cost cancels.
        def own():
            with fastt.backends.mkldnn.flags(enabled=False):
                fastt.matmul(fa, fb)

        def dnnl():
            with fastt.backends.mkldnn.flags(enabled=True):
                fastt.matmul(fa, fb)
        samplers = {
            "fastt": common.loop_sampler(dnnl),
            "fastt_own": common.loop_sampler(own),
            "torch": common.loop_sampler(lambda: torch.matmul(ta, tb))}
        st = common.interleaved(samplers, repeats, target)
        key = ("" if batch is None else f"{batch}x") + f"{M}x{K}x{N}"
        res[key] = {lib: st[lib]["median"] * 1e6 for lib in st}
        common.log(f"bf16_gemm: {key} done")
    return {"us": res, "others_busy": common.others_busy()}


def markdown(res):
    lines = ["bfloat16 matmul, one thread, µs per call (median of "
             "interleaved repeats). `fastt own`: oneDNN disabled, both "
             "operands converted to float32 for OpenBLAS's sgemm.", "",
             "| shape (batch x M x K x N) | fastt | fastt own | torch | "
             "fastt/torch | own/torch |", "|---|---|---|---|---|---|"]
    for key, d in res["us"].items():
        lines.append(f"| {key} | {d['fastt']:.1f} | {d['fastt_own']:.1f} | "
                     f"{d['torch']:.1f} | {d['fastt'] / d['torch']:.2f} | "
                     f"{d['fastt_own'] / d['torch']:.2f} |")
    if common.busy_note(res):
        lines.append(common.busy_note(res))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(common.standalone_main("bf16_gemm", run, markdown))
