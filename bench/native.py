"""The C++ side of part 1: finds (or builds) the Google Benchmark binaries —
fastt's bench/cpp/bench_ops.cpp from the main build and libtorch's
bench/cpp/bench_libtorch.cpp from the torch wheel — and runs them in
interleaved rounds with JSON output. Results are keyed by benchmark name
(BM_<Level>/<op>/<numel>) with times in ns."""
import json
import os
import shutil
import statistics
import subprocess
from pathlib import Path

from . import common

LIBTORCH_SRC = common.HERE / "cpp" / "libtorch"


def fastt_build_dir():
    return Path(os.environ.get("FASTT_BUILD_DIR", common.ROOT / "build"))


def libtorch_build_dir():
    return Path(os.environ.get("FASTT_LIBTORCH_BUILD_DIR",
                               common.ROOT / "build-bench-libtorch"))


def _run(cmd, log_path, timeout):
    """Runs a build command; returns None or the tail of its output."""
    common.log("$ " + " ".join(str(c) for c in cmd))
    try:
        p = subprocess.run([str(c) for c in cmd], capture_output=True,
                           text=True, timeout=timeout, cwd=common.ROOT)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{type(e).__name__}: {e}"
    if log_path:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        return (p.stdout + p.stderr)[-2000:]
    return None


def _generator():
    return ["-G", "Ninja"] if shutil.which("ninja") else []


def fastt_binary(build=True, timeout=900):
    """(path, note): the fastt_bench_ops binary of the main build (or
    $FASTT_BUILD_DIR); built there with cmake when missing and `build`."""
    d = fastt_build_dir()
    exe = d / "bench" / "cpp" / "fastt_bench_ops"
    if exe.exists():
        note = None
        src = common.HERE / "cpp" / "bench_ops.cpp"
        if src.stat().st_mtime > exe.stat().st_mtime:
            note = (f"{exe} is older than bench/cpp/bench_ops.cpp; rebuild "
                    f"with `cmake --build {d} --target fastt_bench_ops`")
        return exe, note
    if not build:
        return None, f"{exe} not found (--no-build: not built)"
    if not (d / "CMakeCache.txt").exists():
        err = _run(["cmake", "-S", common.ROOT, "-B", d, *_generator(),
                    "-DCMAKE_BUILD_TYPE=Release", "-DFASTT_BUILD_BENCH=ON"],
                   d / "bench_configure.log", timeout)
        if err:
            return None, f"cmake configure of {d} failed:\n{err}"
    err = _run(["cmake", "--build", d, "--target", "fastt_bench_ops", "-j",
                str(common.cpu_count())], d / "bench_build.log", timeout)
    if err or not exe.exists():
        return None, (f"building fastt_bench_ops in {d} failed (is Google "
                      f"Benchmark installed?):\n{err}")
    return exe, None


def libtorch_binary(build=True, timeout=900):
    """(path, note): bench_libtorch built against the torch wheel's
    libtorch into build-bench-libtorch (or $FASTT_LIBTORCH_BUILD_DIR)."""
    d = libtorch_build_dir()
    exe = d / "bench_libtorch"
    configured = (d / "CMakeCache.txt").exists()
    if not configured and not build:
        return None, (f"{exe} not built (--no-build)")
    if not configured:
        try:
            import torch
            prefix = torch.utils.cmake_prefix_path
        except ImportError:
            return None, "torch is not installed: no libtorch to build"
        err = _run(["cmake", "-S", LIBTORCH_SRC, "-B", d, *_generator(),
                    f"-DCMAKE_PREFIX_PATH={prefix}"],
                   d / "bench_configure.log" if d.exists() else None,
                   timeout)
        if err:
            return None, ("cmake configure of the libtorch bench "
                          f"failed:\n{err}")
    err = _run(["cmake", "--build", d, "-j", str(common.cpu_count())],
               d / "bench_build.log", timeout)
    if err or not exe.exists():
        return None, f"building the libtorch bench failed:\n{err}"
    return exe, None


def run_rounds(binaries, rounds, min_time, timeout=600):
    """Runs each binary (name -> path) once per round, alternating, with
    one repetition, random interleaving and JSON output. Returns
    (name -> benchmark name -> {median, min, max, n} ns of CPU time,
    name -> {library build type, context}, errors)."""
    samples = {k: {} for k in binaries}
    context, errors = {}, {}
    for _ in range(rounds):
        for name, exe in binaries.items():
            if name in errors:
                continue
            cmd = [str(exe), "--benchmark_format=json",
                   f"--benchmark_min_time={min_time}",
                   "--benchmark_enable_random_interleaving=true"]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True,
                                   timeout=timeout, env=common.bench_env())
                data = json.loads(p.stdout)
            except (OSError, subprocess.TimeoutExpired, ValueError) as e:
                errors[name] = f"{type(e).__name__}: {e}"
                continue
            context[name] = data.get("context", {})
            for b in data.get("benchmarks", []):
                if b.get("run_type", "iteration") != "iteration":
                    continue
                scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[
                    b.get("time_unit", "ns")]
                samples[name].setdefault(b["name"], []).append(
                    b["cpu_time"] * scale)
    out = {}
    for name, per in samples.items():
        out[name] = {k: {"median": statistics.median(v), "min": min(v),
                         "max": max(v), "n": len(v)}
                     for k, v in per.items()}
    return out, context, errors
