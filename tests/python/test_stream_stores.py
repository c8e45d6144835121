"""Elementwise outputs written around the cache (kernels/cpu/loop.h,
dense_out / stream_out): past cpu_isa::g_stream_store_bytes the dense loops
write with non-temporal stores, a block of one vector at a time after plain
stores up to the first aligned address. Checked bit for bit against NumPy
with the threshold forced down to 1 byte, so every run of 1024 or more
elements streams: unary, binary, ternary, fills, number operands, every element
size, outputs that start off the vector alignment (out= slices, in-place
ops on slices), lengths around the block and run edges, two threads. Each
check also asserts the streaming code ran (its run counter moved), so a
battery that silently took the plain loop fails. The block width differs
per ISA level, so the battery runs in a child at every level as well."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fastt
from isa_levels import levels as _levels, run_child

# Runs here and in the children: returns a list of failure descriptions.
_BATTERY = r'''
def battery():
    import numpy as np
    import fastt
    rng = np.random.default_rng(11)
    bad = []

    def runs():
        return fastt._C._stream_stores()[1]

    def check(name, fn, want, streams=True):
        before = runs()
        got = fn()
        moved = runs() - before
        got = got.numpy() if hasattr(got, "numpy") else got
        want = np.asarray(want)
        if got.shape != want.shape or got.dtype != want.dtype:
            bad.append(f"{name}: {got.dtype}{got.shape} vs "
                       f"{want.dtype}{want.shape}")
        elif not np.array_equal(got, want, equal_nan=True):
            i = np.flatnonzero(got.ravel() != want.ravel())[:3]
            bad.append(f"{name}: differs at {i.tolist()}")
        if streams and moved == 0:
            bad.append(f"{name}: the streaming path did not run")

    def make(n, dt):
        if dt == "bool":
            return rng.integers(0, 2, n) == 1
        if np.issubdtype(np.dtype(dt), np.integer):
            info = np.iinfo(dt)
            return rng.integers(info.min, info.max, n, dtype=dt,
                                endpoint=True)
        v = rng.standard_normal(n).astype(dt)
        v[::97] = 0.0
        v[5::211] = -0.0
        v[7::307] = np.inf
        v[11::401] = np.nan
        return v

    # around the run minimum (1024) and the 16/32-byte blocks
    lengths = [1024, 1025, 1031, 2055, 4099, 20011]
    for n in lengths:
        for dt in ["float32", "float64"]:
            a, b = make(n, dt), make(n, dt)
            fa, fb = fastt.from_numpy(a), fastt.from_numpy(b)
            with np.errstate(all="ignore"):
                check(f"{dt} add {n}", lambda: fa + fb, a + b)
                check(f"{dt} mul number {n}", lambda: fa * 2.5,
                      a * np.asarray(2.5, dt))
                check(f"{dt} rsub number {n}", lambda: 1.5 - fa,
                      np.asarray(1.5, dt) - a)
                check(f"{dt} neg {n}", lambda: -fa, -a)
                check(f"{dt} relu {n}", lambda: fa.relu(),
                      np.where(np.isnan(a) | (a > 0), a, np.zeros_like(a)))
                check(f"{dt} gt {n}", lambda: fa > fb, a > b)
                check(f"{dt} clamp numbers {n}", lambda: fa.clamp(-0.5, 0.5),
                      np.where(np.isnan(a), a, np.clip(a, -0.5, 0.5)))
                c = make(n, "bool")
                fc = fastt.from_numpy(c)
                check(f"{dt} where {n}", lambda: fastt.where(fc, fa, fb),
                      np.where(c, a, b))
                check(f"{dt} where number {n}",
                      lambda: fastt.where(fc, fa, 0.0),
                      np.where(c, a, np.zeros_like(a)))
        for dt in ["int8", "uint8", "int16", "int32", "int64"]:
            a, b = make(n, dt), make(n, dt)
            fa, fb = fastt.from_numpy(a), fastt.from_numpy(b)
            check(f"{dt} add {n}", lambda: fa + fb, a + b)
            check(f"{dt} mul number {n}", lambda: fa * 3,
                  a * np.asarray(3, dt))
        a, b = make(n, "bool"), make(n, "bool")
        fa, fb = fastt.from_numpy(a), fastt.from_numpy(b)
        check(f"bool and {n}", lambda: fa & fb, a & b)
        for dt, v in [("float32", -1.25), ("float64", 3.5), ("int8", -7),
                      ("int16", 300), ("int64", -(2**40)), ("bool", True)]:
            check(f"{dt} full {n}",
                  lambda: fastt.full((n,), v, dtype=getattr(fastt, dt)),
                  np.full(n, v, dtype=dt))
        x = fastt.zeros(n + 5)
        want = np.zeros(n + 5, "float32")
        want[3:] = 2.0

        def fill_slice():
            x[3:].fill_(2.0)
            return x
        check(f"float32 fill_ offset slice {n}", fill_slice, want)

    # outputs off the block alignment: out= into slices, in place on slices
    n = 5003
    for dt in ["float32", "float64", "int16", "int8"]:
        a, b = make(n, dt), make(n, dt)
        fa, fb = fastt.from_numpy(a), fastt.from_numpy(b)
        for off in [1, 2, 3, 5, 7]:
            buf = fastt.zeros(n + 8, dtype=getattr(fastt, dt))
            want = np.zeros(n + 8, dt)
            want[off:off + n - off] = a[off:] + b[off:]
            check(f"{dt} add out= offset {off}",
                  lambda: (fastt.add(fa[off:], fb[off:],
                                     out=buf[off:off + n - off]), buf)[1],
                  want)
            x = fastt.from_numpy(a.copy())
            want = a.copy()
            want[off:] += b[off:]

            def inplace():
                x[off:] += fb[off:]
                return x
            check(f"{dt} in place offset {off}", inplace, want)

    # two threads: the range splits at points off the block alignment
    fastt.set_num_threads(2)
    n = 70001
    a, b = make(n, "float32"), make(n, "float32")
    fa, fb = fastt.from_numpy(a), fastt.from_numpy(b)
    check("float32 add 2 threads", lambda: fa + fb, a + b)
    check("float32 sub 2 threads offset",
          lambda: fa[3:] - fb[:-3], a[3:] - b[:-3])
    # short runs (a [rows, 1000] + [1000] broadcast: runs under 1024 stay
    # plain even when the whole op is past the threshold)
    a2 = make(64 * 1000, "float32").reshape(64, 1000)
    r = make(1000, "float32")
    check("float32 broadcast rows of 1000",
          lambda: fastt.from_numpy(a2) + fastt.from_numpy(r), a2 + r,
          streams=False)
    return bad
'''




def _no_x86():
    return fastt._C._cpu_isa()["supported"] == "none"


@pytest.fixture
def streaming_everything():
    old = fastt._C._stream_stores()[0]
    threads = fastt.get_num_threads()
    fastt._C._stream_stores(1)
    yield
    fastt._C._stream_stores(old)
    fastt.set_num_threads(threads)


def test_stream_stores_bit_exact(streaming_everything):
    if _no_x86():
        pytest.skip("no non-temporal stores off x86-64")
    ns = {}
    exec(_BATTERY, ns)
    assert ns["battery"]() == []


@pytest.mark.parametrize("isa", ["sse2", "avx2", "avx512"])
def test_stream_stores_bit_exact_at_each_level(isa):
    if isa not in _levels():
        pytest.skip(f"this CPU or build does not run {isa}")
    code = _BATTERY + (
        "\nimport json, fastt\n"
        "print(json.dumps([fastt._C._cpu_isa()['in_use'], "
        "fastt._C._stream_stores()[0], battery()]))\n")
    level, threshold, bad = run_child(code, isa, FASTT_STREAM_STORE_BYTES="1")
    assert (level, threshold) == (isa, 1)
    assert bad == []


def _child(env_value, code):
    env = dict(os.environ)
    env.pop("FASTT_STREAM_STORE_BYTES", None)
    if env_value is not None:
        env["FASTT_STREAM_STORE_BYTES"] = env_value
    r = subprocess.run([sys.executable, "-c", code], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


_PROBE = (
    "import json, fastt\n"
    "t0, r0, llc = fastt._C._stream_stores()\n"
    "x = fastt.ones(1 << 22)\n"
    "y = x + x\n"
    "print(json.dumps([t0, fastt._C._stream_stores()[1] - r0, llc,"
    " float(y[5])]))\n")


def test_threshold_from_the_cache_and_the_environment():
    t, moved, llc, v = _child(None, _PROBE)
    assert v == 2.0
    # the last-level cache's size (32 MiB when it is unknown)
    assert t == (llc if llc > 0 else 32 << 20)
    # 4M float32: 48 MB moved by the add
    assert (moved > 0) == (not _no_x86() and 3 * 4 * (1 << 22) >= t)
    t, moved, _, v = _child("0", _PROBE)  # 0: never
    assert (t, moved, v) == (2**63 - 1, 0, 2.0)
    t, moved, _, v = _child("4096", _PROBE)
    assert t == 4096 and v == 2.0
    assert (moved > 0) == (not _no_x86())
    t, _, llc, _ = _child("lots", _PROBE)  # not a number: the default
    assert t == (llc if llc > 0 else 32 << 20)
