// float16 <-> float32 over blocks, for the kernels that run 16-bit floats
// through float32 loops (kernels/cpu/loop.h, vec_math_call.h, unary.cpp).
#pragma once
#include <cstdint>
#include <type_traits>

#include "csrc/half.h"
#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#endif

namespace fastt {
namespace cpu {

// float16 through float32 in registers: dense float16 loops run in blocks
// converted by F16C where the level has it (AVX2 and AVX-512 builds),
// since Half's portable bit conversions neither inline nor vectorize in
// the big kernel files (a float16 add ran 30x torch's). bfloat16's
// conversions are a shift and vectorize in place.
constexpr int64_t kHalfBlock = 256;

// Always inlined: a call per 64-element step cost more than the
// conversion (the float16 sum ran 2.6x torch's).
#if defined(__GNUC__)
#define FASTT_HALF_INLINE inline __attribute__((always_inline))
#else
#define FASTT_HALF_INLINE inline
#endif

FASTT_HALF_INLINE void half_to_float(const Half* x, float* o, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    // The zero-masked form: GCC 12's plain one starts from an undefined
    // register that -Wmaybe-uninitialized reports at every inlining.
    _mm512_storeu_ps(o + i, _mm512_maskz_cvtph_ps(
                                __mmask16(0xFFFF),
                                _mm256_loadu_si256(
                                    reinterpret_cast<const __m256i*>(x + i))));
#endif
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(o + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                reinterpret_cast<const __m128i*>(x + i))));
#endif
  for (; i < n; ++i) o[i] = static_cast<float>(x[i]);
}

inline void float_to_half(const float* x, Half* o, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i),
                                     _MM_FROUND_TO_NEAREST_INT |
                                         _MM_FROUND_NO_EXC));
#endif
  for (; i < n; ++i) o[i] = Half(x[i]);
}

// A block of T into its compute type B (float32 for the 16-bit floats;
// float and double pass as themselves) and back: the staging every
// "16-bit through float32" loop uses (loop.h's half_blocks,
// vec_math_call.h, unary.cpp, the reduction driver).
template <class T, class B>
FASTT_HALF_INLINE void to_float_block(const T* x, B* o, int64_t n) {
  if constexpr (std::is_same<T, Half>::value) half_to_float(x, o, n);
  else for (int64_t k = 0; k < n; ++k) o[k] = static_cast<B>(x[k]);
}
template <class B, class T>
inline void from_float_block(const B* x, T* o, int64_t n) {
  if constexpr (std::is_same<T, Half>::value) float_to_half(x, o, n);
  else for (int64_t k = 0; k < n; ++k) o[k] = T(x[k]);
}
template <class T>
constexpr bool kIsHalfFloat =
    std::is_same<T, Half>::value || std::is_same<T, BFloat16>::value;

}  // namespace cpu
}  // namespace fastt
