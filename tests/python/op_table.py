"""THE op table of the Python tests: one OpInfo per op with its fastt call,
NumPy reference, supported dtypes, value domain and tolerances. test_ops.py
runs every row over every sample (dtypes, 0-d, empty, broadcast,
non-contiguous, odd 45x65 shapes) against NumPy, and against torch when it
is installed, and every result dtype against torch's promotion rules
(result_dtype; checked against torch.promote_types itself). To add an op:
append one OpInfo.

Which rows it must cover (tests/python/test_op_rows.py enforces it): every
row of csrc/ops/elementwise.def has an OpInfo in OPS (its `row`), except
the internal rows of INTERNAL_ROWS; every row of the reductions section of
csrc/ops.def has an entry in REDUCTIONS. The union of a row's OpInfo dtypes
is the input dtypes the dispatch table makes it accept, and torch's, but
for DTYPE_DIVERGENCES. The CUDA device tests (test_cuda_elementwise.py) run
the same OpInfos."""
import math
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

import fastt

BOOL = ("bool",)
INTS = ("uint8", "int8", "int16", "int32", "int64")
SIGNED_INTS = ("int8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
NUMERIC = INTS + FLOATS
ALL = BOOL + NUMERIC
# The complex dtypes, in the rows whose kernels take them (issue 18 adds
# them row by row; ALL stays the real dtypes).
COMPLEX = ("complex64", "complex128")
# integers and bool promote to float32; no 16-bit kernel (torch has none)
F32F64_IN = BOOL + INTS + ("float32", "float64")

# (rtol, atol) per result dtype
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2),
       "float32": (1.3e-5, 1e-5), "float64": (1e-7, 1e-7),
       "complex64": (1.3e-5, 1e-5), "complex128": (1e-7, 1e-7)}

_erf = np.vectorize(math.erf, otypes=[np.float64])


@dataclass
class OpInfo:
    name: str
    fastt_fn: Callable
    ref: Callable  # NumPy reference on float64/int64/bool arrays
    dtypes: Sequence[str]
    arity: int = 1
    domain: tuple = (-10, 10)
    nonzero_rhs: bool = False  # division-like: keep the divisor away from 0
    torch_name: Optional[str] = None  # None: same name as fastt's
    tol: dict = field(default_factory=dict)
    # How the result dtype follows from the promoted input dtype (torch's
    # rules): "same", "bool" (comparisons, logical ops) or "float"
    # (integer/bool inputs give the default float dtype, float32).
    result: str = "same"
    # The csrc/ops/elementwise.def row the entry tests (None: its name).
    row: Optional[str] = None
    torch_kwargs: dict = field(default_factory=dict)  # passed to torch's op
    mixed: bool = True  # False: inputs must share one dtype (heaviside)
    # False: a binary op whose `other` must be a tensor, as torch's
    # (torch.atan2(t, 2) is a TypeError); test_ops.py checks it on torch.
    scalar: bool = True
    # True: compare float32 results with torch's float64 computation
    # (torch's float32 kernel is less exact than fastt's double one).
    torch_in_float64: bool = False
    # (rtol, atol) floors for the comparison with torch where torch's own
    # kernel is the less exact one (its float64 Bessel functions are off by
    # ~2e-7 near their zeros; the NumPy/SciPy test keeps the tight bound).
    torch_tol: Optional[tuple] = None

    def __post_init__(self):
        self.row = self.row or self.name


# ---- result dtypes: torch's promotion rules, written out ----------------
def promote(a, b):
    """torch.promote_types on dtype names. Within a category (bool, ints,
    floats) it is NumPy's np.result_type; across categories the higher
    category's dtype wins unchanged (torch: int64 + float16 -> float16,
    where NumPy widens to float64); bfloat16 with float16 is float32."""
    if a == b:
        return a
    if a in COMPLEX or b in COMPLEX:  # the wider precision, as complex
        wide = {"complex128", "float64"} & {a, b}
        return "complex128" if wide else "complex64"
    fa, fb = a in FLOATS, b in FLOATS
    if fa != fb:
        return a if fa else b
    if "bfloat16" in (a, b):
        other = b if a == "bfloat16" else a
        return "float32" if other == "float16" else other
    if (a == "bool") != (b == "bool"):
        return b if a == "bool" else a
    return str(np.result_type(a, b))


def _combine(higher, lower):
    # c10's combine_categories: a lower-priority group (0-d tensors below
    # dimensioned ones) changes the result only from a higher category.
    if higher is None:
        return lower
    if lower is None or higher in COMPLEX:
        return higher
    if lower in COMPLEX:  # a float keeps its precision: float64 -> complex128
        # (float16 / bfloat16 give torch's complex32, which fastt lacks:
        # no such pair is sampled; test_complex.py covers fastt's complex64)
        if higher in FLOATS:
            return "complex128" if higher == "float64" else "complex64"
        return lower
    if higher in FLOATS:
        return higher
    if higher == "bool" or lower in FLOATS:
        return promote(higher, lower)
    return higher


def common_dtype(dtypes, ndims=None):
    """torch.result_type of inputs of `dtypes` with `ndims` dimensions
    (default: all dimensioned): the dtype the inputs are computed in. 0-d
    tensors take part only when their category (bool < int < float) is
    above the dimensioned inputs': int8 (3,) + int32 () is int8, but
    int8 (3,) + float64 () is float64."""
    ndims = ndims or [1] * len(dtypes)
    groups = [None, None]  # dimensioned, 0-d
    for d, nd in zip(dtypes, ndims):
        g = 0 if nd else 1
        groups[g] = d if groups[g] is None else promote(groups[g], d)
    return _combine(*groups)


def result_dtype(op, dtypes, ndims=None):
    """The dtype name torch gives `op` on such inputs (common_dtype, then
    the op's result rule)."""
    p = common_dtype(dtypes, ndims)
    if op.result == "bool":
        return "bool"
    if op.result == "float" and p not in FLOATS + COMPLEX:
        return "float32"
    return p


def unary(name, ref, dtypes, **kw):
    return OpInfo(name, lambda x: getattr(fastt, name)(x), ref, dtypes, 1,
                  **kw)


def binary(name, ref, dtypes, **kw):
    return OpInfo(name, lambda x, y: getattr(fastt, name)(x, y), ref, dtypes,
                  2, **kw)


def _relu(x):
    return np.maximum(x, 0).astype(x.dtype)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _logaddexp(a, b):
    """np.logaddexp, and torch's complex form: the operand with the larger
    real part leads (its imaginary part is kept, not wrapped)."""
    if not (np.iscomplexobj(a) or np.iscomplexobj(b)):
        return np.logaddexp(a, b)
    a, b = np.broadcast_arrays(np.asarray(a, complex), np.asarray(b, complex))
    first = a.real < b.real
    lo, hi = np.where(first, a, b), np.where(first, b, a)
    return hi + np.log1p(np.exp(lo - hi))


def _floor_div(a, b):
    return np.floor_divide(a, b)


def _trunc_div(a, b):
    q = np.trunc(np.true_divide(a, b))
    return q if a.dtype.kind == "f" else q.astype(a.dtype)


def _gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                  (x + 0.044715 * x ** 3)))


def _special(name):
    """scipy.special's function (scipy comes with scikit-learn, a test
    dependency), loaded when the reference first runs."""
    def ref(*xs):
        import scipy.special
        return getattr(scipy.special, name)(*xs)
    return ref


_lgamma = np.vectorize(lambda v: math.lgamma(v) if v > 0 or v != int(v)
                       else math.inf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _special_row(name, dtypes, **kw):
    """A special_<name> row: fastt.special.<name> against scipy.special."""
    kw.setdefault("result", "float")
    return OpInfo("special_" + name,
                  lambda x: getattr(fastt.special, name)(x), _special(name),
                  dtypes, 1, torch_name="special." + name, **kw)


def _bessel_row(name, scipy_name, domain):
    """fastt.special.<name> against scipy.special.<scipy_name> (j0, y1, k0e,
    ...); float32/float64 only, as torch's kernels."""
    return OpInfo("special_" + name,
                  lambda x: getattr(fastt.special, name)(x),
                  _special(scipy_name), F32F64_IN, 1, domain=domain,
                  result="float", torch_name="special." + name,
                  torch_tol=(1e-5, 1e-6))


def _poly(kind):
    """NumPy reference of fastt.special.<kind>(x, n): the three-term
    recurrence from P_0, P_1 in float64 at the truncated degree (0 below
    degree 0), written independently of the kernels' closed forms."""
    first = {"chebyshev_polynomial_t": lambda x: x,
             "chebyshev_polynomial_u": lambda x: 2 * x,
             "chebyshev_polynomial_v": lambda x: 2 * x - 1,
             "chebyshev_polynomial_w": lambda x: 2 * x + 1,
             "hermite_polynomial_h": lambda x: 2 * x,
             "hermite_polynomial_he": lambda x: x,
             "laguerre_polynomial_l": lambda x: 1 - x,
             "legendre_polynomial_p": lambda x: x}
    step = {"hermite_polynomial_h": lambda x, p, q, k: 2 * x * q - 2 * k * p,
            "hermite_polynomial_he": lambda x, p, q, k: x * q - k * p,
            "laguerre_polynomial_l":
                lambda x, p, q, k: ((2 * k + 1 - x) * q - k * p) / (k + 1),
            "legendre_polynomial_p":
                lambda x, p, q, k: ((2 * k + 1) * x * q - k * p) / (k + 1)}
    shifted = kind.startswith("shifted_")
    base = kind[len("shifted_"):] if shifted else kind
    nxt = step.get(base, lambda x, p, q, k: 2 * x * q - p)

    def one(x, n):
        x = 2 * x - 1 if shifted else x
        if math.isnan(x) or math.isnan(n):
            return math.nan
        n = int(n)  # truncated: -0.5 is degree 0
        if n < 0:
            return 0.0
        p, q = 1.0, first[base](x)
        if n == 0:
            return p
        for k in range(1, n):
            p, q = q, nxt(x, p, q, k)
        return q
    return np.vectorize(one, otypes=[np.float64])


def _poly_row(kind):
    return OpInfo("special_" + kind,
                  lambda x, n: getattr(fastt.special, kind)(x, n),
                  _poly(kind), F32F64_IN, 2, domain=(-1.5, 8),
                  result="float", torch_name="special." + kind,
                  torch_in_float64=True)


POLYNOMIALS = [c + "chebyshev_polynomial_" + k for c in ("", "shifted_")
               for k in "tuvw"] + [
    "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p"]

OPS = [
    unary("neg", np.negative, NUMERIC + COMPLEX),
    unary("abs", np.abs, NUMERIC),
    unary("relu", _relu, NUMERIC),
    unary("sign", lambda x: x if x.dtype == bool else np.sign(x), ALL),
    unary("floor", np.floor, NUMERIC),
    unary("ceil", np.ceil, NUMERIC),
    unary("round", np.round, NUMERIC),
    unary("trunc", np.trunc, NUMERIC),
    unary("square", np.square, NUMERIC + COMPLEX, domain=(-5, 5)),
    unary("exp", np.exp, ALL + COMPLEX, domain=(-5, 5), result="float"),
    unary("expm1", np.expm1, ALL + COMPLEX, domain=(-5, 5), result="float"),
    unary("log", np.log, ALL + COMPLEX, domain=(0.1, 10), result="float"),
    unary("log1p", np.log1p, ALL + COMPLEX, domain=(-0.5, 10), result="float"),
    unary("log2", np.log2, ALL + COMPLEX, domain=(0.1, 10), result="float"),
    unary("sqrt", np.sqrt, ALL + COMPLEX, domain=(0, 10), result="float"),
    unary("rsqrt", lambda x: 1 / np.sqrt(x), ALL + COMPLEX, domain=(0.1, 10),
          result="float"),
    unary("sin", np.sin, ALL + COMPLEX, result="float"),
    unary("cos", np.cos, ALL + COMPLEX, result="float"),
    unary("tanh", np.tanh, ALL + COMPLEX, result="float"),
    unary("sigmoid", _sigmoid, ALL + COMPLEX, result="float"),
    unary("silu", lambda x: x * _sigmoid(x), FLOATS + COMPLEX,
          torch_name="nn.functional.silu"),
    OpInfo("gelu", lambda x: fastt.gelu(x), _gelu, FLOATS, domain=(-5, 5),
           torch_name="nn.functional.gelu"),
    OpInfo("gelu_tanh", lambda x: fastt.gelu(x, approximate="tanh"),
           _gelu_tanh, FLOATS, domain=(-5, 5), torch_name="nn.functional.gelu",
           torch_kwargs={"approximate": "tanh"}),
    OpInfo("leaky_relu", lambda x: fastt.nn.functional.leaky_relu(x),
           lambda x: np.where(x > 0, x, 0.01 * x), FLOATS,
           torch_name="nn.functional.leaky_relu"),
    unary("erf", _erf, ALL, domain=(-3, 3), result="float"),
    unary("reciprocal", lambda x: 1 / x, ALL + COMPLEX, domain=(0.5, 4),
          result="float"),
    unary("exp2", np.exp2, ALL + COMPLEX, domain=(-5, 5), result="float"),
    unary("log10", np.log10, ALL + COMPLEX, domain=(0.1, 10), result="float"),
    unary("tan", np.tan, ALL + COMPLEX, domain=(-1.2, 1.2), result="float"),
    unary("asin", np.arcsin, ALL + COMPLEX,
          domain=(-0.95, 0.95), result="float"),
    unary("acos", np.arccos, ALL + COMPLEX,
          domain=(-0.95, 0.95), result="float"),
    unary("atan", np.arctan, ALL + COMPLEX, result="float"),
    unary("sinh", np.sinh, ALL + COMPLEX, domain=(-5, 5), result="float"),
    unary("cosh", np.cosh, ALL + COMPLEX, domain=(-5, 5), result="float"),
    unary("asinh", np.arcsinh, ALL + COMPLEX, result="float"),
    unary("acosh", np.arccosh, ALL + COMPLEX,
          domain=(1.05, 10), result="float"),
    unary("atanh", np.arctanh, ALL + COMPLEX,
          domain=(-0.95, 0.95), result="float"),
    unary("erfc", _erfc, ALL, domain=(-3, 3), result="float"),
    unary("erfinv", _special("erfinv"), ALL, domain=(-0.95, 0.95),
          result="float"),
    unary("lgamma", _lgamma, ALL, domain=(0.1, 10), result="float"),
    unary("digamma", _special("digamma"), ALL, domain=(0.1, 10),
          result="float"),
    unary("deg2rad", np.deg2rad, ALL, result="float"),
    unary("rad2deg", np.rad2deg, ALL, domain=(-3, 3), result="float"),
    unary("frac", lambda x: x - np.trunc(x), FLOATS),
    unary("isnan", np.isnan, ALL + COMPLEX, result="bool"),
    unary("isinf", np.isinf, ALL + COMPLEX, result="bool"),
    unary("isfinite", np.isfinite, ALL + COMPLEX, result="bool"),
    unary("isposinf", np.isposinf, ALL, result="bool"),
    unary("isneginf", np.isneginf, ALL, result="bool"),
    unary("signbit", np.signbit, ALL, result="bool"),
    unary("logical_not", np.logical_not, ALL + COMPLEX, result="bool"),
    unary("bitwise_not", np.invert, BOOL + INTS),
    unary("sgn", lambda x: x if x.dtype == bool else np.sign(x),  # z/|z|
          ALL + COMPLEX),
    unary("sinc", np.sinc, ALL + COMPLEX, result="float"),
    unary("i0", np.i0, ALL, result="float"),
    _special_row("i0e", ALL),
    _special_row("i1", ALL),
    _special_row("i1e", ALL),
    _special_row("entr", ALL, domain=(0, 10)),
    _special_row("ndtr", ALL, domain=(-5, 5)),
    _special_row("ndtri", F32F64_IN, domain=(0.01, 0.99),
),
    _special_row("log_ndtr", F32F64_IN, domain=(-5, 5)),
    _special_row("erfcx", F32F64_IN, domain=(-3, 10)),
    OpInfo("special_spherical_bessel_j0",
           lambda x: fastt.special.spherical_bessel_j0(x),
           lambda x: np.sinc(x / np.pi), F32F64_IN, 1, domain=(-20, 20),
           result="float", torch_name="special.spherical_bessel_j0"),
    binary("xlogy", _special("xlogy"), ALL, domain=(0.1, 10), result="float"),
    OpInfo("special_xlog1py", lambda x, y: fastt.special.xlog1py(x, y),
           _special("xlog1py"), ALL, 2, domain=(0.1, 10), result="float",
           torch_name="special.xlog1py"),
    *[_poly_row(k) for k in POLYNOMIALS],
    _bessel_row("bessel_j0", "j0", (-30, 30)),
    _bessel_row("bessel_j1", "j1", (-30, 30)),
    _bessel_row("bessel_y0", "y0", (0.1, 30)),
    _bessel_row("bessel_y1", "y1", (0.1, 30)),
    _bessel_row("modified_bessel_k0", "k0", (0.1, 20)),
    _bessel_row("modified_bessel_k1", "k1", (0.1, 20)),
    _bessel_row("scaled_modified_bessel_k0", "k0e", (0.1, 20)),
    _bessel_row("scaled_modified_bessel_k1", "k1e", (0.1, 20)),
    OpInfo("special_zeta", lambda x, q: fastt.special.zeta(x, q),
           _special("zeta"), F32F64_IN, 2, domain=(1.1, 10), result="float",
           torch_name="special.zeta"),
    # floating inputs only (torch refuses integers), no promotion to float
    binary("igamma", _special("gammainc"), FLOATS, domain=(0.1, 10),
           scalar=False),
    binary("igammac", _special("gammaincc"), FLOATS, domain=(0.1, 10),
           scalar=False),
    binary("gcd", np.gcd, INTS, scalar=False),
    binary("lcm", np.lcm, INTS, domain=(-100, 100), scalar=False),
    binary("add", np.add, ALL + COMPLEX),
    binary("sub", np.subtract, NUMERIC + COMPLEX),
    binary("mul", np.multiply, ALL + COMPLEX),
    binary("div", np.true_divide, ALL + COMPLEX, nonzero_rhs=True,
           result="float"),
    binary("floor_divide", _floor_div, NUMERIC, nonzero_rhs=True,
           row="div_floor"),
    OpInfo("div_trunc", lambda x, y: fastt.div(x, y, rounding_mode="trunc"),
           _trunc_div, NUMERIC, 2, nonzero_rhs=True, torch_name="div",
           torch_kwargs={"rounding_mode": "trunc"}),
    binary("remainder", np.remainder, NUMERIC, nonzero_rhs=True),
    binary("fmod", np.fmod, NUMERIC, nonzero_rhs=True),
    binary("maximum", np.maximum, ALL, scalar=False),
    binary("minimum", np.minimum, ALL, scalar=False),
    binary("atan2", np.arctan2, ALL, result="float", scalar=False),
    binary("pow", np.power, ALL + COMPLEX, domain=(0.5, 2)),
    binary("fmax", np.fmax, ALL, scalar=False),
    binary("fmin", np.fmin, ALL, scalar=False),
    binary("hypot", np.hypot, FLOATS, scalar=False),
    binary("logaddexp", _logaddexp, FLOATS + COMPLEX, scalar=False),
    binary("logaddexp2", np.logaddexp2, FLOATS, scalar=False),
    binary("copysign", np.copysign, ALL, result="float"),
    binary("nextafter", np.nextafter, FLOATS, scalar=False),
    binary("heaviside", np.heaviside, ALL, mixed=False, scalar=False),
    binary("bitwise_left_shift", np.left_shift, INTS, domain=(0, 7)),
    binary("bitwise_right_shift", np.right_shift, INTS, domain=(0, 7)),
    binary("eq", np.equal, ALL + COMPLEX, result="bool"),
    binary("ne", np.not_equal, ALL + COMPLEX, result="bool"),
    binary("lt", np.less, ALL, result="bool"),
    binary("le", np.less_equal, ALL, result="bool"),
    binary("gt", np.greater, ALL, result="bool"),
    binary("ge", np.greater_equal, ALL, result="bool"),
    binary("logical_and", np.logical_and, ALL + COMPLEX, result="bool",
           scalar=False),
    binary("logical_or", np.logical_or, ALL + COMPLEX, result="bool",
           scalar=False),
    binary("logical_xor", np.logical_xor, ALL + COMPLEX, result="bool",
           scalar=False),
    binary("bitwise_and", np.bitwise_and, BOOL + INTS),
    binary("bitwise_or", np.bitwise_or, BOOL + INTS),
    binary("bitwise_xor", np.bitwise_xor, BOOL + INTS),
    # operators go through the number slots, not the functions
    OpInfo("__add__", lambda x, y: x + y, np.add, NUMERIC, 2,
           torch_name="add", row="add"),
    OpInfo("__mul__", lambda x, y: x * y, np.multiply, NUMERIC, 2,
           torch_name="mul", row="mul"),
    OpInfo("__truediv__", lambda x, y: x / y, np.true_divide, ALL, 2,
           nonzero_rhs=True, torch_name="div", result="float", row="div"),
]

# Rows of csrc/ops/elementwise.def with no Python op of their own: kernels
# reached only through another op's backward. Each names the grad_table.py
# case whose backward runs it (test_op_rows.py checks the case exists and
# records the GradFn that calls the kernel).
INTERNAL_ROWS = {
    "trigamma": ("digamma", "DigammaBackward0"),  # digamma's derivative
    "relu_backward": ("relu", "ReluBackward0"),
    "sigmoid_backward": ("sigmoid", "SigmoidBackward0"),
    "tanh_backward": ("tanh", "TanhBackward0"),
    "silu_backward": ("silu", "SiluBackward0"),
    "gelu_backward": ("gelu", "GeluBackward0"),
    "gelu_tanh_backward": ("gelu_tanh", "GeluBackward0"),
}

# Where the input dtypes fastt accepts differ from torch's (CPU), by OpInfo
# name: (fastt only, torch only, why). Exact: test_op_rows.py fails when a
# divergence is fixed until its entry goes. test_ops.py compares with torch
# only on the dtypes both take.
DTYPE_DIVERGENCES = {
    # The pow row's dtype column is AllTypes: torch has no bool kernel
    # (pow(bool, bool) raises) but takes bool with a Python number, which
    # promotes it or, for an exponent of True, keeps it.
    "pow": (frozenset({"bool"}), frozenset(), "row dtypes AllTypes; torch "
            "raises on bool"),
}

# Reductions: fastt callable, NumPy reference, dtypes.
REDUCTIONS = [
    ("sum", lambda t: t.sum(), lambda a: a.sum(), FLOATS + ("int32",
                                                            "int64")),
    ("sum_dim", lambda t: t.sum(dim=-1), lambda a: a.sum(axis=-1), FLOATS),
    ("sum_keepdim", lambda t: t.sum(0, keepdim=True),
     lambda a: a.sum(axis=0, keepdims=True), FLOATS),
    ("mean", lambda t: t.mean(), lambda a: a.mean(), FLOATS),
    ("mean_dim", lambda t: t.mean(dim=(0,)), lambda a: a.mean(axis=0),
     FLOATS),
    ("amax", lambda t: t.amax(dim=-1), lambda a: a.max(axis=-1),
     FLOATS + INTS),
    ("amin", lambda t: t.amin(dim=0), lambda a: a.min(axis=0), FLOATS + INTS),
    ("max", lambda t: t.max(), lambda a: a.max(), FLOATS + INTS),
    ("max_dim", lambda t: t.max(dim=1).values, lambda a: a.max(axis=1),
     FLOATS),
    ("argmax", lambda t: t.argmax(dim=1), lambda a: a.argmax(axis=1),
     ("float32", "float64", "int64")),
    ("var", lambda t: t.var(), lambda a: a.var(ddof=1), ("float32",
                                                         "float64")),
    ("std_dim", lambda t: t.std(dim=0), lambda a: a.std(axis=0, ddof=1),
     ("float32", "float64")),
    ("prod", lambda t: t.prod(dim=1), lambda a: a.prod(axis=1),
     ("float32", "float64")),
    ("cumsum", lambda t: t.cumsum(1), lambda a: a.cumsum(axis=1),
     ("float32", "float64", "int64")),
    ("softmax", lambda t: t.softmax(-1),
     lambda a: np.exp(a - a.max(-1, keepdims=True)) /
     np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True),
     ("float32", "float64")),
    ("logsumexp", lambda t: t.logsumexp(dim=1),
     lambda a: np.log(np.exp(a).sum(axis=1)), ("float32", "float64")),
    ("all", lambda t: t.all(), lambda a: a.all(), ("bool",)),
    ("any_dim", lambda t: t.any(dim=0), lambda a: a.any(axis=0), ("bool",)),
    ("min_dim", lambda t: t.min(dim=0).values, lambda a: a.min(axis=0),
     FLOATS),
    ("argmin", lambda t: t.argmin(dim=0), lambda a: a.argmin(axis=0),
     ("float32", "float64", "int64")),
    ("norm", lambda t: t.norm(), lambda a: np.sqrt((a * a).sum()),
     ("float32", "float64")),
    ("cumprod", lambda t: t.cumprod(1), lambda a: a.cumprod(axis=1),
     ("float32", "float64")),
    ("cummax", lambda t: t.cummax(1).values,
     lambda a: np.maximum.accumulate(a, axis=1), FLOATS + INTS),
    ("log_softmax", lambda t: t.log_softmax(-1),
     lambda a: a - a.max(-1, keepdims=True) -
     np.log(np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)),
     ("float32", "float64")),
]

# The csrc/ops.def row each REDUCTIONS entry runs, where its name is not
# the row's (max() reduces through amax; std through var).
REDUCTION_ROWS = {"sum_dim": "sum", "sum_keepdim": "sum", "mean_dim": "mean",
                  "max": "amax", "std_dim": "var", "any_dim": "any",
                  "cummax": "cum_extreme_index"}


# Binary ops also run on these mixed dtype pairs (where the op supports
# both): int/bool with float, bfloat16 with float16, and widening within a
# category, in both argument orders. Result dtypes follow torch (promote).
MIXED_PAIRS = [("bool", "int64"), ("uint8", "int8"), ("int8", "int16"),
               ("int64", "int32"), ("uint8", "float16"), ("int64", "float32"),
               ("float32", "int16"), ("int16", "bfloat16"),
               ("float16", "bfloat16"), ("bfloat16", "float32"),
               ("float64", "float16"), ("float32", "float64"),
               ("bool", "float32"), ("bfloat16", "bool"),
               ("complex64", "float64"), ("int64", "complex64"),
               ("complex64", "complex128"), ("float32", "complex128"),
               ("bool", "complex64")]


def dtype_cases(op):
    """The input dtypes each row runs on: one per supported dtype (all
    inputs alike) and, for binary ops, the supported MIXED_PAIRS."""
    cases = [(d,) * op.arity for d in op.dtypes]
    if op.arity == 2 and op.mixed:
        cases += [p for p in MIXED_PAIRS if set(p) <= set(op.dtypes)]
    return cases


def random_array(rng, shape, dtype, domain=(-10, 10), nonzero=False):
    """A NumPy array of `shape` holding values exactly representable in
    fastt `dtype` (bfloat16 values are rounded by fastt itself)."""
    lo, hi = domain
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        info = np.iinfo(dtype)
        lo_i = max(int(math.ceil(lo)), int(info.min), -100)
        hi_i = min(int(math.floor(hi)), int(info.max), 100)
        if lo_i > hi_i:
            lo_i, hi_i = 0, 5
        a = rng.integers(lo_i, hi_i + 1, size=shape).astype(dtype)
        if nonzero:
            a[a == 0] = 1
        return a
    if dtype in COMPLEX:
        a = rng.uniform(lo, hi, size=shape) + \
            1j * rng.uniform(lo, hi, size=shape)
        if nonzero:
            a = np.where(np.abs(a) < 0.25, 0.25, a)
        return a.astype(dtype)
    a = rng.uniform(lo, hi, size=shape)
    if nonzero:
        a = np.where(np.abs(a) < 0.25, 0.25, a)
    if dtype == "float16":
        return a.astype(np.float16)
    return a.astype(np.float32 if dtype == "bfloat16" else dtype)


def to_fastt(arr, dtype):
    t = fastt.from_numpy(arr) if arr.ndim > 0 else fastt.tensor(arr)
    return t.to(getattr(fastt, dtype))


# Shapes of the samples: (shape of every input) or a tuple per input.
SHAPES_UNARY = [(), (0,), (7,), (45, 65), (2, 3, 4)]
SHAPES_BINARY = [((), ()), ((0,), (0,)), ((7,), (7,)), ((45, 65), (45, 65)),
                 ((3, 1, 4), (5, 1)), ((2, 3), ()), ((), (4,))]
