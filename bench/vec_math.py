"""The vector math rows (kernels/cpu/vec_math.def) side by side: fastt,
torch and NumPy on float32 and float64 at 64K elements (L2-resident) and
1M, one thread, medians of interleaved repeats (bench.common.interleaved);
then the float32 activations with their own kernels (kernels/cpu/vec_exp.h:
GELU in both forms, SiLU, sigmoid, and GELU forward + backward through
autograd) on standard normal inputs times 3.
Budget (issue 16): transcendental ops at 1M elements fastt/torch <= 0.9.

Each row is timed twice: as users call it (a fresh output per call) and
with `out=` (the kernel alone). The two differ by the allocator, and for
torch by process history: a 1M float32 result (4 MB) is above glibc's
initial mmap threshold, so it costs fresh pages until a free has raised
that threshold (by then it comes from the heap), which moved torch's
allocating time for 1M `exp` between 400 and 860 us in different runs.
The `out=` ratio is the one that says whose kernel is faster.

    python -m bench.vec_math [--quick]

Writes bench/results/vec_math.md and .json; the header line names the
instruction set the kernels run (FASTT_CPU_ISA lowers it, as for a run at
another level).
"""
import re
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

# NumPy's names where they differ; None: NumPy has no such ufunc
NUMPY = {"asin": "arcsin", "acos": "arccos", "atan": "arctan",
         "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh",
         "atan2": "arctan2", "pow": "power", "erf": None, "erfc": None,
         "erfinv": None, "lgamma": None}
# Rows whose kernels branch on |x| past 1 get a wider input than [0.1,
# 0.9] (float64 erf was 14x torch's time over [-4, 4] and 3x over [0.1,
# 0.9]: glibc's scalar erf is cheap near 0).
RANGE = {"erf": (-4, 4), "erfc": (-4, 4)}


def rows():
    out = []
    for line in open(common.ROOT / "kernels" / "cpu" / "vec_math.def"):
        m = re.match(r"FASTT_VM([12])\((\w+),\s*(\w+),", line)
        if m:
            out.append((int(m.group(1)), m.group(3)))
    return out


def activations(lib):
    """(name, function of one tensor) for the activation rows."""
    F = lib.nn.functional

    def gelu_fwd_bwd(x):
        x.grad = None
        F.gelu(x).backward(lib.ones_like(x))
    return [("gelu", F.gelu),
            ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
            ("silu", F.silu), ("sigmoid", lib.sigmoid),
            ("gelu fwd+bwd", gelu_fwd_bwd)]


def run(quick=False):
    import numpy as np
    import torch

    import fastt
    repeats, target = common.single_thread(quick)
    sizes = (1 << 16, 1 << 20)
    res = {}
    for dt in ("float32", "float64"):
        for n in sizes:
            rng = np.random.default_rng(0)
            x = rng.uniform(0.1, 0.9, n).astype(dt)
            y = rng.uniform(0.1, 2.0, n).astype(dt)
            for arity, name in rows():
                xv = x + 1 if name == "acosh" else x
                if name in RANGE:
                    xv = rng.uniform(*RANGE[name], n).astype(dt)
                args = {"fastt": [fastt.from_numpy(xv.copy())],
                        "torch": [torch.from_numpy(xv.copy())],
                        "numpy": [xv.copy()]}
                if arity == 2:
                    args["fastt"].append(fastt.from_numpy(y.copy()))
                    args["torch"].append(torch.from_numpy(y.copy()))
                    args["numpy"].append(y.copy())
                fns = {"fastt": getattr(fastt, name),
                       "torch": getattr(torch, name)}
                npn = NUMPY.get(name, name)
                if npn:
                    fns["numpy"] = getattr(np, npn)
                samplers = {}
                for lib, f in fns.items():
                    a = args[lib]
                    o = f(*a)
                    samplers[lib] = common.loop_sampler(
                        (lambda f=f, a=a: f(*a)))
                    samplers[lib + " out"] = common.loop_sampler(
                        (lambda f=f, a=a, o=o: f(*a, out=o)))
                st = common.interleaved(samplers, repeats, target)
                res[f"{name}/{dt}/{n}"] = {
                    lib: st[lib]["median"] * 1e6 for lib in st}
        common.log(f"vec_math: {dt} done")
    for n in sizes:
        x = (np.random.default_rng(1).standard_normal(n) * 3).astype(
            np.float32)
        acts = {lib: activations(m) for lib, m in (("fastt", fastt),
                                                   ("torch", torch))}
        for i, (name, _) in enumerate(acts["fastt"]):
            samplers = {}
            for lib, m in (("fastt", fastt), ("torch", torch)):
                a = m.from_numpy(x.copy())
                if name.endswith("bwd"):
                    a.requires_grad_(True)
                f = acts[lib][i][1]
                samplers[lib] = common.loop_sampler(
                    (lambda f=f, a=a: f(a)))
            st = common.interleaved(samplers, repeats, target)
            res[f"{name}/float32/{n}"] = {
                lib: st[lib]["median"] * 1e6 for lib in st}
    return {"isa": fastt._C._cpu_isa()["in_use"], "us": res,
            "others_busy": common.others_busy()}


def markdown(res):
    lines = [f"Vector math, one thread, µs per call (median of interleaved "
             f"repeats); fastt's kernels at {res['isa']}. `call`: a fresh "
             f"output per call, as users call it; `out=`: into a "
             f"preallocated output, the kernel alone. Inputs uniform in "
             f"[0.1, 0.9] (acosh: [1.1, 1.9]), "
             + ", ".join(f"{k} in [{lo}, {hi}]"
                         for k, (lo, hi) in RANGE.items()) + ".", "",
             "| op | dtype | n | fastt | torch | NumPy | fastt/torch "
             "(call) | fastt out= | torch out= | NumPy out= | fastt/torch "
             "(out=) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]

    def us(d, k):
        return f"{d[k]:.1f}" if k in d else "—"

    def ratio(d, suffix):
        f, t = d.get("fastt" + suffix), d.get("torch" + suffix)
        return f / t if f and t else None

    for key, d in res["us"].items():
        name, dt, n = key.split("/")
        r_out = ratio(d, " out")
        lines.append(f"| {name} | {dt} | {int(n) // 1024}K | "
                     f"{us(d, 'fastt')} | {us(d, 'torch')} | "
                     f"{us(d, 'numpy')} | {ratio(d, ''):.2f} | "
                     f"{us(d, 'fastt out')} | {us(d, 'torch out')} | "
                     f"{us(d, 'numpy out')} | "
                     + (f"{r_out:.2f}" if r_out else "—") + " |")
    lines.append("")
    for suffix, what in (("", "call"), (" out", "out=")):
        worse = [k for k, d in res["us"].items()
                 if k.endswith(f"/{1 << 20}") and ratio(d, suffix)
                 and ratio(d, suffix) > 0.9]
        lines.append(f"Above the 0.9 budget at 1M ({what}): "
                     + (", ".join(worse) if worse else "none"))
    if common.busy_note(res):
        lines.append(common.busy_note(res))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(common.standalone_main("vec_math", run, markdown))
