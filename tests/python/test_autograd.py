"""Autograd semantics (torch's, checked against torch where it applies):
leaves and .grad accumulation, backward arguments, retain_graph and
create_graph, autograd.grad, grad modes, detach, hooks, grad_fn names,
broadcast reduction, dtypes, views and in-place ops (CopySlices), version
counters, and graphs that must be freed. Per-op gradients live in
test_gradcheck.py. Add a test next to the semantics it checks."""
import gc
import threading
import weakref

import numpy as np
import pytest

import fastt

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def npy(t):
    return np.asarray(t.detach().double().numpy())


def pair(arr, requires_grad=True, dtype="float64"):
    """The same leaf in fastt and torch."""
    a = np.asarray(arr, dtype=np.float64)
    f = fastt.tensor(a, dtype=getattr(fastt, dtype))
    t = torch.tensor(a, dtype=getattr(torch, dtype)) if torch else None
    if requires_grad:
        f.requires_grad_()
        if t is not None:
            t.requires_grad_()
    return f, t


def close(a, b, rtol=1e-6, atol=1e-8):
    bb = b.detach().double().numpy() if torch and isinstance(
        b, torch.Tensor) else np.asarray(b)
    np.testing.assert_allclose(npy(a), bb, rtol=rtol, atol=atol)


def close_grad(a, b):
    """A missing gradient matches torch's None or all-zero one (fastt
    does not connect inputs whose gradient is identically zero, e.g. the
    overwritten self of copy_/fill_/zero_)."""
    if a is None or b is None:
        for g in (a, b):
            assert g is None or not npy(g).any()
        return
    close(a, b)


RNG = np.random.default_rng(1234)


def rand(*shape):
    return RNG.uniform(-1.5, 1.5, shape)


# ------------------------------------------------ requires_grad, leaves --
def test_requires_grad_defaults_and_setter():
    x = fastt.ones(3)
    assert x.requires_grad is False and x.is_leaf and x.grad is None
    assert x.grad_fn is None
    x.requires_grad = True
    assert x.requires_grad
    assert x.requires_grad_(False) is x and not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad


def test_factories_accept_requires_grad():
    for t in (fastt.zeros(2, requires_grad=True),
              fastt.ones(2, 3, requires_grad=True),
              fastt.randn(4, requires_grad=True),
              fastt.tensor([1.0, 2.0], requires_grad=True),
              fastt.full((2,), 3.0, requires_grad=True)):
        assert t.requires_grad and t.is_leaf and t.grad_fn is None


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
def test_integer_tensors_cannot_require_grad(dtype):
    x = fastt.zeros(3, dtype=getattr(fastt, dtype))
    with pytest.raises(RuntimeError, match="floating point"):
        x.requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        x.requires_grad = True
    with pytest.raises(RuntimeError, match="floating point and complex "
                                           "dtype can require gradients"):
        fastt.tensor([1, 2], requires_grad=True)


def test_non_leaf_state():
    x = fastt.randn(3, requires_grad=True)
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)
    y.requires_grad_(True)  # allowed: already true
    z = fastt.randn(3) * 2  # no input requires grad: a leaf
    assert z.is_leaf and not z.requires_grad and z.grad_fn is None


def test_grad_of_non_leaf_is_none_without_retain_grad():
    x = fastt.randn(3, requires_grad=True)
    y = x * 2
    y.sum().backward()
    assert y.grad is None
    assert x.grad is not None


def test_integer_result_does_not_require_grad():
    x = fastt.randn(3, 4, requires_grad=True)
    assert not x.argmax().requires_grad
    assert not (x > 0).requires_grad
    assert not x.max(1)[1].requires_grad
    assert x.max(1)[0].requires_grad


# ----------------------------------------------- .grad accumulation ---
def test_grad_accumulates_across_backward_calls():
    x = fastt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2, 4, 6])
    (x * 3).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [5, 7, 9])


def test_grad_zero_and_none():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    x.grad.zero_()
    np.testing.assert_allclose(npy(x.grad), [0, 0])
    (x * 2).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2, 2])
    assert x.grad.data_ptr() == g.data_ptr()  # accumulated in place
    x.grad = None
    assert x.grad is None
    (x * 5).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [5, 5])


def test_grad_is_not_aliased_with_upstream_gradient():
    """The first .grad must not share memory with a tensor the user holds
    (torch clones the incoming gradient unless it owns it)."""
    x = fastt.zeros(3, requires_grad=True)
    g = fastt.ones(3)
    x.backward(g)
    g.mul_(100)
    np.testing.assert_allclose(npy(x.grad), [1, 1, 1])
    x.grad = None
    y = x.view(3)
    y.backward(g)
    g.fill_(7)
    np.testing.assert_allclose(npy(x.grad), [100, 100, 100])


def test_grad_setter_checks():
    x = fastt.zeros(3, requires_grad=True)
    x.grad = fastt.ones(3)
    np.testing.assert_allclose(npy(x.grad), [1, 1, 1])
    with pytest.raises(RuntimeError, match=r"attempting to assign a gradient "
                       r"of size '\[4\]' to a tensor of size '\[3\]'"):
        x.grad = fastt.ones(4)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient "
                       "with dtype 'float64' to a tensor with dtype "
                       "'float32'"):
        x.grad = fastt.ones(3, dtype=fastt.float64)


def test_grad_shape_and_dtype_match_leaf():
    x = fastt.randn(2, 3, dtype=fastt.float64, requires_grad=True)
    (x.sum(0) * 2).sum().backward()
    assert tuple(x.grad.shape) == (2, 3) and x.grad.dtype == fastt.float64
    assert not x.grad.requires_grad and x.grad.grad_fn is None


# ----------------------------------------------------- backward args ---
def test_backward_non_scalar_needs_gradient():
    x = fastt.randn(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError,
                       match="grad can be implicitly created only for "
                             "scalar outputs"):
        y.backward()
    y.backward(fastt.tensor([1.0, 0.5, -1.0]))
    np.testing.assert_allclose(npy(x.grad), [2, 1, -2])


def test_backward_gradient_shape_mismatch_raises():
    x = fastt.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output"
                       r"\[0\] has a shape of \[4\] and output\[0\] has a "
                       r"shape of \[3\]"):
        (x * 2).backward(fastt.ones(4))


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        fastt.ones(1).sum().backward()


def test_backward_one_element_non_scalar_ok():
    x = fastt.randn(1, 1, requires_grad=True)
    (x * 3).backward()
    np.testing.assert_allclose(npy(x.grad), [[3]])


def test_backward_inputs_limits_accumulation():
    x = fastt.randn(3, requires_grad=True)
    w = fastt.randn(3, requires_grad=True)
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    close(w.grad, npy(x))


def test_autograd_backward_function_several_roots():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    a, b = x * 2, x * x
    fastt.autograd.backward([a.sum(), b], [None, fastt.tensor([1.0, 1.0])])
    np.testing.assert_allclose(npy(x.grad), [4, 6])


# --------------------------------------------------- retain_graph ------
def test_second_backward_without_retain_graph_raises():
    x = fastt.randn(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError,
                       match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = fastt.tensor([1.0, -2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    g1 = npy(x.grad).copy()
    y.backward()
    np.testing.assert_allclose(npy(x.grad), 2 * g1)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_shared_subgraph_freed_after_first_backward():
    x = fastt.randn(3, requires_grad=True)
    h = x.sigmoid()
    a, b = h.sum(), (h * 2).sum()
    a.backward()
    with pytest.raises(RuntimeError, match="second time"):
        b.backward()


# ---------------------------------------------- create_graph, double ---
DOUBLE = {
    "cube": lambda L, x, y: (x ** 3).sum(),
    "matmul": lambda L, x, y: (L.matmul(x.reshape(2, 3), y.reshape(3, 2))
                               ** 2).sum(),
    "tanh": lambda L, x, y: (x.tanh() * y).sum(),
    "sigmoid": lambda L, x, y: (x.sigmoid() * x).sum(),
    "exp": lambda L, x, y: (x.exp() * y.exp()).sum(),
    "log": lambda L, x, y: ((x * x + 1).log() * y).sum(),
    "mul_div": lambda L, x, y: ((x * y) / (y * y + 1) * x).sum(),
    "softmax": lambda L, x, y: (x.reshape(2, 3).softmax(1) * y.reshape(2, 3)
                                ).sum(),
    "sqrt_pow": lambda L, x, y: ((x * x + 1).sqrt() ** 1.5 * y).sum(),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_double_backward_vs_torch(name):
    f = DOUBLE[name]
    a, b = rand(6), rand(6)
    xf, xt = pair(a)
    yf, yt = pair(b)
    gf = fastt.autograd.grad(f(fastt, xf, yf), [xf, yf], create_graph=True,
                             allow_unused=True)
    gt = torch.autograd.grad(f(torch, xt, yt), [xt, yt], create_graph=True,
                             allow_unused=True)
    for u, v in zip(gf, gt, strict=True):
        if v is None:
            assert u is None
            continue
        close(u, v)
        assert u.requires_grad == v.requires_grad
    # second order: d/d(x,y) of <g_x, w>
    w = rand(6)
    sf = (gf[0] * fastt.tensor(w)).sum()
    st = (gt[0] * torch.tensor(w)).sum()
    hf = fastt.autograd.grad(sf, [xf, yf], allow_unused=True)
    ht = torch.autograd.grad(st, [xt, yt], allow_unused=True)
    for u, v in zip(hf, ht, strict=True):
        if v is None:
            assert u is None or not npy(u).any()
        else:
            close(u, v)


def test_cube_second_derivative_by_backward():
    x = fastt.tensor([1.0, 2.0, -3.0], dtype=fastt.float64,
                     requires_grad=True)
    y = (x ** 3).sum()
    (g,) = fastt.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(npy(g), 3 * npy(x) ** 2)
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(npy(x.grad), 6 * npy(x))


def test_backward_create_graph_makes_grad_differentiable():
    x = fastt.tensor([0.5, -1.0], dtype=fastt.float64, requires_grad=True)
    (x.tanh() ** 2).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.grad_fn is not None
    (gg,) = fastt.autograd.grad(g.sum(), x)
    t = np.tanh(npy(x))
    # d/dx [2 t (1 - t^2)] = 2 (1 - t^2)(1 - 3 t^2)
    np.testing.assert_allclose(npy(gg), 2 * (1 - t ** 2) * (1 - 3 * t ** 2),
                               rtol=1e-10)


def test_grad_without_create_graph_is_detached():
    x = fastt.randn(3, requires_grad=True)
    (g,) = fastt.autograd.grad((x ** 2).sum(), x)
    assert not g.requires_grad and g.grad_fn is None


# --------------------------------------------------- autograd.grad -----
def test_autograd_grad_multiple_inputs_and_no_accumulation():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    y = fastt.tensor([3.0, 4.0], requires_grad=True)
    gx, gy = fastt.autograd.grad((x * y).sum(), [x, y])
    np.testing.assert_allclose(npy(gx), [3, 4])
    np.testing.assert_allclose(npy(gy), [1, 2])
    assert x.grad is None and y.grad is None


def test_autograd_grad_returns_tuple_for_single_input():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    r = fastt.autograd.grad((x * 2).sum(), x)
    assert isinstance(r, tuple) and len(r) == 1


def test_autograd_grad_allow_unused():
    x = fastt.randn(2, requires_grad=True)
    z = fastt.randn(2, requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        fastt.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = fastt.autograd.grad(y, [x, z], allow_unused=True)
    assert gz is None
    np.testing.assert_allclose(npy(gx), [2, 2])


def test_autograd_grad_materialize_grads():
    x = fastt.randn(2, requires_grad=True)
    z = fastt.randn(2, requires_grad=True)
    gx, gz = fastt.autograd.grad((x * 2).sum(), [x, z],
                                 materialize_grads=True)
    np.testing.assert_allclose(npy(gz), [0, 0])


def test_autograd_grad_grad_outputs_and_non_leaf_input():
    x = fastt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * x
    y = h * 3
    (gh,) = fastt.autograd.grad(y, h, grad_outputs=fastt.tensor(
        [1.0, 0.0, 2.0]), retain_graph=True)
    np.testing.assert_allclose(npy(gh), [3, 0, 6])
    (gx,) = fastt.autograd.grad([y], [x], [fastt.tensor([1.0, 0.0, 2.0])])
    np.testing.assert_allclose(npy(gx), [6, 0, 36])


def test_autograd_grad_input_without_grad_raises():
    x = fastt.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors "
                                           "does not require grad"):
        fastt.autograd.grad((x * 2).sum(), fastt.randn(2))


def test_autograd_grad_two_outputs_sum():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    (g,) = fastt.autograd.grad([(x * 2).sum(), (x * x).sum()], [x])
    np.testing.assert_allclose(npy(g), [4, 6])


# ------------------------------------------------------ grad modes -----
def test_no_grad_context_and_nesting():
    x = fastt.randn(3, requires_grad=True)
    assert fastt.is_grad_enabled()
    with fastt.no_grad():
        assert not fastt.is_grad_enabled()
        y = x * 2
        with fastt.enable_grad():
            assert fastt.is_grad_enabled()
            z = x * 2
            with fastt.no_grad():
                w = x * 2
            assert fastt.is_grad_enabled()
        assert not fastt.is_grad_enabled()
    assert fastt.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None
    assert not w.requires_grad


def test_no_grad_restores_on_exception():
    with pytest.raises(ValueError, match="^inside$"):
        with fastt.no_grad():
            raise ValueError("inside")
    assert fastt.is_grad_enabled()


def test_grad_mode_decorators():
    x = fastt.randn(3, requires_grad=True)

    @fastt.no_grad()
    def f():
        assert not fastt.is_grad_enabled()
        return x * 2

    @fastt.enable_grad()
    def g():
        return x * 2

    @fastt.set_grad_enabled(False)
    def h():
        return x * 2

    @fastt.inference_mode()
    def k():
        return x * 2

    assert fastt.is_grad_enabled()  # decorating changed nothing
    assert not f().requires_grad
    assert not h().requires_grad
    assert not k().requires_grad
    with fastt.no_grad():
        assert g().requires_grad
        assert not fastt.is_grad_enabled()
    assert f.__name__ == "f"


@needs_torch
def test_bare_decorators_like_torch():
    """torch accepts @torch.no_grad and @torch.enable_grad without
    parentheses."""
    x = fastt.randn(3, requires_grad=True)

    @torch.no_grad
    def tf():
        return torch.is_grad_enabled()

    assert tf() is False

    @fastt.no_grad
    def ff():
        return x * 2

    assert not ff().requires_grad

    @fastt.enable_grad
    def fe():
        return x * 2

    with fastt.no_grad():
        assert fe().requires_grad


def test_set_grad_enabled_function_and_context():
    x = fastt.randn(3, requires_grad=True)
    try:
        fastt.set_grad_enabled(False)
        assert not fastt.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        fastt.set_grad_enabled(True)
    assert fastt.is_grad_enabled()
    with fastt.set_grad_enabled(False):
        assert not (x * 2).requires_grad
        with fastt.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not fastt.is_grad_enabled()
    assert fastt.is_grad_enabled()


@needs_torch
def test_inference_mode_like_torch():
    for L in (fastt, torch):
        x = L.ones(2, requires_grad=True)
        with L.inference_mode():
            assert not L.is_grad_enabled()
            assert L.is_inference_mode_enabled()
            assert not (x * 2).requires_grad
            with L.inference_mode(False):
                assert not L.is_inference_mode_enabled()
        assert L.is_grad_enabled() and not L.is_inference_mode_enabled()
        with L.inference_mode(False):
            assert L.is_grad_enabled()
            assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    x = fastt.randn(3, requires_grad=True)
    out = {}

    def worker():
        out["enabled"] = fastt.is_grad_enabled()
        out["records"] = (x * 2).requires_grad
        with fastt.no_grad():
            out["inner"] = (x * 2).requires_grad
            barrier.wait()
            barrier.wait()

    barrier = threading.Barrier(2)
    with fastt.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        barrier.wait()
        inside = fastt.is_grad_enabled()
    # the worker is still inside its no_grad: ours must be unaffected
    assert fastt.is_grad_enabled()
    assert (x * 2).requires_grad
    barrier.wait()
    t.join()
    assert not inside
    assert out == {"enabled": True, "records": True, "inner": False}


def test_backward_in_another_thread():
    x = fastt.randn(4, requires_grad=True)
    y = (x * x).sum()
    err = []

    def worker():
        try:
            y.backward()
        except Exception as e:  # pragma: no cover
            err.append(e)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert not err
    close(x.grad, 2 * npy(x))


# ----------------------------------------------------------- detach ----
def test_detach_shares_memory_and_is_outside_graph():
    x = fastt.randn(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert d.data_ptr() == y.data_ptr()
    d.zero_()
    assert not npy(y).any()
    assert fastt.detach(y).data_ptr() == y.data_ptr()


def test_detach_blocks_gradient():
    x = fastt.tensor([2.0], requires_grad=True)
    (x * x.detach()).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2])


def test_detach_inplace():
    x = fastt.randn(3, requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None
    v = (x * 2)[1:]
    with pytest.raises(RuntimeError, match="view"):
        v.detach_()


def test_data_attribute():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.data_ptr() == x.data_ptr()
    x.data = fastt.tensor([5.0, 6.0])
    assert x.requires_grad and x.is_leaf
    np.testing.assert_allclose(npy(x), [5, 6])
    (x * x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [10, 12])


@needs_torch
@pytest.mark.xfail(reason="fastt keeps the version counter on the storage, "
                   "so .data shares it; torch gives .data its own (the "
                   "saved-tensor check trips)",
                   raises=RuntimeError, strict=True)
def test_data_inplace_between_forward_and_backward_like_torch():
    """torch gives .data its own version counter: changing a parameter
    through .data after the forward does not trip the saved-tensor
    check (the gradient then uses the new values)."""
    for L in (torch, fastt):
        w = L.tensor([1.0, 2.0], requires_grad=True)
        y = (w * w).sum()
        w.data.add_(1.0)
        y.backward()
        np.testing.assert_allclose(w.grad.numpy(), [4.0, 6.0])


def test_version_counter_and_base():
    x = fastt.zeros(4)
    v0 = x._version
    assert isinstance(v0, int)
    x.add_(1)
    assert x._version > v0
    v = x[1:3]
    assert v._base is not None and v._base.data_ptr() == x.data_ptr()
    assert x._base is None
    v1 = x._version
    v.mul_(2)  # a view shares its base's counter
    assert x._version > v1 and v._version == x._version


def test_repr_shows_autograd_state():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    assert "requires_grad=True" in repr(x)
    assert "grad_fn=<MulBackward0>" in repr(x * 2)
    assert "grad_fn=<SumBackward0>" in repr((x * 2).sum())
    assert "grad_fn" not in repr(x.detach()) and "requires_grad" not in repr(
        x.detach())


# ---------------------------------------------------- retain_grad ------
def test_retain_grad_on_non_leaf():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    z = (y * y).sum()
    z.backward(retain_graph=True)
    np.testing.assert_allclose(npy(y.grad), [6, 12])
    z.backward()
    np.testing.assert_allclose(npy(y.grad), [12, 24])
    x.retain_grad()  # no-op on a leaf
    assert not x.retains_grad


def test_retain_grad_follows_inplace():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    y.mul_(2)
    (y * y).sum().backward()
    np.testing.assert_allclose(npy(y.grad), [12, 24])  # d/dy' of y'^2


def test_retain_grad_requires_grad():
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that "
                                           "has requires_grad=False"):
        fastt.ones(2).retain_grad()


# ----------------------------------------------------------- hooks -----
def test_hook_on_leaf_modifies_grad_and_removes():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def hook(g):
        seen.append(npy(g).copy())
        return g * 2

    h = x.register_hook(hook)
    (x * 3).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [6, 6])
    np.testing.assert_allclose(seen[0], [3, 3])
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [3, 3])
    assert len(seen) == 1
    h.remove()  # twice is fine


def test_hook_on_non_leaf():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    seen = []
    y.register_hook(lambda g: seen.append(npy(g).copy()))  # returns None
    y.register_hook(lambda g: g * 10)
    (y * 3).sum().backward()
    np.testing.assert_allclose(seen[0], [3, 3])
    np.testing.assert_allclose(npy(x.grad), [60, 120])


def test_hook_removed_on_non_leaf():
    x = fastt.tensor([1.0], requires_grad=True)
    y = x * 2
    h = y.register_hook(lambda g: g * 100)
    h.remove()
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2])


def test_hook_exception_propagates():
    x = fastt.tensor([1.0], requires_grad=True)

    def bad(g):
        raise KeyError("boom")

    x.register_hook(bad)
    with pytest.raises(KeyError, match="boom"):
        (x * 2).sum().backward()


def test_hook_requires_grad_and_callable():
    with pytest.raises(RuntimeError, match="cannot register a hook on a "
                       "tensor that doesn't require gradient"):
        fastt.ones(2).register_hook(lambda g: g)
    with pytest.raises(TypeError, match="register_hook: expected a callable, "
                                        "got int"):
        fastt.ones(2, requires_grad=True).register_hook(3)


@needs_torch
def test_hooks_and_retain_grad_order_like_torch():
    res = {}
    for L in (torch, fastt):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g + 1)
        (y * y).sum().backward()
        res[L.__name__] = (y.grad.tolist(), x.grad.tolist())
    assert res["fastt"] == res["torch"]


# ----------------------------------------------- grad_fn, structure ----
GRAD_FN_NAMES = [
    ("add", lambda L, x, y: x + y, "AddBackward0"),
    ("sub", lambda L, x, y: x - y, "SubBackward0"),
    ("mul", lambda L, x, y: x * y, "MulBackward0"),
    ("div", lambda L, x, y: x / y, "DivBackward0"),
    ("neg", lambda L, x, y: -x, "NegBackward0"),
    ("sum", lambda L, x, y: x.sum(), "SumBackward0"),
    ("sum_dim", lambda L, x, y: x.sum(0), "SumBackward1"),
    ("mean", lambda L, x, y: x.mean(), "MeanBackward0"),
    ("exp", lambda L, x, y: x.exp(), "ExpBackward0"),
    ("tanh", lambda L, x, y: x.tanh(), "TanhBackward0"),
    ("sigmoid", lambda L, x, y: x.sigmoid(), "SigmoidBackward0"),
    ("relu", lambda L, x, y: x.relu(), "ReluBackward0"),
    ("mm", lambda L, x, y: L.mm(x, y.t()), "MmBackward0"),
    ("pow", lambda L, x, y: x ** 2, "PowBackward0"),
    ("pow_tensor", lambda L, x, y: x ** y, "PowBackward1"),
    ("clone", lambda L, x, y: x.clone(), "CloneBackward0"),
    ("view", lambda L, x, y: x.view(-1), "ViewBackward0"),
    ("transpose", lambda L, x, y: x.transpose(0, 1), "TransposeBackward0"),
    ("permute", lambda L, x, y: x.permute(1, 0), "PermuteBackward0"),
    ("expand", lambda L, x, y: x[:1].expand(3, 2), "ExpandBackward0"),
    ("select", lambda L, x, y: x[1], "SelectBackward0"),
    ("slice", lambda L, x, y: x[1:], "SliceBackward0"),
    ("softmax", lambda L, x, y: x.softmax(1), "SoftmaxBackward0"),
    ("log_softmax", lambda L, x, y: x.log_softmax(1), "LogSoftmaxBackward0"),
    ("where", lambda L, x, y: L.where(x > 0, x, y), "WhereBackward0"),
    ("to", lambda L, x, y: x.to(L.float64), "ToCopyBackward0"),
    pytest.param("unsqueeze", lambda L, x, y: x.unsqueeze(0),
                 "UnsqueezeBackward0", marks=pytest.mark.xfail(
                     reason="fastt records it as a ViewBackward0",
                     raises=AssertionError, strict=True)),
    pytest.param("squeeze", lambda L, x, y: x[:1].squeeze(0),
                 "SqueezeBackward1", marks=pytest.mark.xfail(
                     reason="fastt records it as a ViewBackward0",
                     raises=AssertionError, strict=True)),
    pytest.param("t", lambda L, x, y: x.t(), "TBackward0",
                 marks=pytest.mark.xfail(
                     reason="fastt records it as TransposeBackward0",
                     raises=AssertionError, strict=True)),
]


@needs_torch
@pytest.mark.parametrize("name,fn,expected", GRAD_FN_NAMES)
def test_grad_fn_names_like_torch(name, fn, expected):
    xf, xt = pair(rand(3, 2), dtype="float32")
    yf, yt = pair(np.abs(rand(3, 2)) + 0.5, dtype="float32")
    nt = fn(torch, xt, yt).grad_fn.name()
    assert nt == expected  # the table itself is right
    assert fn(fastt, xf, yf).grad_fn.name() == nt
    assert f"<{nt} object" in repr(fn(fastt, xf, yf).grad_fn)


def test_next_functions_and_accumulate_grad():
    x = fastt.randn(2, requires_grad=True)
    w = fastt.randn(2)  # no grad
    y = (x * w).sum()
    nf = y.grad_fn.next_functions
    assert len(nf) == 1 and nf[0][1] == 0
    mul = nf[0][0]
    assert mul.name() == "MulBackward0"
    (acc, nr), (none, _) = mul.next_functions
    assert acc.name() == "AccumulateGrad" and none is None
    assert acc.variable.data_ptr() == x.data_ptr()
    # the same leaf -> the same AccumulateGrad node
    z = x * 2
    assert z.grad_fn.next_functions[0][0] == acc
    assert y.grad_fn == y.grad_fn and hash(y.grad_fn) == hash(y.grad_fn)


def test_multi_output_grad_fn_output_numbers():
    x = fastt.randn(3, 4, dtype=fastt.float64, requires_grad=True)
    v, m = fastt.var_mean(x, 1)
    assert v.grad_fn == m.grad_fn
    z = v + m
    (a, na), (b, nb) = z.grad_fn.next_functions
    assert {na, nb} == {0, 1}
    v.sum().backward(retain_graph=True)  # only output 0 has a gradient
    xt = torch.tensor(npy(x), requires_grad=True) if torch else None
    if xt is not None:
        vt, mt = torch.var_mean(xt, 1)
        vt.sum().backward(retain_graph=True)
        close(x.grad, xt.grad)
        (m * 2).sum().backward()  # only output 1
        (mt * 2).sum().backward()
        close(x.grad, xt.grad)


# ------------------------------------------- broadcasting, dtypes -----
@needs_torch
@pytest.mark.parametrize("sa,sb", [((3, 1), (1, 4)), ((3, 4), (4,)),
                                   ((3, 4), ()), ((2, 1, 4), (3, 1)),
                                   ((), (5,)), ((1,), (2, 3))])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum",
                                "atan2", "pow"])
def test_broadcast_grads_reduced_like_torch(sa, sb, op):
    a = np.abs(rand(*sa)) + 0.5
    b = rand(*sb)
    xf, xt = pair(a)
    yf, yt = pair(b)
    rf = getattr(fastt, op)(xf, yf)
    rt = getattr(torch, op)(xt, yt)
    w = rand(*rt.shape)
    (rf * fastt.tensor(w)).sum().backward()
    (rt * torch.tensor(w)).sum().backward()
    assert tuple(xf.grad.shape) == sa and tuple(yf.grad.shape) == sb
    close(xf.grad, xt.grad)
    close(yf.grad, yt.grad)


def test_python_scalar_operands():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    (2.0 * x + 1 - x / 4.0 + 3 / x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), 2 - 0.25 - 3 / npy(x) ** 2,
                               rtol=1e-6)


def test_zero_dim_tensors():
    x = fastt.tensor(3.0, requires_grad=True)
    y = fastt.tensor([1.0, 2.0], requires_grad=True)
    (x * y).sum().backward()
    assert x.grad.shape == () and float(x.grad) == 3.0
    np.testing.assert_allclose(npy(y.grad), [3, 3])
    z = x * x
    z.backward()  # 0-d root: implicit gradient
    assert float(x.grad) == 9.0


@needs_torch
def test_mixed_dtype_leaf_grads_keep_dtype():
    a, b = rand(3), rand(3)
    xf, xt = pair(a, dtype="float32")
    yf, yt = pair(b, dtype="float64")
    rf, rt = xf * yf, xt * yt
    assert rf.dtype == fastt.float64
    (rf.exp()).sum().backward()
    (rt.exp()).sum().backward()
    assert xf.grad.dtype == fastt.float32 and yf.grad.dtype == fastt.float64
    close(xf.grad, xt.grad, rtol=1e-5)
    close(yf.grad, yt.grad)


def test_mixed_dtype_add_and_half():
    x = fastt.ones(2, dtype=fastt.float16, requires_grad=True)
    y = fastt.ones(2, dtype=fastt.float32, requires_grad=True)
    (x + y).sum().backward()
    assert x.grad.dtype == fastt.float16 and y.grad.dtype == fastt.float32
    np.testing.assert_allclose(npy(x.grad), [1, 1])


def test_integer_operand_gets_no_grad():
    x = fastt.tensor([1.0, 2.0], requires_grad=True)
    i = fastt.tensor([3, 4])
    (x * i).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [3, 4])


# ------------------------------------------------------------ views ----
VIEWS = {
    "view": lambda x: x.view(8, 4),
    "reshape": lambda x: x.reshape(4, 8),
    "transpose": lambda x: x.transpose(0, 2),
    "permute": lambda x: x.permute(2, 0, 1),
    "slice_step": lambda x: x[:, ::2, 1:],
    "select": lambda x: x.select(1, 2),
    "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "squeeze_unsqueeze": lambda x: x[:, :1].squeeze(1).unsqueeze(0),
    "diagonal": lambda x: x.diagonal(0, 1, 2),
    "unfold": lambda x: x.unfold(1, 2, 1),
    "as_strided": lambda x: x.as_strided((3, 3), (2, 1), 1),
    "flatten": lambda x: x.flatten(1),
    "narrow": lambda x: x.narrow(2, 1, 2),
    "split": lambda x: x.split(1, 1)[1] * 2 + x.split(2, 1)[0][:, :1],
    "chunk": lambda x: x.chunk(3, 2)[1] * 3 + x.chunk(2, 1)[1][:, :1, :2],
    "unbind": lambda x: x.unbind(2)[3] * 2 - x.unbind(1)[0],
    "chain": lambda x: x.transpose(0, 1)[1:, :, ::2].reshape(-1)[2:7],
    "T": lambda x: x[1].T,
}


@needs_torch
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_grads_like_torch(name):
    a = rand(2, 4, 4)
    xf, xt = pair(a)
    f = VIEWS[name]
    rf, rt = f(xf), f(xt)
    assert tuple(rf.shape) == tuple(rt.shape)
    close(rf, rt)
    w = rand(*rt.shape)
    (rf * fastt.tensor(w)).sum().backward()
    (rt * torch.tensor(w)).sum().backward()
    close(xf.grad, xt.grad)


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_as_strided_reading_outside_its_input_like_torch(dtype):
    # A leaf that is a view at storage offset 5 of a 15-element buffer:
    # as_strided reads storage elements before it (and, overlapping, some
    # of its own); only those inside the leaf get a gradient, as torch's.
    base = np.arange(15.0) * (1 + 1j if dtype == "complex128" else 1)
    xf = fastt.tensor(base).to(getattr(fastt, dtype))[5:].detach()
    xt = torch.tensor(base).to(getattr(torch, dtype))[5:].detach()
    for off, size, stride in ((0, (2, 2), (1, 2)), (3, (3, 2), (2, 1)),
                              (4, (2, 3), (3, 2))):
        a = xf.detach().requires_grad_()
        b = xt.detach().requires_grad_()
        rf = fastt.as_strided(a, size, stride, off)
        rt = torch.as_strided(b, size, stride, off)
        close(rf, rt)
        w = np.arange(1.0, 1.0 + np.prod(size)).reshape(size)
        rf.backward(fastt.tensor(w).to(rf.dtype))
        rt.backward(torch.tensor(w).to(rt.dtype))
        close(a.grad, b.grad)


def test_views_of_non_leaf_share_data_and_record():
    x = fastt.randn(3, 4, requires_grad=True)
    y = x * 1
    v = y[1]
    assert v.requires_grad and v.grad_fn.name() == "SelectBackward0"
    assert v.data_ptr() == y.data_ptr() + 4 * 4


# --------------------------------------------------------- in-place ----
def test_inplace_on_leaf_raises():
    x = fastt.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError,
                       match="a leaf Variable that requires grad is being "
                             "used in an in-place operation."):
        x.add_(1)
    for f in (lambda: x.mul_(2), lambda: x.zero_(), lambda: x.relu_(),
              lambda: x.fill_(1.0), lambda: x.copy_(fastt.ones(3)),
              lambda: x.exp_(), lambda: x.clamp_(0, 1)):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            f()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that "
                       "requires grad is being used in an in-place "
                       "operation"):
        x[0] = 1.0
    for f in (lambda: x[1:].mul_(2), lambda: x[0].fill_(1.0),
              lambda: x[1:].copy_(fastt.ones(2)), lambda: x[0].zero_()):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            f()  # a view of a leaf
    assert x.is_leaf and x.grad_fn is None
    with fastt.no_grad():  # allowed without recording
        x.add_(1)
        x[0] = 5.0
    assert x.is_leaf and x.grad_fn is None


INPLACE = {
    "add_": lambda L, y, z: y.add_(1.0),
    "add_tensor_alpha": lambda L, y, z: y.add_(z, alpha=2.0),
    "mul_tensor": lambda L, y, z: y.mul_(z),
    "mul_scalar": lambda L, y, z: y.mul_(3.0),
    "div_": lambda L, y, z: y.div_(z * z + 1.0),
    "sub_": lambda L, y, z: y.sub_(z),
    "relu_": lambda L, y, z: y.relu_(),
    "sigmoid_": lambda L, y, z: y.sigmoid_(),
    "tanh_": lambda L, y, z: y.tanh_(),
    "exp_": lambda L, y, z: y.exp_(),
    "pow_": lambda L, y, z: y.pow_(2),
    "clamp_": lambda L, y, z: y.clamp_(-0.5, 0.5),
    "neg_": lambda L, y, z: y.neg_(),
    "chain": lambda L, y, z: y.mul_(z).add_(1.0).sigmoid_(),
    "zero_": lambda L, y, z: y.zero_(),
    "fill_": lambda L, y, z: y.fill_(2.0),
    "copy_": lambda L, y, z: y.copy_(z * 3),
    "copy_bcast": lambda L, y, z: y.copy_(z[0]),
    "addcmul_": lambda L, y, z: y.addcmul_(z, z, value=0.5),
    "lerp_": lambda L, y, z: y.lerp_(z, 0.25),
    "masked_fill_": lambda L, y, z: y.masked_fill_(z > 0, 0.0),
    "square_": lambda L, y, z: y.square_(),
    "sqrt_abs": lambda L, y, z: y.abs_().add_(0.1).sqrt_(),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_on_non_leaf_like_torch(name):
    a, b = rand(3, 4), rand(3, 4)
    xf, xt = pair(a)
    zf, zt = pair(b)
    f = INPLACE[name]
    yf, yt = xf * 2, xt * 2
    rf, rt = f(fastt, yf, zf), f(torch, yt, zt)
    assert rf is yf
    close(yf, yt)
    assert yf.grad_fn is not None
    w = rand(3, 4)
    (yf * fastt.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    close_grad(xf.grad, xt.grad)
    close_grad(zf.grad, zt.grad)


SLICE_WRITES = {
    "setitem_slice": lambda L, y, z: y.__setitem__(slice(1, 3), z[:2]),
    "setitem_row": lambda L, y, z: y.__setitem__(0, z[3]),
    "setitem_col": lambda L, y, z: y.__setitem__((slice(None), 1), z[:, 0]),
    "setitem_scalar": lambda L, y, z: y.__setitem__((1, 2), 5.0),
    "setitem_step": lambda L, y, z: y.__setitem__(
        (slice(None), slice(None, None, 2)), z[:, 1::2]),
    "col_mul_": lambda L, y, z: y[:, 0].mul_(2),
    "row_add_tensor": lambda L, y, z: y[2].add_(z[1] * z[0]),
    "view_of_view": lambda L, y, z: y[1:][:, 1:3].mul_(z[:3, :2]),
    "transposed_view": lambda L, y, z: y.t()[1].sigmoid_(),
    "diag_fill": lambda L, y, z: y.diagonal().fill_(0.0),
    "reshape_view": lambda L, y, z: y.view(-1)[::3].mul_(z.view(-1)[:6]),
    "two_writes": lambda L, y, z: (y[0].mul_(z[0]), y[:, 2].add_(z[:4, 1])),
    "select_copy_": lambda L, y, z: y[3].copy_(z[2]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(SLICE_WRITES))
def test_inplace_through_view_copyslices_like_torch(name):
    a, b = rand(4, 4), rand(4, 4)
    xf, xt = pair(a)
    zf, zt = pair(b)
    yf, yt = xf * 1, xt * 1
    f = SLICE_WRITES[name]
    f(fastt, yf, zf)
    f(torch, yt, zt)
    close(yf, yt)
    assert yf.grad_fn is not None and yf.requires_grad
    w = rand(4, 4)
    (yf * fastt.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    close(xf.grad, xt.grad)
    if zt.grad is None:
        assert zf.grad is None or not npy(zf.grad).any()
    else:
        assert zf.grad is not None
        close(zf.grad, zt.grad)


@needs_torch
def test_copyslices_example_from_brief():
    res = {}
    for L in (torch, fastt):
        x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        z = L.tensor([10.0, 20.0], requires_grad=True)
        y = x * 1
        y[1:3] = z
        assert y.grad_fn.name().endswith("CopySlices")
        (y * L.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        res[L.__name__] = (x.grad.tolist(), z.grad.tolist(), y.tolist())
    assert res["fastt"] == res["torch"]


@needs_torch
def test_view_sees_base_inplace_history_like_torch():
    """A view taken before its base is modified in place must backprop
    through the modification (torch regenerates the view's grad_fn)."""
    res = {}
    for L in (torch, fastt):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[:2]
        y.mul_(L.tensor([2.0, 3.0, 4.0]))
        v.sum().backward()
        res[L.__name__] = x.grad.tolist()
    assert res["fastt"] == res["torch"]


@needs_torch
def test_base_sees_view_inplace_history_like_torch():
    res = {}
    for L in (torch, fastt):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2  # saves nothing of y
        y[1:].mul_(x[:2] * 1)  # writes through a view
        (y * y).sum().backward()
        res[L.__name__] = [round(v, 9) for v in x.grad.tolist()]
    assert res["fastt"] == res["torch"]


INDEX_WRITES = {
    "tensor_index_scalar": lambda L, y, z: y.__setitem__(
        L.tensor([0, 2]), 0.0),
    "tensor_index_tensor": lambda L, y, z: y.__setitem__(
        L.tensor([3, 1]), z[:2]),
    "bool_mask_scalar": lambda L, y, z: y.__setitem__(z > 0, 1.5),
    "bool_mask_tensor": lambda L, y, z: y.__setitem__(
        z > 0, z[z > 0] * 2),
    "list_index": lambda L, y, z: y.__setitem__([1, 2], z[0]),
    "index_put_": lambda L, y, z: y.index_put_(
        (L.tensor([0, 1]), L.tensor([2, 3])), z[0, :2]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(INDEX_WRITES))
def test_index_writes_like_torch(name):
    a, b = rand(4, 4), rand(4, 4)
    xf, xt = pair(a)
    zf, zt = pair(b)
    yf, yt = xf * 1, xt * 1
    INDEX_WRITES[name](fastt, yf, zf)
    INDEX_WRITES[name](torch, yt, zt)
    close(yf, yt)
    w = rand(4, 4)
    (yf * fastt.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    close(xf.grad, xt.grad)
    if zt.grad is not None:
        close(zf.grad, zt.grad)


# --------------------------------------------------- version counter ---
def test_modified_saved_output_raises():
    x = fastt.randn(3, requires_grad=True)
    y = x.exp()  # saves its output
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_modified_saved_input_raises():
    x = fastt.randn(3, requires_grad=True)
    y = x * 1
    z = y * y  # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_modified_saved_through_view_raises():
    x = fastt.randn(4, requires_grad=True)
    y = x * 1
    z = y.sin()  # saves y
    y[1:3].mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_modified_leaf_under_no_grad_raises():
    w = fastt.randn(3, requires_grad=True)
    y = (w * w).sum()
    with fastt.no_grad():
        w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_inplace_not_saved_is_fine():
    x = fastt.randn(3, requires_grad=True)
    y = x * 2  # saves nothing of y
    z = y + 1  # saves nothing
    y.add_(1)
    z.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2, 2, 2])


def test_out_argument_with_grad_raises():
    x = fastt.randn(3, requires_grad=True)
    out = fastt.empty(3)
    with pytest.raises(RuntimeError, match="out="):
        fastt.add(x, x, out=out)
    with fastt.no_grad():
        fastt.add(x, x, out=out)


# ---------------------------------------------------- Parameter-like ---
def test_make_subclass_parameter_leaf():
    class P(fastt.Tensor):
        pass

    p = fastt.Tensor._make_subclass(P, fastt.ones(2), True)
    assert isinstance(p, P) and p.requires_grad and p.is_leaf
    (p * 3).sum().backward()
    np.testing.assert_allclose(npy(p.grad), [3, 3])


# ------------------------------------------------- memory, lifetime ----
def _rss_kb():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import resource
    return pages * resource.getpagesize() // 1024


def test_forward_without_backward_does_not_grow_memory():
    w1 = fastt.randn(8, 8, requires_grad=True)
    b1 = fastt.zeros(8, requires_grad=True)
    w2 = fastt.randn(8, 1, requires_grad=True)
    x = fastt.randn(4, 8)

    def step():
        h = (x.matmul(w1) + b1).tanh()
        return (h.matmul(w2) ** 2).mean()

    for _ in range(10_000):
        step()
    gc.collect()
    rss_10k = _rss_kb()
    for _ in range(90_000):
        step()
    gc.collect()
    grown = _rss_kb() - rss_10k
    # a leaked node per step (~0.5 KB) would be > 40 MB here
    assert grown < 4096, f"RSS grew by {grown} KB over 90k forward passes"


def test_training_loop_does_not_grow_memory():
    w = fastt.randn(16, 16, requires_grad=True)
    b = fastt.zeros(16, requires_grad=True)
    x = fastt.randn(8, 16)
    target = fastt.randn(8, 16)

    def step():
        loss = ((x.matmul(w) + b).sigmoid() - target).pow(2).mean()
        loss.backward()
        with fastt.no_grad():
            w.sub_(w.grad * 0.01)
            b.sub_(b.grad * 0.01)
        w.grad.zero_()
        b.grad = None

    for _ in range(1_000):
        step()
    gc.collect()
    rss0 = _rss_kb()
    for _ in range(9_000):
        step()
    gc.collect()
    grown = _rss_kb() - rss0
    # a leaked 16x16 gradient per step would be > 9 MB
    assert grown < 3072, f"RSS grew by {grown} KB over 9k training steps"


def test_long_chain_freed_and_backward_without_stack_overflow():
    x = fastt.ones(2, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    del y  # frees 100k nodes iteratively
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [1, 1])
    del y
    gc.collect()


class _Hook:
    def __call__(self, g):
        return None


def test_graph_freed_when_outputs_dropped():
    """The nodes (and the hooks they hold) die with the last output."""
    x = fastt.randn(3, requires_grad=True)
    y = (x * 2).exp()  # exp saves its own output: no cycle allowed
    z = y.sin()
    hook = _Hook()
    y.register_hook(hook)
    ref = weakref.ref(hook)
    del hook
    gc.collect()
    assert ref() is not None  # alive while the graph is
    del y
    gc.collect()
    assert ref() is not None  # z still reaches y's node
    del z
    gc.collect()
    assert ref() is None


def test_graph_freed_after_backward_of_saved_output():
    x = fastt.randn(3, requires_grad=True)
    y = x.sigmoid()
    hook = _Hook()
    y.register_hook(hook)
    ref = weakref.ref(hook)
    del hook
    y.sum().backward()
    del y
    gc.collect()
    assert ref() is None


def test_grad_fn_object_keeps_node_alive():
    x = fastt.randn(3, requires_grad=True)
    fn = (x * x).sum().grad_fn
    assert fn.name() == "SumBackward0"
    nf = fn.next_functions[0][0]
    del fn
    gc.collect()
    assert nf.name() == "MulBackward0"


def test_leaf_kept_alive_by_graph():
    y = fastt.randn(3, requires_grad=True) * 2
    acc = y.grad_fn.next_functions[0][0]
    v = acc.variable
    y.sum().backward()
    np.testing.assert_allclose(npy(v.grad), [2, 2, 2])


# ------------------------------------------- kinks, ties: torch's choice --
KINKS = {
    "abs_0": lambda L, x: x.abs(),
    "relu_0": lambda L, x: x.relu(),
    "sign_0": lambda L, x: x.sign() * x,
    "clamp_at_bounds": lambda L, x: x.clamp(-1.0, 1.0),
    "clamp_min_at_bound": lambda L, x: x.clamp_min(0.0),
    "maximum_ties": lambda L, x: L.maximum(x, x.detach().flip(0)),
    "minimum_ties": lambda L, x: L.minimum(x, x.detach() * 1),
    "amax_ties": lambda L, x: x.amax(),
    "amax_dim_ties": lambda L, x: x.reshape(2, 4).amax(1),
    "max_all_ties": lambda L, x: x.max(),
    "min_all_ties": lambda L, x: x.min(),
    "max_dim_ties": lambda L, x: x.reshape(4, 2).max(1)[0],
    "norm1_0": lambda L, x: x.norm(1),
    "norm2_all_zero": lambda L, x: (x * 0).norm(),
    "norm_inf_ties": lambda L, x: x.norm(float("inf")),
    "sqrt_0": lambda L, x: (x * x).sqrt(),
    "pow_0_base": lambda L, x: (x * 0) ** 2.0,
    "pow_tensor_0_base": lambda L, x: (x * 0) ** (x.detach() * 0 + 2.0),
    "std_constant": lambda L, x: (x * 0 + 1).std(),
    "leaky_relu_0": lambda L, x: (L.nn.functional.leaky_relu(x, 0.2)
                                  if L.__name__ == "torch"
                                  else L.leaky_relu(x, 0.2)),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(KINKS))
def test_gradient_at_kinks_and_ties_like_torch(name):
    vals = [0.0, 1.0, -1.0, 1.0, 0.0, -1.0, 1.0, 0.5]
    xf, xt = pair(vals)
    f = KINKS[name]
    yf, yt = f(fastt, xf), f(torch, xt)
    w = np.linspace(0.5, 1.5, int(np.prod(yt.shape)) or 1)
    w = w.reshape(tuple(yt.shape))
    (yf * fastt.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    close_grad(xf.grad, xt.grad)


# --------------------------------- accumulation of aliased gradients ----
def test_accumulation_of_expanded_and_transposed_gradients():
    """SumBackward hands back an expanded (stride-0) gradient and
    TransposeBackward a transposed one: .grad must own dense memory so
    the in-place accumulation that follows is right."""
    x = fastt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.sum().backward()
    x.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2, 2, 2])
    x.grad.add_(1)
    np.testing.assert_allclose(npy(x.grad), [3, 3, 3])
    y = fastt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y.t().sum().backward()
    y.t().exp().sum().backward()
    np.testing.assert_allclose(npy(y.grad), 1 + np.exp(npy(y)), rtol=1e-6)
    z = fastt.tensor([1.0, 2.0], requires_grad=True)
    z.expand(3, 2).sum().backward()
    z[0].backward()
    np.testing.assert_allclose(npy(z.grad), [4, 3])


@needs_torch
def test_double_backward_through_copyslices_like_torch():
    res = {}
    for L in (torch, fastt):
        x = L.tensor([0.5, -1.0, 2.0, 1.5], dtype=L.float64,
                     requires_grad=True)
        y = x * x
        y[1:3] = (x[:2] * x[2:]).sin()
        (g,) = L.autograd.grad((y ** 2).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), x)
        res[L.__name__] = (np.round(npy(g), 9).tolist(),
                           np.round(npy(gg), 9).tolist())
    assert res["fastt"] == res["torch"]


@needs_torch
def test_hook_and_retain_grad_with_create_graph_like_torch():
    res = {}
    for L in (torch, fastt):
        x = L.tensor([0.5, -1.0], dtype=L.float64, requires_grad=True)
        y = x.tanh()
        y.retain_grad()
        y.register_hook(lambda g: g * x)  # a hook that itself records
        (y * y).sum().backward(create_graph=True)
        (gg,) = L.autograd.grad(x.grad.sum(), x)
        res[L.__name__] = (np.round(npy(x.grad), 9).tolist(),
                           np.round(npy(y.grad), 9).tolist(),
                           np.round(npy(gg), 9).tolist())
    assert res["fastt"] == res["torch"]


def test_double_backward_through_fused_nn_op_raises():
    x = fastt.randn(1, 2, 5, 5, dtype=fastt.float64, requires_grad=True)
    w = fastt.randn(3, 2, 3, 3, dtype=fastt.float64, requires_grad=True)
    y = fastt.conv2d(x, w).pow(2).sum()
    # A graph of the backward pass cannot be built through the fused
    # kernel: a clear error instead of silently missing second derivatives.
    with pytest.raises(NotImplementedError, match="double backward"):
        fastt.autograd.grad(y, [x], create_graph=True)
    (gx,) = fastt.autograd.grad(y, [x])  # first order still works
    assert gx.shape == x.shape
