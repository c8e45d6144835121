// CUDA reductions, part 3: amax/amin, var/std and logsumexp (the CPU's
// kernels/cpu/reduce_stats.cpp registrations). Driver and functors:
// kernels/cuda/reduce.cuh. Apart from reduce.cu so the files build in
// parallel.
#include "kernels/cuda/reduce.cuh"

namespace fastt {
namespace cuda {
namespace reduce_cuda {
namespace {

// amax/amin.
template <bool IsMax>
struct Extreme {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      reduce<T>(*a.in[0], a.dims, ExtremeR<M<T>, IsMax>{},
                CastW<T, M<T>>{out_ptr<T>(a.out)}, false,
                IsMax ? "amax" : "amin");
    }
  };
};

// var/std: f0 = correction, i0 bit 0 = take the square root; out2, when
// set, receives the mean (var_mean / std_mean).
template <class T, class A>
struct VarW {
  T* out;
  T* mean;  // null unless var_mean/std_mean
  A correction;
  bool take_sqrt;
  __device__ void operator()(int64_t o, WelfordState<A> s) const {
    const A d = A(s.n) - correction;
    const A v = s.m2 / (d > A(0) ? d : A(0));
    out[o] = static_cast<T>(take_sqrt ? dsqrt(v) : v);
    if (mean) mean[o] = static_cast<T>(s.n > 0 ? s.mean : A(NAN));
  }
};
template <class T>
struct VarK {
  static void run(KernelArgs& a) {
    using A = facc_t<T>;
    const VarW<T, A> w{out_ptr<T>(a.out),
                       a.out2 ? out_ptr<T>(a.out2) : nullptr, A(a.f0),
                       (a.i0 & 1) != 0};
    reduce<T>(*a.in[0], a.dims, WelfordOp<A>{}, w, false, "var");
  }
};

template <class T, class A>
struct LseW {
  T* out;
  __device__ void operator()(int64_t o, LseState<A> s) const {
    out[o] = static_cast<T>(LogSumExpR<A>::finish(s));
  }
};
template <class T>
struct LogSumExpK {
  static void run(KernelArgs& a) {
    using A = facc_t<T>;
    reduce<T>(*a.in[0], a.dims, LogSumExpR<A>{},
              LseW<T, A>{out_ptr<T>(a.out)}, false, "logsumexp");
  }
};

}  // namespace

void register_reduce_stats_cuda_kernels() {
#define FASTT_KERNELS_reduce_stats
#include "kernels/kernels.def"
}

}  // namespace reduce_cuda
}  // namespace cuda
}  // namespace fastt
