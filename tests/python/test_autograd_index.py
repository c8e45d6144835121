# Gradients of the indexing/shape ops (csrc/ops/index.h) against torch
# autograd: the same float64 inputs in both libraries, the same weighted
# sum as the loss, then .grad compared. Add a case: one CASES row.
import numpy as np
import pytest

import fastt

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)


def rnd(*shape):
    return R.standard_normal(shape)


def idx(*values):
    return np.array(values, dtype=np.int64)


def run(lib, fn, arrays, create_graph=False):
    """fn(lib, *tensors) with every float array requiring grad; returns the
    output (values) and the inputs' gradients as numpy arrays."""
    ts = []
    for a in arrays:
        t = lib.tensor(a.copy())
        if a.dtype.kind == "f":
            t.requires_grad_(True)
        ts.append(t)
    out = fn(lib, *ts)
    if isinstance(out, (tuple, list)):
        out = out[0]
    w = lib.tensor(np.cos(np.arange(max(out.numel(), 1)) + 0.5)[
        : out.numel()].reshape(tuple(out.shape)))
    leaves = [t for t in ts if t.requires_grad]
    loss = (out * w).sum()
    if create_graph:
        # Second order: differentiate the squared first-order gradients.
        gs = lib.autograd.grad(loss * loss, leaves, create_graph=True,
                               allow_unused=True)
        total = sum((g * g).sum() for g in gs if g is not None)
        total.backward()
    else:
        loss.backward()
    grads = [None if t.grad is None else t.grad.detach().numpy().copy()
             for t in leaves]
    name = out.grad_fn.name() if out.grad_fn is not None else None
    return out.detach().numpy().copy(), grads, name


def check(fn, *arrays, create_graph=False, check_name=True):
    o_t, g_t, n_t = run(torch, fn, arrays, create_graph)
    o_f, g_f, n_f = run(fastt, fn, arrays, create_graph)
    np.testing.assert_allclose(o_f, o_t, rtol=1e-12, atol=1e-12)
    assert len(g_f) == len(g_t)
    for a, b in zip(g_f, g_t, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    if check_name:
        assert n_f == n_t


X = rnd(4, 5)
M = R.standard_normal((4, 5)) > 0

CASES = {
    # joining / splitting
    "cat": (lambda L, a, b: L.cat([a, b * 2, a], 1), X, rnd(4, 2)),
    "cat_neg_dim_noncontig":
        (lambda L, a, b: L.cat([a.t(), b], -2), X, rnd(3, 4)),
    "cat_legacy_empty":
        (lambda L, a, b: L.cat([a, b], 0), rnd(3, 2), np.zeros(0)),
    "stack": (lambda L, a, b: L.stack([a, b, a], -1), X, rnd(4, 5)),
    "split": (lambda L, a: L.cat([p * (i + 1) for i, p in
                                  enumerate(L.split(a, 2, 1))], 1), X),
    "split_sizes": (lambda L, a: L.split(a, [1, 3], 0)[1], X),
    "chunk": (lambda L, a: L.chunk(a, 3, -1)[2], X),
    "unbind": (lambda L, a: L.unbind(a, 1)[3] * L.unbind(a, 1)[0], X),
    "repeat": (lambda L, a: a.repeat(2, 1, 3), rnd(3, 2)),
    "repeat_0d": (lambda L, a: a.repeat(3), np.array(1.5)),
    "repeat_noncontig": (lambda L, a: a.t().repeat(2, 2), X),
    # indexing along a dim
    "index_select": (lambda L, a, i: a.index_select(1, i), X,
                     idx(4, 0, 4, 2, 4)),
    "index_select_neg": (lambda L, a, i: a.t().index_select(-1, i), X,
                         idx(3, 3, 0)),
    "gather": (lambda L, a, i: a.gather(1, i), X,
               np.array([[0, 0, 1], [4, 4, 4], [2, 1, 0], [3, 3, 0]])),
    "gather_neg": (lambda L, a, i: a.t().gather(-2, i), X,
                   np.array([[0, 3, 3, 1], [1, 1, 2, 2]])),
    "scatter_src": (lambda L, a, i, s: a.scatter(0, i, s), X,
                    np.array([[0, 1, 2, 3, 1], [2, 3, 0, 1, 0]]),
                    rnd(2, 5)),
    "scatter_value": (lambda L, a, i: a.scatter(1, i, 2.5), X,
                      np.array([[0, 1], [2, 3], [4, 4], [1, 1]])),
    "scatter_add": (lambda L, a, i, s: a.scatter_add(1, i, s), X,
                    np.array([[0, 0, 0], [1, 1, 4], [2, 3, 2], [4, 4, 4]]),
                    rnd(4, 3)),
    "scatter_add_": (lambda L, a, i, s: (a * 1).scatter_add_(0, i, s), X,
                     np.array([[0, 0, 3, 3, 2], [0, 1, 1, 2, 2]]),
                     rnd(2, 5)),
    "scatter_": (lambda L, a, i, s: (a * 1).scatter_(1, i, s), X,
                 np.array([[4], [3], [0], [1]]), rnd(4, 1)),
    "scatter_value_": (lambda L, a, i: (a * 1).scatter_(0, i, -1.0), X,
                       np.array([[0, 3, 1, 1, 2]])),
    "index_add": (lambda L, a, i, s: a.index_add(0, i, s, alpha=-1.5), X,
                  idx(1, 3, 1), rnd(3, 5)),
    "index_add_": (lambda L, a, i, s: (a * 1).index_add_(1, i, s), X,
                   idx(4, 4, 0), rnd(4, 3)),
    # advanced indexing
    "index_dup": (lambda L, a, i: a[i], X, idx(3, 0, 3, 3)),
    "index_2d": (lambda L, a, i, j: a[i, j], X,
                 np.array([[0, 1], [3, 3]]), np.array([[4, 4], [0, 4]])),
    "index_slice": (lambda L, a, i: a.t()[1:, i], X, idx(2, 2, 0)),
    "index_split": (lambda L, a, i, j: a[i, :, j], rnd(3, 4, 5),
                    idx(0, 2, 2), idx(1, 4, 1)),
    "index_mask": (lambda L, a, m: a[m], X, M),
    "index_neg": (lambda L, a, i: a[:, i], X, idx(-1, -5, -1)),
    "index_put": (lambda L, a, i, v: a.index_put((i,), v), X, idx(0, 2),
                  rnd(2, 5)),
    "index_put_bcast": (lambda L, a, i, v: a.index_put((i,), v), X,
                        idx(0, 2, 3), rnd(5)),
    "index_put_acc": (lambda L, a, i, v: a.index_put((i,), v,
                                                     accumulate=True), X,
                      idx(1, 1, 3), rnd(3, 5)),
    "index_put_": (lambda L, a, i, j, v: (a * 1).index_put_((i, j), v), X,
                   idx(0, 3), idx(4, 1), rnd(2)),
    "setitem": (lambda L, a, i, v: _setitem(a * 1, i, v), X, idx(1, 2),
                rnd(1, 5)),
    "setitem_mask": (lambda L, a, m, v: _setitem(a * 1, m, v), X, M,
                     np.array(0.5)),
    # masks
    "masked_select": (lambda L, a, m: a.masked_select(m), X, M),
    "masked_select_bcast": (lambda L, a, m: a.masked_select(m), rnd(1, 5),
                            M),
    "masked_scatter": (lambda L, a, m, s: a.masked_scatter(m, s), X, M,
                       rnd(6, 5)),
    "masked_scatter_": (lambda L, a, m, s: (a * 1).masked_scatter_(m, s), X,
                        M[0], rnd(4, 5)),
    # triangles, flips, rolls
    "tril": (lambda L, a: a.tril(), X),
    "triu": (lambda L, a: a.triu(1), rnd(2, 4, 3)),
    "tril_": (lambda L, a: (a * 1).tril_(-1), X),
    "triu_noncontig_": (lambda L, a: (a * 1).t().triu_(), X),
    "flip": (lambda L, a: a.flip([0, -1]), rnd(2, 3, 4)),
    "roll": (lambda L, a: a.roll([1, -2], [0, 1]), X),
    "roll_flat": (lambda L, a: a.roll(3), X),
    "roll_same_dim": (lambda L, a: a.roll((1, 2), (1, 1)), X),
    # 0-d, empty, mixed dtypes, writes through views
    "cat_empty_rows": (lambda L, a, b: L.cat([a, b], 0), rnd(0, 3),
                       rnd(2, 3)),
    "cat_f32_f64": (lambda L, a, b: L.cat([a, b]),
                    rnd(3).astype(np.float32), rnd(2)),
    "stack_0d": (lambda L, a, b: L.stack([a, b]), np.array(1.0),
                 np.array(2.0)),
    "repeat_empty": (lambda L, a: a.repeat(0, 2), rnd(2, 3)),
    "index_select_empty": (lambda L, a, i: a.index_select(0, i), rnd(3, 2),
                           np.zeros(0, np.int64)),
    "index_select_0d": (lambda L, a, i: a.index_select(0, i), np.array(2.0),
                        idx(0)),
    "gather_0d": (lambda L, a, i: a.gather(0, i), np.array(2.0),
                  np.array(0)),
    "scatter_add_0d": (lambda L, a, i, s: a.scatter_add(0, i, s),
                       np.array(1.0), np.array(0), np.array(3.0)),
    "index_add_0d": (lambda L, a, i, s: a.index_add(0, i, s), np.array(1.0),
                     idx(0), np.array(3.0)),
    "index_true": (lambda L, a: a[L.tensor(True)], rnd(2, 3)),
    "index_0d_idx": (lambda L, a, i: a[i], rnd(4, 3), np.array(2)),
    "index_put_0d_acc": (lambda L, a, i, v: a.index_put((i,), v,
                                                        accumulate=True),
                         rnd(4), idx(1, 1, 3), np.array(0.7)),
    "iadd_dup": (lambda L, a, i, v: _iadd(a * 1, i, v), rnd(4, 3),
                 idx(1, 1, 2), rnd(3, 3)),
    "setitem_view": (lambda L, a, i, v: _setitem_view(a * 1, i, v),
                     rnd(4, 5), idx(0, 2), rnd(2, 3)),
    "masked_select_0d": (lambda L, a, m: a.masked_select(m), np.array(1.5),
                         np.ones((2, 2), bool)),
    "masked_scatter_bcast": (lambda L, a, m, s: a.masked_scatter(m, s),
                             rnd(3, 4), np.array([True, False, True, True]),
                             rnd(20)),
    "flip_none": (lambda L, a: a.flip([]), rnd(2, 3)),
    "roll_zero": (lambda L, a: a.roll(0, 1), rnd(2, 3)),
    "sort_0d": (lambda L, a: L.sort(a)[0], np.array(2.0)),
    "topk_k0": (lambda L, a: L.topk(a, 0)[0], rnd(3, 4)),
    # sorting (values only)
    "sort": (lambda L, a: L.sort(a, 1)[0], X),
    "sort_desc_dim0": (lambda L, a: L.sort(a.t(), 0, True)[0], X),
    "topk": (lambda L, a: L.topk(a, 2)[0], X),
    "topk_smallest": (lambda L, a: L.topk(a, 3, 0, largest=False)[0], X),
}


def _setitem(t, i, v):
    t[i] = v
    return t


def _setitem_view(t, i, v):
    t[:, 1:4][i] = v  # index_put_ on a view: CopySlices on t
    return t


def _iadd(t, i, v):
    t[i] += v
    return t


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_matches_torch(name):
    fn, *arrays = CASES[name]
    # split/chunk/unbind are views here (SliceBackward0/SelectBackward0),
    # where torch names one SplitBackward0/UnbindBackward0 node.
    # torch names CopySlices "torch::autograd::CopySlices".
    check(fn, *arrays,
          check_name=not name.startswith(("split", "chunk", "unbind",
                                          "setitem_view")))


SECOND_ORDER = ["cat", "stack", "repeat", "index_select", "gather",
                "scatter_src", "scatter_add", "index_add", "index_dup",
                "index_put", "masked_select", "masked_scatter", "tril",
                "flip", "roll", "sort", "topk"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_double_backward_matches_torch(name):
    fn, *arrays = CASES[name]
    # A nonlinear head so the second derivative is not zero.
    check(lambda L, *ts: fn(L, *ts) ** 3, *arrays, create_graph=True,
          check_name=False)


def test_embedding_padding_and_duplicates():
    import fastt.nn.functional as FF
    import torch.nn.functional as TF
    w = rnd(6, 3)
    i = np.array([[1, 5, 1], [0, 2, 1]])
    for pad in (None, 1, -1):
        o_t, g_t, n_t = run(torch, lambda L, w, i: TF.embedding(
            i, w, padding_idx=pad), [w, i])
        o_f, g_f, n_f = run(fastt, lambda L, w, i: FF.embedding(
            i, w, padding_idx=pad), [w, i])
        np.testing.assert_allclose(o_f, o_t)
        np.testing.assert_allclose(g_f[0], g_t[0], rtol=1e-12, atol=1e-12)
        assert n_f == n_t == "EmbeddingBackward0"


def test_sort_indices_not_differentiable():
    x = fastt.tensor(rnd(3, 4), requires_grad=True)
    v, i = fastt.sort(x, 1)
    assert v.requires_grad and not i.requires_grad
    v, i = fastt.topk(x, 2)
    assert v.requires_grad and not i.requires_grad
    assert not fastt.argsort(x).requires_grad


def test_float32_input_gets_float32_grad():
    a = fastt.tensor(rnd(2, 3).astype(np.float32), requires_grad=True)
    b = fastt.tensor(rnd(2, 3), requires_grad=True)
    out = fastt.cat([a, b], 0)
    assert out.dtype == fastt.float64
    out.sum().backward()
    assert a.grad.dtype == fastt.float32 and b.grad.dtype == fastt.float64
    np.testing.assert_allclose(a.grad.numpy(), np.ones((2, 3)))


def test_no_grad_records_nothing():
    x = fastt.tensor(rnd(3, 4), requires_grad=True)
    with fastt.no_grad():
        y = x.index_select(0, fastt.tensor(idx(0, 2)))
    assert not y.requires_grad and y.grad_fn is None


def test_inplace_on_leaf_raises():
    x = fastt.tensor(rnd(3, 4), requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.index_put_((fastt.tensor(idx(0)),), fastt.tensor(np.array(1.0)))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.tril_()


def test_saved_index_modified_in_place_raises():
    x = fastt.tensor(rnd(3, 4), requires_grad=True)
    i = fastt.tensor(idx(0, 2))
    y = x.index_select(0, i)
    i.add_(0)  # bumps the version the node saved
    with pytest.raises(RuntimeError, match="modified by an inplace"):
        y.sum().backward()
