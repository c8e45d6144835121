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


def softmax(input, dim, *, dtype=None):
    return fastt.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return fastt.log_softmax(input, dim, dtype=dtype)


# ---- rows of their own ----
entr = _C.special_entr
erfcx = _C.special_erfcx
i0e = _C.special_i0e
i1 = _C.special_i1
i1e = _C.special_i1e
log_ndtr = _C.special_log_ndtr
ndtr = _C.special_ndtr
ndtri = _C.special_ndtri
xlog1py = _C.special_xlog1py
