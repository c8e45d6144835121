// float16 <-> float32 over blocks, for the kernels that run 16-bit floats
// through float32 loops (kernels/cpu/loop.h, vec_math_call.h, unary.cpp).
#pragma once
#include <algorithm>
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

#if defined(__F16C__) && defined(__AVX__)
constexpr int kF16Round = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// The last r (0 < r < 8) elements of a float16 <-> float32 conversion.
// At AVX-512 (BW, VL) a masked load and store: through the padded vector,
// a float16 sum over dim 0 of 4096x100 took 2.5x torch's time (its 16-bit
// stores do not forward to the vector load). Below that level, a padded
// vector copied element by element (a memcpy call per row cost more;
// Half's portable conversion: 1.7x torch's). Rows of 8 never get here:
// one masked 16-wide step per row made float16 sums over rows of 8 4x
// slower than the 8-wide loop.
FASTT_HALF_INLINE void half_tail_to_float(const uint16_t* u, float* o,
                                          int r) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  const __mmask8 m = __mmask8((1u << r) - 1u);
  _mm256_mask_storeu_ps(o, m, _mm256_cvtph_ps(_mm_maskz_loadu_epi16(m, u)));
#else
  alignas(16) uint16_t in[8];
  for (int k = 0; k < 8; ++k) in[k] = k < r ? u[k] : uint16_t(0);
  alignas(32) float out[8];
  _mm256_store_ps(out, _mm256_cvtph_ps(_mm_load_si128(
                           reinterpret_cast<const __m128i*>(in))));
  for (int k = 0; k < r; ++k) o[k] = out[k];
#endif
}
FASTT_HALF_INLINE void float_tail_to_half(const float* x, uint16_t* u,
                                          int r) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  const __mmask8 m = __mmask8((1u << r) - 1u);
  _mm_mask_storeu_epi16(
      u, m, _mm256_cvtps_ph(_mm256_maskz_loadu_ps(m, x), kF16Round));
#else
  alignas(32) float in[8];
  for (int k = 0; k < 8; ++k) in[k] = k < r ? x[k] : 0.0f;
  alignas(16) uint16_t out[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(out),
                  _mm256_cvtps_ph(_mm256_load_ps(in), kF16Round));
  for (int k = 0; k < r; ++k) u[k] = out[k];
#endif
}
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
  if (i < n)
    half_tail_to_float(reinterpret_cast<const uint16_t*>(x + i), o + i,
                       int(n - i));
#else
  for (; i < n; ++i) o[i] = static_cast<float>(x[i]);
#endif
}

inline void float_to_half(const float* x, Half* o, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)  // (8 at a time: float16 a * b 1.29x torch)
    // zero-masked, as in half_to_float
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(o + i),
        _mm512_maskz_cvtps_ph(__mmask16(0xFFFF), _mm512_loadu_ps(x + i),
                              kF16Round));
#endif
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), kF16Round));
  if (i < n)
    float_tail_to_half(x + i, reinterpret_cast<uint16_t*>(o + i),
                       int(n - i));
#else
  for (; i < n; ++i) o[i] = Half(x[i]);
#endif
}

// bfloat16 <-> float32 as bit operations on whole blocks (the widening is
// a shift; the narrowing is BFloat16::round_bits): element by element
// through BFloat16's memcpy-based conversions the loops stayed scalar (a
// bfloat16 row sum ran 2.7-7.9x torch's time).
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
  for (int64_t k = 0; k < n; ++k)
    u[k] = BFloat16::round_bits(__builtin_bit_cast(uint32_t, x[k]));
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
// Float32 slots for running a float32 kernel on 16-bit data: `slots`
// regions of n floats each, in the thread's ThreadState::half_staging,
// which only grows (callers bound n: softmax.cpp's kMaxStaged). A vector
// per call was a zero-filled allocation per row, and thread_locals of
// their own outgrew the static TLS block (tests/python/test_static_tls.py).
// Take one per range of rows, not per row (the lookup is a call), and
// one at a time per thread: a second would move the first one's slots.
class Staging {
 public:
  Staging(int slots, int64_t n) : n_(n) {
    std::vector<float>& v = thread_state().half_staging;
    const size_t size = size_t(slots) * size_t(n);
    if (v.size() < size) v.resize(size);
    base_ = v.data();
  }
  float* operator[](int k) const { return base_ + k * n_; }
  // slot k holding a [rows, w] slab of p (row stride `stride`), densely;
  // nullptr for nullptr (an optional operand)
  template <class T>
  const float* in(int k, const T* p, int64_t rows, int64_t w,
                  int64_t stride) const {
    if (!p) return nullptr;
    if (stride == w) {  // dense: one block
      to_float_block(p, (*this)[k], rows * w);
    } else {
      for (int64_t r = 0; r < rows; ++r)
        to_float_block(p + r * stride, (*this)[k] + r * w, w);
    }
    return (*this)[k];
  }
  template <class T>
  const float* in(int k, const T* p, int64_t n) const {
    return in(k, p, 1, n, n);
  }
  // slot k's [rows, w] values converted into p
  template <class T>
  void out(int k, T* p, int64_t rows, int64_t w, int64_t stride) const {
    if (stride == w) {
      from_float_block((*this)[k], p, rows * w);
    } else {
      for (int64_t r = 0; r < rows; ++r)
        from_float_block((*this)[k] + r * w, p + r * stride, w);
    }
  }
  template <class T>
  void out(int k, T* p, int64_t n) const {
    out(k, p, 1, n, n);
  }

 private:
  float* base_;
  int64_t n_;
};

// f(in, out) over float32 copies of a [rows, w] slab of 16-bit floats
// (row stride `stride` in the tensors, dense in the copies): K inputs
// converted in, the output converted back. Row kernels written for
// float32 (softmax and its backward) serve float16 and bfloat16 through
// it; element by element in their own loops, Half's portable conversion
// made a float16 softmax 8x torch's time.
template <size_t K, class T, class F>
void via_float(const T* const (&in)[K], T* out, int64_t rows, int64_t w,
               int64_t stride, F f) {
  const Staging s{int(K) + 1, rows * w};
  const float* ins[K];
  for (size_t k = 0; k < K; ++k)
    ins[k] = s.in(int(k), in[k], rows, w, stride);
  f(ins, s[K]);
  s.out(K, out, rows, w, stride);
}

// Pieces of about kStageBatch elements (or one row, where a row is
// longer): the copies of a piece (up to three slots of 8 KB) stay in L1
// between the conversion and the float32 kernel (pieces of 8192 made softmax backward over rows of 256 1.35x
// slower), and short rows convert as one block (converted row by row, a
// softmax over rows of 8 paid a tail and a staging lookup every row).
constexpr int64_t kStageBatch = 2048;
inline int64_t piece_rows(int64_t w) {  // rows of w elements in a piece
  return std::max<int64_t>(1, kStageBatch / std::max<int64_t>(w, 1));
}

// f(r, in, m) over float32 copies of rows [r, r + m) of a [n, w] slab of
// K 16-bit operands (row stride `stride`), a piece at a time, in s's
// first K slots (of piece_rows(w) * w floats at least). For kernels that
// pass over an operand too big to stage whole, a long row being the slab
// [n, 1] of stride 1, and for rows_via_float.
template <size_t K, class T, class F>
void for_pieces(const Staging& s, const T* const (&in)[K], int64_t n,
                int64_t w, int64_t stride, F f) {
  const int64_t per = piece_rows(w);
  for (int64_t r = 0; r < n; r += per) {
    const int64_t m = std::min(per, n - r);
    const float* v[K];
    for (size_t k = 0; k < K; ++k)
      v[k] = s.in(int(k), in[k] + r * stride, m, w, stride);
    f(r, v, m);
  }
}

// f(in, out, m) over float32 copies of the dense rows [b, e) of K 16-bit
// operands (n elements a row), m rows a piece; out is converted back.
template <size_t K, class T, class F>
void rows_via_float(const T* const (&in)[K], T* out, int64_t b, int64_t e,
                    int64_t n, F f) {
  const T* at[K];
  for (size_t k = 0; k < K; ++k) at[k] = in[k] + b * n;
  const Staging s{int(K) + 1, std::min(piece_rows(n), e - b) * n};
  for_pieces(s, at, e - b, n, n,
             [&](int64_t r, const float* const* v, int64_t m) {
               f(v, s[K], m);
               s.out(K, out + (b + r) * n, m * n);
             });
}

template <class T>
constexpr bool kIsHalfFloat =
    std::is_same<T, Half>::value || std::is_same<T, BFloat16>::value;

}  // namespace cpu
}  // namespace fastt
