// copy (strided, dtype-converting) and fill. The table's dtype column is the
// destination dtype; the source dtype is args.dtypes[1], dispatched inside.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/loop.h"

namespace fastt {
namespace {
using namespace cpu;

template <class O, class I>
struct Convert {
  FASTT_HD O operator()(opmath_t<I> x) const {
    if constexpr (std::is_same<O, bool>::value) return x != opmath_t<I>(0);
    else if constexpr (kIsComplex<I> && !kIsComplex<O>)
      return static_cast<O>(x.re);  // torch's cast: the real part
    else return static_cast<O>(x);
  }
};

// Unsigned integer of N bytes: a same-dtype copy moves bits, never values.
template <size_t N> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = uint64_t; };
template <> struct Bits<16> {  // complex128
  struct type { uint64_t lo, hi; };
};

// Square blocks of N-byte elements transposed in registers: dst row c =
// src column c, strides ss/ds in elements. Block<N>::kSize is the side (0:
// none, element by element). This file is compiled once per ISA level
// (kernels/registry.def), so each level gets its own widths.
template <size_t N> struct Block { static constexpr int64_t kSize = 0; };
#if defined(__AVX512F__)
// GCC 12's unpack intrinsics start from a self-initialised `__Y`
// (_mm512_undefined_ps), which -Wuninitialized reports once inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <> struct Block<4> {
static constexpr int64_t kSize = 16;
static void run(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m512 u[16];
  for (int g = 0; g < 4; ++g) {  // 4x4 transposes inside each 128-bit lane
    const __m512 r0 = _mm512_loadu_ps(src + (4 * g + 0) * ss);
    const __m512 r1 = _mm512_loadu_ps(src + (4 * g + 1) * ss);
    const __m512 r2 = _mm512_loadu_ps(src + (4 * g + 2) * ss);
    const __m512 r3 = _mm512_loadu_ps(src + (4 * g + 3) * ss);
    const __m512 t0 = _mm512_unpacklo_ps(r0, r1), t1 = _mm512_unpackhi_ps(r0, r1);
    const __m512 t2 = _mm512_unpacklo_ps(r2, r3), t3 = _mm512_unpackhi_ps(r2, r3);
    u[4 * g + 0] = _mm512_shuffle_ps(t0, t2, 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(t0, t2, 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(t1, t3, 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(t1, t3, 0xEE);
  }
  // u[4g + j] lane k holds column 4k + j of rows 4g..4g+3; gather lanes.
  for (int j = 0; j < 4; ++j) {
    const __m512 p = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    const __m512 pp = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    const __m512 q = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 qq = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
    _mm512_storeu_ps(dst + (j + 0) * ds, _mm512_shuffle_f32x4(p, q, 0x88));
    _mm512_storeu_ps(dst + (j + 8) * ds, _mm512_shuffle_f32x4(p, q, 0xDD));
    _mm512_storeu_ps(dst + (j + 4) * ds, _mm512_shuffle_f32x4(pp, qq, 0x88));
    _mm512_storeu_ps(dst + (j + 12) * ds, _mm512_shuffle_f32x4(pp, qq, 0xDD));
  }
}
};
template <> struct Block<8> {
static constexpr int64_t kSize = 8;
static void run(const double* src, int64_t ss, double* dst, int64_t ds) {
  __m512d u[8];
  for (int g = 0; g < 4; ++g) {  // 2x2 transposes inside each 128-bit lane
    const __m512d r0 = _mm512_loadu_pd(src + (2 * g) * ss);
    const __m512d r1 = _mm512_loadu_pd(src + (2 * g + 1) * ss);
    u[2 * g + 0] = _mm512_unpacklo_pd(r0, r1);
    u[2 * g + 1] = _mm512_unpackhi_pd(r0, r1);
  }
  // u[2g + j] lane k holds column 2k + j of rows 2g, 2g+1.
  for (int j = 0; j < 2; ++j) {
    const __m512d p = _mm512_shuffle_f64x2(u[j], u[2 + j], 0x88);
    const __m512d pp = _mm512_shuffle_f64x2(u[j], u[2 + j], 0xDD);
    const __m512d q = _mm512_shuffle_f64x2(u[4 + j], u[6 + j], 0x88);
    const __m512d qq = _mm512_shuffle_f64x2(u[4 + j], u[6 + j], 0xDD);
    _mm512_storeu_pd(dst + (j + 0) * ds, _mm512_shuffle_f64x2(p, q, 0x88));
    _mm512_storeu_pd(dst + (j + 4) * ds, _mm512_shuffle_f64x2(p, q, 0xDD));
    _mm512_storeu_pd(dst + (j + 2) * ds, _mm512_shuffle_f64x2(pp, qq, 0x88));
    _mm512_storeu_pd(dst + (j + 6) * ds, _mm512_shuffle_f64x2(pp, qq, 0xDD));
  }
}
};
#pragma GCC diagnostic pop
#elif defined(__AVX2__)
template <> struct Block<4> {
static constexpr int64_t kSize = 8;
static void run(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m256 u[8];
  for (int g = 0; g < 2; ++g) {  // 4x4 transposes inside each half
    const __m256 r0 = _mm256_loadu_ps(src + (4 * g + 0) * ss);
    const __m256 r1 = _mm256_loadu_ps(src + (4 * g + 1) * ss);
    const __m256 r2 = _mm256_loadu_ps(src + (4 * g + 2) * ss);
    const __m256 r3 = _mm256_loadu_ps(src + (4 * g + 3) * ss);
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    u[4 * g + 0] = _mm256_shuffle_ps(t0, t2, 0x44);
    u[4 * g + 1] = _mm256_shuffle_ps(t0, t2, 0xEE);
    u[4 * g + 2] = _mm256_shuffle_ps(t1, t3, 0x44);
    u[4 * g + 3] = _mm256_shuffle_ps(t1, t3, 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_ps(dst + j * ds, _mm256_permute2f128_ps(u[j], u[4 + j], 0x20));
    _mm256_storeu_ps(dst + (j + 4) * ds,
                     _mm256_permute2f128_ps(u[j], u[4 + j], 0x31));
  }
}
};
template <> struct Block<8> {
static constexpr int64_t kSize = 4;
static void run(const double* src, int64_t ss, double* dst, int64_t ds) {
  const __m256d r0 = _mm256_loadu_pd(src), r1 = _mm256_loadu_pd(src + ss);
  const __m256d r2 = _mm256_loadu_pd(src + 2 * ss);
  const __m256d r3 = _mm256_loadu_pd(src + 3 * ss);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(dst, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(dst + ds, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(dst + 2 * ds, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(dst + 3 * ds, _mm256_permute2f128_pd(t1, t3, 0x31));
}
};
#else
template <> struct Block<4> {
static constexpr int64_t kSize = 4;
static void run(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m128 r0 = _mm_loadu_ps(src), r1 = _mm_loadu_ps(src + ss);
  __m128 r2 = _mm_loadu_ps(src + 2 * ss), r3 = _mm_loadu_ps(src + 3 * ss);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(dst, r0);
  _mm_storeu_ps(dst + ds, r1);
  _mm_storeu_ps(dst + 2 * ds, r2);
  _mm_storeu_ps(dst + 3 * ds, r3);
}
};
template <> struct Block<8> {
static constexpr int64_t kSize = 2;
static void run(const double* src, int64_t ss, double* dst, int64_t ds) {
  const __m128d r0 = _mm_loadu_pd(src), r1 = _mm_loadu_pd(src + ss);
  _mm_storeu_pd(dst, _mm_unpacklo_pd(r0, r1));
  _mm_storeu_pd(dst + ds, _mm_unpackhi_pd(r0, r1));
}
};
#endif
// 16-bit elements: an 8x8 block in SSE2 registers at every level.
template <> struct Block<2> {
static constexpr int64_t kSize = 8;
static void run(const uint16_t* src, int64_t ss, uint16_t* dst, int64_t ds) {
  __m128i t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * ss));
    const __m128i r1 =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (i + 1) * ss));
    t[i] = _mm_unpacklo_epi16(r0, r1);      // columns 0-3 of rows i, i+1
    t[i + 1] = _mm_unpackhi_epi16(r0, r1);  // columns 4-7
  }
  for (int h = 0; h < 2; ++h)  // rows 0-3, then 4-7
    for (int c = 0; c < 2; ++c) {  // columns 0-3, then 4-7
      const __m128i a = t[4 * h + c], b = t[4 * h + 2 + c];
      u[4 * h + 2 * c] = _mm_unpacklo_epi32(a, b);      // 2 columns x 4 rows
      u[4 * h + 2 * c + 1] = _mm_unpackhi_epi32(a, b);
    }
  for (int c = 0; c < 4; ++c) {  // u[c] and u[4 + c]: columns 2c, 2c+1
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * c) * ds),
                     _mm_unpacklo_epi64(u[c], u[4 + c]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * c + 1) * ds),
                     _mm_unpackhi_epi64(u[c], u[4 + c]));
  }
}
};

// A same-dtype copy whose two fastest dims are transposed between the
// sides (x.t().contiguous(), an NCHW <-> NHWC permute): the strided walk
// reads one element per cache line and a page per step down a column, so
// 1024x1024 float32 took 3.6 ms (torch 0.82). The space is cut in 64x64
// tiles that run in parallel; 4-byte elements move as register-transposed
// blocks, the rest (and the tiles' ragged edges) element by element. False
// when the layout is not such a transpose or too narrow to pay for it.
template <size_t N>
bool transpose_copy(const KernelArgs& a) {
  constexpr int64_t kTile = 64;
  if (a.ndim < 2 || a.strides[0][0] != int64_t(N) ||
      a.strides[1][1] != int64_t(N) || a.strides[1][0] == int64_t(N) ||
      a.strides[1][0] % int64_t(N) || a.strides[0][1] % int64_t(N) ||
      a.sizes[0] < 8 || a.sizes[1] < 8)
    return false;
  using E = typename Bits<N>::type;
  const int64_t n0 = a.sizes[0], n1 = a.sizes[1];
  const int64_t t0 = (n0 + kTile - 1) / kTile, t1 = (n1 + kTile - 1) / kTile;
  const int64_t tiles = a.numel / (n0 * n1) * t0 * t1;
  // Strides in elements: output along dim 1, input along dim 0.
  const int64_t os1 = a.strides[0][1] / int64_t(N);
  const int64_t is0 = a.strides[1][0] / int64_t(N);
  parallel_for(0, tiles, std::max<int64_t>(1, kGrainSize / (kTile * kTile)),
               [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t outer = t / (t0 * t1);
      const int64_t r = t % (t0 * t1);
      const int64_t i1b = r / t0 * kTile, i0b = r % t0 * kTile;
      char* ob = a.data[0];
      const char* ib = a.data[1];
      for (int d = 2; d < a.ndim; ++d) {
        const int64_t i = outer % a.sizes[d];
        outer /= a.sizes[d];
        ob += i * a.strides[0][d];
        ib += i * a.strides[1][d];
      }
      E* out = reinterpret_cast<E*>(ob);
      const E* in = reinterpret_cast<const E*>(ib);
      const int64_t i0e = std::min(n0, i0b + kTile);
      const int64_t i1e = std::min(n1, i1b + kTile);
      int64_t i0f = i0b, i1f = i1b;  // ends of the whole blocks
      constexpr int64_t B = Block<N>::kSize;
      if constexpr (B > 0) {
        using V = std::conditional_t<N == 4, float,
                                     std::conditional_t<N == 8, double, E>>;
        i0f = i0b + (i0e - i0b) / B * B;
        i1f = i1b + (i1e - i1b) / B * B;
        for (int64_t i1 = i1b; i1 < i1f; i1 += B)
          for (int64_t i0 = i0b; i0 < i0f; i0 += B)
            Block<N>::run(reinterpret_cast<const V*>(in + i0 * is0 + i1), is0,
                          reinterpret_cast<V*>(out + i1 * os1 + i0), os1);
      }
      auto rect = [&](int64_t a0, int64_t e0, int64_t a1, int64_t e1) {
        for (int64_t i1 = a1; i1 < e1; ++i1)
          for (int64_t i0 = a0; i0 < e0; ++i0)
            out[i1 * os1 + i0] = in[i0 * is0 + i1];
      };
      rect(i0f, i0e, i1b, i1e);  // the columns right of the blocks
      rect(i0b, i0f, i1f, i1e);  // the rows below them
    }
  });
  return true;
}

// A same-dtype copy whose fastest dim is dense on both sides but short
// (a head split: [B, L, H, D] -> [B, H, L, D] moves runs of D elements),
// or dense in the output and broadcast in the input (repeat_interleave's
// expand: each value written n0 times): the generic walk paid a memcpy
// call and a carry through every dim per run (D = 16 float32: 1.8x torch;
// repeat_interleave(2) 2.4x). Here each plane of the two fastest dims is
// a plain loop of short copies or fills. False for other layouts.
template <size_t N>
bool short_runs_copy(const KernelArgs& a) {
  const int64_t n0 = a.sizes[0];
  const bool fill = a.strides[1][0] == 0;
  if (a.ndim < 2 || a.strides[0][0] != int64_t(N) ||
      (a.strides[1][0] != int64_t(N) && !fill) || n0 * int64_t(N) > 256)
    return false;
  using E = typename Bits<N>::type;
  const int64_t n1 = a.sizes[1];
  const int64_t os1 = a.strides[0][1], is1 = a.strides[1][1];
  const int64_t planes = a.numel / (n0 * n1);
  parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / (n0 * n1)),
               [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      int64_t outer = p;
      char* out = a.data[0];
      const char* in = a.data[1];
      for (int d = 2; d < a.ndim; ++d) {
        const int64_t i = outer % a.sizes[d];
        outer /= a.sizes[d];
        out += i * a.strides[0][d];
        in += i * a.strides[1][d];
      }
      if (fill && n0 == 2) {  // repeat_interleave(2): a fixed pair
        for (int64_t i1 = 0; i1 < n1; ++i1) {
          E* dst = reinterpret_cast<E*>(out + i1 * os1);
          const E v = *reinterpret_cast<const E*>(in + i1 * is1);
          dst[0] = v;
          dst[1] = v;
        }
        continue;
      }
      for (int64_t i1 = 0; i1 < n1; ++i1) {
        E* dst = reinterpret_cast<E*>(out + i1 * os1);
        const E* src = reinterpret_cast<const E*>(in + i1 * is1);
        if (fill) {
          const E v = *src;
          for (int64_t k = 0; k < n0; ++k) dst[k] = v;
        } else {
          for (int64_t k = 0; k < n0; ++k) dst[k] = src[k];
        }
      }
    }
  });
  return true;
}

// A dense conversion to or from a 16-bit float, through float32 blocks
// (F16C for float16, bit operations for bfloat16): element by element,
// Half's portable conversion made x.float() of a float16 tensor 16x
// torch's time. Every value goes through float32 as Convert's does (the
// 16-bit types convert from and to float only), so results are the same.
// To or from float32 itself, straight into the output.
template <class O, class I>
void convert_blocks(const KernelArgs& a) {
  O* o = reinterpret_cast<O*>(a.data[0]);
  const I* x = reinterpret_cast<const I*>(a.data[1]);
  parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
    if constexpr (std::is_same<O, float>::value) {
      to_float_block(x + b, o + b, e - b);
      return;
    } else if constexpr (std::is_same<I, float>::value) {
      from_float_block(x + b, o + b, e - b);
      return;
    }
    float buf[kHalfBlock];
    for (int64_t i = b; i < e; i += kHalfBlock) {
      const int64_t m = std::min(kHalfBlock, e - i);
      to_float_block(x + i, buf, m);
      from_float_block(buf, o + i, m);
    }
  });
}

template <class O>
struct CopyK {
  static void run(KernelArgs& a) {
    DType src = a.dtypes[1];
    if (src == dtype_of<O> && a.contiguous) {
      std::memcpy(a.data[0], a.data[1], size_t(a.numel) * sizeof(O));
      return;
    }
    visit_dtype(src, [&](auto tag) {
      using I = decltype(tag);
      if constexpr (std::is_same<O, I>::value) {
        if (transpose_copy<sizeof(O)>(a) || short_runs_copy<sizeof(O)>(a))
          return;
        // Move the bytes: a trip through opmath_t (float for the 16-bit
        // floats) would quiet float16 NaNs and drop their payloads.
        strided_loop<2>(a, [](char** p, const int64_t* s, int64_t n) {
          if (s[0] == sizeof(O) && s[1] == sizeof(O)) {
            std::memcpy(p[0], p[1], size_t(n) * sizeof(O));
            return;
          }
          for (int64_t i = 0; i < n; ++i)
            std::memcpy(p[0] + i * s[0], p[1] + i * s[1], sizeof(O));
        });
      } else {
        if constexpr ((kIsHalfFloat<O> || kIsHalfFloat<I>) &&
                      !kIsComplex<O> && !kIsComplex<I>)
          if (a.contiguous) return convert_blocks<O, I>(a);
        unary_loop<O, I>(a, Convert<O, I>{});
      }
    });
  }
};

template <class T>
struct FillK {
  static void run(KernelArgs& a) {
    const T v = a.s0.to<T>();
    if (a.contiguous) {
      T* o = reinterpret_cast<T*>(a.data[0]);
      // past the cache, around it (kernels/cpu/loop.h): no line is read
      // just to be overwritten
      const bool stream = stream_stores(a.numel, sizeof(T));
      parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
        dense_out(o + b, e - b, stream, [v](int64_t) { return v; });
      });
      return;
    }
    strided_loop<1>(a, [&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
    });
  }
};

}  // namespace

void register_copy_kernels() {
#define FASTT_KERNELS_copy
#include "kernels/kernels.def"
}

}  // namespace fastt
