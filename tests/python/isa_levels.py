"""Instruction-set levels for the tests that run a battery in a child at
every level (test_cpu_isa, test_copy_layouts, test_stream_stores)."""
import json
import os
import subprocess
import sys

import fastt

ORDER = ["sse2", "avx2", "avx512"]


def levels():
    """The levels this CPU runs that this build has, narrowest first."""
    info = fastt._C._cpu_isa()
    if info["supported"] == "none":
        return []
    top = ORDER.index(info["supported"])
    return [lv for lv in ORDER[:top + 1] if lv in info["built"]]


def run_child(code, isa, **env):
    """Runs `code` in a fresh interpreter at FASTT_CPU_ISA=isa (plus `env`)
    and returns the JSON its last printed line holds."""
    r = subprocess.run([sys.executable, "-c", code],
                       env=dict(os.environ, FASTT_CPU_ISA=isa, **env),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])
