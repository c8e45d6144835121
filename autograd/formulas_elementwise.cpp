// Backward formulas of the elementwise ops, one FASTT_FORMULA(Name) each:
// those of grad_fns.def's unary, binary and ternary sections (named by the
// Uses(...) rows of csrc/ops/elementwise.def and by the hand-recorded
// forms: gelu, leaky_relu, pow and clamp with scalars, where, lerp,
// addcmul/addcdiv, masked_fill; see formulas.cpp), then those of the
// GradFns the Grad(Name, save) rows declare. A formula reads what its
// recording saved; for a row, its save column: unary, saved[0] is the
// input (In) or the result (Out); binary, saved[0]/[1] the tensor inputs,
// saved[2] the result (InOut), and n.i0 says which side was a Python
// scalar (1: the second, 2: the first; its value is n.f0). Formulas use
// fastt ops only, so create_graph records them (double backward).
#include <cmath>
#include <complex>

#include "autograd/formulas.h"
#include "csrc/mutation.h"
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
// The Python scalar operand of a binary node (f0, its imaginary part in
// f1), conjugated when `conj`.
Scalar scalar_operand(const Node& n, bool conj) {
  if (n.f1 == 0) return Scalar(n.f0);
  return Scalar(Complex<double>(n.f0, conj ? -n.f1 : n.f1));
}
// y >= 0, for complex y: no imaginary part and a real part >= 0 (the
// masks of torch's pow gradients).
Tensor nonnegative(const Tensor& y) {
  if (!is_complex(y.dtype())) return fastt::ge(y, Scalar(0));
  return fastt::logical_and(fastt::eq(imag_part(y), Scalar(0)),
                            fastt::ge(real_part(y), Scalar(0)));
}
Scalar conj_scalar(const Scalar& s) {
  return s.is_complex() ? Scalar(Complex<double>(s.to_double(), -s.imag()))
                        : s;
}

void set_binary(Node& n, Tensor* gi, int k, const Tensor& r) {
  gi[k] = fit(r, k == 0 ? n.shape0() : n.shape1(), n.dtypes[k]);
}

}  // namespace

// ---- unary ----
FASTT_FORMULA(Neg) {
  const Tensor& g = go[0];
  gi[0] = fastt::neg(g);
}
FASTT_FORMULA(Abs) {
  const Tensor& g = go[0];
  gi[0] = fastt::mul(g, fastt::sgn(n.unpack(0)));  // z / |z|, 0 at 0
}
FASTT_FORMULA(Exp) {
  const Tensor& g = go[0];
  gi[0] = fastt::mul(g, conj_physical(n.unpack(0)));
}
FASTT_FORMULA(Expm1) {
  const Tensor& g = go[0];
  gi[0] = fastt::mul(g, conj_physical(fastt::add(n.unpack(0), Scalar(1))));
}
FASTT_FORMULA(Log) {
  const Tensor& g = go[0];
  gi[0] = fastt::div(g, conj_physical(n.unpack(0)));
}
FASTT_FORMULA(Log1p) {
  const Tensor& g = go[0];
  gi[0] = fastt::div(g, conj_physical(fastt::add(n.unpack(0), Scalar(1))));
}
FASTT_FORMULA(Log2) {
  const Tensor& g = go[0];
  gi[0] = fastt::div(g, fastt::mul(conj_physical(n.unpack(0)),
                                   Scalar(M_LN2)));
}
FASTT_FORMULA(Sqrt) {
  const Tensor& g = go[0];
  gi[0] = fastt::div(g, fastt::mul(conj_physical(n.unpack(0)), Scalar(2)));
}
FASTT_FORMULA(Rsqrt) {
  const Tensor& g = go[0];
  Tensor y = conj_physical(n.unpack(0));
  gi[0] = fastt::mul(fastt::mul(g, Scalar(-0.5)),
                     fastt::mul(fastt::mul(y, y), y));
}
FASTT_FORMULA(Sin) {
  const Tensor& g = go[0];
  gi[0] = fastt::mul(g, conj_physical(fastt::cos(n.unpack(0))));
}
FASTT_FORMULA(Cos) {
  const Tensor& g = go[0];
  gi[0] = fastt::mul(g, fastt::neg(conj_physical(fastt::sin(n.unpack(0)))));
}
FASTT_FORMULA(Tanh) {
  const Tensor& g = go[0];
  Tensor y = n.unpack(0);
  if (!grad_enabled() && g.dtype() == y.dtype() &&
      !is_complex(y.dtype())) {  // fused, one pass
    gi[0] = fastt::activation_backward("tanh", g, y);
    return;
  }
  y = conj_physical(y);
  gi[0] = fastt::mul(g, fastt::sub(Scalar(1), fastt::mul(y, y)));
}
FASTT_FORMULA(Sigmoid) {
  const Tensor& g = go[0];
  Tensor y = n.unpack(0);
  if (!grad_enabled() && g.dtype() == y.dtype() && !is_complex(y.dtype())) {
    gi[0] = fastt::activation_backward("sigmoid", g, y);
    return;
  }
  y = conj_physical(y);
  gi[0] = fastt::mul(g, fastt::mul(y, fastt::sub(Scalar(1), y)));
}
FASTT_FORMULA(Relu) {
  const Tensor& g = go[0];
  Tensor y = n.unpack(0);
  if (!grad_enabled() && g.dtype() == y.dtype())
    gi[0] = fastt::activation_backward("relu", g, y);
  else
    gi[0] = fastt::where(fastt::gt(y, Scalar(0)), g, Scalar(0));
}
FASTT_FORMULA(LeakyRelu) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0);
  gi[0] = fastt::where(fastt::gt(x, Scalar(0)), g,
                       fastt::mul(g, Scalar(n.f0)));
}
FASTT_FORMULA(Gelu) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0);
  if (!grad_enabled() && g.dtype() == x.dtype()) {
    gi[0] = fastt::activation_backward("gelu", g, x,
                                       n.i0 ? "tanh" : "none");
    return;
  }
  if (n.i0) {  // tanh approximation
    const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
    Tensor x2 = fastt::mul(x, x);
    Tensor inner = fastt::mul(fastt::mul(x, fastt::add(fastt::mul(x2, Scalar(c)), Scalar(1))), Scalar(k));
    Tensor t = fastt::tanh(inner);
    Tensor dinner = fastt::mul(
        fastt::add(fastt::mul(x2, Scalar(3 * c)), Scalar(1)), Scalar(k));
    Tensor left = fastt::mul(fastt::add(t, Scalar(1)), Scalar(0.5));
    Tensor right = fastt::mul(
        fastt::mul(fastt::mul(x, Scalar(0.5)),
                   fastt::sub(Scalar(1), fastt::mul(t, t))),
        dinner);
    gi[0] = fastt::mul(g, fastt::add(left, right));
  } else {
    Tensor cdf = fastt::mul(
        fastt::add(fastt::erf(fastt::mul(x, Scalar(M_SQRT1_2))),
                   Scalar(1)),
        Scalar(0.5));
    Tensor pdf = fastt::mul(
        fastt::exp(fastt::mul(fastt::mul(x, x), Scalar(-0.5))),
        Scalar(0.5 * M_2_SQRTPI * M_SQRT1_2));
    gi[0] = fastt::mul(g, fastt::add(cdf, fastt::mul(x, pdf)));
  }
}
FASTT_FORMULA(Silu) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0);
  if (!grad_enabled() && g.dtype() == x.dtype()) {
    gi[0] = fastt::activation_backward("silu", g, x);
    return;
  }
  Tensor s = fastt::sigmoid(x);
  gi[0] = fastt::mul(
      g, fastt::mul(s, fastt::add(fastt::mul(x, fastt::sub(Scalar(1), s)),
                                  Scalar(1))));
}
FASTT_FORMULA(Erf) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0);
  gi[0] = fastt::mul(
      g, fastt::mul(fastt::exp(fastt::neg(fastt::mul(x, x))),
                    Scalar(M_2_SQRTPI)));
}
FASTT_FORMULA(Reciprocal) {
  const Tensor& g = go[0];
  Tensor y = conj_physical(n.unpack(0));
  gi[0] = fastt::mul(fastt::neg(g), fastt::mul(y, y));
}
FASTT_FORMULA(Square) {
  const Tensor& g = go[0];
  gi[0] = fastt::mul(g, fastt::mul(conj_physical(n.unpack(0)), Scalar(2)));
}
FASTT_FORMULA(ZeroGrad) {
  const Tensor& g = go[0];
  // Unary rows: g's shape. Binary (rounded div): each input's own shape
  // (a broadcast input's gradient is not broadcast).
  if (n.next.size() == 1) {
    if (n.needs(0)) gi[0] = fastt::zeros_like(g).to(n.dtypes[0]);
    return;
  }
  for (size_t k = 0; k < n.next.size(); ++k)
    if (n.needs(k))
      gi[k] = fastt::zeros(k == 0 ? n.shape0() : n.shape1(), n.dtypes[k],
                           g.device());
}
FASTT_FORMULA(PowScalar) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0);
  const double e = n.s0.to<double>();
  if (FASTT_UNLIKELY(is_complex(x.dtype()) || n.s0.is_complex())) {
    // g conj(e x^(e-1)), 0 for e = 0; a real x keeps the real part.
    const Scalar& es = n.s0;
    if (e == 0 && es.imag() == 0) {
      gi[0] = fastt::zeros_like(x);
      return;
    }
    const Scalar em1 = es.is_complex()
                           ? Scalar(Complex<double>(e - 1, es.imag()))
                           : Scalar(e - 1);
    Tensor d = fastt::mul(fastt::pow(x, em1), es);
    gi[0] = fit(fastt::mul(g, conj_physical(d)), x.sizes(), x.dtype());
    return;
  }
  if (e == 0) {
    gi[0] = fastt::zeros_like(x);
  } else if (e == 2) {  // torch: grad * (2 * x)
    gi[0] = fastt::mul(g, fastt::mul(x, Scalar(2.0)));
  } else {
    gi[0] = fastt::mul(g, fastt::mul(fastt::pow(x, Scalar(e - 1)),
                                     Scalar(e)));
  }
}
FASTT_FORMULA(RPow) {  // c ** y: g * out * ln(c)
  const Tensor& g = go[0];
  const double c = n.s0.to<double>();
  if (FASTT_UNLIKELY(is_complex(n.dtypes[0]) || n.s0.is_complex())) {
    // g conj(out ln c), ln of c as a complex number; torch's mask: 0 where
    // c = 0 and y has no imaginary part and a real part >= 0.
    Tensor out = n.unpack(0);
    const std::complex<double> lc =
        std::log(std::complex<double>(c, n.s0.imag()));
    Tensor r = fastt::mul(fastt::mul(g, conj_physical(out)),
                          Scalar(Complex<double>(lc.real(), -lc.imag())));
    if (c == 0 && n.s0.imag() == 0) {
      Tensor y = n.unpack(1);
      r = fastt::where(nonnegative(y), Scalar(0), r);
    }
    gi[0] = fit(r, out.sizes(), n.dtypes[0]);
    return;
  }
  gi[0] = fastt::mul(fastt::mul(g, n.unpack(0)), Scalar(std::log(c)));
  if (c == 0) gi[0] = fastt::zeros_like(gi[0]);  // torch masks c == 0
}
FASTT_FORMULA(ClampScalar) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0);
  Tensor keep;
  if (n.i0 & 1) keep = fastt::ge(x, Scalar(n.f0));
  if (n.i0 & 2) {
    Tensor hi = fastt::le(x, Scalar(n.f1));
    keep = keep.defined() ? fastt::logical_and(keep, hi) : hi;
  }
  gi[0] = fastt::where(keep, g, Scalar(0));
}

// The Grad(...) rows' unary formulas.
FASTT_FORMULA(Exp2) {  // y = 2^x: g * y * ln 2
  set0(n, gi, fastt::mul(fastt::mul(go[0], conj_physical(n.unpack(0))),
                         Scalar(M_LN2)));
}
// sgn(z) = z / |z|: (g - sgn(z)^2 conj(g)) / (2 |z|), 0 at z = 0 (torch's
// sgn_backward); 0 for the reals.
FASTT_FORMULA(Sgn) {
  const Tensor& g = go[0];
  Tensor z = n.unpack(0);
  if (!is_complex(z.dtype())) {
    gi[0] = fastt::zeros_like(g).to(n.dtypes[0]);
    return;
  }
  Tensor s = fastt::sgn(z), r = fastt::abs(z);
  Tensor d = fastt::sub(g, fastt::mul(fastt::mul(s, s), conj_physical(g)));
  gi[0] = fastt::where(fastt::eq(r, Scalar(0)), Scalar(0),
                       fastt::div(d, fastt::mul(r, Scalar(2))));
}
FASTT_FORMULA(Log10) {
  set0(n, gi, fastt::div(go[0], fastt::mul(conj_physical(n.unpack(0)),
                                           Scalar(M_LN10))));
}
// The complex rows: g times the conjugate derivative (torch's convention),
// conj_physical(x) being x itself for the reals.
FASTT_FORMULA(Tan) {  // y = tan x: g * (1 + y^2)
  Tensor y = conj_physical(n.unpack(0));
  set0(n, gi, fastt::mul(go[0], fastt::add(fastt::mul(y, y), Scalar(1))));
}
FASTT_FORMULA(Asin) {
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], conj_physical(fastt::rsqrt(fastt::sub(
                                    Scalar(1), fastt::mul(x, x))))));
}
FASTT_FORMULA(Acos) {
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::mul(fastt::neg(go[0]),
                         conj_physical(fastt::rsqrt(
                             fastt::sub(Scalar(1), fastt::mul(x, x))))));
}
FASTT_FORMULA(Atan) {
  Tensor x = conj_physical(n.unpack(0));
  set0(n, gi, fastt::div(go[0], fastt::add(fastt::mul(x, x), Scalar(1))));
}
FASTT_FORMULA(Sinh) {
  set0(n, gi, fastt::mul(go[0], conj_physical(fastt::cosh(n.unpack(0)))));
}
FASTT_FORMULA(Cosh) {
  set0(n, gi, fastt::mul(go[0], conj_physical(fastt::sinh(n.unpack(0)))));
}
FASTT_FORMULA(Asinh) {
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], conj_physical(fastt::rsqrt(fastt::add(
                                    fastt::mul(x, x), Scalar(1))))));
}
FASTT_FORMULA(Acosh) {  // torch: g * rsqrt(x^2 - 1)
  Tensor x = n.unpack(0);
  if (is_complex(x.dtype())) {
    // conj(rsqrt(x + 1) rsqrt(x - 1)), as torch: rsqrt(x^2 - 1) takes
    // the other sign on part of the plane.
    Tensor d = fastt::mul(fastt::rsqrt(fastt::add(x, Scalar(1))),
                          fastt::rsqrt(fastt::sub(x, Scalar(1))));
    set0(n, gi, fastt::mul(go[0], conj_physical(d)));
    return;
  }
  set0(n, gi, fastt::mul(go[0], fastt::rsqrt(fastt::sub(fastt::mul(x, x),
                                                        Scalar(1)))));
}
FASTT_FORMULA(Atanh) {
  Tensor x = conj_physical(n.unpack(0));
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
// Formulas of GradFns that share a body call one helper, which tests n.fn.
static void add_sub_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
  const bool sub = n.fn == GradFn::Sub;
  const Scalar alpha = conj_scalar(n.s0);  // a + alpha b
  if (n.needs(0)) {
    gi[0] = fit(n.i0 == 2 ? fastt::mul(g, alpha) : g, n.shape0(),
                n.dtypes[0]);
    if (n.i0 == 2 && sub) gi[0] = fastt::neg(gi[0]);
  }
  if (n.needs(1)) {
    Tensor gb = n.s0.to<double>() == 1 && !n.s0.is_complex()
                    ? g
                    : fastt::mul(g, alpha);
    if (sub) gb = fastt::neg(gb);
    gi[1] = fit(gb, n.shape1(), n.dtypes[1]);
  }
}
FASTT_FORMULA(Add) { add_sub_grad(n, go, gi); }
FASTT_FORMULA(Sub) { add_sub_grad(n, go, gi); }
// Complex operands enter conjugated (conj_physical is free for reals).
FASTT_FORMULA(Mul) {
  const Tensor& g = go[0];
  if (n.i0 == 1) {  // tensor * scalar
    gi[0] = fit(fastt::mul(g, scalar_operand(n, true)), n.shape0(),
                n.dtypes[0]);
    return;
  }
  if (n.i0 == 2) {
    gi[1] = fit(fastt::mul(g, scalar_operand(n, true)), n.shape1(),
                n.dtypes[1]);
    return;
  }
  if (n.needs(0))
    gi[0] = fit(fastt::mul(g, conj_physical(n.unpack(
                                  FASTT_MUTANT(MulGradSwap) ? 0 : 1))),
                n.shape0(), n.dtypes[0]);
  if (n.needs(1))
    gi[1] = fit(fastt::mul(g, conj_physical(n.unpack(0))), n.shape1(),
                n.dtypes[1]);
}
FASTT_FORMULA(Div) {
  const Tensor& g = go[0];
  if (n.i0 == 1) {
    gi[0] = fit(fastt::div(g, scalar_operand(n, true)), n.shape0(),
                n.dtypes[0]);
    return;
  }
  Tensor b = n.unpack(1);
  if (n.i0 == 2) {  // c / b
    Tensor q = fastt::div(scalar_operand(n, false), fastt::mul(b, b));
    gi[1] = fit(fastt::mul(fastt::neg(g), conj_physical(q)), n.shape1(),
                n.dtypes[1]);
    return;
  }
  Tensor bc = conj_physical(b);
  if (n.needs(0)) gi[0] = fit(fastt::div(g, bc), n.shape0(), n.dtypes[0]);
  if (n.needs(1)) {
    Tensor a = conj_physical(n.unpack(0));
    gi[1] = fit(fastt::neg(fastt::div(fastt::mul(g, a), fastt::mul(bc, bc))),
                n.shape1(), n.dtypes[1]);
  }
}
FASTT_FORMULA(Pow) {
  const Tensor& g = go[0];
  Tensor a = n.unpack(0), b = n.unpack(1);
  if (FASTT_UNLIKELY(is_complex(a.dtype()) || is_complex(b.dtype()))) {
    // torch's: g conj(b a^(b-1)), 0 where b = 0; g conj(out log a), 0
    // where a = 0 and b >= 0 (a promoted to out's dtype first).
    Tensor out = n.unpack(2);
    if (n.needs(0)) {
      Tensor d = fastt::mul(b, fastt::pow(a, fastt::sub(b, Scalar(1))));
      Tensor r = fastt::where(fastt::eq(b, Scalar(0)), Scalar(0),
                              fastt::mul(g, conj_physical(d)));
      gi[0] = fit(r, n.shape0(), n.dtypes[0]);
    }
    if (n.needs(1)) {
      Tensor ap = a.to(out.dtype());
      Tensor d = fastt::mul(out, fastt::log(ap));
      Tensor r = fastt::mul(g, conj_physical(d));
      r = fastt::where(fastt::logical_and(fastt::eq(ap, Scalar(0)),
                                          nonnegative(b)),
                       Scalar(0), r);
      gi[1] = fit(r, n.shape1(), n.dtypes[1]);
    }
    return;
  }
  if (n.needs(0)) {
    Tensor r = fastt::mul(fastt::mul(g, b),
                          fastt::pow(a, fastt::sub(b, Scalar(1))));
    r = fastt::where(fastt::logical_and(fastt::eq(b, Scalar(0)),
                                        fastt::ge(a, Scalar(0))),
                     Scalar(0), r);
    gi[0] = fit(r, n.shape0(), n.dtypes[0]);
  }
  if (n.needs(1)) {
    Tensor out = n.unpack(2);
    Tensor r = fastt::mul(fastt::mul(g, out), fastt::log(a));
    r = fastt::where(fastt::logical_and(fastt::eq(a, Scalar(0)),
                                        fastt::ge(b, Scalar(0))),
                     Scalar(0), r);
    gi[1] = fit(r, n.shape1(), n.dtypes[1]);
  }
}
// maximum, minimum: a tie splits the gradient in halves.
static void maximum_minimum_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
  Tensor a = n.unpack(0), b = n.unpack(1);
  // A Python-scalar operand is not saved: rebuild it as a 0-d tensor.
  if (n.i0 == 1) b = fastt::full({}, Scalar(n.f0), a.dtype(), a.device());
  if (n.i0 == 2) a = fastt::full({}, Scalar(n.f0), b.dtype(), b.device());
  Tensor wins = n.fn == GradFn::Maximum ? fastt::gt(a, b) : fastt::lt(a, b);
  Tensor tie = fastt::eq(a, b);
  Tensor half = fastt::mul(g, Scalar(0.5));
  if (n.needs(0))
    gi[0] = fit(fastt::where(wins, g, fastt::where(tie, half, Scalar(0))),
                n.shape0(), n.dtypes[0]);
  if (n.needs(1)) {
    Tensor loses = fastt::logical_not(fastt::logical_or(wins, tie));
    gi[1] = fit(fastt::where(loses, g, fastt::where(tie, half, Scalar(0))),
                n.shape1(), n.dtypes[1]);
  }
}
FASTT_FORMULA(Maximum) { maximum_minimum_grad(n, go, gi); }
FASTT_FORMULA(Minimum) { maximum_minimum_grad(n, go, gi); }
FASTT_FORMULA(Atan2) {
  const Tensor& g = go[0];
  Tensor a = n.unpack(0), b = n.unpack(1);
  if (n.i0 == 1) b = fastt::full({}, Scalar(n.f0), a.dtype(), a.device());
  if (n.i0 == 2) a = fastt::full({}, Scalar(n.f0), b.dtype(), b.device());
  Tensor den = fastt::add(fastt::mul(a, a), fastt::mul(b, b));
  if (n.needs(0))
    gi[0] = fit(fastt::div(fastt::mul(g, b), den), n.shape0(), n.dtypes[0]);
  if (n.needs(1))
    gi[1] = fit(fastt::div(fastt::mul(fastt::neg(g), a), den), n.shape1(),
                n.dtypes[1]);
}
// remainder (floor quotient), fmod (truncated quotient).
static void remainder_fmod_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
  if (n.i0 == 1) {
    gi[0] = fit(g, n.shape0(), n.dtypes[0]);
    return;
  }
  if (n.needs(0)) gi[0] = fit(g, n.shape0(), n.dtypes[0]);
  if (n.needs(1)) {
    Tensor a = n.unpack(0), b = n.unpack(1);
    if (n.i0 == 2)  // scalar % tensor: the scalar was not saved
      a = fastt::full({}, Scalar(n.f0), b.dtype(), b.device());
    Tensor q = n.fn == GradFn::Remainder
                   ? fastt::div(a, b, "floor")
                   : fastt::div(a, b, "trunc");
    gi[1] = fit(fastt::mul(fastt::neg(g), q), n.shape1(), n.dtypes[1]);
  }
}
FASTT_FORMULA(Remainder) { remainder_fmod_grad(n, go, gi); }
FASTT_FORMULA(Fmod) { remainder_fmod_grad(n, go, gi); }
FASTT_FORMULA(Where) {
  const Tensor& g = go[0];
  Tensor c = n.unpack(0);
  if (n.needs(0))
    gi[0] = fit(fastt::where(c, g, Scalar(0)), n.shape0(), n.dtypes[0]);
  if (n.needs(1))
    gi[1] = fit(fastt::where(c, Scalar(0), g), n.shape1(), n.dtypes[1]);
}
FASTT_FORMULA(Clamp) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0), lo = n.unpack(1), hi = n.unpack(2);
  Tensor keep;
  Tensor below, above;
  if (lo.defined()) {
    below = fastt::lt(x, lo);
    keep = fastt::logical_not(below);
  }
  if (hi.defined()) {
    above = fastt::gt(x, hi);
    Tensor k = fastt::logical_not(above);
    keep = keep.defined() ? fastt::logical_and(keep, k) : k;
  }
  if (n.needs(0))
    gi[0] = fit(fastt::where(keep, g, Scalar(0)), n.shape0(), n.dtypes[0]);
  // Both bounds with min > max: the result is max, its gradient max's; a
  // value below min == max gets none (torch's clamp_backward_min_max).
  if (lo.defined() && hi.defined()) {
    below = fastt::logical_and(below, fastt::lt(lo, hi));
    above = fastt::logical_or(above, fastt::gt(lo, hi));
  }
  if (n.needs(1))
    gi[1] = fit(fastt::where(below, g, Scalar(0)), lo.sizes(), lo.dtype());
  if (n.needs(2))
    gi[2] = fit(fastt::where(above, g, Scalar(0)), hi.sizes(), hi.dtype());
}
FASTT_FORMULA(Lerp) {
  const Tensor& g = go[0];
  Tensor a = n.unpack(0), e = n.unpack(1);
  Tensor w = n.saved.size() > 2 ? n.unpack(2) : Tensor();
  // g conj(1 - w), g conj(w), g conj(e - a): conj_physical is the
  // identity for the reals.
  if (w.defined()) {
    Tensor wc = conj_physical(w);
    if (n.needs(0))
      gi[0] = fit(fastt::mul(g, fastt::sub(Scalar(1), wc)), n.shape0(),
                  n.dtypes[0]);
    if (n.needs(1)) gi[1] = fit(fastt::mul(g, wc), n.shape1(), n.dtypes[1]);
    if (n.needs(2))
      gi[2] = fit(fastt::mul(g, conj_physical(fastt::sub(e, a))), w.sizes(),
                  w.dtype());
  } else {
    const Scalar wc = conj_scalar(n.s0);
    const Scalar vc =
        wc.is_complex()
            ? Scalar(Complex<double>(1 - wc.to_double(), -wc.imag()))
            : Scalar(1 - wc.to_double());
    if (n.needs(0))
      gi[0] = fit(fastt::mul(g, vc), n.shape0(), n.dtypes[0]);
    if (n.needs(1))
      gi[1] = fit(fastt::mul(g, wc), n.shape1(), n.dtypes[1]);
  }
}
// addcmul, addcdiv (value in s0).
static void addcmul_addcdiv_grad(Node& n, Tensor* go, Tensor* gi) {
  const Tensor& g = go[0];
  Tensor t1 = n.unpack(0), t2 = n.unpack(1);
  if (n.needs(0)) gi[0] = fit(g, n.shape0(), n.dtypes[0]);
  // The real formulas with value, t1 and t2 conjugated.
  Tensor gv = fastt::mul(g, conj_scalar(n.s0));
  t1 = conj_physical(t1);
  t2 = conj_physical(t2);
  if (n.fn == GradFn::Addcmul) {
    if (n.needs(1)) gi[1] = fit(fastt::mul(gv, t2), t1.sizes(), t1.dtype());
    if (n.needs(2)) gi[2] = fit(fastt::mul(gv, t1), t2.sizes(), t2.dtype());
  } else {
    if (n.needs(1)) gi[1] = fit(fastt::div(gv, t2), t1.sizes(), t1.dtype());
    if (n.needs(2))
      gi[2] = fit(fastt::neg(fastt::div(fastt::mul(gv, t1),
                                        fastt::mul(t2, t2))),
                  t2.sizes(), t2.dtype());
  }
}
FASTT_FORMULA(Addcmul) { addcmul_addcdiv_grad(n, go, gi); }
FASTT_FORMULA(Addcdiv) { addcmul_addcdiv_grad(n, go, gi); }
FASTT_FORMULA(MaskedFill) {
  const Tensor& g = go[0];
  gi[0] = fit(fastt::where(n.unpack(0), Scalar(0), g), n.shape0(),
              n.dtypes[0]);
}

// The Grad(...) rows' binary formulas.
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
// d/dx log(e^x + e^y) = 1 / (1 + e^(y - x)) (torch's), conjugated for
// complex; there, where Re(y - x) > 0, as q / (1 + q) with q = e^(x - y):
// e^(y - x) overflows to inf + inf i for far-apart operands, and a
// complex inf / inf is NaN.
static void logaddexp_grad(Node& n, Tensor* go, Tensor* gi, bool base2) {
  Tensor a = operand(n, 0), b = operand(n, 1);
  auto power = [&](const Tensor& d) {
    return base2 ? fastt::exp2(d) : fastt::exp(d);
  };
  auto share = [&](const Tensor& x, const Tensor& y) {
    Tensor d = fastt::sub(y, x);
    if (!is_complex(d.dtype()))
      return fastt::div(go[0], fastt::add(power(d), Scalar(1)));
    Tensor flip = fastt::gt(real_part(d), Scalar(0));
    Tensor q = power(fastt::where(flip, fastt::neg(d), d));
    Tensor s = fastt::div(fastt::where(flip, q, fastt::ones_like(q)),
                          fastt::add(q, Scalar(1)));
    return fastt::mul(go[0], conj_physical(s));
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
FASTT_FORMULA(Nextafter) {  // one ulp from a: g for a, none for b (torch's)
  if (n.needs(0)) set_binary(n, gi, 0, go[0]);
  if (n.needs(1)) set_binary(n, gi, 1, fastt::zeros_like(go[0]));
}

// ---- special functions (the rows of elementwise.def's special block) ----
FASTT_FORMULA(Sinc) {  // (cos(pi x) - sinc(x)) / x, 0 at 0; conjugated
  Tensor x = n.unpack(0);
  Tensor d = fastt::div(
      fastt::sub(fastt::cos(fastt::mul(x, Scalar(kPi))), fastt::sinc(x)), x);
  set0(n, gi, fastt::mul(go[0], fastt::where(fastt::eq(x, Scalar(0)),
                                             Scalar(0), conj_physical(d))));
}
FASTT_FORMULA(I0) {
  set0(n, gi, fastt::mul(go[0], fastt::special_i1(n.unpack(0))));
}
FASTT_FORMULA(SpecialI0e) {  // i1e(x) - sign(x) i0e(x)
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], fastt::sub(fastt::special_i1e(x),
                                           fastt::mul(fastt::sign(x),
                                                      fastt::special_i0e(x)))));
}
FASTT_FORMULA(SpecialI1) {  // i0(x) - i1(x) / x, 1/2 at 0
  Tensor x = n.unpack(0);
  Tensor d = fastt::sub(fastt::i0(x), fastt::div(fastt::special_i1(x), x));
  set0(n, gi, fastt::mul(go[0], fastt::where(fastt::eq(x, Scalar(0)),
                                             Scalar(0.5), d)));
}
FASTT_FORMULA(SpecialI1e) {  // i0e(x) - i1e(x) (sign(x) + 1 / x), 1/2 at 0
  Tensor x = n.unpack(0);
  Tensor d = fastt::sub(
      fastt::special_i0e(x),
      fastt::mul(fastt::special_i1e(x),
                 fastt::add(fastt::sign(x), fastt::reciprocal(x))));
  set0(n, gi, fastt::mul(go[0], fastt::where(fastt::eq(x, Scalar(0)),
                                             Scalar(0.5), d)));
}
FASTT_FORMULA(SpecialEntr) {  // -(1 + log x)
  set0(n, gi, fastt::mul(go[0], fastt::neg(fastt::add(
                                    fastt::log(n.unpack(0)), Scalar(1)))));
}
FASTT_FORMULA(SpecialNdtr) {  // phi(x)
  Tensor x = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], fastt::mul(fastt::exp(fastt::mul(
                                               fastt::mul(x, x), Scalar(-0.5))),
                                           Scalar(0.5 * M_2_SQRTPI * M_SQRT1_2))));
}
FASTT_FORMULA(SpecialNdtri) {  // 1 / phi(y): sqrt(2 pi) exp(y^2 / 2)
  Tensor y = n.unpack(0);
  set0(n, gi, fastt::mul(go[0], fastt::mul(fastt::exp(fastt::mul(
                                               fastt::mul(y, y), Scalar(0.5))),
                                           Scalar(std::sqrt(2 * kPi)))));
}
FASTT_FORMULA(SpecialLogNdtr) {  // phi(x) / Phi(x) = exp(-x^2/2 - log Phi)
  Tensor x = n.unpack(0);
  Tensor e = fastt::neg(fastt::add(fastt::mul(fastt::mul(x, x), Scalar(0.5)),
                                   fastt::special_log_ndtr(x)));
  set0(n, gi, fastt::mul(go[0], fastt::mul(fastt::exp(e),
                                           Scalar(0.5 * M_2_SQRTPI * M_SQRT1_2))));
}
FASTT_FORMULA(SpecialErfcx) {  // 2 x erfcx(x) - 2 / sqrt(pi)
  Tensor x = n.unpack(0);
  Tensor d = fastt::sub(fastt::mul(fastt::mul(x, fastt::special_erfcx(x)),
                                   Scalar(2)),
                        Scalar(M_2_SQRTPI));
  set0(n, gi, fastt::mul(go[0], d));
}
// x log y: d/dx = xlogy(x != 0, y), d/dy = x / y; log1p likewise.
static void xlog_grad(Node& n, Tensor* go, Tensor* gi, bool one_plus) {
  Tensor a = operand(n, 0), b = operand(n, 1);
  if (n.needs(0)) {
    Tensor nz = fastt::ne(a, Scalar(0)).to(go[0].dtype());
    Tensor d = one_plus ? fastt::special_xlog1py(nz, b) : fastt::xlogy(nz, b);
    set_binary(n, gi, 0, fastt::mul(go[0], d));
  }
  if (n.needs(1)) {
    Tensor den = one_plus ? fastt::add(b, Scalar(1)) : b;
    set_binary(n, gi, 1, fastt::div(fastt::mul(go[0], a), den));
  }
}
FASTT_FORMULA(Xlogy) { xlog_grad(n, go, gi, false); }
FASTT_FORMULA(SpecialXlog1py) { xlog_grad(n, go, gi, true); }
// d/dq zeta(s, q) = -s zeta(s + 1, q); torch has no derivative in s.
FASTT_FORMULA(SpecialZeta) {
  Tensor s = operand(n, 0), q = operand(n, 1);
  FASTT_CHECK(!n.needs(0), NotImplementedError,
              "the derivative of special_zeta with respect to its first "
              "argument (x) is not implemented");
  if (n.needs(1))
    set_binary(n, gi, 1,
               fastt::mul(go[0], fastt::neg(fastt::mul(
                                     s, fastt::special_zeta(
                                            fastt::add(s, Scalar(1)), q)))));
}

}  // namespace autograd
}  // namespace fastt
