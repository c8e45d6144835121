"""fastt.nn.parallel.DistributedDataParallel: 2-rank jobs (one subprocess
per rank, Gloo over loopback, through dist_util.run_ranks) checked against
single-process fastt training on the whole batch, computed here; torch's
DDP for the state_dict naming and the bucket assignment."""

import random
import textwrap

import pytest

import fastt
import fastt.distributed as fdist
from fastt.nn.parallel import DistributedDataParallel as DDP
from fastt.nn.parallel.distributed import _assign_buckets

from dist_util import run_ranks

# Shared by the ranks (prepended to their bodies) and by the references
# computed in this process.
COMMON = """
import fastt
import fastt.nn as nn
from fastt.nn.parallel import DistributedDataParallel as DDP


def mlp(seed=0, hidden=16):
    fastt.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, hidden), nn.Tanh(),
                         nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Linear(hidden, 3))


def batch(step, n=8):
    fastt.manual_seed(1000 + step)
    return fastt.randn(n, 5), fastt.randn(n, 3)


def values(ts):
    return [t.detach().clone().tolist() for t in ts]


def train(model, steps, lo=0, hi=8, set_to_none=True):
    # SGD with momentum on the mean loss of rows lo:hi of each batch.
    opt = fastt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for s in range(steps):
        x, y = batch(s)
        opt.zero_grad(set_to_none=set_to_none)
        loss = nn.functional.mse_loss(model(x[lo:hi]), y[lo:hi])
        loss.backward()
        opt.step()


class Mixed(nn.Module):
    # A float32 layer and a float64 one: two buckets, one per dtype.
    def __init__(self, seed):
        super().__init__()
        fastt.manual_seed(seed)
        self.a = nn.Linear(5, 4)
        self.b = nn.Linear(4, 3).double()

    def forward(self, x):
        return self.b(self.a(x).double())


def train_mixed(model, steps, lo=0, hi=8):
    opt = fastt.optim.SGD(model.parameters(), lr=0.1)
    for s in range(steps):
        x, _ = batch(s)
        opt.zero_grad()
        model(x[lo:hi]).tanh().pow(2).mean().backward()
        opt.step()


class TwoBranch(nn.Module):
    def __init__(self):
        super().__init__()
        fastt.manual_seed(7)
        self.a = nn.Linear(5, 3)
        self.b = nn.Linear(5, 3)

    def forward(self, x, use_b=False):
        return self.a(x) + self.b(x) if use_b else self.a(x)
"""


def _ref():
    ns = {}
    exec(COMMON, ns)
    return ns


def _close(a, b, tol=1e-6):
    ta, tb = fastt.tensor(a), fastt.tensor(b)
    return ta.shape == tb.shape and bool(((ta - tb).abs() <= tol).all())


def _all_close(xs, ys, tol=1e-6):
    return len(xs) == len(ys) and all(_close(a, b, tol)
                                      for a, b in zip(xs, ys))


def _run(body, n=2, tmp_path=None, **kw):
    return run_ranks(COMMON + "\n" + body, n, tmp_path, timeout=60, **kw)


def test_construction_takes_rank0_parameters_and_buffers(tmp_path):
    res = _run("""
dist.init_process_group("gloo")
m = nn.Sequential(mlp(seed=rank), nn.BatchNorm1d(3))
with fastt.no_grad():
    m[1].running_mean.fill_(float(rank + 1))
    m[1].num_batches_tracked.fill_(10 * rank + 3)
before = values(m.parameters()) + values(m.buffers())
d = DDP(m)
result = (before, values(m.parameters()) + values(m.buffers()),
          [k for k in d.state_dict()])
dist.destroy_process_group()
""", tmp_path=tmp_path)
    (before0, after0, keys), (before1, after1, _) = res
    assert not _all_close(before0, before1)
    assert after0 == before0 and after1 == before0
    assert after1[-3] == [1.0, 1.0, 1.0] and after1[-1] == 3
    assert keys[0] == "module.0.0.weight"


# gradient_as_bucket_view with zero_grad(set_to_none=False): .grad stays
# the bucket view and backward accumulates into it in place.
@pytest.mark.parametrize("bucket_cap_mb,as_view", [
    (None, False), (0.0002, False), (0.0002, True)])
def test_training_matches_single_process_full_batch(tmp_path, bucket_cap_mb,
                                                    as_view):
    res = _run(f"""
dist.init_process_group("gloo")
m = mlp(seed=rank)
d = DDP(m, bucket_cap_mb={bucket_cap_mb}, gradient_as_bucket_view={as_view})
train(d, 4, lo=4 * rank, hi=4 * rank + 4, set_to_none={not as_view})
r = d._reducer
views = all(p.grad.data_ptr() == v.data_ptr()
            for p, v in zip(r.params, r.views))
result = (values(m.parameters()), len(d._get_ddp_buckets()), views)
dist.destroy_process_group()
""", tmp_path=tmp_path)
    ns = _ref()
    ref = ns["mlp"](seed=0)
    ns["train"](ref, 4)
    want = ns["values"](ref.parameters())
    for params, nbuckets, views in res:
        assert _all_close(params, want)
        assert nbuckets == (1 if bucket_cap_mb is None else 3)
        assert views == as_view
    assert res[0][0] == res[1][0]  # bitwise the same on both ranks


def test_no_sync_accumulates_then_averages_once(tmp_path):
    res = _run("""
dist.init_process_group("gloo")
m = mlp()
d = DDP(m)
opt = fastt.optim.SGD(m.parameters(), lr=0.1)
x, y = batch(0, 12)
rows = [slice(6 * rank + 2 * k, 6 * rank + 2 * k + 2) for k in range(3)]
with d.no_sync():
    for k in range(2):
        nn.functional.mse_loss(d(x[rows[k]]), y[rows[k]]).backward()
local = values(p.grad for p in m.parameters())
nn.functional.mse_loss(d(x[rows[2]]), y[rows[2]]).backward()
grads = values(p.grad for p in m.parameters())
opt.step()
result = (local, grads, values(m.parameters()))
dist.destroy_process_group()
""", tmp_path=tmp_path)
    ns = _ref()
    nn = ns["nn"]
    ref = ns["mlp"]()
    x, y = ns["batch"](0, 12)
    for r in range(2):
        for k in range(3):
            s = slice(6 * r + 2 * k, 6 * r + 2 * k + 2)
            (nn.functional.mse_loss(ref(x[s]), y[s]) / 2).backward()
    want_grads = ns["values"](p.grad for p in ref.parameters())
    fastt.optim.SGD(ref.parameters(), lr=0.1).step()
    want = ns["values"](ref.parameters())
    (local0, grads0, p0), (local1, grads1, p1) = res
    assert not _all_close(local0, local1)  # no communication in no_sync
    assert _all_close(grads0, want_grads) and grads0 == grads1
    assert _all_close(p0, want) and p0 == p1


def test_find_unused_parameters(tmp_path):
    res = _run("""
dist.init_process_group("gloo")
m = TwoBranch()
d = DDP(m, find_unused_parameters=True, bucket_cap_mb=0.00005)
x, _ = batch(rank)
# Step 1: b unused everywhere: its .grad stays None.
d(x).sum().backward()
g1 = [m.a.weight.grad.tolist(), m.b.weight.grad]
# Step 2: only rank 1 uses b: b's gradient is its half of the mean.
m.zero_grad()
d(x, use_b=rank == 1).sum().backward()
g2 = values([m.a.weight.grad, m.b.weight.grad, m.b.bias.grad])
result = (g1, g2)
dist.destroy_process_group()
""", tmp_path=tmp_path)
    ns = _ref()
    ref = ns["TwoBranch"]()
    for r in range(2):
        x, _ = ns["batch"](r)
        (ref(x).sum() / 2).backward()
    want_a = ref.a.weight.grad.tolist()
    ref.zero_grad()
    for r in range(2):
        x, _ = ns["batch"](r)
        (ref(x, use_b=r == 1).sum() / 2).backward()
    want2 = ns["values"]([ref.a.weight.grad, ref.b.weight.grad,
                          ref.b.bias.grad])
    for g1, g2 in res:
        assert g1[1] is None and _close(g1[0], want_a)
        assert _all_close(g2, want2)


def test_static_graph_with_a_never_used_branch(tmp_path):
    res = _run("""
dist.init_process_group("gloo")
m = TwoBranch()
d = DDP(m, static_graph=True)
for s in range(3):
    m.zero_grad()
    x, _ = batch(10 * s + rank)
    d(x).sum().backward()
result = (m.a.weight.grad.tolist(), m.b.weight.grad)
dist.destroy_process_group()
""", tmp_path=tmp_path)
    ns = _ref()
    ref = ns["TwoBranch"]()
    for r in range(2):
        x, _ = ns["batch"](20 + r)
        (ref(x).sum() / 2).backward()
    for ga, gb in res:
        assert gb is None and _close(ga, ref.a.weight.grad.tolist())


def test_mixed_dtypes_one_bucket_each(tmp_path):
    res = _run("""
dist.init_process_group("gloo")
m = Mixed(seed=rank)
d = DDP(m)
train_mixed(d, 3, lo=4 * rank, hi=4 * rank + 4)
result = (values(m.parameters()), d._get_ddp_buckets())
dist.destroy_process_group()
""", tmp_path=tmp_path)
    ns = _ref()
    ref = ns["Mixed"](seed=0)
    ns["train_mixed"](ref, 3)
    want = ns["values"](ref.parameters())
    for params, buckets in res:
        assert buckets == [["b.weight", "b.bias"], ["a.weight", "a.bias"]]
        assert _all_close(params, want, 1e-6)


def test_unused_parameter_without_find_unused_raises(tmp_path):
    res = _run("""
dist.init_process_group("gloo")
d = DDP(TwoBranch())
x, _ = batch(0)
d(x).sum().backward()
try:
    d(x)
except RuntimeError as e:
    result = str(e)
dist.destroy_process_group()
""", tmp_path=tmp_path)
    for msg in res:
        assert msg is not None
        assert "Expected to have finished reduction" in msg
        assert "find_unused_parameters=True" in msg
        assert "'b.weight'" in msg and "'a.weight'" not in msg


def test_mismatched_models_raise(tmp_path):
    res = _run("""
dist.init_process_group("gloo")
DDP(mlp(hidden=16 if rank == 0 else 15))
""", tmp_path=tmp_path, expect_ok=False)
    for status, text in res:
        assert status == "error"
        assert "RuntimeError" in text and "same model" in text


def test_forward_broadcasts_buffers(tmp_path):
    res = _run("""
dist.init_process_group("gloo")
m = nn.Sequential(nn.Linear(5, 3), nn.BatchNorm1d(3))
d = DDP(m)
m.eval()
with fastt.no_grad():
    m[1].running_var.fill_(float(rank + 2))
x, _ = batch(0)
d(x)
result = m[1].running_var.tolist()
dist.destroy_process_group()
""", tmp_path=tmp_path)
    assert res == [[2.0] * 3, [2.0] * 3]


def test_process_group_subset(tmp_path):
    # Ranks 1 and 2 train together: rank 1 (the group's rank 0) is the
    # source of the model.
    res = _run("""
dist.init_process_group("gloo")
pg = dist.new_group([1, 2])
m = mlp(seed=rank)
before = values(m.parameters())
if rank > 0:
    d = DDP(m, process_group=pg)
    x, y = batch(0)
    nn.functional.mse_loss(d(x[rank:rank + 1]), y[rank:rank + 1]).backward()
    result = (before, values(m.parameters()),
              values(p.grad for p in m.parameters()))
dist.destroy_process_group()
""", n=3, tmp_path=tmp_path)
    ns = _ref()
    ref = ns["mlp"](seed=1)
    x, y = ns["batch"](0)
    ns["nn"].functional.mse_loss(ref(x[1:3]), y[1:3]).backward()
    want = ns["values"](p.grad for p in ref.parameters())
    assert res[0] is None
    for _, params, grads in res[1:]:
        assert params == res[1][0]
        assert _all_close(grads, want)


def test_world_size_one_from_env(tmp_path):
    (res,) = _run("""
dist.init_process_group("gloo")
assert dist.get_world_size() == 1
m = mlp()
d = DDP(m, find_unused_parameters=True)
train(d, 3)
plain = mlp()
train(plain, 3)
with d.no_sync():
    x, y = batch(0)
    d(x).sum().backward()
result = (values(m.parameters()), values(plain.parameters()))
dist.destroy_process_group()
""", n=1, tmp_path=tmp_path)
    assert res[0] == res[1]  # bitwise: nothing to average


@pytest.fixture
def pg1():
    """A one-rank default group in this process."""
    fdist.init_process_group("gloo", store=fdist.HashStore(), rank=0,
                             world_size=1)
    try:
        yield
    finally:
        fdist.destroy_process_group()


def test_state_dict_keys_match_torch():
    torch = pytest.importorskip("torch")
    tdist = torch.distributed
    tdist.init_process_group("gloo", store=tdist.HashStore(), rank=0,
                             world_size=1)
    try:
        tm = torch.nn.Sequential(torch.nn.Linear(5, 4),
                                 torch.nn.BatchNorm1d(4))
        want = list(torch.nn.parallel.DistributedDataParallel(
            tm).state_dict())
    finally:
        tdist.destroy_process_group()
    fdist.init_process_group("gloo", store=fdist.HashStore(), rank=0,
                             world_size=1)
    try:
        fm = fastt.nn.Sequential(fastt.nn.Linear(5, 4),
                                 fastt.nn.BatchNorm1d(4))
        d = DDP(fm)
        assert list(d.state_dict()) == want
        d.load_state_dict(d.state_dict())
        assert d.module is fm
        assert fastt.nn.parallel.DistributedDataParallel is DDP
    finally:
        fdist.destroy_process_group()


def test_errors_and_unhooking(pg1):
    ns = _ref()
    m = ns["TwoBranch"]()
    x, _ = ns["batch"](0)
    with pytest.raises(ValueError, match="device_ids"):
        DDP(m, device_ids=[0])
    with pytest.raises(RuntimeError, match="doesn't have any parameter"):
        DDP(fastt.nn.ReLU())
    # A parameter marked unused that then gets a gradient.
    d = DDP(m, find_unused_parameters=True)
    with pytest.raises(RuntimeError, match="'b.weight'.*marked twice"):
        (d(x) + m.b(x)).sum().backward()
    with pytest.raises(RuntimeError, match="already active"):
        with d.join():
            with d.join():
                pass
    # Unused parameter, world size 1: the same error as with two ranks.
    d = DDP(m)
    d(x).sum().backward()
    with pytest.raises(RuntimeError, match="finished reduction"):
        d(x)
    # Forwards without a backward (or under no_grad) are fine.
    d = DDP(m)
    d(x, use_b=True)
    with fastt.no_grad():
        d(x)
    d(x, use_b=True).sum().backward()
    assert not d._reducer.counter.expecting
    # Dropping the DDP unhooks the module: it trains alone again.
    d = DDP(m, gradient_as_bucket_view=True)
    d(x, use_b=True).sum().backward()
    view = d._reducer.views[0]
    assert m.a.weight.grad.data_ptr() == view.data_ptr()
    del d
    m.zero_grad()
    m(x).sum().backward()
    assert m.a.weight.grad.data_ptr() != view.data_ptr()


def test_bucket_assignment_matches_torch():
    torch = pytest.importorskip("torch")
    rng = random.Random(0)
    for _ in range(100):
        specs = [(rng.choice([1, 3, 17, 64, 300]),
                  rng.choice(["float32", "float64", "float16"]))
                 for _ in range(rng.randint(1, 12))]
        first, cap = rng.choice([(100, 100), (200, 1000), (64, 64),
                                 (1, 1)])
        tp = [torch.zeros(k, dtype=getattr(torch, d)) for k, d in specs]
        idx, _ = torch.distributed._compute_bucket_assignment_by_size(
            list(reversed(tp)), [first, cap])
        n = len(specs)
        want = [[n - 1 - j for j in b] for b in idx]
        fp = [fastt.zeros(k, dtype=getattr(fastt, d)) for k, d in specs]
        assert _assign_buckets(fp, first, cap) == want


def test_join_uneven_inputs(tmp_path):
    """Rank 0 runs 2 steps, rank 1 runs 4, inside ddp.join(): rank 0
    shadows the last 2 with zero gradients, and both end with the model a
    single process gets replaying the job (gradients over the initial
    world size, or over the ranks still training); with
    throw_on_early_termination every rank raises when rank 0 runs out."""
    out = _run(textwrap.dedent("""
        import numpy as np
        dist.init_process_group("gloo")
        rng = np.random.default_rng(0)
        data = [fastt.tensor(rng.standard_normal((5, 4)).astype("float32"))
                for _ in range(8)]
        steps = [2, 4]

        def model():
            fastt.manual_seed(0)
            return nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))

        res = {}
        for initial in (True, False):
            m = model()
            ddp = DDP(m)
            opt = fastt.optim.SGD(ddp.parameters(), lr=0.1)
            with ddp.join(divide_by_initial_world_size=initial):
                for i in range(steps[rank]):
                    opt.zero_grad()
                    ddp(data[2 * i + rank]).square().sum().backward()
                    opt.step()
            ref = model()
            ropt = fastt.optim.SGD(ref.parameters(), lr=0.1)
            for i in range(max(steps)):
                ropt.zero_grad()
                live = [r for r in range(2) if i < steps[r]]
                div = 2 if initial else len(live)
                for r in live:
                    (ref(data[2 * i + r]).square().sum() / div).backward()
                ropt.step()
            res[initial] = max((a - b).abs().max().item() for a, b in
                               zip(m.parameters(), ref.parameters()))
        ddp = DDP(model())
        try:
            with ddp.join(throw_on_early_termination=True):
                for i in range(steps[rank]):
                    ddp(data[i]).sum().backward()
            res["throw"] = None
        except RuntimeError as e:
            res["throw"] = str(e)
        result = res
    """), 2, tmp_path)
    for r in out:
        assert r[True] < 1e-5 and r[False] < 1e-5, r
        assert "exhausted inputs" in r["throw"]


def test_review_cases(tmp_path):
    """A dataclass output with find_unused_parameters still averages; a
    buffer the module reassigns is synced; join() takes buffers from the
    highest rank still training (rank 0 leaves first)."""
    out = _run(textwrap.dedent("""
        import dataclasses
        dist.init_process_group("gloo")

        @dataclasses.dataclass
        class Out:
            y: object

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(4, 4)
                self.b = nn.Linear(4, 4)
                self.register_buffer("ema", fastt.zeros(1))

            def forward(self, x):
                self.ema = self.ema * 0.5 + x.mean().detach()
                return Out(self.a(x))

        fastt.manual_seed(0)
        m = M()
        ddp = DDP(m, find_unused_parameters=True)
        res = {}
        ddp(fastt.ones(2, 4) * (rank + 1)).y.pow(2).sum().backward()
        res["grad"] = m.a.weight.grad.sum().item()
        res["b_grad"] = m.b.weight.grad
        ddp(fastt.ones(2, 4) * (rank + 1)).y.sum().backward()
        res["ema"] = m.ema.item()
        fastt.manual_seed(0)
        bn = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
        d2 = DDP(bn)
        with d2.join():
            for i in range(1 if rank == 0 else 4):
                d2(fastt.randn(5, 3) + i).sum().backward()
        res["tracked"] = int(bn[1].num_batches_tracked.item())
        result = res
    """), 2, tmp_path)
    g0, g1 = out[0]["grad"], out[1]["grad"]
    assert abs(g0 - g1) < 1e-5 * abs(g0)     # averaged, the same on both
    assert out[0]["b_grad"] is None
    # ema after two forwards, rank 0's (reassigned) buffer broadcast
    # before each: 0 -> 1 | 2, then 1 -> 1.5 | 2.5 (a stale buffer list
    # would send the first tensor, 0, and rank 1 would reach 3.0)
    assert [r["ema"] for r in out] == [1.5, 2.5]
    assert [r["tracked"] for r in out] == [4, 4]


def test_reinit_and_local_groups(tmp_path):
    out = _run(textwrap.dedent("""
        res = []
        for i in range(3):
            dist.init_process_group("gloo")
            t = fastt.ones(1)
            dist.all_reduce(t)
            res.append(t.item())
            g = dist.new_group([0, 1], use_local_synchronization=True)
            w = dist.all_reduce(fastt.ones(2), group=g, async_op=True)
            while not w.is_completed():
                pass
            res.append(w.result()[0].tolist())
            dist.destroy_process_group()
        result = res
    """), 2, tmp_path)
    assert out[0] == out[1] == [2.0, [2.0, 2.0]] * 3
