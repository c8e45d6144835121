"""The per-ISA kernel families (kernels/registry.def, CMakeLists.txt): the
copy, elementwise, reduction, softmax, norm, loss, optimizer and RNN kernels
are compiled once per instruction-set level and FASTT_CPU_ISA picks one at
load. At every level this CPU runs, a child process computes one op of each
family (forward and backward) and the results must match torch's. The op
suites run again at a lower level in CI (scripts/test.sh); the C++ suite at
every level (tests/cpp/CMakeLists.txt), with the check that each level
registers the same kernels, each its own copy (test_dispatch.cpp)."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import fastt
from isa_levels import ORDER, levels as _levels, run_child


# Runs in the child (fastt only) and in the parent (torch): `lib` is the
# module, the result a dict of name -> flat list of floats.
_BATTERY = r'''
def battery(lib):
    import numpy as np
    rng = np.random.default_rng(5)
    a = rng.standard_normal((37, 129)).astype(np.float32)
    b = rng.standard_normal((37, 129)).astype(np.float32)
    t = rng.integers(0, 129, 37)
    out = {}
    def T(x, grad=False):
        v = lib.tensor(x)
        return v.requires_grad_() if grad else v
    def put(name, v):
        out[name] = np.asarray(v.detach().double().numpy()).ravel().tolist()
    x, y = T(a), T(b)
    put("copy_t", x.t().contiguous())
    put("copy_half", x.half().float())
    put("copy_bf16", x.to(lib.bfloat16).float())
    put("exp", x.exp()); put("tanh", x.tanh()); put("log1p", x.abs().log1p())
    put("sigmoid", x.sigmoid()); put("erf", x.erf())
    put("gelu", lib.nn.functional.gelu(x))
    put("add", x + y); put("mul", x * y); put("div", x / (y.abs() + 1))
    put("pow", x.abs().pow(y)); put("atan2", lib.atan2(x, y))
    put("maximum", lib.maximum(x, y))
    put("addcmul", lib.addcmul(x, x, y, value=0.5))
    put("where", lib.where(x > 0, x, y)); put("clamp", x.clamp(-1, 1))
    put("sum", x.sum(1)); put("mean0", x.mean(0)); put("amax", x.amax(1))
    put("argmax", x.argmax(1)); put("var", x.var(1)); put("norm", x.norm(dim=1))
    put("logsumexp", x.logsumexp(1)); put("cumsum", x.cumsum(1))
    put("softmax", x.softmax(1)); put("log_softmax", x.log_softmax(0))
    ln = lib.nn.functional.layer_norm(x, (129,))
    put("layer_norm", ln)
    put("rms_norm", lib.nn.functional.rms_norm(x, (129,)))
    put("cross_entropy", lib.nn.functional.cross_entropy(x, lib.tensor(t)))
    put("mse", lib.nn.functional.mse_loss(x, y))
    # backward through the families
    xg = T(a, True)
    loss = (lib.nn.functional.gelu(xg).softmax(1) * T(b)).sum() + \
        lib.nn.functional.layer_norm(xg, (129,)).tanh().sum() + \
        lib.nn.functional.cross_entropy(xg, lib.tensor(t))
    loss.backward()
    put("backward", xg.grad)
    # an optimizer step (fused kernels) and an LSTM cell
    lib.manual_seed(0)
    p = T(a, True)
    opt = lib.optim.AdamW([p], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
    put("adamw", p)
    # float16 / bfloat16 through float32 blocks (F16C at AVX2 and up), with
    # the edge values: inf, nan, overflow past 65504, subnormals, -0.
    sp = np.array([np.nan, np.inf, -np.inf, 7e4, -7e4, 3e-6, -2e-7, -0.0,
                   65504.0, 6.1e-5], np.float32)
    e = np.concatenate([sp, a.ravel()[:1000] * 3])
    for dt in ("float16", "bfloat16"):
        h = lib.tensor(e).to(getattr(lib, dt))
        h2 = lib.tensor(e[::-1].copy()).to(getattr(lib, dt))
        put(f"{dt} add", (h + h2).float()); put(f"{dt} mul", (h * h2).float())
        put(f"{dt} neg", (-h).float()); put(f"{dt} exp", h.exp().float())
        # gelu(±inf), also of ±7e4 (inf in float16): torch's kernels give
        # nan or inf by dtype and CPU (nan in float32 too with AVX-512);
        # compared on the rest
        put(f"{dt} gelu", lib.nn.functional.gelu(h[5:]).float())
        put(f"{dt} sigmoid", h.sigmoid().float())
        put(f"{dt} tanh", h.tanh().float())
    # per-row folds of short and ragged rows (reduce_spans.h), with a NaN
    # in one row, and 16-bit whole-tensor and per-row sums and max
    r = a.ravel()[:4000].reshape(40, 100).copy()
    r[7, 63] = np.nan
    xr = T(r)
    put("rows amax", xr.amax(1)); put("rows amin", xr[:, :70].amin(1))
    put("rows sum", xr.sum(1)); put("rows mean 33", xr[:, :33].mean(1))
    for dt in ("float16", "bfloat16"):
        h = lib.tensor(a).to(getattr(lib, dt))
        put(f"{dt} sum", h.sum().float()); put(f"{dt} amax", h.amax().float())
        put(f"{dt} rows sum", h.sum(1).float())
        put(f"{dt} rows amax", h.amax(1).float())
    cell = lib.nn.LSTMCell(8, 4)
    with lib.no_grad():
        cell.weight_ih.copy_(T(a[:16, :8].copy()))
        cell.weight_hh.copy_(T(b[:16, :4].copy()))
        cell.bias_ih.zero_()
        cell.bias_hh.copy_(T(b[20, :16].copy()))
    h, c = cell(T(a[:5, :8].copy()), (T(b[:5, :4].copy()),
                                      T(a[5:10, :4].copy())))
    put("lstm_h", h); put("lstm_c", c)
    return out
'''

_CHILD = """
import json, sys
import fastt
{battery}
res = battery(fastt)
print(json.dumps({{"isa": fastt._C._cpu_isa()["in_use"], "res": res}}))
"""

# float32 throughout; the transcendental rows are within a few ulp of
# torch's (test_vec_math_sleef.py holds the exact bounds), the reductions
# differ in summation order.
_TOL = dict(rtol=2e-5, atol=2e-5)


def _torch_results():
    ns = {}
    exec(_BATTERY, ns)
    return ns["battery"](torch)


@pytest.fixture(scope="module")
def want():
    return _torch_results()


@pytest.mark.parametrize("isa", ORDER)
def test_families_match_torch_at_each_level(isa, want):
    if isa not in _levels():
        pytest.skip(f"this CPU does not run {isa}")
    got = run_child(_CHILD.format(battery=_BATTERY), isa)
    assert got["isa"] == isa
    res = got["res"]
    assert set(res) == set(want), set(res) ^ set(want)
    for name in sorted(want):
        tol = _TOL
        if name.startswith("float16"):  # one float16 ulp (2^-10)
            tol = dict(rtol=2e-3, atol=1e-6)
        elif name.startswith("bfloat16"):  # one bfloat16 ulp (2^-7)
            tol = dict(rtol=1.6e-2, atol=1e-6)
        np.testing.assert_allclose(np.array(res[name]), np.array(want[name]),
                                   err_msg=f"{name} at {isa}", **tol)


def test_level_reported_and_built():
    info = fastt._C._cpu_isa()
    assert info["in_use"] in info["built"] or info["in_use"] == "none"
    if os.uname().machine == "x86_64" and info["in_use"] != "none":
        assert "sse2" in info["built"] or len(info["built"]) == 1
        # the default is the widest the CPU runs among those built
        assert info["in_use"] == info["supported"]


def test_request_above_the_build_or_cpu_warns():
    levels = _levels()
    if not levels:
        pytest.skip("no per-ISA kernel families in this build (not x86-64)")
    code = "import fastt; print(fastt._C._cpu_isa()['in_use'])"
    r = subprocess.run([sys.executable, "-W", "always", "-c", code],
                       env=dict(os.environ, FASTT_CPU_ISA="avx512"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == levels[-1]
    if levels[-1] != "avx512":
        assert "FASTT_CPU_ISA=avx512" in r.stderr
