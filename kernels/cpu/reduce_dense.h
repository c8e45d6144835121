// Dense whole-range folds for the reduction kernels (sum, mean, norm,
// max/min of a contiguous tensor): wide independent lanes in AVX2/AVX-512
// clones, each range split across threads by reduce_impl's fold_split.
// Include after kernels/cpu/vec_exp.h (its FP options make the selects
// vectorize) and reduce_impl.h.
#pragma once

namespace fastt {
namespace reduce_impl {
namespace {

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
// 16-float sum). Under 32 elements one chain is shorter still.
template <class Map>
FASTT_VEC_CLONES double sum_f32_span(const float* x, int64_t n) {
  constexpr int L = 64, K = 4;
  const Map map{};
  if (n < 32) {
    double t = 0;
    for (int64_t i = 0; i < n; ++i) t += double(map(x[i]));
    return t;
  }
  double dacc[L] = {};
  int64_t i = 0;
  for (; i + L * K <= n; i += L * K) {
    float acc[L] = {};
    for (int s = 0; s < K; ++s)
      for (int k = 0; k < L; ++k) acc[k] += map(x[i + s * L + k]);
    for (int k = 0; k < L; ++k) dacc[k] += double(acc[k]);
  }
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k) dacc[k] += double(map(x[i + k]));
  for (int64_t k = 0; i + k < n; ++k) dacc[k] += double(map(x[i + k]));
  for (int w = L / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) dacc[k] += dacc[k + w];
  return dacc[0];
}

// Dense float32/float64 max or min of a range: 64 lanes of selects, four
// or more vector chains; a NaN sticks in its lane (v > NaN is false) and
// wins in the final combine, as torch. The generic driver's 8-lane loop
// stayed scalar in the SSE2 build: 1M float32 max took 5.6x torch's time.
template <class T, bool IsMax>
FASTT_VEC_CLONES T extreme_span(const T* x, int64_t n, T init) {
  constexpr int L = 64;
  const ExtremeR<T, IsMax> r;
  if (n < 32) {  // short: no lanes to set up and fold
    T s = init;
    for (int64_t i = 0; i < n; ++i) s = r.combine(s, x[i]);
    return s;
  }
  T acc[L];
  for (int k = 0; k < L; ++k) acc[k] = init;
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k) {
      const T v = x[i + k];
      const bool take = (IsMax ? v > acc[k] : v < acc[k]) | (v != v);
      acc[k] = take ? v : acc[k];
    }
  for (int64_t k = 0; i + k < n; ++k) acc[k] = r.combine(acc[k], x[i + k]);
  for (int w = L / 2; w >= 1; w /= 2)  // a tree: it vectorizes
    for (int k = 0; k < w; ++k) acc[k] = r.combine(acc[k], acc[k + w]);
  return acc[0];
}

// The float32 whole-tensor sum of map(x) when the kernel's input is dense
// and every dim is reduced; false otherwise (the generic driver runs).
// `drop` leaves out the last elements (the mutation check's planted bug;
// its hooks stay in .cpp files).
template <class Map>
bool dense_f32_sum(const KernelArgs& a, double* out, int64_t drop = 0) {
  const Tensor& in = *a.in[0];
  if (in.dtype() != DType::Float32 || !a.dims.empty() || !in.is_contiguous())
    return false;
  const float* x = static_cast<const float*>(in.data_ptr());
  *out = fold_split<double>(
      in.numel() - drop, [x](int64_t b, int64_t e) { return sum_f32_span<Map>(x + b, e - b); },
      [](double p, double q) { return p + q; });
  return true;
}

}  // namespace
}  // namespace reduce_impl
}  // namespace fastt
