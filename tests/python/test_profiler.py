# fastt.profiler: a training step of a tiny model under profile(): the
# key_averages table (rows, call counts), the Chrome trace JSON structure,
# record_function ranges, and the profiler being off afterwards.
import json
import threading

import pytest

import fastt
import fastt.nn as nn
import fastt.profiler as profiler
from fastt import _C


def _step_model():
    fastt.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = fastt.optim.SGD(model.parameters(), lr=0.1)
    x = fastt.randn(5, 6)
    y = fastt.randn(5, 3)
    return model, opt, x, y


def _train_step(model, opt, x, y):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    return loss


def _rows(prof):
    return {a.key: a for a in prof.key_averages() if not a.is_user_range}


def test_forward_counts_match_calls():
    a = fastt.randn(4, 4)
    b = fastt.randn(4, 4)
    with profiler.profile() as prof:
        for _ in range(3):
            c = a + b
        for _ in range(5):
            d = fastt.relu(c)
        e = a * d
    names = [ev.name for ev in prof.events()]
    assert names == ["add"] * 3 + ["relu"] * 5 + ["mul"]
    rows = _rows(prof)
    assert rows["add"].count == 3
    assert rows["relu"].count == 5
    assert rows["mul"].count == 1
    evs = prof.events()
    for i, ev in enumerate(evs):
        assert ev.tid == _C._profiler_thread_id()
        # One thread, no nesting: the clock reads are ordered, and each
        # event's tax starts where the previous kernel ended.
        assert ev.prev_end <= ev.t_lookup <= ev.t_start <= ev.t_end, ev
        if i:
            assert ev.prev_end == evs[i - 1].t_end, (evs[i - 1], ev)
        assert ev.host_ns == ev.tax_ns + ev.kernel_ns
        # Each op allocated its output and nothing else: two allocator
        # requests, the TensorImpl and its storage.
        assert ev.allocs == 2, ev
    assert e.tolist() == (a * fastt.relu(a + b)).tolist()


def test_large_op_times_are_positive():
    """A 1M-element kernel takes measurable time; the tax before it too
    (the binding and the output's allocation ran). The rows sum the
    events exactly."""
    big = fastt.randn(1 << 20)
    small = fastt.randn(16)
    big + big  # warm up the allocator's cache for the output
    with profiler.profile() as prof:
        for _ in range(5):
            small + small
        out = big * big
    assert out.numel() == 1 << 20
    evs = prof.events()
    assert [e.name for e in evs] == ["add"] * 5 + ["mul"]
    mul = evs[-1]
    assert mul.kernel_ns > 0 and mul.tax_ns > 0
    # Reading and writing 12 MiB is not faster than a 16-element add.
    assert mul.kernel_ns > min(e.kernel_ns for e in evs[:5])
    rows = _rows(prof)
    assert sorted(rows) == ["add", "mul"]
    assert rows["add"].count == 5 and rows["mul"].count == 1
    r = rows["mul"]
    assert r.kernel_time_total == pytest.approx(mul.kernel_ns / 1e3)
    assert r.tax_total == pytest.approx(mul.tax_ns / 1e3)
    assert r.cpu_time_total == pytest.approx(mul.host_ns / 1e3)
    assert r.cpu_time_total > r.kernel_time_total > 0
    assert r.self_cpu_time_total == pytest.approx(r.cpu_time_total)
    assert r.cpu_time == pytest.approx(r.cpu_time_total)  # one call
    assert 0.0 < r.tax_share < 1.0
    add = rows["add"]
    assert add.kernel_time_total == pytest.approx(
        sum(e.kernel_ns for e in evs[:5]) / 1e3)
    assert add.cpu_time == pytest.approx(add.cpu_time_total / 5)
    assert add.allocs == 2 * 5 and r.allocs == 2  # one output each


def test_training_step_table():
    model, opt, x, y = _step_model()
    _train_step(model, opt, x, y)  # warm up (lazy state, caches)
    steps = 3
    with profiler.profile(record_shapes=False) as prof:
        for _ in range(steps):
            with profiler.record_function("train_step"):
                _train_step(model, opt, x, y)
    assert not _C._profiler_enabled()
    rows = _rows(prof)
    # One relu per forward; the counts of every row are whole multiples of
    # the step count (each step runs the same kernels).
    assert rows["relu"].count == steps
    for a in rows.values():
        assert a.count % steps == 0, (a.key, a.count)
    # The two Linear layers: a matrix product each in forward, and the
    # input and weight gradients in backward (the first layer's input
    # needs none): 2 + 3 products per step.
    assert rows["gemm"].count == 5 * steps
    assert rows["sgd_step"].count == steps  # one fused optimizer kernel
    assert rows["relu_backward"].count == steps
    total = sum(a.count for a in rows.values())
    assert total == len(prof.events())
    for a in rows.values():
        # Every op ran a kernel and had code before it (the binding, the
        # output's allocation): both parts are positive.
        assert a.cpu_time_total > a.kernel_time_total > 0, a
        assert a.tax_total > 0, a
        assert a.tax_total == pytest.approx(
            a.cpu_time_total - a.kernel_time_total, abs=1e-3)
        assert 0.0 < a.tax_share < 1.0
    # The user range: once per step, enclosing all kernel time.
    ranges = [a for a in prof.key_averages() if a.is_user_range]
    assert [r.key for r in ranges] == ["train_step"]
    assert ranges[0].count == steps
    # The range encloses every kernel of the steps (all ran inside it).
    kern = sum(a.kernel_time_total for a in rows.values())
    assert ranges[0].kernel_time_total == pytest.approx(kern)
    assert ranges[0].cpu_time_total > ranges[0].kernel_time_total > 0
    table = prof.key_averages().table(sort_by="self_cpu_time_total",
                                      row_limit=50)
    for col in ("Calls", "Kernel", "Tax", "Allocs"):
        assert col in table
    assert "relu" in table and "[train_step]" in table
    for key in ("kernel_time", "tax", "calls", "cpu_time_total"):
        assert "relu" in prof.key_averages().table(sort_by=key)
    short = prof.key_averages().table(sort_by="calls", row_limit=2)
    assert len([l for l in short.splitlines() if not l.startswith("-")]) == 4
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="nope")


def test_sorting_orders_rows():
    a = fastt.randn(3)
    with profiler.profile() as prof:
        for _ in range(4):
            fastt.relu(a)
        a + a
    t = prof.key_averages().table(sort_by="calls")
    lines = t.splitlines()
    body = [l.split()[0] for l in lines[3:] if l and not l.startswith("-")]
    assert body[:2] == ["relu", "add"]


def test_chrome_trace(tmp_path):
    model, opt, x, y = _step_model()
    with profiler.profile() as prof:
        with profiler.record_function("fwd"):
            out = model(x)
        loss = ((out - y) ** 2).mean()
        loss.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    evs = [e for e in data["traceEvents"] if e["ph"] == "X"]
    n = len(prof.events())
    assert n > 0
    assert len(evs) == 2 * n + 1  # tax + kernel per op, one user range
    for e in evs:
        for k in ("ph", "ts", "dur", "pid", "tid", "name"):
            assert k in e, (k, e)
        assert e["dur"] >= 0
        assert isinstance(e["ts"], (int, float))
    # The user range spans its ops: a positive duration.
    assert [e["dur"] > 0 for e in evs if e["cat"] == "user_range"] == [True]
    kernels = [e for e in evs if e["cat"] == "kernel"]
    taxes = [e for e in evs if e["cat"] == "framework_tax"]
    assert len(kernels) == len(taxes) == n
    assert all(e["dur"] > 0 for e in kernels)  # every kernel took time
    assert [e["dur"] for e in kernels] == [ev.kernel_ns / 1e3
                                           for ev in sorted(
                                               prof.events(),
                                               key=lambda v: v.t_start)]
    assert {e["name"] for e in kernels} == {ev.name for ev in prof.events()}
    assert all(e["name"].endswith(" [tax]") for e in taxes)
    fwd = [e for e in evs if e["cat"] == "user_range"]
    assert [e["name"] for e in fwd] == ["fwd"]
    # ts never goes backwards within a thread.
    last = {}
    for e in evs:
        assert e["ts"] >= last.get(e["tid"], float("-inf"))
        last[e["tid"]] = e["ts"]
    # Slices on one thread nest or are disjoint (what viewers require).
    f0, f1 = fwd[0]["ts"], fwd[0]["ts"] + fwd[0]["dur"]
    eps = 1e-6
    for e in kernels + taxes:
        s, t = e["ts"], e["ts"] + e["dur"]
        inside = s >= f0 - eps and t <= f1 + eps
        outside = t <= f0 + eps or s >= f1 - eps
        assert inside or outside, (e, fwd[0])
    # The forward's linear/relu kernels lie inside the range.
    inside = [e["name"] for e in kernels
              if e["ts"] >= f0 and e["ts"] + e["dur"] <= f1]
    assert "relu" in inside


def test_off_after_block_and_errors():
    a = fastt.randn(3)
    with pytest.raises(KeyError, match="boom"):
        with profiler.profile() as prof:
            a + a
            raise KeyError("boom")
    assert not _C._profiler_enabled()
    assert [e.name for e in prof.events()] == ["add"]
    with profiler.profile() as prof:
        with pytest.raises(RuntimeError, match="already running"):
            with profiler.profile():
                pass
        a + a
    assert not _C._profiler_enabled()
    assert [e.name for e in prof.events()] == ["add"]
    # Nothing recorded between sessions; ranges outside a session vanish.
    with profiler.record_function("outside"):
        a * a
    with profiler.profile() as prof2:
        pass
    assert prof2.events() == [] and list(prof2.key_averages()) == []
    with profiler.profile(enabled=False) as prof3:
        a + a
    assert prof3.events() == []
    assert not _C._profiler_enabled()


def test_threads_and_decorator():
    a = fastt.randn(4)

    @profiler.record_function("work")
    def work():
        return fastt.relu(a)

    with profiler.profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        work()
    tids = {e.tid for e in prof.events() if e.name == "relu"}
    assert len(tids) == 2
    ranges = [a for a in prof.key_averages() if a.is_user_range]
    assert ranges[0].key == "work" and ranges[0].count == 2


def test_on_trace_ready_and_activities():
    seen = []
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                          on_trace_ready=seen.append) as prof:
        fastt.randn(2) + 1
    assert seen == [prof]
