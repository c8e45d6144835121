// exp written as plain arithmetic so loops over it vectorize, shared by the
// softmax, norm and loss kernels, and FASTT_VEC_CLONES for their row loops.
// Include it before any kernel code: it also turns off trapping-math for
// the rest of the file (see below).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

// The kernel loops only select between finite values and never read FP
// exception flags; without no-trapping-math GCC will not if-convert the
// selects in vec_exp and the loops stay scalar. fastt's own build passes
// -fno-trapping-math (CMakeLists.txt: a pragma here would also keep every
// function defined before it, std::isnan and std::min included, from
// inlining into the kernels); the pragma remains for builds that compile
// these files without the flag (tests/cuda_emu).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__NO_TRAPPING_MATH__)
#pragma GCC optimize("no-trapping-math")
#endif

#include "kernels/cpu/vec_clones.h"

namespace fastt {
namespace cpu {

FASTT_VEC_INLINE float bits_to_float(int32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// x = k ln2 + r for exp and expm1: k = round(x log2 e) by adding and
// subtracting 1.5 * 2^23 (no SSE4.1 roundps needed; m keeps k in its low
// mantissa bits, see pow2_of), r in two Cody-Waite steps (|r| <= ln2 / 2).
// x must lie within +-2^21.
struct ExpReduced {
  float m, k, r;
};
FASTT_VEC_INLINE ExpReduced exp_reduce(float x) {
  const float m = x * 1.44269504088896341f + 12582912.0f;
  const float k = m - 12582912.0f;
  float r = x - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  return {m, k, r};
}
// 2^(k + bias) as a float from the magic sum m of exp_reduce (one integer
// subtract, add and shift; k + bias + 127 must lie in [1, 254]). Unsigned,
// so the garbage bits of a NaN m that callers select away are not UB.
FASTT_VEC_INLINE float pow2_of(float m, int32_t bias) {
  uint32_t mb;
  std::memcpy(&mb, &m, 4);
  return bits_to_float(
      int32_t((mb - 0x4B400000u + uint32_t(bias + 127)) << 23));
}
// Cephes' degree-6 polynomial for e^r, |r| <= ln2 / 2 (about 1 ulp).
FASTT_VEC_INLINE float exp_poly(float r) {
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * r * r + r + 1.0f;
}

// exp for float (std::exp is an opaque libm call): exp_reduce, exp_poly,
// 2^k built from bits in two halves so results down to the subnormal
// range stay right.
FASTT_VEC_INLINE float vec_exp(float x) {
  // Written so NaN clamps to -104 too (its result is replaced below): a
  // NaN reaching int32_t(k) and the exponent shifts would be UB.
  float xc = x > -104.0f ? x : -104.0f;
  // ln(FLT_MAX) = 88.7228391: up to it the result is finite (k = 128
  // scales by 2^64 twice), above it the product overflows to inf.
  xc = xc < 88.7228394f ? xc : 88.7228394f;
  const ExpReduced e = exp_reduce(xc);
  const float p = exp_poly(e.r);
  const int32_t ki = int32_t(e.k);
  const int32_t k1 = ki >> 1, k2 = ki - k1;
  const float s1 = bits_to_float((k1 + 127) << 23);
  const float s2 = bits_to_float((k2 + 127) << 23);
  float y = p * s1 * s2;
  y = x > 88.7228394f ? INFINITY : y;
  return x != x ? x : y;
}
FASTT_VEC_INLINE double vec_exp(double x) { return std::exp(x); }

#if defined(__AVX512F__)
// (The zero-masked forms with every lane set: the same instructions, but
// GCC 12's unmasked wrappers start from _mm512_undefined_ps(), which
// -Wmaybe-uninitialized flags once inlined.)
constexpr __mmask16 kAll16 = 0xFFFF;

// 16 floats at once, for the AVX-512 level's build (the files compiled
// once per level, FASTT_ISA_LEVEL_BUILD). x = k ln2 + r as exp_reduce
// does, and e^r - 1 = r + r^2 q(r) with exp_poly's coefficients; x must
// lie within +-2^21.
struct Exp16 {
  __m512 k, em;  // k, e^r - 1
};
FASTT_VEC_INLINE Exp16 exp16_reduced(__m512 x) {
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 k = _mm512_sub_ps(
      _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), magic),
      magic);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 q = _mm512_set1_ps(1.9875691500e-4f);
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.3981999507e-3f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(8.3334519073e-3f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(4.1665795894e-2f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.6666665459e-1f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(5.0000001201e-1f));
  return {k, _mm512_fmadd_ps(q, _mm512_mul_ps(r, r), r)};
}
// vec_exp on 16 floats: vscalefps for (1 + em) 2^k, in one rounding, into
// the subnormal range and to inf on overflow, which vec_exp spends two
// multiplies and four compares and selects on (GCC does not vectorize
// ldexp into it): about 15 instructions per 16 values against vec_exp's
// 40. Same results as vec_exp within 1 ulp (the single rounding of
// subnormal results can differ); NaN stays NaN (min/max return their
// second operand for a NaN), +-inf clamp to 89 / -104, whose results
// overflow to inf / round to 0.
FASTT_VEC_INLINE __m512 vec_exp16(__m512 x) {
  const Exp16 e = exp16_reduced(_mm512_maskz_max_ps(
      kAll16, _mm512_set1_ps(-104.0f),
      _mm512_maskz_min_ps(kAll16, _mm512_set1_ps(89.0f), x)));
  return _mm512_maskz_scalef_ps(
      kAll16, _mm512_add_ps(e.em, _mm512_set1_ps(1.0f)), e.k);
}
// tanh on 16 floats: tanh|x| = -m / (2 + m), m = expm1(-2|x|) =
// 2^k em + (2^k - 1) (k <= 0: 2^k - 1 is exact down to k = -24, and past
// -18 the result is 1 in float anyway), so small |x| needs no Taylor
// branch: em keeps its relative accuracy. The quotient by vrcp14ps and
// one Newton step (2^-28 before the final rounding), not vdivps. x's sign
// is put back; NaN stays NaN, +-inf give +-1, +-0 themselves.
FASTT_VEC_INLINE __m512 vec_tanh16(__m512 x) {
  const __m512i sign = _mm512_set1_epi32(int32_t(0x80000000u));
  const Exp16 e = exp16_reduced(_mm512_maskz_max_ps(
      kAll16, _mm512_set1_ps(-20.0f),
      _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(-2.0f))));
  const __m512 s = _mm512_maskz_scalef_ps(kAll16, _mm512_set1_ps(1.0f), e.k);
  const __m512 m =
      _mm512_fmadd_ps(s, e.em, _mm512_sub_ps(s, _mm512_set1_ps(1.0f)));
  const __m512 num = _mm512_sub_ps(_mm512_setzero_ps(), m);  // +0 at 0
  const __m512 den = _mm512_add_ps(_mm512_set1_ps(2.0f), m);
  const __m512 y = _mm512_maskz_rcp14_ps(kAll16, den);
  __m512 v = _mm512_mul_ps(num, y);
  v = _mm512_fmadd_ps(_mm512_fnmadd_ps(den, v, num), y, v);
  return _mm512_castsi512_ps(_mm512_or_si512(
      _mm512_castps_si512(v),
      _mm512_and_si512(_mm512_castps_si512(x), sign)));
}
#endif

// exp for arguments bounded above, x <= 70: softmax's x - max, the
// sigmoid's -|x|, tanh's -2|x|. One scale 2^(k + 24) times 2^-24 (a single
// rounding into the subnormal range, down to x = -104, below which the
// result is 0), no overflow select, NaN through the arithmetic: about 7
// fewer vector instructions than vec_exp at the same accuracy. Past 70 the
// exponent bits wrap (garbage, not UB).
FASTT_VEC_INLINE float vec_exp_bounded(float x) {
  const float xc = x < -104.0f ? -104.0f : x;  // NaN stays NaN
  const ExpReduced e = exp_reduce(xc);
  return (exp_poly(e.r) * pow2_of(e.m, 24)) * 5.9604644775390625e-8f;
}
FASTT_VEC_INLINE double vec_exp_bounded(double x) { return std::exp(x); }

// The logistic sigmoid from e = exp(-|x|) <= 1: (x < 0 ? e : 1) / (1 + e),
// so neither tail cancels or overflows; NaN stays NaN (-|NaN| is NaN).
FASTT_VEC_INLINE float vec_sigmoid(float x) {
  const float e = vec_exp_bounded(x < 0.0f ? x : -x);
  return (x < 0.0f ? e : 1.0f) / (1.0f + e);
}

// expm1: x = k ln2 + r as in vec_exp, e^r - 1 from its Taylor series to
// r^8 (|r| <= ln2 / 2: truncation 6e-10 relative), then
// 2^k (e^r - 1) + (2^k - 1) while 2^k - 1 is exact (k <= 24) and
// 2^k e^r (in two halves, up to k = 128) beyond, where the -1 is below
// half an ulp. About 1.5 ulp; SLEEF's expm1f (1 ulp) ran at torch's speed.
// Zeros keep their sign; below -18 the result is -1, NaN stays NaN.
FASTT_VEC_INLINE float vec_expm1(float x) {
  float xc = x > -18.0f ? x : -18.0f;
  xc = xc < 88.7228394f ? xc : 88.7228394f;
  const ExpReduced e = exp_reduce(xc);
  const float r = e.r;
  const float em =
      r + r * r *
              (0.5f +
               r * (1.0f / 6.0f +
                    r * (1.0f / 24.0f +
                         r * (1.0f / 120.0f +
                              r * (1.0f / 720.0f +
                                   r * (1.0f / 5040.0f +
                                        r * (1.0f / 40320.0f)))))));
  const int32_t ki = int32_t(e.k);
  const float s = bits_to_float(((ki < 24 ? ki : 24) + 127) << 23);
  const float small = s * em + (s - 1.0f);
  const int32_t k1 = ki >> 1, k2 = ki - k1;
  const float big = (em + 1.0f) * bits_to_float((k1 + 127) << 23) *
                    bits_to_float((k2 + 127) << 23);
  const float y = ki > 24 ? big : small;
  return ((x != x) | (x == 0.0f)) ? x : y;
}

// tanh: below |x| = 1/4 its odd series to x^13; above, (1 - e) / (1 + e)
// with e = exp(-2|x|) and the sign put back by a select (no copysign,
// which keeps GCC from vectorizing the baseline clone). About 2 ulp.
FASTT_VEC_INLINE float vec_tanh(float x) {
  const float x2 = x * x;
  const float s =
      x * (1.0f +
           x2 * (-1.0f / 3.0f +
                 x2 * (2.0f / 15.0f +
                       x2 * (-17.0f / 315.0f +
                             x2 * (62.0f / 2835.0f +
                                   x2 * (-1382.0f / 155925.0f +
                                         x2 * (21844.0f / 6081075.0f)))))));
  const float a = x < 0.0f ? -x : x;
  const float e = vec_exp_bounded(-2.0f * a);
  const float t = (1.0f - e) / (1.0f + e);
  const float r = x2 < 0.0625f ? s : (x < 0.0f ? -t : t);
  return x != x ? x : r;
}

// erfc(|x|) from Numerical Recipes' Chebyshev fit t exp(-x^2 + P(t)),
// t = 1 / (1 + |x| / 2): relative error < 1.2e-7 for every x >= 0. P's
// coefficients, and erf's Maclaurin series in x^2 (2/sqrt(pi) (x - x^3/3
// + x^5/10 - x^7/42 + x^9/216 - x^11/1320)), highest degree first (the
// AVX-512 vec_erf16 below takes fitted pieces instead).
constexpr float kErfcP[10] = {0.17087277f,  -0.82215223f, 1.48851587f,
                              -1.13520398f, 0.27886807f,  -0.18628806f,
                              0.09678418f,  0.37409196f,  1.00002368f,
                              -1.26551223f};
constexpr float kErfSeries[6] = {-1.0f / 1320.0f, 1.0f / 216.0f,
                                 -1.0f / 42.0f,   1.0f / 10.0f,
                                 -1.0f / 3.0f,    1.0f};
constexpr float kTwoOverSqrtPi = 1.12837916709551257f;
FASTT_VEC_INLINE float vec_erfc_abs(float a) {
  const float t = 1.0f / (1.0f + 0.5f * a);
  float p = kErfcP[0];
  for (int i = 1; i < 10; ++i) p = p * t + kErfcP[i];
  return t * vec_exp(-a * a + p);
}

// erf: below |x| = 1/2 its Maclaurin series (relative accuracy near 0),
// above 1 - erfc(|x|) with the sign put back.
FASTT_VEC_INLINE float vec_erf(float x) {
  const float a = x < 0.0f ? -x : x;
  const float x2 = x * x;
  float q = kErfSeries[0];
  for (int i = 1; i < 6; ++i) q = q * x2 + kErfSeries[i];
  const float series = kTwoOverSqrtPi * x * q;
  const float big = 1.0f - vec_erfc_abs(a);
  const float r = a < 0.5f ? series : (x < 0.0f ? -big : big);
  return x != x ? x : r;
}

#if defined(__AVX512F__)
// erf on 16 floats as fitted pieces (kernels/erf_tables.inc, kErfF,
// printed by scripts/fit_erf.py): sixteen intervals of 1/4 up to 4 (float
// erf is 1 from 3.92 on), one degree-6 polynomial each in a = |x| minus
// the interval's centre, the constant in two floats (hi added last), each
// lane's coefficients picked by vpermps; the first interval holds erf(a)
// / a - 1 (erf = a + a S, one FMA: relative accuracy down to the
// subnormals). No division, no exponential, no branch: 64K values over
// [-4, 4] 46 -> 25 us (torch's MKL vsErf 38), within 1.02 ulp measured
// (the series-and-erfc form before: 2.56). NaN stays NaN, -0 -0, +-inf +-1.
#include "kernels/erf_tables.inc"
FASTT_VEC_INLINE __m512 vec_erf16(__m512 x) {
  const __m512 a = _mm512_abs_ps(x);
  const __m512 ac = _mm512_maskz_min_ps(kAll16, a, _mm512_set1_ps(4.0f));
  // the interval, rounded to nearest: the floor (a boundary is in both)
  const __m512 t = _mm512_maskz_min_ps(
      kAll16, _mm512_fmsub_ps(ac, _mm512_set1_ps(4.0f), _mm512_set1_ps(0.5f)),
      _mm512_set1_ps(15.0f));
  const __m512 k =
      _mm512_maskz_roundscale_ps(kAll16, t, _MM_FROUND_TO_NEAREST_INT);
  const __m512i i = _mm512_maskz_cvtps_epi32(kAll16, k);
  const __m512 u = _mm512_sub_ps(
      ac, _mm512_fmadd_ps(k, _mm512_set1_ps(0.25f), _mm512_set1_ps(0.125f)));
  constexpr int kRows = sizeof(kErfF) / sizeof(kErfF[0]);
  // (the zero-masked vpermps with every lane: the unmasked intrinsic
  // starts from _mm512_undefined_ps(), which GCC 12 flags once inlined)
  auto pick = [&](const float* row) {
    return _mm512_maskz_permutexvar_ps(kAll16, i, _mm512_loadu_ps(row));
  };
  __m512 p = pick(kErfF[0]);
  for (int r = 1; r < kRows - 1; ++r)
    p = _mm512_fmadd_ps(p, u, pick(kErfF[r]));
  p = _mm512_add_ps(p, pick(kErfF[kRows - 1]));
  const __mmask16 first =
      _mm512_cmp_ps_mask(k, _mm512_set1_ps(0.5f), _CMP_LT_OQ);
  const __m512 m = _mm512_mask_blend_ps(first, _mm512_set1_ps(1.0f), ac);
  const __m512 n = _mm512_maskz_mov_ps(first, ac);
  const __m512 r = _mm512_castsi512_ps(_mm512_or_si512(
      _mm512_castps_si512(_mm512_fmadd_ps(p, m, n)),
      _mm512_and_si512(_mm512_castps_si512(x),
                       _mm512_set1_epi32(int32_t(0x80000000u)))));
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), r, x);
}
#endif

// The standard normal's smaller tail h = min(Phi(x), 1 - Phi(x)) =
// erfc(a) / 2, a = |x| / sqrt 2, and the density's exponential
// e = exp(-x^2 / 2) it is built from (GELU's gradient needs both):
// h = t Q(t) e with t = 1 / (1 + 0.36 a) and Q a degree-6 fit of
// erfcx(a) / (2 t), 1.3e-7 relative for |x| <= 6 (weighted looser below,
// where h < 1e-9 and its absolute error stays under 1e-13).
// e = 2^u, u = -x^2 log2(e) / 2 (clamped at |x| = 13.19, u = -125.5),
// 2^(u - round u) from a degree-5 fit (1.6e-7). Rounding u to float adds
// |u| 1e-7 relative: in all GELU is within 8e-7 relative of the exact
// value where it exceeds 1e-7 in magnitude (x > -5.5), 1.5e-6 down to
// 1e-9 (x = -6.3). One division, one exponential, no cancellation on
// either side: the previous form, Numerical Recipes' t exp(-a^2 + P(t))
// with ten terms and vec_exp's two-step scaling, made GELU 1.5x torch's
// time at 1M. NaN propagates through t; e is 0 past the clamp (h is not:
// it is under 1e-39 there), so x e stays NaN at x = +-inf, as torch's.
struct NormalTail {
  float h, e;
};
FASTT_VEC_INLINE NormalTail vec_normal_tail(float x) {
  const float ax = x < 0.0f ? -x : x;
  const float t = 1.0f / (1.0f + 0.36f * 0.70710678118654752440f * ax);
  const float q =
      0.5f * 2.015449107e-01f +
      t * (0.5f * 2.231447697e-01f +
           t * (0.5f * 8.168809116e-02f +
                t * (0.5f * 4.816439748e-01f +
                     t * (0.5f * -4.147596657e-01f +
                          t * (0.5f * 5.984718204e-01f +
                               t * (0.5f * -1.717340350e-01f))))));
  const float xc = ax < 13.19f ? ax : 13.19f;  // NaN: 13.19
  const float u = (xc * -0.72134752044448170368f) * xc;
  const float m = u + 12582912.0f;  // round(u) in the low bits of m
  const float f = u - (m - 12582912.0f);
  const float p =
      1.0f +
      f * (6.931469440e-01f +
           f * (2.402212024e-01f +
                f * (5.550713092e-02f +
                     f * (9.675541893e-03f + f * 1.327648410e-03f))));
  const float e = p * pow2_of(m, 0);
  return {t * q * e, ax < 13.19f ? e : 0.0f};
}

// The standard normal CDF Phi(x) from the tail above.
FASTT_VEC_INLINE float vec_normal_cdf(float x) {
  const float h = vec_normal_tail(x).h;
  return x < 0.0f ? h : 1.0f - h;
}

// The NaN-propagating step of a max (IsMax) or min: v where it is past m
// or a NaN, as torch's max/min (a NaN anywhere wins). A compare, a NaN
// compare, an or and a blend, all vectorizable (branches neither vectorize
// nor predict on random data). Where a loop can, a plain select with the
// NaNs noted on the side is cheaper (reduce_spans.h's extreme_span).
template <bool IsMax, class A>
FASTT_VEC_INLINE A pick_nan(A m, A v) {
  return ((IsMax ? v > m : v < m) | (v != v)) ? v : m;
}

}  // namespace cpu
}  // namespace fastt
