"""fastt.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) and
gradcheck/gradgradcheck against torch's on the same functions and inputs."""
import pytest
import torch

import fastt
from torch_ref import Fz, close


def f1(L):
    return lambda x: (x.sin() * x).sum(-1)


def f2(L):
    return lambda x, y: (x @ y).tanh()


def f3(L):
    return lambda x, y: ((x * y).exp().sum(), (x - y).pow(2))


def scalar(L):
    return lambda x, y: (x.sin() * y.cos()).sum() + (x * x * y).sum()


def inputs(*shapes, seed=0):
    g = torch.Generator().manual_seed(seed)
    ts = [torch.randn(*s, generator=g, dtype=torch.float64) for s in shapes]
    return tuple(ts), tuple(Fz(t) for t in ts)


def same(a, b):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        close(a, b)


@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian(create_graph):
    (xt,), (xf,) = inputs((3, 4))
    same(fastt.autograd.functional.jacobian(f1(fastt), xf),
         torch.autograd.functional.jacobian(f1(torch), xt))
    ts, fs = inputs((2, 3), (3, 2), seed=1)
    same(fastt.autograd.functional.jacobian(f2(fastt), fs,
                                            create_graph=create_graph),
         torch.autograd.functional.jacobian(f2(torch), ts,
                                            create_graph=create_graph))
    ts, fs = inputs((3,), (3,), seed=2)
    same(fastt.autograd.functional.jacobian(f3(fastt), fs),
         torch.autograd.functional.jacobian(f3(torch), ts))


def test_hessian():
    ts, fs = inputs((3,), (3,), seed=3)
    same(fastt.autograd.functional.hessian(scalar(fastt), fs),
         torch.autograd.functional.hessian(scalar(torch), ts))
    (xt,), (xf,) = inputs((4,), seed=4)
    g = lambda L: (lambda x: (x.exp() * x).sum())  # noqa: E731
    same(fastt.autograd.functional.hessian(g(fastt), xf),
         torch.autograd.functional.hessian(g(torch), xt))


@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_vjp_jvp(name):
    ts, fs = inputs((2, 3), (3, 2), seed=5)
    vt, vf = inputs((2, 2) if name == "vjp" else (2, 3), seed=6)
    if name == "jvp":
        vt2, vf2 = inputs((3, 2), seed=7)
        vt, vf = vt + vt2, vf + vf2
    else:
        vt, vf = vt[0], vf[0]
    rf = getattr(fastt.autograd.functional, name)(f2(fastt), fs, vf)
    rt = getattr(torch.autograd.functional, name)(f2(torch), ts, vt)
    same(rf, rt)


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_vhp_hvp(name):
    ts, fs = inputs((3,), (3,), seed=8)
    vt, vf = inputs((3,), (3,), seed=9)
    rf = getattr(fastt.autograd.functional, name)(scalar(fastt), fs, vf)
    rt = getattr(torch.autograd.functional, name)(scalar(torch), ts, vt)
    same(rf, rt)


def test_strict_and_argument_errors():
    (xt,), (xf,) = inputs((3,))
    for L, x in ((fastt, xf), (torch, xt)):
        with pytest.raises(RuntimeError, match="Output 0 of the "
                                               "user-provided function does "
                                               "not require gradients"):
            L.autograd.functional.jacobian(lambda a: L.ones(2), x,
                                           strict=True)
        with pytest.raises(RuntimeError, match="independent of input 1"):
            L.autograd.functional.jacobian(lambda a, b: a * 2, (x, x * 1),
                                           strict=True)
        with pytest.raises(RuntimeError, match="v has invalid size"):
            L.autograd.functional.vjp(lambda a: a * 2, x, L.ones(4))
        with pytest.raises(TypeError, match="must be either a Tensor or a "
                                            "tuple of Tensors"):
            L.autograd.functional.jacobian(lambda a: a, [x])
        with pytest.raises(RuntimeError, match="should contain a single "
                                               "element"):
            L.autograd.functional.hessian(lambda a: a * 2, x)
    # Not strict: an unused input gives zeros.
    jf = fastt.autograd.functional.jacobian(lambda a: fastt.ones(2), xf)
    assert tuple(jf.shape) == (2, 3) and not bool(jf.any())


def test_create_graph_keeps_the_result_differentiable():
    (xt,), (xf,) = inputs((3,), seed=10)
    outs = []
    for L, x in ((fastt, xf), (torch, xt)):
        x = x.clone().requires_grad_(True)
        _, v = L.autograd.functional.vjp(lambda a: (a ** 3).sum(), x,
                                         create_graph=True)
        v.sum().backward()
        outs.append(x.grad)
    close(outs[0], outs[1])


def test_gradcheck_and_gradgradcheck_like_torch():
    (xt,), (xf,) = inputs((3,), seed=11)
    xf.requires_grad_(True)
    assert fastt.autograd.gradcheck(lambda a: (a.sin() * a).sum(), (xf,))
    assert fastt.autograd.gradgradcheck(lambda a: a.exp() * a, (xf,))

    # A wrong backward is caught, as GradcheckError (a RuntimeError).
    class Bad(fastt.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    with pytest.raises(fastt.autograd.GradcheckError,
                       match="Jacobian mismatch for output 0"):
        fastt.autograd.gradcheck(Bad.apply, (xf,))
    assert fastt.autograd.gradcheck(Bad.apply, (xf,),
                                    raise_exception=False) is False

    # A backward that is not differentiable again fails gradgradcheck.
    class Detached(fastt.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return g * 2 * a.detach()

    assert fastt.autograd.gradcheck(Detached.apply, (xf,))
    assert fastt.autograd.gradgradcheck(Detached.apply, (xf,),
                                        raise_exception=False) is False
    with pytest.warns(UserWarning, match="not a double precision"):
        fastt.autograd.gradcheck(lambda a: a * 2,
                                 (fastt.ones(2, requires_grad=True),),
                                 atol=1e-2, rtol=1e-2, eps=1e-3)
