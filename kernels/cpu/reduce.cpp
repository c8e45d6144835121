// Reductions and scans on the CPU, part 1: sum/mean/prod, all/any and
// cumsum/cumprod, plus register_reduce_kernels(), which also registers the
// other reduce_*.cpp files. The driver and functors live in reduce_impl.h;
// to add a reduction: a functor there, a kernel struct in the file of its
// group, one registration line in that file.
#include "kernels/cpu/vec_exp.h"  // first: FASTT_VEC_CLONES, FP options

#include "csrc/mutation.h"
#include "kernels/cpu/reduce_impl.h"
#include "kernels/cpu/reduce_dense.h"

namespace fastt {
namespace reduce_impl {
namespace {

// dtypes with a dense whole-tensor sum (reduce_dense.h).
template <class T>
constexpr bool kDenseSum = std::is_same<T, float>::value || kIsHalfFloat<T>;

template <class T>
struct SumK {
  static void run(KernelArgs& a) {
    using O = sum_out_t<T>;
    O* o = out_ptr<O>(a.out);
    if constexpr (kDenseSum<T>) {
      double s;
      if (dense_sum<Identity, T>(a, &s, FASTT_MUTANT(SumSkipLast))) {
        o[0] = O(s);
        return;
      }
    }
    reduce<T>(*a.in[0], a.dims, SumR<sum_acc_t<T>>{},
              [o](int64_t i, sum_acc_t<T> s) { o[i] = O(s); });
  }
};
template <class T>
struct MeanK {
  static void run(KernelArgs& a) {
    T* o = out_ptr<T>(a.out);
    const int64_t n = a.out->numel();
    const double count = n ? double(a.in[0]->numel()) / double(n) : 0.0;
    if constexpr (kDenseSum<T>) {
      double s;
      if (dense_sum<Identity, T>(a, &s, FASTT_MUTANT(SumSkipLast))) {
        o[0] = T(s / count);
        return;
      }
    }
    reduce<T>(*a.in[0], a.dims, SumR<double>{},
              [o, count](int64_t i, double s) { o[i] = T(s / count); });
  }
};
template <class T>
struct ProdK {
  static void run(KernelArgs& a) {
    using O = sum_out_t<T>;
    O* o = out_ptr<O>(a.out);
    reduce<T>(*a.in[0], a.dims, ProdR<sum_acc_t<T>>{},
              [o](int64_t i, sum_acc_t<T> s) { o[i] = O(s); });
  }
};
template <bool IsAll>
struct Logical {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      bool* o = out_ptr<bool>(a.out);
      reduce<T>(*a.in[0], a.dims, LogicalR<IsAll>{},
                [o](int64_t i, bool s) { o[i] = s; });
    }
  };
};

// ---------------------------------------------------------------- scans --
// cumsum/cumprod along dim i0 of a contiguous input, seen as
// [outer, n, inner]; out is contiguous with sum_out_t<T> elements.
template <class T, bool IsSum>
struct ScanK {
  static void run(KernelArgs& a) {
    using O = sum_out_t<T>;
    using A = sum_acc_t<T>;
    const Tensor& in = *a.in[0];
    const T* x = static_cast<const T*>(in.data_ptr());
    O* o = out_ptr<O>(a.out);
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < in.dim(); ++d) {
      int64_t s = in.sizes()[d];
      if (d < a.i0) outer *= s;
      else if (d == a.i0) n = s;
      else inner *= s;
    }
    auto op = [](A s, A v) { return IsSum ? wrap_add(s, v) : wrap_mul(s, v); };
    const A init = IsSum ? A(0) : A(1);
    constexpr int64_t B = 64;
    const int64_t blocks = (inner + B - 1) / B;
    const int64_t units = outer * blocks;
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * B, 1));
    parallel_for(0, units, grain, [&](int64_t ub, int64_t ue) {
      A acc[B];
      for (int64_t u = ub; u < ue; ++u) {
        const int64_t oi = u / blocks, j0 = (u % blocks) * B;
        const int64_t w = std::min(B, inner - j0);
        const int64_t base = oi * n * inner + j0;
        for (int64_t j = 0; j < w; ++j) acc[j] = init;
        for (int64_t i = 0; i < n; ++i) {
          const T* xr = x + base + i * inner;
          O* orow = o + base + i * inner;
          for (int64_t j = 0; j < w; ++j) {
            acc[j] = op(acc[j], A(static_cast<M<T>>(xr[j])));
            orow[j] = O(acc[j]);
          }
        }
      }
    });
  }
};
template <class T>
using CumsumK = ScanK<T, true>;
template <class T>
using CumprodK = ScanK<T, false>;

// cummax / cummin's indices along dim i0 (i1: 1 max, 0 min) of a
// contiguous input seen as [outer, n, inner]: the latest index of the
// running extreme (ties go to the later element) and a NaN, once met,
// stays (torch's rule). With out2 (a dense tensor of the input's dtype and
// shape) the values as well: the input at each index, written in the same
// pass (cummax without a gradient; a gather of the indices reads the
// input a second time, in index order). One sequential pass, a block of
// columns at a time.
template <class T>
struct CumExtremeK {
  // One row (inner == 1). Element by element the running extreme is a
  // chain of dependent compare-and-selects; a chunk that cannot move it
  // (no value reaching it, no NaN; after a NaN: no other NaN) is checked
  // as a vector reduction and filled with the standing index instead.
  template <bool kMax, bool kVals>
  static void row(const T* x, int64_t* o, T* vo, int64_t n) {
    using V = M<T>;
    if (n == 0) return;
    V best = static_cast<V>(x[0]);
    T bx = x[0];  // the input at `at`
    int64_t at = 0;
    o[0] = 0;
    if (kVals) vo[0] = bx;
    auto step = [&](int64_t i) {
      const V v = static_cast<V>(x[i]);
      if (v != v || (best == best && (kMax ? v >= best : v <= best))) {
        best = v;
        bx = x[i];
        at = i;
      }
      o[i] = at;
      if (kVals) vo[i] = bx;
    };
    constexpr int64_t kChunk = 16;
    int64_t i = 1;
    for (; i + kChunk <= n; i += kChunk) {
      bool quiet = true;
      if (best == best) {
        for (int64_t j = 0; j < kChunk; ++j) {
          const V v = static_cast<V>(x[i + j]);
          quiet &= kMax ? v < best : v > best;  // false for NaN
        }
      } else {
        for (int64_t j = 0; j < kChunk; ++j) {
          const V v = static_cast<V>(x[i + j]);
          quiet &= v == v;
        }
      }
      if (quiet) {
        for (int64_t j = 0; j < kChunk; ++j) o[i + j] = at;
        if (kVals)
          for (int64_t j = 0; j < kChunk; ++j) vo[i + j] = bx;
      } else {
        for (int64_t j = 0; j < kChunk; ++j) step(i + j);
      }
    }
    for (; i < n; ++i) step(i);
  }
  template <bool kMax>
  static void rows(const T* x, int64_t* o, T* vo, int64_t n) {
    if (vo) row<kMax, true>(x, o, vo, n);
    else row<kMax, false>(x, o, vo, n);
  }
  static void run(KernelArgs& a) {
    using V = M<T>;
    const Tensor& in = *a.in[0];
    const T* x = static_cast<const T*>(in.data_ptr());
    int64_t* o = out_ptr<int64_t>(a.out);
    T* vo = a.out2 ? out_ptr<T>(a.out2) : nullptr;
    const bool is_max = a.i1 != 0;
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < in.dim(); ++d) {
      const int64_t s = in.sizes()[d];
      if (d < a.i0) outer *= s;
      else if (d == a.i0) n = s;
      else inner *= s;
    }
    if (inner == 1) {  // rows along dim: the state in registers
      const int64_t grain =
          std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
      parallel_for(0, outer, grain, [&](int64_t rb, int64_t re) {
        for (int64_t r = rb; r < re; ++r) {
          T* vr = vo ? vo + r * n : nullptr;
          if (is_max) rows<true>(x + r * n, o + r * n, vr, n);
          else rows<false>(x + r * n, o + r * n, vr, n);
        }
      });
      return;
    }
    constexpr int64_t B = 64;
    const int64_t blocks = (inner + B - 1) / B;
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * B, 1));
    parallel_for(0, outer * blocks, grain, [&](int64_t ub, int64_t ue) {
      V best[B];
      T bx[B];
      int64_t at[B];
      for (int64_t u = ub; u < ue; ++u) {
        const int64_t oi = u / blocks, j0 = (u % blocks) * B;
        const int64_t w = std::min(B, inner - j0);
        const int64_t base = oi * n * inner + j0;
        for (int64_t i = 0; i < n; ++i) {
          const T* xr = x + base + i * inner;
          int64_t* orow = o + base + i * inner;
          for (int64_t j = 0; j < w; ++j) {
            const V v = static_cast<V>(xr[j]);
            const bool take =
                i == 0 || v != v ||
                (best[j] == best[j] && (is_max ? v >= best[j] : v <= best[j]));
            if (take) {
              best[j] = v;
              bx[j] = xr[j];
              at[j] = i;
            }
            orow[j] = at[j];
          }
          if (vo) std::copy(bx, bx + w, vo + base + i * inner);
        }
      }
    });
  }
};

}  // namespace
}  // namespace reduce_impl

void register_reduce_kernels() {
  using namespace reduce_impl;
#define FASTT_KERNELS_reduce
#include "kernels/kernels.def"
  register_reduce_extreme_kernels();
  register_reduce_stats_kernels();
}

}  // namespace fastt
