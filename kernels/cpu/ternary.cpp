// Three-input elementwise kernels: where, clamp, lerp, addcmul, addcdiv;
// and nan_to_num (one input, three replacement values: a clamp's kin).
#include "kernels/cpu/vec_exp.h"  // first: FASTT_VEC_CLONES, FP options

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
  using M = opmath_t<T>;
  // The replacements passed by value (stores to `o` cannot alias them) and
  // the AVX2 / AVX-512 clones: the dense loop vectorizes.
  FASTT_VEC_CLONES static void span(T* o, const T* x, int64_t b, int64_t e,
                                    M nan, M posinf, M neginf) {
    const F::NanToNum<M> f{nan, posinf, neginf};
    for (int64_t i = b; i < e; ++i)
      o[i] = static_cast<T>(f(static_cast<M>(x[i])));
  }
  static void run(KernelArgs& a) {
    const M nan = M(a.f0), posinf = M(a.f1), neginf = M(a.s0.to_double());
    if (a.contiguous) {
      T* o = reinterpret_cast<T*>(a.data[0]);
      const T* x = reinterpret_cast<const T*>(a.data[1]);
      parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
        span(o, x, b, e, nan, posinf, neginf);
      });
      return;
    }
    unary_loop<T, T>(a, F::NanToNum<M>{nan, posinf, neginf});
  }
};
template <class T>
struct LerpK {  // i0 == 2: a number weight in f0 (f1), the loop is binary
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const M v = F::alpha_of<M>(a.f0, a.f1, a.i0);
    if (a.i0 == 2)
      return binary_loop<T, T>(a, F::LerpScalar<M>{v});
    ternary_loop<T, T, T, T>(a, F::Lerp{});
  }
};
template <class T>
struct AddcmulK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const M v = F::alpha_of<M>(a.f0, a.f1, a.i0);
    ternary_loop<T, T, T, T>(a, F::Addcmul<M>{v});
  }
};
template <class T>
struct AddcdivK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    const M v = F::alpha_of<M>(a.f0, a.f1, a.i0);
    ternary_loop<T, T, T, T>(a, F::Addcdiv<M>{v});
  }
};

}  // namespace

void register_ternary_kernels() {
#define FASTT_KERNELS_ternary
#include "kernels/kernels.def"
}

}  // namespace fastt
