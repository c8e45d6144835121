// Three-input elementwise kernels: where, clamp, lerp, addcmul, addcdiv;
// and nan_to_num (one input, three replacement values: a clamp's kin).
#include "kernels/cpu/loop.h"
#include "kernels/functors.h"

namespace fastt {
namespace {
using namespace cpu;
namespace F = functors;

template <class T>
struct WhereK {
  static void run(KernelArgs& a) {
    ternary_loop<T, bool, T, T>(a, F::Where{});
  }
};
// i0: bit 0 = has min, bit 1 = has max. With one bound the loop is binary.
template <class T>
struct ClampK {
  static void run(KernelArgs& a) {
    if (a.i0 == 3) return ternary_loop<T, T, T, T>(a, F::ClampBoth{});
    if (a.i0 == 1) return binary_loop<T, T>(a, F::ClampMin{});
    binary_loop<T, T>(a, F::ClampMax{});
  }
};
// f0 / f1 / s0: the replacements for NaN / +inf / -inf.
template <class T>
struct NanToNumK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    unary_loop<T, T>(a, F::NanToNum<M>{M(a.f0), M(a.f1),
                                       M(a.s0.to_double())});
  }
};
template <class T>
struct LerpK {  // i0 == 2: a number weight in f0, the loop is binary
  static void run(KernelArgs& a) {
    if (a.i0 == 2)
      return binary_loop<T, T>(a, F::LerpScalar<opmath_t<T>>{opmath_t<T>(a.f0)});
    ternary_loop<T, T, T, T>(a, F::Lerp{});
  }
};
template <class T>
struct AddcmulK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    M v = std::is_floating_point<M>::value ? M(a.f0) : M(a.i0);
    ternary_loop<T, T, T, T>(a, F::Addcmul<M>{v});
  }
};
template <class T>
struct AddcdivK {
  static void run(KernelArgs& a) {
    ternary_loop<T, T, T, T>(a, F::Addcdiv<opmath_t<T>>{opmath_t<T>(a.f0)});
  }
};

}  // namespace

void register_ternary_kernels() {
#define FASTT_KERNELS_ternary
#include "kernels/kernels.def"
}

}  // namespace fastt
