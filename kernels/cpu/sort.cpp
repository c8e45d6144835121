// sort and topk: each row along `dim` is loaded in op-math precision, an
// index permutation is sorted (stable), and values/indices are written out.
// NaN sorts as the largest value, like torch. Rows run in parallel.
// select (kthvalue, median): one element's index per row, in the order
// sort gives, by a linear-time selection on packed (key, index) words.
// searchsorted: a binary search per value.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

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

// Scratch of n elements of E from the caching allocator: a loop of sorts
// then maps no fresh pages (new[]'s memory for 64K-element rows is
// returned to the system at each delete, and page faults took a third of
// such a sort's time). Null where it cannot be had: nothing may throw out
// of an OpenMP region, so the callers report it after theirs.
template <class E>
struct ScratchOf {
  Tensor t;
  E* p = nullptr;
  explicit ScratchOf(int64_t n) {
    try {
      t = Tensor::empty({n * int64_t(sizeof(E))}, DType::UInt8);
      p = static_cast<E*>(t.data_ptr());
    } catch (...) {
      p = nullptr;
    }
  }
  E* get() const { return p; }
  explicit operator bool() const { return p != nullptr; }
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

// Row r of the rows along dim (r's row-major digits over self's other
// dims): its offset in each of ts, which share self's sizes but dim's.
template <int N>
void row_offsets(const Tensor& self, int64_t dim, int64_t r,
                 const Tensor* const (&ts)[N], int64_t (&off)[N]) {
  for (int t = 0; t < N; ++t) off[t] = 0;
  for (int d = int(self.dim()) - 1; d >= 0; --d) {
    if (d == dim) continue;
    const int64_t i = r % self.sizes()[d];
    r /= self.sizes()[d];
    for (int t = 0; t < N; ++t) off[t] += i * ts[t]->strides()[d];
  }
}

// Walks the rows along `dim` of self and of the two outputs (which share
// every size but dim's): body(vals, perm, n) reorders perm of one row.
// Each parallel chunk owns its scratch buffers; a small job uses the stack.
template <class T, class Body>
void for_each_row(const KernelArgs& a, Body&& body) {
  const Tensor& self = *a.in[0];
  const Tensor& values = *a.out;
  const Tensor& indices = *a.out2;
  const int64_t dim = a.i0;
  const int64_t n = self.sizes()[dim];
  const int64_t out_n = values.sizes()[dim];
  if (n == 0 || out_n == 0 || self.numel() == 0) return;
  const int64_t rows = self.numel() / n;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / n);
  // One row's work on scratch vals/perm of n elements.
  auto do_row = [&](int64_t r, opmath_t<T>* vals, int64_t* perm) {
    int64_t off[3];
    row_offsets<3>(self, dim, r, {&self, &values, &indices}, off);
    const int64_t so = off[0], vo = off[1], io = off[2];
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
    ScratchOf<opmath_t<T>> vals(n);
    ScratchOf<int64_t> perm(n);
    if (!vals || !perm) {
      out_of_memory.store(true, std::memory_order_relaxed);
      return;
    }
    for (int64_t r = b; r < e; ++r) do_row(r, vals.get(), perm.get());
  });
  FASTT_CHECK(!out_of_memory.load(), OutOfMemoryError,
              "sort: out of memory for the scratch of rows of {} elements", n);
}

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

// ---- select: the index of one position of each row's stable order ----
// Unsigned keys that order like Less (as kernels/cuda/sort.cu's radix
// keys): NaN above every number and equal to every NaN, -0 equal to +0;
// 32 bits for types up to 4 bytes, else 64.
template <class M>
using key_t = std::conditional_t<sizeof(M) <= 4, uint32_t, uint64_t>;
template <class M>
key_t<M> order_key(M v) {
  using K = key_t<M>;
  constexpr K kSign = K(1) << (sizeof(K) * 8 - 1);
  if constexpr (std::is_same<M, bool>::value) {
    return K(v);
  } else if constexpr (std::is_integral<M>::value) {
    if constexpr (std::is_signed<M>::value)
      return K(std::make_signed_t<K>(v)) ^ kSign;
    else
      return K(v);
  } else {  // float or double: a key as wide as the value
    if (v != v) return ~K(0);
    if (v == M(0)) v = M(0);
    K b;
    std::memcpy(&b, &v, sizeof(b));
    return (b & kSign) ? K(~b) : K(b | kSign);
  }
}
// A 64-bit key with its index (32-bit keys and indices pack into one
// word instead): ordered by key, then index, so ties keep sort's order.
struct KeyIndex {
  uint64_t key;
  int64_t index;
  bool operator<(const KeyIndex& o) const {
    return key < o.key || (key == o.key && index < o.index);
  }
};
template <class K>
using word_t = std::conditional_t<sizeof(K) == 4, uint64_t, KeyIndex>;

// Rows from this length sort by radix (below: std::stable_sort), by the
// width of their keys (measured crossovers: 32-bit keys by 300 elements,
// 64-bit ones, up to eight passes, at about 4096).
template <class M>
constexpr int64_t kRadixFrom = sizeof(key_t<M>) == 4 ? 256 : 4096;

// Stable LSD radix sort of perm[0, n) (the identity on entry) by the
// order keys of v (their complement for descending): one byte a pass,
// keys and indices moved together, a pass skipped where every key has
// the same byte there (int64 values below 256 take one pass, float32
// keys four at most). Linear in n, against std::stable_sort's n log n
// comparisons through perm (64K int64: 2.0 ms, torch's 1.6). False (perm
// untouched) where its scratch cannot be had.
template <class M>
bool radix_sort_perm(const M* v, int64_t* p, int64_t n, bool descending) {
  using K = key_t<M>;
  constexpr int kBytes = int(sizeof(K));
  ScratchOf<K> k0(n), k1(n);
  ScratchOf<int64_t> p1(n);
  if (!k0 || !k1 || !p1) return false;
  const K flip = descending ? ~K(0) : K(0);
  int64_t count[kBytes][256] = {};
  for (int64_t j = 0; j < n; ++j) {
    const K k = order_key(v[j]) ^ flip;
    k0.get()[j] = k;
    for (int b = 0; b < kBytes; ++b) ++count[b][(k >> (8 * b)) & 0xFF];
  }
  K *ks = k0.get(), *kd = k1.get();
  int64_t *ps = p, *pd = p1.get();
  for (int b = 0; b < kBytes; ++b) {
    const int shift = 8 * b;
    if (count[b][(ks[0] >> shift) & 0xFF] == n) continue;  // one bucket
    int64_t at[256];
    int64_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      at[d] = sum;
      sum += count[b][d];
    }
    for (int64_t j = 0; j < n; ++j) {
      const int64_t q = at[(ks[j] >> shift) & 0xFF]++;
      kd[q] = ks[j];
      pd[q] = ps[j];
    }
    std::swap(ks, kd);
    std::swap(ps, pd);
  }
  if (ps != p) std::memcpy(p, ps, size_t(n) * sizeof(int64_t));
  return true;
}

// in[0] = self (ndim >= 1), out = values, out2 = int64 indices (same shape);
// i0 = dim, i1 = descending. Always stable.
template <class T>
struct SortK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const bool descending = a.i1 != 0;
    for_each_row<T>(a, [&](const M* v, int64_t* p, int64_t n) {
      if (n >= kRadixFrom<M> && radix_sort_perm(v, p, n, descending))
        return;
      if (descending)
        stable_sort_perm(v, p, n, Greater<M>());
      else
        stable_sort_perm(v, p, n, Less<M>());
    });
  }
};

// Rows up to this length select on the stack.
constexpr int64_t kSmallSelect = 64;

// in[0] = self (ndim >= 1; rows along dim shorter than 2^32), out = int64
// indices (size 1 along dim, self's sizes elsewhere); i0 = dim; which
// position of each row's stable ascending order (sort's) to report:
// i1 = 0: position i2; 1: the lower median, or the first NaN where the
// row has one (median); 2: the lower median of the non-NaN values, 0
// where there are none (nanmedian). std::nth_element: linear on average.
template <class T>
struct SelectK {
  using M = opmath_t<T>;
  using K = key_t<M>;
  using W = word_t<K>;
  static W word(K key, int64_t j) {
    if constexpr (sizeof(K) == 4) return (uint64_t(key) << 32) | uint64_t(j);
    else return KeyIndex{key, j};
  }
  static K key_of(const W& w) {
    if constexpr (sizeof(K) == 4) return K(w >> 32);
    else return w.key;
  }
  static int64_t index_of(const W& w) {
    if constexpr (sizeof(K) == 4) return int64_t(w & 0xFFFFFFFFu);
    else return w.index;
  }
  // The bucket of the digit histogram h that holds position *pos; *pos
  // becomes the position within it.
  static uint32_t bucket_of(const uint32_t* h, int64_t* pos) {
    int64_t below = 0;
    uint32_t b = 0;
    while (below + h[b] <= *pos) below += h[b++];
    *pos -= below;
    return b;
  }
  // Radix select for long rows: the histogram of the keys' top 11 bits
  // finds the bucket of position pos, whose words (key, index) are
  // gathered; the next 11 bits narrow them again while many remain; then
  // nth_element on what is left. Two passes over the row where
  // nth_element's partitions mispredict a branch per element.
  static int64_t radix_select(const K* keys, W* w, int64_t n, int64_t pos) {
    constexpr int kDigit = 11, kBuckets = 1 << kDigit;
    int shift = int(sizeof(K)) * 8 - kDigit;
    uint32_t h[kBuckets] = {};
    for (int64_t j = 0; j < n; ++j) ++h[keys[j] >> shift];
    K b = bucket_of(h, &pos);
    int64_t c = 0;
    for (int64_t j = 0; j < n; ++j)
      if ((keys[j] >> shift) == b) w[c++] = word(keys[j], j);
    while (c > kRadixRow && shift > 0) {
      shift = std::max(shift - kDigit, 0);
      std::fill(h, h + kBuckets, 0u);
      for (int64_t t = 0; t < c; ++t)
        ++h[(key_of(w[t]) >> shift) & (kBuckets - 1)];
      b = bucket_of(h, &pos);
      int64_t kept = 0;
      for (int64_t t = 0; t < c; ++t)
        if (((key_of(w[t]) >> shift) & (kBuckets - 1)) == b) w[kept++] = w[t];
      c = kept;
    }
    std::nth_element(w, w + pos, w + c);
    return index_of(w[pos]);
  }
  static constexpr int64_t kRadixRow = 4096;  // shorter: nth_element
  static void run(KernelArgs& a) {
    const Tensor& self = *a.in[0];
    const Tensor& out = *a.out;
    const int64_t dim = a.i0, mode = a.i1;
    const int64_t n = self.sizes()[dim], ss = self.strides()[dim];
    if (n == 0 || self.numel() == 0) return;
    const int64_t rows = self.numel() / n;
    const bool radix = n > kRadixRow;
    // w: n words; keys: n keys for the radix path (else null)
    auto do_row = [&](int64_t r, W* w, K* keys) {
      int64_t off[2];
      row_offsets<2>(self, dim, r, {&self, &out}, off);
      const int64_t so = off[0], oo = off[1];
      const T* src = static_cast<const T*>(self.data_ptr()) + so;
      int64_t nans = 0;
      for (int64_t j = 0; j < n; ++j) {
        const M v = static_cast<M>(src[j * ss]);
        nans += is_nan(v);
        if (keys) keys[j] = order_key(v);
        else w[j] = word(order_key(v), j);
      }
      const int64_t good = n - nans;
      int64_t pos = a.i2;
      if (mode == 1) pos = good < n ? good : (n - 1) / 2;
      else if (mode == 2) pos = good > 0 ? (good - 1) / 2 : 0;
      int64_t index;
      if (keys) {
        index = radix_select(keys, w, n, pos);
      } else {
        std::nth_element(w, w + pos, w + n);
        index = index_of(w[pos]);
      }
      static_cast<int64_t*>(out.data_ptr())[oo] = index;
    };
    const int64_t grain = std::max<int64_t>(1, kGrainSize / n);
    if (n <= kSmallSelect && rows <= grain) {
      W w[kSmallSelect];
      for (int64_t r = 0; r < rows; ++r) do_row(r, w, nullptr);
      return;
    }
    std::atomic<bool> out_of_memory{false};
    parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
      ScratchOf<W> w(n);
      ScratchOf<K> keys(radix ? n : 0);
      if (!w || (radix && !keys)) {
        out_of_memory.store(true, std::memory_order_relaxed);
        return;
      }
      for (int64_t r = b; r < e; ++r) do_row(r, w.get(), keys.get());
    });
    FASTT_CHECK(!out_of_memory.load(), OutOfMemoryError,
                "kthvalue: out of memory for the scratch of rows of {} "
                "elements",
                n);
  }
};

// in[0] = sorted rows [B, m] and in[1] = values [B, k] (B = 1: one
// sequence for all values), dense; out = the insertion points, int64 or
// int32, dense as in[1]; i0 = right. torch's search loop exactly (the
// same answer on unsorted or NaN-holding rows): right of mid unless
// mid's value >= v (> v for right).
template <class T>
struct SearchsortedK {
  template <class I>
  static void search(const KernelArgs& a, I* out) {
    using M = opmath_t<T>;
    const Tensor& seq = *a.in[0];
    const Tensor& val = *a.in[1];
    const int64_t m = seq.sizes()[seq.dim() - 1];
    const int64_t rows = seq.numel() / std::max<int64_t>(m, 1);
    const int64_t k = rows > 1 ? val.numel() / rows : val.numel();
    const T* s = static_cast<const T*>(seq.data_ptr());
    const T* v = static_cast<const T*>(val.data_ptr());
    const bool right = a.i0 != 0;
    const int64_t grain = std::max<int64_t>(256, kGrainSize / 16);
    parallel_for(0, val.numel(), grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T* row = rows > 1 ? s + (i / k) * m : s;
        const M x = static_cast<M>(v[i]);
        int64_t lo = 0, hi = m;
        while (lo < hi) {
          const int64_t mid = lo + ((hi - lo) >> 1);
          const M y = static_cast<M>(row[mid]);
          const bool left_of = right ? y > x : y >= x;
          lo = left_of ? lo : mid + 1;
          hi = left_of ? mid : hi;
        }
        out[i] = I(lo);
      }
    });
  }
  static void run(KernelArgs& a) {
    if (a.out->dtype() == DType::Int32)
      search(a, static_cast<int32_t*>(a.out->data_ptr()));
    else
      search(a, static_cast<int64_t*>(a.out->data_ptr()));
  }
};

}  // namespace

void register_sort_kernels() {
#define FASTT_KERNELS_sort
#define FASTT_KERNELS_select
#include "kernels/kernels.def"
}

}  // namespace fastt
