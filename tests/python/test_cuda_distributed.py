"""fastt.distributed with CUDA tensors: Gloo through host copies (two
ranks), and the NCCL back end in a world of one — against the real
libnccl.so.2 where one loads, else against the CUDA emulator's one-rank
stand-in (tests/cuda_emu/fake_nccl.cpp), which runs the whole NCCL path
(loading, the unique id through the store, types, ops, routing) but not
NCCL itself. Multi-rank NCCL needs GPUs: bench/gpu_check.sh."""
import os

import numpy as np
import pytest

import fastt
import fastt.distributed as dist
from dist_util import run_ranks

HAVE_CUDA = fastt.cuda.is_available()
requires_cuda = pytest.mark.skipif(not HAVE_CUDA, reason="no CUDA GPU")
FAKE = os.path.join(os.path.dirname(fastt._C.__file__),
                    "libfastt_fake_nccl.so")


def test_missing_nccl_is_a_clear_error(monkeypatch):
    # Without CUDA: "built without CUDA"; with it, a library that does not
    # load names the wheel to install.
    monkeypatch.setenv("FASTT_NCCL_LIBRARY", "/nonexistent/libnccl.so.2")
    with pytest.raises(RuntimeError,
                       match="without CUDA|nvidia-nccl-cu13"):
        dist.init_process_group("nccl", store=dist.HashStore(), rank=0,
                                world_size=1)
    assert not dist.is_initialized()


@requires_cuda
def test_gloo_takes_cuda_tensors_through_the_host(tmp_path):
    out = run_ranks("""
        dist.init_process_group("gloo")
        x = fastt.arange(6.0, device="cuda").reshape(2, 3) * (rank + 1)
        dist.all_reduce(x)
        y = (fastt.arange(6.0, device="cuda").reshape(2, 3) + rank).t()
        dist.broadcast(y, src=1)
        lst = [fastt.zeros(2, device="cuda") for _ in range(ws)]
        dist.all_gather(lst, fastt.full((2,), float(rank), device="cuda"))
        w = dist.all_reduce(fastt.ones(3, device="cuda"), async_op=True)
        w.wait()
        result = (x.device.type, x.cpu().tolist(), y.cpu().tolist(),
                  [t.cpu().tolist() for t in lst], w.result()[0].tolist())
    """, 2, tmp_path)
    for dev, x, y, lst, z in out:
        assert dev == "cuda"
        assert x == [[0.0, 3.0, 6.0], [9.0, 12.0, 15.0]]
        assert y == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
        assert lst == [[0.0, 0.0], [1.0, 1.0]]
        assert z == [2.0, 2.0, 2.0]


def _nccl_library():
    if os.path.exists(FAKE):
        return FAKE
    if dist.is_nccl_available():
        return None     # the real one: the wheel's or the system's
    pytest.skip("no NCCL library (nvidia-nccl-cu13) here")


@requires_cuda
def test_nccl_world_of_one(monkeypatch):
    lib = _nccl_library()
    if lib:
        monkeypatch.setenv("FASTT_NCCL_LIBRARY", lib)
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0,
                            world_size=1)
    try:
        assert dist.get_backend() == "nccl"
        for dt in [fastt.float32, fastt.float16, fastt.bfloat16,
                   fastt.float64, fastt.int64, fastt.int32, fastt.uint8,
                   fastt.bool, fastt.complex64]:
            x = (fastt.arange(1, 6) % 2 == 1).to(dt) if dt == fastt.bool \
                else fastt.arange(1, 6).to(dt)
            t = x.cuda()
            dist.all_reduce(t)
            assert t.device.type == "cuda" and t.dtype == dt
            assert (t.cpu() == x).all().item(), dt
        t = fastt.arange(4.0, device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        assert t.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
        with pytest.raises(dist.DistBackendError, match="ReduceOp.MAX"):
            dist.all_reduce(fastt.ones(2, dtype=fastt.complex64,
                                       device="cuda"),
                            op=dist.ReduceOp.MAX)
        with pytest.raises(dist.DistBackendError, match="int16"):
            dist.all_reduce(fastt.ones(2, dtype=fastt.int16, device="cuda"))
        nc = fastt.arange(6.0, device="cuda").reshape(2, 3).t()
        dist.broadcast(nc, src=0)
        assert nc.cpu().tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
        out = fastt.zeros(1, 3, device="cuda")
        dist.all_gather_into_tensor(out, fastt.ones(3, device="cuda"))
        assert out.cpu().tolist() == [[1.0, 1.0, 1.0]]
        g = [fastt.zeros(2, device="cuda")]
        dist.gather(fastt.full((2,), 5.0, device="cuda"), g, dst=0)
        assert g[0].cpu().tolist() == [5.0, 5.0]
        s = fastt.zeros(2, device="cuda")
        dist.scatter(s, [fastt.full((2,), 6.0, device="cuda")], src=0)
        assert s.cpu().tolist() == [6.0, 6.0]
        a = fastt.zeros(4, device="cuda")
        dist.all_to_all_single(a, fastt.arange(4.0, device="cuda"))
        assert a.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
        r = fastt.zeros(2, device="cuda")
        dist.reduce_scatter_tensor(r, fastt.full((2,), 3.0, device="cuda"))
        assert r.cpu().tolist() == [3.0, 3.0]
        dist.barrier()
        # CPU tensors and the object collectives go to Gloo beside NCCL.
        c = fastt.ones(3)
        dist.all_reduce(c)
        objs = [None]
        dist.all_gather_object(objs, {"x": 1})
        assert c.tolist() == [1.0, 1.0, 1.0] and objs == [{"x": 1}]
        # DDP of a CUDA module: a step equals the plain one.
        fastt.manual_seed(0)
        m = fastt.nn.Linear(4, 3).cuda()
        ref = fastt.nn.Linear(4, 3).cuda()
        ref.load_state_dict(m.state_dict())
        ddp = fastt.nn.parallel.DistributedDataParallel(m)
        x = fastt.randn(5, 4, device="cuda")
        ddp(x).square().sum().backward()
        ref(x).square().sum().backward()
        np.testing.assert_allclose(m.weight.grad.cpu().numpy(),
                                   ref.weight.grad.cpu().numpy(), rtol=1e-6)
    finally:
        dist.destroy_process_group()
