"""fastt.utils.data against torch.utils.data: the same sampler order must give
the same batches (fast TensorDataset path and the generic collate path),
collate of nested samples, drop_last, len() and torch's errors."""
import collections

import numpy as np
import pytest

import fastt
from fastt.utils import data as fd

torch = pytest.importorskip("torch")
td = torch.utils.data


def to_np(x):
    if isinstance(x, (fastt.Tensor, torch.Tensor)):
        return x.numpy()
    return x


def assert_same(a, b):
    """a (fastt side) and b (torch side) have the same structure/values."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, fastt.Tensor), type(a)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(to_np(a), to_np(b))
    elif isinstance(b, dict):
        assert type(a) is type(b) and a.keys() == b.keys()
        for k in b:
            assert_same(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    else:
        assert a == b


class FixedOrder:
    """A plain sampler (an iterable of ints with len), usable by both libs."""

    def __init__(self, order):
        self.order = list(order)

    def __iter__(self):
        return iter(self.order)

    def __len__(self):
        return len(self.order)


def pair_datasets(n=23, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3, 2)).astype(np.float32)
    y = rng.integers(0, 10, n)
    return (fd.TensorDataset(fastt.from_numpy(x.copy()),
                             fastt.from_numpy(y.copy())),
            td.TensorDataset(torch.from_numpy(x.copy()),
                             torch.from_numpy(y.copy())))


class Samples:
    """A map-style dataset of nested Python samples built by make(i, lib)."""

    def __init__(self, n, make, lib):
        self.n, self.make, self.lib = n, make, lib

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.make(i, self.lib)

    def __len__(self):
        return self.n


# ---------------------------------------------------------------- batches


@pytest.mark.parametrize("batch_size", [1, 4, 5, 23, 30])
@pytest.mark.parametrize("drop_last", [False, True])
def test_tensor_dataset_matches_torch(batch_size, drop_last):
    f, t = pair_datasets()
    order = np.random.default_rng(1).permutation(len(t)).tolist()
    fl = fd.DataLoader(f, batch_size=batch_size, sampler=FixedOrder(order),
                       drop_last=drop_last)
    tl = td.DataLoader(t, batch_size=batch_size, sampler=FixedOrder(order),
                       drop_last=drop_last)
    fb, tb = list(fl), list(tl)
    assert len(fl) == len(tl) == len(fb) == len(tb)
    for a, b in zip(fb, tb, strict=True):
        assert_same(a, b)


@pytest.mark.parametrize("drop_last", [False, True])
def test_sequential_default_matches_torch(drop_last):
    f, t = pair_datasets(n=10)
    fb = list(fd.DataLoader(f, batch_size=3, drop_last=drop_last))
    tb = list(td.DataLoader(t, batch_size=3, drop_last=drop_last))
    assert len(fb) == len(tb) == (3 if drop_last else 4)
    for a, b in zip(fb, tb, strict=True):
        assert_same(a, b)


def test_subset_of_tensor_dataset_uses_composed_indices():
    f, t = pair_datasets(n=20)
    outer = [5, 0, 3, 7, -1, 2]
    inner = list(range(19, -1, -2))  # 10 items
    fs = fd.Subset(fd.Subset(f, inner), outer)
    ts = td.Subset(td.Subset(t, inner), outer)
    for a, b in zip(fd.DataLoader(fs, batch_size=4),
                    td.DataLoader(ts, batch_size=4), strict=True):
        assert_same(a, b)


def test_fast_path_matches_generic_path():
    f, _ = pair_datasets(n=17)
    fastt.manual_seed(3)
    fast = list(fd.DataLoader(f, batch_size=5, shuffle=True))
    fastt.manual_seed(3)
    slow = list(fd.DataLoader(f, batch_size=5, shuffle=True,
                              collate_fn=lambda b: fd.default_collate(b)))
    assert len(fast) == len(slow) == 4
    for a, b in zip(fast, slow, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_fast_path_is_index_select_not_views():
    x = fastt.arange(8.).reshape(4, 2)
    (bx,) = next(iter(fd.DataLoader(fd.TensorDataset(x), batch_size=2)))
    bx.fill_(-1.0)
    assert x[0, 0].item() == 0.0


def test_shuffle_covers_everything_and_is_seeded():
    f, _ = pair_datasets(n=50)
    loader = fd.DataLoader(f, batch_size=8, shuffle=True)
    fastt.manual_seed(7)
    e1 = np.concatenate([b[1].numpy() for b in loader])
    e2 = np.concatenate([b[1].numpy() for b in loader])
    fastt.manual_seed(7)
    e1b = np.concatenate([b[1].numpy() for b in loader])
    np.testing.assert_array_equal(e1, e1b)
    assert not np.array_equal(e1, e2)
    np.testing.assert_array_equal(np.sort(e1), np.sort(f.tensors[1].numpy()))


def test_numpy_generator_shuffle_matches_numpy_permutation():
    f, t = pair_datasets(n=12)
    loader = fd.DataLoader(f, batch_size=12, shuffle=True,
                           generator=np.random.default_rng(5))
    (bx, by) = next(iter(loader))
    perm = np.random.default_rng(5).permutation(12)
    np.testing.assert_array_equal(by.numpy(), t.tensors[1].numpy()[perm])


def test_batch_sampler_and_no_auto_collation():
    f, t = pair_datasets(n=9)
    batches = [[0, 8], [3], [4, 5, 6, 1]]
    for a, b in zip(fd.DataLoader(f, batch_sampler=batches),
                    td.DataLoader(t, batch_sampler=batches), strict=True):
        assert_same(a, b)
    fb = list(fd.DataLoader(f, batch_size=None))
    tb = list(td.DataLoader(t, batch_size=None))
    assert len(fb) == len(tb) == 9
    for a, b in zip(fb, tb, strict=True):
        assert_same(list(a), list(b))


def test_iterable_dataset_batches():
    class Stream(fd.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    class TStream(td.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    for dl in (False, True):
        fl = fd.DataLoader(Stream(), batch_size=3, drop_last=dl)
        tl = td.DataLoader(TStream(), batch_size=3, drop_last=dl)
        assert len(fl) == len(tl)
        fb, tb = list(fl), list(tl)
        assert len(fb) == len(tb)
        for a, b in zip(fb, tb, strict=True):
            assert_same(a, b)


# ---------------------------------------------------------------- collate

Point = collections.namedtuple("Point", ["x", "y"])


def nested_sample(i, lib):
    arr = np.arange(6, dtype=np.float32).reshape(2, 3) + i
    return {
        "t": lib.tensor([i, i + 1.5]),
        "np": arr,
        "npi": np.arange(3, dtype=np.int32) * i,
        "f": i * 0.5,
        "i": i,
        "b": i % 2 == 0,
        "npscalar": np.float32(i) / 4,
        "s": f"s{i}",
        "tup": (i, [lib.tensor(i), {"deep": float(i)}]),
        "pt": Point(lib.tensor([i]), i * 2),
    }


@pytest.mark.parametrize("batch_size", [1, 3])
def test_nested_collate_matches_torch(batch_size):
    fl = fd.DataLoader(Samples(5, nested_sample, fastt),
                       batch_size=batch_size)
    tl = td.DataLoader(Samples(5, nested_sample, torch),
                       batch_size=batch_size)
    n = 0
    for a, b in zip(fl, tl, strict=True):
        n += 1
        assert isinstance(a["pt"], Point)
        assert_same({k: v for k, v in a.items() if k != "pt"},
                    {k: v for k, v in b.items() if k != "pt"})
        assert_same(list(a["pt"]), list(b["pt"]))
    assert n == len(tl)


def test_default_collate_leaves():
    assert_same(fd.default_collate([1, 2, 3]),
                td.default_collate([1, 2, 3]))
    assert_same(fd.default_collate([1.5, 2.0]),
                td.default_collate([1.5, 2.0]))
    assert_same(fd.default_collate([True, False]),
                td.default_collate([True, False]))
    assert fd.default_collate(["a", "b"]) == ["a", "b"]
    assert_same(fd.default_collate([(1, 2.0), (3, 4.0)]),
                td.default_collate([(1, 2.0), (3, 4.0)]))
    assert_same(fd.default_collate([[1, 2], [3, 4]]),
                td.default_collate([[1, 2], [3, 4]]))


def test_default_convert_matches_torch():
    sample = {"a": np.arange(3.0), "b": (np.int64(2), "x"), "c": [1.5]}
    assert_same(fd.default_convert(sample), td.default_convert(sample))


def test_collate_errors():
    with pytest.raises(RuntimeError, match="equal size"):
        fd.default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must"):
        fd.default_collate([object(), object()])
    with pytest.raises(TypeError, match="default_collate: batch must"):
        fd.default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="stack expects"):
        fd.default_collate([fastt.zeros(3), fastt.zeros(2)])


def test_custom_collate_fn_is_used():
    f, _ = pair_datasets(n=6)
    seen = []

    def collate_fn(batch):
        seen.append(len(batch))
        return len(batch)

    assert list(fd.DataLoader(f, batch_size=4, collate_fn=collate_fn)) \
        == [4, 2]
    assert seen == [4, 2]


# ---------------------------------------------------------------- samplers


def test_sampler_lengths_and_contents():
    ds = list(range(10))
    assert list(fd.SequentialSampler(ds)) == list(range(10))
    r = list(fd.RandomSampler(ds))
    assert sorted(r) == list(range(10))
    r = list(fd.RandomSampler(ds, num_samples=25))
    assert len(r) == 25 and sorted(r[:10]) == list(range(10))
    r = list(fd.RandomSampler(ds, replacement=True, num_samples=40))
    assert len(r) == 40 and all(0 <= i < 10 for i in r)
    assert list(fd.BatchSampler(range(10), 4, False)) == \
        list(td.BatchSampler(range(10), 4, False))
    assert len(fd.BatchSampler(range(10), 4, True)) == 2
    assert len(fd.BatchSampler(range(10), 4, False)) == 3
    s = fd.SubsetRandomSampler([3, 5, 9])
    assert sorted(s) == [3, 5, 9] and len(s) == 3


def test_random_sampler_with_numpy_generator_is_reproducible():
    a = list(fd.RandomSampler(range(30), generator=np.random.default_rng(2)))
    b = list(fd.RandomSampler(range(30), generator=np.random.default_rng(2)))
    assert a == b == np.random.default_rng(2).permutation(30).tolist()


def test_random_split():
    ds = list(range(10))
    fastt.manual_seed(0)
    parts = fd.random_split(ds, [3, 7])
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    parts = fd.random_split(ds, [0.5, 0.3, 0.2],
                            generator=np.random.default_rng(0))
    assert [len(p) for p in parts] == [5, 3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        fd.random_split(ds, [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 1"):
        fd.random_split(ds, [0.5, 1.2, -0.7])


def test_datasets():
    f, _ = pair_datasets(n=4)
    x, y = f[2]
    np.testing.assert_array_equal(x.numpy(), f.tensors[0][2].numpy())
    assert len(f) == 4
    with pytest.raises(AssertionError, match="Size mismatch"):
        fd.TensorDataset(fastt.zeros(3), fastt.zeros(4))
    c = fd.ConcatDataset([[1, 2], [3, 4, 5]])
    assert len(c) == 5 and [c[i] for i in range(5)] == [1, 2, 3, 4, 5]
    assert c[-1] == 5
    s = fd.Subset([10, 11, 12, 13], [3, 1])
    assert len(s) == 2 and s[0] == 13 and s[1] == 11
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset "
                                                  "should implement "
                                                  "__getitem__"):
        fd.Dataset()[0]
    with pytest.raises(AssertionError, match="datasets should not be an "
                                             "empty iterable"):
        fd.ConcatDataset([])


# ---------------------------------------------------------------- errors


def test_loader_errors_match_torch():
    f, t = pair_datasets(n=5)
    cases = [
        dict(shuffle=True, sampler=[0, 1]),
        dict(batch_sampler=[[0]], batch_size=2),
        dict(batch_sampler=[[0]], drop_last=True),
        dict(batch_sampler=[[0]], shuffle=True),
        dict(batch_size=None, drop_last=True),
        dict(num_workers=-1),
        dict(timeout=-1),
        dict(prefetch_factor=2),
        dict(persistent_workers=True),
    ]
    for kw in cases:
        with pytest.raises(ValueError) as te:
            td.DataLoader(t, **kw)
        with pytest.raises(ValueError) as fe:
            fd.DataLoader(f, **kw)
        assert str(fe.value) == str(te.value), kw
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="positive integer"):
            fd.DataLoader(f, batch_size=bad)
        with pytest.raises(ValueError, match="positive integer"):
            fd.BatchSampler(range(3), bad, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        fd.BatchSampler(range(3), 2, 1)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        fd.RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive"):
        fd.RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive"):
        fd.RandomSampler([])


def test_loader_attributes_frozen_and_len():
    f, _ = pair_datasets(n=10)
    loader = fd.DataLoader(f, batch_size=4)
    assert len(loader) == 3 and len(iter(loader)) == 3
    with pytest.raises(ValueError, match="batch_size attribute should not"):
        loader.batch_size = 2
    assert len(fd.DataLoader(f, batch_size=4, drop_last=True)) == 2
    assert len(fd.DataLoader(f, batch_size=None)) == 10


def test_iterable_dataset_rejects_sampler_and_shuffle():
    class Stream(fd.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        fd.DataLoader(Stream(), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler"):
        fd.DataLoader(Stream(), sampler=[0])


def test_out_of_range_index_raises_index_error():
    f, _ = pair_datasets(n=4)
    with pytest.raises(IndexError, match="index 9 is out of bounds for "
                                         "dimension 0 with size 4"):
        list(fd.DataLoader(f, sampler=FixedOrder([0, 9]), batch_size=2))


# ---------------------------------------------------------------- additions


def test_stack_dataset_matches_torch():
    a, b = list(range(5)), [str(i) for i in range(5)]
    f, t = fd.StackDataset(a, b), td.StackDataset(a, b)
    assert len(f) == len(t) == 5 and f[3] == t[3] == (3, "3")
    fk, tk = fd.StackDataset(x=a, y=b), td.StackDataset(x=a, y=b)
    assert fk[2] == tk[2] == {"x": 2, "y": "2"}
    for args, kwargs in [((a, b[:3]), {}), ((), {}), ((a,), {"y": b})]:
        with pytest.raises(ValueError) as te:
            td.StackDataset(*args, **kwargs)
        with pytest.raises(ValueError) as fe:
            fd.StackDataset(*args, **kwargs)
        assert str(fe.value) == str(te.value)


def test_weighted_random_sampler():
    fastt.manual_seed(0)
    w = [0.0, 1.0, 3.0, 0.0]
    s = fd.WeightedRandomSampler(w, 4000)
    draws = list(s)
    assert len(s) == 4000 and set(draws) == {1, 2}
    assert 0.70 < draws.count(2) / 4000 < 0.80
    no_rep = list(fd.WeightedRandomSampler(w, 2, replacement=False))
    assert sorted(no_rep) == [1, 2]
    g = np.random.default_rng(3)
    assert set(fd.WeightedRandomSampler(w, 50, generator=g)) <= {1, 2}
    for kw in (dict(weights=w, num_samples=0),
               dict(weights=w, num_samples=2, replacement=1),
               dict(weights=[[1.0]], num_samples=2)):
        with pytest.raises(ValueError) as te:
            td.WeightedRandomSampler(**kw)
        with pytest.raises(ValueError) as fe:
            fd.WeightedRandomSampler(**kw)
        assert str(fe.value) == str(te.value)


def test_iterable_loader_sampler_is_torchs_kind():
    class Stream(fd.IterableDataset):
        def __iter__(self):
            return iter(range(5))

    class TStream(td.IterableDataset):
        def __iter__(self):
            return iter(range(5))

    f, t = fd.DataLoader(Stream(), batch_size=2), \
        td.DataLoader(TStream(), batch_size=2)
    assert type(f.sampler).__name__ == type(t.sampler).__name__
    assert type(f.batch_sampler).__name__ == type(t.batch_sampler).__name__
    assert [b.tolist() for b in f] == [b.tolist() for b in t]
