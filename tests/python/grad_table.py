"""The gradient table of tests/python/test_gradcheck.py: one GradCase per
differentiable op (and per interesting form of it). `fn(L, *xs)` is written
once against the shared torch/fastt API (L is the module: fastt or torch);
each input spec says its shape, value domain (chosen to stay away from the
op's non-differentiable points), layout (contiguous, transposed leaf, or
strided slice) and, for the dtype-promotion rows, a fixed dtype (else the
test's dtype: float64, and float32 against torch). To add an op: append one
row. An xfail is (exception type, reason) and strict: the test must raise
exactly that, and a fixed bug fails as XPASS until the xfail is removed."""
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Tuple, Type


@dataclass
class I:  # noqa: E742  an input spec
    shape: tuple
    dom: str = "any"  # any | pos | frac | big | zeros ... (see make_array)
    layout: str = "c"  # c | t (transposed leaf) | s (sliced, stride 2)
    grad: bool = True  # False: a plain (non-differentiated) input
    dtype: Optional[str] = None  # fixed dtype ("int64", "bfloat16", ...)

    def __post_init__(self):
        if self.dtype and not self.dtype.startswith(("float", "bfloat")):
            self.grad = False  # integer/bool tensors cannot require grad


@dataclass
class GradCase:
    name: str
    fn: Callable  # fn(L, *xs) -> Tensor or tuple of Tensors
    inputs: Sequence[I]
    xfail: Optional[Tuple[Type[BaseException], str]] = None  # (raises, why)
    tol32: tuple = (1e-4, 1e-5)  # (rtol, atol) vs torch in float32
    tol64: tuple = (1e-7, 1e-9)
    fd_tol: tuple = (1e-4, 1e-6)  # (rtol, atol) of the finite-difference check
    gradgrad: bool = True  # also check the double backward numerically
    gg_xfail: Optional[Tuple[Type[BaseException], str]] = None  # same, 2nd
    eps: float = 1e-6  # finite-difference step (larger through float32)
    torch: bool = True  # False: torch has no derivative to compare with
    meta: dict = field(default_factory=dict)


def M(shape, **kw):
    return I(tuple(shape), **kw)


A34 = I((3, 4))
P34 = I((3, 4), "pos")
T34 = I((3, 4), layout="t")
S34 = I((3, 4), layout="s")



CASES = []


def case(name, fn, *inputs, **kw):
    CASES.append(GradCase(name, fn, list(inputs), **kw))


# ---- unary elementwise ----
case("neg", lambda L, x: L.neg(x), A34)
case("neg_noncontig", lambda L, x: -x, T34)
case("abs", lambda L, x: L.abs(x), A34)
case("exp", lambda L, x: L.exp(x), T34)
case("expm1", lambda L, x: L.expm1(x), A34)
case("log", lambda L, x: L.log(x), P34)
case("log_noncontig", lambda L, x: x.log(), I((3, 4), "pos", "s"))
case("log1p", lambda L, x: L.log1p(x), P34)
case("log2", lambda L, x: L.log2(x), P34)
case("sqrt", lambda L, x: L.sqrt(x), P34)
case("rsqrt", lambda L, x: L.rsqrt(x), P34)
case("sin", lambda L, x: L.sin(x), A34)
case("cos", lambda L, x: L.cos(x), S34)
case("tanh", lambda L, x: L.tanh(x), A34)
case("sigmoid", lambda L, x: L.sigmoid(x), T34)
case("relu", lambda L, x: L.relu(x), A34, gradgrad=False)
case("leaky_relu", lambda L, x: L.nn.functional.leaky_relu(x, 0.1)
     if L.__name__ == "torch" else L.leaky_relu(x, 0.1), A34, gradgrad=False)
case("gelu", lambda L, x: L.nn.functional.gelu(x)
     if L.__name__ == "torch" else L.gelu(x), A34)
case("gelu_tanh", lambda L, x: L.nn.functional.gelu(x, approximate="tanh")
     if L.__name__ == "torch" else L.gelu(x, approximate="tanh"), A34)
case("silu", lambda L, x: L.nn.functional.silu(x)
     if L.__name__ == "torch" else L.silu(x), A34)
case("erf", lambda L, x: L.erf(x), A34)
case("reciprocal", lambda L, x: L.reciprocal(x), A34)
case("square", lambda L, x: L.square(x), T34)
case("sign", lambda L, x: L.sign(x), A34)
case("sgn", lambda L, x: L.sgn(x) * x, A34)  # (torch: sgn alone accumulates
# an immutable zero tensor into .grad, which its second backward rejects)
case("floor", lambda L, x: L.floor(x), I((3, 4), "frac"))
case("ceil", lambda L, x: L.ceil(x), I((3, 4), "frac"))
case("round", lambda L, x: L.round(x), I((3, 4), "frac"))
case("trunc", lambda L, x: L.trunc(x), I((3, 4), "frac"))
case("exp2", lambda L, x: L.exp2(x), A34)
case("log10", lambda L, x: L.log10(x), P34)
case("tan", lambda L, x: L.tan(x), I((3, 4), "unit"))
case("asin", lambda L, x: L.asin(x), I((3, 4), "unit"))
case("acos", lambda L, x: x.acos(), I((3, 4), "unit", "t"))
case("atan", lambda L, x: L.atan(x), A34)
case("sinh", lambda L, x: L.sinh(x), A34)
case("cosh", lambda L, x: L.cosh(x), S34)
case("asinh", lambda L, x: L.asinh(x), A34)
case("acosh", lambda L, x: L.acosh(x), I((3, 4), "gt1"))
case("atanh", lambda L, x: L.atanh(x), I((3, 4), "unit"))
case("erfc", lambda L, x: L.erfc(x), A34)
case("erfinv", lambda L, x: L.erfinv(x), I((3, 4), "unit"))
case("lgamma", lambda L, x: L.lgamma(x), P34)
# digamma's derivative (trigamma) is not differentiable in fastt yet.
case("digamma", lambda L, x: L.digamma(x), P34, gradgrad=False)
case("deg2rad", lambda L, x: L.deg2rad(x), A34)
case("rad2deg", lambda L, x: x.rad2deg(), T34)
case("frac", lambda L, x: L.frac(x), I((3, 4), "frac"))
case("unary_0d", lambda L, x: L.exp(x) * L.sin(x), I(()))
case("unary_empty", lambda L, x: L.tanh(x), I((0, 3)))

# ---- pow forms ----
case("pow_2", lambda L, x: L.pow(x, 2), A34)
case("pow_3_op", lambda L, x: x ** 3, T34)
case("pow_half", lambda L, x: x ** 0.5, P34)
case("pow_neg", lambda L, x: L.pow(x, -1.5), P34)
case("pow_0", lambda L, x: x ** 0, A34)
case("pow_1", lambda L, x: x ** 1, A34)
case("rpow", lambda L, x: 2.5 ** x, A34)
case("rpow_tensor_fn", lambda L, x: L.pow(2.5, x), A34)
case("pow_tensor", lambda L, x, y: L.pow(x, y), P34, A34)
case("pow_tensor_bcast", lambda L, x, y: x ** y, I((3, 1), "pos"),
     I((1, 4)))
case("pow_tensor_0d_exp", lambda L, x, y: x ** y, P34, I(()))

# ---- clamp family ----
case("clamp", lambda L, x: L.clamp(x, -1.0, 1.0), I((3, 4), "big"),
     gradgrad=False)
case("clamp_min", lambda L, x: L.clamp_min(x, 0.5), I((3, 4), "big"),
     gradgrad=False)
case("clamp_max", lambda L, x: x.clamp_max(0.5), I((3, 4), "big"),
     gradgrad=False)
case("clamp_kw_min_only", lambda L, x: x.clamp(min=-0.5), I((3, 4), "big"),
     gradgrad=False)
case("clip", lambda L, x: L.clip(x, -1.0, 1.0), I((3, 4), "big"),
     gradgrad=False)
case("clamp_tensor", lambda L, x, lo, hi: L.clamp(x, lo, hi),
     I((3, 4), "big"), I((3, 4), "lo"), I((1, 4), "hi"), gradgrad=False)

# ---- binary elementwise ----
BCAST = [("same", A34, T34), ("col_row", I((3, 1)), I((1, 4))),
         ("vec", A34, I((4,))), ("0d", A34, I(())),
         ("lead", I((2, 3, 4)), I((3, 1)))]
for tag, a, b in BCAST:
    case(f"add_{tag}", lambda L, x, y: L.add(x, y), a, b)
    case(f"sub_alpha_{tag}", lambda L, x, y: L.sub(x, y, alpha=2.5), a, b)
    case(f"mul_{tag}", lambda L, x, y: L.mul(x, y), a, b)
    case(f"div_{tag}", lambda L, x, y: L.div(x, y), a, b)
    case(f"maximum_{tag}", lambda L, x, y: L.maximum(x, y), a, b,
         gradgrad=False)
    case(f"minimum_{tag}", lambda L, x, y: L.minimum(x, y), a, b,
         gradgrad=False)
case("add_alpha", lambda L, x, y: L.add(x, y, alpha=-0.5), A34, S34)
case("add_scalar", lambda L, x: x + 3.0, A34)
case("radd_scalar", lambda L, x: 3.0 + x, A34)
case("rsub_scalar", lambda L, x: 3.0 - x, A34)
case("sub_scalar", lambda L, x: x - 3.0, A34)
case("mul_scalar", lambda L, x: x * 2.5, A34)
case("rmul_scalar", lambda L, x: 2.5 * x, A34)
case("div_scalar", lambda L, x: x / 2.5, A34)
case("rdiv_scalar", lambda L, x: 2.5 / x, A34)
case("true_divide", lambda L, x, y: L.true_divide(x, y), A34, A34)
case("mul_self", lambda L, x: x * x, A34)
case("div_self_chain", lambda L, x, y: (x * y) / (x + 3.0), P34, A34)
case("mul_float32_float64", lambda L, x, y: x * y.float(), A34, A34,
     eps=1e-2, fd_tol=(1e-3, 1e-4))
case("atan2", lambda L, x, y: L.atan2(x, y), A34, A34)
case("sinc", lambda L, x: L.sinc(x), A34)
case("i0", lambda L, x: L.i0(x), A34)
case("special_i0e", lambda L, x: L.special.i0e(x), A34)
case("special_i1", lambda L, x: L.special.i1(x), A34)
case("special_i1e", lambda L, x: L.special.i1e(x), A34)
case("special_entr", lambda L, x: L.special.entr(x), P34)
case("special_ndtr", lambda L, x: L.special.ndtr(x), A34)
case("special_ndtri", lambda L, x: L.special.ndtri(L.sigmoid(x)), A34)
case("special_log_ndtr", lambda L, x: L.special.log_ndtr(x), A34)
case("special_erfcx", lambda L, x: L.special.erfcx(x), A34)
case("xlogy", lambda L, x, y: L.xlogy(x, y), A34, P34)
case("xlogy_scalar", lambda L, y: L.xlogy(2.5, y), P34)
case("special_xlog1py", lambda L, x, y: L.special.xlog1py(x, y), A34, P34)
# d/dq only (torch has no derivative in s either)
case("special_zeta", lambda L, s, q: L.special.zeta(s, q),
     I((3, 4), "gt1", grad=False), P34)
case("hypot", lambda L, x, y: L.hypot(x, y), A34, T34)
case("hypot_bcast", lambda L, x, y: L.hypot(x, y), I((3, 1)), I((4,)))
case("logaddexp", lambda L, x, y: L.logaddexp(x, y), A34, A34)
case("logaddexp_bcast", lambda L, x, y: L.logaddexp(x, y), I((3, 1)),
     I((1, 4)))
case("logaddexp2", lambda L, x, y: L.logaddexp2(x, y), A34, S34)
case("copysign", lambda L, x, y: L.copysign(x, y), A34, A34)
case("copysign_scalar", lambda L, x: L.copysign(x, -1.5), A34)
case("nextafter", lambda L, x, y: L.nextafter(x, y), A34, A34)
case("fmax", lambda L, x, y: L.fmax(x, y), A34, A34, gradgrad=False)
case("fmin", lambda L, x, y: L.fmin(x, y), I((3, 1)), I((1, 4)),
     gradgrad=False)


def _scalar(L, v, like):
    """A 0-d tensor (atan2, maximum, minimum take no Python number, in
    torch as in fastt): the broadcast of a 0-d operand."""
    return L.tensor(v, dtype=like.dtype)


case("atan2_scalar", lambda L, x: L.atan2(x, _scalar(L, 0.5, x)), A34)
case("maximum_scalar", lambda L, x: L.maximum(x, _scalar(L, 0.5, x)),
     A34, gradgrad=False)
case("minimum_scalar", lambda L, x: L.minimum(x, _scalar(L, -0.5, x)),
     A34, gradgrad=False)
case("rremainder_scalar", lambda L, x: 2.5 % x, I((3, 4), "div"),
     gradgrad=False, torch=False)
case("atan2_bcast", lambda L, x, y: L.atan2(x, y), I((3, 1)), I((4,)))
case("remainder", lambda L, x, y: L.remainder(x, y), I((3, 4), "rem"),
     I((3, 4), "div"), gradgrad=False)
case("remainder_scalar", lambda L, x: L.remainder(x, 1.5), I((3, 4), "rem"),
     gradgrad=False)
case("fmod", lambda L, x, y: L.fmod(x, y), I((3, 4), "rem"),
     I((3, 4), "div"), gradgrad=False)
case("fmod_scalar", lambda L, x: L.fmod(x, 1.5), I((3, 4), "rem"),
     gradgrad=False)

# ---- ternary and masked ----
MASK = [[True, False, True, False], [False, False, True, True],
        [True, True, False, False]]
case("where", lambda L, x, y: L.where(L.tensor(MASK), x, y), A34, T34)
case("where_bcast", lambda L, x, y: L.where(L.tensor(MASK), x, y),
     I((3, 1)), I((4,)))
case("where_scalar_other", lambda L, x: L.where(L.tensor(MASK), x, 0.5),
     A34)
case("where_method", lambda L, x, y: x.where(L.tensor(MASK), y), A34, A34)
case("lerp_scalar", lambda L, a, b: L.lerp(a, b, 0.3), A34, T34)
case("lerp_tensor", lambda L, a, b, w: L.lerp(a, b, w), A34, A34,
     I((3, 4), "pos"))
case("lerp_bcast", lambda L, a, b, w: L.lerp(a, b, w), I((3, 1)), I((4,)),
     I((3, 4), "pos"))
case("addcmul", lambda L, a, b, c: L.addcmul(a, b, c, value=0.7), A34, A34,
     T34)
case("addcmul_bcast", lambda L, a, b, c: L.addcmul(a, b, c), I((4,)),
     I((3, 1)), A34)
case("addcdiv", lambda L, a, b, c: L.addcdiv(a, b, c, value=-1.3), A34,
     A34, A34)
case("addcdiv_bcast", lambda L, a, b, c: L.addcdiv(a, b, c), A34, I((3, 1)),
     I((4,)))
case("masked_fill", lambda L, x: L.masked_fill(x, L.tensor(MASK), 2.0), A34)
case("masked_fill_bcast_mask",
     lambda L, x: x.masked_fill(L.tensor([True, False, False, True]), -1.0),
     A34)

# ---- reductions ----
case("sum_all", lambda L, x: L.sum(x), T34)
case("sum_dim", lambda L, x: x.sum(1), A34)
case("sum_neg_dim_keepdim", lambda L, x: x.sum(-2, keepdim=True), A34)
case("sum_dims", lambda L, x: x.sum((0, 2)), I((2, 3, 4)))
case("sum_dims_keepdim", lambda L, x: x.sum([0, 2], keepdim=True),
     I((2, 3, 4), layout="s"))
case("sum_0d", lambda L, x: x.sum(), I(()))
case("sum_dtype", lambda L, x: x.sum(dtype=L.float64) * 1.0, A34)
case("mean_all", lambda L, x: L.mean(x), A34)
case("mean_dim", lambda L, x: x.mean(0), T34)
case("mean_dims_keepdim", lambda L, x: x.mean((1, 2), keepdim=True),
     I((2, 3, 4)))
case("prod_all", lambda L, x: L.prod(x), A34)
case("prod_dim", lambda L, x: x.prod(1), T34)
case("prod_dim_keepdim", lambda L, x: x.prod(0, keepdim=True), A34)
case("prod_with_zero", lambda L, x: (x * L.tensor(
    [[1., 0., 1., 1.], [1., 1., 1., 1.], [0., 1., 0., 1.]],
    dtype=x.dtype)).prod(1), A34)
case("prod_0d", lambda L, x: x.prod(), I(()))
case("amax_all", lambda L, x: L.amax(x), A34, gradgrad=False)
case("amax_dim", lambda L, x: x.amax(1), T34, gradgrad=False)
case("amax_dims_keepdim", lambda L, x: x.amax((0, 2), keepdim=True),
     I((2, 3, 4)), gradgrad=False)
case("amin_dim", lambda L, x: L.amin(x, 0), A34, gradgrad=False)
case("max_all", lambda L, x: x.max(), A34, gradgrad=False)
case("min_all", lambda L, x: L.min(x), T34, gradgrad=False)
case("max_dim", lambda L, x: L.max(x, 1), A34, gradgrad=False)
case("max_dim_keepdim", lambda L, x: x.max(0, keepdim=True), T34,
     gradgrad=False)
case("min_dim", lambda L, x: x.min(-1), S34, gradgrad=False)
case("max_dim_values", lambda L, x: x.max(dim=1).values, A34,
     gradgrad=False)
case("min_dim_0d", lambda L, x: x.min(0)[0], I(()), gradgrad=False)
case("var_all", lambda L, x: L.var(x), A34)
case("var_dim", lambda L, x: x.var(1), T34)
case("var_dim_keepdim_c0", lambda L, x: x.var(0, keepdim=True,
                                               correction=0), A34)
case("var_unbiased_false", lambda L, x: x.var(1, unbiased=False), A34)
case("std_all", lambda L, x: L.std(x), A34)
case("std_dim", lambda L, x: x.std(0), A34)
case("std_dims_keepdim", lambda L, x: x.std((0, 2), keepdim=True),
     I((2, 3, 4)))
case("var_mean", lambda L, x: L.var_mean(x, 1), A34)
case("var_mean_keepdim", lambda L, x: L.var_mean(x, 0, keepdim=True), T34)
case("std_mean", lambda L, x: L.std_mean(x, 1), A34)
case("std_mean_all", lambda L, x: L.std_mean(x), A34)
case("norm_2", lambda L, x: L.norm(x), A34)
case("norm_1", lambda L, x: x.norm(1), A34, gradgrad=False)
case("norm_3_dim", lambda L, x: x.norm(3, dim=1), A34)
case("norm_inf", lambda L, x: x.norm(float("inf")), A34, gradgrad=False)
case("norm_2_dim_keepdim", lambda L, x: x.norm(2, dim=0, keepdim=True), T34)
case("norm_1p5", lambda L, x: x.norm(1.5), A34)
case("logsumexp", lambda L, x: L.logsumexp(x, 1), A34)
case("logsumexp_keepdim", lambda L, x: x.logsumexp(0, keepdim=True), T34)
case("logsumexp_dims", lambda L, x: x.logsumexp((0, 2)), I((2, 3, 4)))
case("cumsum", lambda L, x: L.cumsum(x, 1), A34)
case("cumsum_dim0", lambda L, x: x.cumsum(0), T34)
case("cumsum_0d", lambda L, x: x.cumsum(0), I(()))
case("cumprod", lambda L, x: L.cumprod(x, 1), A34)
case("cumprod_dim0", lambda L, x: x.cumprod(0), T34)
Z34 = I((3, 4), "zeros")  # exact zeros: one, two in a row, none
case("cumprod_zeros", lambda L, x: L.cumprod(x, 1), Z34)
case("cumprod_zeros_dim0", lambda L, x: x.cumprod(0), I((3, 4), "zeros",
                                                          "t"))
case("prod_zeros", lambda L, x: x.prod(1), Z34)
case("prod_zeros_all", lambda L, x: x.prod(), I((2, 3), "zeros"))
case("softmax", lambda L, x: L.softmax(x, 1), A34)
case("softmax_dim0", lambda L, x: x.softmax(0), T34)
case("softmax_3d", lambda L, x: L.softmax(x, -2), I((2, 3, 4)))
case("log_softmax", lambda L, x: L.log_softmax(x, 1), A34)
case("log_softmax_dim0", lambda L, x: x.log_softmax(0), S34)

# ---- linear algebra ----
case("matmul_2d", lambda L, a, b: L.matmul(a, b), I((3, 5)), I((5, 4)))
case("matmul_t", lambda L, a, b: a @ b, I((3, 5), layout="t"),
     I((5, 4), layout="t"))
case("matmul_1d_2d", lambda L, a, b: L.matmul(a, b), I((5,)), I((5, 4)))
case("matmul_2d_1d", lambda L, a, b: L.matmul(a, b), I((3, 5)), I((5,)))
case("matmul_1d_1d", lambda L, a, b: L.matmul(a, b), I((5,)), I((5,)))
case("matmul_batched", lambda L, a, b: L.matmul(a, b), I((2, 3, 5)),
     I((2, 5, 4)))
case("matmul_bcast_batch", lambda L, a, b: L.matmul(a, b), I((2, 3, 5)),
     I((5, 4)))
case("matmul_bcast_batch2", lambda L, a, b: L.matmul(a, b), I((2, 1, 3, 5)),
     I((3, 5, 2)))
case("matmul_1d_3d", lambda L, a, b: L.matmul(a, b), I((5,)), I((2, 5, 4)))
case("matmul_3d_1d", lambda L, a, b: L.matmul(a, b), I((2, 3, 5)), I((5,)))
case("mm", lambda L, a, b: L.mm(a, b), I((3, 5)), I((5, 4), layout="t"))
case("bmm", lambda L, a, b: L.bmm(a, b), I((2, 3, 5)), I((2, 5, 4)))
case("addmm", lambda L, c, a, b: L.addmm(c, a, b), A34, I((3, 5)),
     I((5, 4)))
case("addmm_beta_alpha", lambda L, c, a, b: L.addmm(c, a, b, beta=0.5,
                                                   alpha=-2.0),
     I((4,)), I((3, 5)), I((5, 4)))
case("baddbmm", lambda L, c, a, b: L.baddbmm(c, a, b, beta=1.5, alpha=0.5),
     I((2, 3, 4)), I((2, 3, 5)), I((2, 5, 4)))
case("baddbmm_bcast", lambda L, c, a, b: L.baddbmm(c, a, b), I((3, 1)),
     I((2, 3, 5)), I((2, 5, 4)))
case("dot", lambda L, a, b: L.dot(a, b), I((5,)), I((5,)))
case("mv", lambda L, a, b: L.mv(a, b), I((3, 5)), I((5,)))
case("outer", lambda L, a, b: L.outer(a, b), I((3,)), I((4,)))
case("ger", lambda L, a, b: L.ger(a, b), I((3,)), I((4,)))
case("linear", lambda L, x, w, b: (L.nn.functional.linear
                                   if L.__name__ == "torch" else L.linear)(
    x, w, b), I((3, 5)), I((4, 5)), I((4,)))
case("linear_nobias", lambda L, x, w: (L.nn.functional.linear
                                       if L.__name__ == "torch"
                                       else L.linear)(x, w), I((3, 5)),
     I((4, 5), layout="t"))
case("linear_3d", lambda L, x, w, b: (L.nn.functional.linear
                                      if L.__name__ == "torch"
                                      else L.linear)(x, w, b),
     I((2, 3, 5)), I((4, 5)), I((4,)))
case("linear_1d", lambda L, x, w, b: (L.nn.functional.linear
                                      if L.__name__ == "torch"
                                      else L.linear)(x, w, b),
     I((5,)), I((4, 5)), I((4,)))

# ---- views, copies ----
case("view", lambda L, x: x.view(4, 3) * 1.0, A34)
case("view_neg1", lambda L, x: x.view(-1), A34)
case("reshape_noncontig", lambda L, x: x.reshape(12), T34)
case("reshape_fn", lambda L, x: L.reshape(x, (2, 6)), A34)
case("view_as", lambda L, x, y: x.view_as(y), A34, I((4, 3), grad=False))
case("transpose", lambda L, x: L.transpose(x, 0, 1), A34)
case("transpose_3d", lambda L, x: x.transpose(0, 2), I((2, 3, 4)))
case("t", lambda L, x: x.t(), A34)
case("mT", lambda L, x: x.mT, I((2, 3, 4)))
case("swapaxes", lambda L, x: x.swapaxes(0, 1), A34)
case("permute", lambda L, x: L.permute(x, (2, 0, 1)), I((2, 3, 4)))
case("permute_method", lambda L, x: x.permute(1, 2, 0), I((2, 3, 4)))
case("slice_step", lambda L, x: x[:, 1::2], A34)
case("slice_rows", lambda L, x: x[1:3], T34)
case("slice_neg", lambda L, x: x[-2:, :-1], A34)
case("select", lambda L, x: x[1], A34)
case("select_fn", lambda L, x: L.select(x, 1, -1), A34)
case("select_neg_dim", lambda L, x: x.select(-1, 2), I((2, 3, 4)))
case("expand", lambda L, x: x.expand(2, 3, 4), I((3, 1)))
case("expand_neg1", lambda L, x: x.expand(3, -1), I((1, 4)))
case("expand_as", lambda L, x, y: x.expand_as(y), I((4,)),
     I((3, 4), grad=False))
case("squeeze", lambda L, x: x.squeeze(), I((3, 1, 4)))
case("squeeze_dim", lambda L, x: L.squeeze(x, 1), I((3, 1, 4)))
case("unsqueeze", lambda L, x: x.unsqueeze(1), A34)
case("unsqueeze_neg", lambda L, x: L.unsqueeze(x, -1), A34)
case("diagonal", lambda L, x: x.diagonal(), A34)
case("diagonal_offset", lambda L, x: L.diagonal(x, 1), A34)
case("diagonal_neg_offset_dims", lambda L, x: x.diagonal(-1, 0, 2),
     I((3, 2, 4)))
case("unfold", lambda L, x: x.unfold(1, 2, 1), A34)
case("unfold_step", lambda L, x: x.unfold(0, 2, 1), T34)
case("as_strided", lambda L, x: x.as_strided((2, 3), (1, 2)), A34)
case("as_strided_offset", lambda L, x: L.as_strided(x, (3, 2), (2, 1), 1),
     A34)
case("flatten", lambda L, x: x.flatten(), I((2, 3, 4)))
case("flatten_range", lambda L, x: L.flatten(x, 1), I((2, 3, 4)))
case("unflatten", lambda L, x: x.unflatten(1, (2, 2)), A34)
case("narrow", lambda L, x: L.narrow(x, 1, 1, 2), A34)
case("narrow_method", lambda L, x: x.narrow(0, 1, 2), T34)
case("split", lambda L, x: x.split(2, 1), A34)
case("split_sizes", lambda L, x: L.split(x, [1, 2], 0), A34)
case("chunk", lambda L, x: x.chunk(2, 1), A34)
case("chunk_fn", lambda L, x: L.chunk(x, 3, 0), A34)
case("unbind", lambda L, x: x.unbind(1), A34)
case("unbind_fn", lambda L, x: L.unbind(x), A34)
case("view_chain", lambda L, x: x.t()[1:, ::2].reshape(-1).unsqueeze(0),
     A34)
case("to_float32", lambda L, x: x.to(L.float32), A34, eps=1e-2,
     fd_tol=(1e-3, 1e-4))
case("to_float64_from32", lambda L, x: x.float().to(L.float64) * 2, A34,
     eps=1e-2, fd_tol=(1e-3, 1e-4))
case("double", lambda L, x: x.double(), A34)
case("type_as", lambda L, x, y: x.type_as(y), A34, I((2,), grad=False))
case("clone", lambda L, x: L.clone(x), A34)
case("clone_method", lambda L, x: x.clone() * 2, T34)
case("contiguous", lambda L, x: x.t().contiguous(), A34)
case("contiguous_noop", lambda L, x: x.contiguous(), A34)

# ---- index / shape ops ----
IDX = [2, 0, 2]
case("index_select", lambda L, x: L.index_select(x, 0, L.tensor(IDX)), A34)
case("index_select_dim1", lambda L, x: x.index_select(1, L.tensor(IDX)),
     T34)
case("getitem_tensor", lambda L, x: x[L.tensor(IDX)], A34)
case("getitem_list", lambda L, x: x[[0, 2, 2]], A34)
case("getitem_2idx", lambda L, x: x[L.tensor([0, 2]), L.tensor([1, 3])],
     A34)
case("getitem_bool", lambda L, x: x[L.tensor(MASK)], A34)
case("getitem_mixed", lambda L, x: x[1:, L.tensor([0, 3])], A34)
case("masked_select", lambda L, x: L.masked_select(x, L.tensor(MASK)), A34)
case("gather", lambda L, x: L.gather(x, 1, L.tensor([[0, 2], [1, 1],
                                                     [3, 0]])), A34)
case("scatter_src", lambda L, x, s: L.scatter(x, 1, L.tensor(
    [[0, 2], [1, 3], [3, 0]]), s), A34, I((3, 2)))
case("scatter_value", lambda L, x: x.scatter(1, L.tensor(
    [[0, 2], [1, 3], [3, 0]]), 1.5), A34)
case("scatter_add", lambda L, x, s: L.scatter_add(x, 1, L.tensor(
    [[0, 0], [1, 3], [3, 3]]), s), A34, I((3, 2)))
case("index_add", lambda L, x, s: L.index_add(x, 0, L.tensor([2, 0]), s),
     A34, I((2, 4)))
case("index_put", lambda L, x, v: x.index_put((L.tensor([0, 2]),), v),
     A34, I((4,)))
case("cat", lambda L, x, y: L.cat([x, y], 0), A34, I((2, 4)))
case("cat_dim1", lambda L, x, y: L.cat([x, y], 1), A34, I((3, 2)))
case("stack", lambda L, x, y: L.stack([x, y], 1), A34, T34)
case("flip", lambda L, x: L.flip(x, (0,)), A34)
case("roll", lambda L, x: L.roll(x, 1, 1), A34)
case("tril", lambda L, x: L.tril(x), A34)
case("triu", lambda L, x: x.triu(1), A34)
case("repeat", lambda L, x: x.repeat(2, 1, 3), A34)
case("sort_values", lambda L, x: L.sort(x, 1)[0], A34,
     gradgrad=False)
case("topk_values", lambda L, x: x.topk(2, 1)[0], A34,
     gradgrad=False)
case("embedding", lambda L, w: (L.nn.functional.embedding
                                if L.__name__ == "torch" else L.embedding)(
    L.tensor([[0, 2], [2, 1]]), w), A34)
case("masked_scatter", lambda L, x, s: x.masked_scatter(L.tensor(MASK), s),
     A34, I((6,)))

# ---- nn ops: fused backward kernels; double backward through them raises
# NotImplementedError (tested in test_autograd.py), so gradgrad=False ----
case("layer_norm", lambda L, x, w, b: (L.nn.functional.layer_norm
                                       if L.__name__ == "torch"
                                       else L.layer_norm)(x, [4], w, b),
     A34, I((4,)), I((4,)), gradgrad=False)
case("rms_norm", lambda L, x, w: (L.nn.functional.rms_norm
                                  if L.__name__ == "torch"
                                  else L.rms_norm)(x, [4], w, 1e-5),
     A34, I((4,)), gradgrad=False)
case("conv2d", lambda L, x, w, b: (L.nn.functional.conv2d
                                   if L.__name__ == "torch" else L.conv2d)(
    x, w, b, padding=1), I((1, 2, 4, 3)), I((3, 2, 2, 2)), I((3,)),
    gradgrad=False)
case("conv1d", lambda L, x, w: (L.nn.functional.conv1d
                                if L.__name__ == "torch" else L.conv1d)(
    x, w), I((1, 2, 5)), I((3, 2, 2)), gradgrad=False)
case("avg_pool2d", lambda L, x: (L.nn.functional.avg_pool2d
                                 if L.__name__ == "torch"
                                 else L.avg_pool2d)(x, 2), I((1, 2, 4, 4)),
     gradgrad=False)
case("max_pool2d", lambda L, x: (L.nn.functional.max_pool2d
                                 if L.__name__ == "torch"
                                 else L.max_pool2d)(x, 2), I((1, 2, 4, 4)),
     gradgrad=False)
case("adaptive_avg_pool2d", lambda L, x: (
    L.nn.functional.adaptive_avg_pool2d if L.__name__ == "torch"
    else L.adaptive_avg_pool2d)(x, 1), I((1, 2, 3, 4)), gradgrad=False)

# ---- dtype promotion: gradients have their input's dtype and shape ----
# An integer or bool input takes no gradient; a float32 leaf in a float64
# op gets a float32 gradient; a 0-d float64 tensor does not promote a
# float32 one (torch.result_type), yet its gradient is float64; bfloat16
# and float16 meet in float32. Rows with an input of a fixed dtype below
# float64 are compared with torch only (not by finite differences).
F32, F16, BF16, F64 = "float32", "float16", "bfloat16", "float64"


def D(shape, dtype, dom="any", layout="c"):
    return I(tuple(shape), dom, layout, dtype=dtype)


case("promo_mul_int64_bcast", lambda L, x, k: x * k, A34,
     D((4,), "int64", "int"))
case("promo_add_int32_col_row", lambda L, k, x: L.add(k, x),
     D((3, 1), "int32", "int"), I((1, 4)))
case("promo_add_bool", lambda L, x, m: L.add(x, m) * m, T34,
     D((3, 4), "bool", "bool"))
case("promo_mul_uint8_0d", lambda L, k, x: k * x, D((3, 4), "uint8", "ipos"),
     I(()))
case("promo_div_by_int", lambda L, x, k: x / k, A34,
     D((3, 1), "int64", "int"))
case("promo_div_int_by_float", lambda L, k, x: L.div(k, x),
     D((4,), "int16", "int"), P34)
case("promo_pow_int_exponent", lambda L, x, k: L.pow(x, k), P34,
     D((3, 4), "int64", "ipos"))
case("promo_pow_int_base", lambda L, k, y: L.pow(k, y),
     D((3, 1), "int64", "ipos"), I((4,)))
case("promo_where_int_float", lambda L, k, x: L.where(L.tensor(MASK), k, x),
     D((3, 4), "int64", "int"), I((4,)))
case("promo_where_f32_f64", lambda L, x, y: L.where(L.tensor(MASK), x, y),
     D((3, 1), F32), I((4,)))
case("promo_mul_f32_f64_bcast", lambda L, x, y: x * y, D((3, 1), F32),
     I((2, 1, 4)))
case("promo_div_f64_f32", lambda L, x, y: x / y, D((3, 1), F64),
     I((1, 4), "pos"))
case("promo_add_0d_f64", lambda L, x, s: x + s, A34, D((), F64))
case("promo_mul_0d_f32_by_f64", lambda L, s, y: s * y, D((), F32), T34)
case("promo_int_times_0d_float", lambda L, k, s: k * s,
     D((3, 4), "int64", "int"), I(()))
case("promo_bf16_mul", lambda L, x, y: x * y, D((3, 4), BF16),
     D((4,), BF16))
case("promo_bf16_add_f32", lambda L, x, y: x + y, D((3, 1), BF16),
     D((4,), F32))
case("promo_bf16_div_f16", lambda L, x, y: x / y, D((3, 4), BF16),
     D((4,), F16, "pos"))
case("promo_bf16_sub_param", lambda L, x, y: L.sub(x, y, alpha=2.0),
     D((3, 1), BF16), I((4,)))
case("promo_bf16_pow_scalar", lambda L, x: L.pow(x, 1.5), D((3, 4), BF16,
                                                             "pos"))
case("promo_bf16_where_f16", lambda L, x, y: L.where(L.tensor(MASK), x, y),
     D((3, 1), BF16), D((4,), F16))
case("promo_bf16_exp_int", lambda L, x, k: L.exp(x) * k, D((3, 4), BF16),
     D((4,), "int32", "int"))
case("promo_f16_mul_int8", lambda L, x, k: x * k, D((3, 4), F16),
     D((3, 1), "int8", "int"))
case("promo_f16_pow_tensor", lambda L, x, y: L.pow(x, y), D((3, 4), F16,
                                                           "pos"), I((4,)))
case("promo_f16_div_param", lambda L, x, y: y / x, D((1, 4), F16, "pos"),
     I((3, 1)))
case("promo_f16_where_scalar", lambda L, x: L.where(L.tensor(MASK), x, 0.5),
     D((3, 4), F16))
