"""The dense reduction folds (kernels/cpu/reduce_spans.h, reduce_dense.h):
per-row sums and max/min over contiguous rows go through 64-lane float
folds, float16/bfloat16 rows and whole tensors are converted into the same
lanes. Checked against torch and float64 references for every row length
around the lane and block edges, NaN/inf in every position class (first,
a lane, the tail), strided rows (the generic path) and two threads. The
op files run again at the SSE2 level in CI (scripts/test.sh), and
test_cpu_isa.py's battery holds short-row cases at every level."""
import numpy as np
import pytest
import torch

import fastt

LENGTHS = [1, 5, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 255, 256, 257, 1000,
           2049, 16384, 16385]
DTYPES = ["float32", "float64", "float16", "bfloat16"]
# one unit in the last place of each dtype's result
ULP = {"float32": 2.0 ** -23, "float64": 2.0 ** -52, "float16": 2.0 ** -10,
       "bfloat16": 2.0 ** -7}


def _pair(a, dt):
    """The same values as a fastt and a torch tensor of dtype dt."""
    t = torch.from_numpy(a).to(getattr(torch, dt))
    return fastt.from_numpy(t.float().numpy()).to(getattr(fastt, dt)), t


def _f64(x):
    return np.asarray(x.double().numpy(), np.float64)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_rows_sum_mean_against_float64(dt, n):
    rng = np.random.default_rng(n)
    a = (rng.standard_normal((3, n)) + 0.5).astype(np.float32)
    f, t = _pair(a, dt)
    ref = t.double().numpy()  # the rounded inputs, summed in float64
    scale = np.abs(ref).sum(-1)
    for got, want, div in ((f.sum(-1), ref.sum(-1), 1),
                           (f.mean(-1), ref.mean(-1), n)):
        # the result's own rounding, plus the float lanes' error
        tol = ULP[dt] * np.abs(want) + 1e-6 * scale / div
        err = np.abs(_f64(got) - want)
        assert (err <= tol).all(), (err, tol)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_rows_extremes_exact(dt, n):
    rng = np.random.default_rng(100 + n)
    a = rng.standard_normal((4, n)).astype(np.float32)
    f, t = _pair(a, dt)
    for name in ("amax", "amin"):
        np.testing.assert_array_equal(_f64(getattr(f, name)(-1)),
                                      getattr(t, name)(-1).double().numpy())
    np.testing.assert_array_equal(_f64(f.max(-1).values),
                                  t.max(-1).values.double().numpy())
    np.testing.assert_array_equal(_f64(f.amax()), t.amax().double().numpy())


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", [5, 17, 33, 64, 65, 256, 257])
def test_nan_and_inf_in_every_position(dt, n):
    # rows of 16 (sums: 32) to 16384 go through extreme_rows / sum_rows
    for pos in sorted({0, 7, 31, 63, n - 1, n // 2}):
        if pos >= n:
            continue
        a = np.linspace(-3, 3, 2 * n, dtype=np.float32).reshape(2, n)
        a[0, pos] = np.nan
        a[1, pos] = np.inf
        f, t = _pair(a, dt)
        for name in ("amax", "amin", "sum"):
            np.testing.assert_array_equal(
                _f64(getattr(f, name)(-1)),
                getattr(t, name)(-1).double().numpy(), err_msg=f"{name} {pos}")
        assert np.isnan(_f64(f.amax())) and np.isnan(_f64(f.sum()))
        # -inf everywhere: max is -inf, not a lane's initial value
        g, _ = _pair(np.full((2, n), -np.inf, np.float32), dt)
        assert (_f64(g.amax(-1)) == -np.inf).all()


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 64, 255, 256, 257, 2047,
                               2048, 2049, 65_535, 65_536, 65_919, 100_003,
                               4_194_311, 16_777_259])
def test_whole_sum_and_norm_against_float64(dt, n):
    # from 65536 elements sum_span reads two streams (the halves side by
    # side), then the rest as contiguous blocks and a tail
    rng = np.random.default_rng(n)
    a = (rng.standard_normal(n) + 0.25).astype(np.float32)
    f, t = _pair(a, dt)
    ref = t.double().numpy()
    for got, want in ((f.sum(), ref.sum()), (f.mean(), ref.mean() if n else np.nan),
                      (f.norm(), np.sqrt((ref * ref).sum())),
                      (f.norm(p=1), np.abs(ref).sum())):
        g = float(_f64(got))
        if np.isnan(want):
            assert np.isnan(g)
            continue
        if dt == "float16" and abs(want) > 65504:  # past float16's range
            assert g == np.inf * np.sign(want)
            continue
        tol = ULP[dt] * abs(want) + 1e-6 * np.abs(ref).sum() + 1e-30
        assert abs(g - want) <= tol, (g, want)


@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(130, 5), (130, 40), (70, 64), (3, 1000),
                                   (200, 1), (200, 63), (9, 65), (33, 130),
                                   (3, 66, 70), (1000, 3), (1001, 8),
                                   (257, 12), (40, 5), (999, 32), (300, 2)])
def test_rows_in_batches_and_columns(dt, shape):
    # rows go through sum_rows in batches of 64 rows (float16/bfloat16 each
    # step converted to float32 first); columns (dim -2: four rows at a
    # time, the rest one by one) through sum_cols in blocks of 64 outputs,
    # the last block narrower; matrices of up to 32 columns read as ones
    # of up to 64, the rows left over after them one by one (40 x 5: too
    # few rows for that). A NaN in one row and one column.
    rng = np.random.default_rng(shape[-2] * 1000 + shape[-1])
    a = (rng.standard_normal(shape) + 0.5).astype(np.float32)
    a[..., shape[-2] // 2, shape[-1] - 1] = np.nan
    f, t = _pair(a, dt)
    ref = t.double().numpy()
    for dim in (-1, -2):
        want = ref.sum(dim)
        scale = np.nan_to_num(np.abs(ref)).sum(dim)
        for got, w, div in ((f.sum(dim), want, 1),
                            (f.mean(dim), want / shape[dim], shape[dim])):
            g = _f64(got)
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
            ok = ~np.isnan(w)
            tol = ULP[dt] * np.abs(w[ok]) + 1e-6 * scale[ok] / div
            assert (np.abs(g[ok] - w[ok]) <= tol).all(), (dim, g, w)
        np.testing.assert_array_equal(_f64(f.amax(dim)),
                                      t.amax(dim).double().numpy())


def test_strided_rows_and_columns_take_the_generic_path():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((70, 90)).astype(np.float32)
    a[5, 40] = np.nan
    f, t = fastt.from_numpy(a), torch.from_numpy(a)
    for fn in (lambda x: x.t().amax(-1), lambda x: x.amax(0),
               lambda x: x[:, ::2].amax(-1), lambda x: x[:, ::3].sum(-1),
               lambda x: x.t().sum(-1)):
        np.testing.assert_allclose(fn(f).numpy(), fn(t).numpy(), rtol=1e-5,
                                   atol=1e-5)


def test_two_threads_give_the_same_fold():
    rng = np.random.default_rng(2)
    a = rng.standard_normal(300_003).astype(np.float32)
    old = fastt.get_num_threads()
    try:
        out = {}
        for th in (1, 2):
            fastt.set_num_threads(th)
            for dt in ("float16", "bfloat16", "float32"):
                f, _ = _pair(a, dt)
                out[th, dt] = (float(_f64(f.sum())), float(_f64(f.amax())),
                               _f64(f.view(3, -1).sum(-1)).tolist(),
                               [_f64(f[:300_000].view(-1, w).sum(0))
                                for w in (3, 8, 100, 1000)])
        for dt in ("float16", "bfloat16", "float32"):
            s1, m1, r1, c1 = out[1, dt]
            s2, m2, r2, c2 = out[2, dt]
            assert m1 == m2
            assert abs(s1 - s2) <= 1e-6 * np.abs(a).sum()
            np.testing.assert_allclose(r1, r2, rtol=1e-6, atol=1e-3)
            for x, y in zip(c1, c2):  # columns: split by blocks of columns
                np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-3)
    finally:
        fastt.set_num_threads(old)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", [4_000, 65_535, 65_536, 65_919, 200_003])
def test_extremes_two_streams_nan_anywhere(dt, n):
    # from 65536 elements extreme_span reads the halves side by side with
    # a plain select and notes NaNs on the side; the tail (up to 127
    # elements) takes the propagating select
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dt)
    for pos in (None, 0, n // 4, n // 2 + 3, n - 100, n - 1):
        b = a.copy()
        if pos is not None:
            b[pos] = np.nan
        rows = fastt.from_numpy(np.stack([b, a]))
        for name in ("amax", "amin"):
            want = getattr(np, name)(b)  # NaN if any
            got = getattr(fastt.from_numpy(b.copy()), name)()
            np.testing.assert_array_equal(_f64(got), want, err_msg=f"{name} {pos}")
            np.testing.assert_array_equal(
                _f64(getattr(rows, name)(-1)),
                [want, getattr(np, name)(a)], err_msg=f"rows {name} {pos}")
    # +inf and -inf side by side in one pair of lanes: not a NaN
    b = a.copy()
    b[0], b[n // 2] = np.inf, -np.inf
    f = fastt.from_numpy(b)
    assert float(f.amax()) == np.inf and float(f.amin()) == -np.inf
    assert float(f.max()) == np.inf and float(f.min()) == -np.inf


@pytest.mark.parametrize("n", LENGTHS)
def test_logsumexp_rows_against_float64(n):
    # float32 rows take lse_rows: the max, then exp(x - max) in float lanes
    rng = np.random.default_rng(200 + n)
    a = (rng.standard_normal((5, n)) * 30).astype(np.float32)
    a[1, n // 2] = np.nan
    a[2, n - 1] = np.inf
    a[3, :] = -np.inf
    if n > 1:
        a[4, 0] = -np.inf  # one -inf among finite values
    f = fastt.from_numpy(a.copy())
    ok = [0, 4] if n > 1 else [0]
    ad = a[ok].astype(np.float64)
    m = ad.max(-1, keepdims=True)
    ref = (m + np.log(np.exp(ad - m).sum(-1, keepdims=True)))[:, 0]
    want = torch.from_numpy(a).logsumexp(-1).double().numpy()
    got = _f64(f.logsumexp(-1))
    assert np.isnan(got[1]) and got[2] == np.inf and got[3] == -np.inf
    np.testing.assert_allclose(got[ok], ref, rtol=2e-6, atol=0)
    np.testing.assert_allclose(got[ok], want[ok], rtol=2e-6, atol=0)
    # the whole tensor and a leading dim, through the same state combine
    b = a[[0, 4]]
    np.testing.assert_allclose(
        _f64(fastt.from_numpy(b.copy()).logsumexp((0, 1))),
        torch.from_numpy(b).logsumexp((0, 1)).double().numpy(), rtol=2e-6)
    np.testing.assert_allclose(
        _f64(fastt.from_numpy(b.copy()).logsumexp(0)),
        torch.from_numpy(b).logsumexp(0).double().numpy(), rtol=2e-6)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_rows_max_with_indices_ties_nan_zeros(dt, n):
    """max/min(-1) with indices and argmax/argmin over dense rows (the
    extreme, then its first position): the first of tied extremes, the
    first NaN, -0 against +0 (equal: the first wins, its own sign kept),
    +-inf, against torch; and the whole-tensor argmax split across
    threads, whose spans carry their start index."""
    rng = np.random.default_rng(200 + n)
    rows = [rng.integers(-3, 4, n).astype(np.float32),   # many ties
            rng.standard_normal(n).astype(np.float32),
            np.full(n, -np.inf, np.float32), np.full(n, np.inf, np.float32),
            np.where(rng.random(n) < 0.5, -0.0, 0.0).astype(np.float32)]
    for pos in sorted({0, n // 3, n - 1}):
        r = rng.standard_normal(n).astype(np.float32)
        r[pos] = np.nan
        r[(pos + n // 2) % n] = np.nan if n > 2 else r[pos]
        rows.append(r)
        r = np.zeros(n, np.float32)
        r[pos] = 5.0
        r[n - 1 - pos] = 5.0  # two tied maxima: the first is reported
        rows.append(r)
    a = np.stack(rows)
    f, t = _pair(a, dt)
    for name in ("max", "min"):
        got, want = getattr(f, name)(-1), getattr(t, name)(-1)
        np.testing.assert_array_equal(got.indices.numpy(),
                                      want.indices.numpy(), err_msg=name)
        gv, wv = _f64(got.values), want.values.double().numpy()
        np.testing.assert_array_equal(gv, wv, err_msg=name)
        np.testing.assert_array_equal(np.signbit(gv), np.signbit(wv))
    for name in ("argmax", "argmin"):
        np.testing.assert_array_equal(getattr(f, name)(-1).numpy(),
                                      getattr(t, name)(-1).numpy(),
                                      err_msg=name)
        # the row's own first index, through the whole-tensor path too
        for i in range(a.shape[0]):
            assert int(getattr(f[i], name)()) == int(getattr(t[i], name)())


def test_whole_argmax_split_across_threads():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(300_001).astype(np.float32)
    # the max in the second thread's span (from 150_001), tied later in it
    # and in the first: the first span's index wins; then only in the
    # second span, at an index its start offset must carry
    a[[150_006, 290_000]] = 9.0
    a[100] = 9.0
    old = fastt.get_num_threads()
    try:
        for th in (1, 2):
            fastt.set_num_threads(th)
            for dt in ("float32", "float64", "float16"):
                f, t = _pair(a, dt)
                assert int(f.argmax()) == int(t.argmax()) == 100
                c = a.copy()
                c[100] = 0.0
                f, t = _pair(c, dt)
                assert int(f.argmax()) == int(t.argmax()) == 150_006
                b = a.copy()
                b[[200_000, 250_000]] = np.nan
                f, t = _pair(b, dt)
                assert int(f.argmax()) == int(t.argmax()) == 200_000
                assert int(f.argmin()) == int(t.argmin()) == 200_000
    finally:
        fastt.set_num_threads(old)


def test_rows_argmax_of_a_non_contiguous_view():
    # two reduced dims (a whole-tensor argmax of a sliced matrix): each
    # row's dense span starts at a nonzero reduced index
    rng = np.random.default_rng(4)
    big = rng.standard_normal((40, 90)).astype(np.float32)
    big[17, 33] = 50.0
    big[25, 10] = 50.0  # tied, later
    big[3, 70] = 99.0   # outside the view
    for dt in ("float32", "float64"):
        f, t = _pair(big, dt)
        for view in (lambda x: x[:, :50], lambda x: x[5:, 10:60]):
            assert int(view(f).argmax()) == int(view(t).argmax())
            assert int(view(f).argmin()) == int(view(t).argmin())


@pytest.mark.parametrize("n", [n for n in LENGTHS if n >= 4])
def test_rows_sum_cancellation_in_double(n):
    # float32 lanes fold in double: each value in its own lane, the sums
    # are exact (folded in float, [1e8, -1e8, 1, 1] gave 0, the 3e38 row
    # inf - inf)
    a = np.zeros((2, n), np.float32)
    a[0, :4] = [1e8, -1e8, 1, 1]
    a[1, :4] = [3e38, -3e38, 3e38, -3e38]
    got = fastt.from_numpy(a).sum(-1).numpy()
    np.testing.assert_array_equal(got, [2.0, 0.0])
