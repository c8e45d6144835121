"""torch's OpInfo database against fastt (tests/python/opinfo_harness.py).

Every op name on opinfo_pass.txt must keep passing in full: every
non-complex sample forward (values, dtype, shape), backward (gradients vs
torch's) and every error input (same error class); every name on
opinfo_complex_pass.txt, every complex64/complex128 sample forward and
backward. The full runs over all 636 names, with the reports of what fails
and why, are
    PYTHONPATH=python python3 scripts/opinfo_report.py [--update]
    PYTHONPATH=python python3 scripts/opinfo_report.py --complex [--update]
"""
import os

import pytest

import fastt
import opinfo_harness as H

HERE = os.path.dirname(os.path.abspath(__file__))


def _pass_list(file):
    with open(os.path.join(HERE, file)) as f:
        return [ln.strip() for ln in f
                if ln.strip() and not ln.startswith("#")]


PASSING = _pass_list("opinfo_pass.txt")
COMPLEX_PASSING = _pass_list("opinfo_complex_pass.txt")


@pytest.mark.parametrize("name", PASSING)
def test_opinfo_passes(name):
    r = H.run_name(name)
    assert r.status == "pass", f"{name}: {r.status}: {r.first}"
    assert r.fwd.passed > 0


@pytest.mark.parametrize("name", COMPLEX_PASSING)
def test_opinfo_complex_samples_pass(name):
    r = H.run_name(name, complex=True)
    assert r.status == "pass", f"{name}: {r.status}: {r.first}"
    assert r.fwd.passed > 0


@pytest.mark.parametrize("names", [PASSING, COMPLEX_PASSING])
def test_pass_list_names_exist_and_are_sorted(names):
    known = set(H.all_names())
    assert [n for n in names if n not in known] == []
    assert names == sorted(set(names))


# ---- the harness itself must see what it claims to check ----

def test_harness_sees_a_wrong_value(monkeypatch):
    monkeypatch.setattr(fastt, "abs", lambda x, *a, **k: fastt.neg(x))
    r = H.run_name("abs")
    assert r.status == "wrong" and "function" in r.first


def test_harness_sees_a_wrong_gradient(monkeypatch):
    real = fastt.sin

    def sin(x, *a, **k):  # right values, gradient cut
        return real(x.detach()) + 0 * x
    monkeypatch.setattr(fastt, "sin", sin)
    r = H.run_name("sin")
    assert r.status == "wrong" and r.first.startswith("backward"), r.first


def test_complex_run_sees_a_wrong_complex_value(monkeypatch):
    real = fastt.exp

    def exp(x, *a, **k):  # right real parts, imaginary parts negated
        y = real(x, *a, **k)
        return y.conj_physical() if y.is_complex() else y
    monkeypatch.setattr(fastt, "exp", exp)
    assert H.run_name("exp").status == "pass"  # the real run cannot see it
    r = H.run_name("exp", complex=True)
    assert r.status == "wrong" and "function complex" in r.first, r.first


def test_harness_sees_a_wrong_dtype(monkeypatch):
    real = fastt.sigmoid
    monkeypatch.setattr(fastt, "sigmoid",
                        lambda x, *a, **k: real(x.double()))
    r = H.run_name("sigmoid")
    assert r.status == "wrong" and "dtype" in r.first, r.first


def test_harness_sees_a_missing_op(monkeypatch):
    monkeypatch.delattr(fastt, "hypot")
    r = H.run_name("hypot")
    assert r.status == "missing" and "fastt.hypot" in r.missing


def test_harness_sees_an_error_and_a_missed_error(monkeypatch):
    def bad(*a, **k):
        raise RuntimeError("boom")
    monkeypatch.setattr(fastt, "cos", bad)
    assert H.run_name("cos").status == "error"
    # amax's error inputs: fastt must raise where torch does
    real = fastt.amax

    def amax(*a, **k):
        try:
            return real(*a, **k)
        except Exception:
            return fastt.zeros(())
    monkeypatch.setattr(fastt, "amax", amax)
    r = H.run_name("amax")
    assert r.status == "wrong" and r.first.startswith("error input"), \
        r.first


def test_harness_rebinds_torch_in_wrapper_lambdas():
    # `T` is `lambda x: x.T` in op_db; `__radd__` a Tensor method
    assert H.run_name("T").status == "pass"
    assert H.run_name("__radd__").status == "pass"
