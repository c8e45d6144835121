"""The coefficients of the float64 Bessel functions J0, J1, Y0, Y1
(kernels/functors_special.h, bessel_pos and its helpers), from mpmath at
40 digits:

* 2 < x < 25: piecewise polynomials of degree DEG in t = x - m on the
  half-unit intervals of (2, 5) and the unit intervals of [5, 25) (m the
  interval's middle), by Chebyshev interpolation (DEG + 1 nodes) turned
  into the power basis exactly. One table row per interval and function:
  m, then the coefficients of t^0 .. t^DEG.
* x >= 25: J_n = sqrt(2/(pi x)) (P cos c - Q sin c), Y_n = sqrt(2/(pi x))
  (P sin c + Q cos c), c = x - (2n+1) pi/4, with P = sqrt(pi x/2) (J cos c
  + Y sin c) and Q = sqrt(pi x/2) (Y cos c - J sin c) taken from mpmath's
  J and Y, fitted as polynomials of degree DEG_PQ in u = (25/x)^2 in
  [0, 1]: P(u) and x Q(u) (Chebyshev interpolation, then the power basis
  in u, exactly).
* 0 < x <= 2: the series (derived from A&S 9.1.13 and 9.1.11, checked
  here against mpmath)
    Y0 = 2/pi (log(x/2) + gamma) J0 + sum_k>=1 a_k t^k,
        a_k = 2/pi (-1)^(k+1) H_k / k!^2,
    Y1 = 2/pi (log(x/2) + gamma) J1 - 2/(pi x) + x sum_k>=0 b_k t^k,
        b_k = -1/(2 pi) (-1)^k (H_k + H_(k+1)) / (k! (k+1)!),
  t = x^2/4, H_k the harmonic numbers, to k = NSER (the next term is
  below 1e-20), coefficients exact to the last digit.

Prints the three tables as C++ (kYSeries and kPQ, ready to paste into
those functions; kPieces, whose rows between the braces are the file
kernels/bessel_pieces.inc) and each fit's largest absolute error against
mpmath, in exact arithmetic on the rounded coefficients: a few 1e-17 for
the pieces and the series (the rounding of the leading coefficients),
below 1e-18 for P and Q.

    python3 scripts/fit_bessel.py          (needs mpmath; ten seconds)
"""
import mpmath as mp

mp.mp.dps = 40
X0, DEG, DEG_PQ, NSER = 25, 12, 6, 13


def bessel(n, x):
    """(J_n(x), Y_n(x)) from mpmath."""
    return mp.besselj(n, x), mp.bessely(n, x)


def cheb_to_power(c):
    """Chebyshev coefficients -> power coefficients in the same variable."""
    t = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]  # T_j's power coefficients
    while len(t) < len(c):
        nxt = [mp.mpf(0)] + [2 * v for v in t[-1]]
        for i, v in enumerate(t[-2]):
            nxt[i] -= v
        t.append(nxt)
    out = [mp.mpf(0)] * len(c)
    for cj, tj in zip(c, t):
        for i, v in enumerate(tj):
            out[i] += cj * v
    return out


def cheb_fit(f, deg):
    """Power coefficients in s of f's interpolant at deg + 1 Chebyshev
    nodes of s in [-1, 1]."""
    n = deg + 1
    ang = [mp.pi * (k + mp.mpf(1) / 2) / n for k in range(n)]
    vals = [f(mp.cos(a)) for a in ang]
    c = [2 * mp.fsum(v * mp.cos(j * a) for v, a in zip(vals, ang)) / n
         for j in range(n)]
    c[0] /= 2
    return cheb_to_power(c)


def horner(p, t):
    s = mp.mpf(0)
    for c in reversed(p):
        s = s * t + c
    return s


def rounded(p):
    return [mp.mpf(float(c)) for c in p]


def intervals():
    """(lo, hi) of the pieces of (2, X0)."""
    half = [(2 + k / 2, 2.5 + k / 2) for k in range(6)]
    return half + [(float(a), a + 1.0) for a in range(5, X0)]


def fit_pieces():
    rows, worst = [], [0.0] * 4
    for which in range(4):
        n, want_y = which % 2, which >= 2
        for lo, hi in intervals():
            m, h = mp.mpf(lo + hi) / 2, mp.mpf(hi - lo) / 2

            def f(s):
                return bessel(n, m + h * s)[want_y]
            p = cheb_fit(f, DEG)
            p = rounded([c / h ** k for k, c in enumerate(p)])
            rows.append((which, lo, hi, float(m), p))
            for i in range(41):
                x = lo + (hi - lo) * mp.mpf(i) / 40
                err = abs(horner(p, x - m) - bessel(n, x)[want_y])
                worst[which] = max(worst[which], float(err))
    return rows, worst


def pq(n, x):
    j, y = bessel(n, x)
    c = x - (2 * n + 1) * mp.pi / 4
    g = mp.sqrt(mp.pi * x / 2)
    return (g * (j * mp.cos(c) + y * mp.sin(c)),
            g * (y * mp.cos(c) - j * mp.sin(c)))


def u_poly(p_s):
    """Power coefficients in s = 2u - 1 -> power coefficients in u."""
    out = [mp.mpf(0)] * len(p_s)
    for k, c in enumerate(p_s):
        for i in range(k + 1):
            out[i] += c * mp.binomial(k, i) * 2 ** i * (-1) ** (k - i)
    return out


def fit_pq():
    res = []
    for n in (0, 1):
        cache = {}

        def val(s):
            if s not in cache:
                x = X0 / mp.sqrt((s + 1) / 2)
                p, q = pq(n, x)
                cache[s] = (p, q * x)
            return cache[s]
        pc = rounded(u_poly(cheb_fit(lambda s: val(s)[0], DEG_PQ)))
        qc = rounded(u_poly(cheb_fit(lambda s: val(s)[1], DEG_PQ)))
        ep = eq = 0.0
        for i in range(1, 61):
            u = mp.mpf(i) / 60
            x = X0 / mp.sqrt(u)
            p, q = pq(n, x)
            ep = max(ep, float(abs(horner(pc, u) - p)))
            eq = max(eq, float(abs(horner(qc, u) / x - q)))
        res.append((n, pc, qc, ep, eq))
    return res


def series():
    """Y0's a_k (k >= 1) and Y1's b_k (k >= 0), checked against mpmath."""
    h = [mp.mpf(0)]
    for k in range(1, NSER + 2):
        h.append(h[-1] + mp.mpf(1) / k)
    a = [2 / mp.pi * (-1) ** (k + 1) * h[k] / mp.factorial(k) ** 2
         for k in range(1, NSER + 1)]
    b = [-1 / (2 * mp.pi) * (-1) ** k * (h[k] + h[k + 1])
         / (mp.factorial(k) * mp.factorial(k + 1)) for k in range(NSER)]
    worst = [0.0, 0.0]
    for i in range(1, 201):
        x = mp.mpf(i) / 100
        t = x * x / 4
        lg = 2 / mp.pi * (mp.log(x / 2) + mp.euler)
        y0 = lg * mp.besselj(0, x) + t * horner(rounded(a), t)
        y1 = (lg * mp.besselj(1, x) - 2 / (mp.pi * x)
              + x * horner(rounded(b), t))
        worst[0] = max(worst[0], float(abs(y0 - mp.bessely(0, x))))
        worst[1] = max(worst[1], float(abs(y1 - mp.bessely(1, x))))
    return a, b, worst


def cxx(name, dims, groups, notes=None):
    """C++ text: static constexpr double name[dims] = {...}; one brace
    group per list in groups (a comment line before each from notes)."""
    out = ["  static constexpr double %s%s = {" % (
        name, "".join("[%d]" % d for d in dims))]
    for g, vals in enumerate(groups):
        if notes:
            out.append("      // " + notes[g])
        line = "      {"
        for i, v in enumerate(vals):
            item = repr(float(v)) + ("}," if i + 1 == len(vals) else ",")
            if len(line) + 1 + len(item) > 80:
                out.append(line)
                line = "       " + item
            else:
                line += ("" if line.endswith("{") else " ") + item
        out.append(line)
    out.append("  };")
    return "\n".join(out)


def main():
    a, b, ws = series()
    notes = ["Y0: a_1 .. a_%d" % NSER, "Y1: b_0 .. b_%d" % (NSER - 1)]
    print(cxx("kYSeries", [2, NSER], [a, b], notes))
    groups, notes, errs = [], [], []
    for n, pc, qc, ep, eq in fit_pq():
        groups += [pc, qc]
        notes += ["P%d: u^0 .. u^%d" % (n, DEG_PQ),
                  "x Q%d: u^0 .. u^%d" % (n, DEG_PQ)]
        errs.append("P%d %.1e, Q%d %.1e" % (n, ep, n, eq))
    print(cxx("kPQ", [4, DEG_PQ + 1], groups, notes))
    rows, worst = fit_pieces()
    names = ["J0", "J1", "Y0", "Y1"]
    print(cxx("kPieces", [len(rows), DEG + 2],
              [[m] + p for which, lo, hi, m, p in rows],
              ["%s on [%g, %g): m, t^0 .. t^%d" % (names[which], lo, hi,
                                                   DEG)
               for which, lo, hi, m, p in rows]))
    print("// max abs error: series Y0 %.1e, Y1 %.1e" % tuple(ws))
    print("// max abs error: " + ", ".join(errs))
    print("// max abs error, pieces: " + ", ".join(
        "%s %.1e" % (nm, w) for nm, w in zip(names, worst)))


if __name__ == "__main__":
    main()
