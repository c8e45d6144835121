// Reductions on the CPU, part 2: max/min over a dim, argmax/argmin and norm
// (driver and functors in reduce_impl.h). Kept apart from reduce.cpp so the
// reduction files compile in parallel.
#include "kernels/cpu/vec_exp.h"  // first: FASTT_VEC_CLONES, FP options

#include "kernels/cpu/reduce_impl.h"
#include "kernels/cpu/reduce_dense.h"

namespace fastt {
namespace reduce_impl {
namespace {

// max_dim/min_dim: out = values, out2 = int64 indices. argmax/argmin keep
// their own writer: sharing one (with a null values pointer) made argmax
// about 13% slower.
template <bool IsMax>
struct ExtremeDim {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      T* v = out_ptr<T>(a.out);
      int64_t* ix = out_ptr<int64_t>(a.out2);
      reduce<T>(*a.in[0], a.dims, ArgR<M<T>, IsMax>{},
                [v, ix](int64_t i, ValIdx<M<T>> s) {
                  v[i] = T(s.v);
                  ix[i] = s.i;
                });
    }
  };
};
// argmax/argmin: out = int64 indices (flattened when dims is empty).
template <bool IsMax>
struct ArgExtreme {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      int64_t* ix = out_ptr<int64_t>(a.out);
      reduce<T>(*a.in[0], a.dims, ArgR<M<T>, IsMax>{},
                [ix](int64_t i, ValIdx<M<T>> s) { ix[i] = s.i; });
    }
  };
};

// norm: f0 = p (0, 1, 2, inf, -inf or any other value).
template <class T>
struct NormK {
  template <int Kind>
  static void sum_norm(KernelArgs& a, T* o) {
    NormSumR<Kind> r{a.f0};
    if constexpr ((std::is_same<T, float>::value || kIsHalfFloat<T>) &&
                  (Kind == 1 || Kind == 2)) {
      double s;  // dense over everything: float lanes, as sum
      if (dense_sum<std::conditional_t<Kind == 1, AbsF, SquareF>, T>(a, &s)) {
        o[0] = T(r.finish(s));
        return;
      }
    }
    reduce<T>(*a.in[0], a.dims, r,
              [o, r](int64_t i, double s) { o[i] = T(r.finish(s)); });
  }
  template <bool IsMax>
  static void extreme_norm(KernelArgs& a, T* o) {
    reduce<T>(*a.in[0], a.dims, NormExtremeR<M<T>, IsMax>{},
              [o](int64_t i, M<T> s) { o[i] = T(s); });
  }
  static void run(KernelArgs& a) {
    T* o = out_ptr<T>(a.out);
    reduce_ops::by_norm_order(
        a.f0, [&](auto kind) { sum_norm<decltype(kind)::value>(a, o); },
        [&](auto is_max) { extreme_norm<decltype(is_max)::value>(a, o); });
  }
};

}  // namespace

void register_reduce_extreme_kernels() {
#define FASTT_KERNELS_reduce_extreme
#include "kernels/kernels.def"
}

}  // namespace reduce_impl
}  // namespace fastt
