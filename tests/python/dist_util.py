"""Runs a piece of code on N ranks of a fastt.distributed job (one
subprocess each, a TCP rendezvous on a free port) and returns what each
rank left in `result`. Used by test_distributed.py and test_ddp.py."""

import os
import pickle
import socket
import subprocess
import sys
import textwrap

import fastt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# The ranks import the fastt this process imported (the emulated CUDA
# build's package under scripts/cuda_emu_test.sh).
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(
    fastt.__file__)))

_PRELUDE = """
import os, pickle, sys, traceback
import fastt
import fastt.distributed as dist
rank = int(os.environ["RANK"])
ws = int(os.environ["WORLD_SIZE"])
result = None
try:
{body}
    out = ("ok", result)
except BaseException as e:
    out = ("error", f"{{type(e).__name__}}: {{e}}\\n" +
           traceback.format_exc())
with open(sys.argv[1], "wb") as f:
    pickle.dump(out, f)
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(body, n, tmp_path, timeout=90, env=None, expect_ok=True):
    """Runs `body` (indented by the caller or not) on ranks 0..n-1 with
    RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set; returns the list of
    per-rank ("ok", result) / ("error", text) pairs (or, by default,
    the results, failing on any error)."""
    code = _PRELUDE.format(body=textwrap.indent(textwrap.dedent(body),
                                                "    "))
    script = tmp_path / f"rank_body_{free_port()}.py"
    script.write_text(code)
    port = free_port()
    procs = []
    for r in range(n):
        e = dict(os.environ, RANK=str(r), WORLD_SIZE=str(n),
                 LOCAL_RANK=str(r), MASTER_ADDR="127.0.0.1",
                 MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                 PYTHONPATH=PKG_PARENT)
        e.update(env or {})
        out = tmp_path / f"out_{port}_{r}.pkl"
        procs.append((subprocess.Popen(
            [sys.executable, str(script), str(out)], env=e,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT), out))
    results = []
    for p, out in procs:
        try:
            text = p.communicate(timeout=timeout)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            for q, _ in procs:
                q.kill()
            raise AssertionError(f"ranks did not finish in {timeout} s")
        if not out.exists():
            results.append(("error", f"exit {p.returncode}: {text}"))
        else:
            with open(out, "rb") as f:
                results.append(pickle.load(f))
    if not expect_ok:
        return results
    errors = [f"rank {r}: {x[1]}" for r, x in enumerate(results)
              if x[0] != "ok"]
    assert not errors, "\n".join(errors)
    return [x[1] for x in results]
