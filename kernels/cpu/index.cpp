// Indexing and shape kernels. One strided "index along dims" kernel serves
// gather, index_select, scatter(_add), index_add, index and index_put; cat,
// masked_select, nonzero, tril/triu, flip and roll have their own loops.
// The index kernel also has a view-free direct form for dense selects.
// Every argument is validated by csrc/ops/index.cpp before a kernel runs.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "csrc/mutation.h"
#include "kernels/cpu/loop.h"
#include "kernels/plan.h"

namespace fastt {
namespace {
using namespace cpu;

constexpr int kMaxPlanOps = kMaxDims + 2;

// An iteration space shared by up to kMaxPlanOps operands: dims fastest
// first, strides in bytes (any sign, 0 where broadcast).
struct Plan {
  int nd = 0, nops = 0;
  int64_t numel = 1;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxPlanOps][kMaxDims];
  char* data[kMaxPlanOps];
};

// Starts a plan over `sizes` (outermost first, as tensors store them).
void plan_init(Plan& p, IntList sizes) {
  p.nd = int(sizes.size());
  p.nops = 0;
  p.numel = 1;
  for (int d = 0; d < p.nd; ++d) {
    p.sizes[d] = sizes[p.nd - 1 - d];
    p.numel *= sizes[d];
  }
}
// Adds an operand whose element strides are given outermost first.
void plan_add(Plan& p, char* data, const int64_t* strides, int64_t itemsize) {
  const int k = p.nops++;
  p.data[k] = data;
  for (int d = 0; d < p.nd; ++d)
    p.strides[k][d] = strides[p.nd - 1 - d] * itemsize;
}
void plan_add(Plan& p, const Tensor& t) {
  plan_add(p, static_cast<char*>(t.data_ptr()), t.strides().data(),
           int64_t(t.itemsize()));
}

// Calls body(ptrs, inner_strides, n) for runs of the innermost dim that
// cover the linear range [begin, end) of the plan.
template <class Body>
void plan_range(const Plan& p, int64_t begin, int64_t end, Body&& body) {
  if (begin >= end) return;  // also keeps size-0 dims out of the divisions
  int64_t idx[kMaxDims];
  char* ptr[kMaxPlanOps];
  int64_t inner[kMaxPlanOps];
  int64_t rem = begin;
  for (int d = 0; d < p.nd; ++d) {
    idx[d] = rem % p.sizes[d];
    rem /= p.sizes[d];
  }
  for (int k = 0; k < p.nops; ++k) {
    char* q = p.data[k];
    for (int d = 0; d < p.nd; ++d) q += idx[d] * p.strides[k][d];
    ptr[k] = q;
    inner[k] = p.strides[k][0];
  }
  int64_t pos = begin;
  while (pos < end) {
    const int64_t n = std::min(p.sizes[0] - idx[0], end - pos);
    body(ptr, inner, n);
    pos += n;
    if (pos >= end) break;
    for (int k = 0; k < p.nops; ++k) ptr[k] += n * inner[k];
    idx[0] += n;
    for (int d = 0; d < p.nd - 1 && idx[d] == p.sizes[d]; ++d) {
      for (int k = 0; k < p.nops; ++k)
        ptr[k] += p.strides[k][d + 1] - p.sizes[d] * p.strides[k][d];
      idx[d] = 0;
      ++idx[d + 1];
    }
  }
}

// dst = src over a plan whose operand 0 is dst and 1 is src.
template <class T>
void copy_plan(const Plan& p) {
  parallel_for(0, p.numel, kGrainSize, [&](int64_t b, int64_t e) {
    plan_range(p, b, e, [](char** ptr, const int64_t* s, int64_t n) {
      if (s[0] == int64_t(sizeof(T)) && s[1] == int64_t(sizeof(T))) {
        std::memcpy(ptr[0], ptr[1], size_t(n) * sizeof(T));
      } else {
        for (int64_t i = 0; i < n; ++i)
          *reinterpret_cast<T*>(ptr[0] + i * s[0]) =
              *reinterpret_cast<const T*>(ptr[1] + i * s[1]);
      }
    });
  });
}

// ------------------------------------------------------ index along dims --
// gather/index_select/index: dst[p] = src[p + sum_k idx_k[p] * stride_k];
// scatter/scatter_add/index_add/index_put: the same offset applies to dst,
// and with accumulate dst += alpha * src. Layout: out = dst view, in[0] =
// src view, in[1] = an array of i1 int64 index tensors, all at out's shape
// (stride 0 where broadcast); dims = [element strides of the indexed dims
// of the addressed tensor..., their sizes...] (sizes wrap negative
// indices); i0 = 1 when the indices address dst; i2 = 1 to accumulate;
// s0 = alpha. Indices were range-checked by the op layer.
template <class T, bool kScatter, bool kAccumulate>
void index_loop(const Plan& p, int K, const int64_t* istride,
                const int64_t* isize, opmath_t<T> alpha) {
  auto apply = [alpha](char* d, const char* s) {
    T* dp = reinterpret_cast<T*>(d);
    const T x = *reinterpret_cast<const T*>(s);
    if constexpr (!kAccumulate) {
      *dp = x;
    } else if constexpr (std::is_same<T, bool>::value) {
      *dp = *dp || (x && alpha);
    } else {
      using M = opmath_t<T>;
      *dp = static_cast<T>(static_cast<M>(*dp) + alpha * static_cast<M>(x));
    }
  };
  // The summed offset of the index tensors at point i; `one` true: K is
  // 1, known at compile time, so no loop over index tensors (index_add,
  // scatter, bincount's: 64K index_add 164 -> 86 us)
  auto offset = [&](auto one, char* const* ptr, const int64_t* s,
                    int64_t i) {
    const int nk = decltype(one)::value ? 1 : K;
    int64_t off = 0;
    for (int k = 0; k < nk; ++k) {
      int64_t v = *reinterpret_cast<const int64_t*>(ptr[2 + k] + i * s[2 + k]);
      if (v < 0) v += isize[k];
      off += v * istride[k];
    }
    return off;
  };
  auto body = [&](char** ptr, const int64_t* s, int64_t n) {
    bool index_constant = true;  // e.g. index_select: one index per run
    for (int k = 0; k < K; ++k) index_constant &= s[2 + k] == 0;
    if (index_constant) {
      const int64_t off = offset(std::false_type(), ptr, s, 0);
      char* d = ptr[0] + (kScatter ? off : 0);
      const char* x = ptr[1] + (kScatter ? 0 : off);
      if (!kAccumulate && s[0] == int64_t(sizeof(T)) &&
          s[1] == int64_t(sizeof(T))) {
        std::memcpy(d, x, size_t(n) * sizeof(T));
      } else {
        for (int64_t i = 0; i < n; ++i) apply(d + i * s[0], x + i * s[1]);
      }
      return;
    }
    auto points = [&](auto one) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = offset(one, ptr, s, i);
        apply(ptr[0] + i * s[0] + (kScatter ? off : 0),
              ptr[1] + i * s[1] + (kScatter ? 0 : off));
      }
    };
    if (K == 1) points(std::true_type());
    else points(std::false_type());
  };
  if (!kScatter) {
    parallel_for(0, p.numel, kGrainSize,
                 [&](int64_t b, int64_t e) { plan_range(p, b, e, body); });
    return;
  }
  // Scattered writes may collide only between points that differ in dims
  // where dst's stride is 0, so threads split the largest dim with a
  // nonzero dst stride (each takes a slab of it over the whole space).
  int split = -1;
  for (int d = 0; d < p.nd; ++d)
    if (p.strides[0][d] != 0 && p.sizes[d] > 1 &&
        (split < 0 || p.sizes[d] > p.sizes[split]))
      split = d;
  if (split < 0) {
    plan_range(p, 0, p.numel, body);
    return;
  }
  const int64_t per = p.numel / p.sizes[split];
  const int64_t grain = std::max<int64_t>(1, kGrainSize / per);
  parallel_for(0, p.sizes[split], grain, [&](int64_t b, int64_t e) {
    Plan slab = p;
    slab.sizes[split] = e - b;
    slab.numel = per * (e - b);
    for (int k = 0; k < p.nops; ++k) slab.data[k] += b * p.strides[k][split];
    plan_range(slab, 0, slab.numel, body);
  });
}

// Direct form (i1 = -1), used by index_select, embedding, 1-D gather and
// x[idx] when src is dense: no views, just raw extents. out (dense) viewed
// as [outer, n, inner] = in[0] (dense) viewed as [outer, size, inner] with
// the middle dim picked by the n int64 values of in[1] at element stride
// dims[3]; dims = [outer, size, inner, index stride].
template <class T>
void index_select_direct(const KernelArgs& a) {
  const int64_t outer = a.dims[0], size = a.dims[1], inner = a.dims[2];
  const int64_t is = a.dims[3];
  const int64_t n = a.in[1]->numel();
  const int64_t rows = outer * n;
  if (rows == 0 || inner == 0) return;
  const T* src = static_cast<const T*>(a.in[0]->data_ptr());
  const int64_t* idx = static_cast<const int64_t*>(a.in[1]->data_ptr());
  T* out = static_cast<T*>(a.out->data_ptr());
  const int64_t wrap = size - FASTT_MUTANT(IndexNegWrapOffByOne);
  if (inner == 1) {  // one element per index (1-D gather, x[idx]): a
    // tight loop per row of the index, no division or copy call inside
    auto run = [&](int64_t b, int64_t e) {
      int64_t o = b / n, j = b - o * n;
      for (int64_t r = b; r < e; j = 0, ++o) {
        const T* s = src + o * size;
        const int64_t* ix = idx + j * is;
        T* d = out + r;
        const int64_t m = std::min(e - r, n - j);
        if (is == 1) {
          for (int64_t k = 0; k < m; ++k) {
            const int64_t v = ix[k];
            d[k] = s[v < 0 ? v + wrap : v];
          }
        } else {
          for (int64_t k = 0; k < m; ++k) {
            const int64_t v = ix[k * is];
            d[k] = s[v < 0 ? v + wrap : v];
          }
        }
        r += m;
      }
    };
    if (rows <= kGrainSize) run(0, rows);  // tiny: never touch OpenMP
    else parallel_for(0, rows, kGrainSize, run);
    return;
  }
  auto run_rows = [&](int64_t b, int64_t e) {
    int64_t o = b / n, j = b - o * n;
    for (int64_t r = b; r < e; ++r) {
      int64_t v = idx[j * is];
      if (v < 0) v += wrap;
      const T* s = src + (o * size + v) * inner;
      if (inner <= 8)  // short rows (embedding dims): no memcpy call
        for (int64_t k = 0; k < inner; ++k) out[r * inner + k] = s[k];
      else
        std::memcpy(out + r * inner, s, size_t(inner) * sizeof(T));
      if (++j == n) {
        j = 0;
        ++o;
      }
    }
  };
  if (rows * inner <= kGrainSize) {  // tiny: never touch OpenMP
    run_rows(0, rows);
    return;
  }
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / inner), run_rows);
}

template <class T>
struct IndexK {
  static void run(KernelArgs& a) {
    if (a.i1 < 0) return index_select_direct<T>(a);
    const Tensor& dst = *a.out;
    if (dst.numel() == 0) return;
    const int K = int(a.i1);
    Plan p;
    plan_init(p, dst.sizes());
    plan_add(p, dst);
    plan_add(p, *a.in[0]);
    for (int k = 0; k < K; ++k) plan_add(p, a.in[1][k]);
    plan_coalesce(p);
    int64_t istride[kMaxDims], isize[kMaxDims];
    for (int k = 0; k < K; ++k) {
      istride[k] = a.dims[k] * int64_t(sizeof(T));
      isize[k] = a.dims[K + k];
    }
    const opmath_t<T> alpha = a.s0.to<opmath_t<T>>();
    if (a.i0) {
      if (a.i2)
        index_loop<T, true, true>(p, K, istride, isize, alpha);
      else
        index_loop<T, true, false>(p, K, istride, isize, alpha);
    } else {
      index_loop<T, false, false>(p, K, istride, isize, alpha);
    }
  }
};

// ------------------------------------------------------------------ cat --
// out is contiguous; in[0] points to i0 contiguous inputs of out's dtype
// (legacy empty inputs already dropped), concatenated along dim i1.
template <class T>
struct CatK {
  static void run(KernelArgs& a) {
    Tensor& out = *a.out;
    if (out.numel() == 0) return;
    const Tensor* ins = a.in[0];
    const int n = int(a.i0);
    const int64_t dim = a.i1;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= out.sizes()[d];
    for (int64_t d = dim + 1; d < out.dim(); ++d) inner *= out.sizes()[d];
    const int64_t row = out.sizes()[dim] * inner;  // out elements per outer
    char* base = static_cast<char*>(out.data_ptr());
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(row, 1));
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        char* dst = base + o * row * int64_t(sizeof(T));
        for (int i = 0; i < n; ++i) {
          const int64_t chunk = ins[i].sizes()[dim] * inner;
          const char* src = static_cast<const char*>(ins[i].data_ptr()) +
                            o * chunk * int64_t(sizeof(T));
          std::memcpy(dst, src, size_t(chunk) * sizeof(T));
          dst += chunk * int64_t(sizeof(T));
        }
      }
    });
  }
};

// ------------------------------------- masked_select and nonzero (counts) --
// Both first count per chunk in parallel, then allocate *out and fill each
// chunk at its prefix offset, so the result keeps row-major order.
struct Chunks {
  int64_t n, size;
  std::vector<int64_t> count;
  Chunks(int64_t numel) {
    n = numel <= kGrainSize ? 1
                            : std::min<int64_t>(get_num_threads() * 4,
                                                (numel + kGrainSize - 1) /
                                                    kGrainSize);
    size = (numel + n - 1) / std::max<int64_t>(n, 1);
    count.assign(size_t(n) + 1, 0);
  }
  // count[c] becomes the start of chunk c; returns the total.
  int64_t prefix() {
    int64_t total = 0;
    for (int64_t c = 0; c < n; ++c) {
      int64_t k = count[c];
      count[c] = total;
      total += k;
    }
    return total;
  }
};

template <class T>
bool nonzero_value(const char* p) {
  return static_cast<opmath_t<T>>(*reinterpret_cast<const T*>(p)) !=
         opmath_t<T>(0);
}

// in[0] = self, in[1] = bool mask, both at the broadcast shape.
template <class T>
struct MaskedSelectK {
  static void run(KernelArgs& a) {
    const Tensor& self = *a.in[0];
    const Tensor& mask = *a.in[1];
    Plan p;
    plan_init(p, mask.sizes());
    plan_add(p, mask);
    plan_add(p, self);
    plan_coalesce(p);
    Chunks ch(p.numel);
    parallel_for(0, ch.n, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        int64_t cnt = 0;
        plan_range(p, c * ch.size, std::min(p.numel, (c + 1) * ch.size),
                   [&](char** ptr, const int64_t* s, int64_t n) {
                     for (int64_t i = 0; i < n; ++i)
                       cnt += *reinterpret_cast<const bool*>(ptr[0] + i * s[0]);
                   });
        ch.count[c] = cnt;
      }
    });
    const int64_t total = ch.prefix();
    *a.out = Tensor::empty({total}, self.dtype(), self.device());
    T* out = static_cast<T*>(a.out->data_ptr());
    parallel_for(0, ch.n, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        T* o = out + ch.count[c];
        plan_range(p, c * ch.size, std::min(p.numel, (c + 1) * ch.size),
                   [&](char** ptr, const int64_t* s, int64_t n) {
                     for (int64_t i = 0; i < n; ++i)
                       if (*reinterpret_cast<const bool*>(ptr[0] + i * s[0]))
                         *o++ = *reinterpret_cast<const T*>(ptr[1] + i * s[1]);
                   });
      }
    });
  }
};

// in[0] = self; *out becomes int64 [n, ndim] holding the coordinates of
// the nonzero elements in row-major order.
template <class T>
struct NonzeroK {
  static void run(KernelArgs& a) {
    const Tensor& self = *a.in[0];
    const int nd = int(self.dim());
    Plan p;
    plan_init(p, self.sizes());
    plan_add(p, self);
    plan_coalesce(p);
    const int64_t numel = self.numel();
    Chunks ch(numel);
    parallel_for(0, ch.n, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        int64_t cnt = 0;
        plan_range(p, c * ch.size, std::min(numel, (c + 1) * ch.size),
                   [&](char** ptr, const int64_t* s, int64_t n) {
                     for (int64_t i = 0; i < n; ++i)
                       cnt += nonzero_value<T>(ptr[0] + i * s[0]);
                   });
        ch.count[c] = cnt;
      }
    });
    const int64_t total = ch.prefix();
    *a.out = Tensor::empty({total, int64_t(nd)}, DType::Int64, self.device());
    int64_t* out = static_cast<int64_t*>(a.out->data_ptr());
    const int64_t* sizes = self.sizes().data();
    const int64_t* strides = self.strides().data();
    const char* base = static_cast<const char*>(self.data_ptr());
    const int64_t isz = int64_t(sizeof(T));
    parallel_for(0, ch.n, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        const int64_t b = c * ch.size, e = std::min(numel, (c + 1) * ch.size);
        if (b >= e) continue;
        // Row-major multi-index of b, advanced with carries.
        int64_t idx[kMaxDims];
        int64_t rem = b, off = 0;
        for (int d = nd - 1; d >= 0; --d) {
          idx[d] = rem % sizes[d];
          rem /= sizes[d];
          off += idx[d] * strides[d];
        }
        int64_t* o = out + ch.count[c] * nd;
        for (int64_t i = b; i < e; ++i) {
          if (nonzero_value<T>(base + off * isz)) {
            for (int d = 0; d < nd; ++d) o[d] = idx[d];
            o += nd;
          }
          for (int d = nd - 1; d >= 0; --d) {
            off += strides[d];
            if (++idx[d] < sizes[d]) break;
            off -= idx[d] * strides[d];
            idx[d] = 0;
          }
        }
      }
    });
  }
};

// ----------------------------------------------------------- tril/triu --
// in[0] and out are contiguous [..., R, C] (may be the same tensor);
// keeps elements with col - row <= i0 (tril) or >= i0 (triu), zeroes the
// rest.
template <bool kLower>
struct Tri {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      Tensor& out = *a.out;
      if (out.numel() == 0) return;
      const int64_t R = out.sizes()[out.dim() - 2];
      const int64_t C = out.sizes()[out.dim() - 1];
      const int64_t rows = out.numel() / C;
      const int64_t k = a.i0;
      const T* in = static_cast<const T*>(a.in[0]->data_ptr());
      T* o = static_cast<T*>(out.data_ptr());
      const bool inplace = in == o;
      const int64_t grain = std::max<int64_t>(1, kGrainSize / C);
      parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t i = r % R;
          // Columns [lo, hi) are kept.
          int64_t lo = kLower ? 0 : std::min(std::max<int64_t>(i + k, 0), C);
          int64_t hi = kLower ? std::min(std::max<int64_t>(i + k + 1, 0), C)
                              : C;
          T* orow = o + r * C;
          const T* irow = in + r * C;
          for (int64_t j = 0; j < lo; ++j) orow[j] = T(0);
          if (!inplace && hi > lo)
            std::memcpy(orow + lo, irow + lo, size_t(hi - lo) * sizeof(T));
          for (int64_t j = hi; j < C; ++j) orow[j] = T(0);
        }
      });
    }
  };
};

// ----------------------------------------------------------- flip, roll --
// flip: out contiguous, in[0] = self; dims lists the flipped dims.
template <class T>
struct FlipK {
  static void run(KernelArgs& a) {
    Tensor& out = *a.out;
    const Tensor& self = *a.in[0];
    if (out.numel() == 0) return;
    const int nd = int(self.dim());
    int64_t strides[kMaxDims];
    char* src = static_cast<char*>(self.data_ptr());
    for (int d = 0; d < nd; ++d) strides[d] = self.strides()[d];
    for (int64_t d : a.dims) {
      src += (self.sizes()[d] - 1) * strides[d] * int64_t(sizeof(T));
      strides[d] = -strides[d];
    }
    Plan p;
    plan_init(p, out.sizes());
    plan_add(p, out);
    plan_add(p, src, strides, int64_t(sizeof(T)));
    plan_coalesce(p);
    copy_plan<T>(p);
  }
};

// roll: out contiguous, in[0] = self; dims = [d_0..d_{k-1}, s_0..s_{k-1}]
// with shifts already in [0, size). Copies the 2^k blocks a roll along k
// dims moves as whole pieces.
template <class T>
struct RollK {
  static void run(KernelArgs& a) {
    Tensor& out = *a.out;
    const Tensor& self = *a.in[0];
    if (out.numel() == 0) return;
    const int nd = int(self.dim());
    const int k = int(a.dims.size() / 2);
    const int64_t isz = int64_t(sizeof(T));
    for (int64_t mask = 0; mask < (int64_t(1) << k); ++mask) {
      int64_t sizes[kMaxDims];
      char* dst = static_cast<char*>(out.data_ptr());
      char* src = static_cast<char*>(self.data_ptr());
      for (int d = 0; d < nd; ++d) sizes[d] = self.sizes()[d];
      bool empty = false;
      for (int j = 0; j < k; ++j) {
        const int64_t d = a.dims[j], s = a.dims[k + j], n = sizes[d];
        // Bit set: the tail [n - s, n) moves to [0, s); else the head
        // [0, n - s) moves to [s, n).
        if ((mask >> j) & 1) {
          sizes[d] = s;
          src += (n - s) * self.strides()[d] * isz;
        } else {
          sizes[d] = n - s;
          dst += s * out.strides()[d] * isz;
        }
        empty |= sizes[d] == 0;
      }
      if (empty) continue;
      Plan p;
      plan_init(p, IntList(sizes, size_t(nd)));
      plan_add(p, dst, out.strides().data(), isz);
      plan_add(p, src, self.strides().data(), isz);
      plan_coalesce(p);
      copy_plan<T>(p);
    }
  }
};

// ------------------------------------------------------------- resample --
// Each of o output positions along a dim is a weighted sum of K input
// positions (interpolate's taps: K = 2 linear, 4 cubic). in[0] dense
// [outer, n, inner], in[1] int64 idx [o, K] in [0, n), in[2] T w [o, K],
// dims = [outer, n, inner], i0 = K. Forward (i1 = 0): out dense
// [outer, o, inner], out(r, j) = sum_k w[j, k] in(r, idx[j, k]), summed in
// k's order. Adjoint (i1 = 1; in[0] is then [outer, o, inner], out
// [outer, n, inner]): out zeroed, then out(r, idx[j, k]) += w[j, k]
// in(r, j) in j's order, so a thread owns whole output rows or columns.
template <class T>
struct Resample {
  const T* src;  // in[0]: the values (forward) or the gradient (adjoint)
  const int64_t* idx;
  const T* w;
  T* out;
  int64_t outer, n, inner, o;
  int K;

  void forward() const {
    if (inner == 1) {  // the last dim: a gather per tap
      // rows of o outputs; KC the tap count when known at compile time
      auto rows = [&](auto kc) {
        constexpr int KC = decltype(kc)::value;
        const int taps = KC > 0 ? KC : K;
        parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / (o * taps)),
                     [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const T* s = src + r * n;
            T* d = out + r * o;
            for (int64_t j = 0; j < o; ++j) {
              const int64_t* ij = idx + j * taps;
              const T* wj = w + j * taps;
              T acc = s[ij[0]] * wj[0];
              for (int k = 1; k < taps; ++k) acc += s[ij[k]] * wj[k];
              d[j] = acc;
            }
          }
        });
      };
      if (K == 2)
        rows(std::integral_constant<int, 2>{});
      else if (K == 4)
        rows(std::integral_constant<int, 4>{});
      else
        rows(std::integral_constant<int, 0>{});
      return;
    }
    // whole rows of `inner` values: out row (r, j) from in rows (r, idx)
    parallel_for(0, outer * o, std::max<int64_t>(1, kGrainSize / (K * inner)),
                 [&](int64_t b, int64_t e) {
      int64_t r = b / o, j = b - r * o;
      for (int64_t q = b; q < e; ++q) {
        const T* base = src + r * n * inner;
        const int64_t* ij = idx + j * K;
        const T* wj = w + j * K;
        T* d = out + q * inner;
        const T* s0 = base + ij[0] * inner;
        const T w0 = wj[0];
        if (K == 2) {
          const T* s1 = base + ij[1] * inner;
          const T w1 = wj[1];
          for (int64_t i = 0; i < inner; ++i) d[i] = s0[i] * w0 + s1[i] * w1;
        } else {
          for (int64_t i = 0; i < inner; ++i) d[i] = s0[i] * w0;
          for (int k = 1; k < K; ++k) {
            const T* sk = base + ij[k] * inner;
            const T wk = wj[k];
            for (int64_t i = 0; i < inner; ++i) d[i] += sk[i] * wk;
          }
        }
        if (++j == o) {
          j = 0;
          ++r;
        }
      }
    });
  }
  void adjoint() const {
    // a task: one r and a block of columns [c0, c1) of its n rows
    constexpr int64_t kBlock = 1024;
    const int64_t blocks = (inner + kBlock - 1) / kBlock;
    const int64_t work = std::max<int64_t>(1, (n + o * K) * std::min(inner,
                                                                    kBlock));
    parallel_for(0, outer * blocks, std::max<int64_t>(1, kGrainSize / work),
                 [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t r = t / blocks, c0 = (t - r * blocks) * kBlock;
        const int64_t c1 = std::min(inner, c0 + kBlock), m = c1 - c0;
        T* d = out + r * n * inner + c0;
        const T* s = src + r * o * inner + c0;
        if (m == inner)  // whole rows: one span
          std::memset(d, 0, size_t(n * m) * sizeof(T));
        else
          for (int64_t i = 0; i < n; ++i)
            std::memset(d + i * inner, 0, size_t(m) * sizeof(T));
        for (int64_t j = 0; j < o; ++j) {
          const T* sj = s + j * inner;
          for (int k = 0; k < K; ++k) {
            T* dk = d + idx[j * K + k] * inner;
            const T wk = w[j * K + k];
            for (int64_t i = 0; i < m; ++i) dk[i] += wk * sj[i];
          }
        }
      }
    });
  }
};

template <class T>
struct ResampleK {
  static void run(KernelArgs& a) {
    if (a.out->numel() == 0) return;
    const Resample<T> r{static_cast<const T*>(a.in[0]->data_ptr()),
                        static_cast<const int64_t*>(a.in[1]->data_ptr()),
                        static_cast<const T*>(a.in[2]->data_ptr()),
                        static_cast<T*>(a.out->data_ptr()),
                        a.dims[0], a.dims[1], a.dims[2],
                        a.in[1]->sizes()[0], int(a.i0)};
    if (a.i1)
      r.adjoint();
    else
      r.forward();
  }
};

}  // namespace

void register_index_kernels() {
#define FASTT_KERNELS_index
#define FASTT_KERNELS_resample
#include "kernels/kernels.def"
}

}  // namespace fastt
