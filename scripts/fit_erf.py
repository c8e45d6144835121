"""Polynomial tables for float64 erf and erfc and float32 erfc
(kernels/cpu/isa/vec_math.cpp: own_erf_D, own_erfc_D, own_erfc_F) and
float32 erf (kernels/cpu/vec_exp.h: vec_erf16), fitted here from mpmath
(not copied):

    0 <= a < 6:  sixteen intervals of 3/8, c_i their centres, u = a - c_i:
                 erf(a)  = a + a S(u)           (interval 0, kErfPieces[.][0])
                 erf(a)  = E_i(u)               (intervals 1-15, kErfPieces)
                 erfc(a) = X_i(u) exp(-a^2)     (kErfcxPieces)
    6 <= a:      erf(a) = 1 (from 5.93 on in double),
                 erfc(a) = X_i(u) exp(-a^2) over sixteen intervals of
                 43/32 up to 27.5, past which erfc is 0 (kErfcxFar)

and in float at AVX-512, for erfc (own_erfc_F), degree 8, and for erf
(vec_erf16 in kernels/cpu/vec_exp.h), degree 6:

    0 <= a < 10.25: erfc(a) = X_i(u) exp(-a^2) over sixteen intervals of
                    41/64 (kErfcxF; past 10.1 float erfc is 0)
    0 <= a < 4:     erf(a) as above over sixteen intervals of 1/4 (kErfF;
                    from 3.92 on float erf is 1)

S fits erf(a) / a - 1 (0.13 to 0.04 on [0, 3/8]: a + a S is one FMA, so
erf keeps its relative accuracy down to the subnormals), E_i erf itself
(0.4 to 1 from the second interval on: an absolute fit is a relative
one), X_i erfcx(a) = exp(a^2) erfc(a): smooth, so the exponential carries
erfc's whole range. Each polynomial is the interpolant at Chebyshev nodes
in mpmath at 40 digits (mp.chebyfit, within a few percent of minimax at
these degrees), its coefficients rounded to double (to float for the
float tables). The check evaluates the rounded polynomials exactly
(mpmath) at CHECK points per piece and prints each table's worst error:
absolute for S and E (erf >= 0.26 past the first interval, erf / a >=
1.04 in it), relative for the others; the kernels add their Horner
roundings, the exponential's and the products'
(tests/python/test_vec_math_sleef.py measures the whole against mpmath).

The constants are split in two, hi + lo (hi added last), so that their
rounding (half an ulp of c_i's value, up to an ulp of the interval's
smallest) does not reach the result.

Prints kernels/erf_tables.inc: the C++ tables (highest degree first, for
Horner; the interval tables as [row][interval], one row of 16 per power,
the constant's lo, then its hi), then the errors as comments.

    python3 scripts/fit_erf.py > kernels/erf_tables.inc   (needs mpmath
                                                         and numpy; a
                                                         few seconds)
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
W = mp.mpf(3) / 8          # interval width
NINT = 16                  # intervals (one vpermt2pd: 16 doubles)
DEG = 13
FAR, W_FAR = 6, mp.mpf(43) / 32  # the far table: [6, 27.5]
DEG_F, W_F = 8, mp.mpf(41) / 64  # float erfc: [0, 10.25]
DEG_EF, W_EF = 6, mp.mpf(1) / 4   # float erf: [0, 4]
CHECK = 400


def erfcx(a):
    return mp.exp(a * a) * mp.erfc(a)


def erf_s(a):  # erf(a) / a - 1
    return mp.erf(a) / a - 1 if a else 2 / mp.sqrt(mp.pi) - 1


def f32(v):
    return float(np.float32(v))


def fit(f, lo, hi, deg, rnd=float):
    """Monomial coefficients rounded by rnd (to double or float), lowest
    first, the constant split in two: [lo, c1, ..., c_deg, hi]."""
    c = list(reversed(mp.chebyfit(f, [lo, hi], deg + 1)))
    out = [rnd(v) for v in c]
    out[0] = rnd(c[0] - out[0])
    return out + [rnd(c[0])]


def value(c, t):
    return mp.mpf(c[-1]) + sum(mp.mpf(v) * t ** k
                               for k, v in enumerate(c[:-1]))


def worst(c, f, lo, hi, rel):
    e = mp.mpf(0)
    for j in range(CHECK + 1):
        t = lo + (hi - lo) * j / CHECK
        ref = f(t)
        d = abs(value(c, t) - ref)
        e = max(e, d / abs(ref) if rel else d)
    return e


def cells(row, per_line, fmt=repr):
    s = [fmt(v) for v in row]
    return [", ".join(s[i:i + per_line]) for i in range(0, len(s), per_line)]


def table(name, rows, per_line=3, ty="double"):
    out = [f"constexpr {ty} {name}[{len(rows)}][{len(rows[0])}] = {{"]
    fmt = repr if ty == "double" else (lambda v: str(np.float32(v)) + "f")
    for r in rows:
        out.append("    {" + ",\n     ".join(cells(r, per_line, fmt))
                   + "},")
    out.append("};")
    return "\n".join(out)


def pieces(errs, name, f, lo, w, deg, rnd=float, rel=True):
    """The sixteen fits of f(i, a) over [lo + i w, lo + (i + 1) w] in u, a
    minus the centre; the worst error into errs[name]."""
    out = []
    h = w / 2
    for i in range(NINT):
        c = lo + (i + mp.mpf(1) / 2) * w

        def g(u, i=i, c=c):
            return f(i, c + u)
        t = fit(g, -h, h, deg, rnd)
        errs[name] = max(errs.get(name, 0), worst(t, g, -h, h, rel))
        out.append(t)
    return out


def erf_piece(i, a):  # the first interval holds S
    return erf_s(a) if i == 0 else mp.erf(a)


def erfcx_piece(i, a):
    return erfcx(a)


def main():
    errs = {}
    pe = pieces(errs, "kErfPieces (abs)", erf_piece, 0, W, DEG, rel=False)
    px = pieces(errs, "kErfcxPieces (rel)", erfcx_piece, 0, W, DEG)
    far = pieces(errs, "kErfcxFar (rel)", erfcx_piece, FAR, W_FAR, DEG)
    flt = pieces(errs, "kErfcxF (rel)", erfcx_piece, 0, W_F, DEG_F, f32)
    ferf = pieces(errs, "kErfF (abs)", erf_piece, 0, W_EF, DEG_EF, f32,
                  rel=False)

    def by_power(tabs, deg=DEG):  # [degree, highest first, then hi][piece]
        return [[t[k] for t in tabs] for k in [*range(deg, -1, -1), -1]]
    print("// The float64 erf and erfc tables of kernels/cpu/isa/vec_math.cpp"
          "\n// (own_erf_D, own_erfc_D). Printed by scripts/fit_erf.py;"
          " not edited by hand.")
    print(table("kErfPieces", by_power(pe)))
    print(table("kErfcxPieces", by_power(px)))
    print(table("kErfcxFar", by_power(far)))
    print(table("kErfcxF", by_power(flt, DEG_F), 4, "float"))
    print(table("kErfF", by_power(ferf, DEG_EF), 4, "float"))
    for k, v in errs.items():
        print(f"// {k} after rounding to its type: {mp.nstr(v, 3)}")


if __name__ == "__main__":
    main()
