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


# A few names spread over the list: the binary check above already shows
# that nothing reads the variable; a process each costs about a second.
@pytest.mark.parametrize("name", _mutant_names()[::5])
def test_mutation_inert_env_var_changes_nothing(name):
    env = dict(os.environ, FASTT_MUTANT=name)
    p = subprocess.run([sys.executable, "-c", _INERT_CHECK], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "inert", (
        p.stdout + p.stderr)


# ------------------------------------------------------------- guards --
# Each closes a hole the mutation check found: the planted bug named in
# the comment survived the rest of the selection.

def _np(t):
    return np.asarray(t.tolist())


# IndexNegWrapOffByOne: negative indices in the direct index kernel
# (index_select, 1-D gather, x[idx] on a dense source) wrapped to size-2.
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_guard_negative_indices_wrap_to_the_end(dim):
    a = np.arange(20.0).reshape(4, 5)
    x = fastt.tensor(a)
    n = a.shape[dim]
    idx = [-1, 0, -n, n - 1, -2]
    got = fastt.index_select(x, dim, fastt.tensor(idx))
    np.testing.assert_array_equal(_np(got), np.take(a, idx, axis=dim))
    np.testing.assert_array_equal(_np(x[fastt.tensor([-1, -4, 2])]),
                                  a[[-1, -4, 2]])
    v = fastt.tensor(a[0])
    np.testing.assert_array_equal(
        _np(fastt.gather(v, 0, fastt.tensor([-1, -5, 3]))), a[0][[-1, -5, 3]])


# IndexRangeOffByOne: the range check let index == size through (one
# element past the end was read, or written).
def test_guard_index_bounds_are_exact():
    x = fastt.tensor(np.arange(12.0).reshape(3, 4))
    for bad in (3, -4):
        with pytest.raises(IndexError):
            x[fastt.tensor([bad])]
        with pytest.raises(IndexError):
            fastt.index_select(x, 0, fastt.tensor([0, bad]))
        with pytest.raises(IndexError):
            x[fastt.tensor([bad])] = 1.0
    for bad in (4, -5):
        with pytest.raises(RuntimeError):  # torch's class for gather
            fastt.gather(x, 1, fastt.tensor([[bad], [0], [1]]))
        with pytest.raises(IndexError):
            x[:, fastt.tensor([bad])]
    # The edges themselves are valid.
    assert x[fastt.tensor([2, -3])].tolist() == [[8.0, 9.0, 10.0, 11.0],
                                                 [0.0, 1.0, 2.0, 3.0]]


# KeepdimFullDrop: keepdim=True was ignored when the dims cover the whole
# tensor (a 1-D tensor's only dim, or every dim listed).
@pytest.mark.parametrize("shape", [(5,), (2, 3)])
def test_guard_keepdim_over_every_dim(shape):
    a = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    x = fastt.tensor(a)
    dims = tuple(range(len(shape)))
    want = (1,) * len(shape)
    for name in ("sum", "mean", "amax", "amin", "logsumexp"):
        got = getattr(x, name)(dim=dims, keepdim=True)
        assert tuple(got.shape) == want, name
    assert tuple(x.var(dim=dims, keepdim=True).shape) == want
    if len(shape) == 1:
        for name in ("prod", "argmax", "cumsum"):
            got = getattr(x, name)(0, keepdim=True) if name != "cumsum" \
                else x.cumsum(0)
            assert tuple(got.shape) == (want if name != "cumsum" else shape)
        values, indices = x.max(0, keepdim=True)
        assert tuple(values.shape) == want and tuple(indices.shape) == want
    np.testing.assert_allclose(_np(x.sum(dim=dims, keepdim=True)),
                               a.sum(keepdims=True))
