"""DataLoader(num_workers > 0): worker processes with torch's semantics
(order, seeding, worker_init_fn, get_worker_info, IterableDataset
sharding, persistent workers, timeout, a worker's exception or death,
clean shutdown) and batches that come back through shared memory. Workers
are forked, so each test costs milliseconds, not an interpreter start."""
import collections
import dataclasses
import gc
import os
import pickle
import random
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import fastt
from fastt.utils import data as fd
from fastt.utils.data import _utils
from fastt.utils.data._utils import shm

torch = pytest.importorskip("torch")
from torch.utils import data as td  # noqa: E402

Pair = collections.namedtuple("Pair", "a b")


class Items(fd.Dataset):
    """A dict/tuple/str/namedtuple sample per index (fastt tensors)."""

    def __init__(self, n=37):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = fastt.arange(12, dtype=fastt.float32).reshape(3, 4) * i
        return {"x": x, "i": i, "name": f"s{i}",
                "pair": Pair(fastt.tensor([i, -i]), float(i) / 2),
                "list": [i, fastt.tensor(i % 3 == 0)]}


class PidItems(fd.Dataset):
    def __init__(self, n=8):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return os.getpid()


class SeedItems(fd.Dataset):
    """What a worker's random sources give, and its WorkerInfo."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = fd.get_worker_info()
        return (info.id, info.seed, fastt.rand(1).item(), random.random(),
                float(np.random.rand()))


class Failing(fd.Dataset):
    def __init__(self, exc, at=3, n=8):
        self.exc, self.at, self.n = exc, at, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.at:
            raise self.exc
        return i


class Killing(fd.Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


class Sleepy(fd.Dataset):
    def __init__(self, seconds, at=0):
        self.seconds, self.at = seconds, at

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == self.at:
            time.sleep(self.seconds)
        return i


class Stream(fd.IterableDataset):
    """range(n), split among workers with get_worker_info when shard."""

    def __init__(self, n, shard=True):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = fd.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


def _same(a, b):
    """Structural equality of two batches (tensors by value and dtype)."""
    if isinstance(a, fastt.Tensor):
        assert isinstance(b, fastt.Tensor)
        assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
        assert a.tolist() == b.tolist()
    elif isinstance(a, dict):
        assert type(a) is type(b) and a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


def _alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _no_children_left(pids):
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not any(_alive(p) for p in pids)


def _shm_names():
    return {n for n in os.listdir("/dev/shm") if n.startswith("fastt_dl_")}


# ---------------------------------------------------------------- results


@pytest.mark.parametrize("kw", [
    dict(batch_size=5),
    dict(batch_size=5, drop_last=True),
    dict(batch_size=None),
    dict(batch_size=4, sampler=[7, 3, 3, 0, 36, 12, 5, 9, 1]),
])
def test_results_in_order_match_single_process(kw):
    ds = Items()
    ref = list(fd.DataLoader(ds, **kw))
    loader = fd.DataLoader(ds, num_workers=2, **kw)
    it = iter(loader)
    assert len(it) == len(ref)
    got = list(it)
    assert len(got) == len(ref)
    for a, b in zip(got, ref):
        _same(a, b)


def test_shuffled_order_matches_single_process_under_a_seed():
    ds = fd.TensorDataset(fastt.arange(40), fastt.arange(40) * 2)
    fastt.manual_seed(7)
    ref = [b[0].tolist() for b in fd.DataLoader(ds, batch_size=6,
                                                 shuffle=True)]
    fastt.manual_seed(7)
    got = [b[0].tolist() for b in fd.DataLoader(ds, batch_size=6,
                                                 shuffle=True, num_workers=2)]
    assert got == ref
    assert sorted(sum(got, [])) == list(range(40))


def test_in_order_false_delivers_every_batch():
    ds = Sleepy(0.2, at=0)
    got = list(fd.DataLoader(ds, batch_size=1, num_workers=2,
                             in_order=False))
    assert sorted(b.item() for b in got) == [0, 1, 2, 3]
    assert got[0].item() != 0  # the slow first batch came later


def test_tensor_dataset_and_subset_with_workers():
    ds = fd.TensorDataset(fastt.arange(30.).reshape(15, 2),
                          fastt.arange(15))
    sub = fd.Subset(ds, [14, 2, 9, 0, 3, 3, 8])
    for d in (ds, sub):
        ref = list(fd.DataLoader(d, batch_size=4))
        got = list(fd.DataLoader(d, batch_size=4, num_workers=2))
        for a, b in zip(got, ref):
            _same(a, b)


# ---------------------------------------------------------------- shm


ALL_DTYPES = [fastt.bool, fastt.uint8, fastt.int8, fastt.int16, fastt.int32,
              fastt.int64, fastt.float16, fastt.bfloat16, fastt.float32,
              fastt.float64]


class DtypeItems(fd.Dataset):
    """One tensor of every dtype, odd shapes, 0-d, empty and transposed
    ones, in a sample big enough to go through shared memory."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        base = fastt.arange(35, dtype=fastt.float64).reshape(5, 7) - 17 + i
        out = {str(dt): (base > 0 if dt == fastt.bool else base.to(dt))
               for dt in ALL_DTYPES}
        out["t"] = base.t()  # non-contiguous
        out["scalar"] = fastt.tensor(i * 1.5)
        out["empty"] = fastt.zeros(0, 3, dtype=fastt.int32)
        out["big"] = fastt.full((64, 64), float(i))
        return out


@pytest.mark.parametrize("inline", [False, True])
def test_every_dtype_round_trips(monkeypatch, inline):
    if inline:  # below the threshold the bytes travel in the message
        monkeypatch.setattr(shm, "INLINE_BYTES", 1 << 30)
    ds = DtypeItems()
    ref = list(fd.DataLoader(ds, batch_size=3))
    before = dict(shm.stats)
    got = list(fd.DataLoader(ds, batch_size=3, num_workers=2))
    key = "inline_batches" if inline else "shm_batches"
    assert shm.stats[key] - before[key] == 2
    for a, b in zip(got, ref):
        _same(a, b)
        assert a["t"].is_contiguous()
        a["big"].add_(1)  # writable, like any batch


def test_tensor_bytes_do_not_go_through_the_queue(monkeypatch):
    sizes = []
    unpack = shm.unpack

    def spy(msg):
        sizes.append(len(pickle.dumps(msg)))
        return unpack(msg)

    monkeypatch.setattr(shm, "unpack", spy)
    ds = fd.TensorDataset(fastt.randn(256, 3, 32, 32), fastt.arange(256))
    before = _shm_names()
    batches = list(fd.DataLoader(ds, batch_size=64, num_workers=2))
    assert len(sizes) == 4
    assert max(sizes) < 2048  # vs 786 KiB of float32 per batch
    assert batches[3][0].tolist() == ds.tensors[0][192:].tolist()
    assert _shm_names() <= before  # every block unlinked


@dataclasses.dataclass
class Boxed:
    n: int
    s: object


def _box(samples):
    return Boxed(len(samples), fastt.stack([x[0] for x in samples]))


def test_tensors_inside_custom_objects_travel_too():
    ds = fd.TensorDataset(fastt.arange(16384.).reshape(64, 256))
    before = dict(shm.stats)
    got = list(fd.DataLoader(ds, batch_size=32, num_workers=1,
                             collate_fn=_box))
    assert shm.stats["shm_batches"] - before["shm_batches"] == 2
    assert [type(g) for g in got] == [Boxed, Boxed]
    assert [g.n for g in got] == [32, 32]
    assert got[1].s.tolist() == ds.tensors[0][32:].tolist()


# ---------------------------------------------------------------- workers


def test_worker_seeds_differ_and_are_reproducible():
    def run():
        fastt.manual_seed(123)
        return list(fd.DataLoader(SeedItems(), batch_size=None,
                                  num_workers=2))

    a, b = run(), run()
    assert a == b
    by_worker = {}
    for wid, seed, r_fastt, r_py, r_np in a:
        by_worker.setdefault(wid, []).append((seed, r_fastt, r_py, r_np))
    assert sorted(by_worker) == [0, 1]
    s0, s1 = by_worker[0][0][0], by_worker[1][0][0]
    assert s1 == s0 + 1  # base_seed + worker_id
    for k in (1, 2, 3):  # fastt, random and numpy streams all differ
        assert by_worker[0][0][k] != by_worker[1][0][k]
    fastt.manual_seed(124)
    c = list(fd.DataLoader(SeedItems(), batch_size=None, num_workers=2))
    assert c[0][1] != a[0][1]


def test_numpy_seed_is_torchs():
    from torch.utils.data._utils.worker import _generate_state
    from fastt.utils.data._utils.worker import _generate_state as ours
    for base, wid in [(0, 0), (123456789012345, 3), (2 ** 63 - 2, 7)]:
        assert ours(base, wid) == _generate_state(base, wid)


_init_calls = []


def _record_init(worker_id):
    _init_calls.append(worker_id)


class InitItems(fd.Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        return (os.getpid(), tuple(_init_calls), fd.get_worker_info().id)


def test_worker_init_fn_once_per_worker_with_its_id():
    got = list(fd.DataLoader(InitItems(), batch_size=None, num_workers=2,
                             worker_init_fn=_record_init))
    seen = {}
    for pid, calls, wid in got:
        assert calls == [wid]  # default_convert makes tuples lists
        seen.setdefault(pid, set()).add(wid)
    assert sorted(w for s in seen.values() for w in s) == [0, 1]
    assert _init_calls == []  # never called in the main process


class InfoItems(fd.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = fd.get_worker_info()
        with pytest.raises(AttributeError):
            info.id = 5  # frozen, as torch's
        return (info.id, info.num_workers, id(info.dataset) != 0,
                type(info.dataset).__name__, info.dataset is self)


def test_get_worker_info_inside_workers():
    assert fd.get_worker_info() is None
    got = list(fd.DataLoader(InfoItems(), batch_size=None, num_workers=2))
    assert sorted({g[0] for g in got}) == [0, 1]
    assert all(g[1] == 2 and g[3] == "InfoItems" and g[4] for g in got)
    assert fd.get_worker_info() is None


def test_iterable_dataset_sharded_with_get_worker_info():
    got = list(fd.DataLoader(Stream(23), batch_size=4, num_workers=2))
    flat = sorted(x for b in got for x in b.tolist())
    assert flat == list(range(23))
    # each worker batches its own stream: 12 + 11 items -> 4,4,4 + 4,4,3
    assert sorted(len(b) for b in got) == [3, 4, 4, 4, 4, 4]
    # without sharding every worker yields everything (torch's semantics)
    dup = list(fd.DataLoader(Stream(5, shard=False), batch_size=None,
                             num_workers=2))
    assert sorted(dup) == sorted(list(range(5)) * 2)
    assert len(list(fd.DataLoader(Stream(23), batch_size=4, num_workers=2,
                                  drop_last=True))) == 5


def test_iterable_dataset_uneven_workers_matches_torch():
    class Uneven(fd.IterableDataset):
        def __iter__(self):
            info = fd.get_worker_info()
            return iter(range(2 if info.id == 0 else 9))

    class TUneven(td.IterableDataset):
        def __iter__(self):
            info = td.get_worker_info()
            return iter(range(2 if info.id == 0 else 9))

    got = [b.tolist() for b in fd.DataLoader(Uneven(), batch_size=3,
                                             num_workers=2)]
    ref = [b.tolist() for b in td.DataLoader(TUneven(), batch_size=3,
                                             num_workers=2)]
    assert got == ref


def test_persistent_workers_keep_their_processes():
    loader = fd.DataLoader(PidItems(), batch_size=2, num_workers=2,
                           persistent_workers=True)
    e1 = {p for b in loader for p in b.tolist()}
    e2 = {p for b in loader for p in b.tolist()}
    assert len(e1) == 2 and e1 == e2 and os.getpid() not in e1
    # a half-consumed epoch, then a full one: the stale results are dropped
    it = iter(loader)
    next(it)
    assert len(list(iter(loader))) == 4
    pids = [w.pid for w in loader._iterator._workers]
    loader._iterator._shutdown_workers()
    assert _no_children_left(pids)
    plain = fd.DataLoader(PidItems(), batch_size=2, num_workers=2)
    p1 = {p for b in plain for p in b.tolist()}
    p2 = {p for b in plain for p in b.tolist()}
    assert not p1 & p2


def test_persistent_iterable_workers_restart_their_streams():
    loader = fd.DataLoader(Stream(10), batch_size=3, num_workers=2,
                           persistent_workers=True)
    for _ in range(2):
        flat = sorted(x for b in loader for x in b.tolist())
        assert flat == list(range(10))
    loader._iterator._shutdown_workers()


# ---------------------------------------------------------------- errors


def test_timeout():
    loader = fd.DataLoader(Sleepy(1.0), batch_size=None, num_workers=1,
                           timeout=0.2)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError,
                       match=r"DataLoader timed out after 0.2 seconds"):
        next(iter(loader))
    assert time.monotonic() - t0 < 4


class NeedsTwoArgs(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


def test_worker_exception_reraised_with_type_and_traceback():
    loader = fd.DataLoader(Failing(ValueError("bad item 3")), batch_size=2,
                           num_workers=2)
    with pytest.raises(ValueError) as e:
        list(loader)
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.")
    assert "Original Traceback (most recent call last):" in msg
    assert "bad item 3" in msg and "__getitem__" in msg
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker "
                                       "process 0"):
        list(fd.DataLoader(Failing(KeyError("k"), at=0), num_workers=2))
    with pytest.raises(RuntimeError, match="Caught NeedsTwoArgs"):
        list(fd.DataLoader(Failing(NeedsTwoArgs(1, 2)), num_workers=1))


def test_unpicklable_exception_class_still_reported():
    class Local(Exception):
        pass

    with pytest.raises(RuntimeError, match="Caught Local in DataLoader "
                                           "worker process 0"):
        list(fd.DataLoader(Failing(Local("x"), at=0), num_workers=1))


def test_worker_init_fn_exception_and_batches_before_error():
    def bad_init(worker_id):
        raise ZeroDivisionError("init failed")

    with pytest.raises(ZeroDivisionError, match="Caught ZeroDivisionError"):
        list(fd.DataLoader(PidItems(), num_workers=1,
                           worker_init_fn=bad_init))
    it = iter(fd.DataLoader(Failing(ValueError("x"), at=3), batch_size=1,
                            num_workers=2))
    assert [next(it).item() for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError):
        next(it)


def test_killed_worker_raises_and_leaves_no_process():
    loader = fd.DataLoader(Killing(), batch_size=2, num_workers=2)
    it = iter(loader)
    pids = [w.pid for w in it._workers]
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) "
                                           r"\d+\) exited unexpectedly"):
        for _ in it:
            pass
    assert time.monotonic() - t0 < 4  # noticed at once, not by polling
    assert _no_children_left(pids)


def test_deleting_iterators_leaves_no_process_or_block():
    before = _shm_names()
    ds = fd.TensorDataset(fastt.randn(512, 64, 8))
    it = iter(fd.DataLoader(ds, batch_size=64, num_workers=2,
                            prefetch_factor=3))
    next(it)  # more batches are in flight
    time.sleep(0.1)
    pids = [w.pid for w in it._workers]
    del it
    gc.collect()
    assert _no_children_left(pids)
    assert _shm_names() <= before


_EXIT_SCRIPT = r"""
import fastt
from fastt.utils import data as fd
ds = fd.TensorDataset(fastt.randn(512, 64, 8))
keep = fd.DataLoader(ds, batch_size=64, num_workers=2, persistent_workers=True)
it = iter(keep)
next(it)
other = iter(fd.DataLoader(ds, batch_size=64, num_workers=1))
next(other)
print("ok", flush=True)
"""


def test_interpreter_exits_cleanly_with_live_workers():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(fastt.__file__)),
         env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    assert "leaked" not in r.stderr and "Traceback" not in r.stderr, r.stderr


# ---------------------------------------------------------------- options


def test_spawn_context_and_single_sample_mode():
    got = list(fd.DataLoader(Items(6), batch_size=None, num_workers=1,
                             multiprocessing_context="spawn"))
    for a, b in zip(got, fd.DataLoader(Items(6), batch_size=None)):
        _same(a, b)


def test_pin_memory_warns_like_torch_without_accelerator():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = list(fd.DataLoader(Items(4), batch_size=2, num_workers=1,
                                 pin_memory=True))
    assert len(got) == 2
    assert any("'pin_memory' argument is set as true but no accelerator is "
               "found, then device pinned memory won't be used." in
               str(x.message) for x in w)


def test_option_errors_match_torch():
    f, t = Items(4), td.TensorDataset(torch.zeros(4))
    cases = [
        (dict(num_workers=1, multiprocessing_context="bogus"), ValueError),
        (dict(num_workers=1, multiprocessing_context=5), TypeError),
        (dict(multiprocessing_context="fork"), ValueError),
        (dict(num_workers=1, prefetch_factor=-1), ValueError),
        (dict(prefetch_factor=2), ValueError),
        (dict(persistent_workers=True), ValueError),
    ]
    for kw, exc in cases:
        with pytest.raises(exc) as te:
            td.DataLoader(t, **kw)
        with pytest.raises(exc) as fe:
            fd.DataLoader(f, **kw)
        assert str(fe.value) == str(te.value), kw
    loader = fd.DataLoader(f, num_workers=2)
    assert loader.prefetch_factor == 2
    assert td.DataLoader(t, num_workers=2).prefetch_factor == 2


def test_submodule_paths():
    from fastt.utils.data._utils.collate import (default_collate,
                                                 default_convert)
    from fastt.utils.data.dataloader import DataLoader, get_worker_info
    from fastt.utils.data.dataset import (ChainDataset, ConcatDataset,
                                          Dataset, IterableDataset,
                                          StackDataset, Subset,
                                          TensorDataset, random_split)
    from fastt.utils.data.distributed import DistributedSampler
    from fastt.utils.data.sampler import (BatchSampler, RandomSampler,
                                          Sampler, SequentialSampler,
                                          SubsetRandomSampler,
                                          WeightedRandomSampler)
    assert DataLoader is fd.DataLoader and default_collate is \
        fd.default_collate and get_worker_info is fd.get_worker_info
    assert _utils.MP_STATUS_CHECK_INTERVAL > 0
    for name in ("ChainDataset", "ConcatDataset", "Dataset",
                 "IterableDataset", "StackDataset", "Subset",
                 "TensorDataset", "random_split", "DistributedSampler",
                 "BatchSampler", "RandomSampler", "Sampler",
                 "SequentialSampler", "SubsetRandomSampler",
                 "WeightedRandomSampler", "default_convert"):
        assert getattr(fd, name) is locals()[name]
        assert hasattr(td, name)


# ---------------------------------------------------------------- distributed


@pytest.mark.parametrize("n,replicas,drop_last", [
    (10, 3, False), (10, 3, True), (9, 3, False), (2, 5, False),
    (11, 4, True)])
def test_distributed_sampler_matches_torch_without_shuffle(n, replicas,
                                                           drop_last):
    for rank in range(replicas):
        f = fd.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                  drop_last=drop_last)
        t = td.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                  drop_last=drop_last)
        assert list(f) == list(t) and len(f) == len(t)
        assert (f.num_samples, f.total_size) == (t.num_samples,
                                                 t.total_size)


def test_distributed_sampler_shuffle_and_epochs():
    n, replicas = 23, 4
    state = fastt.get_rng_state()
    shards = [list(fd.DistributedSampler(range(n), replicas, r, seed=5))
              for r in range(replicas)]
    assert fastt.get_rng_state().tolist() == state.tolist()
    flat = sum(shards, [])
    assert len(flat) == 24 and set(flat) == set(range(n))
    again = list(fd.DistributedSampler(range(n), replicas, 0, seed=5))
    assert again == shards[0]
    s = fd.DistributedSampler(range(n), replicas, 0, seed=5)
    s.set_epoch(1)
    assert list(s) != shards[0] and s.epoch == 1
    loader = fd.DataLoader(fd.TensorDataset(fastt.arange(n)), batch_size=3,
                           sampler=s, num_workers=2)
    assert sorted(x for b in loader for x in b[0].tolist()) == sorted(s)


def test_distributed_sampler_errors_match_torch():
    for kw in (dict(), dict(num_replicas=2), dict(rank=0)):
        with pytest.raises(ValueError) as te:
            td.DistributedSampler(range(4), **kw)
        with pytest.raises(ValueError) as fe:
            fd.DistributedSampler(range(4), **kw)
        assert str(fe.value) == str(te.value)
    for rank in (2, -1):
        with pytest.raises(ValueError) as te:
            td.DistributedSampler(range(4), 2, rank)
        with pytest.raises(ValueError) as fe:
            fd.DistributedSampler(range(4), 2, rank)
        assert str(fe.value) == str(te.value)
