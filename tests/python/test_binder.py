"""The table-driven binding (python/src/binder.h): argument parsing as
torch does it (positional, keyword, keyword-only, defaults, errors) and
results that own exactly their references."""
import sys

import pytest

import fastt

torch = pytest.importorskip("torch")


def both(fn):
    """fn(lib, x) for fastt and torch on the same 2x3 values."""
    xs = [lib.arange(6.0).reshape(2, 3) for lib in (fastt, torch)]
    return [fn(lib, x) for lib, x in zip((fastt, torch), xs)]


def same(fn):
    a, b = both(fn)
    if isinstance(b, tuple):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            assert u.tolist() == v.tolist()
    else:
        assert a.tolist() == b.tolist()


CALLS = [
    lambda L, x: L.cat([x, x]),
    lambda L, x: L.cat([x, x], 1),
    lambda L, x: L.cat(tensors=[x], dim=-1),
    lambda L, x: L.stack([x, x], dim=1),
    lambda L, x: x.chunk(2, 1),
    lambda L, x: L.chunk(x, chunks=3, dim=1),
    lambda L, x: x.unbind(),
    lambda L, x: L.unbind(x, dim=1),
    lambda L, x: x.index_select(1, L.tensor([2, 0])),
    lambda L, x: L.gather(x, 1, index=L.tensor([[0], [2]])),
    lambda L, x: x.scatter_add(0, L.tensor([[1, 0, 1]]), L.ones(1, 3)),
    lambda L, x: x.index_add(1, L.tensor([0]), L.ones(2, 1), alpha=3),
    lambda L, x: x.index_put((L.tensor([1]),), L.tensor(9.0), True),
    lambda L, x: x.masked_select(x > 2),
    lambda L, x: x.tril(), lambda L, x: L.triu(x, diagonal=1),
    lambda L, x: x.roll(1), lambda L, x: L.roll(x, (1, 1), dims=(0, 1)),
    lambda L, x: x.roll(1, dims=None),
    lambda L, x: x.sort(1, True), lambda L, x: x.sort(descending=True),
    lambda L, x: x.argsort(dim=0, descending=True, stable=True),
    lambda L, x: x.topk(2), lambda L, x: L.topk(x, 1, 0, False, True),
    lambda L, x: L.nn.functional.one_hot(L.tensor([0, 2])),
    lambda L, x: x.prod(), lambda L, x: x.prod(1, True),
    lambda L, x: L.prod(x, dim=0, dtype=L.float64),
    lambda L, x: x.amax(), lambda L, x: x.amin((0, 1)),
    lambda L, x: L.amax(x, 1, keepdim=True),
    lambda L, x: (x > 1).all(), lambda L, x: (x > 1).any(dim=1),
    lambda L, x: L.all(x > 1, dim=()), lambda L, x: L.any(x, (), True),
    lambda L, x: L.all(x.to(L.uint8), dim=()),
    lambda L, x: L.all(L.tensor(2.0), dim=()),
    lambda L, x: x.logsumexp(1), lambda L, x: L.logsumexp(x, (0, 1), True),
    lambda L, x: x.argmax(), lambda L, x: L.argmin(x, dim=1, keepdim=True),
    lambda L, x: x.cumsum(1), lambda L, x: L.cumprod(x, 0, dtype=L.float64),
    lambda L, x: x.softmax(-1), lambda L, x: L.log_softmax(x, dim=0),
    lambda L, x: x.mm(x.t()), lambda L, x: L.matmul(x, other=x.t()),
    lambda L, x: L.addmm(x[:, :2], x[:, :2], x[:2, :2], beta=2, alpha=0.5),
    lambda L, x: x[:, :2].addmm(x[:, :2], mat2=x[:2, :2], alpha=2),
    lambda L, x: L.nn.functional.linear(x, x, bias=L.ones(2)),
    lambda L, x: L.nn.functional.layer_norm(x, (3,), eps=1e-3),
    lambda L, x: L.nn.functional.layer_norm(x, [3], weight=L.ones(3),
                                            bias=L.zeros(3)),
]


@pytest.mark.parametrize("fn", CALLS)
def test_values_match_torch(fn):
    same(fn)


def test_in_place_forms_return_self():
    for name, args in [("tril_", ()), ("triu_", (1,)),
                       ("masked_scatter_", None), ("index_add_", None),
                       ("scatter_add_", None), ("index_put_", None)]:
        x = fastt.arange(6.0).reshape(2, 3)
        if args is None:
            args = {"masked_scatter_": (x > 2, fastt.zeros(6)),
                    "index_add_": (0, fastt.tensor([1]), fastt.ones(1, 3)),
                    "scatter_add_": (0, fastt.tensor([[0, 1, 0]]),
                                     fastt.ones(1, 3)),
                    "index_put_": ((fastt.tensor([0]),), fastt.tensor(1.0)),
                    }[name]
        assert getattr(x, name)(*args) is x


ERRORS = [
    lambda L, x: L.cat([x], 0, x),                # out is keyword-only
    lambda L, x: x.sort(0, False, True),          # stable is keyword-only
    lambda L, x: x.index_select(0),               # missing index
    lambda L, x: x.index_select(0, dim=1),        # dim twice
    lambda L, x: x.topk(1, bogus=2),              # unknown keyword
    lambda L, x: x.index_select("a", L.tensor([0])),
    lambda L, x: x.cumsum(),                      # dim is required
    lambda L, x: L.cat(x),                        # not a sequence
    lambda L, x: L.addmm(x, x, x.t(), 2),         # beta is keyword-only
    lambda L, x: L.mm(x, x.t(), x),               # out is keyword-only
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_are_torchs_class(fn):
    xs = [lib.arange(6.0).reshape(2, 3) for lib in (fastt, torch)]
    with pytest.raises(TypeError):
        fn(torch, xs[1])
    with pytest.raises(TypeError):
        fn(fastt, xs[0])


def test_required_after_optional():
    """lse follows optional arguments but is required: torch's TypeError
    naming the function and the argument."""
    x = fastt.randn(2, 3)
    t = fastt.tensor([0, 2])
    g = fastt.tensor(1.0)
    with pytest.raises(TypeError, match=r"_cross_entropy_backward\(\) "
                       r"missing required argument 'lse'"):
        fastt._C._cross_entropy_backward(g, x, t)
    loss, lse = fastt._C._cross_entropy(x, t)
    assert fastt._C._cross_entropy_backward(g, x, t, lse=lse).shape == (2, 3)


def test_out_is_written():
    x = fastt.arange(6.0).reshape(2, 3)
    o = fastt.empty(0)
    assert fastt.cat([x, x], out=o) is o
    assert o.shape == (4, 3)
    o = fastt.empty(0)
    assert fastt.amax(x, 1, out=o) is o and o.tolist() == [2.0, 5.0]


@pytest.mark.parametrize("fn", [
    lambda x: fastt.var_mean(x, 1), lambda x: fastt.std_mean(x),
    lambda x: x.max(1), lambda x: x.min(dim=0),
    lambda x: x.sort(1), lambda x: x.topk(2),
    lambda x: x.chunk(2, 1), lambda x: x.unbind(),
    lambda x: x.split(1), lambda x: x.nonzero(as_tuple=True),
])
def test_tuple_results_hold_one_reference_each(fn):
    """Each element is referenced by its tuple alone (plus getrefcount's
    argument): an extra reference is a tensor leaked on every call
    (var_mean and std_mean leaked both of theirs)."""
    r = fn(fastt.arange(6.0).reshape(2, 3))
    counts = [sys.getrefcount(r[i]) for i in range(len(r))]
    assert counts == [2] * len(r)


@pytest.mark.parametrize("fn", [
    lambda x: fastt._C._cross_entropy(x, fastt.tensor([0, 2])),
    lambda x: fastt._C._layer_norm(x, (3,)),
    lambda x: fastt._C._rms_norm(x, [3]),
])
def test_fused_tuple_results_hold_one_reference_each(fn):
    """The C++ tuples of the fused ops (to_py of std::tuple): each tensor
    referenced by the result alone."""
    r = fn(fastt.randn(2, 3))
    counts = [sys.getrefcount(r[i]) for i in range(len(r))
              if r[i] is not None]
    assert counts and counts == [2] * len(counts)
