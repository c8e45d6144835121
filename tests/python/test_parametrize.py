"""nn.utils.parametrize, parametrizations (weight_norm, spectral_norm,
orthogonal), the old hook-based weight_norm and functional_call against
torch on the same weights: values, gradients, state_dict keys, errors."""
import pytest
import torch

import fastt
from torch_ref import Fz, close


def linear_pair(i=4, o=3, seed=0):
    torch.manual_seed(seed)
    t = torch.nn.Linear(i, o, dtype=torch.float64)
    f = fastt.nn.Linear(i, o, dtype=fastt.float64)
    f.load_state_dict({k: Fz(v) for k, v in t.state_dict().items()})
    return f, t


def step(m, L, x):
    y = m(x)
    (y * y).sum().backward()
    return y


def check_same(f, t, x_t):
    x_f = Fz(x_t)
    yf, yt = step(f, fastt, x_f), step(t, torch, x_t)
    close(yf, yt)
    for (nf, pf), (nt, pt) in zip(f.named_parameters(), t.named_parameters()):
        assert nf == nt
        close(pf.grad, pt.grad)
    assert list(f.state_dict()) == list(t.state_dict())


def make_symmetric(L):
    class Symmetric(L.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric


def test_register_parametrization_like_torch():
    f, t = linear_pair(3, 3)
    fastt.nn.utils.parametrize.register_parametrization(
        f, "weight", make_symmetric(fastt)())
    torch.nn.utils.parametrize.register_parametrization(
        t, "weight", make_symmetric(torch)())
    assert type(f).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert fastt.nn.utils.parametrize.is_parametrized(f, "weight")
    close(f.weight, t.weight)
    assert bool((f.weight == f.weight.T).all())
    check_same(f, t, torch.randn(5, 3, dtype=torch.float64))
    # assignment runs right_inverse
    a = torch.randn(3, 3, dtype=torch.float64)
    with torch.no_grad():
        t.weight = a
    with fastt.no_grad():
        f.weight = Fz(a)
    close(f.parametrizations.weight.original,
          t.parametrizations.weight.original)
    with fastt.nn.utils.parametrize.cached():
        assert f.weight is f.weight
    fastt.nn.utils.parametrize.remove_parametrizations(f, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(t, "weight")
    assert type(f) is fastt.nn.Linear
    close(f.weight, t.weight)
    assert list(f.state_dict()) == list(t.state_dict())


def test_parametrization_errors_like_torch():
    for L in (fastt, torch):
        m = L.nn.Linear(3, 3)

        class Bad(L.nn.Module):
            def forward(self, X):
                return X[:2]

        with pytest.raises(ValueError, match="may not change the shape"):
            L.nn.utils.parametrize.register_parametrization(m, "weight",
                                                            Bad())
        with pytest.raises(ValueError, match="does not have a parameter, a "
                                             "buffer, or a parametrized "
                                             "element with name 'nope'"):
            L.nn.utils.parametrize.register_parametrization(
                m, "nope", make_symmetric(L)())
        with pytest.raises(ValueError, match="does not have a "
                                             "parametrization on weight"):
            L.nn.utils.parametrize.remove_parametrizations(m, "weight")


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    f, t = linear_pair()
    fastt.nn.utils.parametrizations.weight_norm(f, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(t, dim=dim)
    close(f.parametrizations.weight.original0,
          t.parametrizations.weight.original0)
    check_same(f, t, torch.randn(5, 4, dtype=torch.float64))


def test_old_weight_norm():
    f, t = linear_pair()
    with pytest.warns(FutureWarning):
        fastt.nn.utils.weight_norm(f)
    with pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(t)
    check_same(f, t, torch.randn(5, 4, dtype=torch.float64))
    fastt.nn.utils.remove_weight_norm(f)
    torch.nn.utils.remove_weight_norm(t)
    close(f.weight, t.weight)
    assert list(f.state_dict()) == list(t.state_dict())


@pytest.mark.parametrize("kind", ["linear", "conv_t"])
def test_spectral_norm_with_torch_buffers(kind):
    torch.manual_seed(0)
    if kind == "linear":
        t = torch.nn.Linear(5, 4, dtype=torch.float64)
        f = fastt.nn.Linear(5, 4, dtype=fastt.float64)
        x = torch.randn(3, 5, dtype=torch.float64)
    else:
        t = torch.nn.ConvTranspose2d(2, 3, 3, dtype=torch.float64)
        f = fastt.nn.ConvTranspose2d(2, 3, 3, dtype=fastt.float64)
        x = torch.randn(1, 2, 4, 4, dtype=torch.float64)
    torch.nn.utils.parametrizations.spectral_norm(t)
    fastt.nn.utils.parametrizations.spectral_norm(f)
    # the power iteration starts from random vectors: take torch's
    f.load_state_dict({k: Fz(v) for k, v in t.state_dict().items()})
    assert list(f.state_dict()) == list(t.state_dict())
    for _ in range(2):  # training mode: u and v advance each forward
        f.zero_grad()
        t.zero_grad()
        check_same(f, t, x)
        close(f.parametrizations.weight[0]._u,
              t.parametrizations.weight[0]._u)
    f.eval()
    t.eval()
    close(f(Fz(x)), t(x).detach())
    # the largest singular value of the normalized weight is ~1
    w = f.weight.detach().reshape(f.weight.shape[0], -1) if kind == \
        "linear" else f.weight.detach().transpose(0, 1).reshape(3, -1)
    s = fastt.linalg.svdvals(w)
    assert abs(float(s[0]) - 1.0) < 0.1


@pytest.mark.parametrize("omap,shape", [("matrix_exp", (4, 4)),
                                        ("cayley", (4, 4)),
                                        ("householder", (5, 3)),
                                        ("matrix_exp", (3, 5))])
def test_orthogonal(omap, shape):
    torch.manual_seed(0)
    t = torch.nn.Linear(shape[1], shape[0], dtype=torch.float64)
    f = fastt.nn.Linear(shape[1], shape[0], dtype=fastt.float64)
    torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map=omap)
    fastt.nn.utils.parametrizations.orthogonal(f, orthogonal_map=omap)
    f.load_state_dict({k: Fz(v) for k, v in t.state_dict().items()})
    close(f.weight, t.weight, tol=1e-8)
    Q = f.weight.detach()
    n = min(shape)
    g = Q.T @ Q if shape[0] >= shape[1] else Q @ Q.T
    assert float((g - fastt.eye(n, dtype=fastt.float64)).abs().max()) < 1e-8
    check_same(f, t, torch.randn(2, shape[1], dtype=torch.float64))


def test_functional_call_like_torch():
    f, t = linear_pair()
    x = torch.randn(2, 4, dtype=torch.float64)
    w = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    wf = Fz(w, True)
    yt = torch.func.functional_call(t, {"weight": w}, (x,))
    yf = fastt.func.functional_call(f, {"weight": wf}, (Fz(x),))
    close(yf, yt)
    yt.sum().backward()
    yf.sum().backward()
    close(wf.grad, w.grad)
    assert f.weight.grad is None  # the module's own weight untouched
    close(f.weight, t.weight)
    yf2 = fastt.nn.utils.stateless.functional_call(f, ({"weight": wf},
                                                       {"bias": f.bias * 0}),
                                                   Fz(x))
    close(yf2, torch.from_dlpack(Fz(x)) @ w.detach().T)
    for L, m, arg in ((fastt, f, Fz(x)), (torch, t, x)):
        with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): "
                                               "'nope'"):
            L.func.functional_call(m, {"nope": L.ones(1)}, (arg,),
                                   strict=True)


def test_func_grad():
    def loss(w, x):
        return ((x @ w) ** 2).sum()
    w = torch.randn(4, 3, dtype=torch.float64)
    x = torch.randn(2, 4, dtype=torch.float64)
    close(fastt.func.grad(loss)(Fz(w), Fz(x)), torch.func.grad(loss)(w, x))
    gf, vf = fastt.func.grad_and_value(loss, argnums=(0, 1))(Fz(w), Fz(x))
    gt, vt = torch.func.grad_and_value(loss, argnums=(0, 1))(w, x)
    close(vf, vt)
    for a, b in zip(gf, gt):
        close(a, b)
