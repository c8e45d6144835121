"""Per-op latency from Python on tiny float32 tensors: fastt vs NumPy vs
torch (if installed) vs a minimal C extension (bench/floor/floor.c, built
here on the fly). Single-threaded, warm-up, interleaved repeats, medians.
Part 1 of `python -m bench` (bench/ops.py) calls measure(); standalone:

    python bench/bench_python.py [--repeats 25] [--number 20000] [--sizes 16]

prints a Markdown table (ns/op and the ratios the budget names) and writes
bench/results/python_latency.json and .md. Add a case: one row in cases()."""
import argparse
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(HERE.parent))
from bench import common  # noqa: E402

common.pin_environment()

import numpy as np  # noqa: E402

import fastt  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:
    torch = None


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


def cases(n):
    """(key, label, {library: statement}) for n-element operands. Setup
    names: a, b (n elements), m1, m2 (side x side, side = sqrt(n)), w (a
    copy of a that requires grad), zeros, maximum; floor has a, b, noop."""
    s = int(round(n ** 0.5))
    same = ("fastt", "numpy", "torch")
    return [
        ("add", "a + b", dict.fromkeys(same + ("floor",), "a + b")),
        ("mul", "a * b", dict.fromkeys(same, "a * b")),
        ("relu", "a.relu()", {"fastt": "a.relu()", "torch": "a.relu()",
                              "numpy": "maximum(a, 0.0)"}),
        ("sum", "a.sum()", dict.fromkeys(same, "a.sum()")),
        ("matmul", f"m1 @ m2 ({s}x{s})", dict.fromkeys(same, "m1 @ m2")),
        ("view", f"a.view({s}, {s})",
         {"fastt": f"a.view({s}, {s})", "torch": f"a.view({s}, {s})",
          "numpy": f"a.reshape({s}, {s})"}),
        ("slice", "a[1:]", dict.fromkeys(same, "a[1:]")),
        ("mul_scalar", "a * 2.0", dict.fromkeys(same, "a * 2.0")),
        ("zeros", f"zeros({n})", {"fastt": f"zeros({n})",
                                  "torch": f"zeros({n})",
                                  "numpy": f"zeros({n}, float32)"}),
        ("add_record", "w + b (w requires grad)",
         {"fastt": "w + b", "torch": "w + b"}),
        ("noop", "no-op call", {"floor": "noop()"}),
    ]


def setups(floor, n):
    s = int(round(n ** 0.5))
    x = np.arange(n, dtype=np.float32)
    mat = np.arange(s * s, dtype=np.float32).reshape(s, s)
    envs = {"numpy": {"a": x, "b": x.copy(), "m1": mat, "m2": mat.copy(),
                      "maximum": np.maximum, "zeros": np.zeros,
                      "float32": np.float32}}
    fastt.set_num_threads(1)
    envs["fastt"] = {"a": fastt.tensor(x), "b": fastt.tensor(x),
                     "m1": fastt.tensor(mat), "m2": fastt.tensor(mat),
                     "w": fastt.tensor(x, requires_grad=True),
                     "zeros": fastt.zeros}
    if torch is not None:
        torch.set_num_threads(1)
        envs["torch"] = {"a": torch.tensor(x), "b": torch.tensor(x),
                         "m1": torch.tensor(mat), "m2": torch.tensor(mat),
                         "w": torch.tensor(x, requires_grad=True),
                         "zeros": torch.zeros}
    if floor is not None:
        envs["floor"] = {"a": floor.make(n), "b": floor.make(n),
                         "noop": floor.noop}
    return envs


def measure(sizes=(16,), repeats=25, target_s=0.01, number=None,
            floor=None):
    """ns/op of every case at every size: {n: {key: {"label": str, lib:
    {median, min, max, n, number}}}}. All timers of all sizes run
    interleaved. `number` fixes calls per sample (else calibrated)."""
    timers, labels = {}, {}
    for n in sizes:
        envs = setups(floor, n)
        for key, label, stmts in cases(n):
            labels[(n, key)] = label
            for lib, stmt in stmts.items():
                if lib not in envs:
                    continue
                try:
                    eval(stmt, envs[lib])
                except Exception as e:  # an op a library lacks: report, skip
                    common.log(f"skip {lib} {label}: {type(e).__name__}: {e}")
                    continue
                t = timeit.Timer(stmt, globals=envs[lib],
                                 timer=common.clock())
                timers[(n, key, lib)] = t.timeit
    numbers = dict.fromkeys(timers, number) if number else None
    res = common.interleaved(timers, repeats, target_s, numbers)
    stats = {}
    for (n, key, lib), st in res.items():
        row = stats.setdefault(n, {}).setdefault(
            key, {"label": labels[(n, key)]})
        row[lib] = {k: (v * 1e9 if k in ("median", "min", "max") else v)
                    for k, v in st.items()}
    return stats


def budget(stats16):
    """The design card's Python budgets at 16 elements."""
    floor_add = stats16["add"].get("floor", {}).get("median")
    out = []
    for key in ("add", "mul_scalar"):
        row = stats16[key]
        f, n = row["fastt"]["median"], row["numpy"]["median"]
        t = row.get("torch", {}).get("median")
        out.append({"op": row["label"], "fastt_ns": f, "numpy_ns": n,
                    "torch_ns": t, "floor_add_ns": floor_add,
                    "le_numpy": f <= n,
                    "le_torch_over_6": t is None or f <= t / 6,
                    "le_3x_floor": floor_add is None or f <= 3 * floor_add})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--number", type=int, default=20000)
    ap.add_argument("--sizes", default="16",
                    help="comma-separated element counts")
    ap.add_argument("--clock", choices=sorted(common.CLOCKS), default="cpu")
    ap.add_argument("--out", default=str(common.RESULTS /
                                         "python_latency.json"))
    args = ap.parse_args()
    common.set_clock(args.clock)
    floor = build_floor()
    sizes = [int(s) for s in args.sizes.split(",")]
    all_stats = measure(sizes, args.repeats, number=args.number,
                        floor=floor)
    lines = []

    def out(text=""):
        print(text)
        lines.append(text)

    def cell(row, lib):
        s = row.get(lib)
        return f"{s['median']:.0f} ({s['min']:.0f}-{s['max']:.0f})" if s \
            else "-"

    def ratio(row, lib, ref):
        s, r = row.get(lib), row.get(ref)
        return f"{s['median'] / r['median']:.2f}" if s and r else "-"

    result = {"machine": common.machine(), "repeats": args.repeats,
              "number": args.number, "ns_per_op": {}, "budget": []}
    for n, stats in all_stats.items():
        floor_add = stats["add"].get("floor", {}).get("median")
        out(f"\nPython per-op latency, ns/op: median (min-max) of "
            f"{args.repeats} interleaved repeats x {args.number} calls, "
            f"{n}-element float32, 1 thread, {args.clock} clock\n")
        out("| op | fastt | NumPy | torch | fastt/NumPy | fastt/torch | "
            "fastt/floor add |")
        out("|---|---|---|---|---|---|---|")
        for key, row in stats.items():
            if key == "noop":
                continue
            f = row.get("fastt")
            fl = f"{f['median'] / floor_add:.2f}" if f and floor_add else "-"
            out(f"| `{row['label']}` | {cell(row, 'fastt')} | "
                f"{cell(row, 'numpy')} | {cell(row, 'torch')} | "
                f"{ratio(row, 'fastt', 'numpy')} | "
                f"{ratio(row, 'fastt', 'torch')} | {fl} |")
        out(f"\nfloor (bench/floor/floor.c): `a + b` that allocates "
            f"{cell(stats['add'], 'floor')} ns, no-op call "
            f"{cell(stats['noop'], 'floor')} ns")
        result["ns_per_op"][n] = stats
    if 16 in all_stats:
        result["budget"] = budget(all_stats[16])
        for b in result["budget"]:
            def ok(x):
                return "MET" if x else "MISSED"
            out(f"budget `{b['op']}` (16 elements): <= NumPy "
                f"{ok(b['le_numpy'])}, <= torch/6 {ok(b['le_torch_over_6'])}"
                f"{'' if b['torch_ns'] else ' (torch absent)'}, <= 3x floor "
                f"{ok(b['le_3x_floor'])}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    md = Path(args.out).with_suffix(".md")
    m = result["machine"]
    md.write_text(f"<!-- written by bench/bench_python.py -->\n"
                  f"Machine: {m['cpu_model']}, {m['cores']} cores, "
                  f"{m['os']}, Python {m['python']}, NumPy {m['numpy']}, "
                  f"torch {m['torch']}\n" + "\n".join(lines) + "\n")
    print(f"\nwrote {args.out} and {md}")


if __name__ == "__main__":
    main()
