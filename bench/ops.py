"""Part 1, per-op dispatch latency at five levels for 1- and 16-element
float32 operands: raw kernel call, table lookup + call, the C++ op, the C++
op with autograd recording (bench/cpp/bench_ops.cpp) and the Python call
(bench/bench_python.py) — beside NumPy, torch from Python and libtorch's
C++ API (bench/cpp/bench_libtorch.cpp). Add an op: a case in both .cpp
files and in bench_python.cases(), and its key in OPS."""
from . import common, native

OPS = ("add", "mul", "relu", "sum", "matmul", "view", "slice")
SIZES = (1, 16)
# column -> (source, benchmark-name pattern or Python library)
LEVELS = [
    ("raw kernel", "fastt", "BM_Raw/{op}/{n}"),
    ("lookup + call", "fastt", "BM_Lookup/{op}/{n}"),
    ("fastt C++", "fastt", "BM_Op/{op}/{n}"),
    ("fastt C++ recording", "fastt", "BM_Record/{op}/{n}"),
    ("fastt Python", "python", "fastt"),
    ("NumPy", "python", "numpy"),
    ("torch Python", "python", "torch"),
    ("libtorch C++", "libtorch", "BM_Torch/{op}/{n}"),
    ("libtorch C++ recording", "libtorch", "BM_TorchRecord/{op}/{n}"),
    ("libtorch InferenceMode", "libtorch", "BM_TorchInference/{op}/{n}"),
]


def run(quick=False, build=True):
    res = {"notes": [], "cpp": {}, "python": {}}
    binaries = {}
    exe, note = native.fastt_binary(build=build)
    if note:
        res["notes"].append(note)
    if exe:
        binaries["fastt"] = exe
    exe, note = native.libtorch_binary(build=build)
    if note:
        res["notes"].append("libtorch C++ bench unavailable: " + note)
    if exe:
        binaries["libtorch"] = exe
    common.log(f"ops: C++ benchmarks {sorted(binaries)}")
    cpp, context, errors = native.run_rounds(
        binaries, rounds=3 if quick else 7,
        min_time=0.01 if quick else 0.03)
    for name, err in errors.items():
        res["notes"].append(f"{name} benchmark run failed: {err}")
    res["cpp"] = cpp
    res["cpp_context"] = {k: {c: v.get(c) for c in (
        "library_build_type", "num_cpus", "mhz_per_cpu")}
        for k, v in context.items()}
    common.log("ops: Python per-op latency")
    from . import bench_python
    try:
        floor = bench_python.build_floor()
    except Exception as e:  # no C compiler: run without the floor
        floor = None
        res["notes"].append(f"C floor extension not built: {e}")
    stats = bench_python.measure(
        SIZES, repeats=5 if quick else 15,
        target_s=0.002 if quick else 0.01, floor=floor)
    res["python"] = stats
    res["budget"] = bench_python.budget(stats[16])
    res["table"] = table(res)
    return res


def table(res):
    """One row per (op, n): level -> ns (median) or None."""
    rows = []
    for op in OPS:
        for n in SIZES:
            row = {"op": op, "n": n,
                   "label": res["python"].get(n, {}).get(op, {}).get(
                       "label", op)}
            for col, src, pat in LEVELS:
                if src == "python":
                    s = res["python"].get(n, {}).get(op, {}).get(pat)
                else:
                    s = res["cpp"].get(src, {}).get(pat.format(op=op, n=n))
                row[col] = s["median"] if s else None
            rows.append(row)
    return rows


def _ratio(a, b):
    return a / b if a is not None and b else None


def headline(res):
    """fastt/torch and fastt/NumPy from Python, fastt/libtorch in C++,
    per op at 16 elements."""
    out = []
    for row in res["table"]:
        if row["n"] != 16:
            continue
        out.append({
            "op": row["op"], "label": row["label"],
            "fastt_ns": row["fastt Python"],
            "fastt/torch": _ratio(row["fastt Python"], row["torch Python"]),
            "fastt/numpy": _ratio(row["fastt Python"], row["NumPy"]),
            "cpp fastt/libtorch": _ratio(row["fastt C++"],
                                         row["libtorch C++"]),
        })
    return out


def _fmt(v):
    if v is None:
        return "-"
    return f"{v:.0f}" if v >= 10 else f"{v:.1f}"


def _fr(v):
    return "-" if v is None else f"{v:.2f}"


def markdown(res):
    lines = ["## 1. Per-op dispatch latency", ""]
    lines.append(
        "ns per call, median of interleaved repeats, 1 thread, float32 CPU. "
        "C++ levels: Google Benchmark CPU time "
        "(`bench/cpp/bench_ops.cpp`, `bench/cpp/bench_libtorch.cpp`); "
        "Python: `bench/bench_python.py` (timeit, "
        f"{common.clock_name()} clock). matmul and view use sqrt(n) x "
        "sqrt(n) operands (16 elements: 4x4). Raw kernel and lookup levels "
        "write into a preallocated output; every other level allocates its "
        "result.")
    lines.append("")
    cols = [c for c, _, _ in LEVELS]
    lines.append("| op | n | " + " | ".join(cols) +
                 " | fastt/torch (Py) | fastt/NumPy (Py) | "
                 "fastt/libtorch (C++) |")
    lines.append("|---|---|" + "---|" * (len(cols) + 3))
    for row in res["table"]:
        lines.append(
            f"| `{row['label']}` | {row['n']} | "
            + " | ".join(_fmt(row[c]) for c in cols)
            + f" | {_fr(_ratio(row['fastt Python'], row['torch Python']))}"
            f" | {_fr(_ratio(row['fastt Python'], row['NumPy']))}"
            f" | {_fr(_ratio(row['fastt C++'], row['libtorch C++']))} |")
    lines.append("")
    py16 = res["python"].get(16, {})
    extra = []
    fl = res["cpp"].get("fastt", {}).get("BM_HandLoopAlloc/16")
    if fl:
        extra.append(f"C++ hand-written loop that mallocs its output: "
                     f"{_fmt(fl['median'])} ns (16 elements)")
    if py16.get("add", {}).get("floor"):
        extra.append(f"minimal C-API `a + b` that allocates "
                     f"(`bench/floor/floor.c`): "
                     f"{_fmt(py16['add']['floor']['median'])} ns; no-op "
                     f"C call {_fmt(py16['noop']['floor']['median'])} ns")
    for key in ("mul_scalar", "zeros", "add_record"):
        r = py16.get(key)
        if r and r.get("fastt"):
            t = r.get("torch", {}).get("median")
            extra.append(f"Python `{r['label']}`: fastt "
                         f"{_fmt(r['fastt']['median'])} ns, torch "
                         f"{_fmt(t)} ns")
    for k in ("BM_ReluRecordChain", "BM_TinyStep", "BM_Matmul64",
              "BM_AddBroadcast", "BM_Empty/16"):
        s = res["cpp"].get("fastt", {}).get(k)
        if s:
            extra.append(f"C++ `{k}`: {_fmt(s['median'])} ns")
    lines += ["Floors and extras:", ""] + [f"- {e}" for e in extra] + [""]
    for b in res.get("budget", []):
        def ok(x):
            return "met" if x else "**missed**"
        lines.append(
            f"Budget `{b['op']}` (Python, 16 elements): <= NumPy "
            f"{ok(b['le_numpy'])}, <= torch/6 {ok(b['le_torch_over_6'])}, "
            f"<= 3x C floor {ok(b['le_3x_floor'])}.")
    rec = [(r["op"], r["fastt C++ recording"] - r["fastt C++"])
           for r in res["table"] if r["n"] == 16
           and r["fastt C++ recording"] and r["fastt C++"]]
    if rec:
        lines.append("Recording cost in C++ (recording - plain op, 16 "
                     "elements): " + ", ".join(f"{o} {v:.0f} ns"
                                               for o, v in rec)
                     + " (budget <= 100 ns).")
    for n in res["notes"]:
        lines += ["", f"> note: {n}"]
    lines.append("")
    return "\n".join(lines)


def plot(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in res["table"] if r["n"] == 16]
    cols = [c for c, _, _ in LEVELS]
    fig, ax = plt.subplots(figsize=(13, 5.5))
    width = 0.8 / len(cols)
    cmap = plt.get_cmap("tab10")
    for j, c in enumerate(cols):
        xs = [i + (j - len(cols) / 2 + 0.5) * width for i in range(len(rows))]
        ys = [r[c] if r[c] else 0 for r in rows]
        ax.bar(xs, ys, width, label=c, color=cmap(j % 10))
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["label"] for r in rows])
    ax.set_ylabel("ns per call (log)")
    ax.set_title("Per-op latency, 16-element float32, 1 thread")
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=8, ncol=5,
               loc="lower center")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
