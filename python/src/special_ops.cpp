// Bindings of the special-function rows bound by hand (elementwise.def's
// special_* rows: functions only, as torch.special's; fastt/special.py
// names them) and of csrc/ops/special.h's composites.
#include "binder.h"

#include "csrc/ops/elementwise.h"
#include "csrc/ops/special.h"

namespace fastt {
namespace py {

#define FASTT_BIND_SPECIAL_UNARY(name)                                     \
  FASTT_BIND_FUNCTION(name, 1, with_out(out, fastt::name(input), #name),   \
                      (Tensor, input), (Kw<Out>, out))
FASTT_BIND_SPECIAL_UNARY(special_i0e)
FASTT_BIND_SPECIAL_UNARY(special_i1)
FASTT_BIND_SPECIAL_UNARY(special_i1e)
FASTT_BIND_SPECIAL_UNARY(special_entr)
FASTT_BIND_SPECIAL_UNARY(special_ndtr)
FASTT_BIND_SPECIAL_UNARY(special_ndtri)
FASTT_BIND_SPECIAL_UNARY(special_log_ndtr)
FASTT_BIND_SPECIAL_UNARY(special_erfcx)
FASTT_BIND_SPECIAL_UNARY(special_spherical_bessel_j0)
FASTT_BIND_SPECIAL_UNARY(special_bessel_j0)
FASTT_BIND_SPECIAL_UNARY(special_bessel_j1)
FASTT_BIND_SPECIAL_UNARY(special_bessel_y0)
FASTT_BIND_SPECIAL_UNARY(special_bessel_y1)
FASTT_BIND_SPECIAL_UNARY(special_modified_bessel_k0)
FASTT_BIND_SPECIAL_UNARY(special_modified_bessel_k1)
FASTT_BIND_SPECIAL_UNARY(special_scaled_modified_bessel_k0)
FASTT_BIND_SPECIAL_UNARY(special_scaled_modified_bessel_k1)
#undef FASTT_BIND_SPECIAL_UNARY

// A binary special function of a tensor and a tensor or number (either
// side; two numbers are torch's TypeError).
template <class F>
static Tensor tensor_or_number(const rd::Operand& a, const rd::Operand& b,
                               const char* name, F&& f) {
  if (!a.tensor && !b.tensor) {
    PyErr_Format(PyExc_TypeError,
                 "%s(): expected at least one tensor argument", name);
    throw_py();
  }
  if (a.tensor && b.tensor) return f(*a.tensor, *b.tensor);
  if (a.tensor) return f(*a.tensor, b.scalar);
  return f(a.scalar, *b.tensor);
}
FASTT_BIND_FUNCTION(
    special_xlog1py, 2,
    with_out(out, tensor_or_number(input, other, "special_xlog1py",
                                   [](const auto& x, const auto& y) {
                                     return fastt::special_xlog1py(x, y);
                                   }),
             "special_xlog1py"),
    (TensorOrScalar, input), (TensorOrScalar, other), (Kw<Out>, out))

FASTT_BIND_FUNCTION(
    special_zeta, 2,
    with_out(out, tensor_or_number(input, other, "special_zeta",
                                   [](const auto& x, const auto& y) {
                                     return fastt::special_zeta(x, y);
                                   }),
             "special_zeta"),
    (TensorOrScalar, input), (TensorOrScalar, other), (Kw<Out>, out))

// polygamma(n, input): the n-th derivative of digamma (special.h).
FASTT_BIND_FUNCTION(polygamma, 2,
                    with_out(out, fastt::polygamma(n, input), "polygamma"),
                    (Int, n), (Tensor, input), (Kw<Out>, out))
FASTT_BIND_METHOD(polygamma, 1, fastt::polygamma(n, t), (Int, n))
FASTT_BIND_METHOD(polygamma_, 1, fastt::polygamma_(tm, n), (Int, n))

// The orthogonal polynomials (x, n): tensors or numbers, as xlog1py.
#define FASTT_BIND_SPECIAL_POLY(name)                                     \
  FASTT_BIND_FUNCTION(                                                    \
      name, 2,                                                            \
      with_out(out, tensor_or_number(input, n, #name,                     \
                                     [](const auto& x, const auto& k) {   \
                                       return fastt::name(x, k);          \
                                     }),                                  \
               #name),                                                    \
      (TensorOrScalar, input), (TensorOrScalar, n), (Kw<Out>, out))
FASTT_BIND_SPECIAL_POLY(special_chebyshev_polynomial_t)
FASTT_BIND_SPECIAL_POLY(special_chebyshev_polynomial_u)
FASTT_BIND_SPECIAL_POLY(special_chebyshev_polynomial_v)
FASTT_BIND_SPECIAL_POLY(special_chebyshev_polynomial_w)
FASTT_BIND_SPECIAL_POLY(special_shifted_chebyshev_polynomial_t)
FASTT_BIND_SPECIAL_POLY(special_shifted_chebyshev_polynomial_u)
FASTT_BIND_SPECIAL_POLY(special_shifted_chebyshev_polynomial_v)
FASTT_BIND_SPECIAL_POLY(special_shifted_chebyshev_polynomial_w)
FASTT_BIND_SPECIAL_POLY(special_hermite_polynomial_h)
FASTT_BIND_SPECIAL_POLY(special_hermite_polynomial_he)
FASTT_BIND_SPECIAL_POLY(special_laguerre_polynomial_l)
FASTT_BIND_SPECIAL_POLY(special_legendre_polynomial_p)
#undef FASTT_BIND_SPECIAL_POLY

// gcd, lcm: tensors only (torch has no Python-number overload).
FASTT_BIND(gcd, 1, with_out(out, fastt::gcd(t, other), "gcd"),
           (Tensor, other), (Kw<Out>, out))
FASTT_BIND(gcd_, 1, fastt::gcd_(tm, other), (Tensor, other))
FASTT_BIND(lcm, 1, with_out(out, fastt::lcm(t, other), "lcm"),
           (Tensor, other), (Kw<Out>, out))
FASTT_BIND(lcm_, 1, fastt::lcm_(tm, other), (Tensor, other))

// ---- composites ----
// round: the row's op, or to `decimals` places (torch's keyword-only arg).
FASTT_BIND(round, 0, with_out(out, fastt::round(t, decimals), "round"),
           (Kw<IntOr<0>>, decimals), (Kw<Out>, out))
FASTT_BIND(round_, 0, fastt::round_(tm, decimals), (Kw<IntOr<0>>, decimals))
FASTT_BIND(logit, 0, with_out(out, fastt::logit(t, eps), "logit"),
           (OptDouble, eps), (Kw<Out>, out))
FASTT_BIND(logit_, 0, fastt::logit_(tm, eps), (OptDouble, eps))
FASTT_BIND(nan_to_num, 0,
           with_out(out, fastt::nan_to_num(t, nan, posinf, neginf),
                    "nan_to_num"),
           (OptDouble, nan), (OptDouble, posinf), (OptDouble, neginf),
           (Kw<Out>, out))
FASTT_BIND(nan_to_num_, 0, fastt::nan_to_num_(tm, nan, posinf, neginf),
           (OptDouble, nan), (OptDouble, posinf), (OptDouble, neginf))
// Rows without arguments (binder rows need one): the method, the function
// and their registry rows by hand.
#define FASTT_BIND_NO_ARGS(name, call)                                       \
  static const Signature sig_m_##name{#name, {}, 0};                         \
  static decltype(auto) call_m_##name(const Tensor& t) { return call; }      \
  FASTT_METHOD(name) {                                                       \
    FASTT_PY_BEGIN                                                           \
    const Tensor& t = to_tensor(self, "input");                              \
    if (nargs != 0 || kwnames) {                                             \
      PyObject* none[1];                                                     \
      parse_args(sig_m_##name, args, nargs, kwnames, none);                  \
    }                                                                        \
    return to_py(self, call_m_##name(t));                                    \
    FASTT_PY_END                                                             \
  }                                                                          \
  FASTT_FN(name)                                                             \
  static BindRow row_m_##name(#name, BindKind::Method, m_##name,             \
                              &sig_m_##name, nullptr, nullptr,               \
                              stub_result(&call_m_##name));                  \
  static BindRow row_f_##name(#name, BindKind::InputFunction, f_##name,      \
                              &sig_m_##name, nullptr, nullptr,               \
                              stub_result(&call_m_##name));
FASTT_BIND_NO_ARGS(positive, fastt::positive(t))
FASTT_BIND_NO_ARGS(isreal, fastt::isreal(t))
FASTT_BIND_FUNCTION(rsub, 2, other.visit([&](const auto& o) {
                      return fastt::rsub(input, o, alpha);
                    }),
                    (Tensor, input), (TensorOrScalar, other),
                    (Kw<ScalarOr<1>>, alpha))
FASTT_BIND_METHOD(float_power, 1,
                  with_out(out, exponent.visit([&](const auto& e) {
                    return fastt::float_power(t, e);
                  }), "float_power"),
                  (TensorOrScalar, exponent), (Kw<Out>, out))
FASTT_BIND_FUNCTION(
    float_power, 2,
    with_out(out, tensor_or_number(input, exponent, "float_power",
                                   [](const auto& x, const auto& y) {
                                     return fastt::float_power(x, y);
                                   }),
             "float_power"),
    (TensorOrScalar, input), (TensorOrScalar, exponent), (Kw<Out>, out))
FASTT_BIND_METHOD(float_power_, 1, exponent.visit([&](const auto& e) -> Tensor& {
                    return fastt::float_power_(tm, e);
                  }),
                  (TensorOrScalar, exponent))
FASTT_BIND(ldexp, 1, with_out(out, fastt::ldexp(t, other), "ldexp"),
           (Tensor, other), (Kw<Out>, out))
FASTT_BIND(ldexp_, 1, fastt::ldexp_(tm, other), (Tensor, other))
FASTT_BIND_NO_ARGS(frexp, fastt::frexp(t))
#undef FASTT_BIND_NO_ARGS

}  // namespace py
}  // namespace fastt
