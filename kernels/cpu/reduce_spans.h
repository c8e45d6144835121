// Vectorized folds of one dense run, used by the reduction driver
// (reduce_impl.h's reduce_run: per-row sums and max/min) and by the
// whole-tensor folds (reduce_dense.h): wide independent lanes in
// AVX2/AVX-512 builds. Included by reduce_impl.h; the reduce_*.cpp files
// include kernels/cpu/vec_exp.h first (its FP options make the selects
// vectorize).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/cpu/half_block.h"
#include "kernels/cpu/vec_clones.h"
#include "kernels/cpu/vec_exp.h"  // vec_exp_bounded (lse_rows), pick_nan

namespace fastt {
namespace reduce_impl {
namespace {
using cpu::kIsHalfFloat;
using cpu::kVecBytes;
using cpu::to_float_block;
using cpu::pick_nan;
using cpu::vec_exp_bounded;

// n elements of p as float32: p itself, or float16/bfloat16 converted
// into buf (F16C for float16: Half's portable conversion neither inlines
// nor vectorizes).
template <class T>
FASTT_VEC_INLINE const float* as_floats(const T* p, float* buf, int64_t n) {
  if constexpr (kIsHalfFloat<T>) {
    to_float_block(p, buf, n);
    return buf;
  } else {
    static_assert(std::is_same<T, float>::value, "float32 or 16-bit");
    return p;
  }
}

// The L (64 or 16) lanes of the spans below into one, halving with
// constant trip counts so each step is a few full-width vector operations.
// Written as a loop over a halving bound (or as eight columns of eight)
// GCC compiled it to scalar code, branchy for max/min: ~200 ns a call,
// most of a max over rows of 64.
template <int L, class A, class C>
FASTT_VEC_INLINE A fold_lanes(A* acc, C combine) {
  static_assert(L == 64 || L == 16, "64 or 16 lanes");
  if constexpr (L == 64) {
    for (int k = 0; k < 32; ++k) acc[k] = combine(acc[k], acc[k + 32]);
    for (int k = 0; k < 16; ++k) acc[k] = combine(acc[k], acc[k + 16]);
  }
  for (int k = 0; k < 8; ++k) acc[k] = combine(acc[k], acc[k + 8]);
  for (int k = 0; k < 4; ++k) acc[k] = combine(acc[k], acc[k + 4]);
  for (int k = 0; k < 2; ++k) acc[k] = combine(acc[k], acc[k + 2]);
  return combine(acc[0], acc[1]);
}

// The block walk of the dense folds below: blocks of 2H elements, the
// first H read from p0 = x + o0 and the second from p1 = x + o1. Ranges of
// at least kTwoStreams elements are read as two streams, their halves side
// by side (block j < m: o0 = j, o1 = m + j): as one sequential stream, its
// loads in the order GCC schedules them, a 16M float32 sum took 2.8 ms
// (torch 2.1). Then, and for short ranges, blocks are contiguous
// (o1 = o0 + H). Returns where the tail of under 2H elements starts.
// (Picking a step's pointer inside one loop over the steps, or calling the
// body from two loops, left the sum scalar: 7x slower.)
constexpr int64_t kTwoStreams = int64_t(1) << 16;
template <int64_t H, class Body>
FASTT_VEC_INLINE int64_t walk_blocks(int64_t n, Body body) {
  const int64_t m = n >= kTwoStreams ? n / (2 * H) * H : 0;
  const int64_t end = m + (n - 2 * m) / (2 * H) * H;
  for (int64_t j = 0; j < end; j += H) {
    const bool paired = j < m;
    const int64_t o0 = paired ? j : 2 * j;
    body(o0, o0 + (paired ? m : H));
  }
  return 2 * end;
}

// sum of map(x[i]) over a dense float32 range: 64 float lanes (four
// AVX-512 / eight AVX2 accumulators, enough to hide the add latency) each
// add K = 4 mapped inputs in float (K/2 steps from each half of a
// walk_blocks block), then fold into 64 double lanes.
// Converting every input to double (the previous sum) halved the
// throughput: 1M floats 87 us vs torch's 46. Error: four float additions
// per lane per fold, then double, far inside torch's float cascade (which
// drops the ones after a 1e8 that fall in its lane; here at most 3).
// The map is computed in float, as torch's (x*x of 1e20 overflows there).
// The lanes take every element, the tail included (a serial tail of up to
// 255 adds cost more than the blocks: 1000 floats 283 ns), and fold as a
// tree, which vectorizes (the serial fold of 64 lanes was ~50 ns of a
// 16-float sum). Under 32 elements one chain is shorter still. float16 /
// bfloat16 inputs are converted 64 at a time (F16C for float16) into the
// same float lanes: staging whole blocks through a buffer first ran 1.8x
// torch's float16 sum. Their lanes take K = 16 inputs in float before
// double (four: 1.3x torch's time, the conversions to double a third of
// the loop; sixteen 16-bit floats add in float with at most 16 roundings
// of 2^-24, far below the result's own 2^-11 or 2^-8).
struct Identity {
  float operator()(float v) const { return v; }
};
struct AbsF {
  float operator()(float v) const { return v < 0.0f ? -v : v; }
};
struct SquareF {
  float operator()(float v) const { return v * v; }
};
template <class Map, class T = float>
FASTT_VEC_CLONES double sum_span(const T* x, int64_t n) {
  constexpr int L = 64, K = kIsHalfFloat<T> ? 16 : 4;
  const Map map{};
  if (n < 32) {
    double t = 0;
    for (int64_t i = 0; i < n; ++i) t += double(map(float(x[i])));
    return t;
  }
  double dacc[L] = {};
  float v16[kIsHalfFloat<T> ? L : 1];  // one float16/bfloat16 step converted
  int64_t i = walk_blocks<L * K / 2>(n, [&](int64_t o0, int64_t o1) {
    float acc[L] = {};
    for (int h = 0; h < 2; ++h) {
      for (int s = 0; s < K / 2; ++s) {
        const float* v;
        if constexpr (kIsHalfFloat<T>) {
          to_float_block(x + (h ? o1 : o0) + s * L, v16, L);
          v = v16;
        } else {
          v = x + (h ? o1 : o0) + s * L;
        }
        for (int k = 0; k < L; ++k) acc[k] += map(v[k]);
      }
    }
    for (int k = 0; k < L; ++k) dacc[k] += double(acc[k]);
  });
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k) dacc[k] += double(map(float(x[i + k])));
  for (int64_t k = 0; i + k < n; ++k) dacc[k] += double(map(float(x[i + k])));
  return fold_lanes<L>(dacc, [](double p, double q) { return p + q; });
}

// Dense complex64/complex128 sum of n numbers: their 2n parts in 32
// lanes, the even lanes the real parts and the odd lanes the imaginary
// ones, so the loop is the real sum's: blocks of eight steps in the parts'
// own type, then into double lanes (as sum_span; the generic driver's
// scalar complex steps ran a row sum 5-9x torch's time). Up to 16
// numbers (short_pair_sum, inline in a batch of rows): 8 double lanes.
// Both fold as trees that keep the parity.
constexpr int64_t kShortPairs = 16;
template <class R>
inline void short_pair_sum(const R* x, int64_t n, double* re, double* im) {
  const int64_t m = 2 * n;
  double a[8] = {};
  int64_t i = 0;
  for (; i + 8 <= m; i += 8)
    for (int k = 0; k < 8; ++k) a[k] += double(x[i + k]);
  for (int64_t k = 0; i + k < m; ++k) a[k] += double(x[i + k]);
  for (int w = 4; w >= 2; w /= 2)
    for (int k = 0; k < w; ++k) a[k] += a[k + w];
  *re = a[0];
  *im = a[1];
}
template <class R>
FASTT_VEC_CLONES void pair_sum(const R* x, int64_t n, double* re,
                               double* im) {
  constexpr int L = 32, K = 8;
  const int64_t m = 2 * n;
  if (n <= kShortPairs) return short_pair_sum(x, n, re, im);
  double dacc[L] = {};
  int64_t i = 0;
  for (; i + K * L <= m; i += K * L) {
    R acc[L] = {};
    for (int s = 0; s < K; ++s)
      for (int k = 0; k < L; ++k) acc[k] += x[i + s * L + k];
    for (int k = 0; k < L; ++k) dacc[k] += double(acc[k]);
  }
  for (; i + L <= m; i += L)
    for (int k = 0; k < L; ++k) dacc[k] += double(x[i + k]);
  for (int64_t k = 0; i + k < m; ++k) dacc[k] += double(x[i + k]);
  for (int w = L / 2; w >= 2; w /= 2)  // a tree that keeps the parity
    for (int k = 0; k < w; ++k) dacc[k] += dacc[k + w];
  *re = dacc[0];
  *im = dacc[1];
}

// Dense float32/float64 max or min of a range: 64 lanes, each taking one
// element from each half of a walk_blocks block by a plain select (a NaN
// is never taken: v > NaN and NaN > a are false) and noting NaNs on the
// side, one unordered compare per pair of elements. That is about half
// the vector operations of a NaN-propagating select per element (compare,
// NaN compare, or, blend; 1M float32 max was 1.24x torch). The tail takes
// the propagating select, and any NaN makes the result NaN, as torch's.
// The generic driver's 8-lane loop stayed scalar in the SSE2 build: 1M
// float32 max took 5.6x torch's time.
template <class T, bool IsMax>
FASTT_VEC_CLONES T extreme_span(const T* x, int64_t n, T init) {
  constexpr int L = 64;
  // The combine as a select (ExtremeR's branches neither vectorize nor
  // predict on random data: the fold alone cost ~200 ns a call).
  const auto pick = [](T a, T b) { return pick_nan<IsMax>(a, b); };
  if (n < 32) {  // short: no lanes to set up and fold
    T s = init;
    for (int64_t i = 0; i < n; ++i) s = pick(s, x[i]);
    return s;
  }
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  T acc[L];
  I nan[L] = {};
  for (int k = 0; k < L; ++k) acc[k] = init;
  int64_t i = walk_blocks<L>(n, [&](int64_t o0, int64_t o1) {
    for (int k = 0; k < L; ++k) {
      const T a = x[o0 + k], b = x[o1 + k];
      T r = (IsMax ? a > acc[k] : a < acc[k]) ? a : acc[k];
      acc[k] = (IsMax ? b > r : b < r) ? b : r;
      nan[k] |= I(__builtin_isunordered(a, b));
    }
  });
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k) acc[k] = pick(acc[k], x[i + k]);
  for (int64_t k = 0; i + k < n; ++k) acc[k] = pick(acc[k], x[i + k]);
  I any = 0;
  for (int k = 0; k < L; ++k) any |= nan[k];
  return any ? T(NAN) : fold_lanes<L>(acc, pick);
}

// GCC vector types of the level's native width (vec_clones.h's
// kVecBytes: these files are compiled once per instruction-set level): the
// row folds below keep their lanes in registers with them. Written as
// `omp simd` loops over lane arrays, GCC kept the lanes on the stack and
// folded them with scalar loads (amax over rows of 64: 37 us, now 20).
template <class T, int B>
struct VecOf {
  typedef T type __attribute__((vector_size(B)));
};
template <class T, int B = kVecBytes>
using Vec = typename VecOf<T, B>::type;
template <class V>
FASTT_VEC_INLINE V vload(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <bool IsMax, class V>
FASTT_VEC_INLINE V vpick(V a, V b) {  // vectors or scalars; no NaN handling
  return (IsMax ? b > a : b < a) ? b : a;
}
// The low and high halves of v (shuffles: through memory, a wide store
// read back as narrower loads stalls store forwarding, most of the fold).
template <class T, int B, size_t Off, size_t... I>
FASTT_VEC_INLINE Vec<T, B / 2> vhalf(const Vec<T, B>& v,
                                     std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, (I + Off)...);
}
template <class T, int B>
FASTT_VEC_INLINE Vec<T, B / 2> vlo(const Vec<T, B>& v) {
  return vhalf<T, B, 0>(v, std::make_index_sequence<B / 2 / sizeof(T)>{});
}
template <class T, int B>
FASTT_VEC_INLINE Vec<T, B / 2> vhi(const Vec<T, B>& v) {
  return vhalf<T, B, B / 2 / sizeof(T)>(
      v, std::make_index_sequence<B / 2 / sizeof(T)>{});
}
// 0, 1, 2, ... in the lanes (a lane's index, for masks and positions)
template <class I, int B>
FASTT_VEC_INLINE Vec<I, B> viota() {
  Vec<I, B> v;
  for (int k = 0; k < int(B / sizeof(I)); ++k) v[k] = I(k);
  return v;
}
// The lanes of v into one value by c (vectors and scalars alike), halving.
template <class T, int B, class C>
FASTT_VEC_INLINE T vreduce(Vec<T, B> v, C c) {
  if constexpr (B > int(sizeof(T)))
    return vreduce<T, B / 2>(c(vlo<T, B>(v), vhi<T, B>(v)), c);
  else
    return v[0];
}
template <bool IsMax, class T, int B>
FASTT_VEC_INLINE T vfold(Vec<T, B> v) {
  return vreduce<T, B>(v, [](auto a, auto b) { return vpick<IsMax>(a, b); });
}

// Batches of dense rows of up to kMaxRow elements (a sum, max/min or
// logsumexp over the last dim): one vector's worth of lanes per row rather
// than the spans' 64, whose setup and fold outweighed a row of 64 (sum(-1)
// over rows of 64 ran 2.2x torch's time, amax(-1) 4.5x), and, in the clone
// builds, one call of the clone per batch rather than per row. Blocks of
// four vectors fold as a tree into the lanes (a sum adds 2 + 2 in float,
// then in double, as sum_span; max/min note NaNs on the side, as
// extreme_span), and the tail is the row's last vector, its lanes already
// taken masked out of a sum (max/min are idempotent). Rows shorter than a
// vector take half the width, down to 16 bytes, then a scalar loop; through
// reduce_span one by one, rows of 8 ran 2.5x torch. Sums and max/min hold
// their lanes in vector types and fold them by shuffles: as `omp simd`
// loops over lane arrays GCC kept them on the stack and folded them with
// scalar loads (sum(-1) over rows of 33 took 2.1x torch's time, 64 1.6x,
// 257 1.3x). A sum's lanes fold in double, short rows too: folded in
// float, [1e8, -1e8, 1, 1] summed to 0 (torch and NumPy: 2) and the
// result depended on the vector width. (lse_rows keeps lane arrays.)
constexpr int64_t kMaxRow = 16384;
constexpr int64_t kRowBatch = 64;  // rows a call takes at most
// One row's sum; float16/bfloat16 steps are converted into cv (4 vectors
// of floats).
template <class T, int B = kVecBytes>
FASTT_VEC_INLINE double row_sum(const T* x, int64_t n, float* cv) {
  constexpr int W = B / 4;
  using F = Vec<float, B>;
  using D = Vec<double, B>;
  if (n < W) {
    if constexpr (B > 16) {
      return row_sum<T, B / 2>(x, n, cv);
    } else {
      const float* p = as_floats(x, cv, n);
      double t = 0;
      for (int64_t i = 0; i < n; ++i) t += double(p[i]);
      return t;
    }
  }
  const auto step = [&](int64_t i, int j) {  // (cv: 16-bit types only)
    return vload<F>(as_floats(x + i, kIsHalfFloat<T> ? cv + j * W : cv, W));
  };
  const auto plus = [](auto p, auto q) { return p + q; };
  // From i: up to three whole vectors and the last W elements (those
  // already taken masked out), added in float as one block.
  const auto rest = [&](int64_t i) {
    F r = F{};
    for (int j = 0; i + W <= n; i += W, ++j) r += step(i, j);
    if (i < n) {
      const F t = step(n - W, 3);
      r += viota<int32_t, B>() >= int32_t(W - (n - i)) ? t : F{};
    }
    return r;
  };
  // The lanes in double: two vectors, the float vector's halves. The
  // float vector converts whole and is split after (GCC lowered a
  // conversion of each half on its own to 128-bit pieces).
  D d0 = D{}, d1 = D{};
  const auto add = [&](F v) {
    const Vec<double, 2 * B> w = __builtin_convertvector(v, Vec<double, 2 * B>);
    d0 += vlo<double, 2 * B>(w);
    d1 += vhi<double, 2 * B>(w);
  };
  // 4 vectors from i, added 2 + 2
  const auto block = [&](int64_t i) {
    return (step(i, 0) + step(i + 2 * W, 2)) +
           (step(i + W, 1) + step(i + 3 * W, 3));
  };
  int64_t i = 0;
  if constexpr (kIsHalfFloat<T>) {  // 16-bit: 4 blocks in float, as sum_span
    for (; i + 16 * W <= n; i += 16 * W)
      add((block(i) + block(i + 4 * W)) +
          (block(i + 8 * W) + block(i + 12 * W)));
  }
  for (; i + 4 * W <= n; i += 4 * W) add(block(i));
  if (i < n) add(rest(i));
  return vreduce<double, B>(d0 + d1, plus);
}
template <class T = float>
FASTT_VEC_CLONES void sum_rows(const T* const* rows, int64_t count,
                               int64_t n, double* out) {
  float cv[kIsHalfFloat<T> ? 4 * (kVecBytes / 4) : 1];  // 4 vectors
  for (int64_t r = 0; r < count; ++r) out[r] = row_sum<T>(rows[r], n, cv);
}

// Column sums (a sum over dim 0 of a matrix, a bias gradient): acc[j] +=
// the sum of map(x[r * rs + j]) over r < rows, for the column driver's
// block of n <= kColBlock outputs. Four rows at a time are added in float
// (2 + 2, as sum_rows) and then into the double accumulators: row by row
// in double, the accumulators' loads and stores bound the loop (float32
// sum(0) of 4096x64 1.57x torch's time, float16 3x). float16/bfloat16 rows
// are converted first. Dense matrices narrower than a block are read as
// wider ones.
constexpr int64_t kColBlock = 64;
template <class Map, class T = float>
FASTT_VEC_CLONES void sum_cols(const T* x, int64_t rs, int64_t rows,
                               int64_t n, double* acc) {
  if (rs == n && n <= kColBlock / 2 && rows >= 4 * (kColBlock / n)) {
    // A narrow dense matrix (8 columns: a loop of 8 lanes per row ran 2.2x
    // torch's time, 3 columns 2.1x) as one of W = kColBlock / n * n
    // columns, each of its rows W / n of the original's: column k's sum is
    // that of the wide columns k, k + n, k + 2n, ...
    const int64_t per = kColBlock / n, w = per * n, wide_rows = rows / per;
    double wide[kColBlock] = {};
    sum_cols<Map, T>(x, w, wide_rows, w, wide);
    for (int64_t k = 0; k < w; ++k) acc[k % n] += wide[k];
    x += wide_rows * per * rs;
    rows -= wide_rows * per;
  }
  const Map map{};
  float cv[kIsHalfFloat<T> ? 4 * kColBlock : 1];
  // whole blocks with a constant width: the conversions and lane loops
  // unroll (float16 sum(0) of 4096x64 23.6 -> 16.8 us, float32 512x512
  // 20.1 -> 11.4)
  const auto body = [&](auto width) {
    const int64_t w = width;
    const auto row = [&](int64_t r, int j) {
      return as_floats(x + r * rs, cv + j * kColBlock, w);
    };
    // four rows into part (2 + 2)
    const auto four = [&](int64_t r, float* part) {
      const float* x0 = row(r, 0);
      const float* x1 = row(r + 1, 1);
      const float* x2 = row(r + 2, 2);
      const float* x3 = row(r + 3, 3);
#pragma omp simd
      for (int64_t k = 0; k < w; ++k)
        part[k] += (map(x0[k]) + map(x2[k])) + (map(x1[k]) + map(x3[k]));
    };
    int64_t r = 0;
    // 16-bit rows: sixteen rows in float before double, as sum_span
    constexpr int G = kIsHalfFloat<T> ? 4 : 1;
    for (; r + 4 * G <= rows; r += 4 * G) {
      float part[kColBlock];
      for (int64_t k = 0; k < w; ++k) part[k] = 0.0f;
      for (int g = 0; g < G; ++g) four(r + 4 * g, part);
#pragma omp simd
      for (int64_t k = 0; k < w; ++k) acc[k] += double(part[k]);
    }
    for (; r < rows; ++r) {
      const float* x0 = row(r, 0);
#pragma omp simd
      for (int64_t k = 0; k < w; ++k) acc[k] += double(map(x0[k]));
    }
  };
  if (n == kColBlock)
    body(std::integral_constant<int64_t, kColBlock>{});
  else
    body(n);
}

// max/min of one row for extreme_rows and lse_rows: one vector of lanes,
// blocks of four vectors folded as a tree into it, the tail as the row's
// last vector again (max and min are idempotent); NaNs are noted on the
// side, as in extreme_span. Rows shorter than a vector take half the
// width, down to 16 bytes, then a scalar loop; rows from 1K, extreme_span.
template <class T, bool IsMax, int B = kVecBytes>
FASTT_VEC_INLINE T row_extreme(const T* x, int64_t n, T init) {
  constexpr int W = B / sizeof(T);
  using V = Vec<T, B>;
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  // From 1K elements the span's 64 lanes win (one chain here: 16K float32
  // 17 us against 12).
  if (n >= 1024) return extreme_span<T, IsMax>(x, n, init);
  if (n < W) {
    if constexpr (B > 16) {
      return row_extreme<T, IsMax, B / 2>(x, n, init);
    } else {
      T s = init;
      for (int64_t i = 0; i < n; ++i)
        s = pick_nan<IsMax>(s, x[i]);
      return s;
    }
  }
  V acc = V{} + init;
  Vec<I, B> nan = Vec<I, B>{};
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    const V a = vload<V>(x + i), b = vload<V>(x + i + W);
    const V c = vload<V>(x + i + 2 * W), e = vload<V>(x + i + 3 * W);
    acc = vpick<IsMax>(acc,
                       vpick<IsMax>(vpick<IsMax>(a, b), vpick<IsMax>(c, e)));
    nan |= (a != a) | (b != b) | (c != c) | (e != e);
  }
  for (; i + W <= n; i += W) {
    const V a = vload<V>(x + i);
    acc = vpick<IsMax>(acc, a);
    nan |= a != a;
  }
  if (i < n) {
    const V a = vload<V>(x + n - W);
    acc = vpick<IsMax>(acc, a);
    nan |= a != a;
  }
  const I any = vreduce<I, B>(nan, [](auto p, auto q) { return p | q; });
  return any ? T(NAN) : vfold<IsMax, T, B>(acc);
}
template <class T, bool IsMax>
FASTT_VEC_CLONES void extreme_rows(const T* const* rows, int64_t count,
                                   int64_t n, T init, T* out) {
  for (int64_t r = 0; r < count; ++r)
    out[r] = row_extreme<T, IsMax>(rows[r], n, init);
}

// The first index of m in x[0, n) (of a NaN where m is NaN), m being
// there: a vector compared at a time, the hit's lane picked without
// branches (a scalar scan's mispredictions were most of a row of 16),
// the tail as the row's last vector (the elements before i hold no hit).
// Rows shorter than a vector take half the width, down to 16 bytes.
template <class T, int B = kVecBytes>
FASTT_VEC_INLINE int64_t find_first(const T* x, int64_t n, T m) {
  constexpr int W = B / sizeof(T);
  const bool nan = m != m;
  if (n < W) {
    if constexpr (B > 16) {
      return find_first<T, B / 2>(x, n, m);
    } else {
      for (int64_t i = 0; i < n; ++i)
        if (nan ? x[i] != x[i] : x[i] == m) return i;
      return n - 1;  // not reached
    }
  }
  using V = Vec<T, B>;
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  using IV = Vec<I, B>;
  const IV lane = viota<I, B>();
  const auto first = [&](const T* p) {  // W where no lane hits
    const V v = vload<V>(p);
    const IV hit = nan ? IV(v != v) : IV(v == m);
    return vreduce<I, B>(hit ? lane : IV{} + I(W),
                         [](auto a, auto b) { return a < b ? a : b; });
  };
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const I k = first(x + i);
    if (k < W) return i + k;
  }
  return i < n ? n - W + first(x + n - W) : n - 1;
}
// max/min with its index (max(-1), argmax) over each of a batch of dense
// rows: the extreme by row_extreme, then its first position (a NaN's, if
// any: NaN wins, as the generic step's). The value is the element there
// (-0 or +0 as the row has it). Through the generic per-element step (a
// compare, two selects and the index per element), max with indices over
// rows of 8-33 ran 1.2-1.4x torch's time.
template <class T, bool IsMax>
FASTT_VEC_INLINE void arg_row(const T* x, int64_t n, T init, T* v,
                              int64_t* i) {
  // n >= 1: reductions over an empty dim are rejected before the kernels
  // (csrc/ops/reduce.cpp), and the extreme is one of the row's elements
  const int64_t k = find_first(x, n, row_extreme<T, IsMax>(x, n, init));
  *v = x[k];
  *i = k;
}
template <class T, bool IsMax>
FASTT_VEC_CLONES void arg_rows(const T* const* rows, int64_t count,
                               int64_t n, T init, T* v, int64_t* idx) {
  for (int64_t r = 0; r < count; ++r)
    arg_row<T, IsMax>(rows[r], n, init, v + r, idx + r);
}

// logsumexp's state (m, s) of each float32 row in two passes: m the max
// (row_extreme), s the sum of exp(x - m) (vec_exp_bounded: x - m <= 0) in
// double lanes, rounded to float once (float lanes cost 1 ulp on the
// binder test's logsumexp of [0, 1, 2], against torch's value). The generic driver's online form
// (std::exp and a branch per element) ran 4.5x torch over rows of 64.
// A NaN gives (NaN, NaN); an infinite max (inf, 1) or (-inf, 0), which
// LogSumExpR::combine and finish treat as its online form does.
FASTT_VEC_CLONES void lse_rows(const float* const* rows, int64_t count,
                               int64_t n, float* m_out, float* s_out) {
  constexpr int L = 16;
  for (int64_t r = 0; r < count; ++r) {
    const float* x = rows[r];
    const float m = row_extreme<float, true>(x, n, -INFINITY);
    m_out[r] = m;
    if (!(m > -INFINITY && m < INFINITY)) {  // NaN, inf or all -inf
      s_out[r] = m != m ? m : (m > 0.0f ? 1.0f : 0.0f);
      continue;
    }
    double acc[L] = {};
    int64_t i = 0;
    for (; i + L <= n; i += L) {
#pragma omp simd
      for (int k = 0; k < L; ++k)
        acc[k] += double(vec_exp_bounded(x[i + k] - m));
    }
    if (n < L) {
      for (int64_t k = 0; k < n; ++k)
        acc[k] += double(vec_exp_bounded(x[k] - m));
    } else if (i < n) {  // the last L elements, those already added masked
      const float* t = x + n - L;
      const int64_t skip = L - (n - i);
#pragma omp simd
      for (int k = 0; k < L; ++k)
        acc[k] += k < skip ? 0.0 : double(vec_exp_bounded(t[k] - m));
    }
    s_out[r] = float(
        fold_lanes<L>(acc, [](double p, double q) { return p + q; }));
  }
}

}  // namespace
}  // namespace reduce_impl
}  // namespace fastt
