// Layer norm and RMS norm, forward and backward, over a contiguous input
// seen as [rows, cols]: statistics in opmath (float for 16-bit types), rows
// in parallel. Argument layouts: nn_args in csrc/ops/nn.h.
#include <algorithm>
#include <cmath>
#include <vector>

#include "csrc/ops/nn.h"
#include "kernels/cpu/loop.h"
#include "kernels/nn_geom.h"
#include "kernels/cpu/vec_exp.h"

namespace fastt {
namespace {
using namespace cpu;
using namespace nn_args;
using namespace nn_geom;

// sum_{i < n} f(i); omp simd lets the float reduction vectorize without
// -ffast-math. Always inlined: the simd lanes' reduction array (64 bytes
// at AVX-512) trips GCC's stack-frame-growth limit, and the outlined copy
// ran scalar (layer_norm 6x slower at AVX-512 than at AVX2).
template <class A, class F>
FASTT_VEC_INLINE A lane_sum(int64_t n, F f) {
  A s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += f(i);
  return s;
}

// Rows per parallel chunk so a chunk holds about kGrainSize elements.
inline int64_t row_grain(int64_t cols) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols, 1));
}

// The backward kernels split rows into a few chunks (one per thread at
// most), each with its own column-sum buffer.
inline int64_t row_chunks(int64_t rows, int64_t cols) {
  const int64_t grain = row_grain(cols);
  return std::max<int64_t>(
      1, std::min<int64_t>(get_num_threads(), (rows + grain - 1) / grain));
}
// Runs body(chunk, row_begin, row_end) for each chunk, in parallel.
template <class F>
void for_row_chunks(int64_t rows, int64_t chunks, F body) {
  parallel_for(0, chunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c)
      body(c, rows * c / chunks, rows * (c + 1) / chunks);
  });
}

// out[i] = sum over chunks c of part[c * stride + i], i < cols.
template <class T, class A>
void sum_chunks(const A* part, int64_t chunks, int64_t stride, int64_t cols,
                T* out) {
  for (int64_t i = 0; i < cols; ++i) {
    A s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += part[c * stride + i];
    out[i] = T(s);
  }
}

// A zeroed scratch buffer of n opmath values: on the stack when small,
// else from the caching allocator (a steady-state loop never mallocs).
template <class A>
struct Scratch {
  A small[512];
  Tensor big;
  A* get(int64_t n) {
    A* p = small;
    if (n > 512) {
      big = Tensor::empty({n}, dtype_of<A>);
      p = static_cast<A*>(big.data_ptr());
    }
    std::fill(p, p + n, A(0));
    return p;
  }
};

// In each kernel below, float16/bfloat16 rows run the float32 kernel
// (rows()' kIsHalfFloat branch): each row's operands are converted into
// float32 slots (Staging; weight and bias once per range), the float32
// rows() runs on that one row, and its outputs are converted back.
// Converted element by element in these loops, Half's portable
// conversion made float16 layer_norm 10x torch's time and rms_norm 5x.
// rows() stays out of line: inlined into the 16-bit loop, the float32
// kernel's omp simd sums compiled to scalar code (layer_norm 4x torch's
// time).

// y = (x - mean) * rstd * weight + bias per row; mean and rstd (x's dtype,
// like torch) go out too.
template <class T>
struct LayerNormKernel {
  using A = opmath_t<T>;
  struct Ctx {
    const T *x, *w, *b;
    T *y, *mean, *rstd;
    int64_t cols;
    A eps;
  };

  FASTT_VEC_CLONES FASTT_NOINLINE static void rows(const Ctx& c, int64_t rb,
                                                   int64_t re) {
    const int64_t cols = c.cols;
    if constexpr (kIsHalfFloat<T>) {  // through float32 (Staging)
      const Staging s(4, cols);
      float mu, rs;
      typename LayerNormKernel<float>::Ctx f{
          s[0], s.in(1, c.w, cols), s.in(2, c.b, cols), s[3], &mu, &rs,
          cols, c.eps};
      for (int64_t r = rb; r < re; ++r) {
        to_float_block(c.x + r * cols, s[0], cols);
        LayerNormKernel<float>::rows(f, 0, 1);
        from_float_block(s[3], c.y + r * cols, cols);
        c.mean[r] = T(mu);
        c.rstd[r] = T(rs);
      }
      return;
    }
    const A inv = cols ? A(1) / A(cols) : A(0);
    for (int64_t r = rb; r < re; ++r) {
      const T* xr = c.x + r * cols;
      T* yr = c.y + r * cols;
      // Two passes over a row that sits in cache: an accurate variance
      // without Welford's serial dependency.
      const A mu = lane_sum<A>(cols, [&](int64_t i) { return A(xr[i]); }) * inv;
      const A var = lane_sum<A>(cols, [&](int64_t i) {
                      const A d = A(xr[i]) - mu;
                      return d * d;
                    }) /
                    A(cols);
      const A rs = A(1) / std::sqrt(var + c.eps);
      c.mean[r] = T(mu);
      c.rstd[r] = T(rs);
      const T* w = c.w;
      const T* b = c.b;
      if (w && b) {
        for (int64_t i = 0; i < cols; ++i)
          yr[i] = T((A(xr[i]) - mu) * rs * A(w[i]) + A(b[i]));
      } else if (w) {
        for (int64_t i = 0; i < cols; ++i)
          yr[i] = T((A(xr[i]) - mu) * rs * A(w[i]));
      } else if (b) {
        for (int64_t i = 0; i < cols; ++i)
          yr[i] = T((A(xr[i]) - mu) * rs + A(b[i]));
      } else {
        for (int64_t i = 0; i < cols; ++i) yr[i] = T((A(xr[i]) - mu) * rs);
      }
    }
  }

  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const Ctx c{cptr<T>(t[kLnX]),     cptr<T>(t[kLnWeight]),
                cptr<T>(t[kLnBias]),  mptr<T>(t[kLnOut]),
                mptr<T>(t[kLnMean]),  mptr<T>(t[kLnRstd]),
                a.i1,                 A(a.f0)};
    parallel_for(0, a.i0, row_grain(c.cols),
                 [&](int64_t rb, int64_t re) { rows(c, rb, re); });
  }
};

// xhat = (x - mean) * rstd, g = dy * weight:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
//      = rstd * g + c1 * (x - mean) + c0 (per-row constants)
//   dweight = sum_rows dy * xhat, dbias = sum_rows dy
template <class T>
struct LayerNormBackwardKernel {
  using A = opmath_t<T>;
  struct Ctx {
    const T *dy, *x, *mean, *rstd, *w;
    T *dx, *dw, *db;
    int64_t cols;
  };

  // Rows [rb, re), adding to this chunk's column sums pw / pb (each
  // nullptr when that gradient is not wanted).
  FASTT_VEC_CLONES FASTT_NOINLINE static void rows(const Ctx& c, int64_t rb,
                                                   int64_t re, A* pw, A* pb) {
    const int64_t cols = c.cols;
    if constexpr (kIsHalfFloat<T>) {  // through float32 (Staging)
      const Staging s(4, cols);
      float mu, rs;
      typename LayerNormBackwardKernel<float>::Ctx f{
          s[0], s[1], &mu, &rs, s.in(2, c.w, cols), c.dx ? s[3] : nullptr,
          nullptr, nullptr, cols};
      for (int64_t r = rb; r < re; ++r) {
        to_float_block(c.dy + r * cols, s[0], cols);
        to_float_block(c.x + r * cols, s[1], cols);
        mu = float(c.mean[r]);
        rs = float(c.rstd[r]);
        LayerNormBackwardKernel<float>::rows(f, 0, 1, pw, pb);
        if (c.dx) from_float_block(s[3], c.dx + r * cols, cols);
      }
      return;
    }
    const A inv = cols ? A(1) / A(cols) : A(0);
    for (int64_t r = rb; r < re; ++r) {
      const T* dyr = c.dy + r * cols;
      const T* xr = c.x + r * cols;
      const A mu = A(c.mean[r]), rs = A(c.rstd[r]);
      if (pw)
        for (int64_t i = 0; i < cols; ++i)
          pw[i] += A(dyr[i]) * ((A(xr[i]) - mu) * rs);
      if (pb)
        for (int64_t i = 0; i < cols; ++i) pb[i] += A(dyr[i]);
      if (!c.dx) continue;
      T* dxr = c.dx + r * cols;
      // sg = sum g, sgx = sum g * (x - mean): centred, so inputs far
      // from zero (1e4 + noise) lose nothing to cancellation.
      A sg = 0, sgx = 0;
      if (c.w) {
        const T* w = c.w;
#pragma omp simd reduction(+ : sg, sgx)
        for (int64_t i = 0; i < cols; ++i) {
          const A g = A(dyr[i]) * A(w[i]);
          sg += g;
          sgx += g * (A(xr[i]) - mu);
        }
      } else {
#pragma omp simd reduction(+ : sg, sgx)
        for (int64_t i = 0; i < cols; ++i) {
          const A g = A(dyr[i]);
          sg += g;
          sgx += g * (A(xr[i]) - mu);
        }
      }
      const A c1 = -rs * rs * rs * sgx * inv;  // -rstd^2 * mean(g * xhat)
      const A c0 = -rs * sg * inv;
      if (c.w) {
        const T* w = c.w;
        for (int64_t i = 0; i < cols; ++i)
          dxr[i] = T(rs * A(dyr[i]) * A(w[i]) + c1 * (A(xr[i]) - mu) + c0);
      } else {
        for (int64_t i = 0; i < cols; ++i)
          dxr[i] = T(rs * A(dyr[i]) + c1 * (A(xr[i]) - mu) + c0);
      }
    }
  }

  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const Ctx c{cptr<T>(t[kLnbGrad]),    cptr<T>(t[kLnbX]),
                cptr<T>(t[kLnbMean]),    cptr<T>(t[kLnbRstd]),
                cptr<T>(t[kLnbWeight]),  mptr<T>(t[kLnbDx]),
                mptr<T>(t[kLnbDweight]), mptr<T>(t[kLnbDbias]),
                a.i1};
    const int64_t rows_n = a.i0, cols = c.cols;
    const int64_t chunks = row_chunks(rows_n, cols);
    // Per chunk: cols partial sums for dweight, then cols for dbias.
    Scratch<A> scratch;
    A* part = (c.dw || c.db) ? scratch.get(chunks * 2 * cols) : nullptr;
    for_row_chunks(rows_n, chunks, [&](int64_t k, int64_t rb, int64_t re) {
      A* pw = part ? part + k * 2 * cols : nullptr;
      rows(c, rb, re, c.dw ? pw : nullptr, c.db ? pw + cols : nullptr);
    });
    if (c.dw) sum_chunks(part, chunks, 2 * cols, cols, c.dw);
    if (c.db) sum_chunks(part + cols, chunks, 2 * cols, cols, c.db);
  }
};

// out = x * rstd * weight with rstd = 1 / sqrt(mean(x^2) + eps), kept in
// opmath for the backward.
template <class T>
struct RmsNormKernel {
  using A = opmath_t<T>;
  struct Ctx {
    const T *x, *w;
    T* y;
    A* rstd;
    int64_t cols;
    A eps;
  };

  FASTT_VEC_CLONES FASTT_NOINLINE static void rows(const Ctx& c, int64_t rb,
                                                   int64_t re) {
    const int64_t cols = c.cols;
    if constexpr (kIsHalfFloat<T>) {  // through float32 (Staging)
      const Staging s(3, cols);
      typename RmsNormKernel<float>::Ctx f{s[0], s.in(1, c.w, cols), s[2],
                                           nullptr, cols, c.eps};
      for (int64_t r = rb; r < re; ++r) {
        to_float_block(c.x + r * cols, s[0], cols);
        f.rstd = c.rstd + r;
        RmsNormKernel<float>::rows(f, 0, 1);
        from_float_block(s[2], c.y + r * cols, cols);
      }
      return;
    }
    const A inv = A(1) / A(std::max<int64_t>(cols, 1));
    for (int64_t r = rb; r < re; ++r) {
      const T* xr = c.x + r * cols;
      T* yr = c.y + r * cols;
      const A ms = lane_sum<A>(cols, [&](int64_t i) {
                     const A v = A(xr[i]);
                     return v * v;
                   }) *
                   inv;
      const A rs = A(1) / std::sqrt(ms + c.eps);
      c.rstd[r] = rs;
      if (c.w) {
        const T* w = c.w;
        for (int64_t i = 0; i < cols; ++i) yr[i] = T(A(xr[i]) * rs * A(w[i]));
      } else {
        for (int64_t i = 0; i < cols; ++i) yr[i] = T(A(xr[i]) * rs);
      }
    }
  }

  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const Ctx c{cptr<T>(t[kRmsX]), cptr<T>(t[kRmsWeight]),
                mptr<T>(t[kRmsOut]), mptr<A>(t[kRmsRstd]), a.i1, A(a.f0)};
    parallel_for(0, a.i0, row_grain(c.cols),
                 [&](int64_t rb, int64_t re) { rows(c, rb, re); });
  }
};

// g = dy * weight: dx = rstd * g - x * rstd^3 * mean(g * x),
// dweight = sum_rows dy * x * rstd.
template <class T>
struct RmsNormBackwardKernel {
  using A = opmath_t<T>;
  struct Ctx {
    const T *dy, *x;
    const A* rstd;
    const T* w;
    T *dx, *dw;
    int64_t cols;
  };

  FASTT_VEC_CLONES FASTT_NOINLINE static void rows(const Ctx& c, int64_t rb,
                                                   int64_t re, A* pw) {
    const int64_t cols = c.cols;
    if constexpr (kIsHalfFloat<T>) {  // through float32 (Staging)
      const Staging s(4, cols);
      typename RmsNormBackwardKernel<float>::Ctx f{
          s[0], s[1], nullptr, s.in(2, c.w, cols), c.dx ? s[3] : nullptr,
          nullptr, cols};
      for (int64_t r = rb; r < re; ++r) {
        to_float_block(c.dy + r * cols, s[0], cols);
        to_float_block(c.x + r * cols, s[1], cols);
        f.rstd = c.rstd + r;
        RmsNormBackwardKernel<float>::rows(f, 0, 1, pw);
        if (c.dx) from_float_block(s[3], c.dx + r * cols, cols);
      }
      return;
    }
    const A inv = cols ? A(1) / A(cols) : A(0);
    for (int64_t r = rb; r < re; ++r) {
      const T* dyr = c.dy + r * cols;
      const T* xr = c.x + r * cols;
      const A rs = c.rstd[r];
      if (pw)
        for (int64_t i = 0; i < cols; ++i) pw[i] += A(dyr[i]) * A(xr[i]) * rs;
      if (!c.dx) continue;
      T* dxr = c.dx + r * cols;
      const T* w = c.w;
      const A sgx =
          w ? lane_sum<A>(cols,
                          [&](int64_t i) {
                            return A(dyr[i]) * A(w[i]) * A(xr[i]);
                          })
            : lane_sum<A>(cols,
                          [&](int64_t i) { return A(dyr[i]) * A(xr[i]); });
      const A k = rs * rs * rs * sgx * inv;
      if (w) {
        for (int64_t i = 0; i < cols; ++i)
          dxr[i] = T(rs * A(dyr[i]) * A(w[i]) - A(xr[i]) * k);
      } else {
        for (int64_t i = 0; i < cols; ++i)
          dxr[i] = T(rs * A(dyr[i]) - A(xr[i]) * k);
      }
    }
  }

  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const Ctx c{cptr<T>(t[kRmsbGrad]),   cptr<T>(t[kRmsbX]),
                cptr<A>(t[kRmsbRstd]),   cptr<T>(t[kRmsbWeight]),
                mptr<T>(t[kRmsbDx]),     mptr<T>(t[kRmsbDweight]),
                a.i1};
    const int64_t rows_n = a.i0, cols = c.cols;
    const int64_t chunks = row_chunks(rows_n, cols);
    Scratch<A> scratch;
    A* part = c.dw ? scratch.get(chunks * cols) : nullptr;
    for_row_chunks(rows_n, chunks, [&](int64_t k, int64_t rb, int64_t re) {
      rows(c, rb, re, part ? part + k * cols : nullptr);
    });
    if (c.dw) sum_chunks(part, chunks, cols, cols, c.dw);
  }
};

}  // namespace

void register_norm_kernels() {
#define FASTT_KERNELS_norm
#include "kernels/kernels.def"
}

}  // namespace fastt
