"""Module backward hooks (register_full_backward_hook / _pre_hook) and
Tensor.register_post_accumulate_grad_hook against torch: what the hooks
see, what replacing gradients does, and the errors."""
import pytest
import torch

import fastt
from torch_ref import Fz, close

LIBS = (fastt, torch)


def linear(L):
    torch.manual_seed(0)
    t = torch.nn.Linear(3, 2, dtype=torch.float64)
    if L is torch:
        return t
    f = fastt.nn.Linear(3, 2, dtype=fastt.float64)
    f.load_state_dict({k: Fz(v) for k, v in t.state_dict().items()})
    return f


def data(L, *shape, seed=0, grad=True):
    t = torch.randn(*shape, generator=torch.Generator().manual_seed(seed),
                    dtype=torch.float64)
    return t.requires_grad_(grad) if L is torch else Fz(t, grad)


def run_both(case):
    return case(fastt), case(torch)


def flat(xs):
    return [x for x in xs]


def test_full_backward_hook_sees_grad_input_and_grad_output():
    def case(L):
        m = linear(L)
        seen = []
        m.register_full_backward_hook(
            lambda mod, gi, go: seen.append((mod is m, gi, go)))
        x = data(L, 4, 3)
        (m(x) ** 2).sum().backward()
        same, gi, go = seen[0]
        return same, len(seen), gi[0], go[0], x.grad
    rf, rt = run_both(case)
    assert rf[0] and rf[1] == rt[1] == 1
    for a, b in zip(rf[2:], rt[2:]):
        close(a, b)


def test_hooks_replace_gradients():
    def case(L):
        m = linear(L)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
        x = data(L, 4, 3)
        (m(x) ** 2).sum().backward()
        return x.grad, m.weight.grad
    rf, rt = run_both(case)
    for a, b in zip(rf, rt):
        close(a, b)


def test_input_without_grad_gets_none_and_hooks_still_run():
    def case(L):
        m = linear(L)
        seen = []
        m.register_full_backward_hook(
            lambda mod, gi, go: seen.append((gi, go[0].shape)))
        x = data(L, 4, 3, grad=False)
        with pytest.warns(UserWarning, match="Full backward hook is firing"):
            m(x).sum().backward()
        return seen[0][0], tuple(seen[0][1]), m.bias.grad
    rf, rt = run_both(case)
    assert rf[0] == rt[0] == (None,)
    assert rf[1] == rt[1]
    close(rf[2], rt[2])


def test_hook_returning_grads_without_input_grad_errors():
    for L in LIBS:
        m = linear(L)
        m.register_full_backward_hook(
            lambda mod, gi, go: (L.ones(4, 3, dtype=L.float64),))
        with pytest.raises(RuntimeError, match="no input requires gradient "
                                               "should always return None"), \
                pytest.warns(UserWarning, match="Full backward hook"):
            m(data(L, 4, 3, grad=False)).sum().backward()


def test_handle_remove_and_sequential_order():
    def case(L):
        seq = L.nn.Sequential(linear(L), L.nn.Tanh())
        order = []
        h0 = seq[0].register_full_backward_hook(
            lambda m, gi, go: order.append("linear"))
        seq[1].register_full_backward_hook(
            lambda m, gi, go: order.append("tanh"))
        seq(data(L, 2, 3)).sum().backward()
        h0.remove()
        seq(data(L, 2, 3)).sum().backward()
        return order
    rf, rt = run_both(case)
    assert rf == rt == ["tanh", "linear", "tanh"]


def test_post_accumulate_grad_hook_gets_the_parameter_after_accumulation():
    def case(L):
        m = linear(L)
        got = []

        def hook(p):
            got.append((p is m.weight, p.grad.clone()))

        h = m.weight.register_post_accumulate_grad_hook(hook)
        x = data(L, 4, 3)
        m(x).sum().backward()
        m(x).sum().backward()
        h.remove()
        m(x).sum().backward()
        return len(got), got[0][0], got[1][1]
    rf, rt = run_both(case)
    assert rf[0] == rt[0] == 2 and rf[1] and rt[1]
    close(rf[2], rt[2])
    for L in LIBS:
        y = data(L, 3) * 2
        with pytest.raises(RuntimeError, match="post accumulate grad hooks "
                                               "cannot be registered on "
                                               "non-leaf tensors"):
            y.register_post_accumulate_grad_hook(lambda p: None)


def test_optimizer_step_in_the_post_accumulate_hook():
    # torch's "optimizer in backward" recipe: one optimizer per parameter,
    # stepped from the hook; the result equals a plain step.
    def case(L, in_backward):
        m = linear(L)
        x = data(L, 4, 3)
        if in_backward:
            opts = {p: L.optim.SGD([p], lr=0.1) for p in m.parameters()}

            def hook(p):
                opts[p].step()
                opts[p].zero_grad()

            for p in m.parameters():
                p.register_post_accumulate_grad_hook(hook)
            (m(x) ** 2).sum().backward()
        else:
            opt = L.optim.SGD(m.parameters(), lr=0.1)
            (m(x) ** 2).sum().backward()
            opt.step()
        return m.weight.detach().clone()
    a = case(fastt, True)
    b = case(fastt, False)
    assert bool((a == b).all())
    close(a, case(torch, True))


def test_hook_flag_follows_register_remove_and_copies():
    import copy
    import pickle
    m = fastt.nn.Linear(2, 2)
    calls = []
    h = m.register_forward_hook(lambda mod, a, out: calls.append(1))
    b = m.register_full_backward_pre_hook(lambda mod, go: calls.append(2))
    m(fastt.ones(1, 2)).sum().backward()
    assert calls == [1, 2]
    m2 = copy.deepcopy(m)
    m2(fastt.ones(1, 2))
    assert calls == [1, 2, 1]
    h.remove()
    b.remove()
    assert not m._fastt_hooked and m2._fastt_hooked
    m(fastt.ones(1, 2)).sum().backward()
    assert calls == [1, 2, 1]
    m3 = pickle.loads(pickle.dumps(fastt.nn.Linear(2, 2)))
    assert m3._fastt_hooked is False
