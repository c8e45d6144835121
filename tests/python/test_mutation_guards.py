"""The mutation check's own tests (csrc/mutation.h, tests/mutation/run.py).

test_mutation_inert_*: a normal build carries no live planted bug. The
hooks are a compile-time false there, so the binary has no code that reads
the FASTT_MUTANT variable, and setting it changes nothing. (In a mutant
build these fail by design; the mutation runner deselects them.)

The other tests are guards: targeted checks for planted bugs that the rest
of the suite's selection let through, each one a coverage hole closed.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fastt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _mutant_names():
    sys.path.insert(0, os.path.join(ROOT, "tests", "mutation"))
    try:
        import run
    finally:
        sys.path.pop(0)
    return [row[0] for row in run.mutants()]


def test_mutation_inert_binary_has_no_mutant_switch():
    # Only a -DFASTT_MUTANTS=ON build compiles the getenv("FASTT_MUTANT")
    # reader (and its "names no mutant" message) into fastt._C.
    with open(fastt._C.__file__, "rb") as f:
        data = f.read()
    assert b"FASTT_MUTANT" not in data
    assert b"names no mutant" not in data


# One line per planted bug: each would fail here if its mutant were live.
_INERT_CHECK = textwrap.dedent("""
    import numpy as np, fastt
    a = fastt.tensor([5.0, 7.0, 9.0]); b = fastt.tensor([1.0, 2.0, 3.0])
    assert (a - b).tolist() == [4.0, 5.0, 6.0]
    assert tuple((fastt.ones(3, 1) + fastt.ones(1, 4)).shape) == (3, 4)
    assert (fastt.tensor([1, 2]) * 2.5).dtype == fastt.float32
    assert fastt.tensor([4.0, 9.0, 16.0]).sqrt().tolist() == [2.0, 3.0, 4.0]
    assert fastt.tensor([1.0, 2.0, 4.0]).sum().item() == 7.0
    x = fastt.tensor([10.0, 20.0, 30.0])
    assert fastt.index_select(x, 0, fastt.tensor([-1])).tolist() == [30.0]
    try:
        x[fastt.tensor([3])]
    except IndexError:
        pass
    else:
        raise AssertionError("index 3 of size 3 did not raise")
    p = fastt.tensor([2.0], requires_grad=True)
    q = fastt.tensor([3.0], requires_grad=True)
    (p * q).sum().backward()
    assert p.grad.tolist() == [3.0]
    r = fastt.tensor([2.0], requires_grad=True)
    y = r * 1.0
    (y + y).sum().backward()
    assert r.grad.tolist() == [2.0]
    assert tuple(fastt.ones(2, 3).sum(keepdim=True, dim=(0, 1)).shape) == (1, 1)
    w = fastt.tensor([1.0], requires_grad=True)
    e = fastt.tensor([1.0])
    z = w * e
    e.add_(1.0)
    try:
        z.sum().backward()
    except RuntimeError:
        pass
    else:
        raise AssertionError("a saved tensor modified in place went unseen")
    assert fastt.arange(6)[::2].tolist() == [0, 2, 4]
    s = fastt.softmax(fastt.tensor([1000.0, 1000.0]), dim=0)
    assert s.tolist() == [0.5, 0.5]
    print("inert")
""")


@pytest.mark.parametrize("name", _mutant_names())
def test_mutation_inert_env_var_changes_nothing(name):
    env = dict(os.environ, FASTT_MUTANT=name)
    p = subprocess.run([sys.executable, "-c", _INERT_CHECK], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "inert", (
        p.stdout + p.stderr)
