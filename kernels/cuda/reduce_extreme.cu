// CUDA reductions, part 2: max/min over a dim, argmax/argmin and norm (the
// CPU's kernels/cpu/reduce_extreme.cpp registrations). Driver and functors:
// kernels/cuda/reduce.cuh. Apart from reduce.cu so the files build in
// parallel.
#include "kernels/cuda/reduce.cuh"

namespace fastt {
namespace cuda {
namespace reduce_cuda {
namespace {

// max_dim/min_dim: out = values, out2 = int64 indices.
template <class T, class V>
struct ValIdxW {
  T* values;
  int64_t* indices;
  __device__ void operator()(int64_t o, ValIdx<V> s) const {
    values[o] = static_cast<T>(s.v);
    indices[o] = s.i;
  }
};
template <bool IsMax>
struct ExtremeDim {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      reduce<T>(*a.in[0], a.dims, ArgR<M<T>, IsMax>{},
                ValIdxW<T, M<T>>{out_ptr<T>(a.out),
                                 out_ptr<int64_t>(a.out2)},
                true, IsMax ? "max" : "min");
    }
  };
};

// argmax/argmin: out = int64 indices (into the flattened input when dims
// is empty: the reduced dims stay in logical order).
template <class V>
struct IdxW {
  int64_t* indices;
  __device__ void operator()(int64_t o, ValIdx<V> s) const {
    indices[o] = s.i;
  }
};
template <bool IsMax>
struct ArgExtreme {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      reduce<T>(*a.in[0], a.dims, ArgR<M<T>, IsMax>{},
                IdxW<M<T>>{out_ptr<int64_t>(a.out)}, true,
                IsMax ? "argmax" : "argmin");
    }
  };
};

// norm: f0 = p (0, 1, 2, inf, -inf or any other value).
template <class T, class R>
struct NormW {
  T* out;
  R r;
  __device__ void operator()(int64_t o, typename R::state s) const {
    out[o] = static_cast<T>(r.finish(s));
  }
};
template <class T>
struct NormK {
  using A = facc_t<T>;
  template <int Kind>
  static void sum_norm(KernelArgs& a, T* o) {
    const NormSumOp<A, Kind> r{A(a.f0)};
    reduce<T>(*a.in[0], a.dims, r, NormW<T, NormSumOp<A, Kind>>{o, r}, false,
              "linalg.vector_norm");
  }
  template <bool IsMax>
  static void extreme_norm(KernelArgs& a, T* o) {
    reduce<T>(*a.in[0], a.dims, NormExtremeR<M<T>, IsMax>{},
              CastW<T, M<T>>{o}, false, "linalg.vector_norm");
  }
  static void run(KernelArgs& a) {
    T* o = out_ptr<T>(a.out);
    reduce_ops::by_norm_order(
        a.f0, [&](auto kind) { sum_norm<decltype(kind)::value>(a, o); },
        [&](auto is_max) { extreme_norm<decltype(is_max)::value>(a, o); });
  }
};

}  // namespace

void register_reduce_extreme_cuda_kernels() {
#define FASTT_KERNELS_reduce_extreme
#include "kernels/kernels.def"
}

}  // namespace reduce_cuda
}  // namespace cuda
}  // namespace fastt
