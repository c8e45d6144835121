// float16 <-> float32 over blocks, for the kernels that run 16-bit floats
// through float32 loops (kernels/cpu/loop.h, vec_math_call.h, unary.cpp).
#pragma once
#include <cstdint>

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

inline void half_to_float(const Half* x, float* o, int64_t n) {
  int64_t i = 0;
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

}  // namespace cpu
}  // namespace fastt
