"""fastt.compile (python/fastt/_compile.py, csrc/capture.h): a captured step
replays bitwise what eager fastt computes, its guards capture again when
they must, randomness advances as eager, graph breaks split the function
(test_compile_split.py) or fall back to eager (or raise under fullgraph),
and errors a replay meets are raised."""
import warnings

import pytest

import fastt
import fastt.nn as nn
import fastt.nn.functional as F


# The memory plan's freed memory is poisoned (conftest.capture_poison).
pytestmark = pytest.mark.usefixtures("capture_poison")


def mlp(seed=0, dropout=0.0):
    fastt.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(dropout),
                         nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4))


def data(n=12, batch=5, seed=1):
    fastt.manual_seed(seed)
    return [(fastt.randn(batch, 8), fastt.randint(0, 4, (batch,)))
            for _ in range(n)]


def trainer(kind="sgd", dropout=0.0, sched=False, clip=False):
    model = mlp(dropout=dropout)
    if kind == "sgd":
        opt = fastt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9,
                              weight_decay=1e-4)
    else:
        opt = fastt.optim.AdamW(model.parameters(), lr=1e-2)
    s = fastt.optim.lr_scheduler.StepLR(opt, 2, 0.7) if sched else None

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if clip:
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        if s is not None:
            s.step()
        return loss
    return model, opt, step


def bits(t):
    return t.detach().numpy().tobytes()


@pytest.mark.parametrize("kind", ["sgd", "adamw"])
def test_training_steps_match_eager_bitwise(kind):
    m1, o1, s1 = trainer(kind, dropout=0.2, sched=True, clip=True)
    m2, o2, s2 = trainer(kind, dropout=0.2, sched=True, clip=True)
    c2 = fastt.compile(s2)
    batches = data()
    fastt.manual_seed(7)
    eager = [bits(s1(x, y)) for x, y in batches]
    fastt.manual_seed(7)
    compiled = [bits(c2(x, y)) for x, y in batches]
    assert eager == compiled
    # A warm-up call, a capture, replays.
    assert c2.stats == {"captures": 1, "replays": len(batches) - 2,
                        "eager_calls": 1, "graph_breaks": 0,
                        "split_calls": 0}
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert bits(p) == bits(q) and bits(p.grad) == bits(q.grad)
    assert o1.param_groups[0]["lr"] == o2.param_groups[0]["lr"]
    # Eager code between steps sees the current state.
    assert o2.state[next(iter(m2.parameters()))]


def test_learning_rate_changed_every_step_is_read_not_baked():
    m1, o1, s1 = trainer("sgd")
    m2, o2, s2 = trainer("sgd")
    c2 = fastt.compile(s2)
    for i, (x, y) in enumerate(data()):
        for o in (o1, o2):
            o.param_groups[0]["lr"] = 0.05 + 0.01 * i
        assert bits(s1(x, y)) == bits(c2(x, y))
    assert c2.stats["captures"] == 1
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert bits(p) == bits(q)


def test_new_batch_size_captures_again_and_both_replay():
    _, _, s1 = trainer("sgd")
    _, _, s2 = trainer("sgd")
    c2 = fastt.compile(s2)
    batches = data(6, 5) + data(6, 3, seed=2) + data(6, 5, seed=3)
    for x, y in batches:
        assert bits(s1(x, y)) == bits(c2(x, y))
    assert c2.stats["captures"] == 2
    assert c2.stats["replays"] == len(batches) - 3


def test_dropout_draws_as_eager_from_the_same_seed():
    fastt.manual_seed(0)
    drop = nn.Dropout(0.5)

    def f(x):
        return drop(x) * 2

    c = fastt.compile(f)
    x = fastt.ones(64)
    fastt.manual_seed(3)
    eager = [bits(f(x)) for _ in range(4)]
    fastt.manual_seed(3)
    compiled = [bits(c(x)) for _ in range(4)]
    assert eager == compiled and len(set(compiled)) == 4
    assert c.stats["replays"] == 2


def test_inference_replays_with_new_inputs_and_fresh_outputs():
    model = mlp().eval()

    def infer(x):
        with fastt.no_grad():
            return model(x).softmax(-1)

    c = fastt.compile(infer)
    outs = []
    for x, _ in data(5):
        got = c(x)
        outs.append(got)
        assert bits(got) == bits(infer(x))
        assert not got.requires_grad
    # Earlier outputs are not overwritten by later replays.
    for o, (x, _) in zip(outs, data(5)):
        assert bits(o) == bits(infer(x))
    assert c.stats["replays"] == 3


def test_item_inside_is_a_graph_break_that_stays_eager():
    m1, _, s1 = trainer("sgd")
    m2, _, s2 = trainer("sgd")

    def step(x, y):
        return s2(x, y).item()

    c = fastt.compile(step)
    for x, y in data(4):
        assert s1(x, y).item() == c(x, y)
    assert c.stats["graph_breaks"] == 1 and c.stats["replays"] == 0
    assert "item()" in c.eager_reason
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert bits(p) == bits(q)


def test_fullgraph_break_raises_naming_the_op_and_line():
    model = mlp()

    def f(x):
        y = model(x)
        if y.sum() > 0:  # bool(tensor): a host read
            return y
        return -y

    c = fastt.compile(f, fullgraph=True)
    with pytest.raises(RuntimeError, match=r"fullgraph=True.*item\(\).*"
                       r"test_compile\.py:\d+"):
        c(fastt.randn(2, 8))


def test_module_flags_and_parameters_are_guarded():
    model = mlp(dropout=0.5)

    def f(x):
        with fastt.no_grad():
            return model(x)

    c = fastt.compile(f)
    x = fastt.randn(3, 8)
    model.eval()
    for _ in range(3):
        assert bits(c(x)) == bits(f(x))
    assert c.stats["captures"] == 1 and c.stats["replays"] == 1
    model.train()  # dropout now draws: a new capture
    fastt.manual_seed(1)
    a = c(x)
    fastt.manual_seed(1)
    assert bits(a) == bits(f(x))
    assert c.stats["captures"] == 2
    model.eval()  # the first capture is valid again
    assert bits(c(x)) == bits(f(x))
    assert c.stats["captures"] == 2
    # A replaced parameter is noticed (the module's state moved).
    model[0].weight = nn.Parameter(fastt.randn(16, 8))
    assert bits(c(x)) == bits(f(x))
    assert c.stats["captures"] == 3
    # A parameter's data swapped in place of the tensor is noticed too.
    with fastt.no_grad():
        model[3].weight.data = fastt.randn(16, 16)
    assert bits(c(x)) == bits(f(x))
    assert c.stats["captures"] == 4


def test_scalar_and_keyword_arguments_are_guarded():
    def f(x, scale, *, shift=0.0):
        return x * scale + shift

    c = fastt.compile(f)
    x = fastt.randn(4)
    for scale, shift in [(2.0, 0.0), (2.0, 0.0), (2.0, 0.0), (3.0, 0.0),
                         (3.0, 1.0), (3, 1.0)]:
        got = c(x, scale, shift=shift)
        assert bits(got) == bits(f(x, scale, shift=shift))
    assert c.stats["captures"] == 4 and c.stats["replays"] == 1


def test_nested_inputs_and_outputs():
    def f(pair, extra):
        a, b = pair
        return {"sum": a + b, "both": (a * extra["k"], b - 1)}

    c = fastt.compile(f)
    for _ in range(3):
        a, b, k = fastt.randn(3), fastt.randn(3), fastt.randn(3)
        got, want = c((a, b), {"k": k}), f((a, b), {"k": k})
        assert bits(got["sum"]) == bits(want["sum"])
        assert [bits(t) for t in got["both"]] == \
            [bits(t) for t in want["both"]]
    assert c.stats["replays"] == 1


def test_an_input_written_in_place_is_written_on_replay_too():
    def f(x, y):
        x.add_(y)
        return x * 2

    c = fastt.compile(f)
    for _ in range(3):
        x, y = fastt.randn(5), fastt.randn(5)
        x0 = x.clone()
        out = c(x, y)
        assert bits(x) == bits(x0 + y)
        assert bits(out) == bits((x0 + y) * 2)
    assert c.stats["replays"] == 1


def test_invalid_input_on_replay_raises_the_ops_error():
    model = mlp()

    def f(x, y):
        with fastt.no_grad():
            return F.cross_entropy(model(x), y)

    c = fastt.compile(f)
    x = fastt.randn(5, 8)
    for _ in range(3):
        c(x, fastt.randint(0, 4, (5,)))
    assert c.stats["replays"] == 1
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        c(x, fastt.tensor([0, 1, 7, 2, 3]))


def test_gradients_set_to_none_outside_the_step_are_set_again():
    model, opt, _ = trainer("sgd")

    def fb(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    ref_model, ref_opt, _ = trainer("sgd")

    def ref(x, y):
        loss = F.cross_entropy(ref_model(x), y)
        loss.backward()
        return loss

    c = fastt.compile(fb)
    for x, y in data(5):
        opt.zero_grad()
        ref_opt.zero_grad()
        assert bits(c(x, y)) == bits(ref(x, y))
        opt.step()
        ref_opt.step()
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert bits(p) == bits(q)
    # Each call finds no gradients and assigns them: the capture guards
    # that (the step does not clear them itself).
    assert c.stats["captures"] == 1 and c.stats["replays"] == 3


def test_gradients_accumulated_across_calls():
    model, _, _ = trainer("sgd")
    ref_model, _, _ = trainer("sgd")

    def fb(m):
        def go(x, y):
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            return loss
        return go

    c, ref = fastt.compile(fb(model)), fb(ref_model)
    for x, y in data(5):
        assert bits(c(x, y)) == bits(ref(x, y))
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert bits(p.grad) == bits(q.grad)
    # The warm-up call assigned the gradients; the capture accumulated in
    # place (guarded: still the same .grad), then replays.
    assert c.stats["captures"] == 1 and c.stats["replays"] == 3


def test_outputs_that_need_grad_without_backward_stay_eager():
    model = mlp()
    c = fastt.compile(model)
    x = fastt.randn(2, 8)
    c(x)  # the warm-up
    out = c(x)
    assert out.requires_grad
    out.sum().backward()
    assert model[0].weight.grad is not None
    assert "require grad" in c._compiled.eager_reason
    with fastt.no_grad():  # inference replays
        assert bits(c(x)) == bits(model(x)) and bits(c(x)) == bits(model(x))


def test_a_tensor_the_step_cannot_see_keeps_it_eager():
    hidden = {"w": fastt.randn(4)}

    def f(x):
        return x * hidden["w"]  # reached through a dict: seen

    c = fastt.compile(f)
    x = fastt.randn(4)
    for _ in range(3):
        assert bits(c(x)) == bits(f(x))
    assert c.stats["replays"] == 1

    class Holder:
        pass

    h = Holder()
    h.inner = Holder()
    h.inner.w = fastt.randn(4)

    def g(x):
        return x * h.inner.w  # two attribute levels down: not seen

    cg = fastt.compile(g)
    for _ in range(3):
        assert bits(cg(x)) == bits(g(x))
    assert "pass that tensor as an argument" in cg.eager_reason


def test_cache_size_limit_warns_and_goes_eager(monkeypatch):
    import fastt._compile as comp
    monkeypatch.setattr(comp, "cache_size_limit", 2)

    def f(x):
        return x + 1

    c = fastt.compile(f)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(1, 6):
            assert bits(c(fastt.ones(n))) == bits(fastt.ones(n) + 1)
    assert any("cache_size_limit" in str(x.message) for x in w)
    assert c.stats["captures"] == 2 and c.stats["eager_calls"] == 3


def test_compile_api_matches_torch():
    def f(x):
        return x * 2

    assert fastt.compile(f, disable=True) is f
    deco = fastt.compile(mode="reduce-overhead", fullgraph=True)
    g = deco(f)
    x = fastt.randn(3)
    assert bits(g(x)) == bits(x * 2)
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        fastt.compile(f, mode="fast")
    with pytest.raises(TypeError):
        fastt.compile(3)
    m = mlp()
    cm = fastt.compile(m)
    assert isinstance(cm, nn.Module) and cm._orig_mod is m
    assert cm.training is m.training
    assert list(cm.parameters()) == list(m.parameters())
    assert list(cm.state_dict()) == ["_orig_mod." + k
                                     for k in m.state_dict()]


def test_methods_can_be_compiled():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        @fastt.compile
        def infer(self, x):
            with fastt.no_grad():
                return self.lin(x).relu()

    net = Net()
    x = fastt.randn(2, 4)
    want = net.lin(x).relu().detach()
    for _ in range(3):
        assert bits(net.infer(x)) == bits(want)
    assert Net.infer.stats["replays"] == 1


def test_recording_leaves_other_threads_alone():
    import threading
    results = []

    def other():
        for _ in range(200):
            results.append(float((fastt.ones(3) * 2).sum()))

    t = threading.Thread(target=other)

    def f(x):
        t.start()
        y = x
        for _ in range(200):
            y = y * 1.0
        t.join()
        return y

    c = fastt.compile(f)
    c._warm = True  # capture on the first call
    x = fastt.randn(8)
    assert bits(c(x)) == bits(x)
    assert results == [6.0] * 200
    assert c.stats["graph_breaks"] == 0


def test_set_flush_denormal():
    x = fastt.tensor([1e-39])
    try:
        assert fastt.set_flush_denormal(True)
        assert (x * 1).item() == 0.0
    finally:
        fastt.set_flush_denormal(False)
    assert (x * 1).item() != 0.0


@pytest.mark.parametrize("channels", [(1, 16), (16, 32)])
def test_library_convolutions_replay(channels):
    # oneDNN's convolutions are hooks outside the kernel table: host steps.
    cin, cout = channels
    fastt.manual_seed(0)
    conv = nn.Conv2d(cin, cout, 3, padding=1)

    def f(x):
        for p in conv.parameters():
            p.grad = None
        y = conv(x)
        (y * y).sum().backward()
        return y, conv.weight.grad.clone(), conv.bias.grad.clone()

    c = fastt.compile(f)
    for _ in range(4):
        x = fastt.randn(64, cin, 8, 8, requires_grad=False)
        got, want = c(x), f(x)
        assert [bits(t) for t in got] == [bits(t) for t in want]
    assert c.stats["replays"] == 2


def test_aliased_arguments_stay_eager():
    def f(x, y):
        x.add_(1)
        return y * 2

    c = fastt.compile(f)
    for _ in range(3):
        a = fastt.zeros(4)
        b = fastt.zeros(4)
        assert bits(c(a, a)) == bits(f(b, b))
    assert "share memory" in c.eager_reason


def test_seeding_inside_the_step_is_a_break():
    drop = nn.Dropout(0.5)

    def f(x):
        fastt.manual_seed(0)
        return drop(x)

    c = fastt.compile(f)
    x = fastt.ones(32)
    for _ in range(4):
        assert bits(c(x)) == bits(f(x))
    # Split there: the seeding runs eagerly, the dropout after it replays.
    assert "seeding" in c.graph_breaks[0][0]
    assert c.eager_reason is None
    assert c._split.pieces[-1].stats["replays"] == 1


def test_a_compiled_function_inside_a_broken_capture_runs_eagerly():
    inner = fastt.compile(lambda x: x * 3)

    def outer(x):
        _ = float(x.sum())  # breaks the outer capture
        return inner(x) + 1

    c = fastt.compile(outer)
    x = fastt.randn(4)
    for _ in range(3):
        assert bits(c(x)) == bits(x * 3 + 1)
    assert c.stats["graph_breaks"] == 1


def test_out_of_place_accumulation_is_a_break():
    w = fastt.randn(3, requires_grad=True)

    def f(x):
        (w * x).sum().backward(create_graph=True)
        return w.grad.detach().clone()

    c = fastt.compile(f)
    x = fastt.randn(3)
    for _ in range(4):
        got = c(x)
        assert bits(got) == bits(w.grad.detach())
    # The statement after the break reads a .grad assigned anew by each
    # call: a guard on that .grad captures the piece again (never stale).
    assert "out of place" in c.graph_breaks[0][0]


def _step_peak(fn, args, held):
    """The allocator's peak over one call above what was allocated before
    it, plus `held` (memory the call counts on that it did not allocate)."""
    base = fastt._C._memory_stats()["allocated_bytes"]
    fastt._C._reset_peak_memory_stats()
    fn(*args)
    return fastt._C._memory_stats()["peak_allocated_bytes"] - base + held


@pytest.mark.parametrize("train", [True, False])
def test_memory_is_planned_by_liveness_and_peaks_at_most_eager(train):
    def build():
        fastt.manual_seed(0)
        model = nn.Sequential(nn.Linear(32, 256), nn.GELU(),
                              nn.Linear(256, 256), nn.GELU(),
                              nn.LayerNorm(256), nn.Linear(256, 10))
        opt = fastt.optim.AdamW(model.parameters(), lr=1e-3)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        def infer(x):
            with fastt.no_grad():
                return model(x).softmax(-1)
        return model, (step if train else infer)

    fastt.manual_seed(3)
    x, y = fastt.randn(64, 32), fastt.randint(0, 10, (64,))
    args = (x, y) if train else (x,)
    model_e, eager = build()
    model_c, fn = build()
    c = fastt.compile(fn)
    for _ in range(3):
        e = eager(*args)
        r = c(*args)
    assert c.stats["replays"] == 1 and bits(e) == bits(r)
    step = c._entries[0].step
    # The intermediates moved into an arena laid out by their lifetimes
    # (or into gradients' blocks before those are written); blocks the
    # plan emptied went back to the allocator.
    assert 0 < step.pool_bytes < step.unplanned_bytes
    # Eager frees the old gradients (zero_grad) and allocates new ones;
    # the compiled step keeps them in its pool.
    held = sum(p.grad.numel() * 4 for p in model_e.parameters()
               if p.grad is not None)
    peak_e = _step_peak(eager, args, held)
    peak_c = _step_peak(c, args, step.pool_bytes)
    assert c.stats["replays"] == 2
    assert peak_c <= peak_e, (peak_c, peak_e)
    # And the planned step still computes what eager does.
    for _ in range(3):
        assert bits(eager(*args)) == bits(c(*args))


def test_a_step_that_returns_none_replays():
    model, opt, step = trainer()

    def train(x, y):
        step(x, y)  # returns nothing, like most training loops' steps

    c = fastt.compile(train)
    ref_model, _, ref_step = trainer()
    for x, y in data(4):
        assert c(x, y) is None
        ref_step(x, y)
    assert c.stats["replays"] == 2, (c.stats, c.eager_reason)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert bits(p) == bits(q)


def test_an_optimizer_step_before_backward_reads_intact_gradients():
    # The memory plan may reuse a gradient's block for temporaries before
    # the step writes the gradient, but not when a host step (here the
    # optimizer's, applying the previous call's gradients) reads it first.
    def build():
        model, opt, _ = trainer("adamw")

        def step(x, y):
            x = (x * 2).relu() * 0.5  # temporaries, dead before opt.step
            opt.step()
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return loss
        return model, step
    model_e, eager = build()
    model_c, step = build()
    c = fastt.compile(step)
    for x, y in data(6):
        assert bits(eager(x, y)) == bits(c(x, y))
    assert c.stats["replays"] == 4, (c.stats, c.eager_reason)
    for p, q in zip(model_e.parameters(), model_c.parameters()):
        assert bits(p) == bits(q)


def test_namedtuple_arguments_hit_the_guards():
    import collections
    P = collections.namedtuple("P", "x y")
    c = fastt.compile(lambda p: p.x * 2 + p.y)
    x, y = fastt.ones(3), fastt.arange(3.0)
    for _ in range(4):
        out = c(P(x, y))
    assert c.stats["captures"] == 1 and c.stats["replays"] == 2, c.stats
    assert out.tolist() == [2.0, 3.0, 4.0]
