"""Writes bench/results/report.md and the PNG plots from the parts' JSON
files (bench/results/{ops,sweep,curves}.json): the machine, a headline
table, then each part's own section (markdown() and plot() in its module).
A part that has not been run is listed as missing; results from an earlier
run of a part are used with their date. Add a part: one entry in PARTS."""
import json
import time

from . import common

PARTS = ("ops", "sweep", "curves")


def _intkeys(x):
    """JSON turned int keys (sizes, batches) into strings; turn them back."""
    if isinstance(x, dict):
        return {(int(k) if isinstance(k, str) and k.isdigit() else k):
                _intkeys(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_intkeys(v) for v in x]
    return x


def load(part):
    path = common.RESULTS / f"{part}.json"
    if not path.exists():
        return None
    return _intkeys(json.loads(path.read_text()))


def save(part, result, quick, elapsed_s):
    return common.save_json(f"{part}.json", {
        "part": part, "quick": quick, "elapsed_s": elapsed_s,
        "when": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "machine": common.machine(), "result": result})


def _module(part):
    from . import curves, ops, sweep
    return {"ops": ops, "sweep": sweep, "curves": curves}[part]


def headline(docs):
    """The short table for the README: per op at 16 elements, and the
    training-step ratio at the smallest and largest batch."""
    lines = []
    ops = docs.get("ops")
    if ops:
        from . import ops as ops_mod
        lines.append("| op, 16 float32 | fastt from Python (ns) | "
                     "fastt/torch | fastt/NumPy | fastt/libtorch (C++) |")
        lines.append("|---|---|---|---|---|")
        for h in ops_mod.headline(ops["result"]):
            def r(v):
                return "-" if v is None else f"{v:.2f}"
            ns = "-" if h["fastt_ns"] is None else f"{h['fastt_ns']:.0f}"
            lines.append(f"| `{h['label']}` | {ns} | {r(h['fastt/torch'])} "
                         f"| {r(h['fastt/numpy'])} | "
                         f"{r(h['cpp fastt/libtorch'])} |")
        lines.append("")
    cur = docs.get("curves")
    if cur:
        res = cur["result"]
        lo, hi = min(res["batches"]), max(res["batches"])
        lines.append(f"| model | train step fastt/torch @ batch {lo} | "
                     f"@ batch {hi} | inference @ {lo} | @ {hi} |")
        lines.append("|---|---|---|---|---|")
        for model, modes in res["fastt_over_torch"].items():
            t, i = modes.get("train", {}), modes.get("infer", {})

            def r(d, b):
                return f"{d[b]:.2f}" if b in d else "-"
            lines.append(f"| {model} | {r(t, lo)} | {r(t, hi)} | "
                         f"{r(i, lo)} | {r(i, hi)} |")
        lines.append("")
    if lines:
        lines.append("Time ratios: below 1 fastt is faster. Single thread.")
    return "\n".join(lines)


def write(plots=True):
    docs = {p: load(p) for p in PARTS}
    m = next((d["machine"] for d in docs.values() if d), None)
    out = ["# fastt benchmark report", "",
           "<!-- written by `python -m bench` (bench/report.py) -->", ""]
    if m:
        load_avg = m.get("loadavg")
        out += [
            f"Machine: {m['cpu_model']}, {m['cores']} cores available "
            f"({m['logical_cpus']} logical CPUs), {m['os']}; Python "
            f"{m['python']}, fastt {m['fastt']} (git {m['git']}), torch "
            f"{m['torch']}, NumPy {m['numpy']}."
            + (f" Load average (1 min) as the first part finished: "
               f"{load_avg[0]:.1f}." if load_avg
               else ""), ""]
    for p in PARTS:
        d = docs[p]
        if d:
            out.append(f"- {p}: run {d['when']}"
                       f"{' (--quick)' if d['quick'] else ''}, "
                       f"{d['elapsed_s']:.0f} s")
        else:
            out.append(f"- {p}: not run (`python -m bench --only {p}`)")
    out += ["", "Single-threaded numbers use the process CPU-time clock "
            "(steady on a shared machine; `--clock wall` for wall time); "
            "every figure is the median of interleaved repeats. Ratios are "
            "time ratios: below 1 fastt is faster.", ""]
    h = headline(docs)
    if h:
        out += ["## Headline", "", h, ""]
    for p in PARTS:
        d = docs[p]
        if not d:
            continue
        mod = _module(p)
        out.append(mod.markdown(d["result"]))
        if plots:
            png = common.RESULTS / f"{p}.png"
            try:
                mod.plot(d["result"], png)
                out += [f"![{p}]({png.name})", ""]
            except Exception as e:  # no matplotlib: tables only
                out += [f"> plot not written: {type(e).__name__}: {e}", ""]
    path = common.RESULTS / "report.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
    if h:  # the tables alone, for README.md
        (common.RESULTS / "headline.md").write_text(h + "\n")
    return path, h
