"""Graph breaks split a compiled function (python/fastt/_split.py): the
top-level statement holding the break runs eagerly, the statements before
and after it are captured and replayed, and every call computes what
eager fastt computes, bitwise."""
import gc
import sys
import warnings
import weakref

import pytest

import fastt
import fastt.nn as nn
import fastt.nn.functional as F


pytestmark = pytest.mark.usefixtures("capture_poison")


def bits(t):
    return t.detach().numpy().tobytes()


def model_and_opt(seed=0):
    fastt.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    return model, fastt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def batches(n=8, seed=1):
    fastt.manual_seed(seed)
    return [(fastt.randn(5, 8), fastt.randint(0, 4, (5,)))
            for _ in range(n)]


def pieces(c):
    return [p for p in c._split.pieces if isinstance(p, type(c))]


def training_step(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def test_item_at_the_end_of_a_training_step():
    m1, o1 = model_and_opt()
    m2, o2 = model_and_opt()
    eager, c = training_step(m1, o1), fastt.compile(training_step(m2, o2))
    for x, y in batches():
        assert eager(x, y) == c(x, y)
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert bits(p) == bits(q)
    assert c.eager_reason is None and c.stats["graph_breaks"] == 1
    (before,) = pieces(c)
    # Call 1 warm-up, 2 the broken capture, 3 the piece's capture.
    assert before.stats == {"captures": 1, "replays": 5, "eager_calls": 0,
                            "graph_breaks": 0, "split_calls": 0}
    assert c.stats["split_calls"] == 6
    reason, filename, line = c.graph_breaks[0]
    assert "item()" in reason and filename == __file__
    assert line == training_step.__code__.co_firstlineno + 6


def test_item_in_the_middle_of_inference():
    fastt.manual_seed(0)
    lin = nn.Linear(8, 8)

    def f(x):
        h = lin(x).relu()
        n = int((h > 0).sum().item())
        y = h * n
        return y.tanh(), n

    c = fastt.compile(f)
    fastt.manual_seed(3)
    xs = [fastt.randn(4, 8) for _ in range(3)] * 3
    with fastt.no_grad():
        for x in xs:
            (a, n), (b, m) = f(x), c(x)
            assert n == m and bits(a) == bits(b)
    before, after = pieces(c)
    assert before.stats["replays"] == 6
    # The piece after the break is guarded on n, a Python int: one entry
    # per value.
    assert after.stats["captures"] == len({int((lin(x).relu() > 0).sum())
                                           for x in xs})
    assert after.stats["replays"] >= 4


def test_a_break_before_backward_keeps_the_grad_pieces_eager():
    m1, o1 = model_and_opt()
    m2, o2 = model_and_opt()

    def step_of(model, opt):
        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            value = loss.item()
            loss.backward()
            opt.step()
            return value
        return step

    eager, c = step_of(m1, o1), fastt.compile(step_of(m2, o2))
    for x, y in batches():
        assert eager(x, y) == c(x, y)
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert bits(p) == bits(q)
    before, after = pieces(c)
    # loss carries autograd history across the break: neither side can
    # replay it (a replay returns plain tensors), so both run eagerly.
    assert "require grad" in before.eager_reason
    assert "requires grad" in after.eager_reason


def test_two_breaks_split_twice():
    def f(x):
        a = x.sum().item()
        y = x * a
        b = y.amax().item()
        z = y + b
        return z.exp()

    c = fastt.compile(f)
    fastt.manual_seed(2)
    xs = [fastt.randn(6) for _ in range(2)] * 4
    for x in xs:
        assert bits(c(x)) == bits(f(x))
    assert c.stats["graph_breaks"] == 2
    assert [r for r, _, _ in c.graph_breaks] == [
        "item() (reading a tensor's value on the host)"] * 2


def test_a_nested_return_in_a_piece_split_again():
    def f(x, flag):
        a = x.sum().item()
        y = x * a
        if flag:
            return y - 1
        b = y.amax().item()
        return y + b

    c = fastt.compile(f)
    x = fastt.full((3,), 0.5)
    for flag in (False, False, False, True, False, True, True):
        assert bits(c(x, flag)) == bits(f(x, flag))
    assert c.stats["graph_breaks"] == 2


def test_early_return_and_locals_bound_on_one_path():
    def f(x, flag):
        if flag:
            return x * 2
        y = x + 1
        s = y.sum().item()
        if s > 1e9:
            z = y  # never taken: z stays unbound
        out = y * s
        try:
            z
        except UnboundLocalError:
            out = out + 1
        return out

    c = fastt.compile(f)
    fastt.manual_seed(4)
    x = fastt.randn(3)
    for flag in (False, False, False, True, False, True):
        assert bits(c(x, flag)) == bits(f(x, flag))


G = 2.0


def test_globals_closures_and_keyword_arguments():
    scale = fastt.tensor([3.0])

    def f(x, *, shift=1.0):
        global G
        G = G + 1
        y = x * scale + shift
        v = float(y.sum())
        return y * v, v

    c = fastt.compile(f)
    x = fastt.randn(4)
    for shift in (1.0, 1.0, 1.0, 0.5, 0.5):
        want, v = f(x, shift=shift)
        got, u = c(x, shift=shift)
        assert u == v and bits(got) == bits(want)
    # The global statement ran at the capture only, as any Python side
    # effect in a captured piece.
    assert G > 2.0


def test_the_callers_tensors_pass_through_as_themselves():
    def f(x, buf):
        y = x * 2
        n = y.sum().item()
        buf.add_(1)
        return y + n, x

    c = fastt.compile(f)
    x, buf = fastt.randn(3), fastt.zeros(3)
    for i in range(5):
        out, same = c(x, buf)
        assert same is x
        assert bits(buf) == bits(fastt.full((3,), float(i + 1)))
        assert bits(out) == bits(x * 2 + (x * 2).sum().item())


def test_module_forward_with_a_break():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = nn.Linear(4, 2)

        def forward(self, x):
            h = self.a(x).relu()
            if h.sum() > 0:  # bool(tensor): the eager statement
                h = h * 2
            return self.b(h)

    fastt.manual_seed(0)
    net = Net()
    c = fastt.compile(net)
    fastt.manual_seed(5)
    xs = [fastt.randn(3, 4) for _ in range(3)] * 2
    with fastt.no_grad():
        for x in xs:
            assert bits(c(x)) == bits(net(x))
    assert c._compiled.stats["graph_breaks"] == 1
    assert all(p.stats["replays"] >= 1 for p in pieces(c._compiled))


def test_a_break_in_a_kernel_run_without_the_gil_splits():
    # 100000 elements: masked_select's kernels run without the GIL, the
    # break's frames are noted when the thread takes it back.
    def f(x):
        y = x * 2
        z = y[y > 0]
        return z.sum() + y.sum()

    c = fastt.compile(f)
    fastt.manual_seed(6)
    x = fastt.randn(100000)
    for _ in range(4):
        assert bits(c(x)) == bits(f(x))
    assert c.eager_reason is None and c.graph_breaks[0][2] > 0
    assert pieces(c)[0].stats["replays"] == 1


def test_verbose_names_the_line_and_the_pieces(capsys):
    def f(x):
        y = x + 1
        print(y.sum().item())
        return y * 2

    c = fastt.compile(f, verbose=True)
    for _ in range(3):
        c(fastt.ones(2))
    err = capsys.readouterr().err
    line = f.__code__.co_firstlineno + 2
    assert "graph break in " in err
    assert f"test_compile_split.py:{line}" in err
    assert f"lines {line}-{line} run eagerly" in err


def test_not_split_when_the_source_is_not_readable():
    ns = {}
    exec("def f(x):\n y = x + 1\n n = y.sum().item()\n return y * n\n", ns)
    c = fastt.compile(ns["f"])
    x = fastt.ones(2)
    for _ in range(3):
        assert bits(c(x)) == bits(ns["f"](x))
    assert "not split: its source cannot be read" in c.eager_reason


def test_not_split_when_a_local_is_captured_by_an_inner_function():
    def f(x):
        k = x.sum().item()
        g = lambda t: t * k  # noqa: E731
        return g(x)

    c = fastt.compile(f)
    x = fastt.ones(2)
    for _ in range(3):
        assert bits(c(x)) == bits(f(x))
    assert "captured by an inner function" in c.eager_reason


def test_methods_using_super_and_private_names():
    class Base(nn.Module):
        def forward(self, x):
            return x * 2

    class Net(Base):
        def __init__(self):
            super().__init__()
            self.__k = 3.0

        def forward(self, x):
            y = super().forward(x)
            n = y.sum().item()
            return y * n

        def private(self, x):
            y = x * self.__k
            n = y.sum().item()
            return y * n

    net = Net()
    c = fastt.compile(net)
    p = fastt.compile(Net.private)
    x = fastt.randn(3)
    for _ in range(4):
        assert bits(c(x)) == bits(net(x))
        assert bits(p(net, x)) == bits(net.private(x))
    assert c._compiled.eager_reason is None
    assert "class-private" in p.eager_reason


def test_fullgraph_still_raises():
    def f(x):
        y = x + 1
        return y * y.sum().item()

    c = fastt.compile(f, fullgraph=True)
    with pytest.raises(RuntimeError, match="fullgraph=True"):
        c(fastt.ones(2))


def test_a_read_gradient_assigned_anew_outside_is_guarded():
    w = fastt.randn(3, requires_grad=True)
    w.grad = fastt.ones(3)

    def f(x):
        return w.grad * x

    c = fastt.compile(f)
    x = fastt.randn(3)
    for i in range(4):
        w.grad = fastt.full((3,), float(i))  # a new .grad tensor
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert bits(c(x)) == bits(w.grad * x)
    assert c.stats["captures"] >= 2


def test_lists_and_sets_are_not_frozen_across_a_break():
    def f(x, log):
        y = x * 2
        log.append(y.sum().item())  # the caller's list, mutated eagerly
        return y + 1

    def g(x):
        seen = set()  # made before the break: a replay cannot give it
        a = []
        b = a
        seen.add(float(x.sum()))
        a.append(len(seen))
        return x * len(seen), b

    cf, cg = fastt.compile(f), fastt.compile(g)
    x, log, want = fastt.ones(3), [], []
    for _ in range(5):
        assert bits(cf(x, log)) == bits(f(x, want))
        out, b = cg(x)
        assert b == [1] and bits(out) == bits(x)
    assert log == want and len(log) == 5
    assert "'seen', a set, passes a graph break" in (
        pieces(cg)[0].eager_reason)
    assert "a set, passes a graph break" in pieces(cg)[1].eager_reason


def test_a_functools_wraps_wrapper_splits_its_own_code():
    import functools

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            return fn(*a, **k)
        return wrapper

    @deco
    def f(x):
        y = x * 2
        v = y.sum().item()
        return y * v

    c = fastt.compile(f)
    for _ in range(4):
        assert bits(c(fastt.ones(2))) == bits(fastt.full((2,), 8.0))
    # The wrapper's one statement holds the break: nothing to capture.
    assert "its only statement" in c.eager_reason


def test_a_split_module_with_hooks_runs_whole():
    class Net(nn.Module):
        def forward(self, x):
            y = x * 2
            if y.sum() > 0:
                y = y + 1
            return y * 3

    net = Net()
    c = fastt.compile(net)
    x = fastt.ones(2)
    for _ in range(3):
        assert bits(c(x)) == bits(fastt.full((2,), 9.0))
    h = net.register_forward_hook(lambda m, i, o: o * 0)
    for _ in range(3):
        assert bits(c(x)) == bits(fastt.zeros(2))
    h.remove()
    assert bits(c(x)) == bits(fastt.full((2,), 9.0))


def test_a_piece_takes_only_the_locals_it_names():
    def f(x):
        y = x * 2
        v = y.sum().item()  # a new float every call
        z = y + 1
        w = z.exp()
        return w, v

    c = fastt.compile(f)
    fastt.manual_seed(0)
    for _ in range(6):
        x = fastt.randn(3)
        (a, v), (b, u) = c(x), f(x)
        assert v == u and bits(a) == bits(b)
    # `return w, v` names v, read on the host: that return runs eagerly,
    # and z = y + 1, w = z.exp() are captured once.
    after = pieces(c)[-1]
    assert after.stats["captures"] == 1 and after.stats["replays"] == 3


def test_a_step_in_a_reference_cycle_is_collected():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.opt = fastt.optim.SGD(self.parameters(), lr=0.1)
            # The step's guards hold self (an argument of its pieces):
            # a cycle through the captured steps.
            self.step = fastt.compile(self._step)

        def _step(self, x):
            self.opt.zero_grad()
            loss = self.lin(x).square().mean()
            loss.backward()
            self.opt.step()
            return loss.item()

    net = Net()
    for _ in range(4):
        net.step(fastt.randn(2, 4))
    assert net.step.stats["split_calls"] == 2
    steps = [e.step for p in pieces(net.step) for e in p._entries]
    assert any(o is net for s in steps for o in gc.get_referents(s))
    del steps
    ref = weakref.ref(net)
    del net
    gc.collect()
    assert ref() is None


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
