// softmax and log_softmax along dim i0 of a contiguous input, seen as
// [outer, n, inner]. Numerically stable: the max is subtracted first.
// Both ops share one kernel template; the bool picks the log form.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/loop.h"

// The loops here only select between finite values and never read FP
// exception flags; without this GCC will not if-convert the selects in
// vec_exp and the loops stay scalar.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

namespace fastt {
namespace {
using namespace cpu;

inline float bits_to_float(int32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// exp for float written as plain arithmetic so loops over it vectorize
// (std::exp is an opaque libm call): Cody-Waite reduction x = k ln2 + r,
// Cephes' degree-6 polynomial for e^r (about 1 ulp), 2^k built from bits in
// two halves so results down to the subnormal range stay right.
inline float vec_exp(float x) {
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 88.7f ? 88.7f : xc;
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

template <class T, bool Log>
struct SoftmaxK {
  using A = opmath_t<T>;
  static constexpr int L = 8;
  static constexpr bool kStoreExp = !Log && std::is_same<A, T>::value;

  // One dense row of n elements (dim is the innermost).
  static void row(const T* x, T* o, int64_t n) {
    A mx[L];
    for (int j = 0; j < L; ++j) mx[j] = -INFINITY;
    int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int j = 0; j < L; ++j) {
        A v = A(x[i + j]);
        mx[j] = ((v > mx[j]) | (v != v)) ? v : mx[j];
      }
    A m = -INFINITY;
    for (; i < n; ++i) {
      A v = A(x[i]);
      m = ((v > m) | (v != v)) ? v : m;
    }
    for (int j = 0; j < L; ++j)
      m = ((mx[j] > m) | (mx[j] != mx[j])) ? mx[j] : m;

    A acc[L] = {};
    for (i = 0; i + L <= n; i += L)
      for (int j = 0; j < L; ++j) {
        A e = vec_exp(A(x[i + j]) - m);
        acc[j] += e;
        if constexpr (kStoreExp) o[i + j] = e;
      }
    A sum = 0;
    for (; i < n; ++i) {
      A e = vec_exp(A(x[i]) - m);
      sum += e;
      if constexpr (kStoreExp) o[i] = e;
    }
    for (int j = 0; j < L; ++j) sum += acc[j];

    if constexpr (Log) {
      const A lse = std::log(sum);
      for (i = 0; i < n; ++i) o[i] = T((A(x[i]) - m) - lse);
    } else if constexpr (kStoreExp) {
      const A inv = A(1) / sum;
      for (i = 0; i < n; ++i) o[i] = o[i] * inv;
    } else {
      const A inv = A(1) / sum;
      for (i = 0; i < n; ++i) o[i] = T(vec_exp(A(x[i]) - m) * inv);
    }
  }

  // w (<= B) adjacent columns of an [n, inner] slab (dim is not innermost):
  // the per-column max and sum live in small arrays, rows stream through.
  static constexpr int64_t B = 64;
  static void columns(const T* x, T* o, int64_t n, int64_t inner, int64_t w) {
    A mx[B], sum[B];
    for (int64_t j = 0; j < w; ++j) {
      mx[j] = -INFINITY;
      sum[j] = A(0);
    }
    for (int64_t i = 0; i < n; ++i) {
      const T* xr = x + i * inner;
      for (int64_t j = 0; j < w; ++j) {
        A v = A(xr[j]);
        mx[j] = ((v > mx[j]) | (v != v)) ? v : mx[j];
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const T* xr = x + i * inner;
      T* orow = o + i * inner;
      for (int64_t j = 0; j < w; ++j) {
        A e = vec_exp(A(xr[j]) - mx[j]);
        sum[j] += e;
        if constexpr (kStoreExp) orow[j] = e;
      }
    }
    if constexpr (Log) {
      for (int64_t j = 0; j < w; ++j) sum[j] = std::log(sum[j]);
    } else {
      for (int64_t j = 0; j < w; ++j) sum[j] = A(1) / sum[j];
    }
    for (int64_t i = 0; i < n; ++i) {
      const T* xr = x + i * inner;
      T* orow = o + i * inner;
      for (int64_t j = 0; j < w; ++j) {
        if constexpr (Log)
          orow[j] = T((A(xr[j]) - mx[j]) - sum[j]);
        else if constexpr (kStoreExp)
          orow[j] = orow[j] * sum[j];
        else
          orow[j] = T(vec_exp(A(xr[j]) - mx[j]) * sum[j]);
      }
    }
  }

  static void run(KernelArgs& a) {
    const Tensor& in = *a.in[0];
    const T* x = static_cast<const T*>(in.data_ptr());
    T* o = static_cast<T*>(a.out->data_ptr());
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < in.dim(); ++d) {
      int64_t s = in.sizes()[d];
      if (d < a.i0) outer *= s;
      else if (d == a.i0) n = s;
      else inner *= s;
    }
    if (inner == 1) {
      const int64_t grain =
          std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
      parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) row(x + r * n, o + r * n, n);
      });
      return;
    }
    const int64_t blocks = (inner + B - 1) / B;
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * B, 1));
    parallel_for(0, outer * blocks, grain, [&](int64_t ub, int64_t ue) {
      for (int64_t u = ub; u < ue; ++u) {
        const int64_t oi = u / blocks, j0 = (u % blocks) * B;
        const int64_t off = oi * n * inner + j0;
        columns(x + off, o + off, n, inner, std::min(B, inner - j0));
      }
    });
  }
};
template <class T>
using SoftmaxKernel = SoftmaxK<T, false>;
template <class T>
using LogSoftmaxKernel = SoftmaxK<T, true>;

}  // namespace

void register_softmax_kernels() {
  register_only<SoftmaxKernel>(Op::softmax, FloatTypes{});
  register_only<LogSoftmaxKernel>(Op::log_softmax, FloatTypes{});
}

}  // namespace fastt
