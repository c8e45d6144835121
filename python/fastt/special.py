"""fastt.special: torch.special's names. The special functions of their
own are rows of csrc/ops/elementwise.def bound as fastt._C.special_<name>;
the rest are torch's aliases of fastt ops."""
import fastt
from fastt import _C

# ---- aliases of fastt ops (torch.special's own aliases) ----
digamma = psi = fastt.digamma
erf = fastt.erf
erfc = fastt.erfc
erfinv = fastt.erfinv
exp2 = fastt.exp2
expit = fastt.sigmoid
expm1 = fastt.expm1
gammaln = fastt.lgamma
i0 = fastt.i0
log1p = fastt.log1p
logit = fastt.logit
round = fastt.round  # noqa: A001 - torch shadows the builtin the same way
sinc = fastt.sinc
xlogy = fastt.xlogy
logsumexp = fastt.logsumexp
multigammaln = fastt.mvlgamma
polygamma = fastt.polygamma
gammainc = fastt.igamma
gammaincc = fastt.igammac
modified_bessel_i0 = fastt.i0  # the same function as i0 (float results)


def softmax(input, dim, *, dtype=None):
    return fastt.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return fastt.log_softmax(input, dim, dtype=dtype)


# ---- rows of their own ----
entr = _C.special_entr
erfcx = _C.special_erfcx
i0e = _C.special_i0e
i1 = modified_bessel_i1 = _C.special_i1
i1e = _C.special_i1e
log_ndtr = _C.special_log_ndtr
ndtr = _C.special_ndtr
ndtri = _C.special_ndtri
xlog1py = _C.special_xlog1py
spherical_bessel_j0 = _C.special_spherical_bessel_j0
bessel_j0 = _C.special_bessel_j0
bessel_j1 = _C.special_bessel_j1
bessel_y0 = _C.special_bessel_y0
bessel_y1 = _C.special_bessel_y1
modified_bessel_k0 = _C.special_modified_bessel_k0
modified_bessel_k1 = _C.special_modified_bessel_k1
scaled_modified_bessel_k0 = _C.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _C.special_scaled_modified_bessel_k1
zeta = _C.special_zeta
chebyshev_polynomial_t = _C.special_chebyshev_polynomial_t
chebyshev_polynomial_u = _C.special_chebyshev_polynomial_u
chebyshev_polynomial_v = _C.special_chebyshev_polynomial_v
chebyshev_polynomial_w = _C.special_chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = _C.special_shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _C.special_shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _C.special_shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _C.special_shifted_chebyshev_polynomial_w
hermite_polynomial_h = _C.special_hermite_polynomial_h
hermite_polynomial_he = _C.special_hermite_polynomial_he
laguerre_polynomial_l = _C.special_laguerre_polynomial_l
legendre_polynomial_p = _C.special_legendre_polynomial_p
