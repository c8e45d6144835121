"""This machine's memory bandwidth (issue 16, item 7), STREAM's kernels in
C++ (bench/cpp/stream.cpp: copy, scale, add, triad, read-only sum over
3 x 64 MB of float32), on one thread and on all cores. The size sweep
(bench/sweep.py) divides each large op's GB/s by the matching kernel's:
add/mul by `add` (two reads, one write), relu/exp by `scale` (one read,
one write), sum by `read`.

    python -m bench.bandwidth      # prints the JSON

The probe is compiled here (c++ -O3 -march=native -fopenmp) into
build/bench-tools/ on first use; None where no compiler is found.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import common  # noqa: E402

SRC = common.ROOT / "bench" / "cpp" / "stream.cpp"
EXE = common.ROOT / "build" / "bench-tools" / "fastt_stream"
# The STREAM kernel each sweep op is held against.
KERNEL_OF = {"add": "add", "mul": "add", "relu": "scale", "exp": "scale",
             "sum": "read"}


def _build():
    if EXE.exists() and EXE.stat().st_mtime >= SRC.stat().st_mtime:
        return EXE
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        return None
    EXE.parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.run([cxx, "-O3", "-march=native", "-fopenmp", str(SRC),
                        "-o", str(EXE)], capture_output=True, text=True)
    if p.returncode != 0:
        common.log(f"bandwidth: build failed: {p.stderr[-300:]}")
        return None
    return EXE


def measure(n=1 << 24, reps=10):
    """{'n', 'cores', 'threads': {'1': {kernel: GB/s}, '<cores>': ...}} or
    None when the probe cannot be built or run."""
    exe = _build()
    if exe is None:
        return None
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)  # all cores for the second pass
    try:
        p = subprocess.run([str(exe), str(n), str(reps)], capture_output=True,
                           text=True, timeout=300, env=env)
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as e:
        common.log(f"bandwidth: probe failed: {e}")
        return None


def at(bw, threads):
    """{kernel: GB/s} at `threads` (keys may be ints after a JSON round
    trip through bench.common's loader), or {}."""
    if not bw:
        return {}
    th = bw["threads"]
    return th.get(str(threads)) or th.get(int(threads)) or {}


def peak(bw, op, threads):
    """GB/s of the STREAM kernel matching sweep op `op` at `threads`."""
    return at(bw, threads).get(KERNEL_OF.get(op))


if __name__ == "__main__":
    print(json.dumps(measure(), indent=1))
