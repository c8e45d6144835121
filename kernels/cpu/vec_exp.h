// exp written as plain arithmetic so loops over it vectorize, shared by the
// softmax, norm and loss kernels, and FASTT_VEC_CLONES for their row loops.
// Include it before any kernel code: it also turns off trapping-math for
// the rest of the file (see below).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

// The kernel loops only select between finite values and never read FP
// exception flags; without this GCC will not if-convert the selects in
// vec_exp and the loops stay scalar.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

// The build targets baseline x86-64 (SSE2). Row kernels marked
// FASTT_VEC_CLONES also get AVX2+FMA and AVX-512 clones, one picked at load
// time (ifunc): measured on an EPYC, an exp loop runs about 3x faster 8-wide
// than 4-wide and another 1.5-2x faster 16-wide.
// Mark functions that take a whole range of rows, so the indirect call is
// paid once per range, and keep the loops they inline in their body.
// Not under TSan: the dynamic loader runs ifunc resolvers before the TSan
// runtime is initialised, and an instrumented resolver crashes at load.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && \
    !defined(__clang__) && !defined(__AVX2__) && !defined(__SANITIZE_THREAD__)
#define FASTT_VEC_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", \
                               "default")))
#else
#define FASTT_VEC_CLONES
#endif

namespace fastt {
namespace cpu {

inline float bits_to_float(int32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// exp for float (std::exp is an opaque libm call): Cody-Waite reduction
// x = k ln2 + r, Cephes' degree-6 polynomial for e^r (about 1 ulp), 2^k
// built from bits in two halves so results down to the subnormal range
// stay right.
inline float vec_exp(float x) {
  // Written so NaN clamps to -104 too (its result is replaced below): a
  // NaN reaching int32_t(k) and the exponent shifts would be UB.
  float xc = x > -104.0f ? x : -104.0f;
  xc = xc < 88.7f ? xc : 88.7f;
  // Round to nearest by the 1.5 * 2^23 trick (no SSE4.1 roundps needed).
  const float k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t ki = int32_t(k);
  const int32_t k1 = ki >> 1, k2 = ki - k1;
  const float s1 = bits_to_float((k1 + 127) << 23);
  const float s2 = bits_to_float((k2 + 127) << 23);
  float y = p * s1 * s2;
  y = x > 88.7f ? INFINITY : y;
  return x != x ? x : y;
}
inline double vec_exp(double x) { return std::exp(x); }

// NaN-propagating max step used by the row reductions.
template <class A>
inline A max_nan(A m, A v) {
  return ((v > m) | (v != v)) ? v : m;
}

}  // namespace cpu
}  // namespace fastt
