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

// ---- Bessel functions of the first and second kind, orders 0 and 1 ----
// x <= 2: J0, J1 by their power series, Y0, Y1 by Neumann-type series;
// 2 < x < 25: one polynomial per function and short interval; x >= 25:
// the modulus-phase form, its P and Q fitted over all of [25, inf). The
// tables are from scripts/fit_bessel.py (fits of mpmath's J and Y at 40
// digits; it prints them, ready to paste, and their errors). Measured
// against mpmath, the error for x > 2 is at most about 2 * 2^-52 times
// max(|f|, sqrt(2/(pi x))) (that is, absolute near the zeros).
constexpr double kEulerGamma = 0.57721566490153286061;  // also K0, K1
constexpr double kTwoOverPi = 0.63661977236758134308;
constexpr double kInvPi = 0.31830988618379067154;
constexpr double kGammaMinusLog2 = -0.11593151565841244881;  // gamma - ln 2

// 0 <= x <= 2: J_n (n = 0, 1) by its power series
//   J_n(x) = (x/2)^n sum_k c_k t^k,  c_k = (-1)^k / (k! (k+n)!),  t = x^2/4,
// to k = 13 (the next term is below 1e-21; t <= 1 and the terms fall from
// the first, so the sum loses at most two bits), in Horner's form over the
// c_k's table (exact to the last digit): 13 multiply-adds.
FASTT_HD double bessel_j_series(int n, double x) {
  static constexpr double kJSeries[2][14] = {
      // J0: c_0 .. c_13
      {1.0, -1.0, 0.25, -0.027777777777777776, 0.001736111111111111,
       -6.9444444444444444e-05, 1.9290123456790124e-06, -3.9367598891408417e-08,
       6.1511873267825652e-10, -7.5940584281266239e-12, 7.5940584281266234e-14,
       -6.2760813455591933e-16, 4.358389823304995e-18, -2.5789288895295828e-20},
      // J1: c_0 .. c_13
      {1.0, -0.5, 0.083333333333333329, -0.0069444444444444441,
       0.00034722222222222224, -1.1574074074074073e-05, 2.7557319223985888e-07,
       -4.9209498614260522e-09, 6.8346525853139614e-11, -7.5940584281266231e-13,
       6.9036894801151122e-15, -5.230067787965994e-17, 3.3526075563884579e-19,
       -1.842092063949702e-21},
  };
  const double t = 0.25 * x * x;
  const double* c = kJSeries[n];
  double s = c[13];
  for (int k = 12; k >= 0; --k) s = s * t + c[k];
  return n == 0 ? s : 0.5 * x * s;
}

// 0 < x <= 2: Y_n by the series (from A&S 9.1.13 and 9.1.11)
//   Y0 = 2/pi (log(x/2) + gamma) J0 + sum_{k>=1} a_k t^k,
//   Y1 = 2/pi (log(x/2) + gamma) J1 - 2/(pi x) + x sum_{k>=0} b_k t^k,
//   a_k = 2/pi (-1)^(k+1) H_k / k!^2,
//   b_k = -1/(2 pi) (-1)^k (H_k + H_(k+1)) / (k! (k+1)!),
// t = x^2/4, H_k the harmonic numbers, J_n from its series above, to
// k = 13 (the next term is below 1e-20), the coefficients exact to the
// last digit; accurate down to the smallest x, so no branch for tiny x.
// Near Y0's zero at 0.894 the two parts cancel: the error there is a few
// 1e-17 absolute.
FASTT_HD double bessel_y_series(int n, double x) {
  static constexpr double kYSeries[2][13] = {
      // Y0: a_1 .. a_13
      {0.6366197723675814, -0.238732414637843, 0.03242045137057127,
       -0.0023025888757508004, 0.0001009454963129151, -3.0087161309810462e-06,
       6.49826831407223e-08, -1.0643040175208692e-09, 1.3676725521624816e-11,
       -1.4160178296410823e-13, 1.206585191648228e-15, -8.610283592323939e-18,
       5.22113444867605e-20},
      // Y1: b_0 .. b_12
      {-0.15915494309189535, 0.19894367886486916, -0.04420970641441537,
       0.004328867086411505, -0.0002413113141786839, 8.719136542843032e-06,
       -2.211738430313014e-07, 4.1593168831893105e-09, -6.033663291034665e-11,
       6.95922595450891e-13, -6.536331617125996e-15, 5.0968042269643236e-17,
       -3.3526924635743202e-19},
  };
  const double t = 0.25 * x * x;
  const double l = kTwoOverPi * (std::log(x) + kGammaMinusLog2);
  const double* a = kYSeries[n];
  double s = a[12];
  for (int k = 11; k >= 0; --k) s = s * t + a[k];
  if (n == 0) return l * bessel_j_series(0, x) + t * s;
  return l * bessel_j_series(1, x) - kTwoOverPi / x + x * s;
}

// 2 < x < 25: a polynomial of degree 12 in t = x - m on each half-unit
// interval of (2, 5) and unit interval of [5, 25), m its middle (the first
// entry of its row, then the coefficients of t^0 .. t^12), per function:
// Chebyshev interpolants, error below 6e-17 absolute. (Y's singularity at
// 0 would need degree 17 on (2, 3) and 14 on (3, 4): hence the halves.)
// which: 0 J0, 1 J1, 2 Y0, 3 Y1.
FASTT_HD double bessel_piece(int which, double x) {
  static constexpr double kPieces[104][14] = {
#include "kernels/bessel_pieces.inc"
  };
  const int i = x < 5.0 ? int(2.0 * x) - 4 : int(x) + 1;
  const double* c = kPieces[26 * which + i];
  const double t = x - c[0];
  double s = c[13];
  for (int k = 12; k >= 1; --k) s = s * t + c[k];
  return s;
}

// x >= 25: J_n = sqrt(2/(pi x)) (P cos c - Q sin c), Y_n = sqrt(2/(pi x))
// (P sin c + Q cos c), c = x - (2n+1) pi/4, with P and x Q polynomials of
// degree 6 in u = (25/x)^2 in [0, 1] (fits of P and Q computed from
// mpmath's J and Y, error below 1e-18 over all of [25, inf)). cos c and
// sin c come from cos and sin of x itself (accurate however large x is).
FASTT_HD double bessel_large(int which, double x) {
  static constexpr double kPQ[4][7] = {
      // P0: u^0 .. u^6
      {1.0, -0.00011249999999997094, 2.8710937453309637e-07,
       -2.3449629960168394e-09, 3.979865528155603e-11, -1.1412872669485724e-12,
       4.149782700890421e-14},
      // x Q0: u^0 .. u^6
      {-0.125, 0.00011718749999980369, -5.813964812193619e-07,
       7.076752740748815e-09, -1.5972473810705948e-10, 5.697303151028686e-12,
       -2.413601920514742e-13},
      // P1: u^0 .. u^6
      {1.0, 0.0001874999999999687, -3.6914062449734436e-07,
       2.771320201848621e-09, -4.5105609088288346e-11, 1.2617821903896573e-12,
       -4.521414419760821e-14},
      // x Q1: u^0 .. u^6
      {0.375, -0.00016406249999978965, 7.105956997439303e-07,
       -8.165485507929371e-09, 1.7851846040536538e-10, -6.241938849682274e-12,
       2.612896905192344e-13},
  };
  const int n = which % 2;
  const double inv = 1.0 / x, u = 625.0 * inv * inv;
  const double* pc = kPQ[2 * n];
  const double* qc = kPQ[2 * n + 1];
  double p = pc[6], q = qc[6];
  for (int k = 5; k >= 0; --k) {
    p = p * u + pc[k];
    q = q * u + qc[k];
  }
  q *= inv;
  // with sqrt(2) cos c = cos x + sin x (n = 0), sin x - cos x (n = 1) and
  // sqrt(2) sin c = sin x - cos x (n = 0), -(sin x + cos x) (n = 1):
  // J0 = f v, Y0 = f w, J1 = f w, Y1 = -f v, f = 1/sqrt(pi x),
  // v = (P + Q) cos x + (P - Q) sin x, w = (P + Q) sin x - (P - Q) cos x.
  const double c = std::cos(x), s = std::sin(x), a = p + q, b = p - q;
  const double f = std::sqrt(kInvPi * inv);
  if (which == 0 || which == 3) {
    const double v = f * (a * c + b * s);
    return which == 0 ? v : -v;
  }
  return f * (a * s - b * c);
}

// which: 0 J0, 1 J1, 2 Y0, 3 Y1; x > 0 finite.
FASTT_HD double bessel_pos(int which, double x) {
  if (x <= 2.0)
    return which < 2 ? bessel_j_series(which, x)
                     : bessel_y_series(which - 2, x);
  if (x < 25.0) return bessel_piece(which, x);
  return bessel_large(which, x);
}
// torch gives NaN at +-infinity (the limit is 0; we follow torch). |x| is
// written x < 0 ? -x : x, not std::fabs(x): GCC turns cos(fabs(x)) into
// cos(x) and then cannot pair it with sin(fabs(x)) in one sincos call.
FASTT_HD double bessel_j0(double x) {
  if (std::isnan(x) || std::isinf(x)) return NAN;
  if (x == 0.0) return 1.0;
  return bessel_pos(0, x < 0 ? -x : x);
}
FASTT_HD double bessel_j1(double x) {
  if (std::isnan(x) || std::isinf(x)) return NAN;
  if (x == 0.0) return 0.0;
  const double r = bessel_pos(1, x < 0 ? -x : x);
  return x < 0 ? -r : r;
}
FASTT_HD double bessel_y(int which, double x) {
  if (std::isnan(x)) return x;
  if (x < 0.0) return NAN;
  if (x == 0.0) return -INFINITY;
  if (std::isinf(x)) return NAN;
  return bessel_pos(which, x);
}
FASTT_HD double bessel_y0(double x) { return bessel_y(2, x); }
FASTT_HD double bessel_y1(double x) { return bessel_y(3, x); }

// ---- modified Bessel functions of the second kind, K0 and K1 ----
// x <= 2: the series (Abramowitz & Stegun 9.6.13 and 9.6.11)
//   K0 = -(log(x/2) + gamma) I0 + sum_k H_k t^k / k!^2,
//   K1 = 1/x + log(x/2) I1 - x/4 sum_k (psi(k+1) + psi(k+2)) t^k /
//        (k! (k+1)!),  t = x^2/4, H_k harmonic numbers, psi(k+1) = H_k -
//        gamma;
// 2 < x <= 30: e^x K_n(x) = int_0^inf exp(-x (cosh u - 1)) cosh(n u) du by
// the trapezoid rule (an analytic integrand: the error falls as
// exp(-pi^2/h)); beyond, the asymptotic series.
FASTT_HD double bessel_k_scaled_large(int n, double x) {
  if (x > 30.0) {  // the asymptotic series sqrt(pi/2x) sum prod(mu -
    // (2j-1)^2) / (k! (8x)^k): its smallest term is below 1e-17 here
    const double mu = 4.0 * n * n, e = 8.0 * x;
    double term = 1.0, sum = 1.0;
    for (int k = 1; k < 40; ++k) {
      const double odd = 2.0 * k - 1.0;
      term *= (mu - odd * odd) / (double(k) * e);
      sum += term;
      if (std::fabs(term) < 1e-17 * sum) break;
    }
    return sum * std::sqrt(kPi / (2.0 * x));
  }
  const double h = 0.1;
  double sum = 0.5;  // the u = 0 term, halved
  for (int k = 1; k < 2000; ++k) {
    const double u = k * h;
    const double f = std::exp(-x * (std::cosh(u) - 1.0)) *
                     (n == 0 ? 1.0 : std::cosh(u));
    sum += f;
    if (f < 1e-18 * sum) break;
  }
  return sum * h;
}
FASTT_HD double bessel_k_small(int n, double x) {
  const double t = 0.25 * x * x, l = std::log(0.5 * x);
  if (n == 0) {
    double term = 1.0, h = 0.0, sum = 0.0;
    for (int k = 1; k < 60; ++k) {
      term *= t / (double(k) * double(k));
      h += 1.0 / k;
      sum += h * term;
      if (h * term < 1e-17 * sum) break;
    }
    return -(l + kEulerGamma) * i0(x) + sum;
  }
  double term = 1.0, hk = 0.0, sum = 0.0;  // k = 0: term = t^0/(0! 1!)
  for (int k = 0; k < 60; ++k) {
    if (k > 0) {
      term *= t / (double(k) * double(k + 1));
      hk += 1.0 / k;
    }
    const double psi = (hk - kEulerGamma) + (hk + 1.0 / (k + 1) -
                                             kEulerGamma);
    sum += psi * term;
    if (k > 2 && std::fabs(psi * term) < 1e-17 * std::fabs(sum)) break;
  }
  return 1.0 / x + l * i1(x) - 0.25 * x * sum;
}
// scaled: e^x K_n(x)
FASTT_HD double bessel_k(int n, double x, bool scaled) {
  if (std::isnan(x)) return x;
  if (x < 0.0) return NAN;
  if (x == 0.0) return INFINITY;
  if (std::isinf(x)) return 0.0;
  if (x <= 2.0) {
    const double k = bessel_k_small(n, x);
    return scaled ? k * std::exp(x) : k;
  }
  const double ks = bessel_k_scaled_large(n, x);
  return scaled ? ks : ks * std::exp(-x);
}
FASTT_HD double modified_bessel_k0(double x) { return bessel_k(0, x, false); }
FASTT_HD double modified_bessel_k1(double x) { return bessel_k(1, x, false); }
FASTT_HD double scaled_modified_bessel_k0(double x) {
  return bessel_k(0, x, true);
}
FASTT_HD double scaled_modified_bessel_k1(double x) {
  return bessel_k(1, x, true);
}

// ---- Hurwitz zeta: sum_{k >= 0} (k + q)^-s ----
// The terms up to a = q + N >= 10 summed directly, the rest by
// Euler-Maclaurin: a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! s(s+1)...
// (s+2j-2) a^(-s-2j+1). s < 1: NaN; s = 1 or q a non-positive integer:
// the pole, +inf; q < 0 with s not an integer: NaN ((k+q)^-s undefined).
FASTT_HD double zeta(double s, double q) {
  // torch's order of checks (a NaN s at a pole of q still gives +inf)
  if (s == 1.0) return INFINITY;
  if (s < 1.0) return NAN;
  if (q <= 0.0) {
    if (q == std::floor(q)) return INFINITY;
    if (s != std::floor(s)) return NAN;
  }
  if (std::isnan(s) || std::isnan(q)) return NAN;
  if (std::isinf(q)) return 0.0;
  // B_2j / (2j)!, j = 1..12 (Bernoulli numbers over factorials)
  const double c[12] = {
      1.0 / 12.0, -1.0 / 720.0, 1.0 / 30240.0, -1.0 / 1209600.0,
      1.0 / 47900160.0, -691.0 / 1307674368000.0, 1.0 / 74724249600.0,
      -3617.0 / 10670622842880000.0, 43867.0 / 5109094217170944000.0,
      -174611.0 / 802857662698291200000.0,
      77683.0 / 14101100039391805440000.0,
      -236364091.0 / 1693824136731743669452800000.0};
  double sum = 0.0, a = q;
  int n = 0;
  while ((a < 10.0 || n < 9) && n < 100000) {
    sum += std::pow(a, -s);
    a += 1.0;
    ++n;
  }
  // s = inf: the later terms are 0; torch's expansion turns a zero sum
  // (every q + k > 1) into 0 * inf = NaN, which we keep
  if (std::isinf(s)) return sum == 0.0 ? NAN : sum;
  const double w = std::pow(a, -s);
  sum += w * a / (s - 1.0) + 0.5 * w;
  double fac = s * w / a;  // s a^(-s-1)
  for (int j = 0; j < 12; ++j) {
    const double t = c[j] * fac;
    sum += t;
    if (std::fabs(t) < 1e-17 * std::fabs(sum)) break;
    fac *= (s + 2.0 * j + 1.0) * (s + 2.0 * j + 2.0) / (a * a);
  }
  return sum;
}

// ---- regularized incomplete gamma functions P(a, x) and Q = 1 - P ----
// x < a + 1: P's series x^a e^-x / Gamma(a+1) sum x^k / ((a+1)...(a+k));
// otherwise Q's continued fraction (modified Lentz). torch's values at the
// edges: NaN for negative a or x (or both 0), P = 1 for a = 0 < x.
FASTT_HD double igamma_prefix(double a, double x) {
  return std::exp(a * std::log(x) - x - std::lgamma(a));
}
FASTT_HD double igamma_p_series(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int k = 1; k < 100000; ++k) {
    term *= x / (a + k);
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return sum * igamma_prefix(a, x);
}
FASTT_HD double igamma_q_fraction(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < 1e-16) break;
  }
  return igamma_prefix(a, x) * h;
}
// upper: Q instead of P
FASTT_HD double igamma(double a, double x, bool upper) {
  // torch's order of checks (so P(inf, NaN) = 0, as torch's)
  if (a < 0.0 || x < 0.0) return NAN;
  if (a == 0.0) return x > 0.0 ? (upper ? 0.0 : 1.0) : NAN;
  if (x == 0.0) return upper ? 1.0 : 0.0;
  if (std::isinf(a)) return std::isinf(x) ? NAN : (upper ? 1.0 : 0.0);
  if (std::isinf(x)) return upper ? 0.0 : 1.0;
  if (std::isnan(a) || std::isnan(x)) return NAN;
  if (x < a + 1.0) {
    const double p = igamma_p_series(a, x);
    return upper ? 1.0 - p : p;
  }
  const double q = igamma_q_fraction(a, x);
  return upper ? q : 1.0 - q;
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
FASTT_SPECIAL_UNARY(SpecialBesselJ0, bessel_j0)
FASTT_SPECIAL_UNARY(SpecialBesselJ1, bessel_j1)
FASTT_SPECIAL_UNARY(SpecialBesselY0, bessel_y0)
FASTT_SPECIAL_UNARY(SpecialBesselY1, bessel_y1)
FASTT_SPECIAL_UNARY(SpecialModifiedBesselK0, modified_bessel_k0)
FASTT_SPECIAL_UNARY(SpecialModifiedBesselK1, modified_bessel_k1)
FASTT_SPECIAL_UNARY(SpecialScaledModifiedBesselK0, scaled_modified_bessel_k0)
FASTT_SPECIAL_UNARY(SpecialScaledModifiedBesselK1, scaled_modified_bessel_k1)
#undef FASTT_SPECIAL_UNARY

// zeta(x, q) and the regularized incomplete gamma functions (a, x).
struct SpecialZeta {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    return T(special::zeta(double(a), double(b)));
  }
};
struct Igamma {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    return T(special::igamma(double(a), double(b), false));
  }
};
struct Igammac {
  template <class T> FASTT_HD T operator()(T a, T b) const {
    return T(special::igamma(double(a), double(b), true));
  }
};

// sin(pi x) / (pi x), 1 at 0 (sin of the reduced argument keeps it exact
// at the integers).
struct Sinc {
  // Complex: sin(pi z) / (pi z) in the element type, 1 at 0 (torch's).
  template <class R> FASTT_HD Complex<R> operator()(Complex<R> a) const {
    if (a.re == 0 && a.im == 0) return Complex<R>(1);
    const Complex<R> p = a * Complex<R>(R(special::kPi));
    return cmath::sin(p) / p;
  }
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
