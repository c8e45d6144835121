// Vectorized folds of one dense run, used by the reduction driver
// (reduce_impl.h's reduce_run: per-row sums and max/min) and by the
// whole-tensor folds (reduce_dense.h): wide independent lanes in
// AVX2/AVX-512 builds. Included by reduce_impl.h; the reduce_*.cpp files
// include kernels/cpu/vec_exp.h first (its FP options make the selects
// vectorize).
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/half_block.h"
#include "kernels/cpu/vec_clones.h"

namespace fastt {
namespace reduce_impl {
namespace {
using cpu::kIsHalfFloat;
using cpu::to_float_block;

// The 64 lanes of the spans below into one, halving with constant trip
// counts so each step is a few full-width vector operations. Written as a
// loop over a halving bound (or as eight columns of eight) GCC compiled it
// to scalar code, branchy for max/min: ~200 ns a call, most of a max over
// rows of 64.
template <class A, class C>
FASTT_VEC_INLINE A fold_lanes(A* acc, C combine) {
  for (int k = 0; k < 32; ++k) acc[k] = combine(acc[k], acc[k + 32]);
  for (int k = 0; k < 16; ++k) acc[k] = combine(acc[k], acc[k + 16]);
  for (int k = 0; k < 8; ++k) acc[k] = combine(acc[k], acc[k + 8]);
  for (int k = 0; k < 4; ++k) acc[k] = combine(acc[k], acc[k + 4]);
  for (int k = 0; k < 2; ++k) acc[k] = combine(acc[k], acc[k + 2]);
  return combine(acc[0], acc[1]);
}

// sum of map(x[i]) over a dense float32 range: 64 float lanes (four
// AVX-512 / eight AVX2 accumulators, enough to hide the add latency) each
// add K = 4 mapped inputs in float, then fold into 64 double lanes.
// Converting every input to double (the previous sum) halved the
// throughput: 1M floats 87 us vs torch's 46. Error: four float additions
// per lane per fold, then double, far inside torch's float cascade (which
// drops the ones after a 1e8 that fall in its lane; here at most 3).
// The map is computed in float, as torch's (x*x of 1e20 overflows there).
struct Identity {
  float operator()(float v) const { return v; }
};
struct AbsF {
  float operator()(float v) const { return v < 0.0f ? -v : v; }
};
struct SquareF {
  float operator()(float v) const { return v * v; }
};
// The lanes take every element, the tail included (a serial tail of up to
// 255 adds cost more than the blocks: 1000 floats 283 ns), and fold as a
// tree, which vectorizes (the serial fold of 64 lanes was ~50 ns of a
// 16-float sum). Under 32 elements one chain is shorter still. float16 /
// bfloat16 inputs are converted 64 at a time (F16C for float16) into the
// same float lanes: staging whole blocks through a buffer first ran 1.8x
// torch's float16 sum.
constexpr int64_t kTwoStreamSum = int64_t(1) << 16;
template <class Map, class T = float>
FASTT_VEC_CLONES double sum_span(const T* x, int64_t n) {
  constexpr int L = 64, K = 4;
  const Map map{};
  if (n < 32) {
    double t = 0;
    for (int64_t i = 0; i < n; ++i) t += double(map(float(x[i])));
    return t;
  }
  double dacc[L] = {};
  float v16[kIsHalfFloat<T> ? L : 1];  // one float16/bfloat16 step converted
  // Blocks of K steps of L: K/2 from p0, then K/2 from p1. Long ranges
  // are read as two streams, their halves side by side (block j < m:
  // p0 = x + j, p1 = x + m + j): as one sequential stream, its loads in
  // the order GCC schedules them, 16M float32 took 2.8 ms (torch 2.1).
  // Then, and for short ranges, blocks are contiguous (p1 = p0 + B).
  // (Picking the step's pointer inside one loop over K, or calling a
  // lambda from two loops, left the loop scalar: 7x slower.)
  constexpr int64_t B = L * K / 2;
  const int64_t m = n >= kTwoStreamSum ? n / (2 * B) * B : 0;
  const int64_t end = m + (n - 2 * m) / (2 * B) * B;
  for (int64_t j = 0; j < end; j += B) {
    const bool paired = j < m;
    const T* p0 = x + (paired ? j : 2 * j);
    const T* p1 = p0 + (paired ? m : B);
    float acc[L] = {};
    for (int h = 0; h < 2; ++h) {
      for (int s = 0; s < K / 2; ++s) {
        const float* v;
        if constexpr (kIsHalfFloat<T>) {
          to_float_block((h ? p1 : p0) + s * L, v16, L);
          v = v16;
        } else {
          v = (h ? p1 : p0) + s * L;
        }
        for (int k = 0; k < L; ++k) acc[k] += map(v[k]);
      }
    }
    for (int k = 0; k < L; ++k) dacc[k] += double(acc[k]);
  }
  int64_t i = 2 * end;
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k) dacc[k] += double(map(float(x[i + k])));
  for (int64_t k = 0; i + k < n; ++k) dacc[k] += double(map(float(x[i + k])));
  return fold_lanes(dacc, [](double p, double q) { return p + q; });
}

// Dense float32/float64 max or min of a range: 64 lanes of selects, four
// or more vector chains; a NaN sticks in its lane (v > NaN is false) and
// wins in the final combine, as torch. The generic driver's 8-lane loop
// stayed scalar in the SSE2 build: 1M float32 max took 5.6x torch's time.
template <class T, bool IsMax>
FASTT_VEC_CLONES T extreme_span(const T* x, int64_t n, T init) {
  constexpr int L = 64;
  // The combine as a select (ExtremeR's branches neither vectorize nor
  // predict on random data: the fold alone cost ~200 ns a call).
  const auto pick = [](T a, T b) {
    const bool take = (IsMax ? b > a : b < a) | (b != b);
    return take ? b : a;
  };
  if (n < 32) {  // short: no lanes to set up and fold
    T s = init;
    for (int64_t i = 0; i < n; ++i) s = pick(s, x[i]);
    return s;
  }
  T acc[L];
  for (int k = 0; k < L; ++k) acc[k] = init;
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k) acc[k] = pick(acc[k], x[i + k]);
  for (int64_t k = 0; i + k < n; ++k) acc[k] = pick(acc[k], x[i + k]);
  return fold_lanes(acc, pick);
}

}  // namespace
}  // namespace reduce_impl
}  // namespace fastt
