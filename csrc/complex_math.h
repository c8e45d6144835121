// cmath::<fn>(x): the elementwise math functions for real and complex
// arguments alike, host and device (FASTT_HD), for the functors of
// kernels/functors.h. A real argument calls std::<fn>; a complex one the
// C++ library's complex function where it has one (std::complex on the
// host, thrust::complex in CUDA device code: C99 Annex G's branch cuts and
// special values, as torch's CPU and CUDA kernels), and otherwise torch's
// formulas: log2 and log10 scale log, expm1 and log1p avoid cancellation
// near 0 (expm1: expm1(x) cos y - 2 sin^2(y/2), i e^x sin y; log1p:
// log1p(x (x + 2) + y^2) / 2 for |z| < 1/2, else log|1 + z|, and
// atan2(y, 1 + x); NaN and NaN where either part is NaN, as torch. For
// an infinite part with a tiny other one torch gives NaN where this gives
// C99's log(1 + z), as NumPy).
#pragma once
#include <cmath>
#include <complex>

#if defined(__CUDACC__)  // (both nvcc passes: the host stub needs it too)
#include <thrust/complex.h>
#endif

#include "csrc/complex.h"
#include "csrc/macros.h"

namespace fastt {
namespace cmath {

// The library's complex type: thrust::complex in device code, else
// std::complex; lib() and ours() convert (same layout, by value).
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
#define FASTT_CMATH_LIB thrust
#else
#define FASTT_CMATH_LIB std
#endif
template <class T>
using LibComplex = FASTT_CMATH_LIB::complex<T>;
template <class T>
FASTT_HD LibComplex<T> lib(Complex<T> z) {
  return LibComplex<T>(z.re, z.im);
}
template <class T>
FASTT_HD Complex<T> ours(LibComplex<T> z) {
  return Complex<T>(z.real(), z.imag());
}

// The functions the complex libraries have.
#define FASTT_CMATH(fn)                                         \
  template <class T>                                            \
  FASTT_HD T fn(T x) {                                          \
    return std::fn(x);                                          \
  }                                                             \
  template <class T>                                            \
  FASTT_HD Complex<T> fn(Complex<T> z) {                        \
    return ours(FASTT_CMATH_LIB::fn(lib(z)));                   \
  }
FASTT_CMATH(exp)
FASTT_CMATH(log)
FASTT_CMATH(log10)
FASTT_CMATH(sqrt)
FASTT_CMATH(sin)
FASTT_CMATH(cos)
FASTT_CMATH(tan)
FASTT_CMATH(sinh)
FASTT_CMATH(cosh)
FASTT_CMATH(tanh)
FASTT_CMATH(asin)
FASTT_CMATH(acos)
FASTT_CMATH(atan)
FASTT_CMATH(asinh)
FASTT_CMATH(acosh)
FASTT_CMATH(atanh)
#undef FASTT_CMATH

// a^b: the library's complex pow (C99's cpow: exp(b log a)), as torch's
// kernel (its pow(z, 0) = 1 and pow(z, 1) = z are the op layer's).
template <class T>
FASTT_HD T pow(T a, T b) {
  return std::pow(a, b);
}
template <class T>
FASTT_HD Complex<T> pow(Complex<T> a, Complex<T> b) {
  return ours(FASTT_CMATH_LIB::pow(lib(a), lib(b)));
}
#undef FASTT_CMATH_LIB

// 2^z = exp(z ln 2), the product by the real ln 2 taken per part (so an
// infinite part with a zero other one keeps the zero, as torch).
template <class T>
FASTT_HD T exp2(T x) {
  return std::exp2(x);
}
template <class T>
FASTT_HD Complex<T> exp2(Complex<T> z) {
  const T ln2 = T(0.6931471805599453094172321214581766);
  return exp(Complex<T>(z.re * ln2, z.im * ln2));
}

template <class T>
FASTT_HD T log2(T x) {
  return std::log2(x);
}
template <class T>
FASTT_HD Complex<T> log2(Complex<T> z) {
  const Complex<T> l = log(z);
  const T inv_ln2 = T(1.4426950408889634073599246810018921);
  return Complex<T>(l.re * inv_ln2, l.im * inv_ln2);
}

template <class T>
FASTT_HD T expm1(T x) {
  return std::expm1(x);
}
template <class T>
FASTT_HD Complex<T> expm1(Complex<T> z) {
  const T h = std::sin(z.im / T(2));
  return Complex<T>(std::expm1(z.re) * std::cos(z.im) - T(2) * h * h,
                    std::exp(z.re) * std::sin(z.im));
}

template <class T>
FASTT_HD T log1p(T x) {
  return std::log1p(x);
}
template <class T>
FASTT_HD Complex<T> log1p(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (x != x || y != y) return Complex<T>(x + y, x + y);  // NaN: torch's
  const T angle = std::atan2(y, x + T(1));
  if (std::hypot(x, y) < T(0.5)) {
    const T r = x * (x + T(2)) + y * y;
    if (r == T(0)) return Complex<T>(x, angle);  // r underflowed
    return Complex<T>(T(0.5) * std::log1p(r), angle);
  }
  return Complex<T>(std::log(std::hypot(x + T(1), y)), angle);
}

}  // namespace cmath
}  // namespace fastt
