// Shared by the reduce_*.cpp kernel files: the strided reduction driver
// (geometry, dense/strided/column paths) and the reduction functors. Each
// kernel file instantiates only the (dtype, functor, writer) triples it
// registers; add a functor here, its kernel in the file of its group.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/cpu/loop.h"
#include "kernels/cpu/reduce_spans.h"
#include "kernels/functors.h"
#include "kernels/reduce_geom.h"

namespace fastt {
namespace reduce_impl {
using namespace cpu;

// ------------------------------------------------------------ geometry --
// kernels/reduce_geom.h, shared with the CUDA driver.
using reduce_geom::ReduceGeom;
using reduce_geom::build_geom;
using reduce_geom::coalesce;

// ------------------------------------------------------------- driver --
template <class T>
using M = opmath_t<T>;

// Functors whose dense float runs fold in reduce_spans.h's wide lanes
// rather than the generic 8-lane loop in reduce_run (per-row float32 sums
// ran 1.6-3x torch's, per-row max/min 10-14x: the 8 lanes of a
// NaN-propagating select stayed scalar): run(x, n, idx): one dense run,
// idx the reduced index of x[0] (ArgR's results carry it); rows(): a
// batch of dense rows of up to kMaxRow elements; cols() (where kCols): a
// block of dense columns.
template <class R, class T>
struct DenseRun {
  static constexpr bool kHas = false, kCols = false;
};
// float32, and float16/bfloat16 (sum_span, sum_rows and sum_cols convert
// their steps to float32).
template <class T>
struct DenseRun<reduce_ops::SumR<double>, T> {
  static constexpr bool kHas =
      std::is_same<T, float>::value || kIsHalfFloat<T>;
  static constexpr bool kCols = kHas;
  static constexpr int64_t kMin = 128;  // shorter: the 8 lanes below win
  static double run(const T* x, int64_t n, int64_t) {
    return sum_span<Identity, T>(x, n);
  }
  static void rows(const T* const* p, int64_t count, int64_t n,
                   double* out) {
    sum_rows<T>(p, count, n, out);
  }
  static void cols(const T* x, int64_t rs, int64_t rows, int64_t n,
                   double* acc) {
    sum_cols<Identity, T>(x, rs, rows, n, acc);
  }
};
// complex64/complex128 sums (accumulated in complex128): pair_sum.
template <class T>
struct DenseRun<reduce_ops::SumR<Complex128>, T> {
  static constexpr bool kHas = kIsComplex<T>, kCols = false;
  static constexpr int64_t kMin = 8;
  static Complex128 run(const T* x, int64_t n, int64_t) {
    Complex128 s;
    pair_sum(reinterpret_cast<const RealOf<T>*>(x), n, &s.re, &s.im);
    return s;
  }
  static void rows(const T* const* p, int64_t count, int64_t n,
                   Complex128* out) {
    using R = RealOf<T>;
    for (int64_t i = 0; i < count; ++i) {
      const R* x = reinterpret_cast<const R*>(p[i]);
      if (n <= kShortPairs) short_pair_sum(x, n, &out[i].re, &out[i].im);
      else pair_sum(x, n, &out[i].re, &out[i].im);
    }
  }
};
template <class V, bool IsMax>
struct DenseRun<reduce_ops::ExtremeR<V, IsMax>, V> {
  static constexpr bool kHas = std::is_floating_point<V>::value;
  static constexpr bool kCols = false;
  static constexpr int64_t kMin = 32;
  static V run(const V* x, int64_t n, int64_t) {
    return extreme_span<V, IsMax>(x, n, reduce_ops::ExtremeR<V, IsMax>{}.init());
  }
  static void rows(const V* const* p, int64_t count, int64_t n, V* out) {
    extreme_rows<V, IsMax>(p, count, n, reduce_ops::ExtremeR<V, IsMax>{}.init(),
                           out);
  }
};

template <class V, bool IsMax>
struct DenseRun<reduce_ops::ArgR<V, IsMax>, V> {
  using S = reduce_ops::ValIdx<V>;
  static constexpr bool kHas = std::is_floating_point<V>::value;
  static constexpr bool kCols = false;
  static constexpr int64_t kMin = 16;
  static constexpr V kInit = IsMax ? -std::numeric_limits<V>::infinity()
                                   : std::numeric_limits<V>::infinity();
  static S run(const V* x, int64_t n, int64_t idx) {  // idx: x[0]'s index
    S s;
    arg_row<V, IsMax>(x, n, kInit, &s.v, &s.i);
    s.i += idx;
    return s;
  }
  static void rows(const V* const* p, int64_t count, int64_t n, S* out) {
    V v[kRowBatch];  // count <= kRowBatch (reduce below)
    int64_t i[kRowBatch];
    arg_rows<V, IsMax>(p, count, n, kInit, v, i);
    for (int64_t k = 0; k < count; ++k) out[k] = {v[k], i[k]};
  }
};
template <>
struct DenseRun<reduce_ops::LogSumExpR<float>, float> {
  using S = reduce_ops::LseState<float>;
  static constexpr bool kHas = true, kCols = false;
  static constexpr int64_t kMin = 16;
  static S run(const float* x, int64_t n, int64_t) {
    S s;
    lse_rows(&x, 1, n, &s.m, &s.s);
    return s;
  }
  static void rows(const float* const* p, int64_t count, int64_t n, S* out) {
    float m[kRowBatch], s[kRowBatch];  // count <= kRowBatch (reduce below)
    lse_rows(p, count, n, m, s);
    for (int64_t i = 0; i < count; ++i) out[i] = {m[i], s[i]};
  }
};

// Folds n elements at stride `stride` into s; idx is the reduced index of
// the first. Order-insensitive ops (kLanes) on floating inputs use
// independent accumulators on dense runs so the loop vectorizes (integer
// loops vectorize without help; GCC 12 -O3 also miscompiled the lanes form
// for int8 inputs).
template <class T, class R>
inline typename R::state reduce_run(const R& r, typename R::state s,
                                    const T* x, int64_t stride, int64_t n,
                                    int64_t idx) {
  // (sums convert float16/bfloat16 runs themselves, a step at a time:
  // through the 256-element blocks below, each block's lanes were folded,
  // and a float16 sum took 1.3x torch's time)
  if constexpr (DenseRun<R, T>::kHas) {
    if (stride == 1 && n >= DenseRun<R, T>::kMin)
      return r.combine(s, DenseRun<R, T>::run(x, n, idx));
  }
  // float16/bfloat16 runs: converted a block at a time (F16C for float16)
  // and folded by the float32 loop below; per element, Half's portable
  // conversion kept the loop scalar (a float16 sum ran 21x torch's).
  if constexpr (kIsHalfFloat<T>) {
    if (stride == 1 && n >= 16) {
      float buf[kHalfBlock];
      for (int64_t i = 0; i < n; i += kHalfBlock) {
        const int64_t m = std::min(kHalfBlock, n - i);
        to_float_block(x + i, buf, m);
        s = reduce_run<float>(r, s, buf, 1, m, idx + i);
      }
      return s;
    }
  }
  if constexpr (R::kLanes && !std::is_integral<T>::value) {
    constexpr int L = 8;
    if (stride == 1 && n >= 2 * L) {
      typename R::state acc[L];
      for (int j = 0; j < L; ++j) acc[j] = r.init();
      int64_t i = 0;
      for (; i + L <= n; i += L)
        for (int j = 0; j < L; ++j)
          acc[j] = r.step(acc[j], static_cast<M<T>>(x[i + j]), 0);
      for (; i < n; ++i) s = r.step(s, static_cast<M<T>>(x[i]), 0);
      for (int j = 0; j < L; ++j) s = r.combine(s, acc[j]);
      return s;
    }
  }
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i)
      s = r.step(s, static_cast<M<T>>(x[i]), idx + i);
  } else {
    for (int64_t i = 0; i < n; ++i)
      s = r.step(s, static_cast<M<T>>(x[i * stride]), idx + i);
  }
  return s;
}

// Folds the reduced linear range [b, e) of the block at `base` into s.
template <class T, class R>
typename R::state reduce_span(const R& r, typename R::state s, const T* base,
                              const ReduceGeom& g, int64_t b, int64_t e) {
  if (b >= e) return s;
  const int last = g.nr - 1;
  int64_t idx[kMaxDims];
  int64_t rem = b;
  const T* p = base;
  for (int d = last; d >= 0; --d) {
    idx[d] = rem % g.rsize[d];
    rem /= g.rsize[d];
    p += idx[d] * g.rstride[d];
  }
  const int64_t inner = g.rsize[last], istride = g.rstride[last];
  int64_t pos = b;
  while (true) {
    int64_t n = std::min(inner - idx[last], e - pos);
    s = reduce_run(r, s, p, istride, n, pos);
    pos += n;
    if (pos >= e) break;
    p += n * istride;
    idx[last] += n;
    for (int d = last; d > 0 && idx[d] == g.rsize[d]; --d) {
      p += g.rstride[d - 1] - g.rsize[d] * g.rstride[d];
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
  return s;
}

// Calls f(offset, reduced_index) for every reduced element, in order.
template <class F>
inline void for_each_reduced(const ReduceGeom& g, F&& f) {
  if (g.n_red == 0) return;
  const int last = g.nr - 1;
  int64_t idx[kMaxDims] = {};
  int64_t off = 0, pos = 0;
  const int64_t inner = g.rsize[last], istride = g.rstride[last];
  while (true) {
    for (int64_t i = 0; i < inner; ++i) f(off + i * istride, pos + i);
    pos += inner;
    if (pos >= g.n_red) return;
    idx[last] = inner;
    off += inner * istride;
    for (int d = last; d > 0 && idx[d] == g.rsize[d]; --d) {
      off += g.rstride[d - 1] - g.rsize[d] * g.rstride[d];
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}


// One result from a reduced range [0, n): fold(b, e) folds a sub-range.
// Above the grain the range is split across the threads and the parts are
// combined in order, so the result does not depend on timing. The driver
// below and the dense whole-tensor kernels (sum, max/min) share it.
template <class S, class Fold, class Combine>
S fold_split(int64_t n, Fold&& fold, Combine&& combine) {
  const int64_t chunks = std::min<int64_t>(get_num_threads(),
                                           (n + kGrainSize - 1) / kGrainSize);
  if (chunks <= 1 || in_parallel_region()) return fold(0, n);
  const int64_t len = (n + chunks - 1) / chunks;
  // One cache line per part: not std::vector<S>, which for S = bool (all,
  // any) packs the parts into bits of one word that the threads would
  // write at once.
  struct alignas(64) Part {
    S v;
  };
  std::vector<Part> part(size_t(chunks), Part{S{}});
  parallel_for(0, chunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c)
      part[size_t(c)].v = fold(c * len, std::min(n, (c + 1) * len));
  });
  S s = part[0].v;
  for (int64_t c = 1; c < chunks; ++c) s = combine(s, part[size_t(c)].v);
  return s;
}

// The start of each output's reduced span, output after output (the kept
// dims walked as an odometer).
template <class T>
struct SpanCursor {
  const ReduceGeom& g;
  const T* p;
  int64_t kidx[kMaxDims];
  SpanCursor(const ReduceGeom& geom, const T* x, int64_t o) : g(geom), p(x) {
    for (int d = g.nk - 1; d >= 0; --d) {
      kidx[d] = o % g.ksize[d];
      o /= g.ksize[d];
      p += kidx[d] * g.kstride[d];
    }
  }
  void next() {
    const int last = g.nk - 1;
    p += g.kstride[last];
    ++kidx[last];
    for (int d = last; d > 0 && kidx[d] == g.ksize[d]; --d) {
      p += g.kstride[d - 1] - g.ksize[d] * g.kstride[d];
      kidx[d] = 0;
      ++kidx[d - 1];
    }
  }
};

// Runs reduction `r` over input `in` (dims empty = all) and calls
// write(output_index, state) once per output element.
template <class T, class R, class W>
void reduce(const Tensor& in, IntList dims, const R& r, W&& write,
            bool ordered = !R::kLanes) {
  using S = typename R::state;
  const T* x = static_cast<const T*>(in.data_ptr());
  ReduceGeom g;
  build_geom(in, dims, ordered, g);
  if (g.n_out == 0) return;

  if (g.n_out == 1) {  // one output: split the reduced range across threads
    write(0, fold_split<S>(
                 g.n_red,
                 [&](int64_t b, int64_t e) {
                   return reduce_span(r, r.init(), x, g, b, e);
                 },
                 [&](S a, S b) { return r.combine(a, b); }));
    return;
  }

  const int nk = g.nk;
  const int64_t grain =
      std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.n_red, 1));
  int64_t min_rstride = g.rstride[0];
  for (int d = 1; d < g.nr; ++d)
    min_rstride = std::min(min_rstride, g.rstride[d]);
  const bool columns = g.n_red > 1 && g.kstride[nk - 1] < min_rstride;

  if (!columns) {  // each output reduces its own (mostly dense) span
    bool row_batches = false;
    if constexpr (DenseRun<R, T>::kHas)
      row_batches = g.nr == 1 && g.rstride[0] == 1 && g.n_red <= kMaxRow;
    parallel_for(0, g.n_out, grain, [&](int64_t ob, int64_t oe) {
      SpanCursor<T> c(g, x, ob);
      if constexpr (DenseRun<R, T>::kHas) {
        if (row_batches) {  // batches of kRowBatch dense rows
          using V = decltype(DenseRun<R, T>::run(x, 0, 0));
          const T* rows[kRowBatch];
          V res[kRowBatch];
          for (int64_t o = ob; o < oe;) {
            const int64_t cnt = std::min(kRowBatch, oe - o);
            for (int64_t i = 0; i < cnt; ++i) {
              rows[i] = c.p;
              if (o + i + 1 < oe) c.next();
            }
            DenseRun<R, T>::rows(rows, cnt, g.n_red, res);
            for (int64_t i = 0; i < cnt; ++i, ++o)
              write(o, r.combine(r.init(), res[i]));
          }
          return;
        }
      }
      for (int64_t o = ob; o < oe; ++o) {
        write(o, reduce_span(r, r.init(), c.p, g, 0, g.n_red));
        if (o + 1 < oe) c.next();
      }
    });
    return;
  }

  // The innermost kept dim is denser than any reduced dim: keep a block of
  // accumulators along it and sweep the reduced elements once per block.
  constexpr int64_t B = kColBlock;
  const int64_t K = g.ksize[nk - 1], ks = g.kstride[nk - 1];
  // one reduced dim over dense columns: rows of a matrix, summed a block
  // of columns at a time (DenseRun::cols)
  const bool dense_cols = DenseRun<R, T>::kCols && ks == 1 && g.nr == 1;
  // A thread's share at least a block wide (or the whole kept row): split
  // finer, every thread read every reduced row for a few lanes (a sum over
  // dim 0 of [65536, 4] with 2 threads took 7x the time of one).
  const int64_t col_grain = std::max(grain, std::min(K, B));
  parallel_for(0, g.n_out, col_grain, [&](int64_t ob, int64_t oe) {
    S acc[B];
    int64_t pos = ob;
    while (pos < oe) {
      int64_t j = pos % K, rem = pos / K;
      const T* base = x + j * ks;
      for (int d = nk - 2; d >= 0; --d) {
        base += (rem % g.ksize[d]) * g.kstride[d];
        rem /= g.ksize[d];
      }
      const int64_t n = std::min({B, K - j, oe - pos});
      for (int64_t i = 0; i < n; ++i) acc[i] = r.init();
      if (dense_cols) {
        if constexpr (DenseRun<R, T>::kCols)
          DenseRun<R, T>::cols(base, g.rstride[0], g.rsize[0], n, acc);
      } else if (ks == 1) {
        for_each_reduced(g, [&](int64_t off, int64_t ridx) {
          const T* q = base + off;
          if constexpr (kIsHalfFloat<T>) {
            // converted as a block (F16C for float16): element by element,
            // Half's portable conversion made a float16 sum over dim 0 of
            // 4096x64 26x torch's time (bfloat16 2.5x)
            float v[B];
            to_float_block(q, v, n);
            for (int64_t i = 0; i < n; ++i)
              acc[i] = r.step(acc[i], v[i], ridx);
          } else {
            for (int64_t i = 0; i < n; ++i)
              acc[i] = r.step(acc[i], static_cast<M<T>>(q[i]), ridx);
          }
        });
      } else {
        for_each_reduced(g, [&](int64_t off, int64_t ridx) {
          const T* q = base + off;
          for (int64_t i = 0; i < n; ++i)
            acc[i] = r.step(acc[i], static_cast<M<T>>(q[i * ks]), ridx);
        });
      }
      for (int64_t i = 0; i < n; ++i) write(pos + i, acc[i]);
      pos += n;
    }
  });
}

// ------------------------------------------------------------ functors --
// Sum, prod, amax/amin, max/min/argmax/argmin, logsumexp and the inf
// norms: kernels/reduce_geom.h, shared with CUDA. The ones below differ from
// their CUDA twins in accumulator, state or math.
using namespace reduce_ops;

// sum/prod/cumsum/cumprod: integers and bool give int64; floats keep their
// dtype and accumulate in double (as torch's CPU acc_type does), complex
// numbers in complex128.
template <class T>
using sum_out_t = std::conditional_t<std::is_integral<T>::value, int64_t, T>;
template <class T>
using sum_acc_t = std::conditional_t<
    std::is_integral<T>::value, int64_t,
    std::conditional_t<kIsComplex<T>, Complex128, double>>;

template <bool IsAll>
struct LogicalR {
  using state = bool;
  static constexpr bool kLanes = true;
  bool init() const { return IsAll; }
  template <class X>
  bool step(bool s, X x, int64_t) const {
    return IsAll ? (s && x != X(0)) : (s || x != X(0));
  }
  bool combine(bool a, bool b) const { return IsAll ? a && b : a || b; }
};

// var/std: Welford's update, merged with Chan's formula.
struct Welford {
  double n, mean, m2;
};
struct WelfordR {
  using state = Welford;
  static constexpr bool kLanes = true;
  Welford init() const { return {0.0, 0.0, 0.0}; }
  template <class X>
  Welford step(Welford s, X x, int64_t) const {
    double v = double(x);
    s.n += 1.0;
    double delta = v - s.mean;
    s.mean += delta / s.n;
    s.m2 += delta * (v - s.mean);
    return s;
  }
  Welford combine(Welford a, Welford b) const {
    if (a.n == 0.0) return b;
    if (b.n == 0.0) return a;
    double n = a.n + b.n;
    double delta = b.mean - a.mean;
    return {n, a.mean + delta * (b.n / n),
            a.m2 + b.m2 + delta * delta * (a.n * b.n / n)};
  }
};

// Vector norms: sums of |x|^p in double.
template <int Kind>  // 0: count nonzero, 1: |x|, 2: x^2, 3: |x|^p
struct NormSumR {
  using state = double;
  static constexpr bool kLanes = true;
  double p;
  double init() const { return 0.0; }
  template <class X>
  double step(double s, X x, int64_t) const {
    double v = double(x);
    if constexpr (Kind == 0) return s + (v != 0.0 ? 1.0 : 0.0);
    else if constexpr (Kind == 1) return s + std::fabs(v);
    // the square in the input's math type, as torch (and the dense float32
    // path): a float32 norm of 1e20 is inf, of 1e-25 zero
    else if constexpr (Kind == 2) return s + double(x * x);
    else return s + std::pow(std::fabs(v), p);
  }
  double combine(double a, double b) const { return a + b; }
  double finish(double s) const {
    if constexpr (Kind == 0 || Kind == 1) return s;
    else if constexpr (Kind == 2) return std::sqrt(s);
    else return std::pow(s, 1.0 / p);
  }
};

template <class T>
T* out_ptr(const Tensor* t) {
  return static_cast<T*>(t->data_ptr());
}

// Registration of each kernel file; register_reduce_kernels() calls them.
void register_reduce_extreme_kernels();
void register_reduce_stats_kernels();

}  // namespace reduce_impl
}  // namespace fastt
