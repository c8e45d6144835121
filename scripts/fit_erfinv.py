"""Float64 polynomial tables for the inverse error function, in the
structure of M. Giles ("Approximating the erfinv function", GPU Computing
Gems, 2011), with coefficients fitted here from mpmath (not copied):

    w = -log((1 - y) (1 + y)),   erfinv(y) = y * p(t),
    branch A, w < 6.25:         t = w - cA,          p = kErfinvA
    branch B, 6.25 <= w < 16:   t = sqrt(w) - cB,    p = kErfinvB
    branch C, 16 <= w <= 37:    t = sqrt(w) - cC,    p = kErfinvC

The centers start at Giles' 3.125, 3.25 and 5 and move by a few 2^-10
to where p(0) = g(center) is nearest a double. Branch C stops at w = 37:
a double y < 1 gives w <= 52 log 2 ~ 36.04. A polynomial in sqrt(w) up
to w = 800 (erfcinv of subnormals) is out of reach (degree 24 on
[16, 800] errs by 2e-10); that needs more branches.

The target g(w) = erfinv(y) / y, y = sqrt(1 - exp(-w)), comes from mpmath
at 60 digits (mp.erfinv for w < 2, the limit sqrt(pi)/2 at w = 0, Newton
on log(erfc(x)) = log(1 - y) above). Each p is the minimax polynomial
for the RELATIVE error p / g - 1 on GRID Chebyshev-spaced points
(discrete Remez exchange, exact in mpmath); its coefficients are then
rounded to double from t^0 up, refitting the higher ones after each
rounding (a small linear program, scipy's HiGHS) to absorb it.

Checks, in numpy float64 with a simulated FMA Horner (error-free product
and sum): the kernel p(t(w)) against g(w) at NCHECK random doubles w per
branch plus the edges, and end to end y * p(t) at random doubles y (w
the correctly rounded double of the exact w, then w off by up to 4 ulp
as a log of that accuracy gives), against erfinv(y) from one Newton
step in mpmath. Also with t = (s - c) + fma(-s, s, w) * (0.5 / s),
s = sqrt(w), which removes the rounding of the sqrt. Errors print in
ulps of the true value (the spacing of doubles there) and relative.

Prints the C++ tables (highest degree first, for Horner), then the
errors.

    python3 scripts/fit_erfinv.py     (needs numpy, scipy and mpmath;
                                       about two minutes on two cores)
"""
import multiprocessing

import mpmath as mp
import numpy as np
from scipy.optimize import linprog

mp.mp.dps = 60
GRID = 3000
NCHECK = 200000
NEND = 50000
WMAX = 37.0
# name, variable ('w' or 'sqrt'), center, w range, degree
BRANCHES = [
    ("A", "w", 3.125, (0.0, 6.25), 23),
    ("B", "sqrt", 3.25, (6.25, 16.0), 19),
    ("C", "sqrt", 5.0, (16.0, WMAX), 18),
]
RNG = np.random.default_rng(12345)


def g_of_w(w):
    """erfinv(y) / y, y = sqrt(1 - exp(-w)), at mp.dps digits."""
    w = mp.mpf(w)
    if w == 0:
        return mp.sqrt(mp.pi) / 2
    y = mp.sqrt(-mp.expm1(-w))
    if w < 2:
        return mp.erfinv(y) / y
    lq = -w - mp.log1p(y)
    x = mp.sqrt(w)
    tol = mp.mpf(10) ** (5 - mp.mp.dps)
    for _ in range(200):
        ec = mp.erfc(x)
        dx = (mp.log(ec) - lq) * ec * mp.exp(x * x) * mp.sqrt(mp.pi) / 2
        x += dx
        if abs(dx) < tol * x:
            break
    return x / y


def w_of_t(var, c, t):
    return t + c if var == "w" else (t + c) ** 2


def grid(var, c, wlo, whi):
    """GRID Chebyshev-spaced points t of the branch and g there."""
    tlo = wlo - c if var == "w" else mp.sqrt(wlo) - c
    thi = whi - c if var == "w" else mp.sqrt(whi) - c
    u = -np.cos(np.pi * np.arange(GRID) / (GRID - 1))
    ts = [tlo + (thi - tlo) * (mp.mpf(x) + 1) / 2 for x in u]
    return ts, [g_of_w(w_of_t(var, c, t)) for t in ts]


def rel_err(coef, ts, gs):
    return np.array([float(mp.polyval(coef[::-1], t) / g - 1)
                     for t, g in zip(ts, gs)])


def remez(ts, gs, deg):
    """Discrete minimax p(t) ~ g for the relative error (Remez exchange,
    exact in mpmath); coefficients t^0 first."""
    m = deg + 2
    ref = [int(round((GRID - 1) * (1 - np.cos(np.pi * i / (m - 1))) / 2))
           for i in range(m)]
    for _ in range(30):
        a = mp.matrix(m, m)
        b = mp.matrix(m, 1)
        for r, j in enumerate(ref):
            for q in range(deg + 1):
                a[r, q] = ts[j] ** q
            a[r, deg + 1] = -(-1) ** r * gs[j]
            b[r] = gs[j]
        sol = mp.lu_solve(a, b)
        coef = [sol[q] for q in range(deg + 1)]
        err = rel_err(coef, ts, gs)
        ref = exchange(err, m)
        if np.max(np.abs(err)) <= float(abs(sol[deg + 1])) * 1.001:
            break
    return coef


def round_refit(coef, ts, gs):
    """Round the coefficients to double from t^0 up; after each, refit
    the higher ones (discrete minimax of the relative error, a linear
    program on the small corrections) to absorb the rounding."""
    coef = list(coef)
    tf = np.array([float(t) for t in ts])
    gf = np.array([float(g) for g in gs])
    scale = 1e17
    for k in range(len(coef)):
        coef[k] = mp.mpf(float(coef[k]))
        n = len(coef) - k - 1
        if n == 0:
            break
        r = -rel_err(coef, ts, gs) * scale
        tmax = np.max(np.abs(tf))
        a = np.stack([(tf / tmax) ** j / gf
                      for j in range(k + 1, len(coef))], axis=1)
        ones = np.ones((len(tf), 1))
        lp = linprog(np.r_[np.zeros(n), 1.0],
                     A_ub=np.block([[a, -ones], [-a, -ones]]),
                     b_ub=np.r_[r, -r], bounds=[(None, None)] * (n + 1),
                     method="highs")
        for j, x in zip(range(k + 1, len(coef)), lp.x[:n]):
            coef[j] += mp.mpf(x) / scale / mp.mpf(tmax) ** j
    return [float(x) for x in coef]


def tune_center(var, c, step=2.0 ** -10, span=16):
    """The double center near c where g(center) is closest to a double,
    so that rounding the constant term costs least."""
    best = None
    for k in range(-span, span + 1):
        ck = c + k * step
        g = g_of_w(w_of_t(var, mp.mpf(ck), 0))
        off = abs(float((g - float(g)) / np.spacing(float(g))))
        if best is None or off < best[0]:
            best = (off, ck)
    return best[1]


def exchange(err, m):
    """Alternating extrema of err (one per sign run), trimmed to m."""
    ext = []
    i = 0
    n = len(err)
    while i < n:
        j = i
        s = err[i] >= 0
        while j < n and (err[j] >= 0) == s:
            j += 1
        ext.append(i + int(np.argmax(np.abs(err[i:j]))))
        i = j
    while len(ext) > m:
        mags = [abs(err[e]) for e in ext]
        if len(ext) == m + 1:
            ext.pop(0 if mags[0] < mags[-1] else -1)
            continue
        i = int(np.argmin(mags))
        if i == 0 or i == len(ext) - 1:
            ext.pop(i)
        else:
            drop = i - 1 if mags[i - 1] < mags[i + 1] else i + 1
            for d in sorted((i, drop), reverse=True):
                ext.pop(d)
    return ext


def two_prod(a, b):
    p = a * b
    sp = 134217729.0
    ah = a * sp
    ah = ah - (ah - a)
    al = a - ah
    bh = b * sp
    bh = bh - (bh - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fma(a, b, c):
    p, pe = two_prod(a, b)
    s, se = two_sum(p, c)
    return s + (pe + se)


def horner(coef_hi_first, t):
    r = np.full_like(t, coef_hi_first[0])
    for cf in coef_hi_first[1:]:
        r = fma(r, t, cf)
    return r


def kernel(br, coef, w, fix=False):
    """p(t(w)) in double; fix: t = sqrt(w) - c plus the sqrt's rounding
    error, fma(-s, s, w) * (0.5 / s)."""
    _, var, c, _, _ = br
    if var == "w":
        t = w - c
    else:
        s = np.sqrt(w)
        t = s - c
        if fix:
            t = t + fma(-s, s, w) * (0.5 / s)
    return horner(coef[::-1], t)


def ref_kernel(ws):
    """g(w) at double w, one Newton step from the double kernel value."""
    mp.mp.dps = 30
    out = []
    for w, p in ws:
        w = mp.mpf(w)
        if w == 0:
            out.append(mp.sqrt(mp.pi) / 2)
            continue
        y = mp.sqrt(-mp.expm1(-w))
        x = y * p
        d = mp.sqrt(mp.pi) / 2 * mp.exp(x * x)
        if w < 1:
            x -= (mp.erf(x) - y) * d
        else:
            x += (mp.erfc(x) - mp.exp(-w) / (1 + y)) * d
        out.append(x / y)
    return [(float(g), float(g - float(g))) for g in out]


def ref_y(ys):
    """Correctly rounded w of each double y and erfinv(y) (one Newton
    step from the double result), as value and low part."""
    mp.mp.dps = 30
    out = []
    for y, x in ys:
        y = mp.mpf(y)
        w = -mp.log((1 - y) * (1 + y))
        x = mp.mpf(x)
        d = mp.sqrt(mp.pi) / 2 * mp.exp(x * x)
        if y < 0.5:
            x -= (mp.erf(x) - y) * d
        else:
            x += (mp.erfc(x) - (1 - y)) * d
        out.append((float(w), float(x), float(x - float(x))))
    return out


def pmap(fn, items, pool):
    chunks = [items[i:i + 2000] for i in range(0, len(items), 2000)]
    res = pool.map(fn, chunks) if pool else map(fn, chunks)
    return [r for part in res for r in part]


def errors(got, hi, lo):
    """Max error in ulps of the true value and max relative error."""
    diff = (got - hi) - lo
    ulp = np.spacing(np.abs(hi))
    return np.max(np.abs(diff) / ulp), np.max(np.abs(diff / hi))


def pick(w):
    return np.where(w < BRANCHES[1][3][0], 0,
                    np.where(w < BRANCHES[2][3][0], 1, 2))


def evaluate(tables, y, w, fix=False):
    """y * p(t(w)) in double, by branch of w."""
    out = np.empty_like(y)
    b = pick(w)
    for i, (br, coef) in enumerate(zip(BRANCHES, tables)):
        m = b == i
        out[m] = y[m] * kernel(br, coef, w[m], fix)
    return out


def check_kernel(tables, pool):
    print("kernel p(t(w)) vs erfinv(y)/y, %d random w per branch"
          " and the edges:" % NCHECK)
    for br, coef in zip(BRANCHES, tables):
        lo, hi = br[3]
        w = RNG.uniform(lo, hi, NCHECK)
        edge = [lo, hi, np.nextafter(hi, 0), np.nextafter(lo, 1e9)]
        if lo == 0:
            edge += [5e-324, 1e-300, 1e-20, 1e-10, 1e-5]
        w = np.concatenate([w, edge])
        p = kernel(br, coef, w)
        g = pmap(ref_kernel, list(zip(w.tolist(), p.tolist())), pool)
        ghi, glo = (np.array(v) for v in zip(*g))
        print("  %s: w in [%g, %g]: %.3f ulp, relative %.3g"
              % ((br[0], lo, hi) + errors(p, ghi, glo)))
        if br[1] != "w":
            p = kernel(br, coef, w, True)
            print("     with the sqrt(w) correction: %.3f ulp, relative"
                  " %.3g" % errors(p, ghi, glo))


def sample_y():
    ys = []
    for br in BRANCHES:
        lo, hi = br[3]
        hi = min(hi, 36.0)
        w = RNG.uniform(lo, hi, NEND)
        ys.append(np.sqrt(-np.expm1(-w)))
    ys.append(10.0 ** RNG.uniform(-300, -2, NEND // 10))
    ys.append(1 - np.arange(1, 2001) * 2.0 ** -53)
    return np.concatenate(ys)


def check_end(tables, pool):
    y = sample_y()
    first = evaluate(tables, y, -np.log((1 - y) * (1 + y)))
    r = pmap(ref_y, list(zip(y.tolist(), first.tolist())), pool)
    w, xhi, xlo = (np.array(v) for v in zip(*r))
    print("erfinv(y) = y * p(t(w)), %d random double y (w correctly"
          " rounded):" % len(y))
    b = pick(w)
    got = evaluate(tables, y, w)
    for i, br in enumerate(BRANCHES):
        m = b == i
        print("  %s (%d points): %.3f ulp, relative %.3g"
              % ((br[0], m.sum()) + errors(got[m], xhi[m], xlo[m])))
    got = evaluate(tables, y, w, True)
    print("  with the sqrt(w) correction in B and C:")
    for i, br in enumerate(BRANCHES[1:], 1):
        m = b == i
        print("  %s: %.3f ulp, relative %.3g"
              % ((br[0],) + errors(got[m], xhi[m], xlo[m])))
    u = RNG.uniform(-1, 1, len(y))
    wp = w * (1 + 4 * 2.0 ** -53 * u)
    for fix in (False, True):
        got = evaluate(tables, y, wp, fix)
        print("  w off by up to 4 ulp, w (1 + 4 u 2^-53), u in [-1, 1]%s:"
              % (", with the correction" if fix else ""))
        for i, br in enumerate(BRANCHES):
            m = b == i
            print("  %s: %.3f ulp, relative %.3g"
                  % ((br[0],) + errors(got[m], xhi[m], xlo[m])))


def main():
    tables = []
    for i, (name, var, c, (wlo, whi), deg) in enumerate(BRANCHES):
        c = tune_center(var, c)
        BRANCHES[i] = (name, var, c, (wlo, whi), deg)
        ts, gs = grid(var, c, wlo, whi)
        exact = remez(ts, gs, deg)
        coef = round_refit(exact, ts, gs)
        tables.append(coef)
        e1 = np.max(np.abs(rel_err(exact, ts, gs)))
        e2 = np.max(np.abs(rel_err([mp.mpf(x) for x in coef], ts, gs)))
        print("// %s: t = %s - %.17g, w in [%g, %g), degree %d" % (
            name, "w" if var == "w" else "sqrt(w)", c, wlo, whi, deg))
        print("//    relative error: minimax %.3g, rounded %.3g" % (e1, e2))
    for br, coef in zip(BRANCHES, tables):
        print(cxx_table(br[0], coef))
    with multiprocessing.Pool() as pool:
        check_kernel(tables, pool)
        check_end(tables, pool)


def cxx_table(name, coef):
    items = ["%.17g" % x for x in coef[::-1]]
    head = "constexpr double kErfinv%s[%d] = {" % (name, len(items))
    lines = [head]
    line = "   "
    for s in items:
        if len(line) + len(s) + 2 > 79:
            lines.append(line)
            line = "   "
        line += " " + s + ","
    lines.append(line[:-1])
    lines.append("};")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
