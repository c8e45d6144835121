"""Hypothesis property tests against NumPy: broadcasting, basic and
advanced indexing, reductions over random dims.

Settings are per test (SETTINGS), never a profile loaded here: a profile
loaded at import would replace conftest's "ci" profile (derandomize=True,
database=None) for every module imported after this one."""
import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fastt

# Unset fields come from the active profile ("ci" under CI=true).
SETTINGS = settings(max_examples=150, deadline=None)

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)
floats = st.floats(-100, 100, width=32)


@SETTINGS
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4,
                                         max_side=5),
       st.sampled_from(["add", "mul", "sub", "maximum", "lt"]))
def test_broadcasting_matches_numpy(shapes_, name):
    sa, sb = shapes_.input_shapes
    rng = np.random.default_rng(0)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    ref = {"add": np.add, "mul": np.multiply, "sub": np.subtract,
           "maximum": np.maximum, "lt": np.less}[name](a, b)
    out = getattr(fastt, name)(fastt.tensor(a), fastt.tensor(b))
    assert tuple(out.shape) == np.shape(ref)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)


@SETTINGS
@given(hnp.arrays(np.float32, shapes, elements=floats), st.data())
def test_basic_indexing_matches_numpy(a, data):
    index = data.draw(hnp.basic_indices(a.shape, allow_newaxis=True))
    if isinstance(index, slice) or (isinstance(index, tuple) and any(
            isinstance(i, slice) and (i.step or 1) < 0 for i in index)):
        steps = [index] if isinstance(index, slice) else index
        if any(isinstance(i, slice) and (i.step or 1) < 0 for i in steps):
            return  # negative steps are not supported (as in torch)
    t = fastt.from_numpy(a)
    got = t[index]
    exp = a[index]
    assert tuple(got.shape) == np.shape(exp)
    np.testing.assert_array_equal(got.numpy(), exp)
    # assignment through the same index writes the same elements
    b = a.copy()
    u = fastt.tensor(b)
    u[index] = 1.5
    b[index] = 1.5
    np.testing.assert_array_equal(u.numpy(), b)


@SETTINGS
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3,
                                                min_side=1, max_side=6),
                  elements=floats), st.data())
def test_advanced_indexing_matches_numpy(a, data):
    d0 = a.shape[0]
    idx = data.draw(st.lists(st.integers(-d0, d0 - 1), min_size=0,
                             max_size=6))
    t = fastt.from_numpy(a)
    got = t[fastt.tensor(idx, dtype=fastt.int64)]
    np.testing.assert_array_equal(got.numpy(), a[np.array(idx, np.int64)])
    mask = data.draw(hnp.arrays(np.bool_, a.shape))
    np.testing.assert_array_equal(t[fastt.from_numpy(mask)].numpy(), a[mask])


@SETTINGS
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=4,
                                                min_side=1, max_side=5),
                  elements=st.floats(-10, 10)), st.data(),
       st.booleans(), st.sampled_from(["sum", "mean", "amax", "amin"]))
def test_reductions_match_numpy(a, data, keepdim, name):
    dims = data.draw(st.lists(st.integers(0, a.ndim - 1), unique=True,
                              min_size=1, max_size=a.ndim))
    t = fastt.from_numpy(a)
    out = getattr(t, name)(dim=tuple(dims), keepdim=keepdim)
    ref = {"sum": np.sum, "mean": np.mean, "amax": np.max,
           "amin": np.min}[name](a, axis=tuple(dims), keepdims=keepdim)
    assert tuple(out.shape) == np.shape(ref)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-10)


def test_hypothesis_tests_are_derandomized_under_ci():
    """Under CI every hypothesis test here replays a fixed example sequence
    (conftest's "ci" profile), so a red run reproduces."""
    tests = [f for f in globals().values()
             if getattr(f, "is_hypothesis_test", False)]
    assert len(tests) == 4
    for f in tests:
        s = f._hypothesis_internal_use_settings
        assert s.deadline is None and s.max_examples == 150, f.__name__
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            assert s.derandomize and s.database is None, f.__name__
