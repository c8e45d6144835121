// Backward formulas of the elementwise rows that declare their GradFn
// (Grad(Name, save) in csrc/ops/elementwise.def): one FASTT_FORMULA(Name)
// each, reading what the row's save column kept. Unary: saved[0] is the
// input (In) or the result (Out). Binary: saved[0]/[1] the tensor inputs,
// saved[2] the result (InOut); n.i0 says which side was a Python scalar
// (1: the second, 2: the first; its value is n.f0). Formulas use fastt ops
// only, so create_graph records them (double backward).
#include <cmath>

#include "autograd/formulas.h"
#include "csrc/ops.h"

namespace fastt {
namespace autograd {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Unary: the gradient of the one input.
inline void set0(Node& n, Tensor* gi, const Tensor& r) { gi[0] = r; }

// Binary: input k's saved tensor, or the scalar operand as a 0-d tensor
// like the other input.
Tensor operand(const Node& n, int k) {
  if ((k == 1 && n.i0 == 1) || (k == 0 && n.i0 == 2)) {
    const Tensor other = n.unpack(size_t(1 - k));
    return fastt::full({}, Scalar(n.f0), other.dtype(), other.device());
  }
  return n.unpack(size_t(k));
}
void set_binary(Node& n, Tensor* gi, int k, const Tensor& r) {
  gi[k] = fit(r, k == 0 ? n.shape0() : n.shape1(), n.dtypes[k]);
}

}  // namespace

// ---- unary ----
FASTT_FORMULA(Exp2) {  // y = 2^x: g * y * ln 2
  set0(n, gi, fastt::mul(fastt::mul(go[0], n.unpack(0)), Scalar(M_LN2)));
}
FASTT_FORMULA(Log10) {
  set0(n, gi, fastt::div(go[0], fastt::mul(n.unpack(0), Scalar(M_LN10))));
}
FASTT_FORMULA(Tan) {  // y = tan x: g * (1 + y^2)
  Tensor y = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], fastt::add(fastt::mul(y, y), Scalar(1))));
}
FASTT_FORMULA(Asin) {
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], fastt::rsqrt(fastt::sub(
                                    Scalar(1), fastt::mul(x, x)))));
}
FASTT_FORMULA(Acos) {
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::mul(fastt::neg(go[0]),
                         fastt::rsqrt(fastt::sub(Scalar(1), fastt::mul(x, x)))));
}
FASTT_FORMULA(Atan) {
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::div(go[0], fastt::add(fastt::mul(x, x), Scalar(1))));
}
FASTT_FORMULA(Sinh) { set0(n, gi, fastt::mul(go[0], fastt::cosh(n.unpack(0)))); }
FASTT_FORMULA(Cosh) { set0(n, gi, fastt::mul(go[0], fastt::sinh(n.unpack(0)))); }
FASTT_FORMULA(Asinh) {
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], fastt::rsqrt(fastt::add(fastt::mul(x, x),
                                                        Scalar(1)))));
}
FASTT_FORMULA(Acosh) {  // torch: g * rsqrt(x^2 - 1)
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], fastt::rsqrt(fastt::sub(fastt::mul(x, x),
                                                        Scalar(1)))));
}
FASTT_FORMULA(Atanh) {
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::div(go[0], fastt::sub(Scalar(1), fastt::mul(x, x))));
}
FASTT_FORMULA(Erfc) {  // -2/sqrt(pi) exp(-x^2)
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], fastt::mul(fastt::exp(fastt::neg(
                                               fastt::mul(x, x))),
                                           Scalar(-M_2_SQRTPI))));
}
FASTT_FORMULA(Erfinv) {  // y = erfinv x: sqrt(pi)/2 exp(y^2)
  Tensor y = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], fastt::mul(fastt::exp(fastt::mul(y, y)),
                                           Scalar(std::sqrt(kPi) / 2))));
}
FASTT_FORMULA(Lgamma) {
  set0(n, gi, fastt::mul(go[0], fastt::digamma(n.unpack(0))));
}
FASTT_FORMULA(Digamma) {
  set0(n, gi, fastt::mul(go[0], fastt::trigamma(n.unpack(0))));
}
FASTT_FORMULA(Deg2rad) { set0(n, gi, fastt::mul(go[0], Scalar(kPi / 180))); }
FASTT_FORMULA(Rad2deg) { set0(n, gi, fastt::mul(go[0], Scalar(180 / kPi))); }
FASTT_FORMULA(Frac) { set0(n, gi, go[0]); }

// ---- binary ----
// fmax/fmin: the gradient goes to the chosen operand; a tie or a NaN in
// the other operand picks the first (torch's masks).
static void fmax_fmin(Node& n, Tensor* go, Tensor* gi, bool is_max) {
  Tensor a = operand(n, 0), b = operand(n, 1);
  Tensor first = fastt::logical_or(is_max ? fastt::ge(a, b) : fastt::le(a, b),
                                   fastt::isnan(b));
  if (n.needs(0)) set_binary(n, gi, 0, fastt::where(first, go[0], Scalar(0)));
  if (n.needs(1)) set_binary(n, gi, 1, fastt::where(first, Scalar(0), go[0]));
}
FASTT_FORMULA(Fmax) { fmax_fmin(n, go, gi, true); }
FASTT_FORMULA(Fmin) { fmax_fmin(n, go, gi, false); }
FASTT_FORMULA(Hypot) {  // d/da = a / out
  Tensor out = n.unpack(2);
  if (n.needs(0))
    set_binary(n, gi, 0, fastt::div(fastt::mul(go[0], operand(n, 0)), out));
  if (n.needs(1))
    set_binary(n, gi, 1, fastt::div(fastt::mul(go[0], operand(n, 1)), out));
}
// logaddexp: d/da = 1 / (1 + e^(b - a)); base 2 likewise with 2^(b - a).
static void logaddexp_grad(Node& n, Tensor* go, Tensor* gi, bool base2) {
  Tensor a = operand(n, 0), b = operand(n, 1);
  auto share = [&](const Tensor& x, const Tensor& y) {
    Tensor d = fastt::sub(y, x);
    return fastt::div(go[0], fastt::add(base2 ? fastt::exp2(d) : fastt::exp(d),
                                        Scalar(1)));
  };
  if (n.needs(0)) set_binary(n, gi, 0, share(a, b));
  if (n.needs(1)) set_binary(n, gi, 1, share(b, a));
}
FASTT_FORMULA(Logaddexp) { logaddexp_grad(n, go, gi, false); }
FASTT_FORMULA(Logaddexp2) { logaddexp_grad(n, go, gi, true); }
FASTT_FORMULA(Copysign) {  // g * out / a, 0 where a == 0; none for b
  if (n.needs(0)) {
    Tensor a = operand(n, 0);
    Tensor ratio = fastt::where(fastt::eq(a, Scalar(0)), Scalar(0),
                                fastt::div(n.unpack(2), a));
    set_binary(n, gi, 0, fastt::mul(go[0], ratio));
  }
  if (n.needs(1))
    set_binary(n, gi, 1, fastt::zeros_like(go[0]));
}

}  // namespace autograd
}  // namespace fastt
