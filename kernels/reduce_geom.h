// Shared by the CPU (kernels/cpu/reduce_impl.h) and CUDA
// (kernels/cuda/reduce.cuh) reduction drivers: the geometry (how an input
// splits into kept and reduced dims; host code) and the FASTT_HD functors
// whose math is the same on both.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "csrc/macros.h"
#include "csrc/tensor.h"
#include "kernels/functors.h"

namespace fastt {
namespace reduce_geom {

// ------------------------------------------------------------ geometry --
// The input seen as kept dims (which index the contiguous output, row-major)
// and reduced dims, each list slowest first, size-1 dims dropped and
// adjacent dims merged where the strides allow. Strides are in elements.
struct ReduceGeom {
  int nk = 0, nr = 0;
  int64_t ksize[kMaxDims], kstride[kMaxDims];
  int64_t rsize[kMaxDims], rstride[kMaxDims];
  int64_t n_out = 1, n_red = 1;
};

inline int coalesce(int n, int64_t* size, int64_t* stride) {
  if (n == 0) return 0;
  int k = 0;
  for (int i = 1; i < n; ++i) {
    if (stride[k] == size[i] * stride[i]) {
      size[k] *= size[i];
      stride[k] = stride[i];
    } else {
      ++k;
      size[k] = size[i];
      stride[k] = stride[i];
    }
  }
  return k + 1;
}

// `dims` empty means all dims. `ordered`: keep the reduced dims in logical
// order (ops that report indices); otherwise sort them by stride so the
// innermost reduced dim is the densest.
inline void build_geom(const Tensor& in, IntList dims, bool ordered,
                       ReduceGeom& g) {
  if (dims.empty() && in.is_contiguous()) {  // full dense reduction
    g.nr = 1;
    g.rsize[0] = g.n_red = in.numel();
    g.rstride[0] = 1;
    return;
  }
  const int nd = int(in.dim());
  uint32_t mask = 0;
  if (dims.empty()) {
    mask = ~0u;
  } else {
    for (int64_t d : dims) mask |= 1u << d;
  }
  const int64_t* sizes = in.sizes().data();
  const int64_t* strides = in.strides().data();
  for (int d = 0; d < nd; ++d) {
    if ((mask >> d) & 1u) {
      g.n_red *= sizes[d];
      if (sizes[d] != 1) {
        g.rsize[g.nr] = sizes[d];
        g.rstride[g.nr++] = strides[d];
      }
    } else {
      g.n_out *= sizes[d];
      if (sizes[d] != 1) {
        g.ksize[g.nk] = sizes[d];
        g.kstride[g.nk++] = strides[d];
      }
    }
  }
  if (!ordered) {  // insertion sort, descending stride, stable
    for (int i = 1; i < g.nr; ++i) {
      int64_t s = g.rsize[i], t = g.rstride[i];
      int j = i;
      for (; j > 0 && g.rstride[j - 1] < t; --j) {
        g.rsize[j] = g.rsize[j - 1];
        g.rstride[j] = g.rstride[j - 1];
      }
      g.rsize[j] = s;
      g.rstride[j] = t;
    }
  }
  g.nk = coalesce(g.nk, g.ksize, g.kstride);
  g.nr = coalesce(g.nr, g.rsize, g.rstride);
  if (g.nr == 0) {  // a single element per output
    g.nr = 1;
    g.rsize[0] = 1;
    g.rstride[0] = 1;
  }
}

// A dim-wise op's input (softmax, scans) seen as [outer, n, inner] around
// `dim`.
inline void split_dims(const Tensor& t, int64_t dim, int64_t* outer,
                       int64_t* n, int64_t* inner) {
  *outer = *n = *inner = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t s = t.sizes()[size_t(d)];
    if (d < dim) *outer *= s;
    else if (d == dim) *n = s;
    else *inner *= s;
  }
}

}  // namespace reduce_geom

// ------------------------------------------------------------ functors --
// Each: state, init(), step(state, value, reduced index), combine(a, b);
// kLanes: the CPU may fold a dense run into independent accumulators
// (order-insensitive ops). The CUDA driver combines interleaved parts of a
// row in any order, so combine must not rely on which side came first.
namespace reduce_ops {

// Integer accumulation wraps like torch (through unsigned: no UB).
template <class A>
FASTT_HD A wrap_add(A a, A b) {
  if constexpr (std::is_integral<A>::value)
    return A(std::make_unsigned_t<A>(a) + std::make_unsigned_t<A>(b));
  else
    return a + b;
}
template <class A>
FASTT_HD A wrap_mul(A a, A b) {
  if constexpr (std::is_integral<A>::value)
    return A(std::make_unsigned_t<A>(a) * std::make_unsigned_t<A>(b));
  else
    return a * b;
}

template <class V>
FASTT_HD constexpr V lowest() {
  if constexpr (std::is_floating_point<V>::value)
    return -std::numeric_limits<V>::infinity();
  else
    return std::numeric_limits<V>::lowest();
}
template <class V>
FASTT_HD constexpr V highest() {
  if constexpr (std::is_floating_point<V>::value)
    return std::numeric_limits<V>::infinity();
  else
    return std::numeric_limits<V>::max();
}

template <class A>
struct SumR {
  using state = A;
  static constexpr bool kLanes = true;
  FASTT_HD A init() const { return A(0); }
  template <class X>
  FASTT_HD A step(A s, X x, int64_t) const { return wrap_add(s, A(x)); }
  FASTT_HD A combine(A a, A b) const { return wrap_add(a, b); }
};
template <class A>
struct ProdR {
  using state = A;
  static constexpr bool kLanes = true;
  FASTT_HD A init() const { return A(1); }
  template <class X>
  FASTT_HD A step(A s, X x, int64_t) const { return wrap_mul(s, A(x)); }
  FASTT_HD A combine(A a, A b) const { return wrap_mul(a, b); }
};

// amax/amin: NaN propagates (functors::Maximum/Minimum).
template <class V, bool IsMax>
struct ExtremeR {
  using state = V;
  static constexpr bool kLanes = true;
  FASTT_HD V init() const { return IsMax ? lowest<V>() : highest<V>(); }
  FASTT_HD V step(V s, V x, int64_t) const { return combine(s, x); }
  FASTT_HD V combine(V a, V b) const {
    if constexpr (IsMax) return functors::Maximum{}(a, b);
    else return functors::Minimum{}(a, b);
  }
};

// max/min over a dim and argmax/argmin: the first extreme wins, and a NaN
// beats any number (the first NaN is reported, like torch). Each part
// steps through ascending indices; combine breaks ties by the smaller
// index so the result does not depend on how a row was split.
template <class V>
struct ValIdx {
  V v;
  int64_t i;
};
template <class V, bool IsMax>
struct ArgR {
  using state = ValIdx<V>;
  static constexpr bool kLanes = false;
  FASTT_HD static bool better(V x, V v) {
    if constexpr (std::is_floating_point<V>::value) {
      if (x != x) return v == v;
    }
    return IsMax ? x > v : x < v;
  }
  FASTT_HD state init() const { return {V(0), -1}; }
  FASTT_HD state step(state s, V x, int64_t idx) const {
    return (s.i < 0 || better(x, s.v)) ? state{x, idx} : s;
  }
  FASTT_HD state combine(state a, state b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    if (better(b.v, a.v)) return b;
    if (better(a.v, b.v)) return a;
    return b.i < a.i ? b : a;
  }
};

// The inf/-inf vector norms: extremes of |x|.
template <class V, bool IsMax>
struct NormExtremeR {
  using state = V;
  static constexpr bool kLanes = true;
  ExtremeR<V, IsMax> e;
  FASTT_HD V init() const { return e.init(); }
  FASTT_HD V step(V s, V x, int64_t) const {
    return e.combine(s, x < V(0) ? -x : x);
  }
  FASTT_HD V combine(V a, V b) const { return e.combine(a, b); }
};

// The vector norm of order p, by kind: sum(std::integral_constant<int, K>)
// with K = p for p = 0, 1, 2 and K = 3 for any other finite p (sums of
// |x|^p), extreme(std::bool_constant<p > 0>) for p = +-inf (max/min |x|).
template <class Sum, class Extreme>
inline void by_norm_order(double p, Sum&& sum, Extreme&& extreme) {
  if (p == 0.0) sum(std::integral_constant<int, 0>{});
  else if (p == 1.0) sum(std::integral_constant<int, 1>{});
  else if (p == 2.0) sum(std::integral_constant<int, 2>{});
  else if (std::isinf(p) && p > 0) extreme(std::true_type{});
  else if (std::isinf(p)) extreme(std::false_type{});
  else sum(std::integral_constant<int, 3>{});
}

// logsumexp, online: (running max, sum of exp(x - max)) in A.
template <class A>
struct LseState {
  A m, s;
};
template <class A>
struct LogSumExpR {
  using state = LseState<A>;
  static constexpr bool kLanes = true;
  FASTT_HD static A scale(A from, A to) {
    return from == to ? A(1) : std::exp(from - to);
  }
  FASTT_HD state init() const { return {lowest<A>(), A(0)}; }
  template <class X>
  FASTT_HD state step(state st, X xv, int64_t) const {
    const A x = A(xv);
    if (x > st.m) {
      st.s = st.s * scale(st.m, x) + A(1);
      st.m = x;
    } else {
      st.s += scale(x, st.m);  // a NaN x makes s NaN
    }
    return st;
  }
  FASTT_HD state combine(state a, state b) const {
    const A m = a.m > b.m ? a.m : b.m;
    return {m, a.s * scale(a.m, m) + b.s * scale(b.m, m)};
  }
  FASTT_HD static A finish(state st) {
    if (st.s != st.s) return st.s;
    if (std::isinf(st.m)) return st.m;
    return st.m + std::log(st.s);
  }
};

}  // namespace reduce_ops
}  // namespace fastt
