"""The per-ISA kernel families (kernels/cpu/cpu_isa.h) at each level the
CPU runs, beside torch: a few ops of every family at 64K and 1M float32
elements, one thread. Each level is a child process (FASTT_CPU_ISA=...);
the children and a torch child run in turn, `rounds` times, and each
figure is the median over the rounds of each child's median.

    python -m bench.isa_levels [--quick]

Writes bench/results/isa_levels.md and .json.
"""
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

LEVELS = ["sse2", "avx2", "avx512"]

_CHILD = r"""
import json, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {py!r})
import numpy as np
from bench import common
lib_name = {lib!r}
if lib_name == "torch":
    import torch as lib
else:
    import fastt as lib
lib.set_num_threads(1)
F = lib.nn.functional
out = {{"isa": None if lib_name == "torch" else lib._C._cpu_isa()["in_use"],
        "t": {{}}}}
rng = np.random.default_rng(0)
for n in {sizes!r}:
    a = lib.tensor(rng.standard_normal(n).astype(np.float32))
    b = lib.tensor(rng.standard_normal(n).astype(np.float32))
    m = a.reshape(-1, 1024)
    sq = int(n ** 0.5)
    s2 = a[:sq * sq].reshape(sq, sq)
    tgt = lib.tensor(rng.integers(0, 1024, m.shape[0]))
    r64 = a.reshape(-1, 64)
    h = a.to(lib.float16)
    heads = a.reshape(-1, 64, 4, 16)  # [B, L, H, D] -> [B, H, L, D]
    w = lib.ones(1024)
    bias = lib.zeros(1024)
    p = a.clone().requires_grad_()
    p.grad = b.clone()
    opt = lib.optim.Adam([p], lr=1e-3, foreach=False)
    ops = {{
        "add": lambda: a + b, "mul": lambda: a * b, "relu": lambda: a.relu(),
        "sigmoid": lambda: a.sigmoid(), "exp": lambda: a.exp(),
        "tanh": lambda: a.tanh(), "gelu": lambda: F.gelu(a),
        "where": lambda: lib.where(a > 0, a, b),
        "copy .t()": lambda: s2.t().contiguous(),
        "to bf16": lambda: a.to(lib.bfloat16),
        "sum": lambda: a.sum(), "amax": lambda: a.amax(),
        "sum rows of 64": lambda: r64.sum(1), "amax rows of 64": lambda: r64.amax(1),
        "amax rows": lambda: m.amax(1),
        "float16 sum": lambda: h.sum(),
        "clamp": lambda: a.clamp(-1, 1), "floor": lambda: a.floor(),
        "copy heads": lambda: heads.permute(0, 2, 1, 3).contiguous(),
        "var rows": lambda: m.var(1),
        "softmax rows": lambda: m.softmax(1),
        "layer_norm rows": lambda: F.layer_norm(m, (1024,), w, bias),
        "cross_entropy": lambda: F.cross_entropy(m, tgt),
        "adam step": lambda: opt.step(),
    }}
    samplers = {{k: common.loop_sampler(f) for k, f in ops.items()}}
    res = common.interleaved(samplers, {repeats}, {target})
    for k, r in res.items():
        out["t"][f"{{k}} @{{n}}"] = r["median"]
print(json.dumps(out))
"""


def _child(lib, level, sizes, repeats, target):
    code = _CHILD.format(root=str(common.ROOT), py=str(common.ROOT / "python"),
                         lib=lib, sizes=sizes, repeats=repeats, target=target)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if level:
        env["FASTT_CPU_ISA"] = level
    r = subprocess.run([sys.executable, "-c", code], env=env,
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def run(quick=False):
    if str(common.ROOT / "python") not in sys.path:
        sys.path.insert(0, str(common.ROOT / "python"))
    import fastt
    info = fastt._C._cpu_isa()
    top = LEVELS.index(info["supported"]) if info["supported"] in LEVELS else -1
    levels = [lv for lv in LEVELS[:top + 1] if lv in info["built"]]
    sizes = [1 << 16, 1 << 20]
    rounds = 2 if quick else 3
    repeats, target = (3, 0.01) if quick else (5, 0.02)
    runs = {k: [] for k in levels + ["torch"]}
    for _ in range(rounds):
        for k in runs:
            common.log(f"isa_levels: {k}")
            got = _child("torch" if k == "torch" else "fastt",
                         None if k == "torch" else k, sizes, repeats, target)
            if k != "torch":
                assert got["isa"] == k, (got["isa"], k)
            runs[k].append(got["t"])
    names = list(runs["torch"][0])
    med = {k: {n: statistics.median(r[n] for r in v) for n in names}
           for k, v in runs.items()}
    return {"levels": levels, "ops": names, "seconds": med,
            "rounds": rounds, "others_busy": common.others_busy()}


def markdown(res):
    levels, med = res["levels"], res["seconds"]
    top = levels[-1]
    head = ["op @ elements"] + [f"{lv} µs" for lv in levels] + \
        ["torch µs", f"{top}/torch"] + \
        [f"{lv}/{top}" for lv in levels[:-1]]
    lines = ["# Kernel families per instruction set", "",
             f"fastt at each level (FASTT_CPU_ISA) beside torch, float32, one "
             f"thread; medians over {res['rounds']} rounds of child "
             f"processes (`python -m bench.isa_levels`). {top}/torch < 1: "
             f"fastt faster; {{level}}/{top} > 1: that level slower than "
             f"{top}.{common.busy_note(res)}", "",
             "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for n in res["ops"]:
        row = [n] + [f"{med[lv][n] * 1e6:.1f}" for lv in levels] + \
            [f"{med['torch'][n] * 1e6:.1f}",
             f"{med[top][n] / med['torch'][n]:.2f}"] + \
            [f"{med[lv][n] / med[top][n]:.2f}" for lv in levels[:-1]]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(common.standalone_main("isa_levels", run, markdown))
