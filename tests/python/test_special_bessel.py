"""The Bessel, zeta, polygamma and incomplete-gamma rows
(kernels/functors_special.h) over wide ranges and each method's switch
points (J's and Y's series / the fitted pieces at 2, each piece's ends
(every half unit to 5, every unit to 25), the pieces / the modulus-phase
form at 25, K's series / integral at 2 and 30, series / continued
fraction at x = a + 1), in float64 (where an error would show) and
float32. Values are checked against SciPy: torch's own kernels are off
by up to 1e-7 in places (bessel_j0/j1/y0/y1 near their zeros, trigamma,
igammac at large a), and fastt is held to 1e-12 here. The edge values
(0, +-inf, NaN, negative arguments, poles) follow torch's."""
import math

import mpmath

import pytest
import scipy.special as sp
import torch

import fastt


def F(t):
    return fastt.from_dlpack(t.detach().clone())


def T(f):
    return torch.from_dlpack(f)


def finite_grid():
    pos = torch.cat([torch.logspace(-12, 3, 400, dtype=torch.float64),
                     torch.linspace(0.5, 40, 400, dtype=torch.float64),
                     torch.tensor([1e-8, 2.0, 2.0000001, 25.0, 25.000001,
                                   30.0, 30.000001, 1e3 + 0.25],
                                  dtype=torch.float64)])
    ends = torch.cat([torch.arange(2.0, 5.0, 0.5, dtype=torch.float64),
                      torch.arange(5.0, 26.0, dtype=torch.float64)])
    pos = torch.cat([pos, ends, torch.nextafter(ends, ends - 1),
                     torch.nextafter(ends, ends + 1)])
    return torch.cat([pos, -pos])


EDGES = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, -1.0],
                     dtype=torch.float64)

UNARY = {"bessel_j0": sp.j0, "bessel_j1": sp.j1, "bessel_y0": sp.y0,
         "bessel_y1": sp.y1, "modified_bessel_k0": sp.k0,
         "modified_bessel_k1": sp.k1, "scaled_modified_bessel_k0": sp.k0e,
         "scaled_modified_bessel_k1": sp.k1e}


def close(f, t, rtol, atol):
    f = T(f).double()
    t = t.double()
    both_nan = f.isnan() & t.isnan()
    same_inf = f.isinf() & t.isinf() & (f == t)
    err = (f - t).abs() <= atol + rtol * t.abs()
    bad = ~(both_nan | same_inf | err)
    assert not bad.any(), (f[bad][:5], t[bad][:5])


def scipy_ref(fn, *xs):
    return torch.from_numpy(fn(*[x.numpy() for x in xs]))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_against_scipy_and_torch_edges(name):
    x = finite_grid()
    ff = getattr(fastt.special, name)
    close(ff(F(x)), scipy_ref(UNARY[name], x), 1e-12, 1e-15)
    # float32: the reference at the float32-rounded argument
    xf = x.float()
    close(ff(F(xf)), scipy_ref(UNARY[name], xf.double()).float(), 2e-6, 1e-7)
    close(ff(F(EDGES)), getattr(torch.special, name)(EDGES), 1e-14, 0)
    # integers promote to the default float dtype, as torch
    xi = torch.arange(-3, 30)
    out = ff(F(xi))
    assert out.dtype == fastt.float32
    close(out, scipy_ref(UNARY[name], xi.double()).float(), 2e-6, 1e-7)


MP = {"bessel_j0": lambda x: mpmath.besselj(0, x),
      "bessel_j1": lambda x: mpmath.besselj(1, x),
      "bessel_y0": lambda x: mpmath.bessely(0, x),
      "bessel_y1": lambda x: mpmath.bessely(1, x),
      "modified_bessel_k0": lambda x: mpmath.besselk(0, x),
      "modified_bessel_k1": lambda x: mpmath.besselk(1, x),
      "scaled_modified_bessel_k0": lambda x: mpmath.besselk(0, x) * mpmath.exp(x),
      "scaled_modified_bessel_k1": lambda x: mpmath.besselk(1, x) * mpmath.exp(x)}


@pytest.mark.parametrize("name", sorted(MP))
def test_large_arguments_against_mpmath(name):
    # SciPy's cephes loses ~1e-10 relative at x = 1e6 (it reduces x - pi/4);
    # fastt takes cos and sin of x itself, so it is held to mpmath here
    xs = [1e4, 123456.789, 1e6, 3.5e7]
    mpmath.mp.dps = 40
    ref = torch.tensor([float(MP[name](mpmath.mpf(x))) for x in xs],
                       dtype=torch.float64)
    got = getattr(fastt.special, name)(F(torch.tensor(xs, dtype=torch.float64)))
    close(got, ref, 1e-13, 0)


def test_zeta_and_polygamma():
    s = torch.tensor([1.0, 1.5, 2.0, 3.0, 4.5, 10.0, 50.0, 0.5, math.inf,
                      math.nan], dtype=torch.float64)
    q = torch.tensor([1e-3, 0.5, 1.0, 2.0, 7.5, 100.0, 1e6, -0.5, -2.5,
                      -3.0, 0.0], dtype=torch.float64)
    S, Q = torch.meshgrid(s, q, indexing="ij")
    close(fastt.special.zeta(F(S), F(Q)), torch.special.zeta(S, Q),
          1e-11, 1e-300)
    x = torch.cat([torch.linspace(-5.25, 10, 300, dtype=torch.float64),
                   torch.logspace(-3, 4, 50, dtype=torch.float64)])
    for n in range(0, 6):
        close(fastt.polygamma(n, F(x)), scipy_ref(
            lambda v: sp.polygamma(n, v), x), 1e-11, 1e-12)
    # the gradient in x is the next polygamma (through zeta's q)
    xp = x[x > 0]
    for n in range(0, 4):
        xf = F(xp).requires_grad_(True)
        fastt.polygamma(n, xf).sum().backward()
        close(xf.grad, scipy_ref(lambda v: sp.polygamma(n + 1, v), xp),
              1e-10, 1e-12)
    with pytest.raises(RuntimeError, match="negative n"):
        fastt.polygamma(-1, F(x))


def test_igamma_igammac():
    a = torch.tensor([1e-3, 0.1, 0.5, 1.0, 2.5, 10.0, 50.0, 300.0],
                     dtype=torch.float64)
    x = torch.tensor([1e-5, 0.3, 1.0, 2.0, 3.5, 11.0, 60.0, 320.0, 1e4],
                     dtype=torch.float64)
    A, X = torch.meshgrid(a, x, indexing="ij")
    for name, ref in (("igamma", sp.gammainc), ("igammac", sp.gammaincc)):
        close(getattr(fastt, name)(F(A), F(X)), scipy_ref(ref, A, X),
              1e-11, 1e-15)
        close(getattr(fastt, name)(F(A.float()), F(X.float())),
              scipy_ref(ref, A, X).float(), 1e-5, 1e-6)
        # torch's values at the edges (P(0, x > 0) = 1, P(inf, NaN) = 0, ...)
        e = torch.tensor([0.0, -1.0, math.inf, 1.0, math.nan],
                         dtype=torch.float64)
        EA, EX = torch.meshgrid(e, e, indexing="ij")
        close(getattr(fastt, name)(F(EA), F(EX)),
              getattr(torch, name)(EA, EX), 1e-14, 0)
    y = F(A.clone())
    y.igamma_(F(X))
    close(y, scipy_ref(sp.gammainc, A, X), 1e-11, 1e-15)
    close(fastt.special.gammaincc(F(A), F(X)),
          scipy_ref(sp.gammaincc, A, X), 1e-11, 1e-15)
