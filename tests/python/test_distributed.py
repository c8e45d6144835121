"""fastt.distributed: the stores, init_process_group's rendezvous, every
collective on 2 and 3 ranks (results checked against the same reduction
done locally), async Work, point-to-point, object collectives, subgroups,
and the errors (bad arguments, a store timeout, a rank that dies)."""

import datetime
import os
import subprocess
import sys
import time

import pytest

import fastt
import fastt.distributed as dist

from dist_util import ROOT, free_port, run_ranks

pytestmark = pytest.mark.skipif(
    os.environ.get("CI") != "true" and not dist.is_available(),
    reason="fastt built without Gloo")


def test_available_in_ci():
    # CI installs libgloo-dev: a build that lost it must fail, not skip.
    assert dist.is_available()
    assert dist.is_gloo_available() and not dist.is_nccl_available()


# ---- Stores ----

def _store_roundtrip(s):
    s.set("a", "x")
    s.set("b", b"\x00\xff")
    assert s.get("a") == b"x" and s.get("b") == b"\x00\xff"
    assert s.add("n", 5) == 5 and s.add("n", -2) == 3
    assert s.get("n") == b"3"
    assert s.check(["a", "b"]) and not s.check(["a", "zz"])
    assert s.compare_set("c", "", "v1") == b"v1"
    assert s.compare_set("c", "wrong", "v2") == b"v1"
    assert s.compare_set("c", "v1", "v2") == b"v2"
    assert s.num_keys() == 4
    assert s.delete_key("c") and not s.delete_key("c")
    assert s.num_keys() == 3
    s.wait(["a", "n"])
    t0 = time.monotonic()
    with pytest.raises(dist.DistStoreError, match="wait timeout"):
        s.wait(["never"], datetime.timedelta(milliseconds=100))
    assert time.monotonic() - t0 < 5
    # The store still answers after a timed-out wait.
    assert s.get("a") == b"x"
    s.set_timeout(datetime.timedelta(milliseconds=50))
    with pytest.raises(dist.DistStoreError):
        s.get("never")
    with pytest.raises(dist.DistStoreError, match="not an integer"):
        s.add("a", 1)
    with pytest.raises(TypeError):
        s.set("a", 3)


def test_hash_store():
    _store_roundtrip(dist.HashStore())
    assert isinstance(dist.DistStoreError("x"), RuntimeError)


def test_file_store(tmp_path):
    path = tmp_path / "store"
    _store_roundtrip(dist.FileStore(str(path), 1))


def test_tcp_store_and_prefix():
    master = dist.TCPStore("127.0.0.1", 0, 2, is_master=True,
                           wait_for_workers=False)
    assert master.port > 0
    client = dist.TCPStore("127.0.0.1", master.port, 2,
                           timeout=datetime.timedelta(seconds=10))
    _store_roundtrip(client)
    assert master.get("a") == b"x"
    p = dist.PrefixStore("pre", master)
    p.set("k", "v")
    assert master.get("pre/k") == b"v" and p.get("k") == b"v"
    assert p.add("ctr", 2) == 2 and master.get("pre/ctr") == b"2"


def test_tcp_store_across_processes(tmp_path):
    out = run_ranks("""
        s = dist.TCPStore("127.0.0.1", int(os.environ["MASTER_PORT"]), ws,
                          is_master=(rank == 0))
        s.set(f"from{rank}", str(rank * 10))
        s.add("count", 1)
        s.wait([f"from{r}" for r in range(ws)])
        result = ([s.get(f"from{r}") for r in range(ws)],
                  int(s.get("count")) >= 1)
        s.add("done", 1)
        if rank == 0:
            while int(s.get("done")) < ws:
                pass
    """, 3, tmp_path)
    assert all(r == ([b"0", b"10", b"20"], True) for r in out)


def test_tcp_store_errors():
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(dist.DistNetworkError, match="timed out"):
        dist.TCPStore("127.0.0.1", port,
                      timeout=datetime.timedelta(milliseconds=300))
    with pytest.raises(dist.DistStoreError, match="1/2 clients joined"):
        dist.TCPStore("127.0.0.1", 0, 2, is_master=True,
                      timeout=datetime.timedelta(milliseconds=300))
    assert time.monotonic() - t0 < 10
    m = dist.TCPStore("127.0.0.1", 0, is_master=True)
    with pytest.raises(dist.DistNetworkError, match="failed to listen"):
        dist.TCPStore("127.0.0.1", m.port, is_master=True)
    with pytest.raises(TypeError):
        dist.TCPStore("127.0.0.1", "80")


# ---- The default group ----

def test_not_initialized_and_bad_backend():
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="not been initialized"):
        dist.all_reduce(fastt.ones(2))
    with pytest.raises(RuntimeError, match="NCCL"):
        dist.init_process_group("nccl", rank=0, world_size=1,
                                store=dist.HashStore())
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("mpix", rank=0, world_size=1,
                                store=dist.HashStore())
    with pytest.raises(ValueError, match="MASTER_ADDR"):
        env = {k: v for k, v in os.environ.items() if k != "MASTER_ADDR"}
        old = os.environ
        os.environ = env
        try:
            dist.init_process_group("gloo", rank=0, world_size=1)
        finally:
            os.environ = old
    assert not dist.is_initialized()


def test_world_of_one():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0,
                            world_size=1)
    try:
        assert dist.is_initialized() and dist.get_rank() == 0
        assert dist.get_world_size() == 1 and dist.get_backend() == "gloo"
        with pytest.raises(ValueError, match="twice"):
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0,
                                    world_size=1)
        t = fastt.arange(5.0)
        dist.all_reduce(t)
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
        w = dist.all_reduce(t, async_op=True)
        assert w.wait() and w.is_completed() and w.is_success()
        assert w.result()[0] is t
        out = [None]
        dist.all_gather_object(out, {"a": 1})
        assert out == [{"a": 1}]
        with pytest.raises(ValueError, match="same as the rank"):
            dist.send(t, 0)
        with pytest.raises(TypeError, match="fastt.Tensor"):
            dist.all_reduce([1, 2])
        with pytest.raises(ValueError, match="ReduceOp"):
            dist.all_reduce(t, op=42)
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()


_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32",
           "int16", "int8", "uint8", "bool", "complex64", "complex128"]


def test_all_reduce_every_dtype_and_op(tmp_path):
    out = run_ranks("""
        dist.init_process_group("gloo")
        res = {}
        for name in %r:
            dt = getattr(fastt, name)
            base = fastt.arange(1, 8, dtype=fastt.float64) + rank
            if name.startswith("complex"):
                x = (base + 1j * (base - 3)).to(dt)
            elif name == "bool":
                x = (base.to(fastt.int64) %% (rank + 2)) == 0
            else:
                x = base.to(dt)
            for op in ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND",
                       "BOR", "BXOR"]:
                t = x.clone()
                try:
                    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
                    res[name, op] = ("ok", t.tolist())
                except Exception as e:
                    res[name, op] = (type(e).__name__, str(e))
            res[name, "input"] = x.tolist()
        result = res
    """ % (_DTYPES,), 3, tmp_path)

    def ops(o):
        return {k: v for k, v in o.items() if k[1] != "input"}
    res = out[0]
    assert all(ops(o) == ops(res) for o in out[1:])
    import numpy as np
    for name in _DTYPES:
        inputs = [o[name, "input"] for o in out]
        # Every rank computed the same inputs but its own: rebuild them.
        xs = []
        for r in range(3):
            base = np.arange(1, 8, dtype=np.float64) + r
            if name.startswith("complex"):
                xs.append(base + 1j * (base - 3))
            elif name == "bool":
                xs.append(base.astype(np.int64) % (r + 2) == 0)
            else:
                xs.append(base)
        assert np.allclose(np.array(inputs[0], dtype=xs[0].dtype), xs[0])
        stack = np.stack(xs)
        cplx = name.startswith("complex")
        integral = name.startswith(("int", "uint"))
        want = {"SUM": stack.sum(0), "PRODUCT": stack.prod(0)}
        if name == "bool":
            want = {"SUM": stack.any(0), "PRODUCT": stack.all(0),
                    "MIN": stack.all(0), "MAX": stack.any(0),
                    "BAND": stack.all(0), "BOR": stack.any(0),
                    "BXOR": stack.sum(0) % 2 == 1}
        elif not cplx:
            want.update(MIN=stack.min(0), MAX=stack.max(0))
        if integral:
            ints = stack.astype(np.int64)
            want.update(BAND=ints[0] & ints[1] & ints[2],
                        BOR=ints[0] | ints[1] | ints[2],
                        BXOR=ints[0] ^ ints[1] ^ ints[2])
        if not integral and name != "bool":
            want["AVG"] = stack.sum(0) / 3
        for op in ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR",
                   "BXOR"]:
            status, got = res[name, op]
            if op not in want:
                assert status == "DistBackendError", (name, op, got)
                assert f"ReduceOp.{op}" in got and name in got
                continue
            assert status == "ok", (name, op, got)
            w = want[op]
            if name in ("int8", "uint8", "int16", "int32"):
                bits = {"int8": np.int8, "uint8": np.uint8,
                        "int16": np.int16, "int32": np.int32}[name]
                w = np.asarray(w).astype(np.int64).astype(bits)
            tol = 1e-2 if name in ("float16", "bfloat16") else 1e-6
            assert np.allclose(np.array(got), w, rtol=tol), (name, op, got,
                                                             w)


def test_collectives(tmp_path):
    out = run_ranks("""
        dist.init_process_group("gloo")
        r = {}
        # broadcast from a non-zero rank, non-contiguous
        x = (fastt.arange(6.0).reshape(2, 3) * (rank + 1)).t()
        dist.broadcast(x, src=1)
        r["bcast"] = x.tolist()
        # reduce to rank 2
        y = fastt.full((3,), float(rank + 1))
        dist.reduce(y, dst=2, op=dist.ReduceOp.SUM)
        r["reduce"] = y.tolist()
        # all_gather into a list and into one tensor (cat and stack)
        lst = [fastt.zeros(2, 2) for _ in range(ws)]
        dist.all_gather(lst, fastt.full((2, 2), float(rank)))
        r["all_gather"] = [t[0, 0].item() for t in lst]
        cat = fastt.zeros(2 * ws, dtype=fastt.int64)
        dist.all_gather_into_tensor(cat, fastt.tensor([rank, -rank]))
        r["ag_cat"] = cat.tolist()
        st = fastt.zeros(ws, 2, dtype=fastt.int64)
        dist.all_gather_into_tensor(st, fastt.tensor([rank, 7]))
        r["ag_stack"] = st.tolist()
        # reduce_scatter
        o = fastt.zeros(2)
        dist.reduce_scatter(o, [fastt.full((2,), float(rank + 10 * i))
                                for i in range(ws)])
        r["reduce_scatter"] = o.tolist()
        o2 = fastt.zeros(1, dtype=fastt.float64)
        dist.reduce_scatter_tensor(
            o2, fastt.arange(ws, dtype=fastt.float64) * (rank + 1),
            op=dist.ReduceOp.MAX)
        r["rs_tensor"] = o2.tolist()
        # gather / scatter
        g = [fastt.zeros(3) for _ in range(ws)] if rank == 0 else None
        dist.gather(fastt.full((3,), float(rank)), g, dst=0)
        r["gather"] = None if g is None else [t.tolist() for t in g]
        s = fastt.zeros(2)
        dist.scatter(s, [fastt.full((2,), float(i * 100)) for i in range(ws)]
                     if rank == 1 else None, src=1)
        r["scatter"] = s.tolist()
        # all_to_all_single: equal parts, then uneven ones
        a = fastt.arange(ws * 2) + 100 * rank
        b = fastt.zeros(ws * 2, dtype=fastt.int64)
        dist.all_to_all_single(b, a)
        r["a2a"] = b.tolist()
        in_splits = [i + 1 for i in range(ws)]          # to rank i: i+1 rows
        out_splits = [rank + 1] * ws                    # from each: rank+1
        a = fastt.full((sum(in_splits), 2), float(rank))
        b = fastt.zeros(sum(out_splits), 2)
        dist.all_to_all_single(b, a, out_splits, in_splits)
        r["a2a_uneven"] = b[:, 0].tolist()
        outs = [fastt.zeros(i + 1) for i in range(ws)]
        dist.all_to_all(outs, [fastt.full((rank + 1,), float(rank * 10 + i))
                               for i in range(ws)])
        r["a2a_list"] = [t.tolist() for t in outs]
        dist.barrier()
        # objects
        objs = [None] * ws
        dist.all_gather_object(objs, {"rank": rank, "s": "x" * rank})
        r["ag_obj"] = objs
        bl = [f"from{rank}", rank] if rank == 2 else [None, None]
        dist.broadcast_object_list(bl, src=2)
        r["bcast_obj"] = bl
        go = [None] * ws if rank == 0 else None
        dist.gather_object(("g", rank), go, dst=0)
        r["gather_obj"] = go
        so = [None]
        dist.scatter_object_list(so, [f"s{i}" for i in range(ws)]
                                 if rank == 0 else None, src=0)
        r["scatter_obj"] = so[0]
        result = r
    """, 3, tmp_path)
    for rank, r in enumerate(out):
        x1 = [[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]]
        assert r["bcast"] == x1
        assert r["reduce"] == ([6.0] * 3 if rank == 2 else
                               [float(rank + 1)] * 3)
        assert r["all_gather"] == [0.0, 1.0, 2.0]
        assert r["ag_cat"] == [0, 0, 1, -1, 2, -2]
        assert r["ag_stack"] == [[0, 7], [1, 7], [2, 7]]
        assert r["reduce_scatter"] == [3.0 + 30 * rank] * 2
        assert r["rs_tensor"] == [3.0 * rank]
        assert r["gather"] == ([[float(i)] * 3 for i in range(3)]
                               if rank == 0 else None)
        assert r["scatter"] == [100.0 * rank] * 2
        assert r["a2a"] == [2 * rank + 100 * i + k for i in range(3)
                            for k in range(2)]
        assert r["a2a_uneven"] == [float(i) for i in range(3)
                                   for _ in range(rank + 1)]
        assert r["a2a_list"] == [[float(i * 10 + rank)] * (i + 1)
                                 for i in range(3)]
        assert r["ag_obj"] == [{"rank": i, "s": "x" * i} for i in range(3)]
        assert r["bcast_obj"] == ["from2", 2]
        assert r["gather_obj"] == ([("g", i) for i in range(3)]
                                   if rank == 0 else None)
        assert r["scatter_obj"] == f"s{rank}"


def test_async_p2p_and_groups(tmp_path):
    out = run_ranks("""
        dist.init_process_group("gloo", init_method="env://")
        r = {}
        # async collectives keep their order; wait() makes results visible
        ts = [fastt.full((1000,), float(rank + i)) for i in range(4)]
        works = [dist.all_reduce(t, async_op=True) for t in ts]
        for w in works:
            w.wait()
        r["async"] = [t[0].item() for t in ts]
        r["completed"] = all(w.is_completed() for w in works)
        # a non-contiguous tensor through an async op
        nc = fastt.ones(4, 3).t()
        w = dist.all_reduce(nc, async_op=True)
        w.wait()
        r["nc"] = nc.sum().item()
        # point to point: a ring, then any-source
        nxt, prv = (rank + 1) % ws, (rank - 1) % ws
        send = dist.isend(fastt.full((5,), float(rank)), nxt, tag=3)
        got = fastt.zeros(5)
        dist.irecv(got, prv, tag=3).wait()
        send.wait()
        r["ring"] = got.tolist()
        if rank == 0:
            froms = set()
            for _ in range(ws - 1):
                buf = fastt.zeros(1)
                froms.add((dist.recv(buf), buf.item()))
            r["any"] = sorted(froms)
        else:
            dist.send(fastt.tensor([rank * 2.0]), 0)
        # a subgroup of ranks 0 and 2
        sub = dist.new_group([0, 2])
        t = fastt.tensor([float(rank + 1)])
        if rank != 1:
            assert dist.get_world_size(sub) == 2
            dist.all_reduce(t, group=sub)
            dist.broadcast(t, src=2, group=sub)
            r["sub_rank"] = dist.get_rank(sub)
            r["ranks"] = dist.get_process_group_ranks(sub)
        else:
            assert sub is dist.GroupMember.NON_GROUP_MEMBER
            assert dist.get_rank(sub) == -1
            assert dist.all_reduce(t, group=sub) is None
        r["sub"] = t.item()
        dist.barrier()
        dist.destroy_process_group()
        result = r
    """, 3, tmp_path)
    for rank, r in enumerate(out):
        assert r["async"] == [3.0 + 3 * i for i in range(4)]
        assert r["completed"] and r["nc"] == 36.0
        assert r["ring"] == [float((rank - 1) % 3)] * 5
        if rank == 0:
            assert r["any"] == [(1, 2.0), (2, 4.0)]
        if rank == 1:
            assert r["sub"] == 2.0
        else:
            assert r["sub"] == 4.0 and r["ranks"] == [0, 2]
            assert r["sub_rank"] == (0 if rank == 0 else 1)


def test_argument_errors(tmp_path):
    out = run_ranks("""
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:"
                                + os.environ["MASTER_PORT"],
                                rank=rank, world_size=ws)
        errs = []
        def expect(exc, f, *a, **k):
            try:
                f(*a, **k)
            except exc as e:
                errs.append(str(e))
            else:
                errs.append(None)
        expect(ValueError, dist.all_gather, [fastt.zeros(2)], fastt.ones(2))
        expect(ValueError, dist.all_gather,
               [fastt.zeros(3), fastt.zeros(3)], fastt.ones(2))
        expect(ValueError, dist.all_gather_into_tensor, fastt.zeros(3),
               fastt.ones(2))
        expect(ValueError, dist.broadcast, fastt.ones(2), 5)
        expect(ValueError, dist.all_to_all_single, fastt.zeros(3),
               fastt.ones(3))
        expect(dist.DistBackendError, dist.all_reduce,
               fastt.ones(2, dtype=fastt.complex64), dist.ReduceOp.MAX)
        expect(dist.DistBackendError, dist.all_reduce,
               fastt.ones(2, dtype=fastt.int32), dist.ReduceOp.AVG)
        # the group still works after refused calls
        t = fastt.ones(2)
        dist.all_reduce(t)
        result = (errs, t.tolist())
    """, 2, tmp_path)
    for errs, t in out:
        assert all(e is not None for e in errs), errs
        assert "tensor_list has 1" in errs[0]
        assert "invalid rank" in errs[3].lower() or "not part" in errs[3]
        assert "ReduceOp.MAX" in errs[5] and "complex64" in errs[5]
        assert t == [2.0, 2.0]


def test_dead_peer_is_an_error_not_a_hang(tmp_path):
    t0 = time.monotonic()
    out = run_ranks("""
        import datetime
        dist.init_process_group("gloo",
                                timeout=datetime.timedelta(seconds=20))
        t = fastt.ones(4)
        dist.all_reduce(t)
        if rank == 1:
            os._exit(3)
        dist.all_reduce(t)
        result = "no error"
    """, 2, tmp_path, expect_ok=False)
    assert time.monotonic() - t0 < 40
    status, text = out[0]
    assert status == "error" and "DistBackendError" in text, text
    assert "all_reduce" in text
    assert out[1][0] == "error" and "exit 3" in out[1][1]


def test_file_rendezvous(tmp_path):
    path = tmp_path / "rdv"
    out = run_ranks(f"""
        dist.init_process_group("gloo", init_method="file://{path}",
                                rank=rank, world_size=ws)
        t = fastt.tensor([float(rank)])
        dist.all_reduce(t)
        result = t.item()
        dist.barrier()
    """, 2, tmp_path)
    assert out == [1.0, 1.0]


def test_torch_script_runs_unchanged(tmp_path):
    """A torch-style script (import fastt as torch) with env:// init."""
    script = tmp_path / "script.py"
    script.write_text(
        "import fastt as torch\n"
        "dist = torch.distributed\n"
        "dist.init_process_group(backend='gloo')\n"
        "x = torch.ones(3) * (dist.get_rank() + 1)\n"
        "dist.all_reduce(x, op=dist.ReduceOp.SUM)\n"
        "assert x.tolist() == [3.0, 3.0, 3.0], x\n"
        "dist.destroy_process_group()\n")
    port = free_port()
    procs = [subprocess.Popen(
        [sys.executable, str(script)],
        env=dict(os.environ, RANK=str(r), WORLD_SIZE="2",
                 MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                 PYTHONPATH=os.path.join(ROOT, "python")))
        for r in range(2)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]


def test_collectives_release_the_gil(tmp_path):
    """While rank 0 waits in a blocking all_reduce (rank 1 joins 1 s
    late), another Python thread of rank 0 keeps running."""
    out = run_ranks("""
        import threading, time
        dist.init_process_group("gloo")
        dist.barrier()
        if rank == 1:
            time.sleep(1.0)
            dist.all_reduce(fastt.ones(4))
            result = None
        else:
            ticks = [0]
            stop = threading.Event()
            def spin():
                while not stop.is_set():
                    ticks[0] += 1
                    time.sleep(0.001)
            th = threading.Thread(target=spin)
            th.start()
            t0 = time.monotonic()
            dist.all_reduce(fastt.ones(4))
            waited = time.monotonic() - t0
            stop.set()
            th.join()
            result = (waited, ticks[0])
    """, 2, tmp_path)
    waited, ticks = out[0]
    assert waited > 0.5
    assert ticks > 100, ticks   # ~1 ms per tick while the call blocked


def test_review_regressions(tmp_path):
    """Zero-size collectives; a tag-0 message next to a gather; tags out of
    range; destroying a group with work over numpy memory in flight."""
    out = run_ranks("""
        import numpy as np, time
        dist.init_process_group("gloo")
        r = {}
        z = [fastt.zeros(0) for _ in range(ws)]
        dist.all_gather(z, fastt.zeros(0))
        dist.all_gather_into_tensor(fastt.zeros(0), fastt.zeros(0))
        dist.all_reduce(fastt.zeros(0))
        dist.broadcast(fastt.zeros(0), src=0)
        dist.gather(fastt.zeros(0), z if rank == 0 else None, dst=0)
        dist.all_to_all_single(fastt.zeros(0), fastt.zeros(0))
        r["zero"] = True
        if rank == 1:
            w = dist.isend(fastt.full((4,), 100.0), dst=0)
            dist.gather(fastt.full((4,), 1.0), dst=0)
            w.wait()
        else:
            outs = [fastt.zeros(4) for _ in range(ws)]
            dist.gather(fastt.zeros(4), outs, dst=0)
            got = fastt.zeros(4)
            dist.recv(got, src=1)
            r["slots"] = (outs[1].tolist(), got.tolist())
        try:
            dist.send(fastt.ones(1), 1 - rank, tag=2 ** 33)
        except ValueError as e:
            r["tag"] = str(e)
        if rank == 1:
            time.sleep(1.0)
        w = dist.all_reduce(fastt.from_numpy(np.ones(4, np.float32)),
                            async_op=True)
        del w
        dist.destroy_process_group()
        r["destroyed"] = True
        result = r
    """, 2, tmp_path)
    for rank, r in enumerate(out):
        assert r["zero"] and r["destroyed"]
        assert "tag" in r["tag"]
    assert out[0]["slots"] == ([1.0] * 4, [100.0] * 4)


def test_file_store_outlives_early_finishers(tmp_path):
    path = str(tmp_path / "fs")
    a = dist.FileStore(path, 2)
    a.set("k", "v")
    del a                       # the first of two users is done
    assert os.path.exists(path)
    b = dist.FileStore(path, 2)
    assert b.get("k") == b"v"
    del b                       # the second: the file goes
    assert not os.path.exists(path)
    c = dist.FileStore(path, 1)
    with pytest.raises(dist.DistStoreError, match="exceed world_size"):
        dist.FileStore(path, 1)
    del c


def test_tcp_store_survives_a_malformed_client():
    import socket
    import struct
    m = dist.TCPStore("127.0.0.1", 0, is_master=True,
                      wait_for_workers=False)
    m.set("k", "v")
    with socket.create_connection(("127.0.0.1", m.port)) as s:
        s.sendall(struct.pack("<IBI", 5, 4, 0xFFFFFFFF))
        s.settimeout(5)
        assert s.recv(16) == b""          # the server dropped it
    assert m.get("k") == b"v"


def test_reduce_scatter_matches_all_reduce_every_dtype_and_op(tmp_path):
    """reduce_scatter_tensor (an all-to-all and a local reduction) gives
    rank r block r of all_reduce's result, and refuses what it refuses."""
    out = run_ranks("""
        dist.init_process_group("gloo")
        res = {}
        for name in %r:
            dt = getattr(fastt, name)
            base = fastt.arange(1, 1 + 2 * ws, dtype=fastt.float64) * (
                rank + 1)
            if name == "bool":
                x = base.to(fastt.int64) %% 3 == 0
            elif name.startswith("complex"):
                x = (base + 1j * base).to(dt)
            else:
                x = base.to(dt)
            for op in ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR",
                       "BXOR"]:
                o = fastt.zeros(2, dtype=dt)
                try:
                    dist.reduce_scatter_tensor(o, x,
                                               op=getattr(dist.ReduceOp, op))
                except dist.DistBackendError:
                    res[name, op] = "refused"
                    continue
                t = x.clone()
                dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
                ref = t[2 * rank:2 * rank + 2].to(fastt.complex128)
                err = (o.to(fastt.complex128) - ref).abs().max().item()
                res[name, op] = err <= 1e-2 * max(1.0,
                                                  ref.abs().max().item())
        result = res
    """ % (_DTYPES,), 3, tmp_path)
    for r in out:
        assert all(v in (True, "refused") for v in r.values()), r
        assert r["float32", "SUM"] is True and r["bool", "BXOR"] is True
        assert r["complex64", "PRODUCT"] is True
        assert r["complex64", "MAX"] == "refused"
