// CUDA three-input elementwise kernels (where, clamp, lerp, addcmul,
// addcdiv): the CPU's ternary.cpp registrations, same dtypes and functors.
#include "kernels/cuda/loop.cuh"
#include "kernels/functors.h"

namespace fastt {
namespace cuda {
namespace {
namespace F = functors;

// The condition operand is a bool tensor (never promoted).
template <class T>
struct WhereK {
  static void run(KernelArgs& a) {
    launch_elementwise<T, bool, T, T>(a, F::Where{}, "where");
  }
};
// i0: bit 0 = has min, bit 1 = has max. With one bound the loop is binary;
// a bound is a tensor or a host scalar (handled by the launcher).
template <class T>
struct ClampK {
  static void run(KernelArgs& a) {
    if (a.i0 == 3)
      return launch_elementwise<T, T, T, T>(a, F::ClampBoth{}, "clamp");
    if (a.i0 == 1)
      return launch_elementwise<T, T, T>(a, F::ClampMin{}, "clamp");
    launch_elementwise<T, T, T>(a, F::ClampMax{}, "clamp");
  }
};
// f0 / f1 / s0: the replacements for NaN / +inf / -inf.
template <class T>
struct NanToNumK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    launch_elementwise<T, T>(
        a, F::NanToNum<M>{M(a.f0), M(a.f1), M(a.s0.to_double())},
        "nan_to_num");
  }
};
// The weight is a tensor (a host scalar of the compute dtype when a 0-d
// CPU tensor), or with i0 == 2 a number in f0 (f1) kept in opmath.
template <class T>
struct LerpK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const M v = F::alpha_of<M>(a.f0, a.f1, a.i0);
    if (a.i0 == 2)
      return launch_elementwise<T, T, T>(a, F::LerpScalar<M>{v}, "lerp");
    launch_elementwise<T, T, T, T>(a, F::Lerp{}, "lerp");
  }
};
template <class T>
struct AddcmulK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const M v = F::alpha_of<M>(a.f0, a.f1, a.i0);
    launch_elementwise<T, T, T, T>(a, F::Addcmul<M>{v}, "addcmul");
  }
};
template <class T>
struct AddcdivK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const M v = F::alpha_of<M>(a.f0, a.f1, a.i0);
    launch_elementwise<T, T, T, T>(a, F::Addcdiv<M>{v}, "addcdiv");
  }
};

}  // namespace

void register_ternary_cuda_kernels() {
#define FASTT_KERNELS_ternary
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt
