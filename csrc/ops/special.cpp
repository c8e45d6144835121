// Composite elementwise ops (see special.h): each is a few core ops, so
// their recordings make the gradient.
#include "special.h"

#include <cmath>
#include <limits>

#include "autograd/functions.h"
#include "csrc/ops.h"

namespace fastt {

static Tensor to_float(const Tensor& a) {
  return is_inexact(a.dtype()) ? a : a.to(default_dtype());
}

Tensor logit(const Tensor& a, std::optional<double> eps) {
  require_defined(a, "logit");
  Tensor x = to_float(a);
  if (eps) x = fastt::clamp(x, Scalar(*eps), Scalar(1.0 - *eps));
  return fastt::log(fastt::div(x, fastt::sub(Scalar(1), x)));
}

Tensor round(const Tensor& a, int64_t decimals) {
  require_defined(a, "round");
  if (decimals == 0) return fastt::round(a);
  FASTT_CHECK(is_floating(a.dtype()), NotImplementedError,
              "\"round_cpu\" not implemented for '{}'",
              torch_type_name(a.dtype()));
  // torch's order: x * 10^d rounded, / 10^d (x / 10^-d, * 10^-d for d < 0)
  const double p = std::pow(10.0, double(decimals < 0 ? -decimals : decimals));
  if (decimals > 0)
    return fastt::div(fastt::round(fastt::mul(a, Scalar(p))), Scalar(p));
  return fastt::mul(fastt::round(fastt::div(a, Scalar(p))), Scalar(p));
}

Tensor polygamma(int64_t n, const Tensor& x) {
  require_defined(x, "polygamma");
  FASTT_CHECK(n >= 0, RuntimeError,
              "polygamma(n, x) does not support negative n.");
  if (n == 0) return fastt::digamma(x);
  double fact = 1.0;
  for (int64_t k = 2; k <= n; ++k) fact *= double(k);
  const double sign = (n % 2 == 1) ? 1.0 : -1.0;  // (-1)^(n+1)
  Tensor xf = to_float(x);
  if (xf.dtype() == DType::Float16 || xf.dtype() == DType::BFloat16)
    return fastt::mul(fastt::special_zeta(Scalar(double(n + 1)),
                                          xf.to(DType::Float32)),
                      Scalar(sign * fact))
        .to(xf.dtype());
  return fastt::mul(fastt::special_zeta(Scalar(double(n + 1)), xf),
                    Scalar(sign * fact));
}

static double dtype_max(DType d) {
  switch (d) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}

Tensor nan_to_num(const Tensor& a, std::optional<double> nan,
                  std::optional<double> posinf, std::optional<double> neginf) {
  require_defined(a, "nan_to_num");
  if (is_complex(a.dtype()))  // each part on its own, as torch
    return view_as_complex(
        nan_to_num(view_as_real(a), nan, posinf, neginf).contiguous());
  if (!is_floating(a.dtype())) return a.clone();
  const double big = dtype_max(a.dtype());
  if (!autograd::should_record(a))  // one pass
    return nan_to_num_kernel(a, nan.value_or(0.0), posinf.value_or(big),
                             neginf.value_or(-big));
  // Recorded: composed, so the gradient is torch's (g where a is finite).
  Tensor r = fastt::where(fastt::isnan(a), Scalar(nan.value_or(0.0)), a);
  r = fastt::where(fastt::isposinf(a), Scalar(posinf.value_or(big)), r);
  return fastt::where(fastt::isneginf(a), Scalar(neginf.value_or(-big)), r);
}

Tensor positive(const Tensor& a) {
  require_defined(a, "positive");
  FASTT_CHECK(a.dtype() != DType::Bool, RuntimeError,
              "The `+` operator, on a bool tensor is not supported.");
  return a;
}

Tensor isreal(const Tensor& a) {
  require_defined(a, "isreal");
  if (is_complex(a.dtype())) return fastt::eq(imag_part(a), Scalar(0));
  return fastt::ones_like(a, DType::Bool);
}

Tensor rsub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return fastt::sub(b, a, alpha);
}
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return fastt::sub(b, a, alpha);
}

// torch computes in double, in complex128 when either side is complex.
static DType float_power_type(bool complex) {
  return complex ? DType::Complex128 : DType::Float64;
}
static Scalar float_power_scalar(const Scalar& s) {
  return s.is_complex() ? s : Scalar(s.to<double>());
}
Tensor float_power(const Tensor& a, const Tensor& b) {
  const DType t =
      float_power_type(is_complex(a.dtype()) || is_complex(b.dtype()));
  return fastt::pow(a.to(t), b.to(t));
}
Tensor float_power(const Tensor& a, const Scalar& b) {
  const DType t = float_power_type(is_complex(a.dtype()) || b.is_complex());
  return fastt::pow(a.to(t), float_power_scalar(b));
}
Tensor float_power(const Scalar& a, const Tensor& b) {
  const DType t = float_power_type(a.is_complex() || is_complex(b.dtype()));
  return fastt::pow(float_power_scalar(a), b.to(t));
}
static void check_float_power_inplace(const Tensor& self, bool complex) {
  require_defined(self, "float_power_");
  const DType t = float_power_type(complex || is_complex(self.dtype()));
  FASTT_CHECK(self.dtype() == t, RuntimeError,
              "the base given to float_power_ has dtype {} but the "
              "operation's result requires dtype {}",
              torch_type_name(self.dtype()), torch_type_name(t));
}

Tensor ldexp(const Tensor& a, const Tensor& b) {
  return fastt::mul(a, fastt::exp2(b));
}

// x = m * 2^e with 0.5 <= |m| < 1 (m = x, e = 0 for 0, inf and NaN). The
// exponent comes from log2 and is corrected by one step either way; the
// mantissa is x times an exact power of two (so its gradient is 2^-e).
std::tuple<Tensor, Tensor> frexp(const Tensor& a) {
  require_defined(a, "frexp");
  FASTT_CHECK(is_floating(a.dtype()), RuntimeError,
              "torch.frexp() only supports floating-point dtypes");
  Tensor e;
  {
    NoGradGuard guard;
    Tensor x = a.to(DType::Float64);
    Tensor ax = fastt::abs(x);
    Tensor ok = fastt::logical_and(fastt::isfinite(x), fastt::ne(x, Scalar(0)));
    Tensor safe = fastt::where(ok, ax, Scalar(1.0));
    e = fastt::add(fastt::floor(fastt::log2(safe)), Scalar(1));
    Tensor m = fastt::mul(safe, fastt::exp2(fastt::neg(e)));
    e = fastt::add(e, fastt::ge(m, Scalar(1.0)).to(DType::Float64));
    e = fastt::sub(e, fastt::lt(m, Scalar(0.5)).to(DType::Float64));
    e = fastt::where(ok, e, Scalar(0.0));
  }
  Tensor mant = fastt::mul(a, fastt::exp2(fastt::neg(e)).to(a.dtype()));
  return {mant, e.to(DType::Int32)};
}

template <class F>
static Tensor& write_back(Tensor& self, const char* name, F&& op) {
  require_defined(self, name);
  if (autograd::should_record(self)) return autograd::inplace(self, name, op);
  Tensor r = op(self);
  FASTT_CHECK(can_cast(r.dtype(), self.dtype()), RuntimeError,
              "{}: result type {} can't be cast to the desired output type {}",
              name, dtype_name(r.dtype()), dtype_name(self.dtype()));
  self.copy_(r);
  return self;
}
Tensor& round_(Tensor& a, int64_t decimals) {
  if (decimals == 0) return fastt::round_(a);
  return write_back(a, "round_",
                    [&](const Tensor& s) { return round(s, decimals); });
}
Tensor& polygamma_(Tensor& a, int64_t n) {
  return write_back(a, "polygamma_",
                    [&](const Tensor& s) { return polygamma(n, s); });
}
Tensor& logit_(Tensor& a, std::optional<double> eps) {
  return write_back(a, "logit_",
                    [&](const Tensor& s) { return logit(s, eps); });
}
Tensor& nan_to_num_(Tensor& a, std::optional<double> nan,
                    std::optional<double> posinf,
                    std::optional<double> neginf) {
  return write_back(a, "nan_to_num_", [&](const Tensor& s) {
    return nan_to_num(s, nan, posinf, neginf);
  });
}
Tensor& float_power_(Tensor& a, const Tensor& b) {
  check_float_power_inplace(a, b.defined() && is_complex(b.dtype()));
  return write_back(a, "float_power_",
                    [&](const Tensor& s) { return float_power(s, b); });
}
Tensor& float_power_(Tensor& a, const Scalar& b) {
  check_float_power_inplace(a, b.is_complex());
  return write_back(a, "float_power_",
                    [&](const Tensor& s) { return float_power(s, b); });
}
Tensor& ldexp_(Tensor& a, const Tensor& b) {
  return write_back(a, "ldexp_",
                    [&](const Tensor& s) { return ldexp(s, b); });
}

}  // namespace fastt
