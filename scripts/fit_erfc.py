"""The coefficients of float32 erfc's fit (kernels/cpu/isa/vec_math.cpp,
own_erfc_F): G(t) = erfcx(x) / t with t = 1 / (1 + x/2), x in [0, 10.1],
as a degree-11 polynomial in u = (2t - (1 + tmin)) / (1 - tmin) in
[-1, 1], by Chebyshev interpolation of mpmath's erfc at 300 nodes. Prints
the power-basis coefficients (u^0 first), the u mapping and the fit's
largest relative error (about 5e-10).

    python3 scripts/fit_erfc.py          (needs numpy and mpmath)
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
K, XMAX, DEG, NODES = 0.5, 10.1, 11, 300
TMIN = 1 / (1 + K * XMAX)


def g(t):
    x = (1 / mp.mpf(t) - 1) / K
    return mp.erfc(x) * mp.exp(x * x) / mp.mpf(t)


def main():
    nodes = np.cos(np.pi * (np.arange(NODES) + 0.5) / NODES)
    ts = (nodes * (1 - TMIN) + (1 + TMIN)) / 2
    cheb = np.polynomial.chebyshev.chebfit(
        nodes, np.array([float(g(t)) for t in ts]), DEG)
    power = np.polynomial.chebyshev.cheb2poly(cheb)
    tt = np.linspace(TMIN, 1, 20001)
    ref = np.array([float(g(t)) for t in tt])
    got = np.polynomial.polynomial.polyval(
        (2 * tt - (1 + TMIN)) / (1 - TMIN), power)
    print("coefficients:", ", ".join(repr(float(c)) for c in power))
    print("u = t *", repr(2 / (1 - TMIN)), "+", repr(-(1 + TMIN) / (1 - TMIN)))
    print("max relative error:", float(np.max(np.abs(got / ref - 1))))


if __name__ == "__main__":
    main()
