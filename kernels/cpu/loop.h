// CPU loop machinery shared by every elementwise kernel: a parallel_for that
// only spawns threads above a grain size, and strided iteration over a
// KernelArgs loop (dim 0 fastest) that hands the body runs of the innermost
// dim so the common dense case compiles to a vectorizable loop.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "csrc/dispatch.h"
#include "csrc/parallel.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/half_block.h"
#include "kernels/cpu/vec_clones.h"
#include "kernels/dtype_sets.h"

namespace fastt {
namespace cpu {

// Elements below which an elementwise kernel stays on one thread.
constexpr int64_t kGrainSize = 32768;

// Calls body(ptrs, strides, n) for runs of the innermost dim covering the
// linear range [begin, end) of the iteration space.
template <int N, class Body>
inline void strided_range(const KernelArgs& a, int64_t begin, int64_t end,
                          Body&& body) {
  int64_t idx[kMaxDims];
  char* ptr[N];
  int64_t inner_stride[N];
  // Decompose begin into a multi-index.
  int64_t rem = begin;
  for (int d = 0; d < a.ndim; ++d) {
    idx[d] = a.sizes[d] ? rem % a.sizes[d] : 0;
    rem = a.sizes[d] ? rem / a.sizes[d] : 0;
  }
  for (int k = 0; k < N; ++k) {
    inner_stride[k] = a.strides[k][0];
    char* p = a.data[k];
    for (int d = 0; d < a.ndim; ++d) p += idx[d] * a.strides[k][d];
    ptr[k] = p;
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t n = a.sizes[0] - idx[0];
    if (n > end - pos) n = end - pos;
    body(ptr, inner_stride, n);
    pos += n;
    if (pos >= end) break;
    // Advance: the inner run is done; carry into the outer dims.
    for (int k = 0; k < N; ++k) ptr[k] += n * inner_stride[k];
    idx[0] += n;
    for (int d = 0; d < a.ndim - 1 && idx[d] == a.sizes[d]; ++d) {
      for (int k = 0; k < N; ++k)
        ptr[k] += a.strides[k][d + 1] - a.sizes[d] * a.strides[k][d];
      idx[d] = 0;
      ++idx[d + 1];
    }
  }
}

// Runs body over the whole iteration space, in parallel above the grain.
template <int N, class Body>
inline void strided_loop(const KernelArgs& a, Body&& body,
                         int64_t grain = kGrainSize) {
  parallel_for(0, a.numel, grain, [&](int64_t b, int64_t e) {
    strided_range<N>(a, b, e, body);
  });
}

// ---- Dense outputs, optionally around the cache ----
// An elementwise kernel whose inputs and output together pass
// cpu_isa::g_stream_store_bytes (the last-level cache's size) writes
// its dense output with non-temporal stores: a plain store first reads
// each output line into the cache (a third memory stream beside the
// inputs) and evicts input lines for data nobody reads soon. Measured on
// a 2-core AMD EPYC (32 MiB L3), 1 thread, float32 add into a preallocated
// out: 4M elements 2.11 -> 1.39 ms, 8M 4.54 -> 2.88 ms (torch 1.83, 3.78);
// in C, a chain of three adds at 1M (13 MB per op) took 0.81x the time
// with plain stores. Each block of one vector is computed by the op's own
// scalar code into an aligned buffer the compiler keeps in a register, so
// every functor and dtype gets it from this one place. 32 bytes a store
// at AVX2 and AVX-512 (64-byte stores ran 5-10% slower on this EPYC),
// SSE2's 16 otherwise; none off x86. Runs under kStreamMinRun elements
// (rows of a broadcast) stay plain: the head, tail and fence would cost.
#if defined(__SSE2__)
constexpr int kStreamBytes = kVecBytes < 32 ? kVecBytes : 32;
#else
constexpr int kStreamBytes = 0;
#endif
constexpr int64_t kStreamMinRun = 1024;

// Whether a kernel over `numel` elements moving `bytes_per_element` bytes
// each (all operands) writes around the cache.
inline bool stream_stores(int64_t numel, int64_t bytes_per_element) {
  return kStreamBytes > 0 &&
         numel * bytes_per_element >= cpu_isa::g_stream_store_bytes;
}

#if defined(__SSE2__)
// g by value and its captures by value: the stores may alias anything, so
// through a reference the loop reloaded every captured pointer per block
// (1M float32 add 2x slower than the plain loop).
template <class O, class G>
void stream_out(O* o, int64_t n, G g) {
  constexpr int64_t V = kStreamBytes / sizeof(O);
  const uintptr_t mis = reinterpret_cast<uintptr_t>(o) % kStreamBytes;
  int64_t i = 0;
  if (mis % sizeof(O) == 0) {
    // plain stores up to the first aligned block, then whole blocks
    const int64_t head =
        mis ? int64_t((kStreamBytes - mis) / sizeof(O)) : int64_t(0);
    for (; i < head && i < n; ++i) o[i] = g(i);
    for (; i + V <= n; i += V) {
      alignas(kStreamBytes) O t[V];
      // one vector iteration, not V scalar ones: fully unrolled, GCC 12
      // built the block from scalar adds and lane inserts
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 0
#endif
      for (int64_t k = 0; k < V; ++k) t[k] = g(i + k);
#if defined(__AVX__)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(o + i),
                          _mm256_load_si256(reinterpret_cast<const __m256i*>(t)));
#else
      _mm_stream_si128(reinterpret_cast<__m128i*>(o + i),
                       _mm_load_si128(reinterpret_cast<const __m128i*>(t)));
#endif
    }
    // the stores are weakly ordered: fence before the data is published
    // (to the caller, or past the parallel region's barrier)
    _mm_sfence();
    __atomic_fetch_add(&cpu_isa::g_stream_store_runs, 1, __ATOMIC_RELAXED);
  }
  for (; i < n; ++i) o[i] = g(i);
}
#endif

// o[i] = g(i) for i in [0, n): a plain loop (which vectorizes), or
// stream_out above when `stream` (stream_stores) and the run is long. g
// captures by value (stream_out's note).
template <class O, class G>
FASTT_ALWAYS_INLINE void dense_out(O* o, int64_t n, bool stream, G g) {
#if defined(__SSE2__)
  if (stream && n >= kStreamMinRun) {
    stream_out(o, n, g);
    return;
  }
#else
  (void)stream;
#endif
  for (int64_t i = 0; i < n; ++i) o[i] = g(i);
}

template <class T>
FASTT_HD opmath_t<T> load(const char* p) {
  return static_cast<opmath_t<T>>(*reinterpret_cast<const T*>(p));
}

// o[i] = f(x[i]) (kBinary false) or f(x[i], y[i]) over a dense float16
// range, staged through float32 blocks.
template <bool kBinary, class F>
inline void half_blocks(const Half* x, const Half* y, Half* o, int64_t n,
                        F f) {
  float bx[kHalfBlock], by[kHalfBlock];
  for (int64_t i = 0; i < n; i += kHalfBlock) {
    const int64_t m = n - i < kHalfBlock ? n - i : kHalfBlock;
    half_to_float(x + i, bx, m);
    if constexpr (kBinary) {
      half_to_float(y + i, by, m);
      for (int64_t k = 0; k < m; ++k) bx[k] = static_cast<float>(f(bx[k], by[k]));
    } else {
      for (int64_t k = 0; k < m; ++k) bx[k] = static_cast<float>(f(bx[k]));
    }
    float_to_half(bx, o + i, m);
  }
}

// out = f(in) where out has type O and the input type I.
template <class O, class I, class F>
inline void unary_loop(const KernelArgs& a, F f) {
  if (a.contiguous) {
    O* o = reinterpret_cast<O*>(a.data[0]);
    const I* x = reinterpret_cast<const I*>(a.data[1]);
    if constexpr (std::is_same<I, Half>::value && std::is_same<O, Half>::value) {
      parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
        half_blocks<false>(x + b, nullptr, o + b, e - b,
                    [&](float v) { return f(v); });
      });
      return;
    }
    const bool stream = stream_stores(a.numel, sizeof(O) + sizeof(I));
    parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
      const I* xb = x + b;
      dense_out(o + b, e - b, stream, [=](int64_t i) {
        return static_cast<O>(f(static_cast<opmath_t<I>>(xb[i])));
      });
    });
    return;
  }
  const bool stream = stream_stores(a.numel, sizeof(O) + sizeof(I));
  strided_loop<2>(a, [&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(O) && s[1] == sizeof(I)) {
      O* o = reinterpret_cast<O*>(p[0]);
      const I* x = reinterpret_cast<const I*>(p[1]);
      dense_out(o, n, stream, [=](int64_t i) {
        return static_cast<O>(f(static_cast<opmath_t<I>>(x[i])));
      });
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) =
            static_cast<O>(f(load<I>(p[1] + i * s[1])));
    }
  });
}

// out = f(x, y). Dense, scalar-y and scalar-x runs get their own loops.
template <class O, class I, class F>
inline void binary_loop(const KernelArgs& a, F f) {
  using M = opmath_t<I>;
  if (a.contiguous) {
    O* o = reinterpret_cast<O*>(a.data[0]);
    const I* x = reinterpret_cast<const I*>(a.data[1]);
    const I* y = reinterpret_cast<const I*>(a.data[2]);
    if constexpr (std::is_same<I, Half>::value && std::is_same<O, Half>::value) {
      parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
        half_blocks<true>(x + b, y + b, o + b, e - b,
                    [&](float u, float v) { return f(u, v); });
      });
      return;
    }
    const bool stream = stream_stores(a.numel, sizeof(O) + 2 * sizeof(I));
    parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
      const I* xb = x + b;
      const I* yb = y + b;
      dense_out(o + b, e - b, stream, [=](int64_t i) {
        return static_cast<O>(f(static_cast<M>(xb[i]), static_cast<M>(yb[i])));
      });
    });
    return;
  }
  // (a number operand moves no bytes per element, but counting it keeps
  // the choice one expression)
  const bool stream = stream_stores(a.numel, sizeof(O) + 2 * sizeof(I));
  strided_loop<3>(a, [&](char** p, const int64_t* s, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const I* x = reinterpret_cast<const I*>(p[1]);
    const I* y = reinterpret_cast<const I*>(p[2]);
    if (s[0] == sizeof(O) && s[1] == sizeof(I) && s[2] == 0) {
      const M yv = static_cast<M>(*y);
      dense_out(o, n, stream, [=](int64_t i) {
        return static_cast<O>(f(static_cast<M>(x[i]), yv));
      });
    } else if (s[0] == sizeof(O) && s[1] == 0 && s[2] == sizeof(I)) {
      const M xv = static_cast<M>(*x);
      dense_out(o, n, stream, [=](int64_t i) {
        return static_cast<O>(f(xv, static_cast<M>(y[i])));
      });
    } else if (s[0] == sizeof(O) && s[1] == sizeof(I) && s[2] == sizeof(I)) {
      dense_out(o, n, stream, [=](int64_t i) {
        return static_cast<O>(f(static_cast<M>(x[i]), static_cast<M>(y[i])));
      });
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) = static_cast<O>(
            f(load<I>(p[1] + i * s[1]), load<I>(p[2] + i * s[2])));
    }
  });
}

// out = f(x, y, z) with element types X, Y, Z (where's condition is bool).
template <class O, class X, class Y, class Z, class F>
inline void ternary_loop(const KernelArgs& a, F f) {
  const bool stream = stream_stores(
      a.numel, sizeof(O) + sizeof(X) + sizeof(Y) + sizeof(Z));
  strided_loop<4>(a, [&](char** p, const int64_t* s, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const X* x = reinterpret_cast<const X*>(p[1]);
    const Y* y = reinterpret_cast<const Y*>(p[2]);
    const Z* z = reinterpret_cast<const Z*>(p[3]);
    using MX = opmath_t<X>;
    using MY = opmath_t<Y>;
    using MZ = opmath_t<Z>;
    const bool dense = s[0] == sizeof(O) && s[1] == sizeof(X);
    if (dense && s[2] == sizeof(Y) && s[3] == sizeof(Z)) {
      dense_out(o, n, stream, [=](int64_t i) {
        return static_cast<O>(f(static_cast<MX>(x[i]), static_cast<MY>(y[i]),
                                static_cast<MZ>(z[i])));
      });
    } else if (dense && s[2] == 0 && s[3] == 0) {
      // both others one number (x.clamp(lo, hi) with number bounds): read
      // once, so the loop vectorizes (it ran 7x torch's time element by
      // element through byte strides)
      const MY yv = static_cast<MY>(*y);
      const MZ zv = static_cast<MZ>(*z);
      dense_out(o, n, stream, [=](int64_t i) {
        return static_cast<O>(f(static_cast<MX>(x[i]), yv, zv));
      });
    } else if (dense && s[2] == sizeof(Y) && s[3] == 0) {  // where(c, x, 0.)
      const MZ zv = static_cast<MZ>(*z);
      dense_out(o, n, stream, [=](int64_t i) {
        return static_cast<O>(f(static_cast<MX>(x[i]), static_cast<MY>(y[i]), zv));
      });
    } else if (dense && s[2] == 0 && s[3] == sizeof(Z)) {  // where(c, 0., y)
      const MY yv = static_cast<MY>(*y);
      dense_out(o, n, stream, [=](int64_t i) {
        return static_cast<O>(f(static_cast<MX>(x[i]), yv, static_cast<MZ>(z[i])));
      });
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) = static_cast<O>(
            f(load<X>(p[1] + i * s[1]), load<Y>(p[2] + i * s[2]),
              load<Z>(p[3] + i * s[3])));
    }
  });
}

// Registers Kernel<T> for every T in the set and marks every other dtype
// of the op's CPU row explicitly unsupported (kernels/dtype_sets.h).
template <template <class> class Kernel, class... Ts>
void register_only(Op op, Types<Ts...> set) {
  register_only_on<DeviceType::CPU, Kernel>(op, set);
}

}  // namespace cpu
}  // namespace fastt
