// Dense whole-tensor folds for the reduction kernels (sum, mean, norm,
// max/min of a contiguous tensor): reduce_spans.h's runs, each range split
// across threads by reduce_impl's fold_split. Include after
// kernels/cpu/vec_exp.h (its FP options make the selects vectorize) and
// reduce_impl.h.
#pragma once

namespace fastt {
namespace reduce_impl {
namespace {

// float16/bfloat16 elements converted per step of the whole-tensor max/min
// below: 8 KiB of float32, long enough that each step's lane setup and
// fold stay small against it (256 cost 1.3x). The sums convert inside
// sum_span instead, 64 at a time (no buffer round trip).
constexpr int64_t kStageBlock = 2048;

// The whole-tensor sum of map(x) when the kernel's input is dense and
// every dim is reduced (float32; float16/bfloat16 converted a block at a
// time into the same float lanes); false otherwise (the generic driver
// runs). `drop` leaves out the last elements (the mutation check's planted
// bug; its hooks stay in .cpp files).
template <class Map, class T>
bool dense_sum(const KernelArgs& a, double* out, int64_t drop = 0) {
  static_assert(std::is_same<T, float>::value || kIsHalfFloat<T>, "dtype");
  const Tensor& in = *a.in[0];
  if (in.dtype() != dtype_of<T> || !a.dims.empty() || !in.is_contiguous())
    return false;
  const T* x = static_cast<const T*>(in.data_ptr());
  *out = fold_split<double>(
      in.numel() - drop,
      [x](int64_t b, int64_t e) { return sum_span<Map>(x + b, e - b); },
      [](double p, double q) { return p + q; });
  return true;
}

// amax/amin of a dense whole tensor, float16/bfloat16 staged likewise.
template <class T, bool IsMax>
T dense_extreme(const T* x, int64_t n) {
  using V = std::conditional_t<kIsHalfFloat<T>, float, T>;
  const ExtremeR<V, IsMax> r;
  const V v = fold_split<V>(
      n,
      [&](int64_t b, int64_t e) {
        if constexpr (!kIsHalfFloat<T>) {
          return extreme_span<V, IsMax>(x + b, e - b, r.init());
        } else {
          V acc = r.init();
          float buf[kStageBlock];
          for (int64_t i = b; i < e; i += kStageBlock) {
            const int64_t m = std::min(kStageBlock, e - i);
            to_float_block(x + i, buf, m);
            acc = r.combine(acc, extreme_span<float, IsMax>(buf, m, r.init()));
          }
          return acc;
        }
      },
      [&](V p, V q) { return r.combine(p, q); });
  return T(v);
}

}  // namespace
}  // namespace reduce_impl
}  // namespace fastt
