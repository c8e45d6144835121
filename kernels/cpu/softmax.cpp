// softmax and log_softmax along dim i0 of a contiguous input, seen as
// [outer, n, inner], and their backward kernels. Numerically stable: the
// max is subtracted first. Each forward/backward pair shares one kernel
// template; the bool picks the log form.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "csrc/mutation.h"
#include "kernels/cpu/loop.h"
#include "kernels/cpu/vec_exp.h"

namespace fastt {
namespace {
using namespace cpu;

// float16/bfloat16 rows and column slabs run the float32 kernels on
// float32 copies (via_float) up to this many elements per operand (the
// per-thread copies stay at most 12 MiB); longer ones convert element by
// element, in place.
constexpr int64_t kMaxStaged = int64_t(1) << 20;

template <class T, bool Log>
struct SoftmaxK {
  using A = opmath_t<T>;
  static constexpr bool kStoreExp = !Log && std::is_same<A, T>::value;

  // One dense row of n elements (dim is the innermost).
  FASTT_VEC_CLONES static void row(const T* x, T* o, int64_t n) {
    if constexpr (kIsHalfFloat<T>) {
      if (n <= kMaxStaged)
        return via_float<1>({x}, o, 1, n, n, [&](const float* const* in,
                                                 float* out) {
          SoftmaxK<float, Log>::row(in[0], out, n);
        });
    }
    // omp simd: the float reductions vectorize without -ffast-math.
    A m = -INFINITY;
    int nan = 0;
#pragma omp simd reduction(max : m) reduction(| : nan)
    for (int64_t i = 0; i < n; ++i) {
      const A v = A(x[i]);
      m = v > m ? v : m;
      nan |= v != v;
    }
    if (nan) m = A(NAN);
    if (FASTT_MUTANT(SoftmaxNoMaxShift)) m = A(0);
    A sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) {
      const A e = vec_exp_bounded(A(x[i]) - m);
      sum += e;
      if constexpr (kStoreExp) o[i] = e;
    }
    int64_t i;
    if constexpr (Log) {
      const A lse = std::log(sum);
      for (i = 0; i < n; ++i) o[i] = T((A(x[i]) - m) - lse);
    } else if constexpr (kStoreExp) {
      const A inv = A(1) / sum;
      for (i = 0; i < n; ++i) o[i] = o[i] * inv;
    } else {
      const A inv = A(1) / sum;
      for (i = 0; i < n; ++i) o[i] = T(vec_exp_bounded(A(x[i]) - m) * inv);
    }
  }

  // w (<= B) adjacent columns of an [n, inner] slab (dim is not innermost):
  // the per-column max and sum live in small arrays, rows stream through.
  static constexpr int64_t B = 64;
  FASTT_VEC_CLONES static void columns(const T* x, T* o, int64_t n,
                                       int64_t inner, int64_t w) {
    if constexpr (kIsHalfFloat<T>) {
      if (n * w <= kMaxStaged)
        return via_float<1>({x}, o, n, w, inner, [&](const float* const* in,
                                                     float* out) {
          SoftmaxK<float, Log>::columns(in[0], out, n, w, w);
        });
    }
    A mx[B], sum[B];
    for (int64_t j = 0; j < w; ++j) {
      mx[j] = -INFINITY;
      sum[j] = A(0);
    }
    for (int64_t i = 0; i < n; ++i) {
      const T* xr = x + i * inner;
      for (int64_t j = 0; j < w; ++j) {
        A v = A(xr[j]);
        mx[j] = pick_nan<true>(mx[j], v);
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const T* xr = x + i * inner;
      T* orow = o + i * inner;
      for (int64_t j = 0; j < w; ++j) {
        A e = vec_exp_bounded(A(xr[j]) - mx[j]);
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
          orow[j] = T(vec_exp_bounded(A(xr[j]) - mx[j]) * sum[j]);
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

// Backward of softmax / log_softmax along dim i0: out = grad_in, in[0] =
// grad_out, in[1] = the forward's output y, all dense and of one shape.
//   softmax:     grad_in = y * (g - sum(g * y))
//   log_softmax: grad_in = g - exp(y) * sum(g)
template <class T, bool Log>
struct SoftmaxBackwardK {
  using A = opmath_t<T>;

  FASTT_VEC_CLONES static void row(const T* g, const T* y, T* o, int64_t n) {
    if constexpr (kIsHalfFloat<T>) {
      if (n <= kMaxStaged)
        return via_float<2>({g, y}, o, 1, n, n, [&](const float* const* in,
                                                    float* out) {
          SoftmaxBackwardK<float, Log>::row(in[0], in[1], out, n);
        });
    }
    A s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += Log ? A(g[i]) : A(g[i]) * A(y[i]);
    int64_t i;
    if constexpr (Log) {
      for (i = 0; i < n; ++i) o[i] = T(A(g[i]) - vec_exp(A(y[i])) * s);
    } else {
      for (i = 0; i < n; ++i) o[i] = T(A(y[i]) * (A(g[i]) - s));
    }
  }

  // w (<= B) adjacent columns of an [n, inner] slab.
  static constexpr int64_t B = 64;
  FASTT_VEC_CLONES static void columns(const T* g, const T* y, T* o,
                                       int64_t n, int64_t inner, int64_t w) {
    if constexpr (kIsHalfFloat<T>) {
      if (n * w <= kMaxStaged)
        return via_float<2>({g, y}, o, n, w, inner, [&](const float* const* in,
                                                        float* out) {
          SoftmaxBackwardK<float, Log>::columns(in[0], in[1], out, n, w, w);
        });
    }
    A s[B];
    for (int64_t j = 0; j < w; ++j) s[j] = A(0);
    for (int64_t i = 0; i < n; ++i) {
      const T* gr = g + i * inner;
      const T* yr = y + i * inner;
      for (int64_t j = 0; j < w; ++j)
        s[j] += Log ? A(gr[j]) : A(gr[j]) * A(yr[j]);
    }
    for (int64_t i = 0; i < n; ++i) {
      const T* gr = g + i * inner;
      const T* yr = y + i * inner;
      T* orow = o + i * inner;
      for (int64_t j = 0; j < w; ++j) {
        if constexpr (Log)
          orow[j] = T(A(gr[j]) - vec_exp(A(yr[j])) * s[j]);
        else
          orow[j] = T(A(yr[j]) * (A(gr[j]) - s[j]));
      }
    }
  }

  static void run(KernelArgs& a) {
    const Tensor& gt = *a.in[0];
    const T* g = static_cast<const T*>(gt.data_ptr());
    const T* y = static_cast<const T*>(a.in[1]->data_ptr());
    T* o = static_cast<T*>(a.out->data_ptr());
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < gt.dim(); ++d) {
      int64_t s = gt.sizes()[d];
      if (d < a.i0) outer *= s;
      else if (d == a.i0) n = s;
      else inner *= s;
    }
    if (inner == 1) {
      const int64_t grain =
          std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
      parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r)
          row(g + r * n, y + r * n, o + r * n, n);
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
        columns(g + off, y + off, o + off, n, inner,
                std::min(B, inner - j0));
      }
    });
  }
};
template <class T>
using SoftmaxBackwardKernel = SoftmaxBackwardK<T, false>;
template <class T>
using LogSoftmaxBackwardKernel = SoftmaxBackwardK<T, true>;

}  // namespace

void register_softmax_kernels() {
#define FASTT_KERNELS_softmax
#include "kernels/kernels.def"
}

}  // namespace fastt
