"""The vectorized math (kernels/cpu/vec_math.def, SLEEF vector functions):
every row's accuracy in ulps against a float64 reference over the whole
range (denormals, huge arguments, +-inf, nan, signed zeros), at each
instruction-set level this CPU runs (FASTT_CPU_ISA, in subprocesses), the
tails and unaligned starts of the range loop, in-place use, half and
bfloat16 through float32, and the binary rows with a broadcast value.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import fastt

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
_DEF = os.path.join(ROOT, "kernels", "cpu", "vec_math.def")


def _rows():
    rows = []
    for line in open(_DEF):
        m = re.match(r"FASTT_VM([12])\((\w+),\s*(\w+),\s*u(\d+)[,)]", line)
        if m:
            rows.append((int(m.group(1)), m.group(3), int(m.group(4)) / 10))
    return rows


ROWS = _rows()
UNARY = [(name, ulp) for k, name, ulp in ROWS if k == 1]
BINARY = [(name, ulp) for k, name, ulp in ROWS if k == 2]

# float32 exp, expm1, tanh and erf run fastt's own vec_exp.h kernels (faster
# than SLEEF's; their bound is test_vec_math.py's, about 3 ulp)
_OWN_F32 = {"exp": 3.0, "expm1": 3.0, "tanh": 3.0, "erf": 3.0}
if fastt._C._cpu_isa()["in_use"] == "avx512":
    _OWN_F32["erf"] = 1.5  # fitted pieces (vec_erf16): 1.02 measured


def _NO_FMA_SLACK():
    """SLEEF's SSE2 build has no FMA: measured up to 0.25 ulp above the
    documented bound (atan2 with a subnormal result, erfc near 9)."""
    return 0.5 if fastt._C._cpu_isa()["in_use"] == "sse2" else 0.0


def _inputs(dt):
    """Values over the whole range of dt, specials included."""
    fi = np.finfo(dt)
    rng = np.random.default_rng(7)
    mags = np.exp(rng.uniform(np.log(fi.smallest_subnormal),
                              np.log(fi.max), 20000))
    near1 = 1 - np.logspace(-8, -0.5, 400)  # erfinv's, atanh's tails
    parts = [rng.uniform(-1, 1, 20000), rng.uniform(-100, 100, 20000),
             rng.uniform(-30, 30, 20000),  # erf's, erfc's pieces
             near1, -near1,
             mags * rng.choice([-1.0, 1.0], mags.size),
             [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5,
              fi.tiny, -fi.tiny, fi.smallest_subnormal,
              -fi.smallest_subnormal, fi.max, -fi.max, np.pi, -np.pi,
              np.pi / 2, 88.7, 89.0, -103.9, 709.7, 710.0, -745.2]]
    return np.concatenate(parts).astype(dt)


def _ulp_error(got, ref64, dt, finite_only=False):
    """Max error in units of dt's spacing at the exact value; inf/nan
    results must match the reference exactly (signs included), unless
    finite_only (then only elements finite in both count)."""
    got = got.astype(np.float64)
    with np.errstate(over="ignore"):
        ref_r = ref64.astype(dt).astype(np.float64)  # overflow -> inf
    special = ~np.isfinite(ref_r) | ~np.isfinite(got)
    bad_special = special & ~((got == ref_r) | (np.isnan(got) & np.isnan(ref_r)))
    # zeros: the sign as well
    zero = (ref_r == 0) & (got == 0)
    bad_special |= zero & (np.signbit(got) != np.signbit(ref_r))
    if bad_special.any() and not finite_only:
        i = np.flatnonzero(bad_special)[0]
        return np.inf, i
    fin = ~special
    ref_dt = np.abs(ref64[fin]).astype(dt)
    with np.errstate(over="ignore"):  # (the spacing at the largest float)
        spacing = np.maximum(np.spacing(ref_dt).astype(np.float64),
                             float(np.finfo(dt).smallest_subnormal))
    err = np.abs(got[fin] - ref64[fin]) / spacing
    if err.size == 0:
        return 0.0, -1
    j = int(np.argmax(err))
    return float(err[j]), int(np.flatnonzero(fin)[j])


def _reference(name, x64, y64=None):
    """float64 reference; for a float64 input the libm value (torch's),
    which is itself within about half an ulp."""
    f = getattr(torch, name)
    if y64 is None:
        return f(torch.from_numpy(x64)).numpy()
    return f(torch.from_numpy(x64), torch.from_numpy(y64)).numpy()


def check_all():
    """Every row, float32 and float64: {row/dtype: [max ulp, bound]}."""
    out = {}
    for name, ulp in UNARY:
        for dt in (np.float32, np.float64):
            x = _inputs(dt)
            with np.errstate(all="ignore"):
                got = getattr(fastt, name)(fastt.from_numpy(x.copy())).numpy()
                ref = _reference(name, x.astype(np.float64))
            err, i = _ulp_error(got, ref, dt)
            # The row's bound (the def's ulp column: SLEEF's documented one,
            # or a composed row's). float64: it plus libm's own error in the
            # reference. float32: it or torch's own worst case (libm's, where
            # a row's domain limit sends lanes to libm) if that is larger;
            # 0.01: the float64 reference's rounding in float32 ulps.
            if dt == np.float32:
                with np.errstate(all="ignore"):
                    t32 = getattr(torch, name)(torch.from_numpy(x.copy()))
                # (torch's float32 sinh/cosh overflow early: finite only)
                torch_err, _ = _ulp_error(t32.numpy(), ref, dt, True)
                bound = max(_OWN_F32.get(name, ulp) + _NO_FMA_SLACK(),
                            torch_err) + 0.01
            else:
                bound = ulp + 1.0
            out[f"{name}/{dt.__name__}"] = [err, bound,
                                            repr(x[i]) if i >= 0 else ""]
    for name, ulp in BINARY:
        for dt in (np.float32, np.float64):
            x = _inputs(dt)
            y = np.random.default_rng(3).permutation(x)
            with np.errstate(all="ignore"):
                got = getattr(fastt, name)(fastt.from_numpy(x.copy()),
                                           fastt.from_numpy(y.copy())).numpy()
                ref = _reference(name, x.astype(np.float64),
                                 y.astype(np.float64))
            err, i = _ulp_error(got, ref, dt)
            bound = ulp + (0.01 + _NO_FMA_SLACK() if dt == np.float32
                           else 1.0)
            out[f"{name}/{dt.__name__}"] = [
                err, bound, repr((x[i], y[i])) if i >= 0 else ""]
    return out


def _supported_levels():
    order = ["sse2", "avx2", "avx512"]
    info = fastt._C._cpu_isa()
    top = info["supported"]
    if top == "none":
        return []
    return [lv for lv in order[:order.index(top) + 1] if lv in info["built"]]


def test_built_with_sleef_on_x86():
    if os.uname().machine not in ("x86_64", "AMD64"):
        pytest.skip("SLEEF's ISA builds are x86-64 only")
    info = fastt._C._cpu_isa()
    assert info["in_use"] != "none", "fastt was built without SLEEF"
    assert info["in_use"] == info["supported"]  # the widest by default
    assert fastt.backends.cpu.get_cpu_capability() in ("AVX512", "AVX2",
                                                       "DEFAULT")
    assert "CPU capability usage" in fastt.__config__.show()


def test_accuracy_at_the_level_in_use():
    bad = {k: v for k, v in check_all().items() if not v[0] <= v[1]}
    assert not bad, bad


_CHILD = """
import json, sys
sys.path.insert(0, {tests!r})
import fastt, test_vec_math_sleef as t
print(json.dumps({{"isa": fastt._C._cpu_isa()["in_use"],
                   "cap": fastt.backends.cpu.get_cpu_capability(),
                   "res": t.check_all()}}))
"""


@pytest.mark.parametrize("isa", ["sse2", "avx2"])
def test_accuracy_at_lower_isa_levels(isa):
    # CI's machines run AVX-512 or AVX2: the rows are checked at two or
    # three levels there (this one and the default above).
    if isa not in _supported_levels():
        pytest.skip(f"this CPU does not run {isa}")
    env = dict(os.environ, FASTT_CPU_ISA=isa)
    code = _CHILD.format(tests=os.path.dirname(__file__))
    r = subprocess.run([sys.executable, "-c", code], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["isa"] == isa
    assert got["cap"] == {"sse2": "DEFAULT", "avx2": "AVX2"}[isa]
    bad = {k: v for k, v in got["res"].items() if not v[0] <= v[1]}
    assert not bad, bad


_ERF_CHILD = """
import json, sys, numpy as np, fastt
x = np.array(json.loads(sys.stdin.read()))
print(json.dumps({{"isa": fastt._C._cpu_isa()["in_use"],
                   "erf": fastt.erf(fastt.from_numpy(x)).numpy().tolist(),
                   "erfc": fastt.erfc(fastt.from_numpy(x)).numpy().tolist()}}))
"""


def _erf_points():
    """Every piece of the float64 erf / erfc tables (kernels/erf_tables.inc:
    intervals of 3/8 up to 6, of 43/32 up to 27.5) densely, their ends and
    the doubles beside them, the subnormal tail, the specials."""
    rng = np.random.default_rng(11)
    ends = np.concatenate([np.arange(17) * 0.375, 6 + np.arange(17) * 43 / 32,
                           [5.92, 5.93, 5.94, 26.5, 26.55, 27.2, 27.3]])
    ends = np.concatenate([ends, np.nextafter(ends, 0),
                           np.nextafter(ends, 30)])
    x = np.concatenate([rng.uniform(0, 6, 1500), rng.uniform(6, 28, 700),
                        np.exp(rng.uniform(np.log(1e-310), 0, 200)), ends])
    x = np.concatenate([x, -x])
    return np.concatenate([x, [0.0, np.inf, np.nan, 5e-324, 1e-300]])


@pytest.mark.parametrize("isa", ["sse2", "avx2", "avx512"])
def test_float64_erf_erfc_against_mpmath(isa):
    # fastt's own float64 kernels (own_erf_D, own_erfc_D) hold the row's
    # bound against the exact value (SSE2 runs glibc's, lane by lane)
    if isa not in _supported_levels():
        pytest.skip(f"this CPU does not run {isa}")
    import mpmath
    x = _erf_points()
    r = subprocess.run([sys.executable, "-c", _ERF_CHILD.format()],
                       input=json.dumps(x.tolist()),
                       env=dict(os.environ, FASTT_CPU_ISA=isa),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["isa"] == isa
    bounds = dict(UNARY)
    for name in ("erf", "erfc"):
        g = np.array(got[name], dtype=np.float64)
        f = getattr(mpmath, name)
        worst = (0.0, None)
        with mpmath.workdps(40):
            for xi, gi in zip(x, g):
                if np.isnan(xi):
                    assert np.isnan(gi), (name, gi)
                    continue
                ref = f(mpmath.mpf(float(xi)))
                if not np.isfinite(xi) or ref == 0:
                    assert gi == float(ref), (name, xi, gi)
                    continue
                sp = max(np.spacing(abs(float(ref))), 5e-324)
                err = float(abs(mpmath.mpf(float(gi)) - ref)) / sp
                worst = max(worst, (err, xi), key=lambda t: t[0])
        bound = bounds[name] + (1.0 if isa == "sse2" else 0.0)  # glibc's
        assert worst[0] <= bound, (name, isa, worst)


def test_cpu_isa_env_errors_warn_and_fall_back():
    code = ("import warnings, fastt; "
            "print(fastt._C._cpu_isa()['in_use'])")
    r = subprocess.run([sys.executable, "-W", "always", "-c", code],
                       env=dict(os.environ, FASTT_CPU_ISA="avx1024"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "FASTT_CPU_ISA=avx1024 is not one of" in r.stderr
    assert r.stdout.strip() == fastt._C._cpu_isa()["supported"]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["exp", "log1p", "sin", "tanh", "erf",
                                  "erfc"])
def test_tails_offsets_and_in_place(name, dt):
    x = np.random.default_rng(1).uniform(0.05, 0.95, 200).astype(dt)
    f = getattr(fastt, name)
    # the row's bound (fastt's own float32 kernels: theirs) and torch's
    # own error, in units of dt's epsilon
    ulp = dict(UNARY)[name]
    if dt == np.float32:
        ulp = _OWN_F32.get(name, ulp)
    tol = dict(rtol=(ulp + 1) * float(np.finfo(dt).eps), atol=0)
    for n in list(range(0, 40)) + [63, 64, 65, 127, 129]:
        for start in (0, 1, 3):
            seg = x[start:start + n]
            fx = fastt.from_numpy(x.copy())[start:start + n]  # unaligned
            want = getattr(torch, name)(torch.from_numpy(seg.copy())).numpy()
            np.testing.assert_allclose(f(fx).numpy(), want, **tol)
            y = fx.clone()
            getattr(y, name + "_")()
            np.testing.assert_allclose(y.numpy(), want, **tol)


def test_large_ranges_split_across_threads():
    x = np.random.default_rng(2).uniform(-3, 3, 300001).astype(np.float32)
    for name in ("log1p", "atan", "erfc", "sinh"):
        with np.errstate(all="ignore"):
            got = getattr(fastt, name)(fastt.from_numpy(x.copy())).numpy()
            ref = getattr(torch, name)(torch.from_numpy(x.astype(np.float64)))
        err, _ = _ulp_error(got, ref.numpy(), np.float32)
        # the row's bound (the def's ulp column; fastt's own kernels' where
        # float32 runs one)
        bound = _OWN_F32.get(name, dict(UNARY)[name])
        assert err <= bound + 0.01 + _NO_FMA_SLACK(), (name, err)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", [n for n, _ in UNARY])
def test_half_types_go_through_float32(name, dt):
    x = torch.linspace(-4, 4, 1001).to(getattr(torch, dt))
    if name in ("acosh",):
        x = x.abs() + 1
    if name in ("asin", "acos", "atanh", "erfinv"):
        x = x / 4.5
    fx = fastt.from_dlpack(x.clone())
    got = torch.from_dlpack(getattr(fastt, name)(fx)).float()
    # torch computes in float32 too and rounds once: the same result but
    # where float32's last bit decides the rounding
    want = getattr(torch, name)(x).float()
    close = torch.isclose(got, want, rtol=8e-3 if dt == "float16" else 1.6e-2,
                          atol=1e-5, equal_nan=True)
    assert bool(close.all()), (name, x[~close][:4], got[~close][:4],
                               want[~close][:4])


@pytest.mark.parametrize("dt", [torch.float32, torch.float64,
                                torch.bfloat16])
def test_binary_rows_with_broadcast_values(dt):
    rng = torch.Generator().manual_seed(5)
    x = (torch.rand(1000, generator=rng) * 4 + 0.01).to(dt)
    y = (torch.rand(1000, generator=rng) * 6 - 3).to(dt)
    fx, fy = fastt.from_dlpack(x.clone()), fastt.from_dlpack(y.clone())
    tol = {torch.float32: 2e-6, torch.float64: 1e-14, torch.bfloat16: 1e-2}[dt]

    def same(a, b):
        torch.testing.assert_close(torch.from_dlpack(a), b, rtol=tol,
                                   atol=0, equal_nan=True)
    same(fastt.pow(fx, fy), torch.pow(x, y))
    same(fastt.pow(fx, 2.7), torch.pow(x, 2.7))          # tensor ** value
    same(fastt.pow(1.7, fy), torch.pow(1.7, y))          # value ** tensor
    same(fastt.atan2(fy, fx), torch.atan2(y, x))
    same(fastt.atan2(fy, fx[:1]), torch.atan2(y, x[:1]))  # broadcast
    same(fastt.atan2(fy[::2], fx[::2]), torch.atan2(y[::2], x[::2]))
    z = fx.clone()
    z.pow_(fy)                                           # in place
    same(z, torch.pow(x, y))
