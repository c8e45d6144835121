// Reductions on the CPU, part 3: amax/amin, var/std and logsumexp
// (driver and functors in reduce_impl.h). Kept apart from reduce.cpp so the
// reduction files compile in parallel.
#include "kernels/cpu/vec_exp.h"  // first: FASTT_VEC_CLONES, FP options

#include "kernels/cpu/reduce_impl.h"
#include "kernels/cpu/reduce_dense.h"

namespace fastt {
namespace reduce_impl {
namespace {

// amax/amin.
template <bool IsMax>
struct Extreme {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      T* o = out_ptr<T>(a.out);
      if constexpr (std::is_same<T, float>::value ||
                    std::is_same<T, double>::value || kIsHalfFloat<T>) {
        const Tensor& in = *a.in[0];
        if (a.dims.empty() && in.is_contiguous() && in.numel() > 0) {
          o[0] = dense_extreme<T, IsMax>(static_cast<const T*>(in.data_ptr()),
                                         in.numel());
          return;
        }
      }
      reduce<T>(*a.in[0], a.dims, ExtremeR<M<T>, IsMax>{},
                [o](int64_t i, M<T> s) { o[i] = T(s); });
    }
  };
};

// var/std: f0 = correction, i0 bit 0 = take the square root; out2, when
// set, receives the mean (var_mean / std_mean).
template <class T>
struct VarK {
  static void run(KernelArgs& a) {
    T* o = out_ptr<T>(a.out);
    T* mean = a.out2 ? out_ptr<T>(a.out2) : nullptr;
    const double correction = a.f0;
    const bool take_sqrt = a.i0 & 1;
    reduce<T>(*a.in[0], a.dims, WelfordR{}, [=](int64_t i, Welford s) {
      double v = s.m2 / std::max(0.0, s.n - correction);
      o[i] = T(take_sqrt ? std::sqrt(v) : v);
      if (mean) mean[i] = T(s.n > 0 ? s.mean : NAN);
    });
  }
};
template <class T>
struct LogSumExpK {
  static void run(KernelArgs& a) {
    T* o = out_ptr<T>(a.out);
    using R = LogSumExpR<M<T>>;
    reduce<T>(*a.in[0], a.dims, R{},
              [o](int64_t i, typename R::state s) { o[i] = T(R::finish(s)); });
  }
};

}  // namespace

void register_reduce_stats_kernels() {
#define FASTT_KERNELS_reduce_stats
#include "kernels/kernels.def"
}

}  // namespace reduce_impl
}  // namespace fastt
