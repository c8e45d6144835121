"""Reductions over the last dim of float32 matrices of 256K elements, row
lengths from 8 to 16K, then over the first dim (columns: a bias
gradient's sum(0)) for widths 8 to 4096, and float16 sums both ways:
fastt, torch and NumPy side by side, one thread, medians of interleaved
repeats (bench.common.interleaved). Short rows are where the per-row setup
and fold of a reduction decide (kernels/cpu/reduce_spans.h: sum_rows,
extreme_rows, lse_rows, sum_cols).

    python -m bench.reductions [--quick]

Writes bench/results/reductions.md and .json.
"""
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

ROWS = (8, 16, 33, 64, 128, 256, 257, 1024, 4096, 16384)
COLS = (8, 64, 100, 512, 4096)
TOTAL = 1 << 18


def col_ops(lib):
    """(name, function) reducing dim 0 (NumPy's max for amax)."""
    amax = (lambda x: x.max(0)) if lib == "numpy" else (lambda x: x.amax(0))
    return [("sum(0)", lambda x: x.sum(0)), ("mean(0)", lambda x: x.mean(0)),
            ("amax(0)", amax)]


def half_ops(lib):
    """float16 sums over the last and the first dim."""
    return [("f16 sum", lambda x: x.sum(-1)), ("f16 sum(0)", lambda x: x.sum(0))]


def ops(lib):
    """(name, function of a 2-D tensor or array) reducing its last dim."""
    if lib == "numpy":
        import numpy as np
        return [("sum", lambda x: x.sum(-1)), ("mean", lambda x: x.mean(-1)),
                ("amax", lambda x: x.max(-1)),
                ("max+indices", lambda x: (x.max(-1), x.argmax(-1))),
                ("logsumexp", None), ("argmax", lambda x: np.argmax(x, -1))]
    return [("sum", lambda x: x.sum(-1)), ("mean", lambda x: x.mean(-1)),
            ("amax", lambda x: x.amax(-1)),
            ("max+indices", lambda x: x.max(-1)),
            ("logsumexp", lambda x: x.logsumexp(-1)),
            ("argmax", lambda x: x.argmax(-1))]


def run(quick=False):
    import numpy as np
    import torch

    import fastt
    repeats, target = common.single_thread(quick)
    libs = ("fastt", "torch", "numpy")
    res = {}

    def measure(table, args, n):
        """Times each op of table(lib) on args[lib], interleaved."""
        for name, d in common.time_ops(
                {lib: table(lib) for lib in libs},
                {lib: (args[lib],) for lib in libs}, repeats, target).items():
            res[f"{name}/{n}"] = d

    for n in ROWS:
        a = np.random.default_rng(n).standard_normal(
            (TOTAL // n, n)).astype(np.float32)
        args = {"fastt": fastt.from_numpy(a.copy()),
                "torch": torch.from_numpy(a.copy()), "numpy": a.copy()}
        measure(ops, args, n)
        common.log(f"reductions: rows of {n} done")
    for n in COLS:
        a = np.random.default_rng(n).standard_normal(
            (TOTAL // n, n)).astype(np.float32)
        h = a.astype(np.float16)
        measure(col_ops, {"fastt": fastt.from_numpy(a.copy()),
                          "torch": torch.from_numpy(a.copy()),
                          "numpy": a.copy()}, n)
        measure(half_ops, {"fastt": fastt.from_numpy(a.copy()).to(fastt.float16),
                           "torch": torch.from_numpy(h.copy()),
                           "numpy": h.copy()}, n)
        common.log(f"reductions: width {n} done")
    return {"isa": fastt._C._cpu_isa()["in_use"], "us": res,
            "others_busy": common.others_busy()}


def markdown(res):
    lines = [f"Reductions of float32 [{TOTAL} / n, n] (float16 where "
             f"named) over the last dim, or the first where the op says "
             f"(0), one thread, µs per call (median of interleaved "
             f"repeats); fastt's kernels at {res['isa']}.", "",
             "| op | row length n | fastt | torch | NumPy | fastt/torch |",
             "|---|---|---|---|---|---|"]
    for key, d in res["us"].items():
        name, n = key.split("/")
        npv = f"{d['numpy']:.1f}" if "numpy" in d else "—"
        lines.append(f"| {name} | {n} | {d['fastt']:.1f} | "
                     f"{d['torch']:.1f} | {npv} | "
                     f"{d['fastt'] / d['torch']:.2f} |")
    lines += common.slower_than_torch(res)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(common.standalone_main("reductions", run, markdown))
