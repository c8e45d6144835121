// Fused losses with class-index targets: cross-entropy forward/backward
// (log-softmax, NLL and label smoothing in one sweep over the logits), NLL
// forward/backward, and the dense embedding backward. Inputs are dense,
// seen as [N, C, inner] with positions p = n * inner + j; the op layer has
// checked every target. Argument layouts: nn_args in csrc/ops/nn.h.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "csrc/ops/nn.h"
#include "kernels/cpu/loop.h"
#include "kernels/nn_geom.h"
#include "kernels/cpu/vec_exp.h"

namespace fastt {
namespace {
using namespace cpu;
using namespace nn_args;
using namespace nn_geom;

constexpr int64_t B = 64;  // positions per block when classes are strided

// Splits `units` of work costing `cost` elements each into at most one
// chunk per thread, runs body(begin, end, acc) on each with its own pair of
// double accumulators and returns their sums (in chunk order, so a given
// thread count always gives the same result).
struct Sums {
  double loss = 0, weight = 0;
};
constexpr int64_t kMaxChunks = 64;
template <class F>
Sums chunked_sum(int64_t units, int64_t cost, F body) {
  const int64_t work = units * std::max<int64_t>(cost, 1);
  int64_t chunks = std::min<int64_t>(
      {int64_t(get_num_threads()), (work + kGrainSize - 1) / kGrainSize,
       units, kMaxChunks});
  chunks = std::max<int64_t>(chunks, 1);
  Sums part[kMaxChunks];
  parallel_for(0, chunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c)
      body(units * c / chunks, units * (c + 1) / chunks, part[c]);
  });
  Sums total;
  for (int64_t c = 0; c < chunks; ++c) {
    total.loss += part[c].loss;
    total.weight += part[c].weight;
  }
  return total;
}

// ---- cross-entropy ----
// With m = max_c x_c, s = log sum_c exp(x_c - m) (so lse = m + s), target
// weight wt and W = sum_c w_c (C unweighted), a position's loss is
//   (1 - ls) * wt * (s - (x_t - m)) + ls / C * (W * s - sum_c w_c (x_c - m))
// which is torch's (1 - ls) * nll + ls / C * smooth; every term is
// formed from x - m, so logits of 1e4 lose nothing. Mean reduction divides
// by the summed target weights (both terms share that denominator).
template <class T>
struct CrossEntropyKernel {
  using A = opmath_t<T>;

  struct Ctx {
    const T* w;
    A ls, wsum;
    bool smooth;
    // The loss of one position from its statistics (see above).
    A loss(A m, A s, A sx, A xt, A wt, int64_t classes) const {
      A l = (A(1) - ls) * wt * (s - (xt - m));
      if (smooth) l += ls / A(classes) * (wsum * s - sx);
      return l;
    }
  };

  // One dense row: returns s = log sum exp(x - m) and m; sx (smoothing sum)
  // only when asked.
  template <bool Smooth, bool Weighted>
  static void row_stats(const T* x, const T* w, int64_t n, A* m_out, A* s_out,
                        A* sx_out) {
    // omp simd: lets the float reductions vectorize without -ffast-math.
    A m = -INFINITY;
    int nan = 0;
#pragma omp simd reduction(max : m) reduction(| : nan)
    for (int64_t i = 0; i < n; ++i) {
      const A v = A(x[i]);
      m = v > m ? v : m;
      nan |= v != v;
    }
    if (nan) m = A(NAN);
    A s = 0, sxs = 0;
#pragma omp simd reduction(+ : s, sxs)
    for (int64_t i = 0; i < n; ++i) {
      const A d = A(x[i]) - m;
      s += vec_exp_bounded(d);
      if constexpr (Smooth) sxs += Weighted ? A(w[i]) * d : d;
    }
    *m_out = m;
    *s_out = std::log(s);
    *sx_out = Smooth ? sxs : A(0);
  }

  template <bool Smooth, bool Weighted>
  FASTT_VEC_CLONES static void rows(const LossShape& sh, const Ctx& ctx,
                                    const T* x, const int64_t* tgt, T* loss,
                                    double* lse, Sums& acc, int64_t pb,
                                    int64_t pe) {
    const int64_t C = sh.classes;
    for (int64_t p = pb; p < pe; ++p) {
      const T* xr = x + p * C;
      A m, s, sx;
      row_stats<Smooth, Weighted>(xr, ctx.w, C, &m, &s, &sx);
      lse[p] = double(m) + double(s);
      const int64_t t = tgt[p];
      A l = 0;
      if (t != sh.ignore) {
        const A wt = Weighted ? A(ctx.w[t]) : A(1);
        l = ctx.loss(m, s, sx, A(xr[t]), wt, C);
        acc.weight += double(wt);
        acc.loss += double(l);
      }
      if (sh.reduction == kReductionNone) loss[p] = T(l);
    }
  }

  // Units are (n, block of up to B positions) when classes are strided by
  // inner: per-position statistics live in small arrays, classes stream.
  FASTT_VEC_CLONES static void blocks(const LossShape& sh, const Ctx& ctx,
                                      const T* x, const int64_t* tgt,
                                      T* loss, double* lse, Sums& acc,
                                      int64_t ub, int64_t ue) {
    const int64_t C = sh.classes, inner = sh.inner;
    const int64_t nblocks = (inner + B - 1) / B;
    A mx[B], se[B], sx[B];
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t n = u / nblocks, j0 = (u % nblocks) * B;
      const int64_t w = std::min(B, inner - j0);
      const T* base = x + n * C * inner + j0;
      for (int64_t j = 0; j < w; ++j) {
        mx[j] = -INFINITY;
        se[j] = sx[j] = A(0);
      }
      for (int64_t c = 0; c < C; ++c) {
        const T* xc = base + c * inner;
        for (int64_t j = 0; j < w; ++j) mx[j] = pick_nan<true>(mx[j], A(xc[j]));
      }
      for (int64_t c = 0; c < C; ++c) {
        const T* xc = base + c * inner;
        const A wc = ctx.w ? A(ctx.w[c]) : A(1);
        for (int64_t j = 0; j < w; ++j) {
          const A d = A(xc[j]) - mx[j];
          se[j] += vec_exp_bounded(d);
          sx[j] += wc * d;
        }
      }
      for (int64_t j = 0; j < w; ++j) {
        const int64_t p = n * inner + j0 + j;
        const A s = std::log(se[j]);
        lse[p] = double(mx[j]) + double(s);
        const int64_t t = tgt[p];
        A l = 0;
        if (t != sh.ignore) {
          const A wt = ctx.w ? A(ctx.w[t]) : A(1);
          l = ctx.loss(mx[j], s, sx[j], A(base[t * inner + j]), wt, C);
          acc.weight += double(wt);
          acc.loss += double(l);
        }
        if (sh.reduction == kReductionNone) loss[p] = T(l);
      }
    }
  }

  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const LossShape sh(a);
    const T* x = cptr<T>(t[kLossInput]);
    const int64_t* tgt = cptr<int64_t>(t[kLossTarget]);
    T* loss = mptr<T>(t[kLossOut]);
    double* lse = mptr<double>(t[kLossAux]);
    Ctx ctx;
    ctx.w = cptr<T>(t[kLossWeight]);
    ctx.ls = A(a.f0);
    ctx.smooth = a.f0 > 0;
    ctx.wsum = A(sh.classes);
    if (ctx.w) {
      ctx.wsum = 0;
      for (int64_t c = 0; c < sh.classes; ++c) ctx.wsum += A(ctx.w[c]);
    }
    const int64_t C = sh.classes;
    Sums total;
    if (sh.inner == 1) {
      const int64_t P = sh.n;
      auto go = [&](auto smooth, auto weighted) {
        constexpr bool S = decltype(smooth)::value;
        constexpr bool W = decltype(weighted)::value;
        return chunked_sum(P, C, [&](int64_t b, int64_t e, Sums& acc) {
          rows<S, W>(sh, ctx, x, tgt, loss, lse, acc, b, e);
        });
      };
      using F = std::false_type;
      using Tr = std::true_type;
      if (ctx.smooth)
        total = ctx.w ? go(Tr{}, Tr{}) : go(Tr{}, F{});
      else
        total = ctx.w ? go(F{}, Tr{}) : go(F{}, F{});
    } else {
      const int64_t units = sh.n * ((sh.inner + B - 1) / B);
      total = chunked_sum(units, C * B, [&](int64_t b, int64_t e, Sums& acc) {
        blocks(sh, ctx, x, tgt, loss, lse, acc, b, e);
      });
    }
    if (sh.reduction == kReductionMean)
      loss[0] = T(total.loss / total.weight);
    else if (sh.reduction == kReductionSum)
      loss[0] = T(total.loss);
  }
};

// Sum of the target weights of the non-ignored positions (the mean
// reduction's denominator), recomputed by the backward kernels.
template <class T>
double target_weight_sum(const int64_t* tgt, int64_t P, const T* w,
                         int64_t ignore) {
  double s = 0;
  for (int64_t p = 0; p < P; ++p) {
    const int64_t t = tgt[p];
    if (t != ignore) s += w ? double(opmath_t<T>(w[t])) : 1.0;
  }
  return s;
}

// d loss / d x_c = g * (softmax_c * k1 - k2 * w_c) - [c == t] g (1 - ls) wt
// with k1 = (1 - ls) wt + ls W / C and k2 = ls / C; g is the incoming
// gradient, divided by the target weight sum under mean reduction.
// Ignored positions get zeros.
template <class T>
struct CrossEntropyBackwardKernel {
  using A = opmath_t<T>;

  struct Ctx {
    LossShape sh;
    const T* gin = nullptr;
    const T* x = nullptr;
    const int64_t* tgt = nullptr;
    const T* w = nullptr;
    const double* lse = nullptr;
    T* dx = nullptr;
    A ls = 0, k2 = 0, wsum = 0, gscale = 0;
    bool none = false;
    // A position's factors: k1g = g k1, k2g = g k2, tg = g (1 - ls) wt.
    void factors(int64_t p, A* k1g, A* k2g, A* tg) const {
      const A g = none ? A(gin[p]) : gscale;
      const A wt = w ? A(w[tgt[p]]) : A(1);
      *k1g = g * ((A(1) - ls) * wt + k2 * wsum);
      *k2g = g * k2;
      *tg = g * (A(1) - ls) * wt;
    }
    A weight(int64_t c) const { return w ? A(w[c]) : A(1); }
  };

  // lse (float64) as hi + lo in opmath: x - hi is exact for x near lse, so
  // softmax = exp((x - hi) - lo) keeps full precision for logits of 1e4
  // where a float lse alone would be off by half an ulp of 1e4.
  static void split(double lse, A* hi, A* lo) {
    *hi = A(lse);
    *lo = A(lse - double(*hi));
  }

  // Positions [pb, pe) of dense rows (inner == 1).
  FASTT_VEC_CLONES static void rows(const Ctx& c, int64_t pb, int64_t pe) {
    const int64_t C = c.sh.classes;
    for (int64_t p = pb; p < pe; ++p) {
      const T* xr = c.x + p * C;
      T* dr = c.dx + p * C;
      const int64_t tt = c.tgt[p];
      if (tt == c.sh.ignore) {
        std::memset(static_cast<void*>(dr), 0, size_t(C) * sizeof(T));
        continue;
      }
      A k1g, k2g, tg, hi, lo;
      c.factors(p, &k1g, &k2g, &tg);
      split(c.lse[p], &hi, &lo);
      if (c.w && k2g != A(0)) {
        for (int64_t k = 0; k < C; ++k)
          dr[k] = T(vec_exp_bounded((A(xr[k]) - hi) - lo) * k1g -
                    k2g * A(c.w[k]));
      } else {
        for (int64_t k = 0; k < C; ++k)
          dr[k] = T(vec_exp_bounded((A(xr[k]) - hi) - lo) * k1g - k2g);
      }
      // The target entry in opmath, rounded once.
      dr[tt] = T(vec_exp_bounded((A(xr[tt]) - hi) - lo) * k1g -
                 k2g * c.weight(tt) - tg);
    }
  }

  // Units [ub, ue) of (n, block of up to B positions) when inner > 1.
  FASTT_VEC_CLONES static void blocks(const Ctx& c, int64_t ub, int64_t ue) {
    const int64_t C = c.sh.classes, inner = c.sh.inner;
    const int64_t nblocks = (inner + B - 1) / B;
    A k1g[B], k2g[B], tg[B], hi[B], lo[B];
    bool keep[B];
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t n = u / nblocks, j0 = (u % nblocks) * B;
      const int64_t bw = std::min(B, inner - j0);
      const int64_t off = n * C * inner + j0;
      for (int64_t j = 0; j < bw; ++j) {
        const int64_t p = n * inner + j0 + j;
        keep[j] = c.tgt[p] != c.sh.ignore;
        if (keep[j]) {
          c.factors(p, &k1g[j], &k2g[j], &tg[j]);
        } else {
          k1g[j] = k2g[j] = tg[j] = A(0);
        }
        split(c.lse[p], &hi[j], &lo[j]);
      }
      for (int64_t k = 0; k < C; ++k) {
        const T* xc = c.x + off + k * inner;
        T* dc = c.dx + off + k * inner;
        const A wc = c.weight(k);
        for (int64_t j = 0; j < bw; ++j) {
          const A v = vec_exp_bounded((A(xc[j]) - hi[j]) - lo[j]) * k1g[j] -
                      k2g[j] * wc;
          dc[j] = T(keep[j] ? v : A(0));
        }
      }
      for (int64_t j = 0; j < bw; ++j) {
        if (!keep[j]) continue;
        const int64_t tt = c.tgt[n * inner + j0 + j];
        const int64_t at = off + tt * inner + j;
        c.dx[at] =
            T(vec_exp_bounded((A(c.x[at]) - hi[j]) - lo[j]) * k1g[j] -
              k2g[j] * c.weight(tt) - tg[j]);
      }
    }
  }

  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    Ctx c{LossShape(a)};  // the rest is filled below
    c.gin = cptr<T>(t[kLbGrad]);
    c.x = cptr<T>(t[kLbInput]);
    c.tgt = cptr<int64_t>(t[kLbTarget]);
    c.w = cptr<T>(t[kLbWeight]);
    c.lse = cptr<double>(t[kLbAux]);
    c.dx = mptr<T>(t[kLbOut]);
    const int64_t C = c.sh.classes, inner = c.sh.inner, P = c.sh.n * inner;
    c.ls = A(a.f0);
    c.k2 = c.ls / A(C);
    c.wsum = A(C);
    if (c.w) {
      c.wsum = 0;
      for (int64_t k = 0; k < C; ++k) c.wsum += A(c.w[k]);
    }
    c.none = c.sh.reduction == kReductionNone;
    c.gscale = 0;
    if (!c.none) {
      double g = double(A(c.gin[0]));
      if (c.sh.reduction == kReductionMean)
        g /= target_weight_sum(c.tgt, P, c.w, c.sh.ignore);
      c.gscale = A(g);
    }
    if (inner == 1) {
      const int64_t grain =
          std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1));
      parallel_for(0, P, grain,
                   [&](int64_t pb, int64_t pe) { rows(c, pb, pe); });
      return;
    }
    const int64_t nblocks = (inner + B - 1) / B;
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C * B, 1));
    parallel_for(0, c.sh.n * nblocks, grain,
                 [&](int64_t ub, int64_t ue) { blocks(c, ub, ue); });
  }
};

// ---- NLL (input holds log-probabilities) ----
template <class T>
struct NllLossKernel {
  using A = opmath_t<T>;
  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const LossShape sh(a);
    const T* x = cptr<T>(t[kLossInput]);
    const int64_t* tgt = cptr<int64_t>(t[kLossTarget]);
    const T* w = cptr<T>(t[kLossWeight]);
    T* loss = mptr<T>(t[kLossOut]);
    T* total_weight = mptr<T>(t[kLossAux]);
    const int64_t C = sh.classes, inner = sh.inner;
    const bool none = sh.reduction == kReductionNone;
    const Sums total =
        chunked_sum(sh.n * inner, 1, [&](int64_t b, int64_t e, Sums& acc) {
          for (int64_t p = b; p < e; ++p) {
            const int64_t tt = tgt[p];
            A l = 0;
            if (tt != sh.ignore) {
              const int64_t n = p / inner, j = p - n * inner;
              const A wt = w ? A(w[tt]) : A(1);
              l = -wt * A(x[(n * C + tt) * inner + j]);
              acc.loss += double(l);
              acc.weight += double(wt);
            }
            if (none) loss[p] = T(l);
          }
        });
    if (none) {
      *total_weight = T(0);
      return;
    }
    *total_weight = T(total.weight);
    loss[0] = T(sh.reduction == kReductionMean ? total.loss / total.weight
                                               : total.loss);
  }
};

// d loss / d input[n, t, j] = -wt * g (g / total_weight under mean); every
// other entry is zero.
template <class T>
struct NllLossBackwardKernel {
  using A = opmath_t<T>;
  static void run(KernelArgs& a) {
    const Tensor* t = a.in[0];
    const LossShape sh(a);
    const T* gin = cptr<T>(t[kLbGrad]);
    const int64_t* tgt = cptr<int64_t>(t[kLbTarget]);
    const T* w = cptr<T>(t[kLbWeight]);
    const T* total_weight = cptr<T>(t[kLbAux]);
    T* dx = mptr<T>(t[kLbOut]);
    const int64_t C = sh.classes, inner = sh.inner, P = sh.n * inner;
    std::memset(static_cast<void*>(dx), 0, size_t(P * C) * sizeof(T));
    const bool none = sh.reduction == kReductionNone;
    A g = none ? A(0) : A(gin[0]);
    if (sh.reduction == kReductionMean) g = g / A(*total_weight);
    for (int64_t p = 0; p < P; ++p) {
      const int64_t tt = tgt[p];
      if (tt == sh.ignore) continue;
      const int64_t n = p / inner, j = p - n * inner;
      const A wt = w ? A(w[tt]) : A(1);
      dx[(n * C + tt) * inner + j] = T(-wt * (none ? A(gin[p]) : g));
    }
  }
};

// ---- embedding backward ----
// out [num_weights, D] = sum of the grad rows [P, D] whose index names the
// row; the padding row stays zero. Positions are bucketed by index
// (counting sort), then rows accumulate in opmath in parallel, so results
// are deterministic and 16-bit grads sum in float.
template <class T>
struct EmbeddingBackwardKernel {
  using A = opmath_t<T>;
  static void run(KernelArgs& a) {
    const Tensor& grad = *a.in[0];
    const Tensor& index = *a.in[1];
    const T* g = static_cast<const T*>(grad.data_ptr());
    const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
    T* out = static_cast<T*>(a.out->data_ptr());
    const int64_t V = a.out->size(0), D = a.out->size(1);
    const int64_t P = index.numel(), pad = a.i0;
    // Scratch from the caching allocator: bucket starts, a cursor per
    // bucket, then the positions in bucket order.
    Tensor scratch = Tensor::empty({2 * V + 1 + P}, DType::Int64);
    int64_t* start = static_cast<int64_t*>(scratch.data_ptr());
    int64_t* cursor = start + V + 1;
    int64_t* order = cursor + V;
    std::fill(start, start + V + 1, int64_t(0));
    for (int64_t p = 0; p < P; ++p) ++start[idx[p] + 1];
    for (int64_t v = 0; v < V; ++v) start[v + 1] += start[v];
    std::copy(start, start + V, cursor);
    for (int64_t p = 0; p < P; ++p) order[cursor[idx[p]]++] = p;
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(D, 1));
    parallel_for(0, V, grain, [&](int64_t vb, int64_t ve) {
      for (int64_t v = vb; v < ve; ++v) {
        T* o = out + v * D;
        const int64_t b = start[v], e = start[v + 1];
        if (v == pad || b == e) {
          std::memset(static_cast<void*>(o), 0, size_t(D) * sizeof(T));
          continue;
        }
        if constexpr (std::is_same<A, T>::value) {
          std::memcpy(o, g + order[b] * D, size_t(D) * sizeof(T));
          for (int64_t k = b + 1; k < e; ++k) {
            const T* gr = g + order[k] * D;
            for (int64_t d = 0; d < D; ++d) o[d] += gr[d];
          }
        } else {
          // Columns in stack-sized slices (no allocation in the region).
          constexpr int64_t S = 256;
          A acc[S];
          for (int64_t d0 = 0; d0 < D; d0 += S) {
            const int64_t sw = std::min(S, D - d0);
            for (int64_t d = 0; d < sw; ++d) acc[d] = A(0);
            for (int64_t k = b; k < e; ++k) {
              const T* gr = g + order[k] * D + d0;
              for (int64_t d = 0; d < sw; ++d) acc[d] += A(gr[d]);
            }
            for (int64_t d = 0; d < sw; ++d) o[d0 + d] = T(acc[d]);
          }
        }
      }
    });
  }
};

}  // namespace

void register_loss_kernels() {
#define FASTT_KERNELS_loss
#include "kernels/kernels.def"
}

}  // namespace fastt
