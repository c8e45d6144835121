// Special functions (torch.special and friends) as FASTT_HD functors,
// included by kernels/functors.h. Each computes in double whatever the
// op-math type (the float32 results then round once) and returns T. To add
// one: a functor here and a row in csrc/ops/elementwise.def.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "csrc/macros.h"

namespace fastt {
namespace functors {
namespace special {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kInvSqrtPi = 0.56418958354775628695;   // 1 / sqrt(pi)

// exp(x^2) * erfc(x) for x >= 0: direct below 26 (erfc is accurate to
// a few ulps there), the asymptotic series 1/(x sqrt(pi)) * sum
// (-1)^k (2k-1)!! / (2x^2)^k beyond (its terms fall below 1e-20).
FASTT_HD double erfcx_pos(double x) {
  if (x < 26.0) return std::exp(x * x) * std::erfc(x);
  if (std::isinf(x)) return 0.0;
  const double t = 1.0 / (2.0 * x * x);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 12; ++k) {
    term *= -(2.0 * k - 1.0) * t;
    sum += term;
  }
  return sum * kInvSqrtPi / x;
}
FASTT_HD double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x >= 0) return erfcx_pos(x);
  if (x < -26.7) return INFINITY;
  return 2.0 * std::exp(x * x) - erfcx_pos(-x);
}
FASTT_HD double ndtr(double x) {
  return 0.5 * std::erfc(-x * (1.0 / kSqrt2));
}
// log(Phi(x)): below 0 through erfcx (no underflow), above through log1p.
FASTT_HD double log_ndtr(double x) {
  if (std::isnan(x)) return x;
  if (x < -1.0) {
    const double z = -x * (1.0 / kSqrt2);
    return std::log(0.5 * erfcx(z)) - z * z;
  }
  return std::log1p(-0.5 * std::erfc(x * (1.0 / kSqrt2)));
}
// Phi^-1(p): Abramowitz-Stegun 26.2.23 as the first guess (error below
// 4.5e-4) on the lower half q = min(p, 1 - p) (1 - p is exact there),
// then Newton steps on log(Phi) (quadratic: four reach double precision).
FASTT_HD double ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return NAN;
  if (p == 0) return -INFINITY;
  if (p == 1) return INFINITY;
  const bool upper = p > 0.5;
  const double q = upper ? 1.0 - p : p;
  if (q == 0.5) return 0.0;
  const double t = std::sqrt(-2.0 * std::log(q));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                       (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  const double lq = std::log(q);
  for (int k = 0; k < 5; ++k) {
    const double ln = log_ndtr(x);
    // d/dx log Phi(x) = phi(x) / Phi(x) = exp(log phi - log Phi)
    const double d = std::exp(-0.5 * x * x - ln) * kInvSqrt2Pi;
    const double step = (ln - lq) / d;
    x -= step;
    if (std::fabs(step) <= 1e-17 * std::fabs(x)) break;
  }
  return upper ? -x : x;
}

// Modified Bessel functions of the first kind, I0 and I1, scaled by
// exp(-|x|): the power series sum (x/2)^(2k+n) / (k! (k+n)!) (all terms
// positive, so no cancellation) up to |x| = 30, the Hankel asymptotic
// series e^x / sqrt(2 pi x) * sum (-1)^k prod (4n^2 - (2j-1)^2) / (k! (8x)^k)
// beyond (its terms fall to 1e-17 well before they diverge).
FASTT_HD double bessel_i_scaled(int n, double ax) {
  if (ax <= 30.0) {
    const double h = 0.5 * ax, h2 = h * h;
    double term = n == 0 ? 1.0 : h, sum = term;
    for (int k = 1; k < 200; ++k) {
      term *= h2 / (double(k) * double(k + n));
      sum += term;
      if (term < 1e-17 * sum) break;
    }
    return sum * std::exp(-ax);
  }
  if (std::isinf(ax)) return 0.0;
  const double mu = 4.0 * n * n, e = 8.0 * ax;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 30; ++k) {
    const double odd = 2.0 * k - 1.0;
    term *= -(mu - odd * odd) / (double(k) * e);
    sum += term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
  }
  return sum / std::sqrt(2.0 * kPi * ax);
}
FASTT_HD double i0(double x) {
  const double ax = std::fabs(x);
  if (std::isnan(x)) return x;
  if (ax > 700.0) {  // e^x alone would overflow a little early
    const double h = std::exp(0.5 * ax);
    return bessel_i_scaled(0, ax) * h * h;
  }
  return bessel_i_scaled(0, ax) * std::exp(ax);
}
FASTT_HD double i1(double x) {
  const double ax = std::fabs(x);
  if (std::isnan(x)) return x;
  double r;
  if (ax > 700.0) {
    const double h = std::exp(0.5 * ax);
    r = bessel_i_scaled(1, ax) * h * h;
  } else {
    r = bessel_i_scaled(1, ax) * std::exp(ax);
  }
  return x < 0 ? -r : r;
}
FASTT_HD double i0e(double x) {
  if (std::isnan(x)) return x;
  return bessel_i_scaled(0, std::fabs(x));
}
FASTT_HD double i1e(double x) {
  if (std::isnan(x)) return x;
  const double r = bessel_i_scaled(1, std::fabs(x));
  return x < 0 ? -r : r;
}

// ---- orthogonal polynomials of degree n (torch.special.*_polynomial_*) --
// n is truncated to an integer; a negative degree gives 0, a NaN input NaN
// Three-term recurrences in double from P_0 and P_1, with the closed forms
// at |x| = 1 and, for the Chebyshev kinds on (-1, 1) above small degrees,
// the trigonometric forms (exact there, and O(1) in n). A degree above
// kMaxDegree (where the recurrence would run for seconds per element)
// gives NaN rather than hanging.
constexpr double kMaxDegree = 16777216.0;  // 2^24

template <class Step>
FASTT_HD double recur(double p, double q, int64_t n, Step step) {
  if (n == 0) return p;
  for (int64_t k = 1; k < n; ++k) {
    const double r = step(p, q, k);  // P_{k+1} from P_{k-1}, P_k
    p = q;
    q = r;
  }
  return q;
}
// The degree as an integer, or false (result 0 for n < 0, NaN otherwise).
FASTT_HD bool degree(double x, double n, int64_t& k, double& out) {
  if (std::isnan(x) || std::isnan(n) || n > kMaxDegree) {
    out = NAN;
    return false;
  }
  if (n <= -1.0) {  // the truncated degree is negative (in (-1, 0): 0)
    out = 0.0;
    return false;
  }
  k = int64_t(n);
  return true;
}
FASTT_HD double odd_sign(int64_t n) { return n % 2 == 0 ? 1.0 : -1.0; }

// first kind: T_n(cos t) = cos(n t)
FASTT_HD double chebyshev_t(double x, double n) {
  int64_t k;
  double out;
  if (!degree(x, n, k, out)) return out;
  if (std::fabs(x) == 1.0) return x > 0 ? 1.0 : odd_sign(k);
  if (k > 6 && std::fabs(x) < 1.0) return std::cos(double(k) * std::acos(x));
  return recur(1.0, x, k, [x](double p, double q, int64_t) {
    return 2.0 * x * q - p;
  });
}
// second kind: U_n(cos t) = sin((n + 1) t) / sin t
FASTT_HD double chebyshev_u(double x, double n) {
  int64_t k;
  double out;
  if (!degree(x, n, k, out)) return out;
  const double m = double(k) + 1.0;
  if (std::fabs(x) == 1.0) return x > 0 ? m : odd_sign(k) * m;
  if (k > 8 && std::fabs(x) < 1.0) {
    const double t = std::acos(x);
    if (std::sin(t) != 0.0) return std::sin(m * t) / std::sin(t);
    return m * std::cos(m * t) / x;
  }
  return recur(1.0, 2.0 * x, k, [x](double p, double q, int64_t) {
    return 2.0 * x * q - p;
  });
}
// third kind: V_n(cos t) = cos((n + 1/2) t) / cos(t / 2)
FASTT_HD double chebyshev_v(double x, double n) {
  int64_t k;
  double out;
  if (!degree(x, n, k, out)) return out;
  const double m = 2.0 * double(k) + 1.0;
  if (std::fabs(x) == 1.0) return x > 0 ? 1.0 : odd_sign(k) * m;
  if (k > 8 && std::fabs(x) < 1.0) {
    const double t = std::acos(x);
    if (std::cos(t / 2) != 0.0)
      return std::cos((double(k) + 0.5) * t) / std::cos(t / 2);
    return odd_sign(k) * m;
  }
  return recur(1.0, 2.0 * x - 1.0, k, [x](double p, double q, int64_t) {
    return 2.0 * x * q - p;
  });
}
// fourth kind: W_n(cos t) = sin((n + 1/2) t) / sin(t / 2)
FASTT_HD double chebyshev_w(double x, double n) {
  int64_t k;
  double out;
  if (!degree(x, n, k, out)) return out;
  const double m = 2.0 * double(k) + 1.0;
  if (std::fabs(x) == 1.0) return x > 0 ? m : odd_sign(k);
  if (k > 8 && std::fabs(x) < 1.0) {
    const double t = std::acos(x);
    if (std::sin(t / 2) != 0.0)
      return std::sin((double(k) + 0.5) * t) / std::sin(t / 2);
    return m;
  }
  return recur(1.0, 2.0 * x + 1.0, k, [x](double p, double q, int64_t) {
    return 2.0 * x * q - p;
  });
}
// physicists' Hermite: H_{k+1} = 2x H_k - 2k H_{k-1}
FASTT_HD double hermite_h(double x, double n) {
  int64_t k;
  double out;
  if (!degree(x, n, k, out)) return out;
  return recur(1.0, 2.0 * x, k, [x](double p, double q, int64_t j) {
    return 2.0 * x * q - 2.0 * double(j) * p;
  });
}
// probabilists' Hermite: He_{k+1} = x He_k - k He_{k-1}
FASTT_HD double hermite_he(double x, double n) {
  int64_t k;
  double out;
  if (!degree(x, n, k, out)) return out;
  return recur(1.0, x, k, [x](double p, double q, int64_t j) {
    return x * q - double(j) * p;
  });
}
// Laguerre: (k + 1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}
FASTT_HD double laguerre_l(double x, double n) {
  int64_t k;
  double out;
  if (!degree(x, n, k, out)) return out;
  if (x == 0.0) return 1.0;
  return recur(1.0, 1.0 - x, k, [x](double p, double q, int64_t j) {
    const double d = double(j);
    return ((2.0 * d + 1.0 - x) * q - d * p) / (d + 1.0);
  });
}
// Legendre: (k + 1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}
FASTT_HD double legendre_p(double x, double n) {
  int64_t k;
  double out;
  if (!degree(x, n, k, out)) return out;
  if (std::fabs(x) == 1.0) return x > 0 ? 1.0 : odd_sign(k);
  return recur(1.0, x, k, [x](double p, double q, int64_t j) {
    const double d = double(j);
    return ((2.0 * d + 1.0) * x * q - d * p) / (d + 1.0);
  });
}
// sin(x) / x, its Taylor series near 0 (no cancellation), 0 at infinity.
FASTT_HD double spherical_bessel_j0(double x) {
  if (std::isinf(x)) return 0.0;
  if (std::fabs(x) < 0.5) {
    const double x2 = x * x;  // 1 - x^2/3! + x^4/5! - ... to x^12
    double sum = 1.0, term = 1.0;
    for (int k = 1; k <= 6; ++k) {
      term *= -x2 / double((2 * k) * (2 * k + 1));
      sum += term;
    }
    return sum;
  }
  return std::sin(x) / x;
}

}  // namespace special

#define FASTT_SPECIAL_UNARY(Name, fn)                           \
  struct Name {                                                 \
    template <class T> FASTT_HD T operator()(T a) const {       \
      return T(special::fn(double(a)));                         \
    }                                                           \
  };
FASTT_SPECIAL_UNARY(SpecialErfcx, erfcx)
FASTT_SPECIAL_UNARY(SpecialNdtr, ndtr)
FASTT_SPECIAL_UNARY(SpecialNdtri, ndtri)
FASTT_SPECIAL_UNARY(SpecialLogNdtr, log_ndtr)
FASTT_SPECIAL_UNARY(I0, i0)
FASTT_SPECIAL_UNARY(SpecialI0e, i0e)
FASTT_SPECIAL_UNARY(SpecialI1, i1)
FASTT_SPECIAL_UNARY(SpecialI1e, i1e)
#undef FASTT_SPECIAL_UNARY

// sin(pi x) / (pi x), 1 at 0 (sin of the reduced argument keeps it exact
// at the integers).
struct Sinc {
  template <class T> FASTT_HD T operator()(T a) const {
    const double x = double(a);
    if (x == 0) return T(1);
    if (std::isinf(x)) return T(0);
    const double px = special::kPi * x;
    return T(std::sin(px) / px);
  }
};
// -x log x: 0 at 0, -inf below.
struct SpecialEntr {
  template <class T> FASTT_HD T operator()(T a) const {
    const double x = double(a);
    if (std::isnan(x)) return a;
    if (x > 0) return T(-x * std::log(x));
    if (x == 0) return T(0);
    return T(-INFINITY);
  }
};
// x log y and x log1p y: 0 where x is 0 (unless y is NaN).
struct Xlogy {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if (std::isnan(b)) return b;
    if (a == T(0)) return T(0);
    return a * std::log(b);
  }
};
struct SpecialXlog1py {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if (std::isnan(b)) return b;
    if (a == T(0)) return T(0);
    return a * std::log1p(b);
  }
};
// gcd and lcm of integers (non-negative results, as torch's).
struct Gcd {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    if constexpr (std::is_signed<T>::value) {
      a = a < 0 ? T(-a) : a;
      b = b < 0 ? T(-b) : b;
    }
    while (b != 0) {
      const T r = T(a % b);
      a = b;
      b = r;
    }
    return a;
  }
};
struct Lcm {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    const T g = Gcd{}(a, b);
    if (g == 0) return T(0);
    auto r = a / g * b;  // int or wider: the absolute value, then wrap
    if constexpr (std::is_signed<T>::value) r = r < 0 ? -r : r;
    return T(r);
  }
};

#define FASTT_SPECIAL_BINARY(Name, fn)                            \
  struct Name {                                                   \
    template <class T> FASTT_HD T operator()(T a, T b) const {    \
      return T(special::fn(double(a), double(b)));                \
    }                                                             \
  };
FASTT_SPECIAL_BINARY(SpecialChebyshevT, chebyshev_t)
FASTT_SPECIAL_BINARY(SpecialChebyshevU, chebyshev_u)
FASTT_SPECIAL_BINARY(SpecialChebyshevV, chebyshev_v)
FASTT_SPECIAL_BINARY(SpecialChebyshevW, chebyshev_w)
FASTT_SPECIAL_BINARY(SpecialHermiteH, hermite_h)
FASTT_SPECIAL_BINARY(SpecialHermiteHe, hermite_he)
FASTT_SPECIAL_BINARY(SpecialLaguerreL, laguerre_l)
FASTT_SPECIAL_BINARY(SpecialLegendreP, legendre_p)
#undef FASTT_SPECIAL_BINARY
// The shifted Chebyshev polynomials: the kind's polynomial at 2x - 1.
#define FASTT_SPECIAL_SHIFTED(Name, fn)                                   \
  struct Name {                                                           \
    template <class T> FASTT_HD T operator()(T a, T b) const {            \
      return T(special::fn(2.0 * double(a) - 1.0, double(b)));            \
    }                                                                     \
  };
FASTT_SPECIAL_SHIFTED(SpecialShiftedChebyshevT, chebyshev_t)
FASTT_SPECIAL_SHIFTED(SpecialShiftedChebyshevU, chebyshev_u)
FASTT_SPECIAL_SHIFTED(SpecialShiftedChebyshevV, chebyshev_v)
FASTT_SPECIAL_SHIFTED(SpecialShiftedChebyshevW, chebyshev_w)
#undef FASTT_SPECIAL_SHIFTED
struct SpecialSphericalBesselJ0 {
  template <class T> FASTT_HD T operator()(T a) const {
    return T(special::spherical_bessel_j0(double(a)));
  }
};

}  // namespace functors
}  // namespace fastt
