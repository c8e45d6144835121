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
// float32 copies (rows_via_float, via_float) up to this many elements per
// operand (the per-thread copies stay at most 12 MiB); longer ones pass
// over float32 pieces of themselves (long_slab).
constexpr int64_t kMaxStaged = int64_t(1) << 20;

// one(at, j) for each element of an [m, w] piece of a long slab (at = i *
// w + j), a long row's (w == 1) as a loop of its own, which vectorizes.
template <class F>
inline void each_in_piece(int64_t m, int64_t w, F one) {
  if (w == 1) {
    for (int64_t i = 0; i < m; ++i) one(i, 0);
  } else {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < w; ++j) one(i * w + j, j);
  }
}

template <class T, bool Log>
struct SoftmaxK {
  // row() and columns() are float32/float64 kernels (16-bit floats run
  // them on float32 copies, in run()); softmax stores the exponentials
  // and scales them after.
  using A = T;

  // One dense row of n elements (dim is the innermost).
  FASTT_VEC_CLONES static void row(const T* x, T* o, int64_t n) {
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
      if constexpr (!Log) o[i] = e;
    }
    int64_t i;
    if constexpr (Log) {
      const A lse = std::log(sum);
      for (i = 0; i < n; ++i) o[i] = T((A(x[i]) - m) - lse);
    } else {
      const A inv = A(1) / sum;
      for (i = 0; i < n; ++i) o[i] = o[i] * inv;
    }
  }

  // w (<= B) adjacent columns of an [n, inner] slab (dim is not innermost):
  // the per-column max and sum live in small arrays, rows stream through.
  static constexpr int64_t B = 64;
  FASTT_VEC_CLONES static void columns(const T* x, T* o, int64_t n,
                                       int64_t inner, int64_t w) {
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
        if constexpr (!Log) orow[j] = e;
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
        else
          orow[j] = orow[j] * sum[j];
      }
    }
  }

  // A 16-bit slab [n, w] (row stride inner; a long row is [n, 1] of
  // stride 1) too big to stage whole: two passes over float32 pieces.
  // The first takes each piece's max and sum of exponentials and folds
  // them into the running ones, rescaling by the larger max (online, as
  // flash attention's softmax; a pass for each made a row 1.26x torch's
  // time); the second writes the output. Element by element in place,
  // the loops stayed scalar: a float16 softmax over a row of 2^20 + 5 took
  // 11 ms, 17x torch's time, over dim 0 of 16500x64 18x.
  static void long_slab(const T* x, T* o, int64_t n, int64_t inner,
                        int64_t w) {
    const Staging s{2, piece_rows(w) * w};
    float mx[B], k[B], pm[B], ps[B];
    double sum[B];
    int nan[B];
    for (int64_t j = 0; j < w; ++j) {
      mx[j] = -INFINITY;
      sum[j] = 0;
      nan[j] = 0;
    }
    // a piece's max pm and sum ps into column j's (NaNs: noted, and the
    // result NaN; a piece all -inf adds nothing)
    const auto fold = [&](int64_t j) {
      if (pm[j] == -INFINITY) return;
      if (pm[j] > mx[j]) {
        sum[j] = sum[j] * std::exp(double(mx[j]) - pm[j]) + ps[j];
        mx[j] = pm[j];
      } else {
        sum[j] += ps[j] * std::exp(double(pm[j]) - mx[j]);
      }
    };
    for_pieces<1>(s, {x}, n, w, inner,
                  [&](int64_t, const float* const* v, int64_t m) {
                    if (w == 1) {  // a long row: one lane, vectorized
                      float m0 = -INFINITY, s0 = 0;
                      int n0 = 0;
#pragma omp simd reduction(max : m0) reduction(| : n0)
                      for (int64_t i = 0; i < m; ++i) {
                        m0 = v[0][i] > m0 ? v[0][i] : m0;
                        n0 |= v[0][i] != v[0][i];
                      }
#pragma omp simd reduction(+ : s0)
                      for (int64_t i = 0; i < m; ++i)
                        s0 += vec_exp_bounded(v[0][i] - m0);
                      pm[0] = m0;
                      ps[0] = s0;
                      nan[0] |= n0;
                      return fold(0);
                    }
                    for (int64_t j = 0; j < w; ++j) {
                      pm[j] = -INFINITY;
                      ps[j] = 0;
                    }
                    for (int64_t i = 0; i < m; ++i)
                      for (int64_t j = 0; j < w; ++j) {
                        const float e = v[0][i * w + j];
                        pm[j] = e > pm[j] ? e : pm[j];
                        nan[j] |= e != e;
                      }
                    for (int64_t i = 0; i < m; ++i)
                      for (int64_t j = 0; j < w; ++j)
                        ps[j] += vec_exp_bounded(v[0][i * w + j] - pm[j]);
                    for (int64_t j = 0; j < w; ++j) fold(j);
                  });
    for (int64_t j = 0; j < w; ++j)
      if (nan[j]) mx[j] = NAN;
    for (int64_t j = 0; j < w; ++j)
      k[j] = Log ? float(std::log(sum[j])) : float(1.0 / sum[j]);
    for_pieces<1>(s, {x}, n, w, inner,
                  [&](int64_t r, const float* const* v, int64_t m) {
                    float* out = s[1];
                    const auto one = [&](int64_t at, int64_t j) {
                      const float d = v[0][at] - mx[j];
                      out[at] = Log ? d - k[j] : vec_exp_bounded(d) * k[j];
                    };
                    each_in_piece(m, w, one);
                    s.out(1, o + r * inner, m, w, inner);
                  });
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
        if constexpr (kIsHalfFloat<T>) {
          if (n <= kMaxStaged)
            return rows_via_float<1>(
                {x}, o, b, e, n,
                [&](const float* const* in, float* out, int64_t m) {
                  for (int64_t r = 0; r < m; ++r)
                    SoftmaxK<float, Log>::row(in[0] + r * n, out + r * n, n);
                });
          for (int64_t r = b; r < e; ++r)
            long_slab(x + r * n, o + r * n, n, 1, 1);
        } else {
          for (int64_t r = b; r < e; ++r) row(x + r * n, o + r * n, n);
        }
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
        const int64_t w = std::min(B, inner - j0);
        if constexpr (kIsHalfFloat<T>) {
          if (n * w <= kMaxStaged)
            via_float<1>({x + off}, o + off, n, w, inner,
                         [&](const float* const* in, float* out) {
                           SoftmaxK<float, Log>::columns(in[0], out, n, w, w);
                         });
          else
            long_slab(x + off, o + off, n, inner, w);
        } else {
          columns(x + off, o + off, n, inner, w);
        }
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

  // A 16-bit slab too big to stage whole (as SoftmaxK::long_slab): two
  // passes over float32 pieces of g and y (the sum, the output).
  static void long_slab(const T* g, const T* y, T* o, int64_t n,
                        int64_t inner, int64_t w) {
    const Staging s{3, piece_rows(w) * w};
    double sum[B] = {};
    float k[B];
    for_pieces<2>(s, {g, y}, n, w, inner,
                  [&](int64_t, const float* const* v, int64_t m) {
                    const auto term = [&](int64_t at) {
                      return Log ? v[0][at] : v[0][at] * v[1][at];
                    };
                    if (w == 1) {
                      float part = 0;
#pragma omp simd reduction(+ : part)
                      for (int64_t i = 0; i < m; ++i) part += term(i);
                      sum[0] += part;
                      return;
                    }
                    float part[B] = {};
                    for (int64_t i = 0; i < m; ++i)
                      for (int64_t j = 0; j < w; ++j)
                        part[j] += term(i * w + j);
                    for (int64_t j = 0; j < w; ++j) sum[j] += part[j];
                  });
    for (int64_t j = 0; j < w; ++j) k[j] = float(sum[j]);
    for_pieces<2>(s, {g, y}, n, w, inner,
                  [&](int64_t r, const float* const* v, int64_t m) {
                    float* out = s[2];
                    const auto one = [&](int64_t at, int64_t j) {
                      out[at] = Log ? v[0][at] - vec_exp(v[1][at]) * k[j]
                                    : v[1][at] * (v[0][at] - k[j]);
                    };
                    each_in_piece(m, w, one);
                    s.out(2, o + r * inner, m, w, inner);
                  });
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
        if constexpr (kIsHalfFloat<T>) {
          if (n <= kMaxStaged)
            return rows_via_float<2>(
                {g, y}, o, b, e, n,
                [&](const float* const* in, float* out, int64_t m) {
                  for (int64_t r = 0; r < m; ++r)
                    SoftmaxBackwardK<float, Log>::row(
                        in[0] + r * n, in[1] + r * n, out + r * n, n);
                });
          for (int64_t r = b; r < e; ++r)
            long_slab(g + r * n, y + r * n, o + r * n, n, 1, 1);
        } else {
          for (int64_t r = b; r < e; ++r)
            row(g + r * n, y + r * n, o + r * n, n);
        }
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
        const int64_t w = std::min(B, inner - j0);
        if constexpr (kIsHalfFloat<T>) {
          if (n * w <= kMaxStaged)
            via_float<2>({g + off, y + off}, o + off, n, w, inner,
                         [&](const float* const* in, float* out) {
                           SoftmaxBackwardK<float, Log>::columns(
                               in[0], in[1], out, n, w, w);
                         });
          else
            long_slab(g + off, y + off, o + off, n, inner, w);
        } else {
          columns(g + off, y + off, o + off, n, inner, w);
        }
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
