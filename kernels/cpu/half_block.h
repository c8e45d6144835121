// float16 <-> float32 over blocks, for the kernels that run 16-bit floats
// through float32 loops (kernels/cpu/loop.h, vec_math_call.h, unary.cpp).
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "csrc/half.h"
#include "csrc/thread_state.h"
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
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  // The last < 8 by a masked load and store: through the padded vector
  // below, a float16 sum over dim 0 of 4096x100 took 2.5x torch's time
  // (its 16-bit stores do not forward to the vector load). Rows of 8
  // stay on the loop above: one masked 16-wide step per row made float16
  // sums over rows of 8 4x slower.
  if (i < n) {
    const __mmask8 m = __mmask8((1u << (n - i)) - 1u);
    _mm256_mask_storeu_ps(o + i, m,
                          _mm256_cvtph_ps(_mm_maskz_loadu_epi16(m, x + i)));
    return;
  }
#endif
  // The last < 8 through a padded vector, copied element by element (a
  // memcpy call per row cost more): through Half's portable conversion, a
  // float16 sum over dim 0 of 4096x100 took 1.7x torch's time.
  if (i < n) {
    const int r = int(n - i);
    const uint16_t* u = reinterpret_cast<const uint16_t*>(x + i);
    alignas(16) uint16_t in[8];
    for (int k = 0; k < 8; ++k) in[k] = k < r ? u[k] : uint16_t(0);
    alignas(32) float out[8];
    _mm256_store_ps(out, _mm256_cvtph_ps(_mm_load_si128(
                             reinterpret_cast<const __m128i*>(in))));
    for (int k = 0; k < r; ++k) o[i + k] = out[k];
    return;
  }
#endif
  for (; i < n; ++i) o[i] = static_cast<float>(x[i]);
}

inline void float_to_half(const float* x, Half* o, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)  // (8 at a time: float16 a * b 1.29x torch)
    // zero-masked, as in half_to_float
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + i),
                        _mm512_maskz_cvtps_ph(__mmask16(0xFFFF),
                                              _mm512_loadu_ps(x + i),
                                              _MM_FROUND_TO_NEAREST_INT |
                                                  _MM_FROUND_NO_EXC));
#endif
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i),
                                     _MM_FROUND_TO_NEAREST_INT |
                                         _MM_FROUND_NO_EXC));
  if (i < n) {  // the last < 8 through a padded vector, as half_to_float
    const int r = int(n - i);
    alignas(32) float in[8];
    for (int k = 0; k < 8; ++k) in[k] = k < r ? x[i + k] : 0.0f;
    alignas(16) uint16_t out[8];
    _mm_store_si128(reinterpret_cast<__m128i*>(out),
                    _mm256_cvtps_ph(_mm256_load_ps(in),
                                    _MM_FROUND_TO_NEAREST_INT |
                                        _MM_FROUND_NO_EXC));
    uint16_t* u = reinterpret_cast<uint16_t*>(o + i);
    for (int k = 0; k < r; ++k) u[k] = out[k];
    return;
  }
#endif
  for (; i < n; ++i) o[i] = Half(x[i]);
}

// bfloat16 <-> float32 as bit operations on whole blocks (the widening is
// a shift; the narrowing rounds to nearest even and quiets NaNs, as
// BFloat16::from_float): element by element through BFloat16's
// memcpy-based conversions the loops stayed scalar (a bfloat16 row sum
// ran 2.7-7.9x torch's time).
FASTT_HALF_INLINE void bf16_to_float(const BFloat16* x, float* o,
                                     int64_t n) {
  const uint16_t* u = reinterpret_cast<const uint16_t*>(x);
#pragma omp simd
  for (int64_t k = 0; k < n; ++k)
    o[k] = __builtin_bit_cast(float, uint32_t(u[k]) << 16);
}
FASTT_HALF_INLINE void float_to_bf16(const float* x, BFloat16* o,
                                     int64_t n) {
  uint16_t* u = reinterpret_cast<uint16_t*>(o);
#pragma omp simd
  for (int64_t k = 0; k < n; ++k) {
    const uint32_t b = __builtin_bit_cast(uint32_t, x[k]);
    const uint32_t rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
    const uint32_t quiet = (b >> 16) | 0x40u;
    u[k] = uint16_t((b & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
  }
}
static_assert(sizeof(BFloat16) == 2 && sizeof(Half) == 2,
              "16-bit floats are their bits");

// A block of T into its compute type B (float32 for the 16-bit floats;
// float and double pass as themselves) and back: the staging every
// "16-bit through float32" loop uses (loop.h's half_blocks,
// vec_math_call.h, unary.cpp, the reduction driver).
template <class T, class B>
FASTT_HALF_INLINE void to_float_block(const T* x, B* o, int64_t n) {
  if constexpr (std::is_same<T, Half>::value) half_to_float(x, o, n);
  else if constexpr (std::is_same<T, BFloat16>::value) bf16_to_float(x, o, n);
  else for (int64_t k = 0; k < n; ++k) o[k] = static_cast<B>(x[k]);
}
template <class B, class T>
inline void from_float_block(const B* x, T* o, int64_t n) {
  if constexpr (std::is_same<T, Half>::value) float_to_half(x, o, n);
  else if constexpr (std::is_same<T, BFloat16>::value) float_to_bf16(x, o, n);
  else for (int64_t k = 0; k < n; ++k) o[k] = T(x[k]);
}
// f(in, out) over float32 copies of a [rows, w] slab of 16-bit floats
// (row stride `stride` in the tensors, dense in the copies): K inputs
// converted in, the output converted back. Row kernels written for
// float32 (softmax and its backward) serve float16 and bfloat16 through
// it; element by element in their own loops, Half's portable conversion
// made a float16 softmax 8x torch's time. The copies live in the thread's
// ThreadState::half_staging, which only grows (callers bound the slab:
// softmax.cpp's kMaxStaged): a fresh vector per call was a zero-filled
// allocation per row, and thread_locals of its own outgrew the static TLS
// block (tests/python/test_static_tls.py).
template <size_t K, class T, class F>
void via_float(const T* const (&in)[K], T* out, int64_t rows, int64_t w,
               int64_t stride, F f) {
  std::vector<float>& staged = thread_state().half_staging;
  const int64_t size = rows * w;
  if (staged.size() < size_t((K + 1) * size))
    staged.resize(size_t((K + 1) * size));
  float* buf = staged.data();
  const float* ins[K];
  for (size_t k = 0; k < K; ++k) {
    float* b = buf + int64_t(k) * size;
    for (int64_t r = 0; r < rows; ++r)
      to_float_block(in[k] + r * stride, b + r * w, w);
    ins[k] = b;
  }
  float* o = buf + int64_t(K) * size;
  f(ins, o);
  for (int64_t r = 0; r < rows; ++r)
    from_float_block(o + r * w, out + r * stride, w);
}

template <class T>
constexpr bool kIsHalfFloat =
    std::is_same<T, Half>::value || std::is_same<T, BFloat16>::value;

}  // namespace cpu
}  // namespace fastt
