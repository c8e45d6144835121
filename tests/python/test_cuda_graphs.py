"""CUDA graphs (fastt.cuda.CUDAGraph, graph, graph_pool_handle,
make_graphed_callables; kernels/cuda/graph.h): a captured block runs
nothing until replayed, each replay recomputes from the captured tensors'
current values, memory comes from a private pool that later allocations
cannot take, host synchronization inside a capture fails it with an
error, and graphed callables train like the eager ones. Without a GPU the
emulated suite (scripts/cuda_emu_test.sh) runs them: the emulator records
launches, copies and memsets of a capturing stream and replays them."""
import numpy as np
import pytest

import fastt
import fastt.nn as nn
from cuda_util import DEVICE, requires_device

pytestmark = requires_device

cuda = DEVICE.startswith("cuda")
needs_cuda = pytest.mark.skipif(
    not cuda, reason="no CUDA GPU: graphs capture CUDA streams only")


def host(t):
    return t.detach().cpu().numpy()


@needs_cuda
def test_capture_runs_nothing_and_replays_recompute():
    x = fastt.ones(1000, device=DEVICE)
    y = fastt.zeros(1000, device=DEVICE)
    fastt.cuda.synchronize()
    g = fastt.cuda.CUDAGraph()
    with fastt.cuda.graph(g):
        assert fastt.cuda.is_current_stream_capturing()
        z = (x * 2 + 1).relu_()
        y.add_(z)
    assert not fastt.cuda.is_current_stream_capturing()
    assert host(y).sum() == 0  # captured, not run
    g.replay()
    np.testing.assert_array_equal(host(y), np.full(1000, 3.0))
    x.fill_(4.0)  # new input in the captured tensor
    g.replay()
    np.testing.assert_array_equal(host(z), np.full(1000, 9.0))
    np.testing.assert_array_equal(host(y), np.full(1000, 12.0))


@needs_cuda
def test_reductions_matmul_and_softmax_replay():
    rng = np.random.default_rng(0)
    a = fastt.tensor(rng.standard_normal((16, 32)).astype(np.float32),
                     device=DEVICE)
    w = fastt.tensor(rng.standard_normal((32, 8)).astype(np.float32),
                     device=DEVICE)
    g = fastt.cuda.CUDAGraph()
    with fastt.cuda.graph(g):
        out = (a @ w).softmax(-1).sum(0)
    for _ in range(2):
        new = rng.standard_normal((16, 32)).astype(np.float32)
        a.copy_(fastt.tensor(new, device=DEVICE))
        g.replay()
        ref = fastt.tensor(new) @ fastt.tensor(host(w))
        np.testing.assert_allclose(host(out), host(ref.softmax(-1).sum(0)),
                                   rtol=1e-5, atol=1e-5)


@needs_cuda
def test_pool_memory_is_private_and_shared_on_request():
    x = fastt.randn(4096, device=DEVICE)
    g1 = fastt.cuda.CUDAGraph()
    with fastt.cuda.graph(g1):
        tmp = x * 3
        out1 = tmp + 1
    tmp_ptr = tmp.data_ptr()
    del tmp  # freed into the graph's pool, not to the allocator
    after = [fastt.empty(4096, device=DEVICE) for _ in range(8)]
    ptrs = {t.data_ptr() for t in after}
    assert tmp_ptr not in ptrs and out1.data_ptr() not in ptrs
    g1.replay()
    np.testing.assert_allclose(host(out1), host(x) * 3 + 1, rtol=1e-6)
    # A second graph in the first one's pool, replayed in capture order.
    g2 = fastt.cuda.CUDAGraph()
    with fastt.cuda.graph(g2, pool=g1.pool()):
        out2 = out1 * 2
    g1.replay()
    g2.replay()
    np.testing.assert_allclose(host(out2), (host(x) * 3 + 1) * 2,
                               rtol=1e-6)
    h = fastt.cuda.graph_pool_handle()
    g3 = fastt.cuda.CUDAGraph()
    with fastt.cuda.graph(g3, pool=h):
        out3 = x - 1
    g3.replay()
    np.testing.assert_allclose(host(out3), host(x) - 1, rtol=1e-6)
    # Dropping graphs and tensors gives the memory back.
    del g1, g2, g3, out1, out2, out3, h, after


@needs_cuda
def test_host_sync_inside_a_capture_fails_it_with_an_error():
    x = fastt.ones(10, device=DEVICE)
    g = fastt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="capturing|capture"):
        with fastt.cuda.graph(g):
            y = x * 2
            y.sum().item()  # a device-to-host copy
    assert not fastt.cuda.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="no graph was captured"):
        g.replay()
    # The device still works, and a new capture does too.
    np.testing.assert_array_equal(host(x * 2), np.full(10, 2.0))
    g2 = fastt.cuda.CUDAGraph()
    with fastt.cuda.graph(g2):
        y = x + 5
    g2.replay()
    np.testing.assert_array_equal(host(y), np.full(10, 6.0))


@needs_cuda
def test_random_ops_and_the_default_stream_are_refused():
    x = fastt.ones(10, device=DEVICE)
    g = fastt.cuda.CUDAGraph()
    with pytest.raises(NotImplementedError, match="random.*CUDA graph"):
        with fastt.cuda.graph(g):
            fastt.nn.functional.dropout(x, 0.5, training=True)
    g = fastt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="non-default stream"):
        g.capture_begin()  # the current stream is the default one
    with pytest.raises(ValueError, match="capture_error_mode"):
        g.capture_begin(capture_error_mode="strict")
    with fastt.cuda.graph(g):
        y = x * 3
    with pytest.raises(RuntimeError, match="already owns a captured"):
        with fastt.cuda.graph(g):
            pass
    g.replay()
    np.testing.assert_array_equal(host(y), np.full(10, 3.0))
    g.reset()
    with pytest.raises(RuntimeError, match="no graph was captured"):
        g.replay()


def _mlp():
    fastt.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 4))


@needs_cuda
def test_make_graphed_callables_trains_like_eager():
    rng = np.random.default_rng(1)
    batches = [(rng.standard_normal((5, 8)).astype(np.float32),
                rng.integers(0, 4, 5)) for _ in range(4)]
    eager = _mlp().to(DEVICE)
    graphed = _mlp().to(DEVICE)
    sample = fastt.zeros(5, 8, device=DEVICE)
    graphed = fastt.cuda.make_graphed_callables(graphed, (sample,))
    opts = [fastt.optim.SGD(m.parameters(), lr=0.1)
            for m in (eager, graphed)]
    for xb, yb in batches:
        losses = []
        for m, opt in zip((eager, graphed), opts):
            x = fastt.tensor(xb, device=DEVICE)
            y = fastt.tensor(yb, device=DEVICE)
            opt.zero_grad()
            loss = nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            losses.append(float(loss))
        np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)
    for pe, pg in zip(eager.parameters(), graphed.parameters()):
        np.testing.assert_allclose(host(pe), host(pg), rtol=1e-5,
                                   atol=1e-6)
    with pytest.raises(ValueError, match="sample arguments"):
        graphed(fastt.zeros(3, 8, device=DEVICE))


def _trainer(dropout):
    fastt.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(dropout),
                          nn.Linear(32, 4)).to(DEVICE)
    opt = fastt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, step


@needs_cuda
@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_compiled_steps_replay_cuda_kernels_as_device_graphs(dropout):
    rng = np.random.default_rng(2)
    batches = [(fastt.tensor(rng.standard_normal((6, 8)).astype(np.float32),
                             device=DEVICE),
                fastt.tensor(rng.integers(0, 4, 6), device=DEVICE))
               for _ in range(5)]
    model_e, eager = _trainer(dropout)
    model_c, step = _trainer(dropout)
    c = fastt.compile(step)
    for x, y in batches:
        fastt.manual_seed(7)
        le = host(eager(x, y))
        fastt.manual_seed(7)
        lc = host(c(x, y))
        assert le.tobytes() == lc.tobytes()
    assert c.stats["replays"] == 3, (c.stats, c.eager_reason)
    rec = c._entries[0].step
    # Forward and backward (with the .grad assignments around them) are
    # one device graph; dropout's kernel, whose counters a replay patches,
    # runs on its own between two graphs. The optimizer's step is a host
    # step (its fused kernel launched eagerly, reading the current lr).
    assert rec.num_device_graphs == (1 if dropout == 0 else 2)
    for pe, pc in zip(model_e.parameters(), model_c.parameters()):
        assert host(pe).tobytes() == host(pc).tobytes()


@needs_cuda
def test_make_graphed_callables_chains_callables_in_one_pool():
    # Two modules graphed together (one pool: forwards captured in order,
    # backwards in reverse), then run as training runs them: the second
    # one's forward must not overwrite what the first one's backward reads.
    def build():
        fastt.manual_seed(0)
        # GELU saves its input: an intermediate of the first graph that
        # its backward reads after the second forward ran.
        return (nn.Sequential(nn.Linear(8, 16), nn.GELU(),
                              nn.Linear(16, 16)).to(DEVICE),
                nn.Sequential(nn.Linear(16, 16), nn.GELU(),
                              nn.Linear(16, 4)).to(DEVICE))
    rng = np.random.default_rng(3)
    batches = [(rng.standard_normal((5, 8)).astype(np.float32),
                rng.integers(0, 4, 5)) for _ in range(4)]
    ea, eb = build()
    ga, gb = build()
    ga, gb = fastt.cuda.make_graphed_callables(
        (ga, gb), ((fastt.zeros(5, 8, device=DEVICE),),
                   (fastt.zeros(5, 16, device=DEVICE, requires_grad=True),)))
    params = {"e": list(ea.parameters()) + list(eb.parameters()),
              "g": list(ga.parameters()) + list(gb.parameters())}
    opts = {k: fastt.optim.SGD(v, lr=0.1) for k, v in params.items()}
    for xb, yb in batches:
        for k, (a, b) in {"e": (ea, eb), "g": (ga, gb)}.items():
            x = fastt.tensor(xb, device=DEVICE)
            y = fastt.tensor(yb, device=DEVICE)
            opts[k].zero_grad()
            nn.functional.cross_entropy(b(a(x)), y).backward()
            opts[k].step()
    for pe, pg in zip(params["e"], params["g"]):
        np.testing.assert_allclose(host(pe), host(pg), rtol=1e-5,
                                   atol=1e-6)


@needs_cuda
def test_compiled_steps_guard_cuda_autocast():
    fastt.manual_seed(0)
    lin = nn.Linear(8, 8).to(DEVICE)

    def f(x):
        with fastt.no_grad():
            return lin(x)
    c = fastt.compile(f)
    x = fastt.randn(4, 8, device=DEVICE)
    for _ in range(3):
        assert c(x).dtype == fastt.float32
    with fastt.autocast("cuda", dtype=fastt.bfloat16):
        assert c(x).dtype == fastt.bfloat16  # a guard miss: captured again
    assert c(x).dtype == fastt.float32
    assert c.stats["captures"] == 2, c.stats
