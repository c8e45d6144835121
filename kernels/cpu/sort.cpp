// sort and topk: each row along `dim` is loaded in op-math precision, an
// index permutation is sorted (stable), and values/indices are written out.
// NaN sorts as the largest value, like torch. Rows run in parallel.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <new>
#include <numeric>
#include <vector>

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

// Walks the rows along `dim` of self and of the two outputs (which share
// every size but dim's): body(self_row, values_row, indices_row, scratch).
// Each parallel chunk owns its scratch buffers.
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
  // A failed scratch allocation must not escape an OpenMP region (that
  // aborts): chunks record it and the error is raised after the loop.
  std::atomic<bool> out_of_memory{false};
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    std::vector<opmath_t<T>> vals;
    std::vector<int64_t> perm;
    try {
      vals.resize(static_cast<size_t>(n));
      perm.resize(static_cast<size_t>(n));
    } catch (const std::bad_alloc&) {
      out_of_memory.store(true, std::memory_order_relaxed);
      return;
    }
    for (int64_t r = b; r < e; ++r) {
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
      for (int64_t j = 0; j < n; ++j)
        vals[size_t(j)] = static_cast<opmath_t<T>>(src[j * ss]);
      std::iota(perm.begin(), perm.end(), int64_t(0));
      body(vals, perm);
      T* vout = static_cast<T*>(values.data_ptr()) + vo;
      int64_t* iout = static_cast<int64_t*>(indices.data_ptr()) + io;
      const int64_t vs = values.strides()[dim], is = indices.strides()[dim];
      for (int64_t j = 0; j < out_n; ++j) {
        vout[j * vs] = static_cast<T>(vals[size_t(perm[size_t(j)])]);
        iout[j * is] = perm[size_t(j)];
      }
    }
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
    for_each_row<T>(a, [&](const std::vector<M>& v, std::vector<int64_t>& p) {
      if (descending)
        std::stable_sort(p.begin(), p.end(), [&](int64_t i, int64_t j) {
          return Greater<M>()(v[size_t(i)], v[size_t(j)]);
        });
      else
        std::stable_sort(p.begin(), p.end(), [&](int64_t i, int64_t j) {
          return Less<M>()(v[size_t(i)], v[size_t(j)]);
        });
    });
  }
};

// Like sort, but outputs hold k = i2 along dim: the largest (i1 = 1) or
// smallest k, in order; ties keep the lower index first.
template <class T>
struct TopkK {
  template <class Cmp>
  static void top(const std::vector<opmath_t<T>>& v, std::vector<int64_t>& p,
                  int64_t k, Cmp cmp) {
    auto order = [&](int64_t i, int64_t j) {
      const auto x = v[size_t(i)], y = v[size_t(j)];
      return cmp(x, y) || (!cmp(y, x) && i < j);
    };
    std::partial_sort(p.begin(), p.begin() + k, p.end(), order);
  }
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const bool largest = a.i1 != 0;
    const int64_t k = a.i2;
    for_each_row<T>(a, [&](const std::vector<M>& v, std::vector<int64_t>& p) {
      if (largest)
        top(v, p, k, Greater<M>());
      else
        top(v, p, k, Less<M>());
    });
  }
};

}  // namespace

void register_sort_kernels() {
  register_only<SortK>(Op::sort, AllTypes{});
  register_only<TopkK>(Op::topk, AllTypes{});
}

}  // namespace fastt
