"""Part 2, size sweep: add/mul/relu/sum/exp on 1 ... 16M float32 elements
(powers of 4), fastt vs torch vs NumPy from Python, single-threaded; then
multi-threaded throughput on the largest sizes (all cores, via
fastt.set_num_threads / torch.set_num_threads). Finds where kernel time
takes over from per-call overhead and lists sizes where fastt is slower.
Add an op: one entry in OPS."""
import json
import os
import subprocess
import sys
import time
import timeit

from . import bandwidth, common

LIBS = ("fastt", "torch", "numpy")
# op -> {library: statement}; setup names a, b, and maximum/exp for NumPy.
OPS = {
    "add": dict.fromkeys(LIBS, "a + b"),
    "mul": dict.fromkeys(LIBS, "a * b"),
    "relu": {"fastt": "a.relu()", "torch": "a.relu()",
             "numpy": "maximum(a, 0.0)"},
    "sum": dict.fromkeys(LIBS, "a.sum()"),
    "exp": {"fastt": "a.exp()", "torch": "a.exp()", "numpy": "exp(a)"},
}
# "loses" only beyond this ratio: the machine is shared and noisy.
LOSS_MARGIN = 1.10


def sizes(quick):
    return [4 ** k for k in ((0, 2, 4, 6, 8, 10) if quick else range(13))]


def _envs(n, libs):
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    envs = {}
    if "numpy" in libs:
        envs["numpy"] = {"a": x, "b": y, "maximum": np.maximum,
                         "exp": np.exp}
    if "fastt" in libs:
        import fastt
        envs["fastt"] = {"a": fastt.tensor(x), "b": fastt.tensor(y)}
    if "torch" in libs:
        import torch
        envs["torch"] = {"a": torch.tensor(x), "b": torch.tensor(y)}
    return envs


def _libs():
    try:
        import torch  # noqa: F401
        return LIBS
    except ImportError:
        return ("fastt", "numpy")


def _set_threads(n):
    import fastt
    fastt.set_num_threads(n)
    try:
        import torch
        torch.set_num_threads(n)
    except ImportError:
        pass


def _measure_size(n, libs, repeats, target_s, timer):
    envs = _envs(n, libs)
    samplers = {}
    for op, stmts in OPS.items():
        for lib in libs:
            samplers[(op, lib)] = timeit.Timer(
                stmts[lib], globals=envs[lib], timer=timer).timeit
    st = common.interleaved(samplers, repeats, target_s)
    del envs
    return st


def run_single(quick=False):
    """ns/op per (op, lib, n), 1 thread."""
    libs = _libs()
    _set_threads(1)
    res = {"libs": list(libs), "sizes": sizes(quick), "single": {}}
    repeats = 3 if quick else 7
    for n in res["sizes"]:
        common.log(f"sweep: n={n}")
        # Short samples at small sizes; a few calls at most when big.
        target = (0.002 if quick else 0.01) if n < 4 ** 9 else \
            (0.01 if quick else 0.03)
        st = _measure_size(n, libs, repeats, target, common.clock())
        for (op, lib), s in st.items():
            res["single"].setdefault(op, {}).setdefault(lib, {})[n] = {
                k: (v * 1e9 if k in ("median", "min", "max") else v)
                for k, v in s.items()}
    analyse(res)
    common.log("sweep: memory bandwidth (bench/cpp/stream.cpp)")
    res["bandwidth"] = bandwidth.measure()
    return res


def run_threads(res, quick=False):
    """Throughput with all cores at the largest sizes, wall clock. Each
    library runs alone in a fresh process (`python -m bench.sweep
    --threads-worker LIB`): two OpenMP runtimes (fastt's and torch's) in
    one process leave idle workers spinning on the cores the other needs."""
    cores = common.cpu_count()
    big = res["sizes"][-1:] if quick else res["sizes"][-3:]
    res["threads"] = {"cores": cores, "sizes": big, "multi": {},
                      "single_wall": {}, "notes": []}
    env = common.bench_env()
    env["OMP_NUM_THREADS"] = str(cores)
    res["threads"]["loadavg"] = os.getloadavg()[0]
    res["threads"]["others_busy"] = common.others_busy()
    for lib in res["libs"]:
        common.log(f"sweep: {lib}, 1 and {cores} threads, n={big}")
        cmd = [sys.executable, "-m", "bench.sweep", "--threads-worker", lib,
               "--sizes", ",".join(map(str, big))] + (
                   ["--quick"] if quick else [])
        p = None
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               cwd=common.ROOT, env=env, timeout=600)
            data = json.loads(p.stdout.strip().splitlines()[-1])
        except (OSError, subprocess.SubprocessError, ValueError,
                IndexError) as e:
            err = p.stderr[-500:] if p is not None else ""
            res["threads"]["notes"].append(
                f"{lib} worker failed: {type(e).__name__}: {e} {err}")
            continue
        for key in ("multi", "single_wall"):
            for op, by_n in data[key].items():
                res["threads"][key].setdefault(op, {})[lib] = {
                    int(n): v for n, v in by_n.items()}
    return res


def _threads_worker(lib, big, quick):
    """In a fresh process: ns/op of every op for `lib` at 1 thread and at
    all cores (wall clock). Prints one JSON line."""
    cores = common.cpu_count()
    out = {"multi": {}, "single_wall": {}}
    if lib != "numpy":
        __import__(lib)
    for n in big:
        for threads, key in ((1, "single_wall"), (cores, "multi")):
            if lib != "numpy":
                __import__(lib).set_num_threads(threads)
            st = _measure_size(n, (lib,), 3 if quick else 5,
                               0.01 if quick else 0.03, time.perf_counter)
            for (op, _), s in st.items():
                out[key].setdefault(op, {})[n] = s["median"] * 1e9
    print(json.dumps(out))


def analyse(res):
    """Crossover (first size whose time is >= 2x the 1-element time: the
    kernel, not the call, dominates) per (op, lib); sizes where fastt is
    slower than torch or NumPy by more than LOSS_MARGIN."""
    cross, losses = {}, []
    for op, per in res["single"].items():
        for lib, by_n in per.items():
            base = by_n[min(by_n)]["median"]
            cross.setdefault(op, {})[lib] = next(
                (n for n in sorted(by_n) if by_n[n]["median"] >= 2 * base),
                None)
        f = per.get("fastt", {})
        for lib in ("torch", "numpy"):
            for n, s in per.get(lib, {}).items():
                if n in f and f[n]["median"] > LOSS_MARGIN * s["median"]:
                    losses.append({"op": op, "n": n, "vs": lib,
                                   "ratio": f[n]["median"] / s["median"]})
    res["crossover"] = cross
    res["losses"] = sorted(losses, key=lambda x: (x["op"], x["n"]))
    return res


def _size(n):
    for unit, div in (("M", 4 ** 10), ("K", 4 ** 5)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


# From this many elements (64 MB per float32 array, the STREAM probe's
# size) the arrays are well outside the caches (4M x 3 arrays still sit
# partly in a 32 MB L3), and an op's GB/s is held against the machine's
# (bench/bandwidth.py). Above 100%: the probe's plain stores pay the
# write-allocate read as fastt's do, so it is no hard ceiling, and the
# shared machine's bandwidth moves between the two measurements.
MEMORY_BOUND_N = 4 ** 12


def _pct(res, op, threads, n, gbs):
    peak = bandwidth.peak(res.get("bandwidth"), op, threads)
    if n < MEMORY_BOUND_N or not peak:
        return "-"
    return f"{100 * gbs / peak:.0f}%"


def markdown(res):
    sz = res["sizes"]
    lines = ["## 2. Size sweep", ""]
    lines.append(
        "ns per call from Python (median of interleaved repeats, 1 thread, "
        f"{common.clock_name()} clock), float32, result allocated each call. "
        "Ratios are fastt / other: below 1 fastt is faster.")
    lines.append("")
    bw = res.get("bandwidth")
    if bw and bandwidth.at(bw, 1) and bandwidth.at(bw, bw["cores"]):
        one, allc = bandwidth.at(bw, 1), bandwidth.at(bw, bw["cores"])
        lines.append(
            "Memory bandwidth (bench/cpp/stream.cpp, float32, best of 10, "
            "GB/s, 1 thread / all {} cores): copy {:.1f} / {:.1f}, scale "
            "{:.1f} / {:.1f}, add {:.1f} / {:.1f}, triad {:.1f} / {:.1f}, "
            "read {:.1f} / {:.1f}. `% of STREAM` (from {} elements, where "
            "the arrays leave the caches) holds add/mul against add, "
            "relu/exp against scale, sum against read.".format(
                bw["cores"], one["copy"], allc["copy"], one["scale"],
                allc["scale"], one["add"], allc["add"], one["triad"],
                allc["triad"], one["read"], allc["read"],
                _size(MEMORY_BOUND_N)))
        lines.append("")
    for op, per in res["single"].items():
        lines.append(f"**{op}**")
        lines.append("")
        lines.append("| n | " + " | ".join(res["libs"]) +
                     " | fastt/torch | fastt/NumPy | fastt GB/s | "
                     "% of STREAM |")
        lines.append("|---|" + "---|" * (len(res["libs"]) + 4))
        for n in sz:
            cells = [per.get(lib, {}).get(n, {}).get("median")
                     for lib in res["libs"]]
            f = per["fastt"][n]["median"]
            t = per.get("torch", {}).get(n, {}).get("median")
            npy = per.get("numpy", {}).get(n, {}).get("median")
            nbytes = n * 4 * (3 if op in ("add", "mul") else
                              1 if op == "sum" else 2)
            lines.append(
                f"| {_size(n)} | " + " | ".join(
                    "-" if c is None else f"{c:,.0f}" for c in cells)
                + f" | {t and f'{f / t:.2f}' or '-'} | "
                f"{npy and f'{f / npy:.2f}' or '-'} | {nbytes / f:.2f} | "
                f"{_pct(res, op, 1, n, nbytes / f)} |")
        lines.append("")
    lines.append("Crossover (first n where a call takes >= 2x its "
                 "1-element time, i.e. the kernel dominates):")
    lines.append("")
    lines.append("| op | " + " | ".join(res["libs"]) + " |")
    lines.append("|---|" + "---|" * len(res["libs"]))
    for op, per in res["crossover"].items():
        lines.append(f"| {op} | " + " | ".join(
            _size(per[lib]) if per.get(lib) else "> max"
            for lib in res["libs"]) + " |")
    lines.append("")
    if res["losses"]:
        groups = {}
        for x in res["losses"]:
            groups.setdefault((x["op"], x["vs"]), []).append(x)
        lines.append(f"Where fastt is slower by more than {LOSS_MARGIN:.2f}x "
                     "(time ratio per size):")
        lines.append("")
        for (op, vs), xs in groups.items():
            lines.append(f"- {op} vs {vs}: " + ", ".join(
                f"{_size(x['n'])} {x['ratio']:.2f}x" for x in xs))
    else:
        lines.append(f"fastt is never slower than torch or NumPy by more "
                     f"than {LOSS_MARGIN:.2f}x in this sweep.")
    lines.append("")
    th = res.get("threads")
    if th:
        lines.append(f"Multi-threaded throughput ({th['cores']} threads vs "
                     "1, wall clock, each library alone in a fresh process; "
                     "NumPy's ufuncs are single-threaded, so its two "
                     "columns differ by noise only): GB/s moved (inputs + "
                     "output)")
        lines.append("")
        lines.append("| op | n | " + " | ".join(
            f"{lib} 1t | {lib} {th['cores']}t" for lib in res["libs"])
            + " | fastt/torch (all cores, time) | fastt % of STREAM "
            f"(1t / {th['cores']}t) |")
        lines.append("|---|---|" + "---|" * (2 * len(res["libs"]) + 2))
        for op in OPS:
            for n in th["sizes"]:
                nbytes = n * 4 * (3 if op in ("add", "mul") else
                                  1 if op == "sum" else 2)
                cells = []
                for lib in res["libs"]:
                    for key in ("single_wall", "multi"):
                        v = th[key].get(op, {}).get(lib, {}).get(n)
                        cells.append(f"{nbytes / v:.1f}" if v else "-")
                f = th["multi"].get(op, {}).get("fastt", {}).get(n)
                t = th["multi"].get(op, {}).get("torch", {}).get(n)
                ratio = f"{f / t:.2f}" if f and t else "-"
                f1 = th["single_wall"].get(op, {}).get("fastt", {}).get(n)
                pct = " / ".join(
                    _pct(res, op, k, n, nbytes / v) if v else "-"
                    for k, v in ((1, f1), (th["cores"], f)))
                lines.append(f"| {op} | {_size(n)} | " + " | ".join(cells)
                             + f" | {ratio} | {pct} |")
        busy = th.get("others_busy")
        if busy is None:  # older results: the load average only
            busy = th.get("loadavg", 0)
        if busy > 0.25 * th["cores"]:
            lines.append(
                f"> warning: other processes kept {busy:.1f} of "
                f"{th['cores']} cores busy when this ran, so threads waited "
                "at every barrier and these multi-threaded figures say "
                "little about either library.")
        for n in th.get("notes", []):
            lines.append(f"> note: {n}")
        lines.append("")
    return "\n".join(lines)


def plot(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ops = list(res["single"])
    fig, axes = plt.subplots(2, len(ops), figsize=(4 * len(ops), 7),
                             sharex=True)
    colors = {"fastt": "tab:blue", "torch": "tab:red", "numpy": "tab:green"}
    for j, op in enumerate(ops):
        ax, rx = axes[0][j], axes[1][j]
        per = res["single"][op]
        for lib in res["libs"]:
            ns = sorted(per.get(lib, {}))
            ax.plot(ns, [per[lib][n]["median"] for n in ns], "o-", ms=3,
                    label=lib, color=colors.get(lib))
            if lib != "fastt":
                rx.plot(ns, [per["fastt"][n]["median"] / per[lib][n]["median"]
                             for n in ns], "o-", ms=3,
                        label=f"fastt/{lib}", color=colors.get(lib))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(op)
        ax.grid(which="both", alpha=0.3)
        rx.axhline(1.0, color="k", lw=0.8)
        rx.set_xscale("log")
        rx.set_yscale("log")
        rx.set_xlabel("elements")
        rx.grid(which="both", alpha=0.3)
        if j == 0:
            ax.set_ylabel("ns per call")
            rx.set_ylabel("time ratio (below 1: fastt faster)")
            ax.legend(fontsize=8)
            rx.legend(fontsize=8)
    fig.suptitle("Size sweep, float32, 1 thread")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads-worker", required=True, choices=LIBS)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    _threads_worker(a.threads_worker, [int(x) for x in a.sizes.split(",")],
                    a.quick)
