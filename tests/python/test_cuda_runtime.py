"""fastt.cuda's runtime: the no-GPU behaviour (what CI sees: it never
skips there), and with a GPU: device round trips, pinned memory and
non_blocking copies, streams, events, the caching allocator's statistics,
out-of-memory errors and device mismatch errors."""
import gc

import numpy as np
import pytest

import emu_counters
import fastt
from cuda_util import ALL_DTYPES, DEVICE, noncontig, rand, requires_device, \
    to_numpy

HAVE_GPU = fastt.cuda.is_available()
# Streams, events and allocator statistics exist only on a real GPU (the
# CPU self-check mode of cuda_util cannot stand in for them).
requires_gpu = pytest.mark.skipif(not HAVE_GPU, reason="no CUDA GPU")
no_gpu = pytest.mark.skipif(HAVE_GPU, reason="a CUDA GPU is present")

NO_CUDA = r"built without CUDA|no CUDA GPU"


# ------------------------------------------------------------- no GPU --
def test_module_imports_with_torch_names():
    for name in fastt.cuda.__all__:
        assert hasattr(fastt.cuda, name), name
    assert isinstance(fastt.cuda.is_built(), bool)
    assert fastt.cuda.is_available() == (fastt.cuda.device_count() > 0)
    assert fastt.cuda.OutOfMemoryError is MemoryError


@no_gpu
def test_not_available():
    assert fastt.cuda.is_available() is False
    assert fastt.cuda.device_count() == 0
    assert fastt.cuda.is_bf16_supported() is False
    fastt.cuda.empty_cache()  # a no-op, like torch's


@no_gpu
def test_factory_on_cuda_names_the_cause():
    with pytest.raises(RuntimeError, match=NO_CUDA):
        fastt.zeros(3, device="cuda")
    with pytest.raises(RuntimeError, match=NO_CUDA):
        fastt.empty(2, 3, device="cuda:0")
    with pytest.raises(RuntimeError, match=NO_CUDA):
        fastt.tensor([1.0, 2.0], device="cuda")


@no_gpu
def test_moving_to_cuda_names_the_cause():
    x = fastt.ones(3)
    with pytest.raises(RuntimeError, match=NO_CUDA):
        x.cuda()
    with pytest.raises(RuntimeError, match=NO_CUDA):
        x.to("cuda")
    with pytest.raises(RuntimeError, match=NO_CUDA):
        x.to("cuda", non_blocking=True)
    with pytest.raises(RuntimeError, match=NO_CUDA):
        x.cuda(non_blocking=True)


@no_gpu
@pytest.mark.parametrize("call", [
    lambda: fastt.cuda.current_device(),
    lambda: fastt.cuda.set_device(0),
    lambda: fastt.cuda.synchronize(),
    lambda: fastt.cuda.current_stream(),
    lambda: fastt.cuda.default_stream(),
    lambda: fastt.cuda.Stream(),
    lambda: fastt.cuda.Stream(priority=-1),
    lambda: fastt.cuda.Event().record(),
    lambda: fastt.cuda.memory_allocated(),
    lambda: fastt.cuda.max_memory_allocated(),
    lambda: fastt.cuda.memory_reserved(),
    lambda: fastt.cuda.max_memory_reserved(),
    lambda: fastt.cuda.memory_stats(),
    lambda: fastt.cuda.reset_peak_memory_stats(),
    lambda: fastt.cuda.mem_get_info(),
    lambda: fastt.cuda.get_device_properties(0),
    lambda: fastt.ones(2).pin_memory(),
    lambda: fastt.empty(3, pin_memory=True),
    lambda: fastt.zeros(2, 2, pin_memory=True),
    lambda: fastt.tensor([1.0], pin_memory=True),
], ids=lambda f: "")
def test_runtime_calls_need_a_gpu(call):
    with pytest.raises(RuntimeError, match=NO_CUDA):
        call()


@no_gpu
def test_pinning_queries_without_gpu():
    assert fastt.ones(3).is_pinned() is False
    with pytest.raises(RuntimeError, match="CUDA tensor"):
        fastt.ones(3).record_stream(object())
    # An event never recorded is complete and waits for nothing.
    e = fastt.cuda.Event(enable_timing=True)
    assert e.query() is True
    e.synchronize()
    with pytest.raises(RuntimeError, match="recorded"):
        e.elapsed_time(fastt.cuda.Event(enable_timing=True))


def test_null_contexts_are_no_ops():
    with fastt.cuda.device(None):
        pass
    with fastt.cuda.device(-1):
        pass
    with fastt.cuda.stream(None) as s:
        assert s is None
    fastt.cuda.set_stream(None)
    with fastt.cuda.device_of(fastt.ones(1)):
        pass


def test_seeding_delegates_to_the_global_generator():
    fastt.cuda.manual_seed(1234)
    a = fastt.rand(8)
    fastt.manual_seed(1234)
    b = fastt.rand(8)
    assert np.array_equal(a.numpy(), b.numpy())
    fastt.cuda.manual_seed_all(99)
    c = fastt.rand(8)
    fastt.manual_seed(99)
    assert np.array_equal(c.numpy(), fastt.rand(8).numpy())
    assert fastt.cuda.initial_seed() == 99


def test_elapsed_time_needs_timing():
    a, b = fastt.cuda.Event(), fastt.cuda.Event()
    with pytest.raises(RuntimeError, match="enable_timing"):
        a.elapsed_time(b)


# -------------------------------------------------- device round trips --
@requires_device
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_round_trip(dtype):
    for shape in [(45, 65), (1,), (0,), (), (3, 0, 2), (2, 3, 4)]:
        x = rand(*shape, dtype=dtype, seed=len(shape))
        d = x.to(DEVICE)
        assert d.device.type == fastt.device(DEVICE).type
        assert d.dtype == dtype and tuple(d.shape) == shape
        assert np.array_equal(to_numpy(d.cpu()), to_numpy(x))
        assert np.array_equal(to_numpy(d.to("cpu")), to_numpy(x))


@requires_device
def test_round_trip_non_contiguous_and_converting():
    x = rand(45, 65)
    nc = noncontig(x)
    d = nc.to(DEVICE)
    assert np.array_equal(to_numpy(d.cpu()), to_numpy(x))
    # A strided view of a device tensor back to the host.
    t = d.t()
    assert np.array_equal(to_numpy(t.cpu()), to_numpy(x).T)
    # Into a non-contiguous host destination.
    dst = fastt.zeros(65, 45).t()
    dst.copy_(d)
    assert np.array_equal(to_numpy(dst), to_numpy(x))
    # Device and dtype at once.
    h = x.to(DEVICE, fastt.float64)
    assert h.dtype == fastt.float64
    assert np.allclose(to_numpy(h.cpu()), to_numpy(x).astype(np.float64))
    # Broadcasting copy across devices.
    row = rand(65)
    dst = fastt.zeros(45, 65, device=DEVICE)
    dst.copy_(row)
    assert np.array_equal(to_numpy(dst.cpu()),
                          np.broadcast_to(to_numpy(row), (45, 65)))


@requires_device
def test_cuda_method_and_non_blocking_keywords():
    x = rand(1000)
    for y in (x.to(DEVICE, non_blocking=True), x.to(DEVICE, copy=True)):
        assert np.array_equal(to_numpy(y.cpu()), to_numpy(x))
    if DEVICE.startswith("cuda"):
        y = x.cuda(non_blocking=True)
        assert y.is_cuda
        z = fastt.empty(1000)
        z.copy_(y, non_blocking=True)
        fastt.cuda.synchronize()
        assert np.array_equal(to_numpy(z), to_numpy(x))


# ------------------------------------------------------- pinned memory --
@requires_gpu
def test_pin_memory():
    x = rand(33, 17)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned()
    assert np.array_equal(p.numpy(), x.numpy())
    assert p.pin_memory() is p  # already pinned
    # Views of pinned memory are pinned; a non-contiguous source pins into a
    # contiguous copy.
    assert p[3:].is_pinned()
    q = noncontig(x).pin_memory()
    assert q.is_pinned() and q.is_contiguous()
    assert np.array_equal(q.numpy(), x.numpy())
    assert fastt.empty(0).pin_memory().is_pinned()
    z = fastt.zeros(4, 5, pin_memory=True)
    assert z.is_pinned() and z.shape == (4, 5) and not z.numpy().any()
    t = fastt.tensor([1.0, 2.0], pin_memory=True)
    assert t.is_pinned() and t.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="only dense CPU tensors"):
        fastt.zeros(2, device="cuda", pin_memory=True)
    with pytest.raises(RuntimeError, match="only dense CPU tensors"):
        x.cuda().pin_memory()
    assert not x.cuda().is_pinned()


@requires_gpu
def test_non_blocking_copies_from_and_to_pinned_memory():
    n = 1 << 20
    x = rand(n)
    p = x.pin_memory()
    d = p.to("cuda", non_blocking=True)
    out = fastt.empty(n).pin_memory()
    out.copy_(d * 2, non_blocking=True)
    fastt.cuda.current_stream().synchronize()
    assert np.array_equal(out.numpy(), x.numpy() * 2)
    # Freed while a copy may be in flight: the pinned block is not reused
    # before the copy completes, so the data stays right.
    for i in range(20):
        src = fastt.full((n,), float(i)).pin_memory()
        dst = src.to("cuda", non_blocking=True)
        del src
        other = fastt.full((n,), -1.0).pin_memory()  # may reuse src's block
        assert float(dst.sum().item()) == float(i) * n
        del other


@requires_gpu
def test_non_blocking_on_a_side_stream():
    x = rand(4096)
    p = x.pin_memory()
    s = fastt.cuda.Stream()
    with fastt.cuda.stream(s):
        d = p.to("cuda", non_blocking=True)
        y = (d + 1).cpu()  # pageable: synchronizes s
    assert np.allclose(y.numpy(), x.numpy() + 1)


# ------------------------------------------------------ streams, events --
@requires_gpu
def test_streams():
    default = fastt.cuda.default_stream()
    assert fastt.cuda.current_stream() == default
    assert default.cuda_stream == 0
    s = fastt.cuda.Stream()
    assert s != default and s.device == fastt.device("cuda", 0)
    with fastt.cuda.stream(s):
        assert fastt.cuda.current_stream() == s
        x = fastt.ones(1000, device="cuda") * 3
    assert fastt.cuda.current_stream() == default
    s.synchronize()
    assert s.query()
    assert float(x.sum().item()) == 3000.0
    with s:  # a Stream is its own context manager
        assert fastt.cuda.current_stream() == s
    assert fastt.cuda.current_stream() == default
    least, greatest = fastt.cuda.Stream.priority_range()
    hi = fastt.cuda.Stream(priority=greatest)
    assert hi.priority == greatest
    lo = fastt.cuda.Stream(priority=100)  # clamped like torch
    assert lo.priority == least
    fastt.cuda.set_stream(s)
    assert fastt.cuda.current_stream() == s
    fastt.cuda.set_stream(default)


@requires_gpu
@pytest.mark.large  # 1024^3 matmuls: slow under tests/cuda_emu
def test_wait_stream_orders_work():
    s1, s2 = fastt.cuda.Stream(), fastt.cuda.Stream()
    a = fastt.ones(512, 512, device="cuda")
    fastt.cuda.synchronize()
    with fastt.cuda.stream(s1):
        b = a @ a  # 512 in every element
        for _ in range(10):
            b = b @ a / 512.0
    s2.wait_stream(s1)
    with fastt.cuda.stream(s2):
        b.record_stream(s2)
        c = b + 1
    s2.synchronize()
    assert np.allclose(c.cpu().numpy(), 513.0)


@requires_gpu
def test_events():
    e = fastt.cuda.Event()
    assert e.query()  # nothing recorded yet
    x = fastt.ones(256, 256, device="cuda")
    y = x @ x
    e.record()
    e.synchronize()
    assert e.query()
    s = fastt.cuda.Stream()
    ev = s.record_event()
    assert isinstance(ev, fastt.cuda.Event)
    ev.wait(fastt.cuda.current_stream())
    s.wait_event(e)
    fastt.cuda.current_stream().wait_event(ev)
    assert float(y[0, 0].item()) == 256.0


@requires_gpu
@pytest.mark.large  # 1024^3 matmuls: slow under tests/cuda_emu
def test_elapsed_time():
    start = fastt.cuda.Event(enable_timing=True)
    end = fastt.cuda.Event(enable_timing=True)
    x = fastt.ones(1024, 1024, device="cuda")
    start.record()
    for _ in range(5):
        x = x @ x / 1024.0
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0.0
    plain = fastt.cuda.Event()
    plain.record()
    with pytest.raises(RuntimeError, match="enable_timing"):
        start.elapsed_time(plain)


@requires_gpu
def test_devices():
    n = fastt.cuda.device_count()
    assert n >= 1
    assert fastt.cuda.current_device() == 0
    with fastt.cuda.device(n - 1):
        assert fastt.cuda.current_device() == n - 1
    assert fastt.cuda.current_device() == 0
    fastt.cuda.set_device("cuda:0")
    with pytest.raises(ValueError):
        fastt.cuda.set_device(n)
    props = fastt.cuda.get_device_properties(0)
    assert props.total_memory > 0 and props.multi_processor_count > 0
    assert isinstance(fastt.cuda.get_device_name(), str)
    assert fastt.cuda.is_bf16_supported() == (props.major >= 8)
    free, total = fastt.cuda.mem_get_info()
    assert 0 < free <= total
    fastt.cuda.synchronize()
    fastt.cuda.synchronize(0)


# ------------------------------------------------------ memory / allocator --
@requires_gpu
def test_memory_stats_and_reuse():
    gc.collect()
    fastt.cuda.synchronize()
    fastt.cuda.empty_cache()
    base = fastt.cuda.memory_allocated()
    r0 = fastt.cuda.memory_reserved()
    fastt.cuda.reset_peak_memory_stats()
    big = 256 << 20  # larger than any cached remainder: its own segment
    x = fastt.empty(big // 4, device="cuda")
    assert fastt.cuda.memory_allocated() == base + big
    assert fastt.cuda.max_memory_allocated() == base + big
    assert fastt.cuda.memory_reserved() == r0 + big
    assert fastt.cuda.max_memory_reserved() >= r0 + big
    allocs = fastt.cuda.memory_stats()["num_device_allocs"]
    del x
    assert fastt.cuda.memory_allocated() == base
    assert fastt.cuda.memory_reserved() == r0 + big  # cached
    assert fastt.cuda.max_memory_allocated() == base + big
    y = fastt.empty(big // 4, device="cuda")  # reuses the cached block
    assert fastt.cuda.memory_stats()["num_device_allocs"] == allocs
    assert fastt.cuda.memory_reserved() == r0 + big
    del y
    fastt.cuda.empty_cache()
    assert fastt.cuda.memory_reserved() == r0
    assert fastt.cuda.memory_allocated() == base
    fastt.cuda.reset_peak_memory_stats()
    assert fastt.cuda.max_memory_allocated() == base
    assert fastt.cuda.max_memory_reserved() == r0
    stats = fastt.cuda.memory_stats()
    for key in ("allocated_bytes", "max_allocated_bytes", "reserved_bytes",
                "max_reserved_bytes", "requested_bytes", "alloc_count",
                "free_count", "num_device_allocs", "num_device_frees",
                "num_alloc_retries", "num_ooms", "segments",
                "active_blocks", "pending_free_blocks"):
        assert key in stats and stats[key] >= 0, key
    assert stats["allocated_bytes"] == base
    assert stats["allocated_bytes.all.current"] == base
    assert stats["num_device_alloc"] == stats["num_device_allocs"]


@requires_gpu
def test_steady_state_makes_no_device_allocations():
    w = rand(64, 64).cuda()

    def step():
        x = fastt.full((32, 64), 0.5, device="cuda")
        h = (x @ w).relu()
        return (h * 2 + 1).sum()

    for _ in range(3):
        step()
    before = fastt.cuda.memory_stats()
    for _ in range(50):
        step()
    after = fastt.cuda.memory_stats()
    assert after["num_device_allocs"] == before["num_device_allocs"]
    assert after["alloc_count"] > before["alloc_count"]
    assert after["allocated_bytes"] == before["allocated_bytes"]


@requires_gpu
def test_record_stream_defers_reuse():
    s = fastt.cuda.Stream()
    x = fastt.ones(1 << 18, device="cuda")
    s.wait_stream(fastt.cuda.current_stream())  # x is written there
    with fastt.cuda.stream(s):
        y = x * 2
    x.record_stream(s)
    pending = fastt.cuda.memory_stats()["pending_free_blocks"]
    del x
    assert fastt.cuda.memory_stats()["pending_free_blocks"] == pending + 1
    s.synchronize()
    fastt.cuda.empty_cache()  # waits for and returns pending blocks
    assert fastt.cuda.memory_stats()["pending_free_blocks"] == 0
    assert float(y.sum().item()) == 2.0 * (1 << 18)
    with pytest.raises(TypeError):
        y.record_stream(42)


@requires_gpu
def test_out_of_memory_raises_and_allocator_survives():
    free, total = fastt.cuda.mem_get_info()
    ooms = fastt.cuda.memory_stats()["num_ooms"]
    with pytest.raises(MemoryError) as info:
        fastt.empty(total // 2 + 1024, dtype=fastt.float32, device="cuda")
    msg = str(info.value)
    assert "CUDA out of memory" in msg
    assert "Tried to allocate" in msg and "GiB" in msg
    assert "total capacity" in msg and "allocated by fastt" in msg
    assert "reserved by fastt" in msg
    assert fastt.cuda.memory_stats()["num_ooms"] == ooms + 1
    x = fastt.ones(1000, device="cuda")
    assert float(x.sum().item()) == 1000.0


@requires_gpu
def test_device_mismatch_names_both_devices():
    a = fastt.ones(3, device="cuda")
    b = fastt.ones(3)
    with pytest.raises(RuntimeError, match="same device") as info:
        a + b
    assert "cuda:0" in str(info.value) and "cpu" in str(info.value)
    with pytest.raises(RuntimeError, match="same device"):
        fastt.mul(b, a)
    with pytest.raises(RuntimeError, match="same device"):
        a.add_(b)


# ------------------------------------------------ deferred device errors --
# A kernel that meets a bad index reports it into the device's error slot
# and the op returns without waiting; every call that waits for the device
# raises it (then clears it). Bad indices are zero-filled in the result.
def _query_until_done(query):
    while not query():
        pass


def _event_sync():
    e = fastt.cuda.Event()
    e.record()
    e.synchronize()


def _event_query():
    e = fastt.cuda.Event()
    e.record()
    _query_until_done(e.query)


def _side_stream_sync():
    # Another stream of the same device: the slot is per device.
    fastt.cuda.Stream().synchronize()


SYNC_POINTS = [
    ("synchronize", lambda y: fastt.cuda.synchronize()),
    ("synchronize_0", lambda y: fastt.cuda.synchronize(0)),
    ("stream_synchronize",
     lambda y: fastt.cuda.current_stream().synchronize()),
    ("side_stream_synchronize", lambda y: _side_stream_sync()),
    ("stream_query",
     lambda y: _query_until_done(fastt.cuda.current_stream().query)),
    ("event_synchronize", lambda y: _event_sync()),
    ("event_query", lambda y: _event_query()),
    ("item", lambda y: y.sum().item()),
    ("cpu", lambda y: y.cpu()),
    ("tolist", lambda y: y.tolist()),
    ("numpy", lambda y: y.cpu().numpy()),
    ("repr", lambda y: repr(y)),
    ("bool", lambda y: bool(y[0] > 0)),
    ("nonzero", lambda y: fastt.nonzero(y)),
    ("masked_select", lambda y: fastt.masked_select(y, y > 0)),
    ("mask_index", lambda y: y[y > 0]),
]


@requires_gpu
@pytest.mark.parametrize("name,sync", SYNC_POINTS,
                         ids=[s[0] for s in SYNC_POINTS])
def test_deferred_index_error_raised_at_each_sync(name, sync):
    x = fastt.arange(6.0, device="cuda") + 1
    i = fastt.tensor([1, 9, -2], device="cuda")
    y = fastt.index_select(x, 0, i)  # must not wait for the device
    with pytest.raises(IndexError) as info:
        sync(y)
    msg = str(info.value)
    assert msg.startswith("index_select(): index 9 is out of bounds for "
                          "dimension 0 with size 6"), msg
    assert "cuda:0" in msg and "next synchronization" in msg
    # Cleared: the same sync is clean now, and the bad element is 0.
    sync(y)
    fastt.cuda.synchronize()
    assert y.tolist() == [2.0, 0.0, 5.0]


@requires_gpu
def test_deferred_error_first_wins_and_is_raised_once():
    x = fastt.ones(4, 4, device="cuda")
    fastt.gather(x, 1, fastt.tensor([[0, -5]], device="cuda"))
    x[fastt.tensor([4], device="cuda")] = 2.0  # dropped: the slot is taken
    x.index_add_(0, fastt.tensor([7], device="cuda"), x[:1])
    with pytest.raises(RuntimeError, match=r"^gather\(\): index -5 is out of "
                       r"bounds for dimension 1 with size 4"):
        fastt.cuda.synchronize()
    fastt.cuda.synchronize()  # the dropped reports do not come back
    fastt.cuda.current_stream().synchronize()
    assert x.sum().item() == 16.0  # every bad write was skipped


@requires_gpu
def test_deferred_target_error():
    import fastt.nn.functional as F
    x = fastt.zeros(3, 4, device="cuda")
    t = fastt.tensor([0, 4, 1], device="cuda")
    loss = F.cross_entropy(x, t)
    with pytest.raises(IndexError, match=r"^Target 4 is out of bounds\. "
                       r"\(cross_entropy on cuda:0"):
        fastt.cuda.synchronize()
    # The bad position counts as ignored: mean over the two others.
    assert loss.item() == pytest.approx(np.log(4.0), rel=1e-6)


@requires_gpu
def test_valid_index_ops_leave_no_error():
    # Many valid index ops, one sync: nothing to raise, values right.
    x = fastt.arange(10.0, device="cuda")
    i = fastt.tensor([9, -10, 3], device="cuda")
    acc = fastt.zeros(3, device="cuda")
    for _ in range(50):
        acc += fastt.index_select(x, 0, i) + fastt.gather(x, 0, i) + x[i]
    fastt.cuda.synchronize()
    assert acc.tolist() == [50 * 27.0, 0.0, 50 * 9.0]


@requires_gpu
def test_index_ops_and_losses_do_not_synchronize():
    """The point of deferred errors: no host wait inside these ops."""
    import fastt.nn.functional as F
    if emu_counters.LIB is None:
        pytest.skip(emu_counters.REASON)
    reset = emu_counters.reset

    def read():
        return emu_counters.read()["api"]
    x = fastt.randn(16, 8, device="cuda")
    i = fastt.tensor([3, -1, 7, 0], device="cuda")
    i2 = i.reshape(2, 2)
    t = fastt.tensor([1, 2, 3, 4], device="cuda")
    w = x.clone().requires_grad_(True)
    ops = [
        lambda: fastt.index_select(x, 0, i),
        lambda: fastt.index_select(x.t(), 1, i),
        lambda: fastt.gather(x, 0, i2),
        lambda: x.clone().scatter_(0, i2, x[:2, :2]),
        lambda: x.clone().scatter_add_(0, i2, x[:2, :2]),
        lambda: x.clone().index_add_(0, i, x[:4]),
        lambda: x[i],
        lambda: x[i, i],
        lambda: x.clone().index_put_((i,), x[:4], accumulate=True),
        lambda: F.embedding(i2, x),
        lambda: F.cross_entropy(x[:4], t),
        lambda: F.nll_loss(x[:4], t, reduction="none"),
        lambda: F.cross_entropy(w[:4], t).backward(),
        lambda: F.embedding(i.abs(), w).sum().backward(),
    ]
    for k, op in enumerate(ops):
        op()  # warm: caches, lazy slot allocation
        reset()
        op()
        api = read()
        waits = {n: c for n, c in api.items()
                 if "ynchronize" in n or "Query" in n or "ToHost" in n}
        assert not waits, f"op {k} waited for the device: {waits}"
    fastt.cuda.synchronize()
