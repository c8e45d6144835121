"""float16 and bfloat16 ops (the dtypes autocast and mixed-precision
training run in), fastt against torch at 64K and 1M elements, one thread,
medians of interleaved repeats (bench.common.interleaved). The 16-bit
floats run through float32 in registers or in blocks
(kernels/cpu/half_block.h); where a kernel converted element by element
(Half's portable conversion, BFloat16's bit copies) it ran 2-16x torch's
time, which the float32 size sweep does not show.

    python -m bench.half [--quick]

Writes bench/results/half.md and .json.
"""
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

SIZES = (1 << 16, 1 << 20)
ROW = 256  # row length of the row-wise ops


def ops(lib, F):
    """(name, function of (x, y)) for lib's tensors; F: lib.nn.functional."""
    return [
        ("add", lambda x, y: x + y), ("mul", lambda x, y: x * y),
        ("relu", lambda x, y: x.relu()), ("exp", lambda x, y: x.exp()),
        ("tanh", lambda x, y: x.tanh()), ("gelu", lambda x, y: F.gelu(x)),
        ("silu", lambda x, y: F.silu(x)),
        ("to float32", lambda x, y: x.float()),
        ("sum", lambda x, y: x.sum()),
        ("sum(-1)", lambda x, y: x.view(-1, ROW).sum(-1)),
        ("sum(0)", lambda x, y: x.view(-1, ROW).sum(0)),
        ("amax(-1)", lambda x, y: x.view(-1, ROW).amax(-1)),
        ("softmax(-1)", lambda x, y: x.view(-1, ROW).softmax(-1)),
        ("log_softmax(-1)", lambda x, y: x.view(-1, ROW).log_softmax(-1)),
        ("layer_norm", lambda x, y: F.layer_norm(x.view(-1, ROW), (ROW,))),
    ]


def run(quick=False):
    import numpy as np
    import torch

    import fastt
    repeats, target = common.single_thread(quick)
    res = {}
    for dt in ("float16", "bfloat16"):
        for n in SIZES:
            rng = np.random.default_rng(n)
            a = rng.standard_normal(n).astype(np.float32)
            b = rng.standard_normal(n).astype(np.float32)
            args = {
                "fastt": [fastt.from_numpy(v.copy()).to(getattr(fastt, dt))
                          for v in (a, b)],
                "torch": [torch.from_numpy(v.copy()).to(getattr(torch, dt))
                          for v in (a, b)]}
            fns = {"fastt": ops("fastt", fastt.nn.functional),
                   "torch": ops("torch", torch.nn.functional)}
            for name, d in common.time_ops(fns, args, repeats,
                                           target).items():
                res[f"{name}/{dt}/{n}"] = d
            common.log(f"half: {dt} {n} done")
    return {"isa": fastt._C._cpu_isa()["in_use"], "us": res,
            "others_busy": common.others_busy()}


def markdown(res):
    return common.ratio_table(
        res, f"float16 / bfloat16 ops, one thread, µs per call (median of "
        f"interleaved repeats); row-wise ops over rows of {ROW}; fastt's "
        f"kernels at {res['isa']}.")


if __name__ == "__main__":
    sys.exit(common.standalone_main("half", run, markdown))
