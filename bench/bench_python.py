"""Per-op latency from Python on 16-element float32 tensors: fastt vs NumPy
vs torch (if installed) vs a minimal C extension (bench/floor/floor.c, built
here on the fly). Single-threaded, warm-up, interleaved repeats, medians.

    python bench/bench_python.py [--repeats 25] [--number 20000]

Prints a Markdown table (ns/op and the ratios the budget names) and writes
bench/results/python_latency.json and .md. Add a case: one row in CASES below."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import timeit
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import numpy as np  # noqa: E402

import fastt  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:
    torch = None

HERE = Path(__file__).resolve().parent


def build_floor():
    """Compiles bench/floor/floor.c into a temp dir and imports it."""
    src = HERE / "floor" / "floor.c"
    out = Path(tempfile.mkdtemp(prefix="fastt_floor_"))
    so = out / ("floor" + sysconfig.get_config_var("EXT_SUFFIX"))
    cc = os.environ.get("CC", "cc")
    subprocess.check_call([cc, "-O2", "-shared", "-fPIC",
                           "-I" + sysconfig.get_paths()["include"],
                           str(src), "-o", str(so)])
    sys.path.insert(0, str(out))
    import floor  # noqa: E402
    return floor


# name -> {library: statement}; setup names: a, b, m (4x4), z (lib module)
CASES = [
    ("a + b", {"fastt": "a + b", "numpy": "a + b", "torch": "a + b",
               "floor": "a + b"}),
    ("a * 2.0", {"fastt": "a * 2.0", "numpy": "a * 2.0",
                 "torch": "a * 2.0"}),
    ("a.relu()", {"fastt": "a.relu()", "numpy": "maximum(a, 0.0)",
                  "torch": "a.relu()"}),
    ("a.sum()", {"fastt": "a.sum()", "numpy": "a.sum()", "torch": "a.sum()"}),
    ("a[1:]", {"fastt": "a[1:]", "numpy": "a[1:]", "torch": "a[1:]"}),
    ("a.view(4, 4)", {"fastt": "a.view(4, 4)", "numpy": "a.reshape(4, 4)",
                      "torch": "a.view(4, 4)"}),
    ("a4 @ m (4x4)", {"fastt": "a4 @ m", "numpy": "a4 @ m",
                      "torch": "a4 @ m"}),
    ("zeros(16)", {"fastt": "zeros(16)", "numpy": "zeros(16, float32)",
                   "torch": "zeros(16)"}),
    ("no-op call", {"floor": "noop()"}),
]


def setups(floor):
    envs = {}
    x = np.arange(16, dtype=np.float32)
    envs["numpy"] = {"a": x, "b": x.copy(), "a4": x.reshape(4, 4),
                     "m": np.ones((4, 4), np.float32),
                     "maximum": np.maximum, "zeros": np.zeros,
                     "float32": np.float32}
    fastt.set_num_threads(1)
    fa = fastt.tensor(x)
    envs["fastt"] = {"a": fa, "b": fa.clone(), "a4": fa.view(4, 4),
                     "m": fastt.ones(4, 4), "zeros": fastt.zeros}
    if torch is not None:
        torch.set_num_threads(1)
        ta = torch.from_numpy(x.copy())
        envs["torch"] = {"a": ta, "b": ta.clone(), "a4": ta.view(4, 4),
                         "m": torch.ones(4, 4), "zeros": torch.zeros}
    envs["floor"] = {"a": floor.make(16), "b": floor.make(16),
                     "noop": floor.noop}
    return envs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--number", type=int, default=20000)
    ap.add_argument("--out", default=str(HERE / "results" /
                                         "python_latency.json"))
    args = ap.parse_args()
    floor = build_floor()
    envs = setups(floor)
    timers = []
    for case, stmts in CASES:
        for lib, stmt in stmts.items():
            if lib not in envs:
                continue
            try:
                eval(stmt, envs[lib])
            except Exception as e:  # an op a library lacks: report, skip
                print(f"skip {lib} {case}: {type(e).__name__}: {e}",
                      file=sys.stderr)
                continue
            timers.append((case, lib, timeit.Timer(stmt, globals=envs[lib])))
    for _, _, t in timers:  # warm-up
        t.timeit(number=args.number // 4)
    samples = {(c, l): [] for c, l, _ in timers}
    for _ in range(args.repeats):  # interleaved: each round runs every case
        for c, l, t in timers:
            samples[(c, l)].append(t.timeit(number=args.number) /
                                   args.number * 1e9)
    stats = {}
    for (c, l), xs in samples.items():
        stats.setdefault(c, {})[l] = {"median": statistics.median(xs),
                                      "min": min(xs), "max": max(xs)}
    floor_add = stats["a + b"]["floor"]["median"]

    def cell(c, lib):
        s = stats.get(c, {}).get(lib)
        return f"{s['median']:.0f} ({s['min']:.0f}-{s['max']:.0f})" if s \
            else "-"

    def ratio(c, lib, ref):
        s, r = stats.get(c, {}).get(lib), stats.get(c, {}).get(ref)
        return f"{s['median'] / r['median']:.2f}" if s and r else "-"

    lines = []

    def out(text=""):
        print(text)
        lines.append(text)

    libs = ["fastt", "numpy", "torch"]
    out(f"\nPython per-op latency, ns/op: median (min-max) of "
          f"{args.repeats} interleaved repeats x {args.number} calls, "
          f"16-element float32, 1 thread\n")
    out("| op | fastt | NumPy | torch | fastt/NumPy | fastt/torch | "
          "fastt/floor add |")
    out("|---|---|---|---|---|---|---|")
    for c, _ in CASES:
        if c == "no-op call":
            continue
        f = stats.get(c, {}).get("fastt")
        fl = f"{f['median'] / floor_add:.2f}" if f else "-"
        out(f"| `{c}` | {cell(c, 'fastt')} | {cell(c, 'numpy')} | "
              f"{cell(c, 'torch')} | {ratio(c, 'fastt', 'numpy')} | "
              f"{ratio(c, 'fastt', 'torch')} | {fl} |")
    out(f"\nfloor (bench/floor/floor.c): `a + b` that allocates "
          f"{cell('a + b', 'floor')} ns, no-op call "
          f"{cell('no-op call', 'floor')} ns")
    budget = []
    for c in ("a + b", "a * 2.0"):
        f = stats[c]["fastt"]["median"]
        n = stats[c]["numpy"]["median"]
        t = stats[c].get("torch", {}).get("median")
        ok_np = f <= n
        ok_t = t is None or f <= t / 6
        ok_fl = f <= 3 * floor_add
        budget.append({"op": c, "fastt_ns": f, "numpy_ns": n, "torch_ns": t,
                       "floor_add_ns": floor_add, "le_numpy": ok_np,
                       "le_torch_over_6": ok_t, "le_3x_floor": ok_fl})
        out(f"budget `{c}`: <= NumPy {'MET' if ok_np else 'MISSED'}, "
              f"<= torch/6 {'MET' if ok_t else 'MISSED'}"
              f"{'' if t else ' (torch absent)'}, <= 3x floor "
              f"{'MET' if ok_fl else 'MISSED'}")
    result = {
        "machine": {"platform": platform.platform(),
                    "processor": platform.processor(),
                    "python": sys.version.split()[0],
                    "numpy": np.__version__,
                    "torch": torch.__version__ if torch else None,
                    "fastt": fastt.__version__},
        "repeats": args.repeats, "number": args.number,
        "ns_per_op": stats, "budget": budget,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    md = Path(args.out).with_suffix(".md")
    machine = result["machine"]
    md.write_text(f"<!-- written by bench/bench_python.py -->\n"
                  f"Machine: {machine['platform']}, Python "
                  f"{machine['python']}, NumPy {machine['numpy']}, torch "
                  f"{machine['torch']}, {os.cpu_count()} CPUs\n"
                  + "\n".join(lines) + "\n")
    print(f"\nwrote {args.out} and {md}")


if __name__ == "__main__":
    main()
