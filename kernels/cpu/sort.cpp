// sort and topk: each row along `dim` is loaded in op-math precision, an
// index permutation is sorted (stable), and values/indices are written out.
// NaN sorts as the largest value, like torch. Rows run in parallel.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <new>

#include "kernels/cpu/loop.h"

namespace fastt {
namespace {
using namespace cpu;

template <class M>
bool is_nan(M v) {
  if constexpr (std::is_floating_point<M>::value) return std::isnan(v);
  else return false;
}
// Orders with NaN above every number (and equal to other NaNs).
template <class M>
struct Less {
  bool operator()(M a, M b) const {
    return a < b || (!is_nan(a) && is_nan(b));
  }
};
template <class M>
struct Greater {
  bool operator()(M a, M b) const {
    return a > b || (is_nan(a) && !is_nan(b));
  }
};

// Rows up to this length sort on the stack with insertion sort.
constexpr int64_t kSmallRow = 64;

// Stable sort of perm[0, n) by cmp on v[perm[i]]: insertion sort for short
// rows (no temporary buffer), std::stable_sort otherwise.
template <class M, class Cmp>
void stable_sort_perm(const M* v, int64_t* p, int64_t n, Cmp cmp) {
  if (n <= kSmallRow) {
    for (int64_t i = 1; i < n; ++i) {
      const int64_t x = p[i];
      int64_t j = i;
      for (; j > 0 && cmp(v[x], v[p[j - 1]]); --j) p[j] = p[j - 1];
      p[j] = x;
    }
    return;
  }
  std::stable_sort(p, p + n,
                   [&](int64_t i, int64_t j) { return cmp(v[i], v[j]); });
}

// Walks the rows along `dim` of self and of the two outputs (which share
// every size but dim's): body(vals, perm, n) reorders perm of one row.
// Each parallel chunk owns its scratch buffers; a small job uses the stack.
template <class T, class Body>
void for_each_row(const KernelArgs& a, Body&& body) {
  const Tensor& self = *a.in[0];
  const Tensor& values = *a.out;
  const Tensor& indices = *a.out2;
  const int nd = int(self.dim());
  const int64_t dim = a.i0;
  const int64_t n = self.sizes()[dim];
  const int64_t out_n = values.sizes()[dim];
  if (n == 0 || out_n == 0 || self.numel() == 0) return;
  const int64_t rows = self.numel() / n;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / n);
  // One row's work on scratch vals/perm of n elements.
  auto do_row = [&](int64_t r, opmath_t<T>* vals, int64_t* perm) {
    // Offsets of row r: r's row-major digits over the dims other than dim.
    int64_t rem = r, so = 0, vo = 0, io = 0;
    for (int d = nd - 1; d >= 0; --d) {
      if (d == dim) continue;
      const int64_t i = rem % self.sizes()[d];
      rem /= self.sizes()[d];
      so += i * self.strides()[d];
      vo += i * values.strides()[d];
      io += i * indices.strides()[d];
    }
    const T* src = static_cast<const T*>(self.data_ptr()) + so;
    const int64_t ss = self.strides()[dim];
    for (int64_t j = 0; j < n; ++j) {
      vals[j] = static_cast<opmath_t<T>>(src[j * ss]);
      perm[j] = j;
    }
    body(static_cast<const opmath_t<T>*>(vals), perm, n);
    T* vout = static_cast<T*>(values.data_ptr()) + vo;
    int64_t* iout = static_cast<int64_t*>(indices.data_ptr()) + io;
    const int64_t vs = values.strides()[dim], is = indices.strides()[dim];
    for (int64_t j = 0; j < out_n; ++j) {
      vout[j * vs] = static_cast<T>(vals[perm[j]]);
      iout[j * is] = perm[j];
    }
  };
  // Short rows that fit one grain: stack scratch, no heap, no OpenMP.
  if (n <= kSmallRow && rows <= grain) {
    opmath_t<T> vals[kSmallRow];
    int64_t perm[kSmallRow];
    for (int64_t r = 0; r < rows; ++r) do_row(r, vals, perm);
    return;
  }
  // A failed scratch allocation must not escape an OpenMP region (that
  // aborts): chunks record it and the error is raised after the loop.
  std::atomic<bool> out_of_memory{false};
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    std::unique_ptr<opmath_t<T>[]> vals(new (std::nothrow)
                                            opmath_t<T>[size_t(n)]);
    std::unique_ptr<int64_t[]> perm(new (std::nothrow) int64_t[size_t(n)]);
    if (!vals || !perm) {
      out_of_memory.store(true, std::memory_order_relaxed);
      return;
    }
    for (int64_t r = b; r < e; ++r) do_row(r, vals.get(), perm.get());
  });
  FASTT_CHECK(!out_of_memory.load(), OutOfMemoryError,
              "sort: out of memory for the scratch of rows of {} elements", n);
}

// in[0] = self (ndim >= 1), out = values, out2 = int64 indices (same shape);
// i0 = dim, i1 = descending. Always stable.
template <class T>
struct SortK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const bool descending = a.i1 != 0;
    for_each_row<T>(a, [&](const M* v, int64_t* p, int64_t n) {
      if (descending)
        stable_sort_perm(v, p, n, Greater<M>());
      else
        stable_sort_perm(v, p, n, Less<M>());
    });
  }
};

// Like sort, but outputs hold k = i2 along dim: the largest (i1 = 1) or
// smallest k, in order; ties keep the lower index first.
template <class T>
struct TopkK {
  template <class Cmp>
  static void top(const opmath_t<T>* v, int64_t* p, int64_t n, int64_t k,
                  Cmp cmp) {
    if (n <= kSmallRow) {  // stable, so ties keep the lower index first
      stable_sort_perm(v, p, n, cmp);
      return;
    }
    auto order = [&](int64_t i, int64_t j) {
      const auto x = v[i], y = v[j];
      return cmp(x, y) || (!cmp(y, x) && i < j);
    };
    std::partial_sort(p, p + k, p + n, order);
  }
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const bool largest = a.i1 != 0;
    const int64_t k = a.i2;
    for_each_row<T>(a, [&](const M* v, int64_t* p, int64_t n) {
      if (largest)
        top(v, p, n, k, Greater<M>());
      else
        top(v, p, n, k, Less<M>());
    });
  }
};

}  // namespace

void register_sort_kernels() {
#define FASTT_KERNELS_sort
#include "kernels/kernels.def"
}

}  // namespace fastt
