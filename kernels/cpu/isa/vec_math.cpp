// One instruction set's vector math table (kernels/cpu/vec_math.h): the
// rows of kernels/cpu/vec_math.def as range functions over SLEEF's vector
// functions. CMake compiles this file once per level with -mavx512f,
// -mavx2 -mfma or the SSE2 baseline, and FASTT_VM_ISA = 3, 2 or 1; it sits
// outside kernels/cpu's glob so that nothing else is built with those
// flags. Everything here has internal linkage or an ISA-named symbol: an
// inline function shared with baseline code could be merged into an
// AVX-512 copy by the linker and run on a CPU without it.
#include <immintrin.h>

// GCC 12's AVX-512 conversion intrinsics start from _mm512_undefined_*(),
// which -W(maybe-)uninitialized flags once inlined into erfc (a false
// positive in the compiler's own header; before the include, as the
// warning's location is there).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/vec_math.h"

#include <sleef.h>
#undef CONST
#undef IMPORT

#if FASTT_VM_ISA == 3
#define FASTT_VM_NS avx512
#define FASTT_VM_NAME "avx512"
#define FASTT_VM_SUFFIX avx512f
#define FASTT_VM_WF 16
#define FASTT_VM_WD 8
using VF = __m512;
using VD = __m512d;
#define FASTT_VM_LF(p) _mm512_loadu_ps(p)
#define FASTT_VM_SF(p, v) _mm512_storeu_ps(p, v)
#define FASTT_VM_LD(p) _mm512_loadu_pd(p)
#define FASTT_VM_SD(p, v) _mm512_storeu_pd(p, v)
// every lane's |v| <= lim (false for a nan lane)
#define FASTT_VM_INF(v, lim) \
  (_mm512_cmp_ps_mask(_mm512_abs_ps(v), _mm512_set1_ps(lim), _CMP_LE_OQ) == \
   0xFFFF)
#define FASTT_VM_IND(v, lim) \
  (_mm512_cmp_pd_mask(_mm512_abs_pd(v), _mm512_set1_pd(lim), _CMP_LE_OQ) == \
   0xFF)
// the low / high half of a float vector as doubles, and back
#define FASTT_VM_SQRTF(v) _mm512_sqrt_ps(v)
#define FASTT_VM_F2D_LO(v) _mm512_cvtps_pd(_mm512_castps512_ps256(v))
#define FASTT_VM_F2D_HI(v) \
  _mm512_cvtps_pd(     \
      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)))
#define FASTT_VM_D2F(lo, hi)                                       \
  _mm512_castpd_ps(_mm512_insertf64x4(                              \
      _mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(lo))), \
      _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1))
// a * b - c in one rounding; one double per lane from a 16-entry row by
// each lane's index (vpermt2pd reads its low 4 bits), and the index from
// a double holding it in its low mantissa bits (the 1.5 * 2^52 trick)
#define FASTT_VM_FMSD(a, b, c) _mm512_fmsub_pd(a, b, c)
#define FASTT_VM_MIND(a, b) _mm512_min_pd(a, b)  // b where either is NaN
#define FASTT_VM_MAXD(a, b) _mm512_max_pd(a, b)
using IV16 = __m512i;
#define FASTT_VM_IDX16(t) _mm512_castpd_si512(t)
#define FASTT_VM_PICK16(row, i) \
  _mm512_permutex2var_pd(_mm512_loadu_pd(row), i, _mm512_loadu_pd((row) + 8))
#elif FASTT_VM_ISA == 2
#define FASTT_VM_NS avx2
#define FASTT_VM_NAME "avx2"
#define FASTT_VM_SUFFIX avx2
#define FASTT_VM_WF 8
#define FASTT_VM_WD 4
using VF = __m256;
using VD = __m256d;
#define FASTT_VM_LF(p) _mm256_loadu_ps(p)
#define FASTT_VM_SF(p, v) _mm256_storeu_ps(p, v)
#define FASTT_VM_LD(p) _mm256_loadu_pd(p)
#define FASTT_VM_SD(p, v) _mm256_storeu_pd(p, v)
#define FASTT_VM_INF(v, lim)                                              \
  (_mm256_movemask_ps(_mm256_cmp_ps(                                      \
       _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v), _mm256_set1_ps(lim),   \
       _CMP_LE_OQ)) == 0xFF)
#define FASTT_VM_IND(v, lim)                                              \
  (_mm256_movemask_pd(_mm256_cmp_pd(                                      \
       _mm256_andnot_pd(_mm256_set1_pd(-0.0), v), _mm256_set1_pd(lim),    \
       _CMP_LE_OQ)) == 0xF)
#define FASTT_VM_SQRTF(v) _mm256_sqrt_ps(v)
#define FASTT_VM_F2D_LO(v) _mm256_cvtps_pd(_mm256_castps256_ps128(v))
#define FASTT_VM_F2D_HI(v) _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))
#define FASTT_VM_D2F(lo, hi)                                        \
  _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), \
                       _mm256_cvtpd_ps(hi), 1)
#define FASTT_VM_FMSD(a, b, c) _mm256_fmsub_pd(a, b, c)
#define FASTT_VM_MIND(a, b) _mm256_min_pd(a, b)
#define FASTT_VM_MAXD(a, b) _mm256_max_pd(a, b)
using IV16 = __m256i;
#define FASTT_VM_IDX16(t) \
  _mm256_and_si256(_mm256_castpd_si256(t), _mm256_set1_epi64x(15))
#define FASTT_VM_PICK16(row, i) _mm256_i64gather_pd(row, i, 8)
#elif FASTT_VM_ISA == 1
#define FASTT_VM_NS sse2
#define FASTT_VM_NAME "sse2"
#define FASTT_VM_SUFFIX sse2
#define FASTT_VM_WF 4
#define FASTT_VM_WD 2
using VF = __m128;
using VD = __m128d;
#define FASTT_VM_LF(p) _mm_loadu_ps(p)
#define FASTT_VM_SF(p, v) _mm_storeu_ps(p, v)
#define FASTT_VM_LD(p) _mm_loadu_pd(p)
#define FASTT_VM_SD(p, v) _mm_storeu_pd(p, v)
#define FASTT_VM_INF(v, lim)                                             \
  (_mm_movemask_ps(_mm_cmple_ps(_mm_andnot_ps(_mm_set1_ps(-0.0f), v),    \
                                _mm_set1_ps(lim))) == 0xF)
#define FASTT_VM_IND(v, lim)                                             \
  (_mm_movemask_pd(_mm_cmple_pd(_mm_andnot_pd(_mm_set1_pd(-0.0), v),     \
                                _mm_set1_pd(lim))) == 0x3)
#define FASTT_VM_SQRTF(v) _mm_sqrt_ps(v)
#define FASTT_VM_F2D_LO(v) _mm_cvtps_pd(v)
#define FASTT_VM_F2D_HI(v) _mm_cvtps_pd(_mm_movehl_ps(v, v))
#define FASTT_VM_D2F(lo, hi) _mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi))
#else
#error "FASTT_VM_ISA must be 1 (sse2), 2 (avx2) or 3 (avx512)"
#endif

// Sleef_<name><f|d><lanes>_<ulp><isa>, e.g. Sleef_tanhf16_u10avx512f.
#define FASTT_VM_CAT_(a, b, c, d, e, f) a##b##c##d##_##e##f
#define FASTT_VM_CAT(a, b, c, d, e, f) FASTT_VM_CAT_(a, b, c, d, e, f)
#define FASTT_VM_F(name, ulp) \
  FASTT_VM_CAT(Sleef_, name, f, FASTT_VM_WF, ulp, FASTT_VM_SUFFIX)
#define FASTT_VM_D(name, ulp) \
  FASTT_VM_CAT(Sleef_, name, d, FASTT_VM_WD, ulp, FASTT_VM_SUFFIX)
// A unary row's function by its type's `how`: SLEEF's (S) or fastt's
// own below (C); T is F (float) or D (double).
#define FASTT_VM_FN_S(T, name, ulp) FASTT_VM_##T(name, ulp)
#define FASTT_VM_FN_C(T, name, ulp) own_##name##_##T
// An own kernel all of vector arithmetic (no SLEEF call), inlined into its
// range loop: its constants then stay in registers across vectors (GCC
// kept erfc's as a call per vector; inlined, 64K float64 erfc took
// 0.84-0.97x the time, float32 0.83x). Not one that calls SLEEF: every vector
// register is the callee's, so the constants would be spilled around
// each call instead (float64 erfinv inlined took 1.3x).
#define FASTT_VM_OWN __attribute__((always_inline)) inline

namespace fastt {
namespace vec_math {
namespace FASTT_VM_NS {
namespace {

// Loads, stores and widths per element type.
template <class T> struct V;
template <> struct V<float> {
  using type = VF;
  static constexpr int64_t W = FASTT_VM_WF;
  static type load(const float* p) { return FASTT_VM_LF(p); }
  static void store(float* p, type v) { FASTT_VM_SF(p, v); }
  static bool within(type v, float lim) { return FASTT_VM_INF(v, lim); }
};
template <> struct V<double> {
  using type = VD;
  static constexpr int64_t W = FASTT_VM_WD;
  static type load(const double* p) { return FASTT_VM_LD(p); }
  static void store(double* p, type v) { FASTT_VM_SD(p, v); }
  static bool within(type v, double lim) { return FASTT_VM_IND(v, lim); }
};

// A row's float / double domain limits and libm's function beyond them
// (float lanes computed in double, so correctly rounded but rarely)
// (builtins, not <cmath>'s inline wrappers: see the top of the file).
// (A template, instantiated only for a row with a limit: erfinv has no
// builtin.)
#define FASTT_VM1(functor, name, ulp, flim, dlim, fhow, dhow)         \
  struct Row##functor {                                              \
    static constexpr float kLimF = flim;                             \
    static constexpr double kLimD = dlim;                            \
    template <class U>                                               \
    static U libm(U v) { /* float in double: 0.5 ulp */              \
      return U(__builtin_##name(v));                                 \
    }                                                                \
  };
#define FASTT_VM2(functor, ...)
#include "kernels/cpu/vec_math.def"
#undef FASTT_VM1
#undef FASTT_VM2

// Whole vectors, then the tail through a zero-padded vector on the stack.
// A row with a domain limit sends any vector with a lane beyond it (or a
// nan) to libm's function, lane by lane.
// Fn: a SLEEF function (its return type is const-qualified, hence auto).
template <class T, auto Fn, class Row>
void range1(const T* x, T* o, int64_t n) {
  constexpr int64_t W = V<T>::W;
  constexpr T lim = std::is_same<T, float>::value ? T(Row::kLimF)
                                                  : T(Row::kLimD);
  auto one = [&](const T* p, T* r) {
    const typename V<T>::type v = V<T>::load(p);
    if constexpr (lim > T(0)) {
      if (!V<T>::within(v, lim)) {
        T tmp[W];
        for (int64_t k = 0; k < W; ++k) tmp[k] = Row::libm(p[k]);
        for (int64_t k = 0; k < W; ++k) r[k] = tmp[k];
        return;
      }
    }
    V<T>::store(r, Fn(v));
  };
  int64_t i = 0;
  for (; i + W <= n; i += W) one(x + i, o + i);
  if (i < n) {
    T buf[W] = {};
    for (int64_t k = 0; k < n - i; ++k) buf[k] = x[i + k];
    one(buf, buf);
    for (int64_t k = 0; k < n - i; ++k) o[i + k] = buf[k];
  }
}

template <class T, auto Fn>
void range2(const T* a, const T* b, T* o, int64_t n) {
  constexpr int64_t W = V<T>::W;
  int64_t i = 0;
  for (; i + W <= n; i += W)
    V<T>::store(o + i, Fn(V<T>::load(a + i), V<T>::load(b + i)));
  if (i < n) {
    T ba[W] = {}, bb[W] = {};
    for (int64_t k = 0; k < n - i; ++k) {
      ba[k] = a[i + k];
      bb[k] = b[i + k];
    }
    V<T>::store(ba, Fn(V<T>::load(ba), V<T>::load(bb)));
    for (int64_t k = 0; k < n - i; ++k) o[i + k] = ba[k];
  }
}

// p(t) by Horner's scheme, c from the highest power down; c[0] - 0 is
// c[0] in every lane (c + 0 is not for -0, which keeps the compiler from
// folding it). Estrin's scheme (pairs, then pairs in t^2, ...: a shorter
// dependency chain) measured no faster here, as these kernels are bound
// by FMA throughput (AMD EPYC, AVX-512, 64K values: erf 0.98-1.02x,
// erfinv 0.98x; erfc and exp 1.1x slower, for the extra products).
template <class VT, class E, size_t N>
__attribute__((always_inline)) inline VT horner(const E (&c)[N], VT t) {
  VT p = c[0] - VT{};
  for (size_t i = 1; i < N; ++i) p = p * t + c[i];
  return p;
}

// The composed rows (the def's C): GCC's vector operators on this level's
// types, around SLEEF's functions at this level.
// log1p(x) = log(u) x / (u - 1), u = 1 + x rounded (Goldberg: the
// quotient corrects u's rounding; u == 1 gives x itself): SLEEF's log
// plus a division and a product, within 3 ulp (measured 2.4 in float,
// 2.3 in double); SLEEF's log1p runs double-float arithmetic and was 0.96x
// torch's time at 1M floats, this 0.77x. -1 gives -inf (log 0 times 1),
// below -1 NaN (log of a negative), +inf itself.
template <class E, class V, class Log>
V log1p_from(V x, Log log) {
  const V u = E(1) + x;
  const V r = log(u) * (x / (u - E(1)));
  return ((u == E(1)) | (x == E(__builtin_inf()))) ? x : r;
}
// atanh(x) = log1p(2t / (1 - t)) / 2 with x's sign, t = |x|: within 3.5
// ulp (measured 2.9). 1 gives inf, beyond 1 NaN (log1p below -1), -0 -0.
template <class E, class V, class Log>
V atanh_from(V x, Log log) {
  using I = std::conditional_t<sizeof(E) == 4, int32_t, int64_t>;
  typedef I IV __attribute__((vector_size(sizeof(V))));
  const V t = x < E(0) ? -x : x;
  const V r = E(0.5) * log1p_from<E>((t + t) / (E(1) - t), log);
  const IV sign = (IV)(-V{});  // -0.0 in every lane: the sign bits
  return (V)((IV)r | ((IV)x & sign));  // r >= 0 or NaN
}
const auto log_f = [](VF v) -> VF { return FASTT_VM_F(log, u10)(v); };
const auto log_d = [](VD v) -> VD { return FASTT_VM_D(log, u10)(v); };
VF own_log1p_F(VF x) { return log1p_from<float>(x, log_f); }
VD own_log1p_D(VD x) { return log1p_from<double>(x, log_d); }
VF own_atanh_F(VF x) { return atanh_from<float>(x, log_f); }
VD own_atanh_D(VD x) { return atanh_from<double>(x, log_d); }
// exp in double at AVX-512: x = k ln2 + r (|r| <= ln2 / 2; k by the
// 1.5 * 2^52 rounding trick, r by two FMAs against ln2 split in two
// doubles), e^r by its Taylor series to r^13 (truncation 4e-18 relative),
// 2^k by vscalefpd (one rounding into the subnormal range, inf on
// overflow): within 1 ulp, 1.9x faster than SLEEF's 1-ulp expd8 (which
// ran at 1.8x torch's time: MKL's vdExp). NaN stays NaN (min/max return
// their second operand for a NaN); +-inf clamp to 710 / -746, whose
// results overflow to inf / round to 0. Other levels: SLEEF's.
#if FASTT_VM_ISA >= 2
// e^r's Taylor coefficients 1/12!, 1/11!, ..., 1/2, 1 (before the last 1)
constexpr double kInvFact[] = {
    1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
    1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,     1.0 / 120.0,
    1.0 / 24.0,        1.0 / 6.0,        0.5,             1.0};
#endif
#if FASTT_VM_ISA == 3
FASTT_VM_OWN VD own_exp_D(VD x) {
  const VD xc = _mm512_max_pd(_mm512_set1_pd(-746.0),
                              _mm512_min_pd(_mm512_set1_pd(710.0), x));
  const VD magic = _mm512_set1_pd(6755399441055744.0);
  const VD k = _mm512_fmadd_pd(xc, _mm512_set1_pd(1.4426950408889634), magic)
               - magic;
  VD r = _mm512_fnmadd_pd(k, _mm512_set1_pd(0.6931471805599453), xc);
  r = _mm512_fnmadd_pd(k, _mm512_set1_pd(2.3190468138462996e-17), r);
  VD p = _mm512_set1_pd(1.0 / 6227020800.0);  // 1/13!
  for (double c : kInvFact) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(c));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0));
  return _mm512_scalef_pd(p, k);
}
#else
VD own_exp_D(VD x) { return FASTT_VM_D(exp, u10)(x); }
#endif
// log10(x) = log2(x) log10(2) through SLEEF's 3.5-ulp log2 (it has no
// 3.5-ulp log10; its 1-ulp one is 2x slower): within 4 ulp (measured 3.83
// in float). Specials pass through the product (0 -inf, inf inf, <0 NaN).
VF own_log10_F(VF x) {
  return FASTT_VM_F(log2, u35)(x) * 0.301029995663981195214f;
}
VD own_log10_D(VD x) {
  return FASTT_VM_D(log2, u35)(x) * 0.301029995663981195214;
}

#if FASTT_VM_ISA != 3  // (AVX-512: all in float, further down)
// erfc in float: erfc(x) = t G(t) exp(-x^2) for x >= 0 (2 - that below),
// t = 1 / (1 + x / 2), G a degree-11 fit of erfcx(x) / t in t over x in
// [0, 10.1] (5e-10 relative, scripts/fit_erfc.py; past 10.1 erfc rounds
// to 0). t and G in double, each half of the float vector as one double
// vector; x^2 is exact in double and splits into a float hi (exp's
// argument, exact) and a double lo (exp(-lo) = 1 - lo); SLEEF's float
// exp, shifted by 50 where x^2 > 80 so that it stays normal (the result is
// subnormal from x = 9.2), the rest in double and rounded once: within 2
// ulp (measured 1.63: exp's 1 ulp plus the rounding). SLEEF's erfcf
// (double-float throughout) ran 1.7x torch's time at 1M.
// One half of the lanes (a = |x|, x^2 = hi + lo) in double.
struct ErfcPart {
  VD a, tg, lo;  // |x|, t G(t), x^2 - hi
};
__attribute__((always_inline)) inline ErfcPart erfc_part(VD a, VD& s) {
  s = a * a;  // exact: 24-bit squares fit in 53 bits
  const VD t = 1.0 / (1.0 + 0.5 * a);
  const VD u = t * 2.396039603960396 - 1.396039603960396;  // [-1, 1]
  VD g = VD{} - 2.0734174781282594e-06;
  g = g * u + 5.194138965286081e-06;
  g = g * u + 1.229101493832318e-05;
  g = g * u - 6.671767618025803e-05;
  g = g * u + 1.4490112877313943e-07;
  g = g * u + 0.0006018204284676012;
  g = g * u - 0.0006284271788710206;
  g = g * u - 0.0061896969551928326;
  g = g * u + 0.006032907786530005;
  g = g * u + 0.10233757955682476;
  g = g * u + 0.3264239336101709;
  g = g * u + 0.5714730437926153;
  return {a, t * g, VD{}};
}
__attribute__((always_inline)) inline VD erfc_finish(const ErfcPart& p,
                                                     VD e, VD shift, VD x) {
  VD r = p.tg * e * (1.0 - p.lo);
  r = shift > 0.0 ? r * 1.9287498479639178e-22 : r;  // exp(-50)
  r = p.a > 10.1 ? VD{} : r;                         // (NaN: false)
  return x < 0.0 ? 2.0 - r : r;
}
__attribute__((always_inline)) inline VF own_erfc_F(VF x) {
  const VF af = x < 0.0f ? -x : x;
  VD s0, s1;
  ErfcPart p0 = erfc_part(FASTT_VM_F2D_LO(af), s0);
  ErfcPart p1 = erfc_part(FASTT_VM_F2D_HI(af), s1);
  const VF hi = FASTT_VM_D2F(s0, s1);  // x^2 rounded to float
  p0.lo = s0 - FASTT_VM_F2D_LO(hi);
  p1.lo = s1 - FASTT_VM_F2D_HI(hi);
  const VF shift = hi > 80.0f ? VF{} + 50.0f : VF{};
  const VF e = FASTT_VM_F(exp, u10)(shift - hi);
  return FASTT_VM_D2F(
      erfc_finish(p0, FASTT_VM_F2D_LO(e), FASTT_VM_F2D_LO(shift),
                  FASTT_VM_F2D_LO(x)),
      erfc_finish(p1, FASTT_VM_F2D_HI(e), FASTT_VM_F2D_HI(shift),
                  FASTT_VM_F2D_HI(x)));
}
#endif

// erfinv in float: M. Giles' single-precision approximation
// ("Approximating the erfinv function", GPU Computing Gems, 2011), x = y
// p(w), w = -log((1 - y)(1 + y)), p a degree-8 polynomial in w - 2.5 (w <
// 5) or in sqrt(w) - 3, in float with SLEEF's log: within 4 ulp (3.56
// measured over every 7th float in [0, 1)); torch's scalar kernel, a
// rational approximation and two Newton steps, is within 0.55 ulp. The
// same in double halves of the vector was within 2.6 ulp and 2.5x slower.
// +-1 give +-inf, |y| > 1 and NaN NaN, -0 -0. The second polynomial
// (and its sqrt) runs only for a vector with a lane past w = 5: 64K
// values in [0.1, 0.9] took 0.82-0.89x the time of both in every vector.
constexpr float kErfinvFP[9] = {  // in w - 2.5 (w < 5)
    2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
    -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
    -0.00417768164f,  0.246640727f,    1.50140941f};
constexpr float kErfinvFQ[9] = {  // in sqrt(w) - 3
    -0.000200214257f, 0.000100950558f, 0.00134934322f,
    -0.00367342844f,  0.00573950773f,  -0.0076224613f,
    0.00943887047f,   1.00167406f,     2.83297682f};
__attribute__((always_inline)) inline VF own_erfinv_F(VF y) {
  const VF a = y < 0.0f ? -y : y;
  const VF w = -FASTT_VM_F(log, u10)((1.0f - a) * (1.0f + a));
  VF p = horner(kErfinvFP, w - 2.5f);
  if (!V<float>::within(w, 5.0f))  // a lane past 5 (or a NaN)
    p = w < 5.0f ? p : horner(kErfinvFQ, FASTT_VM_SQRTF(w) - 3.0f);
  const VF x = p * y;  // y's sign; NaN for |y| > 1 (log < 0)
  return a == 1.0f ? y * __builtin_inff() : x;
}
// erfinv in double: M. Giles' three-branch form ("Approximating the
// erfinv function", GPU Computing Gems, 2011) with coefficients fitted
// here (scripts/fit_erfinv.py: minimax of the relative error in mpmath,
// within 2e-17): x = y p(t), w = -log((1 - y)(1 + y)) by SLEEF's 1-ulp
// log, t = w - 3.134765625 (w < 6.25), or sqrt(w) - 3.2646484375 (w <
// 16), or sqrt(w) - 4.984375 (up to w = 37; a double y < 1 gives at most
// 36.04), sqrt's rounding corrected into t: within 4 ulp (the script's
// model: 2.4 with a 1-ulp log). A vector whose lanes all have w <= 6
// (|y| below 0.9987) evaluates only the first polynomial. It replaces a
// scalar loop of three Newton steps over libm's erf and erfc (39x
// torch's time at 1M). +-1 give +-inf, |y| > 1 and NaN NaN (the log's),
// -0 -0.
constexpr double kErfinvA[24] = {
    3.3811369560479539e-21, -1.8141117986513124e-22, -3.57948872837764e-19,
    1.0671988947028763e-18, 1.5981485295010057e-17, -1.2700086206298655e-16,
    -6.5522653238719051e-17, 6.5844072463231483e-15, -3.8959698469109494e-14,
    -8.6941331396923632e-14, 2.6188596056642353e-12, -1.2643810918845104e-11,
    -5.5643593246076016e-11, 1.0453215738514303e-09, -4.0102905311879293e-09,
    -2.9427344795264765e-08, 4.2119369295437614e-07, -1.3365983822733908e-06,
    -1.3961684768692379e-05, 0.00018605441090188902, -0.00073342149385828212,
    -0.0060552644202884727, 0.24004012606969294, 1.6559992813295223};
constexpr double kErfinvB[20] = {
    -1.617764576543972e-08, -3.935944521817271e-09, 1.3346309566423324e-07,
    -2.3769116989478889e-07, -8.9825131962775007e-08, 1.4850134463779216e-06,
    -3.6779840845263387e-06, 2.196445093569937e-06, 1.2913809061186814e-05,
    -4.5272703165734586e-05, 6.1504736212361256e-05, 3.2583602775392903e-05,
    -0.00035171181950763156, 0.00091704607529863617, -0.0016060855582953027,
    0.0023708184340179468, -0.0036087888625074395, 0.0052092217435351579,
    1.0054139348801157, 3.0986122244477725};
constexpr double kErfinvC[19] = {
    -1.7265099709688341e-11, 4.8370087522467607e-11, 4.3513486775524666e-11,
    -4.5266985617725257e-10, 1.4460859473080301e-09, -3.7716711365388217e-09,
    8.5313492193930849e-09, -1.6788725968330673e-08, 3.1784744459720059e-08,
    -7.2302291981603856e-08, 2.3887694998899157e-07, -1.0222682176254954e-06,
    4.6362537198825409e-06, -2.011122880954963e-05, 7.7549624818055977e-05,
    -0.00021982822329769274, -0.00012852770543792631, 1.0103046411849941,
    4.8341204236028776};
VD own_erfinv_D(VD y) {
  const VD a = y < 0.0 ? -y : y;
  const VD w = -FASTT_VM_D(log, u10)((1.0 - a) * (1.0 + a));
  VD p = horner(kErfinvA, w - 3.134765625);
  if (!V<double>::within(w, 6.0)) {  // a lane past 6 (or a NaN)
    const VD s = FASTT_VM_D(sqrt, u05)(w);
    const VD ds = (w - s * s) * (0.5 / s);  // sqrt's rounding
    p = w < 6.25 ? p
                 : (w < 16.0 ? horner(kErfinvB, (s - 3.2646484375) + ds)
                             : horner(kErfinvC, (s - 4.984375) + ds));
  }
  return a == 1.0 ? y * __builtin_inf() : y * p;
}
// erf and erfc in double: fitted pieces (kernels/erf_tables.inc, printed
// by scripts/fit_erf.py with their errors). a = |x| < 6: sixteen
// intervals of 3/8, one degree-13 polynomial each for erf(a) and for
// erfcx(a) = exp(a^2) erfc(a), in a minus the interval's centre, its
// constant as two doubles (added last); each lane's coefficients picked
// by its interval (vpermt2pd from two registers at AVX-512, a gather at
// AVX2), so no division and no branch on the data. The first interval
// holds erf(a) / a - 1: erf = a + a S, one FMA, keeps erf's relative
// accuracy down to the subnormals. Past 6 erf is 1 (from 5.93 on in
// double) and erfcx takes sixteen intervals of 43/32 up to 27.5 (past
// 27.3 erfc is 0). erfc = erfcx 2^n e^r with a^2 = hi + lo exactly (an
// FMA), n = round(-hi log2 e), r = -hi - n ln 2 - lo, e^r as 1 + q (its
// Taylor series to r^13), erfcx + erfcx q as one FMA, and 2^n written into
// the exponent field (2^(n + 128), then 2^-128, where the result may be
// subnormal: one rounding there, from a = 26.55). x < 0: erf is odd,
// erfc(x) = 2 - erfc(-x). They replace glibc's scalar erf and erfc
// (14x and 10x torch's time over [-4, 4]: MKL's vdErf). SSE2 (no FMA, no
// gather): glibc's, lane by lane.
#if FASTT_VM_ISA >= 2
#include "kernels/erf_tables.inc"
using VL = long long __attribute__((vector_size(sizeof(VD))));
constexpr long long kSignD = (long long)(1ULL << 63);
__attribute__((always_inline)) inline VD abs_d(VD x) {
  return (VD)((VL)x & ~kSignD);
}
struct ErfPiece {
  IV16 i;    // the interval
  VD k, u;   // the interval as a double; a minus its centre
};
// a in [lo, lo + 16 w] (clamped by the caller): its interval of width w
template <int kLo, int kW32>  // lo, and w in 32nds
__attribute__((always_inline)) inline ErfPiece erf_piece(VD a) {
  constexpr double w = kW32 / 32.0;
  // rounded to nearest: the floor (a boundary is in both pieces)
  const VD q = FASTT_VM_MIND((a - kLo) * (1.0 / w) - 0.5, VD{} + 15.0);
  const VD magic = VD{} + 6755399441055744.0;
  const VD t = q + magic;
  const VD k = t - magic;
  return {FASTT_VM_IDX16(t), k, a - (k * w + (kLo + w / 2))};
}
// An interval table's polynomial (rows of coefficients from the highest
// power, the constant's lo, its hi) but its constant's hi, which the
// caller adds last: tab[N - 1].
template <size_t N>
__attribute__((always_inline)) inline VD poly16(const double (&tab)[N][16],
                                                IV16 i, VD u) {
  VD p = FASTT_VM_PICK16(tab[0], i);
  for (size_t k = 1; k < N - 1; ++k) p = p * u + FASTT_VM_PICK16(tab[k], i);
  return p;
}
FASTT_VM_OWN VD own_erf_D(VD x) {
  const VD a = abs_d(x);
  // (NaN: 6)
  const ErfPiece p = erf_piece<0, 12>(FASTT_VM_MIND(a, VD{} + 6.0));
  const VD n = p.k < 0.5 ? a : VD{};          // the first interval:
  const VD m = p.k < 0.5 ? a : VD{} + 1.0;    // erf = a + a S
  const VD r =
      (poly16(kErfPieces, p.i, p.u) + FASTT_VM_PICK16(kErfPieces[14], p.i)) *
          m + n;
  const VD rs = (VD)((VL)r | ((VL)x & kSignD));  // r >= 0
  return x != x ? x : rs;
}
FASTT_VM_OWN VD own_erfc_D(VD x) {
  const VD a = abs_d(x);
  const VD ac = FASTT_VM_MIND(a, VD{} + 27.5);  // erfc(27.3) rounds to 0
  const ErfPiece p = erf_piece<0, 12>(FASTT_VM_MIND(ac, VD{} + 6.0));
  VD g = poly16(kErfcxPieces, p.i, p.u);
  VD gh = FASTT_VM_PICK16(kErfcxPieces[14], p.i);  // erfcx = g + gh
  if (!V<double>::within(x, 6.0)) {  // a lane past 6 (or a NaN)
    const ErfPiece f = erf_piece<6, 43>(FASTT_VM_MAXD(ac, VD{} + 6.0));
    g = ac < 6.0 ? g : poly16(kErfcxFar, f.i, f.u);
    gh = ac < 6.0 ? gh : FASTT_VM_PICK16(kErfcxFar[14], f.i);
  }
  // exp(-a^2) = 2^n e^r: a^2 = hi + lo, n = round(-hi log2 e), r = -hi -
  // n ln 2 - lo (fdlibm's two-double ln 2: the first step exact, the
  // small terms summed before the one rounding at r's size)
  const VD hi = ac * ac;
  const VD lo = FASTT_VM_FMSD(ac, ac, hi);
  const VD magic = VD{} + 6755399441055744.0;
  const VD nm = hi * -1.4426950408889634 + magic;
  const VD n = nm - magic;
  const VD r = (n * -6.93147180369123816490e-01 - hi) -
               (n * 1.90821492927058770002e-10 + lo);
  VD q = VD{} + 1.0 / 6227020800.0;  // (e^r - 1) / r: 1/13! ... 1
  for (double c : kInvFact) q = q * r + c;
  const VD m = ((g + gh) * (q * r) + g) + gh;  // erfcx e^r, gh last
  // 2^n built in the exponent field; where the result may be subnormal (n
  // below -1022) 2^(n + 128), and 2^-128 applied last: one rounding
  const VL big = hi > 700.0;  // all ones there
  const VD scale = (VD)(((VL)nm - (VL)magic + (big & 128) + 1023) << 52);
  VD e = m * scale;
  e = big ? e * 0x1p-128 : e;
  e = a > 27.5 ? VD{} : e;  // inf
  const VD res = x < 0.0 ? 2.0 - e : e;
  return x != x ? x : res;
}
#else
VD own_erf_D(VD x) {
  for (int k = 0; k < FASTT_VM_WD; ++k) x[k] = __builtin_erf(x[k]);
  return x;
}
VD own_erfc_D(VD x) {
  for (int k = 0; k < FASTT_VM_WD; ++k) x[k] = __builtin_erfc(x[k]);
  return x;
}
#endif
#if FASTT_VM_ISA == 3
// erfc in float at AVX-512, all in float over 16 lanes: erfc(a) = X_i(u)
// exp(-a^2) over sixteen intervals of 41/64 up to 10.25 (kErfcxF: degree 8
// in u = a minus the interval's centre, the constant in two floats;
// vpermps picks each lane's coefficients), a^2 = hi + lo by an FMA,
// exp(-a^2) = 2^n e^r with n = round(-hi log2 e), r = -hi - n ln 2 - lo
// (two FMAs against Cephes' two-float ln 2, the first exact), e^r by its
// Taylor series to r^7 (truncation 6e-9 relative) as 1 + q, g + g q one
// FMA, and 2^n applied last by vscalefps: one rounding into the subnormal
// range (from a = 9.2; past 10.1 erfc rounds to 0). x < 0: 2 - erfc(-x).
// Within 2 ulp (the row's bound; 1.76 measured over 2M values in [-11,
// 11]); 64K values in 37-39 us, torch's (MKL's vsErfc) 34, the composed
// form above (AVX2, SSE2) 104.
FASTT_VM_OWN VF own_erfc_F(VF x) {
  const VF a = _mm512_abs_ps(x);
  const VF ac = _mm512_min_ps(a, _mm512_set1_ps(10.25f));  // NaN: 10.25
  constexpr float w = 41.0f / 64.0f;
  // the interval, rounded to nearest: the floor (a boundary is in both)
  const VF t = _mm512_min_ps(ac * (1.0f / w) - 0.5f, _mm512_set1_ps(15.0f));
  const VF k = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT);
  const __m512i i = _mm512_cvtps_epi32(k);
  const VF u = ac - (k * w + w / 2);
  auto pick = [&](const float* row) {
    return _mm512_permutexvar_ps(i, _mm512_loadu_ps(row));
  };
  VF g = pick(kErfcxF[0]);
  for (int r = 1; r < 9; ++r) g = g * u + pick(kErfcxF[r]);
  const VF gh = pick(kErfcxF[9]);  // g + gh: erfcx
  const VF hi = ac * ac;
  const VF lo = _mm512_fmsub_ps(ac, ac, hi);
  const VF n = _mm512_roundscale_ps(hi * -1.44269504088896341f,
                                    _MM_FROUND_TO_NEAREST_INT);
  VF r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), -hi);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r) - lo;
  VF q = _mm512_set1_ps(1.0f / 5040);  // (e^r - 1) / r
  const float inv_fact[] = {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6,
                            0.5f, 1.0f};
  for (float c : inv_fact) q = q * r + c;
  // (g + gh) e^r, gh added last
  const VF m = ((g + gh) * (q * r) + g) + gh;
  const VF e = _mm512_maskz_scalef_ps(0xFFFF, m, n);
  const VF res = x < 0.0f ? 2.0f - e : e;
  return x != x ? x : res;
}
#endif
// lgamma: SLEEF's (1.8x faster than glibc's lgammaf here), but a vector
// with a lane past 4e36 (or NaN) in double, as SLEEF's float lgamma may
// return inf from 4e36 on (the value is finite to 2.5e305). float64:
// SLEEF's, as torch's (glibc's lgamma_r is within 3 ulp of it, not 2).
VD own_lgamma_D(VD x) { return FASTT_VM_D(lgamma, u10)(x); }
VF own_lgamma_F(VF x) {
  if (V<float>::within(x, 4e36f)) return FASTT_VM_F(lgamma, u10)(x);
  return FASTT_VM_D2F(own_lgamma_D(FASTT_VM_F2D_LO(x)),
                      own_lgamma_D(FASTT_VM_F2D_HI(x)));
}
}  // namespace

extern const Table table;
const Table table = {
    FASTT_VM_NAME,
    {
#define FASTT_VM1(functor, name, ulp, flim, dlim, fhow, dhow) \
  &range1<float, FASTT_VM_FN_##fhow(F, name, ulp), Row##functor>,
#define FASTT_VM2(functor, name, ulp)
#include "kernels/cpu/vec_math.def"
#undef FASTT_VM1
#undef FASTT_VM2
    },
    {
#define FASTT_VM1(functor, name, ulp, flim, dlim, fhow, dhow) \
  &range1<double, FASTT_VM_FN_##dhow(D, name, ulp), Row##functor>,
#define FASTT_VM2(functor, name, ulp)
#include "kernels/cpu/vec_math.def"
#undef FASTT_VM1
#undef FASTT_VM2
    },
    {
#define FASTT_VM1(functor, ...)
#define FASTT_VM2(functor, name, ulp) &range2<float, FASTT_VM_F(name, ulp)>,
#include "kernels/cpu/vec_math.def"
#undef FASTT_VM1
#undef FASTT_VM2
    },
    {
#define FASTT_VM1(functor, ...)
#define FASTT_VM2(functor, name, ulp) &range2<double, FASTT_VM_D(name, ulp)>,
#include "kernels/cpu/vec_math.def"
#undef FASTT_VM1
#undef FASTT_VM2
    },
};

}  // namespace FASTT_VM_NS
}  // namespace vec_math
}  // namespace fastt
