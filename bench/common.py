"""Shared pieces of the benchmark suite: thread pinning, the clock, the
interleaved-repeats timer every part uses, the machine description and
result files. A new part imports these rather than timing on its own."""
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"

# Environment for benchmark processes: one thread unless a part asks for
# more, and OpenBLAS's own CPU detection (scripts/main.sh does the same: a
# forced OPENBLAS_CORETYPE slows a current CPU).
_PIN = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def bench_env():
    env = dict(os.environ)
    for v in _PIN:
        env[v] = "1"
    for v in _UNSET:
        env.pop(v, None)
    return env


def pin_environment():
    """Call before numpy/torch/fastt are imported (bench/__main__ does)."""
    os.environ.update({v: "1" for v in _PIN})
    for v in _UNSET:
        os.environ.pop(v, None)


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def others_busy(seconds=1.0):
    """Cores' worth of CPU time other processes used over `seconds`
    (this one sleeps meanwhile), from /proc/stat; None where unavailable.
    Unlike the load average, it does not count this benchmark's own
    single-threaded run just before."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + (v[4] if len(v) > 4 else 0)  # idle + iowait
        return sum(v), idle
    try:
        t0, i0 = sample()
        time.sleep(seconds)
        t1, i1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    total = t1 - t0
    if total <= 0:
        return None
    return cpu_count() * (1.0 - (i1 - i0) / total)


# The clock for single-threaded measurements. "cpu" (process CPU time) is
# steady on a shared machine: time spent descheduled does not count, while
# all of the process's threads do, so a library that hands work to helper
# threads is not flattered. "wall" is perf_counter. Multi-threaded
# throughput always uses wall time.
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
_clock = ["cpu"]


def set_clock(name):
    if name not in CLOCKS:
        raise ValueError(f"clock must be one of {sorted(CLOCKS)}")
    _clock[0] = name


def clock_name():
    return _clock[0]


def clock():
    return CLOCKS[_clock[0]]


def loop_sampler(fn, timer=None):
    """A sampler for a callable: sampler(number) -> seconds taken."""
    def sample(number):
        t = timer or clock()
        t0 = t()
        for _ in range(number):
            fn()
        return t() - t0
    return sample


def calibrate(sample, target_s, max_number=10_000_000):
    """Calls per sample so that one sample takes about target_s."""
    sample(1)  # warm-up (first call may allocate, build caches)
    number = 1
    while True:
        dt = sample(number)
        if dt >= target_s / 4 or number >= max_number:
            break
        number *= 8 if dt < target_s / 64 else 2
    if dt <= 0:
        return max_number
    return max(1, min(max_number, int(number * target_s / dt)))


def interleaved(samplers, repeats, target_s, numbers=None):
    """Times each sampler (key -> sampler(number) -> seconds) in `repeats`
    rounds that each run every sampler once, so load changes hit all of
    them alike. Returns key -> {median, min, max, n, number} in seconds per
    call. `numbers` (key -> calls per sample) skips calibration."""
    numbers = dict(numbers or {})
    for k, s in samplers.items():
        if k not in numbers:
            numbers[k] = calibrate(s, target_s)
    samples = {k: [] for k in samplers}
    for _ in range(repeats):
        for k, s in samplers.items():
            samples[k].append(s(numbers[k]) / numbers[k])
    return {k: {"median": statistics.median(v), "min": min(v),
                "max": max(v), "n": len(v), "number": numbers[k]}
            for k, v in samples.items()}


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git_commit():
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                             cwd=ROOT, capture_output=True, text=True,
                             timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain",
                                "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=5)
        if out.returncode == 0:
            return out.stdout.strip() + ("+dirty" if dirty.stdout.strip()
                                         else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def machine():
    """What the report says about where it ran."""
    import numpy as np
    import fastt
    try:
        import torch
        tv = torch.__version__
    except ImportError:
        tv = None
    info = {
        "cpu_model": _cpu_model(),
        "cores": cpu_count(),
        "logical_cpus": os.cpu_count(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "fastt": getattr(fastt, "__version__", "?"),
        "fastt_path": str(Path(fastt.__file__).parent),
        "torch": tv,
        "numpy": np.__version__,
        "git": _git_commit(),
        "clock": clock_name(),
    }
    try:
        info["loadavg"] = list(os.getloadavg())
    except OSError:
        pass
    return info


def save_json(name, data):
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    path.write_text(json.dumps(data, indent=1, default=str))
    return path


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def busy_note(res):
    """The markdown line saying other processes were busy, or ''."""
    busy = res.get("others_busy")
    if busy and busy > 0.3:
        return f"\nOther processes kept {busy:.1f} cores busy when this ran."
    return ""


def single_thread(quick):
    """fastt and torch at one thread each; the (repeats, target seconds
    per sample) of a quick or a full one-table run."""
    import torch

    import fastt
    fastt.set_num_threads(1)
    torch.set_num_threads(1)
    return (5, 0.01) if quick else (11, 0.03)


def time_ops(fns, args, repeats, target_s):
    """{op name: {lib: µs per call}}: fns[lib] is a list of (name,
    function or None) in the same order for every lib; each function is
    called as f(*args[lib]), the libraries' calls interleaved."""
    out = {}
    first = next(iter(fns))
    for i, (name, _) in enumerate(fns[first]):
        samplers = {lib: loop_sampler(
            (lambda f=fns[lib][i][1], x=args[lib]: f(*x)))
            for lib in fns if fns[lib][i][1] is not None}
        st = interleaved(samplers, repeats, target_s)
        out[name] = {lib: st[lib]["median"] * 1e6 for lib in st}
    return out


def slower_than_torch(res):
    """The markdown lines closing a table of res["us"] = {row: {"fastt":
    µs, "torch": µs, ...}}: the rows where fastt is slower, and whether
    other processes were busy."""
    us = res["us"]
    worse = [k for k, d in us.items() if d["fastt"] / d["torch"] > 1.0]
    lines = ["", "Slower than torch: " + (", ".join(
        f"{k} ({us[k]['fastt'] / us[k]['torch']:.2f})" for k in worse)
        if worse else "none")]
    if busy_note(res):
        lines.append(busy_note(res))
    return lines


def size_label(n):
    """64K, 1M, 1009: an element count as the tables print it."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10}K"
    return str(n)


def ratio_table(res, intro):
    """The markdown of a one-table bench whose res["us"] keys are
    "op/dtype/n": the intro line, one row per key with fastt's and
    torch's µs and their ratio, and slower_than_torch's closing lines."""
    lines = [intro, "", "| op | dtype | n | fastt | torch | fastt/torch |",
             "|---|---|---|---|---|---|"]
    for key, d in res["us"].items():
        name, dt, n = key.split("/")
        lines.append(f"| {name} | {dt} | {size_label(int(n))} | "
                     f"{d['fastt']:.1f} | {d['torch']:.1f} | "
                     f"{d['fastt'] / d['torch']:.2f} |")
    lines += slower_than_torch(res)
    return "\n".join(lines) + "\n"


def standalone_main(name, run, markdown):
    """main() of a one-table bench (python -m bench.<name> [--quick]):
    run(quick) -> result dict, saved with the machine as
    results/<name>.json; markdown(result) written to results/<name>.md
    and printed."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if str(ROOT / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "python"))
    res = run(args.quick)
    res["machine"] = machine()
    save_json(f"{name}.json", res)
    md = markdown(res)
    (RESULTS / f"{name}.md").write_text(md)
    print(md)
    return 0
