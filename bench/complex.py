"""complex64 / complex128 ops, fastt against torch at 64K and 1M elements
and matrix products of 64 and 256, one thread, medians of interleaved
repeats (bench.common.interleaved). The elementwise rows run the generic
loops over Complex<T> (csrc/complex.h), sums over the last dim the sum
kernel's pair lanes (others the real view), abs is hypot of the parts,
products are OpenBLAS's cgemm / zgemm, inv / det / solve LAPACK's c/z
getrf and getrs (batches of 3x3 and 4x4: the inline small LU), qr / eigh
/ eig / svd / pinv / lstsq its c/z geqrf + ungqr, heevd, geev, gesdd and
gelsy.

    python -m bench.complex [--quick]

Writes bench/results/complex.md and .json.
"""
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

SIZES = (1 << 16, 1 << 20)
MATS = (64, 256)


def ops():
    """(name, function of (x, y)); the same calls for fastt and torch."""
    return [
        ("add", lambda x, y: x + y), ("mul", lambda x, y: x * y),
        ("div", lambda x, y: x / y), ("mul 2-1j", lambda x, y: x * (2 - 1j)),
        ("neg", lambda x, y: -x), ("abs", lambda x, y: x.abs()),
        ("sum", lambda x, y: x.sum()),
        ("sum(-1)", lambda x, y: x.view(-1, 256).sum(-1)),
        ("sum(-1) rows of 8", lambda x, y: x.view(-1, 8).sum(-1)),
        ("to complex128", lambda x, y: x.to(complex_other(x))),
        ("exp", lambda x, y: x.exp()), ("pow 2.5", lambda x, y: x ** 2.5),
        ("pow x**y", lambda x, y: x ** y),
        ("cumsum(-1)", lambda x, y: x.view(-1, 256).cumsum(-1)),
        ("prod(-1)", lambda x, y: (x * 0.5).view(-1, 256).prod(-1)),
        ("where", lambda x, y: _lib(x).where(x.real > 0, x, y)),
        ("var", lambda x, y: x.var()),
    ]


def _lib(x):
    import fastt
    import torch
    return fastt if isinstance(x, fastt.Tensor) else torch


def complex_other(x):
    lib = _lib(x)
    return lib.complex128 if x.dtype == lib.complex64 else lib.complex64


def run(quick=False):
    import numpy as np
    import torch

    import fastt
    repeats, target = common.single_thread(quick)
    res = {}
    for dt in ("complex64", "complex128"):
        for n in SIZES:
            rng = np.random.default_rng(n)
            a, b = [(rng.standard_normal(n) +
                     1j * rng.standard_normal(n)).astype(dt)
                    for _ in range(2)]
            args = {"fastt": [fastt.from_numpy(v.copy()) for v in (a, b)],
                    "torch": [torch.from_numpy(v.copy()) for v in (a, b)]}
            fns = {"fastt": ops(), "torch": ops()}
            for name, d in common.time_ops(fns, args, repeats,
                                           target).items():
                res[f"{name}/{dt}/{n}"] = d
        for m in MATS:
            rng = np.random.default_rng(m)
            a, b = [(rng.standard_normal((m, m)) +
                     1j * rng.standard_normal((m, m))).astype(dt)
                    for _ in range(2)]
            args = {"fastt": [fastt.from_numpy(v.copy()) for v in (a, b)],
                    "torch": [torch.from_numpy(v.copy()) for v in (a, b)]}
            mm = [("matmul", lambda x, y: x @ y),
                  ("inv", lambda x, y: _lib(x).linalg.inv(x)),
                  ("det", lambda x, y: _lib(x).linalg.det(x)),
                  ("solve", lambda x, y: _lib(x).linalg.solve(x, y)),
                  ("qr", lambda x, y: _lib(x).linalg.qr(x)),
                  ("eigh", lambda x, y: _lib(x).linalg.eigh(x)),
                  ("eig", lambda x, y: _lib(x).linalg.eig(x)),
                  ("svd", lambda x, y: _lib(x).linalg.svd(x)),
                  ("svdvals", lambda x, y: _lib(x).linalg.svdvals(x)),
                  ("pinv", lambda x, y: _lib(x).linalg.pinv(x)),
                  ("lstsq", lambda x, y: _lib(x).linalg.lstsq(x, y))]
            for name, d in common.time_ops({"fastt": mm, "torch": mm}, args,
                                           repeats, target).items():
                res[f"{name} {m}x{m}/{dt}/{m * m}"] = d
        for m in (3, 4):  # 4096 small matrices (graphics, robotics)
            rng = np.random.default_rng(m)
            a, b = [(rng.standard_normal((4096, m, c)) + 1j *
                     rng.standard_normal((4096, m, c))).astype(dt)
                    for c in (m, 1)]
            args = {"fastt": [fastt.from_numpy(v.copy()) for v in (a, b)],
                    "torch": [torch.from_numpy(v.copy()) for v in (a, b)]}
            small = [("solve", lambda x, y: _lib(x).linalg.solve(x, y)),
                     ("inv", lambda x, y: _lib(x).linalg.inv(x)),
                     ("det", lambda x, y: _lib(x).linalg.det(x)),
                     ("lu_factor", lambda x, y: _lib(x).linalg.lu_factor(x))]
            for name, d in common.time_ops({"fastt": small, "torch": small},
                                           args, repeats, target).items():
                res[f"{name} 4096x{m}x{m}/{dt}/{4096 * m * m}"] = d
        common.log(f"complex: {dt} done")
    return {"isa": fastt._C._cpu_isa()["in_use"], "us": res,
            "others_busy": common.others_busy()}


def markdown(res):
    return common.ratio_table(
        res, "complex64 / complex128 ops, one thread, µs per call (median "
        "of interleaved repeats); sum(-1) over rows of 256 (and of 8), "
        "matmul and the factorizations of square matrices, batches of 4096 "
        f"3x3 / 4x4 systems; fastt's kernels at {res['isa']}.")


if __name__ == "__main__":
    sys.exit(common.standalone_main("complex", run, markdown))
